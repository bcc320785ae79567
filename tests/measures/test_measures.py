"""Hand-computed textbook cases for every measure that standard qrels support.

Every expected value below is worked out by hand from trec_eval 10.0's definitions
(docs/trec_eval-compat.md, notes/spec_core.md); the arithmetic is written out next
to it. None of them was produced by running ireval. prefs_* and *_avgjg live in
test_prefs.py.

Fixtures (documents are ranked by score descending; ties by docno descending):

AP topic "ap" (binary levels), R = 4 (a01 a03 a06 a99), NR = 4 (a02 a04 a08 a98)::

    rank   1   2   3   4   5   6   7   8   9   10
    doc    a01 a02 a03 a04 a05 a06 a07 a08 a09 a10
    label  1   0   1   0   -2  1   -1  0   -1  -1

    a05 is pooled but unjudged (qrels value -1 -> label -2); a07, a09, a10 are
    not in the qrels (label -1); a99 (rel 1) and a98 (rel 0) are not retrieved.

Graded topic "gr", gains 3,2,3,0,0,1,2,2,3,0 in rank order; the qrels are exactly
the ten retrieved documents, so rel_levels = {0: 3, 1: 1, 2: 3, 3: 3}, R = 7 at
-l 1 and the ideal gain list is 3,3,3,2,2,2,1 (K = 7).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from math import log, log2
from typing import Any

import pandas as pd
import pytest

from irevalcli import evaluate

EPS = 1e-5  # trec_eval's infAP epsilon and gm_* floor


def approx(x: float) -> Any:
    return pytest.approx(x, abs=1e-12, rel=0)


# --------------------------------------------------------------------------- helpers


def qrels_frame(rows: Sequence[tuple[str, str, int]]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=["qid", "docno", "rel"])


def run_frame(rows: Sequence[tuple[str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(list(rows), columns=["qid", "docno", "score"])


def ev(
    qrels: Sequence[tuple[str, str, int]], run: Sequence[tuple[str, str, float]], measures: Sequence[str], **kw: Any
) -> Any:
    return evaluate(qrels_frame(qrels), run_frame(run), list(measures), **kw)


def column(e: Any, label: str) -> Any:
    found = [c for c in e.results.columns if c.label == label]
    assert found, f"no column {label!r}; have {[c.label for c in e.results.columns]}"
    return found[0]


def pq(e: Any, label: str, qid: str) -> Any:
    """The per-topic value of ``label`` for ``qid``."""
    col = column(e, label)
    assert col.per_query is not None, f"{label} has no per-topic values"
    v = col.per_query[e.results.qids.index(qid)]
    return v if isinstance(v, str) else float(v)


def summ(e: Any, label: str) -> Any:
    return column(e, label).summary


def labels(e: Any) -> list[str]:
    return [c.label for c in e.results.columns]


# --------------------------------------------------------------------------- fixtures

AP_LABELS = [1, 0, 1, 0, "u", 1, None, 0, None, None]  # "u": qrels value -1; None: not in qrels
AP_RUN = [("ap", f"a{i:02d}", float(11 - i)) for i in range(1, 11)]
AP_QRELS = [
    ("ap", f"a{i:02d}", (-1 if lab == "u" else lab)) for i, lab in enumerate(AP_LABELS, start=1) if lab is not None
] + [("ap", "a99", 1), ("ap", "a98", 0)]

GR_GAINS = [3, 2, 3, 0, 0, 1, 2, 2, 3, 0]
GR_RUN = [("gr", f"g{i:02d}", float(11 - i)) for i in range(1, 11)]
GR_QRELS = [("gr", f"g{i:02d}", g) for i, g in enumerate(GR_GAINS, start=1)]

# AP topic: precision at the relevant ranks 1, 3, 6 and the AP sum S
AP_S = 1 / 1 + 2 / 3 + 3 / 6
AP_MAP = (1 / 1 + 2 / 3 + 3 / 6) / 4  # = 0.541666...
# AP topic, binary gains: DCG over the ranking and the ideal list 1,1,1,1
AP_DCG = 1 / log2(2) + 1 / log2(4) + 1 / log2(7)  # gains at ranks 1, 3, 6
AP_IDCG = 1 / log2(2) + 1 / log2(3) + 1 / log2(4) + 1 / log2(5)

# Graded topic: DCG@i (Dn) over gains 3,2,3,0,0,1,2,2,3,0 and IDCG@i (In) over 3,3,3,2,2,2,1
D1 = 3 / log2(2)
D2 = D1 + 2 / log2(3)
D3 = D2 + 3 / log2(4)
D5 = D3  # ranks 4, 5 have gain 0
D6 = D5 + 1 / log2(7)
D7 = D6 + 2 / log2(8)
D8 = D7 + 2 / log2(9)
D9 = D8 + 3 / log2(10)
D10 = D9
I1 = 3 / log2(2)
I2 = I1 + 3 / log2(3)
I3 = I2 + 3 / log2(4)
I4 = I3 + 2 / log2(5)
I5 = I4 + 2 / log2(6)
I6 = I5 + 2 / log2(7)
I7 = I6 + 1 / log2(8)  # the whole ideal list (K = 7)


@pytest.fixture(scope="module")
def ap_all() -> Any:
    """The AP topic under every standard measure with default parameters."""
    return ev(AP_QRELS, AP_RUN, ["all_trec", "dcg", "ideal_dcg", "yaap"])


@pytest.fixture(scope="module")
def gr_all() -> Any:
    return ev(GR_QRELS, GR_RUN, ["all_trec", "dcg", "ideal_dcg", "yaap"])


# =========================================================================== counts


def test_runid_is_the_last_lines_runid(tmp_path: Any) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_text("ap 0 a01 1\n")
    run = tmp_path / "run"
    run.write_text("ap Q0 a01 1 2.0 first\nap Q0 a02 2 1.0 second\n")
    e = evaluate(str(qrels), str(run), ["runid"])
    col = column(e, "runid")
    assert col.summary == "second"  # 6th field of the LAST data line
    assert col.per_query is None  # no per-topic line


def test_runid_from_frame() -> None:
    run = run_frame(AP_RUN).assign(runid=["x"] * 9 + ["last"])
    e = evaluate(qrels_frame(AP_QRELS), run, ["runid"])
    assert summ(e, "runid") == "last"


def test_num_q(ap_all: Any) -> None:
    col = column(ap_all, "num_q")
    assert col.per_query is None
    assert col.summary == 1


def test_counts_ap(ap_all: Any) -> None:
    assert pq(ap_all, "num_ret", "ap") == 10  # ten docs retrieved
    assert pq(ap_all, "num_rel", "ap") == 4  # a01 a03 a06 a99
    assert pq(ap_all, "num_rel_ret", "ap") == 3  # ranks 1, 3, 6
    # n - nonpool - unjudged_in_pool - rel_ret = 10 - 3 - 1 - 3 (ranks 2, 4, 8)
    assert pq(ap_all, "num_nonrel_judged_ret", "ap") == 3
    for label in ("num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"):
        assert column(ap_all, label).kind == "int"


def test_summary_aggregation_two_topics() -> None:
    counts = ["num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
    e = ev(AP_QRELS + GR_QRELS, AP_RUN + GR_RUN, [*counts, "map", "gm_map", "P.5"])
    assert summ(e, "num_q") == 2
    assert summ(e, "num_ret") == 20  # sums: 10 + 10
    assert summ(e, "num_rel") == 11  # 4 + 7
    assert summ(e, "num_rel_ret") == 10  # 3 + 7
    assert summ(e, "num_nonrel_judged_ret") == 6  # 3 + 3 (gr ranks 4, 5, 10)
    map_gr = (1 / 1 + 2 / 2 + 3 / 3 + 4 / 6 + 5 / 7 + 6 / 8 + 7 / 9) / 7
    assert pq(e, "map", "gr") == approx(map_gr)
    assert summ(e, "map") == approx((AP_MAP + map_gr) / 2)  # mean over topics
    assert summ(e, "gm_map") == approx(math.exp((log(AP_MAP) + log(map_gr)) / 2))
    assert summ(e, "P_5") == approx((2 / 5 + 3 / 5) / 2)  # ap: ranks 1, 3; gr: ranks 1, 2, 3
    assert e.results.qids == ["ap", "gr"]


# =========================================================================== AP family


def test_map(ap_all: Any) -> None:
    assert pq(ap_all, "map", "ap") == approx((1 / 1 + 2 / 3 + 3 / 6) / 4)  # R = 4 > rel_ret = 3
    assert summ(ap_all, "map") == approx(AP_MAP)


def test_gm_map_single_topic(ap_all: Any) -> None:
    col = column(ap_all, "gm_map")
    assert col.per_query is None  # trec_eval prints no per-topic gm lines
    assert col.summary == approx(math.exp(log(AP_MAP)))  # exp(mean(ln(map)))


def test_gm_map_floor_for_zero_topic() -> None:
    # topic z has R = 0 -> map 0 -> ln(max(0, 1e-5))
    q = [*AP_QRELS, ("z", "z1", 0)]
    r = [*AP_RUN, ("z", "z1", 1.0)]
    e = ev(q, r, ["map", "gm_map"])
    assert summ(e, "map") == approx((AP_MAP + 0.0) / 2)
    assert summ(e, "gm_map") == approx(math.exp((log(AP_MAP) + log(1e-5)) / 2))


def test_map_cut(ap_all: Any) -> None:
    assert pq(ap_all, "map_cut_5", "ap") == approx((1 / 1 + 2 / 3) / 4)  # rank 6 is past 5
    assert pq(ap_all, "map_cut_10", "ap") == approx((1 / 1 + 2 / 3 + 3 / 6) / 4)
    assert pq(ap_all, "map_cut_1000", "ap") == approx((1 / 1 + 2 / 3 + 3 / 6) / 4)


def test_map_cut_params() -> None:
    e = ev(AP_QRELS, AP_RUN, ["map_cut.3,2"])
    assert labels(e) == ["map_cut_2", "map_cut_3"]  # sorted
    assert pq(e, "map_cut_2", "ap") == approx((1 / 1) / 4)
    assert pq(e, "map_cut_3", "ap") == approx((1 / 1 + 2 / 3) / 4)


def test_yaap(ap_all: Any) -> None:
    # ln((1 + S) / (1 + R - S)), S = 1 + 2/3 + 1/2 = 13/6
    assert pq(ap_all, "yaap", "ap") == approx(log((1 + 13 / 6) / (1 + 4 - 13 / 6)))
    assert pq(ap_all, "yaap", "ap") == approx(log(19 / 17))


def test_bpref(ap_all: Any) -> None:
    # NR = 4, R = 4 -> min(NR, R) = 4; -1/-2 docs are skipped.
    # rank 1: no nonrel above -> 1; rank 3: 1 nonrel above -> 1 - 1/4; rank 6: 2 above -> 1 - 2/4
    assert pq(ap_all, "bpref", "ap") == approx((1 + (1 - 1 / 4) + (1 - 2 / 4)) / 4)  # = 0.5625


def test_bpref_nonrel_above_capped_by_min_nr_r() -> None:
    # R = 1, NR = 3: rel doc below three judged nonrel -> 1 - min(3, 1)/min(3, 1) = 0
    # a second topic: R = 3, NR = 1: rel docs at ranks 1, 3 with one nonrel at rank 2
    # -> (1 + (1 - min(1,3)/min(1,3))) / 3 = 1/3
    q = [("x", "n1", 0), ("x", "n2", 0), ("x", "n3", 0), ("x", "r1", 1)]
    q += [("y", "r1", 1), ("y", "n1", 0), ("y", "r2", 1), ("y", "r3", 1)]
    r = [("x", "n1", 4.0), ("x", "n2", 3.0), ("x", "n3", 2.0), ("x", "r1", 1.0)]
    r += [("y", "r1", 3.0), ("y", "n1", 2.0), ("y", "r2", 1.0)]
    e = ev(q, r, ["bpref", "gm_bpref"])
    assert pq(e, "bpref", "x") == approx(1 - 1 / 1)
    assert pq(e, "bpref", "y") == approx((1 + (1 - 1 / 1)) / 3)
    # gm_bpref: exp(mean(ln(max(v, 1e-5))))
    assert summ(e, "gm_bpref") == approx(math.exp((log(1e-5) + log(1 / 3)) / 2))


def test_gm_bpref_single_topic(ap_all: Any) -> None:
    col = column(ap_all, "gm_bpref")
    assert col.per_query is None
    assert col.summary == approx(math.exp(log(0.5625)))


def test_infAP(ap_all: Any) -> None:
    # j (0-based) over all docs, -1 docs skipped, -2 counted in u.
    # j=0 rel: 1
    # j=2 rel (r=2, nr=1, u=0): 1/3 + (2/3)*((1+1+0)/2)*((1+e)/(1+1+2e)) = 1/3 + 2/3*1*1/2 = 2/3
    # j=5 rel (r=3, nr=2, u=1): 1/6 + (5/6)*((2+2+1)/5)*((2+e)/(2+2+2e)) = 1/6 + 5/12 = 7/12
    j2 = 1 / 3 + (2 / 3) * ((1 + 1 + 0) / 2) * ((1 + EPS) / (1 + 1 + 2 * EPS))
    j5 = 1 / 6 + (5 / 6) * ((2 + 2 + 1) / 5) * ((2 + EPS) / (2 + 2 + 2 * EPS))
    assert j2 == approx(2 / 3) and j5 == approx(7 / 12)
    assert pq(ap_all, "infAP", "ap") == approx((1 + 2 / 3 + 7 / 12) / 4)  # = 27/48


def test_infAP_only_unjudged_above() -> None:
    # ranks: u1 (-2), x (-1, skipped), r (rel) at j = 2: r-1 = 0, nr = 0, u = 1
    # 1/3 + (2/3)*((0+0+1)/2)*((0+e)/(0+0+2e)) = 1/3 + 2/3*1/2*1/2 = 1/2; R = 1
    q = [("t", "u1", -1), ("t", "r", 1)]
    r = [("t", "u1", 3.0), ("t", "x", 2.0), ("t", "r", 1.0)]
    e = ev(q, r, ["infAP"])
    assert pq(e, "infAP", "t") == approx(1 / 3 + (2 / 3) * (1 / 2) * (EPS / (2 * EPS)))
    assert pq(e, "infAP", "t") == approx(1 / 2)


def test_binG(ap_all: Any) -> None:
    # 1/log2(2 + nonrel above) over relevant docs (-1/-2 count as not relevant), / R
    # rank 1: 0 above; rank 3: 1 above; rank 6: 3 above
    assert pq(ap_all, "binG", "ap") == approx((1 / log2(2) + 1 / log2(3) + 1 / log2(5)) / 4)


# =========================================================================== precision family


def test_Rprec(ap_all: Any, gr_all: Any) -> None:
    assert pq(ap_all, "Rprec", "ap") == approx(2 / 4)  # ranks 1, 3 in top R = 4
    assert pq(gr_all, "Rprec", "gr") == approx(5 / 7)  # top 7 gains 3,2,3,0,0,1,2


def test_Rprec_r_greater_than_n() -> None:
    # R = 4, n = 2 -> min(n, R) = 2: rel@2 / R = 1/4
    q = [("t", d, 1) for d in ("a", "b", "c", "d")]
    r = [("t", "a", 2.0), ("t", "x", 1.0)]
    e = ev(q, r, ["Rprec"])
    assert pq(e, "Rprec", "t") == approx(1 / 4)


def test_recip_rank(ap_all: Any) -> None:
    assert pq(ap_all, "recip_rank", "ap") == approx(1 / 1)


def test_recip_rank_and_success_first_rel_at_3() -> None:
    q = [("t", "c", 1), ("t", "a", 0)]
    r = [("t", "a", 3.0), ("t", "b", 2.0), ("t", "c", 1.0)]
    e = ev(q, r, ["recip_rank", "success.1,3,2"])
    assert pq(e, "recip_rank", "t") == approx(1 / 3)
    assert labels(e) == ["recip_rank", "success_1", "success_2", "success_3"]
    assert pq(e, "success_1", "t") == 0.0
    assert pq(e, "success_2", "t") == 0.0
    assert pq(e, "success_3", "t") == 1.0


def test_P(ap_all: Any) -> None:
    assert pq(ap_all, "P_5", "ap") == approx(2 / 5)
    assert pq(ap_all, "P_10", "ap") == approx(3 / 10)
    assert pq(ap_all, "P_15", "ap") == approx(3 / 15)  # ranks past n count as non-relevant
    assert pq(ap_all, "P_1000", "ap") == approx(3 / 1000)


def test_P_params_sorted() -> None:
    e = ev(AP_QRELS, AP_RUN, ["P.3,1"])
    assert labels(e) == ["P_1", "P_3"]
    assert pq(e, "P_1", "ap") == approx(1 / 1)
    assert pq(e, "P_3", "ap") == approx(2 / 3)


def test_recall(ap_all: Any) -> None:
    assert pq(ap_all, "recall_5", "ap") == approx(2 / 4)
    assert pq(ap_all, "recall_10", "ap") == approx(3 / 4)
    assert pq(ap_all, "recall_1000", "ap") == approx(3 / 4)


def test_relative_P(ap_all: Any) -> None:
    assert pq(ap_all, "relative_P_5", "ap") == approx(2 / min(5, 4))
    assert pq(ap_all, "relative_P_10", "ap") == approx(3 / min(10, 4))


def test_relative_P_k_below_R() -> None:
    e = ev(AP_QRELS, AP_RUN, ["relative_P.2"])
    assert pq(e, "relative_P_2", "ap") == approx(1 / min(2, 4))


def test_success(ap_all: Any) -> None:
    assert labels(ap_all)[labels(ap_all).index("success_1") : labels(ap_all).index("success_10") + 1] == [
        "success_1",
        "success_5",
        "success_10",
    ]
    assert pq(ap_all, "success_1", "ap") == 1.0
    assert pq(ap_all, "success_5", "ap") == 1.0
    assert pq(ap_all, "success_10", "ap") == 1.0


def test_iprec_at_recall(ap_all: Any) -> None:
    # R = 4, K = lround(x * 4); precision at relevant ranks 1, 3, 6: 1, 2/3, 1/2;
    # value = max precision from the K-th relevant doc on (K <= 0: from the 1st);
    # K > rel_ret (= 3) -> 0
    expected = {
        "0.00": 1.0,  # K = 0
        "0.10": 1.0,  # K = lround(0.4) = 0
        "0.20": 1.0,  # K = lround(0.8) = 1
        "0.30": 1.0,  # K = lround(1.2) = 1
        "0.40": 2 / 3,  # K = lround(1.6) = 2: max(2/3, 2/4, 2/5, 3/6, ...) = 2/3
        "0.50": 2 / 3,  # K = 2
        "0.60": 2 / 3,  # K = lround(2.4) = 2
        "0.70": 1 / 2,  # K = lround(2.8) = 3: max(3/6, 3/7, ..., 3/10) = 1/2
        "0.80": 1 / 2,  # K = lround(3.2) = 3
        "0.90": 0.0,  # K = lround(3.6) = 4 > rel_ret
        "1.00": 0.0,  # K = 4
    }
    got = [c.label for c in ap_all.results.columns if c.root == "iprec_at_recall"]
    assert got == [f"iprec_at_recall_{x}" for x in expected]
    for x, v in expected.items():
        assert pq(ap_all, f"iprec_at_recall_{x}", "ap") == approx(v), x


def test_iprec_at_recall_params() -> None:
    # "..25" = name iprec_at_recall, parameter ".25" = 0.25; sorted ascending
    e = ev(AP_QRELS, AP_RUN, ["iprec_at_recall..25"])
    assert labels(e) == ["iprec_at_recall_0.25"]
    assert pq(e, "iprec_at_recall_0.25", "ap") == approx(1.0)  # K = lround(1.0) = 1
    # 0.625 * 4 = 2.5 exactly: lround rounds half away from zero -> K = 3 -> 1/2
    # (a half-to-even K = 2 would give 2/3); the label is %3.2f of 0.625 = "0.62"
    e = ev(AP_QRELS, AP_RUN, ["iprec_at_recall.0.625,0.4"])
    assert labels(e) == ["iprec_at_recall_0.40", "iprec_at_recall_0.62"]
    assert pq(e, "iprec_at_recall_0.40", "ap") == approx(2 / 3)
    assert pq(e, "iprec_at_recall_0.62", "ap") == approx(1 / 2)


def test_11pt_avg(ap_all: Any) -> None:
    # mean of the 11 iprec_at_recall points above: (4*1 + 3*(2/3) + 2*(1/2) + 2*0) / 11
    assert pq(ap_all, "11pt_avg", "ap") == approx((4 * 1 + 3 * (2 / 3) + 2 * (1 / 2) + 2 * 0) / 11)  # = 7/11


def test_11pt_avg_params() -> None:
    e = ev(AP_QRELS, AP_RUN, ["11pt_avg..5"])
    assert labels(e) == ["11pt_avg_.5"]  # the raw parameter text
    assert pq(e, "11pt_avg_.5", "ap") == approx(2 / 3)  # K = lround(0.5 * 4) = 2
    e = ev(AP_QRELS, AP_RUN, ["11pt_avg.0.2,0.7"])
    assert pq(e, "11pt_avg_0.2,0.7", "ap") == approx((1 + 1 / 2) / 2)  # K = 1 -> 1, K = 3 -> 1/2


def test_Rprec_mult(ap_all: Any) -> None:
    # c = trunc(x * R + 0.9), R = 4; value = rel@c / c
    expected = {
        "0.20": 1 / 1,  # c = trunc(1.7) = 1
        "0.40": 1 / 2,  # c = trunc(2.5) = 2
        "0.60": 2 / 3,  # c = trunc(3.3) = 3
        "0.80": 2 / 4,  # c = trunc(4.1) = 4
        "1.00": 2 / 4,  # c = trunc(4.9) = 4
        "1.20": 2 / 5,  # c = trunc(5.7) = 5
        "1.40": 3 / 6,  # c = trunc(6.5) = 6
        "1.60": 3 / 7,  # c = trunc(7.3) = 7
        "1.80": 3 / 8,  # c = trunc(8.1) = 8
        "2.00": 3 / 8,  # c = trunc(8.9) = 8
    }
    got = [c.label for c in ap_all.results.columns if c.root == "Rprec_mult"]
    assert got == [f"Rprec_mult_{x}" for x in expected]
    for x, v in expected.items():
        assert pq(ap_all, f"Rprec_mult_{x}", "ap") == approx(v), x


def test_Rprec_mult_past_end() -> None:
    # c = trunc(5 * 4 + 0.9) = 20 > n = 10 -> rel_ret / c = 3/20
    e = ev(AP_QRELS, AP_RUN, ["Rprec_mult.5"])
    assert pq(e, "Rprec_mult_5.00", "ap") == approx(3 / 20)


def test_unj(ap_all: Any) -> None:
    # -1/-2 labels at ranks 5, 7, 9, 10
    assert pq(ap_all, "unj_5", "ap") == approx(1 / 5)
    assert pq(ap_all, "unj_10", "ap") == approx(4 / 10)
    assert pq(ap_all, "unj_20", "ap") == approx(4 / 20)


def test_unj_params() -> None:
    e = ev(AP_QRELS, AP_RUN, ["unj.7,1"])
    assert labels(e) == ["unj_1", "unj_7"]
    assert pq(e, "unj_1", "ap") == 0.0
    assert pq(e, "unj_7", "ap") == approx(2 / 7)  # ranks 5, 7


def test_relstring(ap_all: Any, gr_all: Any) -> None:
    # digit per level, '.' pooled-unjudged (-2), '-' unpooled (-1)
    assert pq(ap_all, "relstring", "ap") == "1010.1-0--"
    assert pq(gr_all, "relstring", "gr") == "3230012230"
    col = column(ap_all, "relstring")
    assert col.kind == "str" and col.summary is None  # per topic only


def test_relstring_params_and_symbols() -> None:
    e = ev(AP_QRELS, AP_RUN, ["relstring.3"])
    assert labels(e) == ["relstring_3"]
    assert pq(e, "relstring_3", "ap") == "101"
    # levels above 9 print '>'; the first 10 ranks only by default
    q = [("t", f"d{i:02d}", lv) for i, lv in enumerate([10, 9, 0, 12, 1, 2, 3, 4, 5, 6, 7], start=1)]
    r = [("t", f"d{i:02d}", float(20 - i)) for i in range(1, 12)]
    e = ev(q, r, ["relstring"])
    assert pq(e, "relstring", "t") == ">90>123456"


# =========================================================================== utility and sets


def test_utility(ap_all: Any) -> None:
    # 1*a - 1*b + 0*c + 0*d with a = rel_ret = 3, b = n - rel_ret = 7
    assert pq(ap_all, "utility", "ap") == approx(1 * 3 - 1 * 7)


def test_utility_params_and_N() -> None:
    # -N 100: a = 3, b = 7, c = R - a = 1, d = N + a - n - R = 100 + 3 - 10 - 4 = 89
    e = ev(AP_QRELS, AP_RUN, ["utility.2,-1,0,0"], num_docs=100)
    assert labels(e) == ["utility_2,-1,0,0"]
    assert pq(e, "utility_2,-1,0,0", "ap") == approx(2 * 3 - 1 * 7 + 0 * 1 + 0 * 89)
    e = ev(AP_QRELS, AP_RUN, ["utility.1,-1,-1,1"], num_docs=100)
    assert pq(e, "utility_1,-1,-1,1", "ap") == approx(1 * 3 - 1 * 7 - 1 * 1 + 1 * 89)  # = 84
    e = ev(AP_QRELS, AP_RUN, ["utility.1,-1,-1,1"])  # -N defaults to 0: d = 0 + 3 - 10 - 4
    assert pq(e, "utility_1,-1,-1,1", "ap") == approx(1 * 3 - 1 * 7 - 1 * 1 + 1 * (-11))


def test_set_measures(ap_all: Any) -> None:
    # n = 10, rel_ret = 3, R = 4
    assert pq(ap_all, "set_P", "ap") == approx(3 / 10)
    assert pq(ap_all, "set_relative_P", "ap") == approx(3 / min(10, 4))
    assert pq(ap_all, "set_recall", "ap") == approx(3 / 4)
    assert pq(ap_all, "set_map", "ap") == approx(3 * 3 / (10 * 4))
    # F1: P = 0.3, Rc = 0.75 -> 2 * 0.3 * 0.75 / (0.3 + 0.75) = 3/7
    assert pq(ap_all, "set_F", "ap") == approx(2 * 0.3 * 0.75 / (1 * 0.3 + 0.75))


def test_set_F_param() -> None:
    e = ev(AP_QRELS, AP_RUN, ["set_F.0.5"])
    assert labels(e) == ["set_F_0.5"]
    # (0.5 + 1) * 0.3 * 0.75 / (0.5 * 0.3 + 0.75) = 0.3375 / 0.9 = 0.375
    assert pq(e, "set_F_0.5", "ap") == approx(1.5 * 0.3 * 0.75 / (0.5 * 0.3 + 0.75))


def test_set_relative_P_n_below_R() -> None:
    # n = 2 < R = 4: rel_ret / min(n, R) = 1/2
    q = [("t", d, 1) for d in ("a", "b", "c", "d")]
    r = [("t", "a", 2.0), ("t", "x", 1.0)]
    e = ev(q, r, ["set_relative_P", "set_P", "set_recall", "set_map"])
    assert pq(e, "set_relative_P", "t") == approx(1 / 2)
    assert pq(e, "set_P", "t") == approx(1 / 2)
    assert pq(e, "set_recall", "t") == approx(1 / 4)
    assert pq(e, "set_map", "t") == approx(1 * 1 / (2 * 4))


# =========================================================================== gain family


def test_dcg_ideal_dcg_ndcg_binary(ap_all: Any) -> None:
    assert pq(ap_all, "dcg", "ap") == approx(1 / log2(2) + 1 / log2(4) + 1 / log2(7))
    assert pq(ap_all, "ideal_dcg", "ap") == approx(1 / log2(2) + 1 / log2(3) + 1 / log2(4) + 1 / log2(5))
    assert pq(ap_all, "ndcg", "ap") == approx(AP_DCG / AP_IDCG)


def test_dcg_ideal_dcg_ndcg_graded(gr_all: Any) -> None:
    # raw levels as gains, 1/log2(rank + 1), over the whole ranking / whole ideal list
    dcg = 3 / log2(2) + 2 / log2(3) + 3 / log2(4) + 0 + 0 + 1 / log2(7) + 2 / log2(8) + 2 / log2(9) + 3 / log2(10) + 0
    idcg = 3 / log2(2) + 3 / log2(3) + 3 / log2(4) + 2 / log2(5) + 2 / log2(6) + 2 / log2(7) + 1 / log2(8)
    assert pq(gr_all, "dcg", "gr") == approx(dcg)
    assert pq(gr_all, "ideal_dcg", "gr") == approx(idcg)
    assert pq(gr_all, "ndcg", "gr") == approx(dcg / idcg)


def test_ndcg_gain_pairs() -> None:
    # ndcg.1=3,2=9: level 1 -> gain 3, level 2 -> gain 9, level 3 -> 3 (raw), 0 -> 0.
    # table sorted by gain (stable): 0(l0), 3(l1), 3(l3), 9(l2); ideal from the top:
    # 9 x3 (level 2), 3 x3 (level 3), 3 x1 (level 1) -> 9,9,9,3,3,3,3
    e = ev(GR_QRELS, GR_RUN, ["ndcg.1=3,2=9"])
    assert labels(e) == ["ndcg_1=3,2=9"]
    # gains in rank order: 3,9,3,0,0,3,9,9,3,0
    dcg = 3 / log2(2) + 9 / log2(3) + 3 / log2(4) + 3 / log2(7) + 9 / log2(8) + 9 / log2(9) + 3 / log2(10)
    idcg = 9 / log2(2) + 9 / log2(3) + 9 / log2(4) + 3 / log2(5) + 3 / log2(6) + 3 / log2(7) + 3 / log2(8)
    assert pq(e, "ndcg_1=3,2=9", "gr") == approx(dcg / idcg)


def test_dcg_params_are_independent_of_ndcg() -> None:
    # the sane behaviour for trec_eval's shared dcg/ideal_dcg/ndcg parameter store:
    # each measure uses only its own parameters
    e = ev(GR_QRELS, GR_RUN, ["ndcg", "dcg.1=3,2=9"])
    assert labels(e) == ["dcg_1=3,2=9", "ndcg"]
    assert pq(e, "ndcg", "gr") == approx(D10 / I7)
    assert pq(e, "dcg_1=3,2=9", "gr") == approx(
        3 / log2(2) + 9 / log2(3) + 3 / log2(4) + 3 / log2(7) + 9 / log2(8) + 9 / log2(9) + 3 / log2(10)
    )
    e = ev(GR_QRELS, GR_RUN, ["ideal_dcg.3=1"])
    # level 3 -> gain 1; table 0(l0), 1(l3), 1(l1), 2(l2) (stable on ties: pair first) ->
    # ideal 2,2,2, then level 1 (top of the 1s, inserted last) x1, then level 3 x3
    assert pq(e, "ideal_dcg_3=1", "gr") == approx(
        2 / log2(2) + 2 / log2(3) + 2 / log2(4) + 1 / log2(5) + 1 / log2(6) + 1 / log2(7) + 1 / log2(8)
    )


def test_ndcg_cut(gr_all: Any, ap_all: Any) -> None:
    # DCG@k / IDCG@k with the ideal top k
    assert pq(gr_all, "ndcg_cut_5", "gr") == approx(D5 / I5)
    # k = 10 > K = 7: the whole ideal list
    assert pq(gr_all, "ndcg_cut_10", "gr") == approx(D10 / I7)
    assert pq(gr_all, "ndcg_cut_1000", "gr") == approx(D10 / I7)
    assert pq(ap_all, "ndcg_cut_5", "ap") == approx((1 / log2(2) + 1 / log2(4)) / AP_IDCG)


def test_ndcg_cut_params() -> None:
    e = ev(GR_QRELS, GR_RUN, ["ndcg_cut.3,1"])
    assert labels(e) == ["ndcg_cut_1", "ndcg_cut_3"]
    assert pq(e, "ndcg_cut_1", "gr") == approx((3 / log2(2)) / (3 / log2(2)))
    assert pq(e, "ndcg_cut_3", "gr") == approx(
        (3 / log2(2) + 2 / log2(3) + 3 / log2(4)) / (3 / log2(2) + 3 / log2(3) + 3 / log2(4))
    )


def test_ndcg_rel(gr_all: Any, ap_all: Any) -> None:
    # each retrieved doc with positive gain adds DCG@i / IDCG@min(i, K); K = 7;
    # relevant ranks 1, 2, 3, 6, 7, 8, 9 -> count 7 = K, so no tail term; / K
    s = D1 / I1 + D2 / I2 + D3 / I3 + D6 / I6 + D7 / I7 + D8 / I7 + D9 / I7
    assert pq(gr_all, "ndcg_rel", "gr") == approx(s / 7)
    # AP topic: K = 4, relevant ranks 1, 3, 6 -> 3 terms + (4 - 3) * DCG@n / IDCG@K
    i1 = 1 / log2(2)
    i3 = i1 + 1 / log2(3) + 1 / log2(4)
    s = 1 / i1 + (1 + 1 / log2(4)) / i3 + AP_DCG / AP_IDCG + (4 - 3) * AP_DCG / AP_IDCG
    assert pq(ap_all, "ndcg_rel", "ap") == approx(s / 4)


def test_Rndcg(gr_all: Any, ap_all: Any) -> None:
    # ideal 3,3,3,2,2,2,1 changes at j = 3, 6 and at j = K = 7: records DCG@j / IDCG@j;
    # n = 10 >= K + 2 = 9 adds DCG@n / IDCG@K; mean of the 4 records
    assert pq(gr_all, "Rndcg", "gr") == approx((D3 / I3 + D6 / I6 + D7 / I7 + D10 / I7) / 4)
    # AP topic: ideal 1,1,1,1 changes only at j = K = 4; n = 10 >= 6
    dcg4 = 1 / log2(2) + 1 / log2(4)
    assert pq(ap_all, "Rndcg", "ap") == approx((dcg4 / AP_IDCG + AP_DCG / AP_IDCG) / 2)


def test_Rndcg_short_run() -> None:
    # n = 3 < K + 2: records at j = 3 (DCG@3/IDCG@3), 6 (DCG@min(6,3)/IDCG@6), 7 (DCG@3/IDCG@7)
    e = ev(GR_QRELS, GR_RUN[:3], ["Rndcg"])
    assert pq(e, "Rndcg", "gr") == approx((D3 / I3 + D3 / I6 + D3 / I7) / 3)


def test_G(gr_all: Any, ap_all: Any) -> None:
    # g_i / log2(2 + C_i - S_i): S = cumulative result gain, C = cumulative max(ideal_i, 1);
    # ideal 3,3,3,2,2,2,1 then 1s; divided by the ideal sum 16
    terms = [
        3 / log2(2 + 3 - 3),  # rank 1: C = 3, S = 3
        2 / log2(2 + 6 - 5),  # rank 2: C = 6, S = 5
        3 / log2(2 + 9 - 8),  # rank 3: C = 9, S = 8
        # ranks 4, 5: gain 0 (C = 11, 13)
        1 / log2(2 + 15 - 9),  # rank 6: C = 15, S = 9
        2 / log2(2 + 16 - 11),  # rank 7: C = 16, S = 11
        2 / log2(2 + 17 - 13),  # rank 8: C = 17, S = 13
        3 / log2(2 + 18 - 16),  # rank 9: C = 18, S = 16
    ]
    assert pq(gr_all, "G", "gr") == approx(sum(terms) / (3 + 3 + 3 + 2 + 2 + 2 + 1))
    # binary AP topic: C - S counts the docs above that are not relevant -> equals binG
    assert pq(ap_all, "G", "ap") == approx((1 / log2(2) + 1 / log2(3) + 1 / log2(5)) / 4)


def test_rbp(gr_all: Any, ap_all: Any) -> None:
    # gains 0..3 fall outside [0, 1] -> rescaled g/3; (1 - p) * sum(g_i * p^(i-1)), p = 0.9
    p = 0.9
    s = 3 / 3 + 2 / 3 * p + 3 / 3 * p**2 + 1 / 3 * p**5 + 2 / 3 * p**6 + 2 / 3 * p**7 + 3 / 3 * p**8
    assert pq(gr_all, "rbp", "gr") == approx((1 - p) * s)
    # binary gains need no rescaling: relevant ranks 1, 3, 6
    assert pq(ap_all, "rbp", "ap") == approx((1 - p) * (1 + p**2 + p**5))


def test_rbp_p_param() -> None:
    e = ev(GR_QRELS, GR_RUN, ["rbp.p=0.5"])
    assert labels(e) == ["rbp_p=0.5"]
    p = 0.5
    s = 3 / 3 + 2 / 3 * p + 3 / 3 * p**2 + 1 / 3 * p**5 + 2 / 3 * p**6 + 2 / 3 * p**7 + 3 / 3 * p**8
    assert pq(e, "rbp_p=0.5", "gr") == approx((1 - p) * s)


def test_rbp_resid(ap_all: Any, gr_all: Any) -> None:
    # p^n + (1 - p) * sum over unjudged ranks (5, 7, 9, 10) of p^(rank-1)
    p = 0.9
    assert pq(ap_all, "rbp_resid", "ap") == approx(p**10 + (1 - p) * (p**4 + p**6 + p**8 + p**9))
    assert pq(gr_all, "rbp_resid", "gr") == 0.0  # nothing unjudged


def test_rbp_resid_p_param() -> None:
    e = ev(AP_QRELS, AP_RUN, ["rbp_resid.p=0.5"])
    assert labels(e) == ["rbp_resid_p=0.5"]
    p = 0.5
    assert pq(e, "rbp_resid_p=0.5", "ap") == approx(p**10 + (1 - p) * (p**4 + p**6 + p**8 + p**9))


# =========================================================================== options

ALL_ZERO_ON_R0 = [
    "map",
    "Rprec",
    "bpref",
    "recip_rank",
    "recall_5",
    "infAP",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut_5",
    "map_cut_5",
    "relative_P_5",
    "success_5",
    "P_5",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "11pt_avg",
    "iprec_at_recall_0.00",
    "iprec_at_recall_1.00",
    "Rprec_mult_1.00",
    "yaap",
    "rbp",
    "num_rel",
    "num_rel_ret",
]


@pytest.fixture(scope="module")
def r0() -> Any:
    # topic z: R = 0 (two judged non-relevant docs); ranking z1 (0), z3 (-1), z2 (0)
    q = [("z", "z1", 0), ("z", "z2", 0)]
    r = [("z", "z1", 3.0), ("z", "z3", 2.0), ("z", "z2", 1.0)]
    return ev(q, r, ["all_trec", "dcg", "ideal_dcg", "yaap"])


@pytest.mark.parametrize("label", ALL_ZERO_ON_R0)
def test_R0_topic_zero(r0: Any, label: str) -> None:
    assert pq(r0, label, "z") == 0.0  # yaap: ln((1+0)/(1+0-0)) = 0; ndcg_rel: 0/0 -> 0


def test_R0_topic_nonzero(r0: Any) -> None:
    assert pq(r0, "num_ret", "z") == 3
    assert pq(r0, "num_nonrel_judged_ret", "z") == 2
    assert pq(r0, "utility", "z") == approx(1 * 0 - 1 * 3)
    assert pq(r0, "relstring", "z") == "0-0"
    assert pq(r0, "unj_5", "z") == approx(1 / 5)
    assert pq(r0, "rbp_resid", "z") == approx(0.9**3 + (1 - 0.9) * 0.9**1)  # unjudged rank 2
    assert summ(r0, "gm_map") == approx(1e-5)  # exp(ln(max(0, 1e-5)))
    assert summ(r0, "gm_bpref") == approx(1e-5)
    assert summ(r0, "num_q") == 1
    assert summ(r0, "map") == 0.0  # an R = 0 topic still counts in the mean


@pytest.fixture(scope="module")
def m0() -> Any:
    return ev(AP_QRELS, AP_RUN, ["all_trec", "dcg", "ideal_dcg", "yaap"], max_docs=0)


@pytest.mark.parametrize(
    "label",
    [
        "num_ret",
        "num_rel_ret",
        "num_nonrel_judged_ret",
        "map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall_0.20",  # K = lround(0.8) = 1 > rel_ret = 0
        "iprec_at_recall_1.00",
        "P_5",
        "recall_5",
        "infAP",
        "Rprec_mult_1.00",  # c = 4 > n = 0 -> rel_ret / c = 0
        "utility",  # 1*0 - 1*0 + 0 + 0
        "binG",
        "G",
        "dcg",
        "ndcg",
        "ndcg_rel",
        "Rndcg",
        "ndcg_cut_5",
        "map_cut_5",
        "relative_P_5",
        "success_1",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "rbp",
        "rbp_resid",
        "unj_5",
    ],
)
def test_M0_zero(m0: Any, label: str) -> None:
    assert pq(m0, label, "ap") == 0.0


def test_M0_nonzero(m0: Any) -> None:
    assert pq(m0, "num_rel", "ap") == 4
    assert pq(m0, "relstring", "ap") == ""
    assert pq(m0, "ideal_dcg", "ap") == approx(AP_IDCG)  # from the qrels alone
    assert pq(m0, "yaap", "ap") == approx(log((1 + 0) / (1 + 4 - 0)))
    assert summ(m0, "gm_map") == approx(1e-5)


def test_M0_iprec_nan(m0: Any) -> None:
    # n = 0: the starting precision is rel_ret / n = 0.0 / 0.0 = NaN, which every
    # point with K <= rel_ret (= 0) takes: x = 0.0 (K = 0) and x = 0.1 (K = lround(0.4) = 0)
    assert math.isnan(pq(m0, "iprec_at_recall_0.00", "ap"))
    assert math.isnan(pq(m0, "iprec_at_recall_0.10", "ap"))
    assert math.isnan(pq(m0, "11pt_avg", "ap"))  # the NaN points are summed in


def test_M_truncates_after_ranking() -> None:
    e = ev(AP_QRELS, AP_RUN, ["num_ret", "num_rel_ret", "map", "relstring"], max_docs=3)
    assert pq(e, "num_ret", "ap") == 3
    assert pq(e, "num_rel_ret", "ap") == 2
    assert pq(e, "map", "ap") == approx((1 / 1 + 2 / 3) / 4)
    assert pq(e, "relstring", "ap") == "101"


TIE_RUN = [("t", d, 0.5) for d in ("a", "10", "D", "c", "9", "d", "b")]
TIE_QRELS = [("t", d, lv) for d, lv in (("d", 0), ("c", 1), ("b", 2), ("a", 3), ("D", 4), ("9", 5), ("10", 6))]


def test_ties_broken_by_docno_descending() -> None:
    # equal scores: docno descending bytewise: d > c > b > a > D > 9 > 10
    e = ev(TIE_QRELS, TIE_RUN, ["relstring", "recip_rank"])
    assert pq(e, "relstring", "t") == "0123456"
    assert pq(e, "recip_rank", "t") == approx(1 / 2)  # c (level 1) at rank 2


def test_ties_only_within_equal_scores_and_M() -> None:
    run = [("t", "10", 2.0)] + [r for r in TIE_RUN if r[1] != "10"]
    e = ev(TIE_QRELS, run, ["relstring"])
    assert pq(e, "relstring", "t") == "6012345"  # 10 first by score, then d c b a D 9
    e = ev(TIE_QRELS, TIE_RUN, ["relstring"], max_docs=3)
    assert pq(e, "relstring", "t") == "012"  # -M keeps the top 3 after ranking


def test_rel_level_2() -> None:
    # -l 2 on the graded topic: relevant = levels >= 2 at ranks 1, 2, 3, 7, 8, 9; R = 6
    counts = ["num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
    measures = [*counts, "map", "bpref", "P.5", "relstring", "ndcg", "ndcg_cut.5"]
    e = ev(GR_QRELS, GR_RUN, measures, rel_level=2)
    assert pq(e, "num_rel", "gr") == 6
    assert pq(e, "num_rel_ret", "gr") == 6
    assert pq(e, "num_nonrel_judged_ret", "gr") == 4  # levels 0, 0, 1, 0
    assert pq(e, "map", "gr") == approx((1 / 1 + 2 / 2 + 3 / 3 + 4 / 7 + 5 / 8 + 6 / 9) / 6)
    # NR = levels 0..1 = 3 + 1 = 4, min(NR, R) = 4; ranks 7, 8, 9 have 3 nonrel above
    assert pq(e, "bpref", "gr") == approx((1 + 1 + 1 + 3 * (1 - 3 / 4)) / 6)
    assert pq(e, "P_5", "gr") == approx(3 / 5)
    assert pq(e, "relstring", "gr") == "3230012230"
    # gain measures ignore -l
    assert pq(e, "ndcg", "gr") == approx(D10 / I7)
    assert pq(e, "ndcg_cut_5", "gr") == approx(D5 / I5)


def test_judged_only() -> None:
    # -J drops the -1/-2 docs after ranking: 1 0 1 0 1 0 (old ranks 1 2 3 4 6 8)
    e = ev(
        AP_QRELS,
        AP_RUN,
        [
            "num_ret",
            "num_rel_ret",
            "num_nonrel_judged_ret",
            "map",
            "Rprec",
            "bpref",
            "infAP",
            "P.5",
            "relstring",
            "unj.5",
            "rbp",
            "rbp_resid",
        ],
        judged_only=True,
    )
    assert pq(e, "num_ret", "ap") == 6
    assert pq(e, "num_rel_ret", "ap") == 3
    assert pq(e, "num_nonrel_judged_ret", "ap") == 3
    assert pq(e, "map", "ap") == approx((1 / 1 + 2 / 3 + 3 / 5) / 4)
    assert pq(e, "Rprec", "ap") == approx(2 / 4)
    assert pq(e, "bpref", "ap") == approx((1 + (1 - 1 / 4) + (1 - 2 / 4)) / 4)
    # infAP: j=2: 1/3 + (2/3)*(2/2)*((1+e)/(2+2e)) = 2/3; j=4: 1/5 + (4/5)*(4/4)*((2+e)/(4+2e)) = 3/5
    assert pq(e, "infAP", "ap") == approx((1 + 2 / 3 + 3 / 5) / 4)
    assert pq(e, "P_5", "ap") == approx(3 / 5)
    assert pq(e, "relstring", "ap") == "101010"
    assert pq(e, "unj_5", "ap") == 0.0
    assert pq(e, "rbp", "ap") == approx(0.1 * (1 + 0.9**2 + 0.9**4))
    assert pq(e, "rbp_resid", "ap") == 0.0


# -c: topic zz (R = 2, levels 1 and 2, one judged non-relevant) is not in the run
ZZ_QRELS = [("zz", "zz1", 1), ("zz", "zz2", 2), ("zz", "zz3", 0)]


@pytest.fixture(scope="module")
def complete() -> Any:
    return ev(AP_QRELS + ZZ_QRELS, AP_RUN, ["all_trec", "dcg", "ideal_dcg", "yaap"], complete=True)


def test_complete_topics_and_counts(complete: Any) -> None:
    assert complete.results.qids == ["ap", "zz"]
    assert summ(complete, "num_q") == 2  # qrels topics
    assert pq(complete, "num_ret", "zz") == 0  # placeholder forced to 0
    assert summ(complete, "num_ret") == 10 + 0
    assert pq(complete, "num_rel", "zz") == 2
    assert summ(complete, "num_rel") == 4 + 2  # qrels lines with rel > 0
    assert summ(complete, "num_rel_ret") == 3 + 0
    assert pq(complete, "num_nonrel_judged_ret", "zz") == 0  # 1 - 1 - 0 - 0


@pytest.mark.parametrize(
    "label",
    [
        "map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall_0.00",  # K = 0: precision 0/1 of the placeholder
        "P_5",
        "recall_5",
        "infAP",
        "Rprec_mult_0.20",  # c = trunc(0.4 + 0.9) = 1: 0/1
        "utility",  # forced to 0 (exact name)
        "11pt_avg",
        "binG",
        "G",
        "dcg",
        "ndcg",
        "ndcg_rel",
        "Rndcg",
        "ndcg_cut_5",
        "map_cut_5",
        "relative_P_5",
        "success_1",
        "set_P",
        "set_relative_P",
        "set_recall",
        "set_map",
        "set_F",
        "rbp",
        "rbp_resid",  # forced to 0 (would be 1.0)
        "unj_5",  # forced to 0 (would be 1/5)
        "unj_20",
    ],
)
def test_complete_placeholder_zero(complete: Any, label: str) -> None:
    assert pq(complete, label, "zz") == 0.0


def test_complete_placeholder_values(complete: Any) -> None:
    assert pq(complete, "relstring", "zz") == ""
    # the ideal list comes from the qrels: 2, 1
    assert pq(complete, "ideal_dcg", "zz") == approx(2 / log2(2) + 1 / log2(3))
    assert pq(complete, "yaap", "zz") == approx(log((1 + 0) / (1 + 2 - 0)))


def test_complete_summaries(complete: Any) -> None:
    assert summ(complete, "map") == approx((AP_MAP + 0) / 2)
    assert summ(complete, "P_5") == approx((2 / 5 + 0) / 2)
    assert summ(complete, "gm_map") == approx(math.exp((log(AP_MAP) + log(1e-5)) / 2))
    assert summ(complete, "gm_bpref") == approx(math.exp((log(0.5625) + log(1e-5)) / 2))
    assert summ(complete, "utility") == approx((-4 + 0) / 2)


def test_complete_parameterised_names_not_zeroed() -> None:
    e = ev(AP_QRELS + ZZ_QRELS, AP_RUN, ["utility.2,-1,0,0", "relstring.3", "rbp_resid.p=0.5"], complete=True)
    # placeholder n = 1, rel_ret = 0, R = 2, N = 0: 2*0 - 1*1 + 0*2 + 0*(0 + 0 - 1 - 2)
    assert pq(e, "utility_2,-1,0,0", "zz") == approx(-1)
    assert pq(e, "relstring_3", "zz") == "-"
    # one unpooled doc: p^1 + (1 - p) * p^0 = 0.5 + 0.5
    assert pq(e, "rbp_resid_p=0.5", "zz") == approx(0.5 + 0.5 * 1)


def test_complete_num_rel_ignores_rel_level() -> None:
    # -c -l 2: per-topic R = 6 but the summary counts qrels lines with rel > 0 = 7
    e = ev(GR_QRELS, GR_RUN, ["num_rel"], complete=True, rel_level=2)
    assert pq(e, "num_rel", "gr") == 6
    assert summ(e, "num_rel") == 7


def test_topic_order_bytewise() -> None:
    qids = ["a-1", "2", "A", "100", "10"]
    q = [(t, "d", 1) for t in qids]
    r = [(t, "d", 1.0) for t in qids]
    e = ev(q, r, ["num_ret"])
    assert e.results.qids == ["10", "100", "2", "A", "a-1"]


def test_only_query_with_complete() -> None:
    # -c -D: only topic ap is evaluated, but the means divide by the 2 qrels topics and
    # gm_* adds (2 - 1) * ln(1e-5) for the topic not evaluated
    e = ev(AP_QRELS + ZZ_QRELS, AP_RUN, ["num_q", "num_rel", "map", "gm_map"], complete=True, only_query="ap")
    assert e.results.qids == ["ap"]
    assert summ(e, "num_q") == 2
    assert summ(e, "num_rel") == 4 + 2  # qrels lines with rel > 0 over all topics
    assert summ(e, "map") == approx(AP_MAP / 2)
    assert summ(e, "gm_map") == approx(math.exp((log(AP_MAP) + (2 - 1) * log(1e-5)) / 2))


# =========================================================================== more edge cases


def test_rel_level_0() -> None:
    # -l 0: judged level-0 docs are relevant; R = 2 (z1, z2), NR = 0; ranking z1 (0), z3 (-1), z2 (0)
    q = [("z", "z1", 0), ("z", "z2", 0)]
    r = [("z", "z1", 3.0), ("z", "z3", 2.0), ("z", "z2", 1.0)]
    counts = ["num_rel", "num_rel_ret", "num_nonrel_judged_ret"]
    measures = [*counts, "map", "bpref", "infAP", "binG", "P.5", "ndcg", "Rndcg"]
    e = ev(q, r, measures, rel_level=0)
    assert pq(e, "num_rel", "z") == 2
    assert pq(e, "num_rel_ret", "z") == 2
    assert pq(e, "num_nonrel_judged_ret", "z") == 0  # 3 - 1 - 0 - 2
    assert pq(e, "map", "z") == approx((1 / 1 + 2 / 3) / 2)
    assert pq(e, "bpref", "z") == approx((1 + 1) / 2)  # no judged non-relevant doc above either
    # infAP j=2 (r=2, nr=0, u=0): 1/3 + (2/3)*((1+0+0)/2)*((1+e)/(1+0+2e))
    assert pq(e, "infAP", "z") == approx((1 + (1 / 3 + (2 / 3) * (1 / 2) * ((1 + EPS) / (1 + 2 * EPS)))) / 2)
    assert pq(e, "binG", "z") == approx((1 / log2(2) + 1 / log2(3)) / 2)
    assert pq(e, "P_5", "z") == approx(2 / 5)
    assert pq(e, "ndcg", "z") == 0.0  # gains ignore -l: level 0 has gain 0, IDCG = 0
    # Rndcg: R = 2 > 0 but the ideal list is empty -> no records -> 0/0
    assert math.isnan(pq(e, "Rndcg", "z"))


def test_rel_level_negative() -> None:
    # -l -1: labels >= -1 count as relevant in the rank loops (the unpooled -1 docs too),
    # but num_rel_ret never counts -1/-2, and R counts judged levels >= 0 only (8 docs)
    e = ev(AP_QRELS, AP_RUN, ["num_rel", "num_rel_ret", "map", "P.5,10"], rel_level=-1)
    assert pq(e, "num_rel", "ap") == 8
    assert pq(e, "num_rel_ret", "ap") == 6  # ranks 1, 2, 3, 4, 6, 8
    # relevant ranks 1 2 3 4 6 7 8 9 10 (rank 5 is -2)
    assert pq(e, "map", "ap") == approx((1 / 1 + 2 / 2 + 3 / 3 + 4 / 4 + 5 / 6 + 6 / 7 + 7 / 8 + 8 / 9 + 9 / 10) / 8)
    assert pq(e, "P_5", "ap") == approx(4 / 5)
    assert pq(e, "P_10", "ap") == approx(9 / 10)


def test_11pt_avg_unsorted_params_follow_the_loop() -> None:
    # 11pt_avg.0.7,0.2 keeps the given order: K = [lround(2.8), lround(0.8)] = [3, 1].
    # The reverse scan only checks the last unsettled point: at the relevant doc where
    # rs = 1 it emits K = 1 with ip = 1.0, and then K = 3 (never matched) after the loop
    # with the same ip = 1.0 -> (1.0 + 1.0) / 2 (sorted points would give (1 + 1/2) / 2)
    e = ev(AP_QRELS, AP_RUN, ["11pt_avg.0.7,0.2"])
    assert pq(e, "11pt_avg_0.7,0.2", "ap") == approx((1.0 + 1.0) / 2)


def test_Rprec_mult_cutoff_below_one() -> None:
    # c = trunc(0.01 * 4 + 0.9) = 0 -> never assigned -> 0
    e = ev(AP_QRELS, AP_RUN, ["Rprec_mult.0.01"])
    assert labels(e) == ["Rprec_mult_0.01"]
    assert pq(e, "Rprec_mult_0.01", "ap") == 0.0


def test_relstring_length_params() -> None:
    e = ev(AP_QRELS, AP_RUN, ["relstring.2.9"])
    assert pq(e, "relstring_2.9", "ap") == "10"  # (long)2.9 = 2
    e = ev(AP_QRELS, AP_RUN, ["relstring.0"])
    assert pq(e, "relstring_0", "ap") == ""
    e = ev(AP_QRELS, AP_RUN, ["relstring.15"])
    assert pq(e, "relstring_15", "ap") == "1010.1-0--"  # min(15, n = 10)


def test_set_F_extra_params_ignored() -> None:
    e = ev(AP_QRELS, AP_RUN, ["set_F.0.5,2"])
    assert pq(e, "set_F_0.5,2", "ap") == approx(1.5 * 0.3 * 0.75 / (0.5 * 0.3 + 0.75))


def test_gain_pairs_fractional_gains_sorted_by_value() -> None:
    # ndcg.2=1.5: table (pairs first) [2:1.5] [0:0] [1:1] [3:3]. trec_eval's comparator
    # looks at (int)(a - b) and would keep 1.5 above 1 (a listed defect: ndcg can exceed 1);
    # ireval sorts by value: [0:0] [1:1] [2:1.5] [3:3] -> ideal from the top: 3 x3,
    # 1.5 x3 (level 2), 1 x1 (level 1) = 3,3,3,1.5,1.5,1.5,1 (best first)
    e = ev(GR_QRELS, GR_RUN, ["ndcg.2=1.5", "ideal_dcg.2=1.5"])
    idcg = 3 / log2(2) + 3 / log2(3) + 3 / log2(4) + 1.5 / log2(5) + 1.5 / log2(6) + 1.5 / log2(7) + 1 / log2(8)
    # result gains 3,1.5,3,0,0,1,1.5,1.5,3,0
    dcg = 3 / log2(2) + 1.5 / log2(3) + 3 / log2(4) + 1 / log2(7) + 1.5 / log2(8) + 1.5 / log2(9) + 3 / log2(10)
    assert pq(e, "ideal_dcg_2=1.5", "gr") == approx(idcg)
    assert pq(e, "ndcg_2=1.5", "gr") == approx(dcg / idcg)


def test_gain_pair_duplicate_level() -> None:
    # ndcg.1=7,1=5: the judged count goes to the FIRST pair in insertion order ([1:7]);
    # sorted table [0:0] [1:5] [1:7]: a document's gain is the first match in sorted order
    # (5), the ideal list walks from the top (7 x4)
    e = ev(AP_QRELS, AP_RUN, ["ndcg.1=7,1=5"])
    assert pq(e, "ndcg_1=7,1=5", "ap") == approx((5 * AP_DCG) / (7 * AP_IDCG))


def test_gain_pair_negative_and_unjudged_levels() -> None:
    # dcg.0=-1: judged non-relevant docs (ranks 2, 4, 8) subtract; the ideal list stops
    # at the first gain <= 0, so IDCG is unchanged
    e = ev(AP_QRELS, AP_RUN, ["dcg.0=-1", "ndcg.0=-1"])
    dcg = 1 / log2(2) - 1 / log2(3) + 1 / log2(4) - 1 / log2(5) + 1 / log2(7) - 1 / log2(9)
    assert pq(e, "dcg_0=-1", "ap") == approx(dcg)
    assert pq(e, "ndcg_0=-1", "ap") == approx(dcg / AP_IDCG)
    # dcg.-1=0.5: unpooled docs (label -1 at ranks 7, 9, 10) get gain 0.5; the -2 doc does not
    e = ev(AP_QRELS, AP_RUN, ["dcg.-1=0.5", "ideal_dcg.-1=0.5"])
    assert pq(e, "dcg_-1=0.5", "ap") == approx(AP_DCG + 0.5 / log2(8) + 0.5 / log2(10) + 0.5 / log2(11))
    assert pq(e, "ideal_dcg_-1=0.5", "ap") == approx(AP_IDCG)  # level -1 has no judged count


def test_gain_pair_zero_count_entry_does_not_stop_ideal_walk() -> None:
    # ndcg.0=0,1=0.5,9=0: table [0:0] [1:0.5] [9:0] [2:2] [3:3], sorted by value
    # [0:0] [9:0] [1:0.5] [2:2] [3:3]. The ideal walk goes 3 x3, 2 x3, 0.5 x1 (level 1)
    # and stops at [9:0] (gain 0; it has no judged documents anyway):
    # ideal 3,3,3,2,2,2,0.5
    e = ev(GR_QRELS, GR_RUN, ["ideal_dcg.0=0,1=0.5,9=0"])
    idcg = 3 / log2(2) + 3 / log2(3) + 3 / log2(4) + 2 / log2(5) + 2 / log2(6) + 2 / log2(7) + 0.5 / log2(8)
    assert pq(e, "ideal_dcg_0=0,1=0.5,9=0", "gr") == approx(idcg)


def test_rbp_negative_gain_rescaled() -> None:
    # rbp.0=-3: table gains -3 (l0), 1, 2, 3 -> min -3 < 0 -> (g + 3) / 6:
    # l0 -> 0, l1 -> 4/6, l2 -> 5/6, l3 -> 1; rank gains 1, 5/6, 1, 0, 0, 4/6, 5/6, 5/6, 1, 0
    e = ev(GR_QRELS, GR_RUN, ["rbp.0=-3"])
    p = 0.9
    s = 1 + 5 / 6 * p + 1 * p**2 + 4 / 6 * p**5 + 5 / 6 * p**6 + 5 / 6 * p**7 + 1 * p**8
    assert pq(e, "rbp_0=-3", "gr") == approx((1 - p) * s)


def test_G_gain_pairs() -> None:
    # G.1=3,2=9 on the graded topic: ideal 9,9,9,3,3,3,3 (see test_ndcg_gain_pairs), sum 39;
    # rank gains 3,9,3,0,0,3,9,9,3,0; C_i accumulates the ideal gains (all >= 1), then 1s
    terms = [
        3 / log2(2 + 9 - 3),  # rank 1: C = 9, S = 3
        9 / log2(2 + 18 - 12),  # rank 2: C = 18, S = 12
        3 / log2(2 + 27 - 15),  # rank 3: C = 27, S = 15
        # ranks 4, 5: C = 30, 33
        3 / log2(2 + 36 - 18),  # rank 6: C = 36, S = 18
        9 / log2(2 + 39 - 27),  # rank 7: C = 39, S = 27
        9 / log2(2 + 40 - 36),  # rank 8: C = 40, S = 36
        3 / log2(2 + 41 - 39),  # rank 9: C = 41, S = 39
    ]
    e = ev(GR_QRELS, GR_RUN, ["G.1=3,2=9"])
    assert pq(e, "G_1=3,2=9", "gr") == approx(sum(terms) / (9 * 3 + 3 * 4))


def test_Rndcg_changes_follow_gain_values_not_levels() -> None:
    # Rndcg.3=2: levels 2 and 3 both have gain 2 -> ideal 2,2,2,2,2,2,1 changes only at
    # j = 6 and at j = K = 7; n = 10 >= K + 2 adds DCG@10 / IDCG@7.
    # rank gains 2,2,2,0,0,1,2,2,2,0
    d6 = 2 / log2(2) + 2 / log2(3) + 2 / log2(4) + 1 / log2(7)
    d7 = d6 + 2 / log2(8)
    d10 = d7 + 2 / log2(9) + 2 / log2(10)
    i6 = 2 / log2(2) + 2 / log2(3) + 2 / log2(4) + 2 / log2(5) + 2 / log2(6) + 2 / log2(7)
    i7 = i6 + 1 / log2(8)
    e = ev(GR_QRELS, GR_RUN, ["Rndcg.3=2"])
    assert pq(e, "Rndcg_3=2", "gr") == approx((d6 / i6 + d7 / i7 + d10 / i7) / 3)


def test_topic_with_only_negative_qrels() -> None:
    # topic n: every qrels value is negative -> R = 0, no judged levels (trec_eval reuses
    # the previous topic's counts here; the sane reading is R = 0). Ranking n1 (-2), n3 (-1).
    q = [*AP_QRELS, ("n", "n1", -1), ("n", "n2", -1)]
    r = [*AP_RUN, ("n", "n1", 2.0), ("n", "n3", 1.0)]
    measures = ["num_rel", "num_nonrel_judged_ret", "map", "bpref", "ndcg", "ndcg_cut.5", "Rndcg", "relstring", "unj.5"]
    e = ev(q, r, [*measures, "rbp_resid"])
    assert pq(e, "num_rel", "n") == 0
    assert pq(e, "num_nonrel_judged_ret", "n") == 0  # 2 - 1 - 1 - 0
    for label in ("map", "bpref", "ndcg", "ndcg_cut_5", "Rndcg"):
        assert pq(e, label, "n") == 0.0, label
    assert pq(e, "relstring", "n") == ".-"
    assert pq(e, "unj_5", "n") == approx(2 / 5)
    assert pq(e, "rbp_resid", "n") == approx(0.9**2 + (1 - 0.9) * (1 + 0.9))


def test_complete_with_judged_only_placeholder_is_empty() -> None:
    # -c -J: the placeholder's one unpooled doc is dropped too, so n = 0 for topic zz:
    # iprec starts from rel_ret / n = 0/0 = NaN for points with K = 0 <= rel_ret;
    # x = 0.5: K = lround(0.5 * 2) = 1 > rel_ret -> 0; nothing unjudged is left
    e = ev(
        AP_QRELS + ZZ_QRELS,
        AP_RUN,
        ["iprec_at_recall.0,0.5", "set_P", "relstring.3", "rbp_resid.p=0.5"],
        complete=True,
        judged_only=True,
    )
    assert math.isnan(pq(e, "iprec_at_recall_0.00", "zz"))
    assert pq(e, "iprec_at_recall_0.50", "zz") == 0.0
    assert pq(e, "set_P", "zz") == 0.0
    assert pq(e, "relstring_3", "zz") == ""
    assert pq(e, "rbp_resid_p=0.5", "zz") == 0.0
