"""irevalcli.analysis.stats: every statistic against scipy called directly, corrections and risk by hand."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
import scipy.stats

from irevalcli.analysis import stats


def scores(n: int, shift: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    run = np.clip(base + rng.normal(shift, 0.15, n), 0, 1)
    run[:2] = base[:2]  # a couple of ties, as real runs have
    return run, base


CASES = [scores(8, 0.05, 1), scores(25, 0.03, 2), scores(60, -0.02, 3)]


def quiet(f, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **kw)


@pytest.mark.parametrize("x,y", CASES)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
def test_t_matches_scipy(x, y, alternative):
    ref = scipy.stats.ttest_rel(x, y, alternative=alternative)
    res = stats.paired_test(x, y, "t", alternative=alternative)
    assert (res.statistic, res.p_value) == (float(ref.statistic), float(ref.pvalue))


@pytest.mark.parametrize("x,y", CASES)
@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_wilcoxon_matches_scipy(x, y, alternative):
    ref = quiet(scipy.stats.wilcoxon, x, y, alternative=alternative)
    res = stats.paired_test(x, y, "wilcoxon", alternative=alternative)
    assert (res.statistic, res.p_value) == (float(ref.statistic), float(ref.pvalue))


@pytest.mark.parametrize("x,y", CASES)
@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_sign_matches_binomtest(x, y, alternative):
    wins, losses = int(np.sum(x > y)), int(np.sum(x < y))
    ref = scipy.stats.binomtest(wins, wins + losses, 0.5, alternative=alternative)
    res = stats.paired_test(x, y, "sign", alternative=alternative)
    assert (res.statistic, res.p_value) == (float(wins), float(ref.pvalue))


@pytest.mark.parametrize("x,y", CASES)
@pytest.mark.parametrize("alternative", ["two-sided", "less"])
def test_randomization_matches_permutation_test(x, y, alternative):
    ref = scipy.stats.permutation_test(
        (x, y),
        lambda a, b, axis: np.mean(a - b, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=2000,
        alternative=alternative,
        rng=np.random.default_rng(7),
    )
    res = stats.paired_test(x, y, "randomization", alternative=alternative, permutations=2000, seed=7)
    assert (res.statistic, res.p_value) == (float(ref.statistic), float(ref.pvalue))


def test_randomization_exact_by_enumeration():
    """2**8 <= permutations: every sign flip is tried, so p is the exact enumeration."""
    x, y = CASES[0]
    d = x - y
    obs = abs(d.mean())
    flips = [abs(np.mean(d * np.array(s))) for s in itertools.product([1, -1], repeat=len(d))]
    exact = sum(f >= obs * (1 - 1e-14) for f in flips) / len(flips)
    res = stats.paired_test(x, y, "randomization", permutations=10000, seed=123)
    assert res.p_value == pytest.approx(exact, abs=1e-12)
    assert stats.paired_test(x, y, "randomization", permutations=10000, seed=9).p_value == res.p_value


def test_randomization_is_reproducible_and_seeded():
    x, y = CASES[2]  # 60 topics: sampled, not exact
    a = stats.paired_test(x, y, "randomization", permutations=999, seed=5)
    b = stats.paired_test(x, y, "randomization", permutations=999, seed=5)
    c = stats.paired_test(x, y, "randomization", permutations=999, seed=6)
    assert a == b
    assert a.p_value != c.p_value
    # the p-value of a sampled test is (hits + 1) / (permutations + 1)
    assert round(a.p_value * 1000) == pytest.approx(a.p_value * 1000, abs=1e-9)


@pytest.mark.parametrize("x,y", CASES)
def test_bootstrap_ci_matches_scipy(x, y):
    d = x - y
    ref = scipy.stats.bootstrap(
        (d,), np.mean, n_resamples=3000, confidence_level=0.9, method="percentile", rng=np.random.default_rng(11)
    ).confidence_interval
    assert stats.bootstrap_ci(d, confidence=0.9, resamples=3000, seed=11) == (float(ref.low), float(ref.high))
    assert stats.bootstrap_ci(d, confidence=0.9, resamples=3000, seed=11) == stats.bootstrap_ci(
        d, confidence=0.9, resamples=3000, seed=11
    )


def test_bootstrap_batches_do_not_change_the_interval(monkeypatch):
    d = CASES[2][0] - CASES[2][1]
    whole = stats.bootstrap_ci(d, resamples=2000, seed=3)
    monkeypatch.setattr(stats, "BATCH_CELLS", 60 * 7)  # 7 resamples per batch
    assert stats.bootstrap_ci(d, resamples=2000, seed=3) == whole


def test_effect_size_by_hand():
    d = np.array([0.1, 0.3, -0.1, 0.5])
    mean = 0.8 / 4
    sd = math.sqrt(sum((v - mean) ** 2 for v in d) / 3)
    assert stats.effect_size(d) == pytest.approx(mean / sd, rel=1e-15)
    assert stats.effect_size(np.array([0.2, 0.2])) is None
    assert stats.effect_size(np.array([0.2])) is None


def test_wins_ties_losses_and_gsb():
    x = np.array([0.5, 0.2, 0.3, 0.0, 1.0])
    y = np.array([0.4, 0.2, 0.5, 0.0, 0.0])
    assert stats.wins_ties_losses(x, y) == (2, 2, 1)
    assert stats.gsb(2, 1, 5) == 0.2
    assert stats.gsb(0, 0, 0) is None


def test_one_safe_division_per_kind():
    """A ratio with a zero denominator: no value (None) in the statistics and the tables of
    compare and gate; 0 in the measures (trec_eval's rule), one helper each."""
    from irevalcli.measures._util import safe_div

    assert stats.ratio(1.0, 4.0) == 0.25
    assert stats.ratio(-0.5, 0.0) is None
    assert math.isnan(stats.ratio(math.nan, 2.0))
    out = safe_div(np.array([1, 3, 0]), np.array([2, 0, 0]))
    assert out.dtype == np.float64 and out.tolist() == [0.5, 0.0, 0.0]
    assert safe_div(np.array([[1.0], [2.0]]), np.array([4.0, 0.0])).tolist() == [[0.25, 0.0], [0.5, 0.0]]


def test_holm_by_hand():
    p = [0.01, 0.04, 0.03, 0.20]
    # sorted: 0.01 (x4), 0.03 (x3), 0.04 (x2), 0.20 (x1), then running maximum
    assert stats.adjust(p, "holm") == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert stats.adjust([0.5, 0.3], "holm") == pytest.approx([0.6, 0.6])
    assert stats.adjust([0.01, 0.9], "holm") == pytest.approx([0.02, 0.9])


def test_bonferroni_by_hand_and_none():
    assert stats.adjust([0.01, 0.04, 0.5], "bonferroni") == pytest.approx([0.03, 0.12, 1.0])
    assert stats.adjust([0.01, 0.04], "none") == [0.01, 0.04]


def test_corrections_skip_missing_p_values():
    assert stats.adjust([0.01, None, 0.02], "bonferroni") == pytest.approx([0.02, None, 0.04])
    assert stats.adjust([None], "holm") == [None]


def test_urisk_by_hand():
    x = np.array([0.5, 0.2, 0.6, 0.4])
    y = np.array([0.3, 0.4, 0.6, 0.5])
    # wins: +0.2; losses: 0.2 and 0.1, weighted by 1 + alpha
    assert stats.urisk(x, y, 0) == pytest.approx((0.2 - 0.2 - 0.1) / 4)
    assert stats.urisk(x, y, 1) == pytest.approx((0.2 - 2 * 0.3) / 4)
    assert stats.urisk(x, y, 5) == pytest.approx((0.2 - 6 * 0.3) / 4)


@pytest.mark.parametrize("alpha", [0.0, 1.0, 5.0])
def test_trisk_is_urisk_over_its_standard_error(alpha):
    x, y = CASES[1]
    d = x - y
    z = np.where(d < 0, (1 + alpha) * d, d)
    ref = scipy.stats.ttest_1samp(z, 0.0)
    res = stats.trisk(x, y, alpha)
    assert (res.statistic, res.p_value) == (float(ref.statistic), float(ref.pvalue))
    se = np.std(z, ddof=1) / math.sqrt(len(z))
    assert res.statistic == pytest.approx(stats.urisk(x, y, alpha) / se, rel=1e-12)


def test_degenerate_inputs():
    same = np.array([0.3, 0.5, 0.1])
    for test in stats.TESTS:
        assert stats.paired_test(same, same, test).p_value == 1.0
        assert stats.paired_test([0.2], [0.1], test).p_value in (None, 1.0)
    up, low = np.array([0.5, 0.75, 0.375]), np.array([0.25, 0.5, 0.125])  # every difference exactly 0.25
    t = stats.paired_test(up, low, "t")
    assert t.statistic is None and t.p_value == 0.0
    assert stats.paired_test(up, low, "t", alternative="less").p_value == 1.0
    assert stats.paired_test(up, low, "t", alternative="greater").p_value == 0.0
    assert stats.bootstrap_ci(np.full(3, 0.1)) == (0.1, 0.1)
    assert stats.bootstrap_ci(np.array([0.1])) == (None, None)
    assert stats.trisk(same, same, 1.0).p_value == 1.0


def test_topics_without_a_value_are_left_out_of_every_statistic():
    """NaN (a measure with no value on a topic, such as auc) pairs are dropped, never counted as ties."""
    from irevalcli.analysis import stats

    nan = float("nan")
    x = np.array([0.9, nan, 0.4, 0.7, nan])
    y = np.array([0.5, 0.3, nan, 0.2, nan])
    a, b = np.array([0.9, 0.7]), np.array([0.5, 0.2])
    assert stats.paired_count(x, y) == 2
    assert stats.wins_ties_losses(x, y) == (2, 0, 0)
    for test in ("t", "wilcoxon", "sign", "randomization"):
        assert stats.paired_test(x, y, test, permutations=50) == stats.paired_test(a, b, test, permutations=50)
    assert stats.bootstrap_ci(x - y, resamples=200) == stats.bootstrap_ci(a - b, resamples=200)
    assert stats.effect_size(x - y) == stats.effect_size(a - b)
    assert stats.urisk(x, y, 1.0) == stats.urisk(a, b, 1.0)
    assert stats.trisk(x, y, 1.0) == stats.trisk(a, b, 1.0)
    assert stats.paired_test([nan, 0.5], [0.2, 0.1]).p_value is None  # one pair: no p-value


@pytest.mark.parametrize("test", stats.TESTS)
def test_no_test_passes_on_one_topic(test):
    """Fewer than two paired topics: no p-value from any test (the sign test gave p = 0.5 on one)."""
    for alternative in stats.ALTERNATIVES:
        res = stats.paired_test([0.2], [0.9], test, alternative=alternative)
        assert (res.statistic, res.p_value) == (None, None)
    # one topic with a value: the NaN topic is left out
    assert stats.paired_test([0.2, float("nan")], [0.9, 0.5], test).p_value is None


def test_corrections_and_the_bootstrap_keep_no_p_value():
    assert stats.adjust([None, 0.01, 0.04], "holm") == [None, 0.02, 0.04]
    assert stats.adjust([None], "bonferroni") == [None]
    assert stats.bootstrap_ci([0.3]) == (None, None)
    assert stats.trisk([0.1], [0.2], 1.0).p_value is None
