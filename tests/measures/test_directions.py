"""Issue 21 items 1 and 2: every measure's direction and what a topic the run has no results
for scores, declared in the registry and honoured by gate and compare.

Every topic t has a relevant document R{t} (rel 1) and a non-relevant N{t}; a run puts R{t}
at a known rank, so arp (average relevance position) on a topic is that rank."""

from __future__ import annotations

import math

import pytest

import irevalcli
from irevalcli.errors import InputError, UsageError
from irevalcli.measures.catalog import load
from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n" for t in range(1, 5))


def run_text(ranks: list[int | None], tag: str) -> str:
    """Topic t: R{t} at rank ranks[t-1] (1 or 2; N{t} fills the other rank); None: no results."""
    lines = []
    for t, k in enumerate(ranks, start=1):
        if k is None:
            continue
        docs = [f"R{t}", f"N{t}"] if k == 1 else [f"N{t}", f"R{t}"]
        lines += [f"{t} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


@pytest.fixture
def data(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    write(tmp_path / "base.txt", run_text([1, 1, 1, 1], "base"))  # arp 1 on every topic
    write(tmp_path / "worse.txt", run_text([2, 2, 2, 1], "worse"))  # arp 2, 2, 2, 1: mean 1.75
    write(tmp_path / "partial.txt", run_text([1, None, None, None], "partial"))  # one topic of four
    return tmp_path


def test_the_directions_declared():
    reg = load()
    lower = {n for n, m in reg.items() if m.direction == "lower"}
    none = {n for n, m in reg.items() if m.direction == "none"}
    assert lower == {"arp", "unj", "rbp_resid", "FP", "FN"}
    assert none == {
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "relstring",
        "ideal_dcg",
        "num_nonrel_judged_ret",
        "prefs_num_prefs_poss",
    }
    assert {m.direction for m in reg.values()} <= {"higher", "lower", "none"}


def test_no_measure_scoring_its_value_is_nan_on_an_empty_ranking():
    """A measure declared unanswered="value" keeps what it computes on an empty ranking, so that
    must be a number on a topic with graded relevant and non-relevant judgements; the ones NaN there
    are declared "refuse" (or a number), and a number is only declared where the summary is a mean
    or a sum (compare and gate take the mean again with it)."""
    reg = load()
    names = [
        n
        for n, m in reg.items()
        if m.per_query and m.kind != "str" and not m.needs_subtopics and "qrels" in m.rel_formats
    ]
    import pandas as pd

    q = pd.DataFrame({"qid": ["1", "1", "1", "2", "2", "2"], "docno": list("abcdef"), "rel": [2, 1, 0, 2, 1, 0]})
    r = pd.DataFrame({"qid": ["1", "1", "1"], "docno": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    ev = irevalcli.evaluate(q, r, [[n] for n in names], complete=True, num_docs=100)
    nan_on_empty = set()
    for col in ev.results.columns:
        if col.per_query is not None and col.kind != "str" and math.isnan(float(col.per_query[1])):
            nan_on_empty.add(col.root)
    refused = {n for n, m in reg.items() if m.unanswered == "refuse"}
    assert nan_on_empty == {"opa"} and nan_on_empty <= refused
    for n, m in reg.items():
        if isinstance(m.unanswered, float):
            assert m.agg.name in ("mean", "sum"), n


def test_a_rise_of_a_lower_is_better_measure_fails(data):
    """arp rises from 1 to 1.75 (worse): the reversed run of issue 21 passed as 'improved'."""
    q, base, worse = data / "qrels.txt", data / "base.txt", data / "worse.txt"
    rep = irevalcli.gate(q, worse, baseline=base, max_drop={"arp": 0.5}, max_drop_rel={"arp": "10%"})
    assert [(c.name, c.verdict, c.reason) for c in rep.checks] == [
        ("arp rise <= 0.5", "fail", "rise 0.7500 > 0.5"),
        ("arp rise <= 10%", "fail", "rise 75.00% > 10%"),
    ]
    better = irevalcli.gate(q, base, baseline=worse, max_drop={"arp": 0})
    assert (better.checks[0].verdict, better.checks[0].reason) == ("pass", "improved by 0.7500")
    # one-sided test in the direction of worse: three rises of 1, one tie
    sig = irevalcli.gate(q, worse, baseline=base, max_drop={"arp": 0.5}, alpha=0.05, test="t")
    assert sig.checks[0].verdict == "fail" and sig.checks[0].p_value < 0.05


def test_a_floor_on_a_lower_is_better_measure_is_refused(data, cli):
    res = cli(["gate", "qrels.txt", "worse.txt", "--min", "arp=5"], cwd=data)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: --min arp=5: lower arp is better, so a floor would pass every worse run; "
        "ireval refuses it (check its rise against a baseline instead)\n"
    )


def test_a_measure_without_direction_cannot_be_gated_on_a_drop(data, cli):
    res = cli(["gate", "qrels.txt", "worse.txt", "--baseline", "base.txt", "--max-drop", "num_ret=1"], cwd=data)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: --max-drop num_ret=1: num_ret has no direction (neither a higher nor a lower value is "
        "better), so it cannot be gated on a drop; a floor (min) can check it\n"
    )
    ok = cli(["gate", "qrels.txt", "worse.txt", "--min", "num_ret=8"], cwd=data)
    assert ok.code == 0, ok.err
    res = cli(["compare", "qrels.txt", "base.txt", "worse.txt", "-m", "trisk:num_ret"], cwd=data)
    assert res.err == (
        "ireval: -m trisk:num_ret: num_ret has no direction (neither a higher nor a lower value is better), "
        "so it has no risk\n"
    )


def test_compare_wins_and_losses_follow_the_direction(data):
    q, base, worse = data / "qrels.txt", data / "base.txt", data / "worse.txt"
    rep = irevalcli.compare(q, base, worse, ["arp", "num_ret", "urisk:arp"], worst=1)
    arp, num_ret = rep.comparisons
    assert (arp.wins, arp.ties, arp.losses, arp.gsb, arp.direction) == (0, 1, 3, -0.75, "lower")
    assert [(w.qid, w.diff) for w in arp.worst] == [("1", 1.0)]  # lost most: the largest rise
    assert (num_ret.wins, num_ret.ties, num_ret.losses, num_ret.gsb, num_ret.worst) == (None, None, None, None, ())
    # URisk on the rises: (1/4) * (0 - 2 * 3) = -1.5
    assert rep.risk[0].value == -1.5


def test_compare_table_shows_no_wins_for_a_measure_without_direction(data, cli):
    out = cli(["compare", "qrels.txt", "base.txt", "worse.txt", "-m", "num_ret"], cwd=data).out.decode()
    row = next(line for line in out.splitlines() if line.startswith("  ") and "worse.txt" in line)
    assert row.split()[5] == "-"


def test_a_candidate_answering_one_topic_fails_a_drop_on_opa(data):
    """opa has no value on an empty ranking: the three missing topics dropped out of its mean
    (1.0, 'no drop'); now the check fails, naming them."""
    q, base, partial = data / "qrels.txt", data / "base.txt", data / "partial.txt"
    rep = irevalcli.gate(q, partial, baseline=base, max_drop={"opa": 0})
    assert not rep.passed
    assert rep.checks[0].reason == (
        f"{partial} has no results for 3 of 4 judged topics (2 3 4): opa cannot score a topic without results "
        "(it has no value on an empty ranking)"
    )
    with pytest.raises(InputError, match=r"has no results for 3 of 4 judged topics \(2 3 4\), and opa cannot"):
        irevalcli.compare(q, base, partial, "opa")


def test_an_unanswered_topic_scores_the_worst_unj(data):
    """unj (lower is better) is 0 on an empty ranking, its best: a missing topic scores 1 instead."""
    q, base, partial = data / "qrels.txt", data / "base.txt", data / "partial.txt"
    rep = irevalcli.gate(q, partial, baseline=base, max_drop={"unj.5": 0.5})
    (c,) = rep.checks
    assert (c.value, c.baseline, c.verdict, c.reason) == (0.75, 0.0, "fail", "rise 0.7500 > 0.5")


def test_bad_api_checks_name_the_parameter(data):
    with pytest.raises(UsageError, match=r"^min\['arp'\]: lower arp is better"):
        irevalcli.gate(data / "qrels.txt", data / "worse.txt", min={"arp": 2})
