"""Paired statistics over per-topic scores: tests, bootstrap intervals, corrections, risk.

Every distribution comes from scipy; this module only chooses the calls, seeds
them, and settles the degenerate cases (no topics, all differences equal) in
one documented way instead of letting scipy return NaN with a warning:

* a topic where either score is NaN (a measure without a value there, such as
  ``auc`` on a topic without both a relevant and a non-relevant document) is left
  out of every statistic, as the measure's own summary leaves it out;
* fewer than two topics: no statistic and no p-value (``None``), for every test (the
  sign test on one topic would give p = 0.5: a check that cannot fail);
* every difference zero: p = 1;
* every difference the same non-zero value (no spread): p = 0 in the direction
  of the difference and 1 against it, with no statistic (t would be infinite).

``x`` is the run, ``y`` the baseline; differences are ``x - y``. ``alternative``
follows scipy: ``less`` means the run is worse than the baseline.

scipy and numpy are imported inside the functions so that importing this module
costs nothing.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Iterator

    import numpy as np

TESTS = ("t", "wilcoxon", "randomization", "sign")
TEST_NAMES = {
    "t": "paired t-test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "randomization": "paired randomization test",
    "sign": "sign test",
}
ALTERNATIVES = ("two-sided", "less", "greater")
CORRECTIONS = ("holm", "bonferroni", "none")
# The most resamples (--bootstrap) or permutations (--permutations) a command takes: 1000
# times the default, seconds to minutes on a TREC-size topic set; more asks for hours.
MAX_RESAMPLES = 10_000_000
INTERVALS = ("bootstrap", "t")  # how a non-inferiority check bounds the paired difference
INTERVAL_NAMES = {"bootstrap": "paired bootstrap percentile", "t": "paired t"}

# Upper bound on the numbers drawn per resampling batch (resamples x topics),
# so that a large topic set does not allocate gigabytes at once.
BATCH_CELLS = 2_000_000


@dataclass(frozen=True)
class TestResult:
    """One paired test: which, its statistic (None when undefined) and p-value."""

    test: str
    alternative: str
    statistic: float | None
    p_value: float | None


@contextmanager
def _quiet() -> Iterator[None]:
    """scipy warns about precision loss and approximations; the numbers are what we report."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _arrays(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The paired scores as float arrays, without the topics where either is NaN."""
    import numpy as np

    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired scores must be two 1-d arrays of equal length, got {a.shape} and {b.shape}")
    has = ~(np.isnan(a) | np.isnan(b))
    if not has.all():
        a, b = a[has], b[has]
    return a, b


