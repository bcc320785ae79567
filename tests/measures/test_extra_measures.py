"""Hand-computed cases for the measures ireval adds beyond trec_eval, and their properties.

Every measure registered by irevalcli/measures/{graded,extra,diversity}.py is requested
by name here at least once, with a value worked out by hand in the comment next to it.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from irevalcli import evaluate
from irevalcli.errors import MeasureParamError, UsageError

L3, L5 = math.log2(3), math.log2(5)


def frames(qrels, run):
    q = pd.DataFrame(qrels, columns=["qid", "docno", "rel"])
    r = pd.DataFrame(run, columns=["qid", "docno", "score"])
    return q, r


def summary(qrels, run, specs, **kw):
    q, r = frames(qrels, run)
    return evaluate(q, r, specs, **kw).results.summary


def per_query(qrels, run, specs, **kw):
    q, r = frames(qrels, run)
    pq = evaluate(q, r, specs, **kw).per_query
    return {(a, b): v for a, b, v in zip(pq["qid"], pq["measure"], pq["value"])}


# The graded list of the ERR paper's kind: labels 3, 2, 0, 1 in rank order (g_max = 3),
# plus a judged label-1 document ("e") that is not retrieved, and an unjudged one at rank 5.
GRADED_QRELS = [("1", "a", 3), ("1", "b", 2), ("1", "c", 0), ("1", "d", 1), ("1", "e", 1)]
GRADED_RUN = [("1", "a", 5.0), ("1", "b", 4.0), ("1", "c", 3.0), ("1", "d", 2.0), ("1", "u", 1.0)]


def graded(*specs, **kw):
    return summary(GRADED_QRELS, GRADED_RUN, list(specs), **kw)


def test_err_on_a_graded_list():
    # R(g) = (2^g - 1) / 2^3: 7/8, 3/8, 0, 1/8, 0
    # ERR = 7/8 + (1/8)(3/8)/2 + 0 + (1/8)(5/8)(1)(1/8)/4 = 0.875 + 3/128 + 5/2048
    s = {**graded("err", "err_cut.1,2,4"), **graded("err.gmax=4"), **graded("err.k=2")}  # one parameter string each
    assert s["err"] == pytest.approx(0.90087890625, abs=1e-15)
    assert s["err_cut_1"] == pytest.approx(0.875, abs=1e-15)
    assert s["err_cut_2"] == pytest.approx(0.875 + 3 / 128, abs=1e-15)
    assert s["err_cut_4"] == pytest.approx(0.90087890625, abs=1e-15)
    assert s["err_k=2"] == pytest.approx(0.875 + 3 / 128, abs=1e-15)
    # g_max = 4 (gdeval's): R = 7/16, 3/16, 0, 1/16: 7/16 + (9/16)(3/16)/2 + (9/16)(13/16)(1/16)/4
    assert s["err_gmax=4"] == pytest.approx(7 / 16 + 27 / 512 + 117 / 16384, abs=1e-15)


def test_err_friendly_names_take_gmax_4_from_gdeval():
    s = graded("ERR@2", "ERR")
    assert s["ERR@2"] == pytest.approx(7 / 16 + 27 / 512, abs=1e-15)
    assert s["ERR"] == pytest.approx(7 / 16 + 27 / 512 + 117 / 16384, abs=1e-15)


def test_ir_measures_gains_relabel_the_judgements():
    # gains {0:1, 1:4}: a 3, b 2, c 0 -> 1, d 1 -> 4, e 1 -> 4 (u unjudged: 0)
    s = graded("nDCG(gains={0:1,1:4})@3", "nDCG(gains={0:1,1:4})", "ndcg.0=1,1=4")
    # top 3: a, b, c -> 3 + 2/log2(3) + 1/2; ideal 4, 4, 3 -> 4 + 4/log2(3) + 3/2
    assert s["nDCG(gains={0:1,1:4})@3"] == pytest.approx((3 + 2 / L3 + 0.5) / (4 + 4 / L3 + 1.5), abs=1e-15)
    # whole ranking: + 4/log2(5) for d; ideal 4, 4, 3, 2, 1
    full = (3 + 2 / L3 + 0.5 + 4 / L5) / (4 + 4 / L3 + 1.5 + 2 / L5 + 1 / math.log2(6))
    assert s["nDCG(gains={0:1,1:4})"] == pytest.approx(full, abs=1e-15)
    assert s["ndcg_0=1,1=4"] == s["nDCG(gains={0:1,1:4})"]  # trec_eval's form of the same gains


def test_set_measures_at_k_and_map():
    # relevant (label >= 1): a, b, d of the run a b c d u; R = 4 (e is not retrieved)
    s = graded("SetP@2", "SetP@3", "SetP@10", "SetR@3", "SetF@3", "SetAP@3", "SetRelP@3", "MAP", "map", "MAP@2")
    assert (s["SetP@2"], s["SetP@3"], s["SetP@10"]) == (1.0, pytest.approx(2 / 3), pytest.approx(3 / 5))
    assert s["SetR@3"] == 0.5
    assert s["SetF@3"] == pytest.approx(4 / 7)  # 2 (2/3)(1/2) / (2/3 + 1/2)
    assert s["SetAP@3"] == pytest.approx(1 / 3)  # (2/3)(1/2)
    assert s["SetRelP@3"] == pytest.approx(2 / 3)  # 2 of min(R, 3) = 3
    # AP: (1/1 + 2/2 + 3/4) / 4; MAP is ir_measures' alias of AP
    assert s["MAP"] == s["map"] == pytest.approx(2.75 / 4)
    assert s["MAP@2"] == pytest.approx(2 / 4)


def test_cwl_measures_on_a_graded_list():
    # cwl_eval's gains with max_rel = 4: a 3/4, b 1/2, c 0, d 1/4, u 0; ranks 6..1000 padded with 0
    s = graded(
        "SDCG(max_rel=4)@3",
        "NERR8(max_rel=4)@3",
        "NERR8(max_rel=4)@10",
        "NERR9(max_rel=4)@3",
        "NERR10(p=0.5,max_rel=4)",
        "NERR11(max_rel=4)",
        "INSQ(max_rel=4)",
        "BPM(max_rel=4)@10",
        "BPM(T=2,max_rel=4)@10",
        "bpm_cut.3",
        "sdcg_cut.3",
        "nerr8_cut.3",
        "nerr9_cut.3",
        "nerr10",
        "nerr11",
        "insq",
    )
    assert s["SDCG(max_rel=4)@3"] == pytest.approx((0.75 + 0.5 / L3) / (1 + 1 / L3 + 0.5), abs=1e-15)
    # NERR8: W_i ~ prod_{j<i} (1 - g_j) = 1, 1/4, 1/8, 1/8, 3/32, 3/32, ...
    assert s["NERR8(max_rel=4)@3"] == pytest.approx((0.75 + 0.5 / 4) / (1 + 1 / 4 + 1 / 8), abs=1e-15)  # 7/11
    assert s["NERR8(max_rel=4)@10"] == pytest.approx(29 / 66, abs=1e-15)  # (29/32) / (1 + 1/4 + 1/4 + 3/32 + 5 (3/32))
    # NERR9: W_i ~ prod_{j<i} (1 - g_j) / i = 1, 1/8, 1/24
    assert s["NERR9(max_rel=4)@3"] == pytest.approx((0.75 + 0.5 / 8) / (1 + 1 / 8 + 1 / 24), abs=1e-15)
    # NERR10, p = 1/2: W_i ~ 2^-(i-1) prod_{j<i} (1 - g_j); past rank 5 the product stays 3/32
    head = [1, 1 / 8, 1 / 32, 1 / 64, 3 / 512]
    tail = 3 / 32 * math.fsum(0.5 ** (i - 1) for i in range(6, 1001))
    num = 0.75 + 0.5 / 8 + 0.25 / 64
    assert s["NERR10(p=0.5,max_rel=4)"] == pytest.approx(num / (math.fsum(head) + tail), abs=1e-15)
    # NERR11 and INSQ, T = 1: base weight (2 / (i + 1))^2; NERR11 times prod_{j<i} (1 - g_j) (computed as
    # running products of C_j, as cwl_eval does: equal to these closed forms to ~1e-15, hence abs=1e-13)
    b = [4 / (i + 1) ** 2 for i in range(1, 1001)]
    prod = [1, 1 / 4, 1 / 8, 1 / 8, 3 / 32] + [3 / 32] * 995
    num = 0.75 * b[0] * 1 + 0.5 * b[1] / 4 + 0.25 * b[3] / 8
    assert s["NERR11(max_rel=4)"] == pytest.approx(num / math.fsum(x * y for x, y in zip(b, prod)), abs=1e-13)
    num = 0.75 * b[0] + 0.5 * b[1] + 0.25 * b[3]
    assert s["INSQ(max_rel=4)"] == pytest.approx(num / math.fsum(b), abs=1e-13)
    # BPM: gain so far 3/4, 5/4 >= T = 1 at rank 2: (5/4) / 2; T = 2 is never reached: stop at k = 10
    assert s["BPM(max_rel=4)@10"] == pytest.approx(0.625, abs=1e-15)
    assert s["BPM(T=2,max_rel=4)@10"] == pytest.approx(1.5 / 10, abs=1e-15)
    # trec-style names: max_rel = the highest label (3), so a's gain is 1 and every NERR stops there
    assert s["bpm_cut_3"] == s["nerr8_cut_3"] == s["nerr9_cut_3"] == s["nerr10"] == s["nerr11"] == 1.0
    assert s["sdcg_cut_3"] == pytest.approx((1 + (2 / 3) / L3) / (1 + 1 / L3 + 0.5), abs=1e-15)
    num = 1 * b[0] + (2 / 3) * b[1] + (1 / 3) * b[3]
    assert s["insq"] == pytest.approx(num / math.fsum(b), abs=1e-13)


def test_cwl_measures_on_ir_measures_own_example():
    # ir_measures' test/test_cwl_eval.py ("based on a manual execution of cwl-eval", 4 decimals): three
    # topics retrieving D1..D10 in that order; labels by rank (None: unjudged)
    labels = {
        "T1": [1, 0, 1, 1, None, None, 1, 0, 1, 0],
        "T2": [1, 1, None, None, 1, 0, 1, 1, 1, 0],
        "T3": [None, None, None, 0, 0, 1, 1, 1, 0, 1],
    }
    qrels = [(q, f"D{i + 1}", lab) for q, labs in labels.items() for i, lab in enumerate(labs) if lab is not None]
    run = [(q, f"D{i + 1}", 4.3 - i / 10) for q in labels for i in range(10)]
    expected = {
        "BPM(T=1.0,max_rel=1)@20": (1.0, 1.0, 0.1667),
        "BPM(T=2.0,max_rel=1)@10": (0.6667, 1.0, 0.2857),
        "INSQ(T=1.0,max_rel=1)": (0.5872, 0.6629, 0.0880),
        "INSQ(T=2.0,max_rel=1)": (0.4513, 0.5068, 0.1292),
        "SDCG(max_rel=1)@10": (0.5645, 0.6531, 0.2848),
        "NERR8(max_rel=1)@10": (1.0, 1.0, 0.1667),
        "NERR9(max_rel=1)@10": (1.0, 1.0, 0.0680),
        "NERR10(p=0.8,max_rel=1)": (1.0, 1.0, 0.0888),
        "NERR11(T=2.0,max_rel=1)": (1.0, 1.0, 0.0691),
    }
    pq = per_query(qrels, run, list(expected))
    for spec, values in expected.items():
        for q, v in zip(("T1", "T2", "T3"), values):
            assert pq[(q, spec)] == pytest.approx(v, abs=1e-4), (spec, q)


def test_cwl_parameters_are_checked():
    with pytest.raises(MeasureParamError) as e:
        graded("nerr10.p=1.5")
    assert str(e.value) == "nerr10: p=1.5 is not in [0, 1]"
    with pytest.raises(MeasureParamError) as e:
        graded("insq.T=0")
    assert str(e.value) == "insq: T=0 must be positive"
    with pytest.raises(MeasureParamError) as e:
        graded("nerr11.q=1")
    assert str(e.value) == "nerr11: unknown parameter 'q' (known: T, min_rel, max_rel)"
    with pytest.raises(MeasureParamError) as e:
        graded("SDCG(dcg=exp-log2,max_rel=4)@3")
    assert str(e.value) == "SDCG(dcg=exp-log2,max_rel=4)@3: dcg='exp-log2' is not 'log2' (the only SDCG form)"
    # max_rel <= min_rel: no gain at all (cwl_eval refuses it)
    assert graded("INSQ(min_rel=3,max_rel=3)")["INSQ(min_rel=3,max_rel=3)"] == 0.0


def test_compat_on_a_graded_list():
    # ideal: a (3), b (2), d (1, retrieved: before e), e (1); run a b c d u; depth max(5, 4) = 5
    # overlap at depths 1..5: 1, 2, 2, 3 (d joins at max(4, 3)), 3
    w = [0.95**i for i in range(5)]
    score = w[0] * 1 + w[1] * 2 / 2 + w[2] * 2 / 3 + w[3] * 3 / 4 + w[4] * 3 / 5
    best = w[0] + w[1] + w[2] + w[3] + w[4] * 4 / 5  # the ideal's overlap with itself: min(d, 4) / d
    s = {**graded("Compat", "compat"), **graded("compat.p=0.95,normalize=0"), **graded("Compat(normalize=False)")}
    assert s["Compat"] == s["compat"] == pytest.approx(score / best, abs=1e-15)
    assert s["compat_p=0.95,normalize=0"] == s["Compat(normalize=False)"] == pytest.approx(score / sum(w), abs=1e-15)
    with pytest.raises(MeasureParamError) as e:
        graded("compat.p=2")
    assert str(e.value) == "compat: p=2 is not in [0, 1]"
    with pytest.raises(MeasureParamError) as e:
        graded("Compat(normalize=2)")
    assert str(e.value) == "Compat(normalize=2): normalize=2 is not True or False"


def test_pfound_with_p_break_015():
    # pRel as ERR's R: 7/8, 3/8, 0, 1/8; pLook: 1, (1/8)(.85), then * (5/8)(.85), then * 1 * .85
    look2 = 0.125 * 0.85
    look3 = look2 * 0.625 * 0.85
    look4 = look3 * 0.85
    expected = 0.875 + look2 * 0.375 + look4 * 0.125
    s = {**graded("pfound", "pfound_cut.2", "pFound@2", "pFound(p_break=0.5)"), **graded("pfound.p_break=0")}
    assert s["pfound"] == pytest.approx(expected, abs=1e-15)  # 0.920841064453125
    assert s["pfound_cut_2"] == pytest.approx(0.875 + look2 * 0.375, abs=1e-15)
    assert s["pFound@2"] == s["pfound_cut_2"]
    # no break: pLook = prod (1 - pRel): 7/8 + (1/8)(3/8) + (1/8)(5/8)(1)(1/8)
    assert s["pfound_p_break=0"] == pytest.approx(0.875 + 0.125 * 0.375 + 0.125 * 0.625 * 0.125, abs=1e-15)

    look2h, look4h = 0.125 * 0.5, 0.125 * 0.5 * 0.625 * 0.5 * 0.5
    assert s["pFound(p_break=0.5)"] == pytest.approx(0.875 + look2h * 0.375 + look4h * 0.125, abs=1e-15)


def test_dcg_variants():
    s = graded(
        "dcg_cut.2,4",
        "dcg_exp_cut.4",
        "dcg_exp",
        "ndcg_exp",
        "ndcg_exp_cut.2,4",
        "dcg_jk_cut.4",
        "ndcg_jk_cut.4",
        "cg_cut.2,4",
    )
    assert s["dcg_cut_2"] == pytest.approx(3 + 2 / L3)
    assert s["dcg_cut_4"] == pytest.approx(3 + 2 / L3 + 1 / L5)
    assert s["dcg_exp_cut_4"] == pytest.approx(7 + 3 / L3 + 1 / L5)
    assert s["dcg_exp"] == pytest.approx(7 + 3 / L3 + 1 / L5)
    # ideal: labels 3, 2, 1, 1 (d and e)
    ideal_exp = 7 + 3 / L3 + 1 / 2 + 1 / L5
    assert s["ndcg_exp"] == pytest.approx((7 + 3 / L3 + 1 / L5) / ideal_exp)
    assert s["ndcg_exp_cut_2"] == pytest.approx(1.0)
    assert s["ndcg_exp_cut_4"] == pytest.approx((7 + 3 / L3 + 1 / L5) / ideal_exp)
    # Järvelin & Kekäläinen's original form: rel_1 + sum_{i>=2} rel_i / log2(i)
    assert s["dcg_jk_cut_4"] == pytest.approx(3 + 2 + 0 + 1 / 2)
    assert s["ndcg_jk_cut_4"] == pytest.approx(5.5 / (3 + 2 + 1 / L3 + 1 / 2))
    assert s["cg_cut_2"] == 5.0 and s["cg_cut_4"] == 6.0


def test_rbp_label_uses_raw_labels():
    # (1 - .5) * (3 + 2 * .5 + 0 + 1 * .125) = 2.0625
    assert graded("rbp_label.p=0.5")["rbp_label_p=0.5"] == pytest.approx(2.0625)
    assert graded("rbp.95")["rbp.95"] == pytest.approx(0.05 * (3 + 2 * 0.95 + 0.95**3))


def _inst_by_definition(gains, T=1.0, depth=1000):
    g = list(gains) + [0.0] * (depth - len(gains))
    c, s = [], 0.0
    for i, gi in enumerate(g, start=1):
        s += gi
        ti = T - s
        c.append(((i + T + ti - 1) / (i + T + ti)) ** 2)
    w, prod = [], 1.0
    for i in range(depth):
        w.append(prod)
        prod *= c[i]
    return sum(wi * gi for wi, gi in zip(w, g)) / sum(w)


def test_inst_matches_its_definition_over_1000_ranks():
    # gains label / 3: 1, 2/3, 0, 1/3, 0
    s = {**graded("inst"), **graded("inst.T=2"), **graded("inst.max_rel=4,min_rel=1")}
    assert s["inst"] == pytest.approx(_inst_by_definition([1, 2 / 3, 0, 1 / 3, 0]), abs=1e-12)
    assert s["inst_T=2"] == pytest.approx(_inst_by_definition([1, 2 / 3, 0, 1 / 3, 0], T=2), abs=1e-12)
    assert s["inst_max_rel=4,min_rel=1"] == pytest.approx(_inst_by_definition([2 / 3, 1 / 3, 0, 0, 0]), abs=1e-12)


# ---- binary measures: relevant a, b, e; judged non-relevant x, y, z; n has a negative label
BIN_QRELS = [("1", "a", 1), ("1", "b", 1), ("1", "e", 1), ("1", "x", 0), ("1", "y", 0), ("1", "z", 0), ("1", "n", -1)]
BIN_RUN = [("1", "x", 6.0), ("1", "a", 5.0), ("1", "u", 4.0), ("1", "b", 3.0), ("1", "n", 2.0)]


def binary(*specs, **kw):
    return summary(BIN_QRELS, BIN_RUN, list(specs), **kw)


def test_recip_rank_cut():
    s = binary("recip_rank_cut.1,2,5", "RR@1", "mrr@2")
    assert (s["recip_rank_cut_1"], s["recip_rank_cut_2"], s["recip_rank_cut_5"]) == (0.0, 0.5, 0.5)
    assert s["RR@1"] == 0.0 and s["mrr@2"] == 0.5


def test_judged_and_ir_measures_judged():
    # judged (label >= 0) in the top 5: x, a, b -> 3/5; top 10: 3/10
    # ir_measures: any qrels line (n too): 4 of min(k, 5)
    s = binary("judged.5,10", "Judged@5", "Judged@10", "Judged")
    assert (s["judged_5"], s["judged_10"]) == (0.6, 0.3)
    assert (s["Judged@5"], s["Judged@10"], s["Judged"]) == (0.8, 0.8, 0.8)


def test_num_rel_ret_cut_and_F():
    # top 4: x a u b -> 2 relevant; P@4 = 1/2, R@4 = 2/3
    s = {**binary("num_rel_ret_cut.1,4", "F.4", "F(beta=2)@4", "f1@4", "hits@4", "f1"), **binary("F")}
    assert (s["num_rel_ret_cut_1"], s["num_rel_ret_cut_4"], s["hits@4"]) == (0.0, 2.0, 2.0)
    assert s["F_4"] == pytest.approx(4 / 7) and s["f1@4"] == pytest.approx(4 / 7)
    assert s["F(beta=2)@4"] == pytest.approx((5 * 0.5 * 2 / 3) / (4 * 0.5 + 2 / 3))  # 5/8
    # ranx's f1 without a cutoff: the retrieved set (set_F), P = 2/5, R = 2/3; bare F: default cutoffs
    assert s["f1"] == pytest.approx(2 * 0.4 * (2 / 3) / (0.4 + 2 / 3))
    assert s["F_5"] == pytest.approx(s["f1"])


def test_ap_variants():
    # relevant at ranks 2 and 4: precisions 1/2, 2/4; R = 3
    s = binary("map_cut.2", "map_capped_cut.2,4", "map_rel_ret", "AP@2")
    assert s["map_cut_2"] == pytest.approx(0.5 / 3)
    assert s["AP@2"] == s["map_cut_2"]
    assert s["map_capped_cut_2"] == pytest.approx(0.5 / 2)  # min(R, k) = 2
    assert s["map_capped_cut_4"] == pytest.approx(1.0 / 3)
    assert s["map_rel_ret"] == pytest.approx(0.5)  # (1/2 + 1/2) / 2


def test_auc_on_a_small_ranking():
    # pairs (relevant, judged non-relevant): 3 x 3 = 9. Retrieved: x a u b n.
    # a beats y, z (x is above it): 2; b beats y, z: 2; e (not retrieved) ties y and z: 2 x 1/2
    s = binary("auc", "AUC")
    assert s["auc"] == pytest.approx(5 / 9) and s["AUC"] == s["auc"]


def test_auc_topics_without_pairs_have_no_value_and_gauc_weights():
    qrels = [*BIN_QRELS, ("2", "p", 1), ("2", "q", 0), ("3", "r", 1)]
    run = [*BIN_RUN, ("2", "q", 2.0), ("2", "p", 1.0), ("3", "r", 1.0)]
    pq = per_query(qrels, run, ["auc"])
    assert pq[("1", "auc")] == pytest.approx(5 / 9) and pq[("2", "auc")] == 0.0
    assert math.isnan(pq[("3", "auc")])  # no judged non-relevant document
    s = summary(qrels, run, ["auc", "gauc", "GAUC", "GAUC(weight=uniform)"])
    assert s["auc"] == pytest.approx((5 / 9 + 0) / 2)
    assert s["gauc"] == pytest.approx((6 * 5 / 9 + 2 * 0) / 8)  # weights: judged documents 6 and 2
    assert s["GAUC"] == s["gauc"] and s["GAUC(weight=uniform)"] == pytest.approx(s["auc"])


def test_ir_measures_accuracy_is_a_retrieved_only_auc():
    # retrieved: x a u b n; non-relevant among them: x u n (unjudged count); a beats u, n; b beats n
    s = binary("Accuracy", "Accuracy@3")
    assert s["Accuracy"] == pytest.approx(3 / 6)
    assert s["Accuracy@3"] == pytest.approx(1 / 2)  # x a u: a beats u only, 1 of 2


def test_confusion_matrix_and_accuracy_need_N():
    s = binary("TP", "FP", "FN", "TN", "accuracy", num_docs=100)
    # retrieved 5, relevant retrieved 2, R = 3
    assert (s["TP"], s["FP"], s["FN"], s["TN"]) == (2, 3, 1, 100 - 5 - 3 + 2)
    assert s["accuracy"] == pytest.approx((2 + 94) / 100)
    with pytest.raises(MeasureParamError) as e:
        binary("TN")
    assert str(e.value) == "measure 'TN' needs the collection size: give -N NUMBER_OF_DOCUMENTS"


# ---- diversity -------------------------------------------------------------------

SUB = pd.DataFrame(
    [("1", "1", "a", 1), ("1", "2", "a", 1), ("1", "1", "b", 1), ("1", "3", "c", 1), ("1", "2", "c", 0)],
    columns=["qid", "subtopic", "docno", "rel"],
)
DIV_QRELS = [("1", "a", 1), ("1", "b", 1), ("1", "c", 1)]
DIV_RUN = [("1", "b", 3.0), ("1", "a", 2.0), ("1", "c", 1.0)]


def test_alpha_ndcg_and_err_ia_by_hand():
    s = summary(DIV_QRELS, DIV_RUN, ["alpha_ndcg_cut.1,3", "err_ia_cut.3", "alpha_nDCG@3", "ERR_IA@3"], subtopics=SUB)
    # run gains (alpha = 1/2): b {1} -> 1; a {1,2} -> 1/2 + 1; c {3} -> 1
    # greedy ideal: a (2), then c (1) over b (1/2), then b (1/2)
    dcg = 1 + 1.5 / L3 + 1 / 2
    idcg = 2 + 1 / L3 + 0.5 / 2
    assert s["alpha_ndcg_cut_1"] == pytest.approx(1 / 2)
    assert s["alpha_ndcg_cut_3"] == pytest.approx(dcg / idcg)
    assert s["alpha_nDCG@3"] == s["alpha_ndcg_cut_3"]
    # ERR-IA (ndeval): sum gain_i / i over S * sum (1/2)^(i-1) / i, S = 3 subtopics
    assert s["err_ia_cut_3"] == pytest.approx((1 + 1.5 / 2 + 1 / 3) / (3 * (1 + 0.25 + 0.25 / 3)))
    assert s["ERR_IA@3"] == s["err_ia_cut_3"]


def test_other_ndeval_measures_by_hand():
    specs = [
        "alpha_dcg_cut.1,3",
        "nerr_ia_cut.3",
        "nrbp",
        "nnrbp",
        "map_ia",
        "p_ia_cut.2,5",
        "strec_cut.1,2,3",
        "alpha_DCG@3",
        "nERR_IA@3",
        "NRBP",
        "nNRBP",
        "AP_IA",
        "MAP_IA",
        "P_IA@2",
        "StRecall@2",
    ]
    s = summary(DIV_QRELS, DIV_RUN, specs, subtopics=SUB)
    s.update(summary(DIV_QRELS, DIV_RUN, ["nrbp.beta=0.8"], subtopics=SUB))  # (one parameter string per measure)
    # S = 3 subtopics; run b {1}, a {1,2}, c {3}: novelty gains 1, 1/2 + 1, 1; greedy ideal a, c, b: 2, 1, 1/2
    assert s["alpha_dcg_cut_3"] == pytest.approx((1 + 1.5 / L3 + 0.5) / (3 * (1 + 0.5 / L3 + 0.25 / 2)), abs=1e-15)
    assert s["alpha_dcg_cut_1"] == pytest.approx(1 / 3, abs=1e-15)  # (ndeval: 1, not divided by S at k = 1)
    assert s["nerr_ia_cut_3"] == pytest.approx((1 + 1.5 / 2 + 1 / 3) / (2 + 1 / 2 + 0.5 / 3), abs=1e-15)
    # NRBP: (1 - (1 - 1/2)(1/2)) / 3 * (1 + 1.5 (1/2) + 1 (1/4)) = 0.75 / 3 * 2; ideal 2 + 1/2 + 1/8
    assert s["nrbp"] == pytest.approx(0.5, abs=1e-15)
    assert s["nnrbp"] == pytest.approx(2 / 2.625, abs=1e-15)
    assert s["nrbp_beta=0.8"] == pytest.approx((1 - 0.4) / 3 * (1 + 1.5 * 0.8 + 0.64), abs=1e-15)
    # AP per subtopic: 1: b (1/1), a (2/2) over 2 relevant; 2: a at rank 2 (1/2); 3: c at rank 3 (1/3)
    assert s["map_ia"] == pytest.approx((1 + 0.5 + 1 / 3) / 3, abs=1e-15)
    # P-IA: relevant (document, subtopic) pairs in the top k over k * S
    assert (s["p_ia_cut_2"], s["p_ia_cut_5"]) == (pytest.approx(3 / 6, abs=1e-15), pytest.approx(4 / 15, abs=1e-15))
    assert [s[f"strec_cut_{k}"] for k in (1, 2, 3)] == pytest.approx([1 / 3, 2 / 3, 1], abs=1e-15)
    for friendly, trec in [
        ("alpha_DCG@3", "alpha_dcg_cut_3"),
        ("nERR_IA@3", "nerr_ia_cut_3"),
        ("NRBP", "nrbp"),
        ("nNRBP", "nnrbp"),
        ("AP_IA", "map_ia"),
        ("MAP_IA", "map_ia"),
        ("P_IA@2", "p_ia_cut_2"),
        ("StRecall@2", "strec_cut_2"),
    ]:
        assert s[friendly] == s[trec], friendly


def test_ndeval_parameters_are_checked():
    q, r = frames(DIV_QRELS, DIV_RUN)
    with pytest.raises(MeasureParamError) as e:
        evaluate(q, r, ["nrbp.beta=2"], subtopics=SUB)
    assert str(e.value) == "nrbp: beta=2 is not in [0, 1]"
    with pytest.raises(MeasureParamError) as e:
        evaluate(q, r, ["nnrbp.gamma=2"], subtopics=SUB)
    assert str(e.value) == "nnrbp: unknown parameter 'gamma' (known: alpha, beta)"
    with pytest.raises(UsageError) as e:
        evaluate(q, r, ["AP_IA"])
    assert str(e.value) == "measure 'AP_IA' needs subtopic judgements: give subtopics=PATH or a DataFrame"


def test_greedy_ideal_ties_go_to_the_larger_docno():
    # p and q cover subtopics 1 and 2 once each: tie at rank 1, q (larger) first; then p and r tie
    # (r covers 1): both 1/2 ... r > p, so the ideal is q, r, p: gains 1, 1/2, 1/2
    sub = pd.DataFrame(
        [("1", "1", "p", 1), ("1", "2", "q", 1), ("1", "1", "r", 1)], columns=["qid", "subtopic", "docno", "rel"]
    )
    qrels = [("1", "p", 1), ("1", "q", 1), ("1", "r", 1)]
    run = [("1", "p", 3.0), ("1", "q", 2.0), ("1", "r", 1.0)]
    s = summary(qrels, run, ["alpha_ndcg_cut.2"], subtopics=sub)
    # run p, q: gains 1, 1; ideal q, then p or r at 1 (p covers subtopic 1 fresh): ideal gains 1, 1
    assert s["alpha_ndcg_cut_2"] == pytest.approx(1.0)


def test_diversity_needs_subtopics():
    q, r = frames(DIV_QRELS, DIV_RUN)
    with pytest.raises(UsageError) as e:
        evaluate(q, r, ["alpha_nDCG@10"])
    # raised from the API: it names the API's parameter, not --subtopics
    assert str(e.value) == "measure 'alpha_nDCG@10' needs subtopic judgements: give subtopics=PATH or a DataFrame"


def test_subtopics_file_on_the_command_line(cli, tmp_path):
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 1\n1 0 c 1\n")
    (tmp_path / "r").write_text("1 Q0 b 1 3 run\n1 Q0 a 2 2 run\n1 Q0 c 3 1 run\n")
    (tmp_path / "s").write_text("1 1 a 1\n1 2 a 1\n1 1 b 1\n1 3 c 1\n1 2 c 0\n")
    res = cli(["-m", "err_ia_cut.3", "--subtopics", str(tmp_path / "s"), str(tmp_path / "q"), str(tmp_path / "r")])
    assert res.code == 0, res.err
    assert res.out == b"err_ia_cut_3          \tall\t0.5208\n"
    (tmp_path / "s2").write_text("1 1 a 1\n1 1 a 0\n")
    res = cli(["-m", "err_ia_cut.3", "--subtopics", str(tmp_path / "s2"), str(tmp_path / "q"), str(tmp_path / "r")])
    assert res.code == 2
    assert res.err == (
        f"ireval: {tmp_path / 's2'}:2: document 'a' is judged twice for the same topic and subtopic (first at line 1)\n"
    )


# ---- properties ------------------------------------------------------------------

BOUNDED = [
    "ndcg_exp_cut.3,10",
    "ndcg_exp",
    "ndcg_jk_cut.3,10",
    "err_cut.3,10",
    "err",
    "pfound_cut.3,10",
    "pfound",
    "inst",
    "recip_rank_cut.3,10",
    "judged.3,10",
    "F.3,10",
    "map_capped_cut.3,10",
    "map_rel_ret",
    "auc",
    "gauc",
    "accuracy",
    "alpha_ndcg_cut.3,10",
    "err_ia_cut.3,10",
    "Judged@5",
    "Accuracy",
    "insq",
    "nerr10",
    "nerr11",
    "nerr8_cut.3,10",
    "nerr9_cut.3,10",
    "sdcg_cut.3,10",
    "bpm_cut.3,10",
    "alpha_dcg_cut.3,10",
    "nerr_ia_cut.3,10",
    "nrbp",
    "nnrbp",
    "map_ia",
    "p_ia_cut.3,10",
    "strec_cut.3,10",
    "compat",
]
# measures that never grow when a document with no gain is appended at the end of a ranking
NO_PRECISION = [
    "ndcg_exp_cut.3,10",
    "ndcg_exp",
    "dcg_exp_cut.10",
    "dcg_exp",
    "ndcg_jk_cut.10",
    "dcg_cut.10",
    "dcg_jk_cut.10",
    "cg_cut.10",
    "err",
    "err_cut.10",
    "pfound",
    "pfound_cut.10",
    "inst",
    "recip_rank_cut.10",
    "map_capped_cut.10",
    "auc",
    "rbp_label.p=0.8",
    "alpha_ndcg_cut.10",
    "err_ia_cut.10",
    "num_rel_ret_cut.10",
    "TP",
]

topic = st.tuples(
    st.lists(st.integers(-1, 4), min_size=1, max_size=12),  # labels of judged docs j0, j1, ...
    st.lists(st.integers(0, 15), min_size=1, max_size=12, unique=True),  # retrieved doc ids (>= len: unjudged)
    st.lists(st.sampled_from(["1", "2", "3"]), min_size=1, max_size=12),  # subtopic of each judged doc
)


def build(topics):
    qrels, run, sub = [], [], []
    for t, (labels, ret, subs) in enumerate(topics):
        qid = str(t + 1)
        for i, lab in enumerate(labels):
            qrels.append((qid, f"j{i:02d}", lab))
            sub.append((qid, subs[i % len(subs)], f"j{i:02d}", max(lab, 0)))
        for rank, d in enumerate(ret):
            run.append((qid, f"j{d:02d}", float(len(ret) - rank)))
    s = pd.DataFrame(sub, columns=["qid", "subtopic", "docno", "rel"])
    return qrels, run, s


def values(qrels, run, sub, specs):
    return per_query(qrels, run, specs, subtopics=sub, num_docs=1000)


@settings(max_examples=60, deadline=None)
@given(st.lists(topic, min_size=1, max_size=4))
def test_bounded_measures_stay_in_unit_interval(topics):
    qrels, run, sub = build(topics)
    for (q, m), v in values(qrels, run, sub, BOUNDED).items():
        assert math.isnan(v) or -1e-12 <= v <= 1 + 1e-12, (q, m, v)


@settings(max_examples=40, deadline=None)
@given(st.lists(topic, min_size=1, max_size=3), st.randoms(use_true_random=False))
def test_line_order_does_not_matter(topics, rnd):
    qrels, run, sub = build(topics)
    before = values(qrels, run, sub, BOUNDED + NO_PRECISION)
    rnd.shuffle(qrels)
    rnd.shuffle(run)
    sub = sub.sample(frac=1.0, random_state=rnd.randrange(2**31)).reset_index(drop=True)
    after = values(qrels, run, sub, BOUNDED + NO_PRECISION)
    assert before.keys() == after.keys()
    for k, v in before.items():
        assert (math.isnan(v) and math.isnan(after[k])) or v == pytest.approx(after[k], abs=1e-12), k


@settings(max_examples=40, deadline=None)
@given(st.lists(topic, min_size=1, max_size=3))
def test_appending_a_non_relevant_document_never_raises_recall_like_measures(topics):
    qrels, run, sub = build(topics)
    before = values(qrels, run, sub, NO_PRECISION)
    extra = [(str(t + 1), "zz_unjudged", 0.5) for t in range(len(topics))]
    after = values(qrels, run + extra, sub, NO_PRECISION)
    for k, v in before.items():
        if not math.isnan(v):
            assert after[k] <= v + 1e-12, (k, v, after[k])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 4), min_size=1, max_size=10), min_size=1, max_size=3))
def test_a_perfect_ranking_scores_one(label_lists):
    qrels, run = [], []
    for t, labels in enumerate(label_lists):
        qid = str(t + 1)
        for i, lab in enumerate(sorted(labels, reverse=True)):  # ranked best first
            qrels.append((qid, f"d{i:02d}", lab))
            run.append((qid, f"d{i:02d}", float(100 - i)))
    pq = per_query(
        qrels,
        run,
        [
            "ndcg_exp_cut.1,5",
            "ndcg_exp",
            "ndcg_jk_cut.5",
            "map_capped_cut.1,5",
            "map_rel_ret",
            "auc",
            "recip_rank_cut.5",
        ],
    )
    for (q, m), v in pq.items():
        labels = label_lists[int(q) - 1]
        if max(labels) == 0 or (m == "auc" and min(labels) > 0):
            continue  # nothing relevant (all 0 by definition), or no non-relevant pair for AUC
        assert v == pytest.approx(1.0, abs=1e-12), (q, m, v)


def test_unknown_parameter_of_a_pairs_measure():
    with pytest.raises(MeasureParamError) as e:
        graded("err.p=3")
    assert str(e.value) == "err: unknown parameter 'p' (known: gmax, k)"


def test_gmax_is_the_whole_files_highest_label():
    # topic 2's labels go to 3: topic 1 (labels <= 1) still uses g_max = 3
    qrels = [("1", "a", 1), ("2", "b", 3)]
    run = [("1", "a", 1.0), ("2", "b", 1.0)]
    pq = per_query(qrels, run, ["err", "ERR@5"])
    assert pq[("1", "err")] == pytest.approx(1 / 8) and pq[("2", "err")] == pytest.approx(7 / 8)
    assert pq[("1", "ERR@5")] == pytest.approx(1 / 16)


def test_every_new_measure_is_tested_here():
    from pathlib import Path

    from irevalcli.measures.catalog import load
    from irevalcli.measures.registry import TREC_ORDER

    text = Path(__file__).read_text()
    mine = [m for m in load() if m not in TREC_ORDER]
    missing = [m for m in mine if f'"{m}' not in text and f"'{m}" not in text]
    assert not missing
    assert np.all([isinstance(m, str) for m in mine])


# ---- TF-Ranking's, Elasticsearch's and RecBole's definitions (issue 16) --------------------
# TF-Ranking's documented examples (tfr.keras.metrics docstrings): one list with labels
# y_true = [0, 1, 1] and scores y_pred = [3, 1, 2]; and the "ragged" pair of lists
# ([0, 1] scored [2, 1]) and ([1, 2, 0] scored [2, 5, 4]). Every example is labelled.


def tfr_lists(*lists):
    qrels, run = [], []
    for t, (labels, scores) in enumerate(lists):
        for i, (lab, s) in enumerate(zip(labels, scores)):
            qrels.append((str(t + 1), f"d{i}", lab))
            run.append((str(t + 1), f"d{i}", float(s)))
    return qrels, run


TFR_ONE = tfr_lists(([0, 1, 1], [3, 1, 2]))
TFR_RAGGED = tfr_lists(([0, 1], [2, 1]), ([1, 2, 0], [2, 5, 4]))


def test_tf_ranking_precision_divides_by_the_list_length_when_shorter():
    # documented: PrecisionMetric(topn=2) -> 0.5 on both examples
    assert summary(*TFR_ONE, ["PrecisionMetric(topn=2)"])["PrecisionMetric(topn=2)"] == 0.5
    assert summary(*TFR_RAGGED, ["PrecisionMetric@2"])["PrecisionMetric@2"] == 0.5
    # k = 5 over a list of 3: 2 relevant / min(5, 3) = 2/3, where P@5 = 2/5
    s = summary(*TFR_ONE, ["PrecisionMetric@5", "P_ret.5", "P.5", "PrecisionMetric"])
    assert s["PrecisionMetric@5"] == s["P_ret_5"] == pytest.approx(2 / 3) and s["P_5"] == pytest.approx(0.4)
    assert s["PrecisionMetric"] == pytest.approx(2 / 3)  # no topn: the whole list


def test_tf_ranking_arp_weights_topics_by_their_labels():
    # documented: 2.5 (ranks 2 and 3 for the two label-1 documents) and 1.75 =
    # (2 * 1 + (2*1 + 1*3)/3 * 3) / (1 + 3): the summary weights each list by its sum of labels
    assert summary(*TFR_ONE, ["arp"])["arp"] == pytest.approx(2.5)
    assert summary(*TFR_RAGGED, ["ARPMetric"])["ARPMetric"] == pytest.approx(1.75)
    pq = per_query(*TFR_RAGGED, ["arp"])
    assert pq[("1", "arp")] == 2.0 and pq[("2", "arp")] == pytest.approx(5 / 3)


def test_tf_ranking_opa_counts_pairs_with_different_labels():
    # documented: labels [0, 1, 2] scored [3, 1, 2] -> 1/3: of the pairs (1>0), (2>0), (2>1) only
    # (2>1) is in order; ragged: list 1 has 0 of 1 pair, list 2 has 2 of 3 -> (0 + 2) / (1 + 3)
    one = tfr_lists(([0, 1, 2], [3, 1, 2]))
    assert summary(*one, ["OPAMetric"])["OPAMetric"] == pytest.approx(1 / 3)
    assert summary(*one, ["OPAMetric"])["OPAMetric"] == pytest.approx(0.33333334, abs=1e-7)
    assert summary(*TFR_RAGGED, ["opa"])["opa"] == pytest.approx(0.5)
    pq = per_query(*TFR_RAGGED, ["opa"])
    assert pq[("1", "opa")] == 0.0 and pq[("2", "opa")] == pytest.approx(2 / 3)
    # a topic whose retrieved documents all share one label has no pair: no value, no weight
    flat = tfr_lists(([1, 1], [2, 1]), ([0, 1], [1, 2]))
    pq = per_query(*flat, ["opa"])
    assert math.isnan(pq[("1", "opa")]) and summary(*flat, ["opa"])["opa"] == 1.0


def test_bpref_divided_by_R():
    # R = 2 relevant (a, c), N = 3 judged non-relevant (x, y, z); ranking x a y z c (b unjudged
    # at rank 2 is skipped). bpref (trec): a: 1 - 1/min(2,3) = 1/2; c: 1 - min(3,2)/2 = 0 -> 1/4.
    # bpref_R: the same here (min(R, N) = R) ...
    qrels = [("1", "a", 1), ("1", "c", 1), ("1", "x", 0), ("1", "y", 0), ("1", "z", 0)]
    run = [("1", d, float(10 - i)) for i, d in enumerate("xbayzc")]
    s = summary(qrels, run, ["bpref", "bpref_R", "BPrefMetric", "BPrefMetric(use_trec_version=False)"])
    assert s["bpref"] == s["bpref_R"] == s["BPrefMetric"] == pytest.approx(0.25)
    # ... and differs when N < R: R = 3 (a, b, c), N = 1 (x), ranking x a b c:
    # bpref: each relevant has 1 non-relevant above, 1 - 1/min(3,1) = 0 -> 0;
    # bpref_R: 1 - 1/3 each -> (3 * 2/3) / 3 = 2/3
    qrels = [("1", "a", 1), ("1", "b", 1), ("1", "c", 1), ("1", "x", 0)]
    run = [("1", d, float(10 - i)) for i, d in enumerate("xabc")]
    s = summary(qrels, run, ["bpref", "bpref_R", "BPrefMetric(use_trec_version=False)"])
    assert s["bpref"] == 0.0 and s["bpref_R"] == s["BPrefMetric(use_trec_version=False)"] == pytest.approx(2 / 3)


def test_elasticsearch_precision_counts_retrieved_and_optionally_rated_documents():
    # top 4: a (rel 2), u (unrated), b (rel 0), c (rel 1); then d (rel 1)
    qrels = [("1", "a", 2), ("1", "b", 0), ("1", "c", 1), ("1", "d", 1)]
    run = [("1", d, float(10 - i)) for i, d in enumerate("aubcd")]
    s = summary(
        qrels,
        run,
        [
            "PrecisionAtK@4",
            "PrecisionAtK(k=4,ignore_unlabeled=true)",
            "PrecisionAtK(relevant_rating_threshold=2)@4",
            "PrecisionAtK",
            "P_ret.4,10",
        ],
    )
    assert s["PrecisionAtK@4"] == s["P_ret_4"] == pytest.approx(2 / 4)  # a, c relevant of 4 hits
    assert s["PrecisionAtK(k=4,ignore_unlabeled=true)"] == pytest.approx(2 / 3)  # u left out
    assert s["PrecisionAtK(relevant_rating_threshold=2)@4"] == pytest.approx(1 / 4)  # only a
    assert s["PrecisionAtK"] == s["P_ret_10"] == pytest.approx(3 / 5)  # k = 10 over 5 hits
    # a topic whose top k holds no rated document: 0 (Elasticsearch: 0 / 0 -> 0)
    s = summary([("1", "a", 1)], [("1", "u", 2.0), ("1", "a", 1.0)], ["PrecisionAtK(ignore_unlabeled=true)@1"])
    assert s["PrecisionAtK(ignore_unlabeled=true)@1"] == 0.0


def test_gauc_weighted_by_positives_as_recbole():
    # topic 1: R = 1, 2 judged non-relevant, auc 1/2 (a between x and y);
    # topic 2: R = 3, 1 judged non-relevant, auc 1 (all relevant above it)
    qrels = [("1", "x", 0), ("1", "a", 1), ("1", "y", 0), ("2", "b", 1), ("2", "c", 1), ("2", "d", 1), ("2", "z", 0)]
    run = [
        ("1", "x", 3.0),
        ("1", "a", 2.0),
        ("1", "y", 1.0),
        ("2", "b", 4.0),
        ("2", "c", 3.0),
        ("2", "d", 2.0),
        ("2", "z", 1.0),
    ]
    s = summary(qrels, run, ["auc", "gauc", "gauc_pos", "GAUC(weight=positives)", "GAUC(weight=uniform)"])
    assert s["gauc_pos"] == s["GAUC(weight=positives)"] == pytest.approx((1 * 0.5 + 3 * 1.0) / 4)
    assert s["gauc"] == pytest.approx((3 * 0.5 + 4 * 1.0) / 7)  # judged documents 3 and 4
    assert s["GAUC(weight=uniform)"] == s["auc"] == pytest.approx(0.75)


@pytest.mark.parametrize(
    "spec, message",
    [
        ("PrecisionMetric(topn=0)", "PrecisionMetric(topn=0): topn=0 is not a positive integer"),
        ("PrecisionMetric(topn=3)@5", "PrecisionMetric(topn=3)@5: topn=3 and @5 disagree"),
        ("PrecisionAtK(k=3)@5", "PrecisionAtK(k=3)@5: k=3 and @5 disagree"),
        (
            "PrecisionAtK(ignore_unlabeled=yes)",
            "PrecisionAtK(ignore_unlabeled=yes): ignore_unlabeled='yes' is not true or false",
        ),
        ("BPrefMetric(use_trec_version=0)", "BPrefMetric(use_trec_version=0): use_trec_version=0 is not true or false"),
        ("ARPMetric@5", "ARPMetric@5: ARPMetric takes no cutoff"),
    ],
)
def test_peer_spelling_errors(spec, message):
    from irevalcli.measures.names import resolve

    with pytest.raises(MeasureParamError) as e:
        resolve([spec])
    assert str(e.value) == message


# TF-Ranking's diversity examples: one list, 3 documents x 2 subtopics, labels
# [[0, 1], [1, 0], [1, 1]] scored [3, 1, 2]; ragged: ([[0, 0], [1, 0]] scored [2, 1]) and
# ([[1, 1], [0, 2], [1, 0]] scored [2, 5, 4]). A subtopic label 0 is written as a judgement too.


def tfr_subtopic_lists(*lists):
    qrels, run, sub = [], [], []
    for t, (labels, scores) in enumerate(lists):
        for i, (labs, s) in enumerate(zip(labels, scores)):
            qrels.append((str(t + 1), f"d{i}", int(max(labs) >= 1)))
            run.append((str(t + 1), f"d{i}", float(s)))
            sub.extend((str(t + 1), str(j + 1), f"d{i}", lab) for j, lab in enumerate(labs))
    return qrels, run, pd.DataFrame(sub, columns=["qid", "subtopic", "docno", "rel"])


TFR_DIV_ONE = tfr_subtopic_lists(([[0, 1], [1, 0], [1, 1]], [3, 1, 2]))
TFR_DIV_RAGGED = tfr_subtopic_lists(([[0, 0], [1, 0]], [2, 1]), ([[1, 1], [0, 2], [1, 0]], [2, 5, 4]))


def test_tf_ranking_precision_ia():
    # documented: 0.6666667 = (1 + 2 + 1) pairs / (2 subtopics * 3); ragged 0.5833334 = mean of
    # 1 / (1 * 2) (only subtopic 1 has a relevant document) and 4 / (2 * 3)
    qrels, run, sub = TFR_DIV_ONE
    s = summary(qrels, run, ["PrecisionIAMetric", "P_IA_ret.1,3,10"], subtopics=sub)
    assert s["PrecisionIAMetric"] == s["P_IA_ret_3"] == s["P_IA_ret_10"] == pytest.approx(2 / 3)
    assert s["P_IA_ret_1"] == pytest.approx(1 / 2)  # d0 covers subtopic 2: 1 / (2 * 1)
    qrels, run, sub = TFR_DIV_RAGGED
    s = summary(qrels, run, ["PrecisionIAMetric(topn=3)"], subtopics=sub)
    assert s["PrecisionIAMetric(topn=3)"] == pytest.approx((1 / 2 + 4 / 6) / 2)
    assert s["PrecisionIAMetric(topn=3)"] == pytest.approx(0.5833334, abs=1e-6)


def test_tf_ranking_diversity_streamed_as_whole(tmp_path):
    qrels, run, sub = TFR_DIV_RAGGED
    q = tmp_path / "q"
    q.write_text("".join(f"{a} 0 {b} {c}\n" for a, b, c in qrels))
    r = tmp_path / "r"
    r.write_text("".join(f"{a} Q0 {b} 0 {c} x\n" for a, b, c in run))
    st = tmp_path / "s"
    st.write_text("".join(f"{a} {b} {c} {d}\n" for a, b, c, d in sub.itertuples(index=False)))
    specs = ["P_IA_ret.1,2", "alpha_dcg_label_cut.2,3", "AlphaDCGMetric"]
    whole = evaluate(q, r, specs, subtopics=st, stream=False).per_query
    streamed = evaluate(q, r, specs, subtopics=st, stream=True, chunk_bytes=20).per_query
    assert whole.equals(streamed) and len(whole) == 10


def test_tf_ranking_alpha_dcg():
    # documented: 2.1963947 = 1 (d0: subtopic 2, new) + (1 + 0.5) / log2 3 (d2: subtopic 1 new,
    # 2 seen once) + 0.5 / 2 (d1: subtopic 1 seen once); ragged 1.8184297 = mean of 1 / log2 3 and
    # 2 + 1 / log2 3 + (0.5 + 0.25) / 2 (graded: d1's label 2 on subtopic 2 counts twice)
    qrels, run, sub = TFR_DIV_ONE
    s = summary(qrels, run, ["AlphaDCGMetric", "alpha_dcg_label_cut.1,2", "AlphaDCGMetric(alpha=0)@3"], subtopics=sub)
    assert s["AlphaDCGMetric"] == pytest.approx(1 + 1.5 / L3 + 0.25)
    assert s["AlphaDCGMetric"] == pytest.approx(2.1963947, abs=1e-6)
    assert s["alpha_dcg_label_cut_1"] == 1.0 and s["alpha_dcg_label_cut_2"] == pytest.approx(1 + 1.5 / L3)
    assert s["AlphaDCGMetric(alpha=0)@3"] == pytest.approx(1 + 2 / L3 + 1 / 2)  # no novelty discount
    qrels, run, sub = TFR_DIV_RAGGED
    s = summary(qrels, run, ["AlphaDCGMetric"], subtopics=sub)
    assert s["AlphaDCGMetric"] == pytest.approx((1 / L3 + 2 + 1 / L3 + 0.75 / 2) / 2)
    assert s["AlphaDCGMetric"] == pytest.approx(1.8184297, abs=1e-6)


def test_tf_ranking_diversity_needs_subtopics():
    qrels, run, _ = TFR_DIV_ONE
    with pytest.raises(UsageError) as e:
        summary(qrels, run, ["AlphaDCGMetric@5"])
    assert str(e.value) == "measure 'AlphaDCGMetric@5' needs subtopic judgements: give subtopics=PATH or a DataFrame"
