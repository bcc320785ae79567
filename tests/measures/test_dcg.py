"""The one DCG kernel (measures/dcg.py) that trec_eval's gain-table ndcg family (gain.py)
and ireval's DCG variants (graded.py, diversity.py) share (issue 15)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from irevalcli import evaluate
from irevalcli.measures import dcg


def test_discount_forms():
    rank = np.array([1, 2, 3, 4, 8])
    assert dcg.discount(rank, "log").tolist() == [1.0, math.log2(3), 2.0, math.log2(5), math.log2(9)]
    assert dcg.discount(rank, "jk").tolist() == [1.0, 1.0, math.log2(3), 2.0, 3.0]
    assert dcg.DISCOUNTS == ("log", "jk")


def test_ideal_prefix_and_depth_lookup():
    # two topics: ideal gains [3, 1] and [] and [2]
    gain = np.array([3.0, 1.0, 2.0])
    pos = np.array([0, 1, 0])
    start = np.array([0, 2, 2, 3])
    K = np.array([2, 0, 1])
    prefix = dcg.ideal_prefix(gain, pos, start)
    assert prefix.tolist() == [3.0, 3.0 + 1.0 / math.log2(3), 2.0]
    # depth clipped to K, 0 at depth 0 and for an empty ideal list
    assert dcg.ideal_at(prefix, start, K, 1).tolist() == [3.0, 0.0, 2.0]
    assert dcg.ideal_at(prefix, start, K, np.array([5, 5, 0])).tolist() == [prefix[1], 0.0, 0.0]
    assert dcg.ideal_total(gain, pos, K).tolist() == [prefix[1], 0.0, 2.0]


def test_both_families_agree_where_they_overlap():
    """dcg_cut (graded.py: label gain, log discount) and ndcg_cut (gain.py: trec_eval's gain
    table, whose default gains are the labels) read the same kernel: with labels >= 0 the
    DCG that ndcg_cut divides is dcg_cut, bit for bit."""
    q = pd.DataFrame(
        [("1", "a", 3), ("1", "b", 1), ("1", "c", 2), ("1", "d", 0), ("2", "x", 1)], columns=["qid", "docno", "rel"]
    )
    r = pd.DataFrame(
        [
            ("1", "d", 4.0),
            ("1", "b", 3.0),
            ("1", "z", 2.5),
            ("1", "a", 2.0),
            ("1", "c", 1.0),
            ("2", "y", 1.0),
            ("2", "x", 0.5),
        ],
        columns=["qid", "docno", "score"],
    )
    pq = evaluate(q, r, ["dcg_cut.1,2,3,5", "ndcg_cut.1,2,3,5"]).per_query
    v = {(a, b): x for a, b, x in zip(pq["qid"], pq["measure"], pq["value"])}
    ideal1 = [3.0, 3.0 + 2.0 / math.log2(3), 3.0 + 2.0 / math.log2(3) + 1.0 / 2.0]
    for k, idcg in zip((1, 2, 3, 5), (ideal1[0], ideal1[1], ideal1[2], ideal1[2])):
        assert v[("1", f"ndcg_cut_{k}")] == v[("1", f"dcg_cut_{k}")] / idcg
    assert v[("1", "dcg_cut_2")] == 1.0 / math.log2(3)
    assert v[("2", "dcg_cut_2")] == 1.0 / math.log2(3)
    assert v[("2", "ndcg_cut_1")] == 0.0