def paired_count(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> int:
    """Topics where both scores have a value (not NaN): the topics every statistic uses."""
    return len(_arrays(x, y)[0])


def _values(diff: Sequence[float] | np.ndarray) -> np.ndarray:
    import numpy as np

    d = np.asarray(diff, dtype=np.float64)
    return d[~np.isnan(d)]


def _finite(v: Any) -> float | None:
    f = float(v)
    return f if math.isfinite(f) else None


def _no_spread_p(d0: float, alternative: str) -> float:
    """p-value when every difference equals ``d0``."""
    if d0 == 0.0:
        return 1.0
    if alternative == "two-sided":
        return 0.0
    worse = d0 < 0
    return 0.0 if (alternative == "less") == worse else 1.0


def batch_size(n: int) -> int:
    """Resamples per batch for ``n`` topics (see BATCH_CELLS)."""
    return max(1, BATCH_CELLS // max(n, 1))


def paired_test(
    x: Sequence[float] | np.ndarray,
    y: Sequence[float] | np.ndarray,
    test: str = "t",
    *,
    alternative: str = "two-sided",
    permutations: int = 10000,
    seed: int = 0,
) -> TestResult:
    """Paired test of run ``x`` against baseline ``y`` over the same topics.

    t: ``scipy.stats.ttest_rel``; wilcoxon: ``scipy.stats.wilcoxon`` (zero
    differences dropped, scipy's defaults); randomization: Fisher's paired
    randomization test, ``scipy.stats.permutation_test`` with
    ``permutation_type="samples"`` on the mean difference, ``permutations``
    random sign flips from ``numpy.random.default_rng(seed)`` (exact when
    2**n <= permutations); sign: ``scipy.stats.binomtest`` on wins out of
    wins + losses (ties dropped).
    """
    import numpy as np
    import scipy.stats

    if test not in TESTS:
        raise ValueError(f"unknown test {test!r}")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"unknown alternative {alternative!r}")
    a, b = _arrays(x, y)
    d = a - b
    n = len(d)
    if n < 2:
        return TestResult(test, alternative, None, None)
    if test == "sign":
        wins, losses = int(np.count_nonzero(d > 0)), int(np.count_nonzero(d < 0))
        if wins + losses == 0:
            return TestResult(test, alternative, float(wins), 1.0)
        res = scipy.stats.binomtest(wins, wins + losses, 0.5, alternative=alternative)
        return TestResult(test, alternative, float(wins), float(res.pvalue))
    if np.all(d == d[0]) and (test == "t" or d[0] == 0.0):
        # scipy gives NaN here (t: no spread; wilcoxon: no non-zero difference)
        stat = 0.0 if d[0] == 0.0 else None
        return TestResult(test, alternative, stat, _no_spread_p(float(d[0]), alternative))
    with _quiet():
        if test == "t":
            res = scipy.stats.ttest_rel(a, b, alternative=alternative)
            return TestResult(test, alternative, _finite(res.statistic), _finite(res.pvalue))
        if test == "wilcoxon":
            res = scipy.stats.wilcoxon(a, b, alternative=alternative)
            return TestResult(test, alternative, _finite(res.statistic), _finite(res.pvalue))
        res = scipy.stats.permutation_test(
            (a, b),
            mean_difference,
            permutation_type="samples",
            vectorized=True,
            n_resamples=permutations,
            batch=batch_size(n),
            alternative=alternative,
            rng=np.random.default_rng(seed),
        )
    return TestResult(test, alternative, _finite(res.statistic), _finite(res.pvalue))


def mean_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """The randomization test's statistic: mean of ``x - y`` along ``axis``."""
    import numpy as np

    return np.mean(x - y, axis=axis)


def bootstrap_ci(
    diff: Sequence[float] | np.ndarray,
    *,
    confidence: float = 0.95,
    resamples: int = 10000,
    seed: int = 0,
) -> tuple[float | None, float | None]:
    """Paired bootstrap percentile interval of the mean difference.

    ``scipy.stats.bootstrap((diff,), numpy.mean, method="percentile")`` with
    ``resamples`` resamples of the topics from ``numpy.random.default_rng(seed)``.
    ``(None, None)`` with fewer than two topics.
    """
    import numpy as np
    import scipy.stats

    d = _values(diff)
    if len(d) < 2:
        return None, None
    if np.all(d == d[0]):
        return float(d[0]), float(d[0])
    with _quiet():
        res = scipy.stats.bootstrap(
            (d,),
            np.mean,
            n_resamples=resamples,
            batch=batch_size(len(d)),
            vectorized=True,
            confidence_level=confidence,
            method="percentile",
            rng=np.random.default_rng(seed),
        )
    ci = res.confidence_interval
    return _finite(ci.low), _finite(ci.high)


def t_interval(diff: Sequence[float] | np.ndarray, *, confidence: float = 0.95) -> tuple[float | None, float | None]:
    """Two-sided ``confidence`` interval of the mean of ``diff`` from Student's t
    (``scipy.stats.t.ppf``): mean ± t_{(1+c)/2, n-1} · sd / √n. ``(None, None)`` with fewer
    than two topics; the mean itself when every difference is the same."""
    import numpy as np
    import scipy.stats

    d = _values(diff)
    if len(d) < 2:
        return None, None
    m = float(np.mean(d))
    sd = float(np.std(d, ddof=1))
    if sd == 0.0:
        return m, m
    half = float(scipy.stats.t.ppf((1 + confidence) / 2, len(d) - 1)) * sd / math.sqrt(len(d))
    return m - half, m + half


def effect_size(diff: Sequence[float] | np.ndarray) -> float | None:
    """Mean difference over the sample standard deviation of the differences (Cohen's d_z)."""
    import numpy as np

    d = _values(diff)
    if len(d) < 2:
        return None
    sd = float(np.std(d, ddof=1))
    if sd == 0.0:
        return None
    return float(np.mean(d)) / sd


def wins_ties_losses(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> tuple[int, int, int]:
    """Topics where the run is better, equal, worse than the baseline."""
    import numpy as np

    a, b = _arrays(x, y)
    wins = int(np.count_nonzero(a > b))
    losses = int(np.count_nonzero(a < b))
    return wins, len(a) - wins - losses, losses


def ratio(num: float, den: float) -> float | None:
    """``num / den``, or None (no value) when ``den`` is 0."""
    return num / den if den != 0 else None


def gsb(wins: int, losses: int, topics: int) -> float | None:
    """Good-same-bad ratio: (wins - losses) / topics."""
    return ratio(wins - losses, topics)


def adjust(p_values: Sequence[float | None], method: str) -> list[float | None]:
    """Family-wise corrected p-values; ``None`` entries are not tests and stay ``None``.

    bonferroni: min(1, m p). holm: the step-down adjustment
    ``p~(i) = max_{j <= i} min(1, (m - j + 1) p(j))`` over p-values sorted
    ascending (ties keep their input order).
    """
    if method not in CORRECTIONS:
        raise ValueError(f"unknown correction {method!r}")
    idx = [i for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = list(p_values)
    m = len(idx)
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        for i in idx:
            out[i] = min(1.0, m * float(p_values[i]))  # type: ignore[arg-type]
        return out
    order = sorted(idx, key=lambda i: float(p_values[i]))  # type: ignore[arg-type]
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * float(p_values[i])))  # type: ignore[arg-type]
        out[i] = running
    return out


def risk_differences(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, alpha: float) -> np.ndarray:
    """Per-topic risk-weighted differences: ``d`` for a win or tie, ``(1 + alpha) d`` for a loss."""
    import numpy as np

    a, b = _arrays(x, y)
    d = a - b
    return np.where(d < 0, (1.0 + alpha) * d, d)


def urisk(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, alpha: float) -> float | None:
    """URisk (Wang, Bennett and Collins-Thompson, SIGIR 2012): the mean risk-weighted difference.

    ``(1/n) [sum over wins of d - (1 + alpha) sum over losses of |d|]``; negative
    means the run's losses against the baseline outweigh its wins.
    """
    z = risk_differences(x, y, alpha)
    if len(z) == 0:
        return None
    return float(z.mean())


def trisk(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray, alpha: float) -> TestResult:
    """TRisk (Dinçer, Macdonald and Ounis, SIGIR 2014): URisk over its standard error.

    It is the one-sample t statistic of the risk-weighted differences
    (``scipy.stats.ttest_1samp(z, 0)``), so it comes with that test's two-sided
    p-value; |TRisk| > 2 is the paper's rule of thumb for a significant
    gain (> 2) or loss (< -2).
    """
    import numpy as np
    import scipy.stats

    z = risk_differences(x, y, alpha)
    if len(z) < 2:
        return TestResult("TRisk", "two-sided", None, None)
    if np.all(z == z[0]):
        return TestResult("TRisk", "two-sided", 0.0 if z[0] == 0 else None, _no_spread_p(float(z[0]), "two-sided"))
    with _quiet():
        res = scipy.stats.ttest_1samp(z, 0.0)
    return TestResult("TRisk", "two-sided", _finite(res.statistic), _finite(res.pvalue))
