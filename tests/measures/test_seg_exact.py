"""Exact segmented running sums and products, and the sparse readings built on them.

trec_eval adds floats one by one in rank order; these primitives must give the same
bits. The reference here is a plain Python loop (Python floats are IEEE doubles, so
``x + y`` is the same operation as C's).
"""

from __future__ import annotations

import itertools
import math
import random

import numpy as np
import pytest

from irevalcli.core.table import (
    EvalOptions,
    EvalTable,
    _seg_accumulate_dense,
    seg_accumulate,
    seg_cumsum_exact,
    seg_read_sparse,
)
from irevalcli.measures import gain as gain_mod
from irevalcli.measures.registry import REGISTRY, Params

NEG0 = -0.0


def bits(a) -> list[int]:
    """The bit patterns (NaNs made canonical: their payload is not compared)."""
    a = np.asarray(a, dtype=np.float64)
    b = a.view(np.int64).copy()
    b[np.isnan(a)] = 0x7FF8000000000000
    return b.tolist()


def loop(values, starts, op) -> list[float]:
    """The C loop: a segment's first row as-is, then op(previous, value)."""
    out = []
    for s, e in itertools.pairwise(starts):
        acc = None
        for v in values[s:e]:
            acc = v if acc is None else op(acc, v)
            out.append(acc)
    return out


def add(a, b):
    return a + b


def mul(a, b):
    return a * b


def check(values, starts, ufunc=np.add):
    values = np.asarray(values, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    want = loop(values.tolist(), starts.tolist(), add if ufunc is np.add else mul)
    with np.errstate(all="ignore"):  # inf - inf, 1e308 * 3: as the C loop, no exception
        got = seg_accumulate(values, starts, ufunc)
        dense = _seg_accumulate_dense(values, starts, ufunc)
    assert bits(got) == bits(want), (values.tolist(), got.tolist(), want)
    assert bits(dense) == bits(want)
    return got


# ---- hand-checkable sums ---------------------------------------------------


def test_sum_sequential_not_pairwise():
    got = check([0.1, 0.0, 0.2, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 9])
    assert got[2] == 0.1 + 0.2 == 0.30000000000000004
    assert got.tolist()[2:] == [0.30000000000000004] * 7


def test_sum_sparse_rows_before_first_value_are_zero():
    got = check([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0, 1.0], [0, 6, 12])
    assert got.tolist() == [0.0] * 7 + [2.5, 2.5, 2.5, 2.5, 3.5]
    assert not np.signbit(got).any()


def test_sum_negative_zero():
    # -0.0 + 0.0 is +0.0, -0.0 + -0.0 is -0.0: the sparse path must not skip those
    got = check([NEG0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 8])
    assert np.signbit(got[0]) and not np.signbit(got[1:]).any()
    got = check([NEG0, NEG0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 2, 9])
    assert np.signbit(got[:2]).all() and not np.signbit(got[2:]).any()
    got = check([NEG0], [0, 1])
    assert np.signbit(got[0])
    got = check([0.0, NEG0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 8])
    assert not np.signbit(got).any()


def test_sum_nan_and_inf():
    got = check([0.0, np.nan, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0], [0, 4, 9])
    assert got[0] == 0.0 and np.isnan(got[1:4]).all() and got[4:6].tolist() == [0.0, 0.0]
    assert got[6:].tolist() == [1.0, 1.0, 1.0]
    got = check([np.inf, 0.0, 0.0, -np.inf, 0.0, 0.0, 0.0, 0.0, 0.0], [0, 9])
    assert got[:3].tolist() == [np.inf] * 3 and np.isnan(got[3:]).all()
    check([0.0, 0.0, 0.0, 0.0, -np.inf, 0.0, 0.0, 0.0, 0.0], [0, 9])


def test_sum_empty_and_single_row_segments():
    check([], [0])
    check([], [0, 0, 0])
    got = check([3.0], [0, 0, 1, 1])
    assert got.tolist() == [3.0]
    got = check([0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 0.0, 0.0, 0.0], [0, 0, 1, 1, 2, 2, 9, 9])
    assert got.tolist() == [0.0, 0.0, 0.0, 0.0, 0.0, 5.0, 5.0, 5.0, 5.0]


def test_sum_dense_equal_and_unequal_lengths():
    check([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 3, 6])  # equal lengths: reshaped
    check([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 1, 6])  # buckets
    check([0.1, 0.2, 0.3, 0.4, 0.5, 0.6], [0, 2, 2, 6])  # an empty segment between


# ---- hand-checkable products -----------------------------------------------


def test_product_skips_ones():
    got = check([1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0, 1.0, 0.5, 1.0], [0, 5, 10], np.multiply)
    assert got.tolist() == [1.0, 1.0, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0, 0.5, 0.5]


def test_product_zero_signs_nan_inf():
    check([1.0, NEG0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, -1.0], [0, 9], np.multiply)
    check([1.0, 1.0, np.nan, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0], [0, 3, 9], np.multiply)
    check([1.0, np.inf, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0], [0, 9], np.multiply)
    check([NEG0], [0, 1], np.multiply)
    check([], [0, 0], np.multiply)


# ---- random comparisons with the loop ------------------------------------------

SPECIAL = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0, NEG0, np.nan, np.inf, -np.inf, 0.1, -0.1, 1e308, 3.0]


