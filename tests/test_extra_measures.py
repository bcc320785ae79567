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
    s = graded("dcg_cut.2,4", "dcg_exp_cut.4", "dcg_exp", "ndcg_exp", "ndcg_exp_cut.2,4", "dcg_jk_cut.4",
               "ndcg_jk_cut.4", "cg_cut.2,4")
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
BIN_QRELS = [("1", "a", 1), ("1", "b", 1), ("1", "e", 1), ("1", "x", 0), ("1", "y", 0), ("1", "z", 0),
             ("1", "n", -1)]
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
    qrels = BIN_QRELS + [("2", "p", 1), ("2", "q", 0), ("3", "r", 1)]
    run = BIN_RUN + [("2", "q", 2.0), ("2", "p", 1.0), ("3", "r", 1.0)]
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


def test_greedy_ideal_ties_go_to_the_larger_docno():
    # p and q cover subtopics 1 and 2 once each: tie at rank 1, q (larger) first; then p and r tie
    # (r covers 1): both 1/2 ... r > p, so the ideal is q, r, p: gains 1, 1/2, 1/2
    sub = pd.DataFrame([("1", "1", "p", 1), ("1", "2", "q", 1), ("1", "1", "r", 1)],
                       columns=["qid", "subtopic", "docno", "rel"])
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
    assert res.err == (f"ireval: {tmp_path / 's2'}:2: document 'a' is judged twice for the same topic and subtopic "
                       "(first at line 1)\n")


# ---- properties ------------------------------------------------------------------

BOUNDED = ["ndcg_exp_cut.3,10", "ndcg_exp", "ndcg_jk_cut.3,10", "err_cut.3,10", "err", "pfound_cut.3,10", "pfound",
           "inst", "recip_rank_cut.3,10", "judged.3,10", "F.3,10", "map_capped_cut.3,10", "map_rel_ret", "auc",
           "gauc", "accuracy", "alpha_ndcg_cut.3,10", "err_ia_cut.3,10", "Judged@5", "Accuracy"]
# measures that never grow when a document with no gain is appended at the end of a ranking
NO_PRECISION = ["ndcg_exp_cut.3,10", "ndcg_exp", "dcg_exp_cut.10", "dcg_exp", "ndcg_jk_cut.10", "dcg_cut.10",
                "dcg_jk_cut.10", "cg_cut.10", "err", "err_cut.10", "pfound", "pfound_cut.10", "inst",
                "recip_rank_cut.10", "map_capped_cut.10", "auc", "rbp_label.p=0.8", "alpha_ndcg_cut.10",
                "err_ia_cut.10", "num_rel_ret_cut.10", "TP"]

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
    pq = per_query(qrels, run, ["ndcg_exp_cut.1,5", "ndcg_exp", "ndcg_jk_cut.5", "map_capped_cut.1,5",
                                "map_rel_ret", "auc", "recip_rank_cut.5"])
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

    from irevalcli.registry import TREC_ORDER, load

    text = Path(__file__).read_text()
    mine = [m for m in load() if m not in TREC_ORDER]
    missing = [m for m in mine if f'"{m}' not in text and f"'{m}" not in text]
    assert not missing
    assert np.all([isinstance(m, str) for m in mine])
