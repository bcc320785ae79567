"""-R prefs / qrels_prefs / qrels_jg: readers, every prefs_* and *_avgjg measure, errors, conformance.

Every expected value is worked out by hand in the comments. Notation: the judged
documents of a topic get internal ids, retrieved ones by rank (0..NJR-1), then
unretrieved ones by docno. A preference a>b is "fr" (both retrieved, a above b),
"pr_raw" (both retrieved, b above a), "fi" (only a retrieved), "pi_raw" (only b
retrieved) or "pn" (neither); pr = fr + pr_raw and pi = fi + pi_raw.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pytest

from irevalcli.api import evaluate
from irevalcli.commands.main import main
from irevalcli.core.judged import _closure, _count_earlier_greater
from irevalcli.errors import DuplicateDocError, InputError, MeasureParamError

DATA = Path(__file__).parents[1] / "data" / "trec_eval"


def write(tmp_path: Path, name: str, text: str) -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def run_file(tmp_path: Path, ranking: dict[str, list[tuple[str, float]]]) -> str:
    lines = [f"{q} Q0 {d} {i} {s} R" for q, docs in ranking.items() for i, (d, s) in enumerate(docs)]
    return write(tmp_path, "run", "\n".join(lines) + "\n")


def scores(tmp_path: Path, rel: str, ranking: dict, fmt: str = "prefs", measures=("all_prefs",), **kw) -> dict:
    """{label: {qid: value, ..., 'all': summary}}."""
    ev = evaluate(write(tmp_path, "rel", rel), run_file(tmp_path, ranking), list(measures), rel_format=fmt, **kw)
    out: dict = {}
    for c in ev.results.columns:
        col = out.setdefault(c.label, {})
        if c.per_query is not None:
            col.update(zip(ev.results.qids, np.asarray(c.per_query, dtype=float).tolist()))
        col["all"] = c.summary
    return out


# --------------------------------------------------------------------------
# prefs: one judgement group (equivalence classes)

# Levels a=2, b=1, c=0, d=0. Run: c, a, x (unjudged), d; b not retrieved.
# Ids: c=0, a=1, d=2 (retrieved, by rank), b=3 (unretrieved). NJR = 3.
# Preferences (higher level > lower; c and d tie):
#   a>b: a=1 retrieved, b not           -> fi
#   a>c: 1>0, c ranked above a          -> pr_raw
#   a>d: 1>2, a ranked above d          -> fr
#   b>c, b>d: b unretrieved, c/d not    -> pi_raw (2)
# fr=1, pr=2, fi=1, pi=3, pn=0.
ONE_JG = "q 0 0 a 2\nq 0 0 b 1\nq 0 0 c 0\nq 0 0 d 0\n"
ONE_JG_RUN = {"q": [("c", 4), ("a", 3), ("x", 2), ("d", 1)]}


def test_counts_one_group(tmp_path):
    s = scores(tmp_path, ONE_JG, ONE_JG_RUN)
    assert s["prefs_num_prefs_poss"]["q"] == 5  # pr + pi + pn = 2 + 3 + 0
    assert s["prefs_num_prefs_ful"]["q"] == 2  # fr + fi
    assert s["prefs_num_prefs_ful_ret"]["q"] == 1  # fr


def test_simp_avgjg_one_group(tmp_path):
    s = scores(tmp_path, ONE_JG, ONE_JG_RUN)
    assert s["prefs_simp"]["q"] == pytest.approx(2 / 5)  # (fr+fi) / (pr+pi+pn)
    assert s["prefs_simp_ret"]["q"] == pytest.approx(1 / 2)  # fr / pr
    assert s["prefs_simp_imp"]["q"] == pytest.approx(2 / 5)  # (fr+fi) / (pr+pi)
    # one JG: the per-JG average is the pooled ratio
    assert s["prefs_avgjg"]["q"] == pytest.approx(2 / 5)
    assert s["prefs_avgjg_ret"]["q"] == pytest.approx(1 / 2)
    assert s["prefs_avgjg_imp"]["q"] == pytest.approx(2 / 5)


def test_pair_one_group(tmp_path):
    # one JG: each document pair has one preference, fulfilled (1) or not (0)
    # RR pairs {a,c} 0, {a,d} 1; RU pairs {a,b} 1, {c,b} 0, {d,b} 0; no UU pair
    s = scores(tmp_path, ONE_JG, ONE_JG_RUN)
    assert s["prefs_pair"]["q"] == pytest.approx(2 / 5)
    assert s["prefs_pair_ret"]["q"] == pytest.approx(1 / 2)
    assert s["prefs_pair_imp"]["q"] == pytest.approx(2 / 5)


def test_docno_ascending_tie_break(tmp_path):
    # a and b tie on score: the prefs formats rank docno ascending, so a (id 0) is above b (id 1);
    # b > a is then not fulfilled (it would be with qrels' descending tie-break)
    s = scores(tmp_path, "q 0 0 a 0\nq 0 0 b 1\n", {"q": [("b", 1), ("a", 1)]})
    assert s["prefs_num_prefs_ful_ret"]["q"] == 0
    assert s["prefs_num_prefs_poss"]["q"] == 1


def test_max_docs(tmp_path):
    # -M 2 keeps c, a: ids c=0, a=1, then b=2, d=3 unretrieved (docno order)
    # a>b fi, a>c pr_raw, a>d fi, b>c pi_raw, b>d pn: fr=0 pr=1 fi=2 pi=3 pn=1
    s = scores(tmp_path, ONE_JG, ONE_JG_RUN, max_docs=2)
    assert s["prefs_num_prefs_poss"]["q"] == 5  # 1 + 3 + 1
    assert s["prefs_num_prefs_ful"]["q"] == 2
    assert s["prefs_num_prefs_ful_ret"]["q"] == 0
    assert s["prefs_pair"]["q"] == pytest.approx(2 / 5)  # fulfilled pairs {a,b} {a,d} of 5
    assert s["prefs_pair_imp"]["q"] == pytest.approx(2 / 4)  # without the UU pair {b,d}


# --------------------------------------------------------------------------
# prefs_avgjg_Rnonrel(_ret)


def test_rnonrel_fewer_relevant(tmp_path):
    # Topic r: a=1; b, c, d = 0. Run a, b, c (ids 0, 1, 2); d unretrieved (3); NJR = 3.
    # R = 1 < N = 3: trec_eval recounts with the last (lowest) class cut to its first R
    # entries, NEW = [1] (b), and pairs *every* entry with NEW:
    #   (0,1) fulfilled (0 < 1, retrieved); (1,1), (2,1), (3,1) possible only
    #   -> 1 fulfilled of 4 = 0.25.
    # _ret: R = num_rel_ret = 1 < N = num_nonrel_ret = 2, NEW = [1]; retrieved entries 0, 1, 2:
    #   (0,1) fulfilled, (1,1), (2,1) not -> 1/3.
    # Topic s: a=2, b=1, c=0. Run b, a (ids b=0, a=1); c=2 unretrieved.
    #   a>b pr_raw, a>c fi, b>c fi: fr=0 pr=1 fi=2 pi=2 pn=0. R = 2 >= N = 1 (extra = 1):
    #   (fr+fi + num_rel_ret*1) / (pr+pi+pn + num_rel*1) = (2 + 2) / (3 + 2) = 0.8.
    #   _ret: R = 2, N = 0 (extra 2): (fr + num_rel_ret*2) / (pr + num_rel*2) = 4 / 5 = 0.8.
    rel = "r 0 0 a 1\nr 0 0 b 0\nr 0 0 c 0\nr 0 0 d 0\ns 0 0 a 2\ns 0 0 b 1\ns 0 0 c 0\n"
    run = {"r": [("a", 3), ("b", 2), ("c", 1)], "s": [("b", 2), ("a", 1)]}
    s = scores(tmp_path, rel, run)
    assert s["prefs_avgjg_Rnonrel"]["r"] == pytest.approx(0.25)
    assert s["prefs_avgjg_Rnonrel_ret"]["r"] == pytest.approx(1 / 3)
    assert s["prefs_avgjg_Rnonrel"]["s"] == pytest.approx(0.8)
    assert s["prefs_avgjg_Rnonrel_ret"]["s"] == pytest.approx(0.8)
    assert s["prefs_avgjg_Rnonrel"]["all"] == pytest.approx((0.25 + 0.8) / 2)
    assert s["prefs_avgjg_Rnonrel_ret"]["all"] == pytest.approx((1 / 3 + 0.8) / 2)


def test_rnonrel_nothing_retrieved_is_zero(tmp_path):
    # No judged document retrieved: _ret has R = N = 0 and 0/0 possible preferences;
    # trec_eval's NaN makes the topic 0. All documents: R = 1 >= N = 1: 0 / 1 = 0.
    s = scores(tmp_path, "q 0 0 a 1\nq 0 0 b 0\n", {"q": [("x", 1)]})
    assert s["prefs_avgjg_Rnonrel_ret"]["q"] == 0.0
    assert s["prefs_avgjg_Rnonrel"]["q"] == 0.0
    assert s["prefs_num_prefs_poss"]["q"] == 1  # a > b, neither retrieved: pn


# --------------------------------------------------------------------------
# several judgement groups

# Run a, b (ids 0, 1); c=2, d=3 unretrieved. NJR = 2.
# u1: a=1, b=0, c=0, d=-1: a>b fr; a>c, a>d, b>d fi; c>d pn (negative levels still
#     rank below 0)                   -> fr=1 pr=1 fi=3 pi=3 pn=1: ful 4 of 5
# u2: b=1, a=0: b>a pr_raw            -> fr=0 pr=1: ful 0 of 1
# u3: a=2, b=1: a>b fr                -> fr=1 pr=1: ful 1 of 1
MULTI = "q u1 0 a 1\nq u1 0 b 0\nq u1 0 c 0\nq u1 0 d -1\nq u2 0 b 1\nq u2 0 a 0\nq u3 0 a 2\nq u3 0 b 1\n"
MULTI_RUN = {"q": [("a", 2), ("b", 1)]}


def test_several_groups_counts_and_ratios(tmp_path):
    s = scores(tmp_path, MULTI, MULTI_RUN)
    assert s["prefs_num_prefs_poss"]["q"] == 7  # 5 + 1 + 1
    assert s["prefs_num_prefs_ful"]["q"] == 5  # 4 + 0 + 1
    assert s["prefs_num_prefs_ful_ret"]["q"] == 2  # 1 + 0 + 1
    assert s["prefs_simp"]["q"] == pytest.approx(5 / 7)
    assert s["prefs_simp_ret"]["q"] == pytest.approx(2 / 3)  # fr 1+0+1 / pr 1+1+1
    assert s["prefs_simp_imp"]["q"] == pytest.approx(5 / 6)  # (fr+fi) 5 / (pr+pi) 4+1+1
    assert s["prefs_avgjg"]["q"] == pytest.approx((4 / 5 + 0 + 1) / 3)
    assert s["prefs_avgjg_ret"]["q"] == pytest.approx((1 + 0 + 1) / 3)
    assert s["prefs_avgjg_imp"]["q"] == pytest.approx((4 / 4 + 0 / 1 + 1 / 1) / 3)


def test_several_groups_pair(tmp_path):
    # Preference counts summed over JGs: CA[a][b] = 2 (u1, u3), CA[b][a] = 1 (u2), and
    # a>c, a>d, b>d, c>d once each.
    # RR: {a,b} 2/3.  RU: {a,c} 1, {a,d} 1, {b,d} 1.  UU: {c,d} (counts 0).
    s = scores(tmp_path, MULTI, MULTI_RUN)
    assert s["prefs_pair"]["q"] == pytest.approx((2 / 3 + 3) / 5)
    assert s["prefs_pair_ret"]["q"] == pytest.approx(2 / 3)
    assert s["prefs_pair_imp"]["q"] == pytest.approx((2 / 3 + 3) / 4)


def test_several_groups_rnonrel(tmp_path):
    # u1: R = 1 (a) < N = 3 (b, c, d). Last class = {d} (level -1), NEW = [3]:
    #   classes above the last: a>b fulfilled, a>c fulfilled (a retrieved, a < c);
    #   with NEW: (0,3) and (1,3) fulfilled, (2,3) not (2 unretrieved), (3,3) not -> 4 / 6.
    # u2: R = N = 1: 0 / 1.   u3: R = 2, N = 0 (extra 2): (1 + 2*2) / (1 + 2*2) = 1.
    # _ret: u1 R = N = 1 (a; b): fr/pr = 1; u2 0; u3 (1 + 2*2) / (1 + 2*2) = 1.
    s = scores(tmp_path, MULTI, MULTI_RUN)
    assert s["prefs_avgjg_Rnonrel"]["q"] == pytest.approx((4 / 6 + 0 + 1) / 3)
    assert s["prefs_avgjg_Rnonrel_ret"]["q"] == pytest.approx((1 + 0 + 1) / 3)


# --------------------------------------------------------------------------
# several judgement sub-groups: transitive closure


def test_closure_adds_implied_preferences(tmp_path):
    # JSG s1: a > b; JSG s2: b > c. Closure adds a > c.
    # Run a, c (ids 0, 1); b = 2 unretrieved.
    #   a>b fi; b>c pi_raw; a>c fr  -> fr=1 pr=1 fi=1 pi=2 pn=0
    # Levels (last write wins): a=2, b=1, c=0: R = 2, N = 1, rel_ret = 1, nonrel_ret = 1.
    rel = "q 0 s1 a 2\nq 0 s1 b 1\nq 0 s2 b 1\nq 0 s2 c 0\n"
    s = scores(tmp_path, rel, {"q": [("a", 2), ("c", 1)]})
    assert s["prefs_num_prefs_poss"]["q"] == 3
    assert s["prefs_num_prefs_ful"]["q"] == 2
    assert s["prefs_num_prefs_ful_ret"]["q"] == 1  # only through the closure
    assert s["prefs_simp_ret"]["q"] == 1.0
    assert s["prefs_pair"]["q"] == pytest.approx(2 / 3)  # {a,c} 1, {a,b} 1, {c,b} 0
    # R >= N (extra 1): (2 + 1*1) / (3 + 2*1)
    assert s["prefs_avgjg_Rnonrel"]["q"] == pytest.approx(3 / 5)
    # _ret: R = N = 1: fr / pr
    assert s["prefs_avgjg_Rnonrel_ret"]["q"] == 1.0


def test_closure_rnonrel_recount(tmp_path):
    # JSG s1: a=1 > b=0, c=0; JSG s2: a=1 > d=0. Run b, a, d (ids 0, 1, 2); c = 3.
    #   a>b pr_raw, a>c fi, a>d fr: prefs_avgjg = 2/3.
    # R = 1 < N = 3: only the first R level-0 documents by id are kept (b = 0); the
    # remaining preference a>b is not fulfilled: 0 / 1. _ret the same (R = 1 < N = 2).
    rel = "q 0 s1 a 1\nq 0 s1 b 0\nq 0 s1 c 0\nq 0 s2 a 1\nq 0 s2 d 0\n"
    s = scores(tmp_path, rel, {"q": [("b", 3), ("a", 2), ("d", 1)]})
    assert s["prefs_avgjg"]["q"] == pytest.approx(2 / 3)
    assert s["prefs_avgjg_Rnonrel"]["q"] == 0.0
    assert s["prefs_avgjg_Rnonrel_ret"]["q"] == 0.0


# --------------------------------------------------------------------------
# qrels_prefs, -c, comments, DataFrames


def test_qrels_prefs_groups_by_iter_column(tmp_path):
    # Column 2 is the JG. JG 0: a > b; JG 1: b > a. Run b, a (ids b=0, a=1).
    # JG 0: pr_raw (ful 0 of 1); JG 1: fr (1 of 1). CA[b][a] = CA[a][b] = 1: pair 1/2.
    s = scores(tmp_path, "q 0 a 1\nq 0 b 0\nq 1 a 0\nq 1 b 1\n", {"q": [("b", 2), ("a", 1)]}, fmt="qrels_prefs")
    assert s["prefs_simp"]["q"] == pytest.approx(1 / 2)
    assert s["prefs_avgjg"]["q"] == pytest.approx(1 / 2)
    assert s["prefs_pair"]["q"] == pytest.approx(1 / 2)


def test_complete_scores_missing_topic(tmp_path):
    # q2 has no results: under -c it is scored on the placeholder ranking, so a > b is
    # possible (pn) and unfulfilled; num_q = 2 and means divide by 2.
    rel = "q1 0 0 a 1\nq1 0 0 b 0\nq2 0 0 a 1\nq2 0 0 b 0\n"
    s = scores(tmp_path, rel, {"q1": [("a", 2), ("b", 1)]}, complete=True)
    assert s["prefs_num_prefs_poss"] == {"q1": 1, "q2": 1, "all": 2}
    assert s["prefs_num_prefs_ful"] == {"q1": 1, "q2": 0, "all": 1}
    assert s["prefs_simp"]["all"] == pytest.approx(0.5)
    assert s["num_q"]["all"] == 2


def test_comment_lines_are_skipped(tmp_path):
    # ireval skips every line whose first non-blank character is '#', even two in a row
    # or indented (trec_eval would read the second one as data).
    rel = "# c1\n# c2\n  # c3\nq 0 0 a 1\n#c4\nq 0 0 b#1 0\n"
    s = scores(tmp_path, rel, {"q": [("a", 2), ("b#1", 1)]})
    assert s["prefs_num_prefs_ful_ret"]["q"] == 1  # 'b#1' is a docno


def test_dataframe_input(tmp_path):
    import pandas as pd

    rel = pd.DataFrame({"qid": ["q", "q"], "jg": ["0", "0"], "jsg": ["0", "0"], "docno": ["a", "b"], "rel": [1, 0]})
    run = pd.DataFrame({"qid": ["q", "q"], "docno": ["b", "a"], "score": [2.0, 1.0]})
    ev = evaluate(rel, run, ["prefs_simp"], rel_format="prefs")
    assert ev.results.summary["prefs_simp"] == 0.0  # a > b but b is ranked first


# --------------------------------------------------------------------------
# qrels_jg

# Topic q, run d1, d2, d3. JG A: d1=1, d2=0, d3=1 (R 2). JG B: d2=1, d4=1 (R 2, d4 unretrieved).
JG = "q A d1 1\nq A d2 0\nq A d3 1\nq B d2 1\nq B d4 1\n"
JG_RUN = {"q": [("d1", 3), ("d2", 2), ("d3", 1)]}


def test_map_avgjg(tmp_path):
    # A: (1/1 + 2/3) / 2;  B: (1/2) / 2;  mean over the 2 JGs
    s = scores(tmp_path, JG, JG_RUN, fmt="qrels_jg", measures=["map_avgjg"])
    assert s["map_avgjg"]["q"] == pytest.approx(((1 + 2 / 3) / 2 + 0.25) / 2)


def test_P_avgjg(tmp_path):
    # P_1: A 1, B 0; P_2: A 1/2, B 1/2; P_5: A 2/5, B 1/5
    s = scores(tmp_path, JG, JG_RUN, fmt="qrels_jg", measures=["P_avgjg.1,2,5"])
    assert s["P_avgjg_1"]["q"] == pytest.approx(0.5)
    assert s["P_avgjg_2"]["q"] == pytest.approx(0.5)
    assert s["P_avgjg_5"]["q"] == pytest.approx(0.3)


def test_Rprec_mult_avgjg(tmp_path):
    # R = 2 in both JGs. x=0.5: cutoff trunc(1.9) = 1: A 1/1, B 0/1.
    # x=2.0: cutoff trunc(4.9) = 4 > 3 retrieved: relevant retrieved / 4: A 2/4, B 1/4.
    s = scores(tmp_path, JG, JG_RUN, fmt="qrels_jg", measures=["Rprec_mult_avgjg.0.5,2.0"])
    assert s["Rprec_mult_avgjg_0.50"]["q"] == pytest.approx(0.5)
    assert s["Rprec_mult_avgjg_2.00"]["q"] == pytest.approx(0.375)


def test_qrels_jg_levels_and_judged_only(tmp_path):
    # -l 2: only d3 (level 2) is relevant in A: P_2 = 0 in A; B has no relevant: 0.
    rel = "q A d1 1\nq A d3 2\nq B d1 1\n"
    run = {"q": [("d1", 3), ("x", 2), ("d3", 1)]}
    s = scores(tmp_path, rel, run, fmt="qrels_jg", measures=["P_avgjg.2"], rel_level=2)
    assert s["P_avgjg_2"]["q"] == 0.0
    # -J: per JG, unjudged documents leave the ranking: A ranks d1, d3 (P_2 = 2/2), B d1 (1/2)
    s = scores(tmp_path, rel, run, fmt="qrels_jg", measures=["P_avgjg.2"], judged_only=True)
    assert s["P_avgjg_2"]["q"] == pytest.approx((1 + 0.5) / 2)


def test_qrels_jg_tie_break_descending(tmp_path):
    # a and b tie: qrels_jg ranks docno descending (b first), as qrels does
    s = scores(tmp_path, "q A a 1\nq A b 0\n", {"q": [("a", 1), ("b", 1)]}, fmt="qrels_jg", measures=["P_avgjg.1"])
    assert s["P_avgjg_1"]["q"] == 0.0


# --------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        ("prefs", "q 0 0 a 1\nq 0 b 0\n", "rel:2: expected 5 fields (qid jg jsg docno rel_level), got 4"),
        ("prefs", "q 0 0 a 1\n\n", "rel:2: blank line (a prefs line needs 5 fields: qid jg jsg docno rel_level)"),
        ("qrels_prefs", "q 0 a x\n", "rel:1: rel_level 'x' is not a number"),
        ("qrels_jg", "q 0 a 1 1\n", "rel:1: expected 4 fields (qid jg docno rel), got 5"),
        ("prefs", "# only a comment\n", "rel: the prefs file has no judgements (only comments)"),
    ],
)
def test_malformed_files(tmp_path, fmt, text, message):
    with pytest.raises(InputError) as e:
        scores(tmp_path, text, {"q": [("a", 1)]}, fmt=fmt, measures=["num_q"])
    assert str(e.value).endswith(message)


def test_doc_at_two_levels_of_one_jsg(tmp_path):
    with pytest.raises(InputError) as e:
        scores(tmp_path, "q 0 0 a 1\nq 0 0 b 0\nq 0 0 a 2\n", {"q": [("a", 1)]})
    assert str(e.value).endswith(
        "rel:3: document 'a' has two different rel_levels in judgement group '0' of topic 'q' (lines 1 and 3)"
    )


def test_zero_and_nonzero_level_in_one_group(tmp_path):
    with pytest.raises(InputError) as e:
        scores(tmp_path, "q 0 s a 1\nq 0 s b 0\nq 0 t a 0\nq 0 t b 1\n", {"q": [("a", 1)]})
    assert str(e.value).endswith(
        "rel:3: document 'a' has both a zero and a non-zero rel_level in judgement group '0' of topic 'q' "
        "(lines 1 and 3)"
    )


def test_inconsistent_preferences(tmp_path):
    # s: a > b; t: b > a -> a cycle after the closure (trec_eval aborts)
    with pytest.raises(InputError) as e:
        scores(tmp_path, "q 0 s a 2\nq 0 s b 1\nq 0 t a 1\nq 0 t b 2\n", {"q": [("a", 1)]})
    assert str(e.value).endswith(
        "rel:2: inconsistent preferences in judgement group '0' of topic 'q': documents 'a' (line 1) and "
        "'b' (line 2) are each preferred to the other"
    )


def test_qrels_jg_duplicate(tmp_path):
    with pytest.raises(DuplicateDocError) as e:
        scores(tmp_path, "q A a 1\nq B a 1\nq A a 0\n", {"q": [("a", 1)]}, fmt="qrels_jg", measures=["qrels_jg"])
    assert str(e.value).endswith(
        "rel:3: document 'a' is judged twice in judgement group 'A' of topic 'q' (first at line 1)"
    )


def test_run_duplicate_among_kept_docs(tmp_path):
    run = {"q": [("a", 3), ("b", 2), ("a", 1)]}
    with pytest.raises(DuplicateDocError) as e:
        scores(tmp_path, "q 0 0 a 1\n", run)
    assert str(e.value).endswith("run:3: document 'a' is retrieved twice for topic 'q' (first at line 1)")
    scores(tmp_path, "q 0 0 a 1\n", run, max_docs=2)  # the duplicate is cut by -M


def test_measure_needs_its_format(tmp_path):
    with pytest.raises(MeasureParamError) as e:
        scores(tmp_path, "q 0 0 a 1\n", {"q": [("a", 1)]}, measures=["map"])
    assert str(e.value) == (  # raised from the API: its parameter names, not -R / -m
        "measure 'map' cannot be computed from rel_format='prefs' judgements (it needs rel_format='qrels'); "
        "with rel_format='prefs' use measures=['all_prefs']"
    )


# --------------------------------------------------------------------------
# the vectorised kernels


def test_count_earlier_greater():
    # seg 0: values 3 1 2 -> 0, 1 (3>1), 1 (3>2); seg 1: 2 2 0 -> 0, 0, 2
    seg = np.array([0, 0, 0, 1, 1, 1])
    val = np.array([3, 1, 2, 2, 2, 0])
    assert _count_earlier_greater(seg, val).tolist() == [0, 1, 1, 0, 0, 2]


def test_closure():
    # graph 0: 0->1->2 gives 0->2; graph 1: 0->1, 1->0 (a cycle: both kept, diagonal cleared)
    g, i, j = _closure(np.array([3, 2]), np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]), np.array([1, 2, 1, 0]))
    assert list(zip(g.tolist(), i.tolist(), j.tolist())) == [(0, 0, 1), (0, 0, 2), (0, 1, 2), (1, 0, 1), (1, 1, 0)]


# --------------------------------------------------------------------------
# trec_eval's own test cases, byte for byte


def _cases() -> list[tuple[str, str, str]]:
    rows = [line.split("\t") for line in (DATA / "CASES.tsv").read_text().splitlines() if line.strip()]
    return [tuple(r) for r in rows if "-R" in shlex.split(r[1])]  # type: ignore[misc]


@pytest.mark.parametrize(("name", "args", "expected"), _cases(), ids=[c[0] for c in _cases()])
def test_conformance(name, args, expected, capsysbinary, monkeypatch):
    monkeypatch.chdir(DATA)
    assert main(shlex.split(args)) == 0
    assert capsysbinary.readouterr().out == (DATA / expected).read_bytes()


def test_conformance_cases_present():
    assert sorted(c[0] for c in _cases()) == [
        "prefs",
        "prefs_with_comments",
        "qrels_jg",
        "qrels_jg_with_comments",
        "qrels_prefs",
    ]