@pytest.mark.parametrize("seed", range(40))
def test_random_against_loop(seed):
    rng = random.Random(seed)
    nseg = rng.randint(0, 12)
    lens = [rng.choice([0, 1, 1, 2, 5, 9, 30]) for _ in range(nseg)]
    starts = np.concatenate(([0], np.cumsum(lens, dtype=np.int64))).astype(np.int64)
    density = rng.choice([0.02, 0.1, 0.5, 1.0])
    pool = SPECIAL if rng.random() < 0.3 else [0.1, 0.2, 0.7, 1.5, -0.3]
    fill = rng.choice([0.0, 1.0])
    values = [rng.choice(pool) if rng.random() < density else fill for _ in range(int(starts[-1]))]
    check(values, starts, np.add)
    check(values, starts, np.multiply)


# ---- reading a sparse running value ------------------------------------------


def test_read_sparse_by_hand():
    # segments [0, 4) and [4, 10); listed rows 1, 2 and 7 with running values
    rows = np.array([1, 2, 7])
    running = np.array([0.5, 0.75, 2.0])
    starts = np.array([0, 4, 10])
    seg = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    depth = np.array([0, 1, 2, 4, 1, 3, 4, 6])
    got = seg_read_sparse(rows, running, starts, seg, depth, ident=0.0, empty=-1.0)
    assert got.tolist() == [-1.0, 0.0, 0.5, 0.75, 0.0, 0.0, 2.0, 2.0]
    assert seg_read_sparse(rows[:0], running[:0], starts, seg, depth).tolist() == [0.0] * 8


def table(rng: random.Random, nq: int = 6, level: int = 1) -> EvalTable:
    n = [rng.choice([0, 1, 3, 8, 20]) for _ in range(nq)]
    starts = np.concatenate(([0], np.cumsum(n))).astype(np.int64)
    g = np.repeat(np.arange(nq), n)
    label = np.array([rng.choice([-1, -1, -1, -1, -2, 0, 1, 2, 3]) for _ in range(len(g))], dtype=np.int64)
    qg = np.repeat(np.arange(nq), 4)
    qrel = np.array([rng.choice([0, 1, 2, 3]) for _ in range(len(qg))], dtype=np.int64)
    return EvalTable(
        qids=[str(i) for i in range(nq)],
        g=g,
        label=label,
        starts=starts,
        qg=qg,
        qrel=qrel,
        missing=np.zeros(nq, dtype=bool),
        opts=EvalOptions(rel_level=level),
    )


@pytest.mark.parametrize("seed", range(30))
def test_table_sparse_helpers_match_dense(seed):
    rng = random.Random(seed)
    t = table(rng, level=rng.choice([1, 2, 0, -1]))
    rows = np.flatnonzero(np.array([rng.random() < 0.3 for _ in range(len(t.g))], dtype=bool))
    vals = np.array([rng.choice([0.1, 0.25, 1.0 / 3, 2.0, NEG0, np.nan]) for _ in rows], dtype=np.float64)
    col = np.zeros(len(t.g))
    col[rows] = vals
    dense = seg_cumsum_exact(col, t.starts)
    sr = t.sparse_running(rows, vals)
    assert bits(t.sparse_at_rows(sr, rows)) == bits(dense[rows])
    for k in (0, 1, 2, 5, 100):
        assert bits(t.sparse_at_depth(sr, k)) == bits(t.at_depth(dense, k))
        assert (
            t.count_at(rows, k).tolist()
            == t.at_depth(t.seg_cumsum(np.isin(np.arange(len(t.g)), rows).astype(np.int64)), k).tolist()
        )
    ks = np.array([rng.randint(-1, 25) for _ in range(t.nq)])
    assert bits(t.sparse_at_depth(sr, ks, empty=7.0)) == bits(t.at_depth(dense, ks, empty=7.0))
    mask = np.isin(np.arange(len(t.g)), rows)
    assert t.count_upto(rows, rows).tolist() == t.seg_cumsum(mask.astype(np.int64))[rows].tolist()
    assert t.rel_rows.tolist() == np.flatnonzero(t.is_rel).tolist()
    assert t.judged_rows.tolist() == np.flatnonzero(t.label >= 0).tolist()
    assert t.rank_at(np.arange(len(t.g))).tolist() == t.rank.tolist()
    assert t.rel_at(3).tolist() == t.at_depth(t.cum_rel, 3).tolist()
    assert t.rel_ret.tolist() == t.seg_count(t.is_rel & (t.label >= 0)).tolist()


