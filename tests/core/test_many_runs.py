"""Issue 22 item 1 (many runs in one call): the blocks-matrix ranking, the binary-search
label lookup of the sparse case, and resolve's cache of requests."""

from __future__ import annotations

import random

import numpy as np
import pytest

from irevalcli.core.table import _lookup_labels, rank_order
from irevalcli.io.arrow import binary_array
from irevalcli.measures import registry
from irevalcli.measures.names import resolve


def _grouped(seed: int) -> list[tuple[int, float, bytes, int, int]]:
    """Rows (topic, score, docno, rank, line) grouped by topic, blocks and rows shuffled,
    with tied scores, -inf and +inf among them."""
    rng = random.Random(seed)
    blocks = []
    for t in rng.sample(range(50), rng.randint(1, 9)):
        docs = rng.sample(range(300), rng.randint(1, 40))
        block = [
            (
                t,
                rng.choice([1.0, 2.0, 2.0, -np.inf, np.inf, -0.0, 0.0, rng.random()]),
                f"d{d}".encode(),
                rng.randint(1, 4),
            )
            for d in docs
        ]
        rng.shuffle(block)
        blocks.append(block)
    rows = [r for b in blocks for r in b]
    return [(t, s, d, k, i + 1) for i, (t, s, d, k) in enumerate(rows)]


def _columns(rows: list[tuple[int, float, bytes, int, int]]):
    topic = np.array([r[0] for r in rows], dtype=np.int64)
    score = np.array([r[1] for r in rows])
    return topic, score, binary_array([r[2] for r in rows]), np.array([r[3] for r in rows], dtype=np.int64)


def _docno_desc(d: bytes) -> list[int]:
    return [-b for b in d] + [1]


@pytest.mark.parametrize("seed", range(12))
def test_grouped_runs_rank_in_trec_eval_order_by_every_tie_rule(seed):
    """Rows grouped by topic (as in every run file) are ranked by one sort of a matrix of
    blocks whose equal scores come in any order: every tie rule still orders them as before."""
    rows = _grouped(seed)
    topic, score, docno, rank = _columns(rows)
    lineno = np.array([r[4] for r in rows], dtype=np.int64)
    idx = range(len(rows))
    by_docno = sorted(idx, key=lambda i: (rows[i][0], -rows[i][1], _docno_desc(rows[i][2])))
    by_input = sorted(idx, key=lambda i: (rows[i][0], -rows[i][1], rows[i][4]))
    by_rank = sorted(idx, key=lambda i: (rows[i][0], rows[i][3], -rows[i][1], _docno_desc(rows[i][2])))
    assert rank_order(topic, score, docno).tolist() == by_docno
    assert rank_order(topic, score, docno, "input", lineno).tolist() == by_input
    assert rank_order(topic, score, docno, "rank", lineno, rank).tolist() == by_rank


def test_labels_of_a_run_whose_docnos_are_mostly_unjudged():
    """Fewer than half the rows have a docno judged for some topic: those are looked up by
    a binary search of the sorted keys; a negative judgement labels -2, no judgement -1."""
    ndoc = 1000
    qkey = np.array([0 * ndoc + 5, 0 * ndoc + 7, 1 * ndoc + 5, 2 * ndoc + 999], dtype=np.int64)
    qrel = np.array([2, -1, 0, 1], dtype=np.int64)
    dcode = np.array([5, 7, 5, 999, 1, 2, 3, 4, 6, 8, 9, 10], dtype=np.int64)
    g = np.array([0, 0, 2, 2, 0, 0, 0, 1, 1, 1, 2, 2], dtype=np.int64)
    label = _lookup_labels(g * ndoc + dcode, dcode, ndoc, qkey, qrel)
    assert label.tolist() == [2, -2, -1, 1, -1, -1, -1, -1, -1, -1, -1, -1]


def test_resolve_gives_each_caller_its_own_list():
    first = resolve(["map", "P.5"])
    assert [r.labels for r in first] == [["map"], ["P_5"]]
    first.append(first[0])
    assert [r.labels for r in resolve(["map", "P.5"])] == [["map"], ["P_5"]]


def test_resolve_sees_a_replaced_measure(monkeypatch):
    """The requests are kept while the registry holds the same measures: a measure replaced
    (as a test or a plugin may do) is resolved anew."""
    before = resolve(["map"])[0].measure
    new = registry.REGISTRY["map"].replaced(doc="Replaced.")
    monkeypatch.setitem(registry.REGISTRY, "map", new)
    assert resolve(["map"])[0].measure is new
    monkeypatch.undo()
    assert resolve(["map"])[0].measure is before