# ---- measures with a sparse shortcut, against the dense computation -----------------


def dense_rbp_resid(t: EvalTable, persist: float) -> np.ndarray:
    powers = gain_mod._powers(persist, int(t.n.max()) if t.nq else 0)
    unj = t.label < 0
    s = t.seg_sum(powers[t.rank - 1], where=unj)
    return np.where(t.seg_count(unj) > 0, powers[t.n] + (1.0 - persist) * s, 0.0)


def dense_G(t: EvalTable, pairs) -> np.ndarray:
    G = gain_mod.gains(t, pairs)
    sr = seg_cumsum_exact(G.row_gain, t.starts)
    cost = np.ones(len(t.g))
    pos = t.rank - 1
    inside = pos < G.K[t.g]
    ilv = G.il_gain[G.il_start[t.g[inside]] + pos[inside]]
    cost[inside] = np.where(ilv >= 1.0, ilv, 1.0)
    sc = seg_cumsum_exact(cost, t.starts)
    nz = G.row_gain != 0
    terms = np.zeros(len(t.g))
    with np.errstate(invalid="ignore", divide="ignore"):
        terms[nz] = G.row_gain[nz] / np.log2((2 + sc[nz]) - sr[nz])
    rg = t.seg_sum(terms, where=nz)
    si = np.bincount(np.repeat(np.arange(t.nq), G.K), weights=G.il_gain, minlength=t.nq)
    return gain_mod._ratio(rg, si)


def dense_dcg_at(t: EvalTable, pairs, k) -> np.ndarray:
    G = gain_mod.gains(t, pairs)
    terms = np.zeros(len(t.g))
    nz = G.row_gain != 0
    terms[nz] = G.row_gain[nz] / np.log2((t.rank[nz] + 1).astype(np.float64))
    return t.at_depth(seg_cumsum_exact(terms, t.starts), k)


PAIRS = [(), (("1", 1.5), ("2", 2.25)), (("0", -0.0), ("2", 0.5)), (("-1", 1.0), ("3", 7.0)), (("1", 3.0),)]


@pytest.mark.parametrize("seed", range(25))
def test_sparse_measures_match_dense(seed):
    rng = random.Random(seed)
    t = table(rng, nq=rng.randint(1, 9), level=rng.choice([1, 2, 0, -1]))
    for persist in (0.9, 0.5, 0.0):
        got = REGISTRY["rbp_resid"].func(t.derive(), Params((("p", persist),), None))
        assert bits(got) == bits(dense_rbp_resid(t, persist))
    for pairs in PAIRS:
        fresh = t.derive()
        with np.errstate(invalid="ignore", divide="ignore"):
            got = REGISTRY["G"].func(fresh, Params(pairs, None))
        assert bits(got) == bits(dense_G(t.derive(), pairs))
        G = gain_mod.gains(fresh, pairs)
        sr = gain_mod._dcg_running(fresh, G)
        for k in (1, 2, 5, 10, 1000):
            assert bits(fresh.sparse_at_depth(sr, k)) == bits(dense_dcg_at(t.derive(), pairs, k))


def test_rbp_resid_skip_table_by_hand():
    # one judged row at rank 2 of 3: 1 + p^2 (p^1 is left out), added in order
    table_ = gain_mod._skip_one_sums(0.5, 3)
    assert table_[1].tolist() == [1.0, 1.0, 1.25]
    assert table_[0].tolist() == [0.0, 0.5, 0.75]
    assert table_[2].tolist() == [1.0, 1.5, 1.5]
    assert math.isclose(table_[1, 2], 1.25)


@pytest.mark.parametrize("seed", range(25))
def test_rbp_resid_with_skip_table(seed, monkeypatch):
    monkeypatch.setattr(gain_mod, "_SKIP_TABLE_ROWS_SHARE", 10**9)  # the table whenever one topic has one judged row
    rng = random.Random(seed)
    t = table(rng, nq=rng.randint(1, 9), level=rng.choice([1, 2, 0, -1]))
    for persist in (0.9, 0.5, 0.0):
        got = REGISTRY["rbp_resid"].func(t.derive(), Params((("p", persist),), None))
        assert bits(got) == bits(dense_rbp_resid(t, persist))


@pytest.mark.parametrize("seed", range(5))
def test_rbp_resid_without_skip_table(seed, monkeypatch):
    monkeypatch.setattr(gain_mod, "_SKIP_TABLE_MAX", 0)  # every topic with a judged row summed row by row
    t = table(random.Random(seed), nq=7)
    got = REGISTRY["rbp_resid"].func(t, Params((("p", 0.8),), None))
    assert bits(got) == bits(dense_rbp_resid(t, 0.8))
