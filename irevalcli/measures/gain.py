"""Graded-gain measures: G, dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg, ndcg_cut, rbp, rbp_resid.

Gains follow trec_eval: the gain of a document is its raw relevance level unless
``level=gain`` pairs say otherwise (``ndcg.1=3,2=9``), and these measures ignore
``-l``. The gain table of a topic holds the pair levels first, then every level
from 0 to the topic's highest judged level, sorted by gain (stable). The ideal
list repeats each table entry's gain by its judged count, walking down from the
top entry and stopping at the first gain <= 0.

Deliberate difference: trec_eval sorts the table with a comparator that looks
only at the integer part of the difference of two gains, so gains less than 1
apart can stay out of order and the "ideal" list is then not ideal (ndcg above
1). The compatibility checklist lists this as a defect; ireval sorts by value.
With integer gains (the default, and any integer pairs) both orders agree.
"""

from __future__ import annotations

import math
import re
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from ..core.memo import same_order
from ..core.table import EvalTable, distinct, seg_cumsum_exact
from ..errors import MeasureParamError
from . import dcg as dcg_kernel
from ._util import exact_by_cumsum, seg_running_integral, sparse_at_cutoffs
from .precision import CUTOFFS
from .registry import LONG_CUTOFFS, PAIRS, Params, measure
from .spellings import Target, int_cutoff, number_arg, ranx, rel_view, spelling

_VALID_INT = r"^[+-]?[0-9]+$"  # (compiled by re at its first use)


class Gains:
    """A table's gains (:func:`gains`). (A plain class: a dataclass would cost every start-up
    its generated methods, and nothing compares or prints these.)"""

    def __init__(
        self,
        nz: np.ndarray,  # rows whose gain is not 0, ascending
        nz_gain: np.ndarray,  # their gains
        n_rows: int,  # rows of the table
        il_start: np.ndarray,  # offsets of each topic's ideal list (len nq + 1)
        il_gain: np.ndarray,  # the ideal lists, topic-major, best first
        K: np.ndarray,  # ideal list length per topic
        memo: dict | None = None,  # arrays derived from these gains
        # arrays derived from the ideal lists alone (shared by every table with these judgements)
        ideal_memo: dict | None = None,
    ) -> None:
        self.nz, self.nz_gain, self.n_rows = nz, nz_gain, n_rows
        self.il_start, self.il_gain, self.K = il_start, il_gain, K
        self.memo: dict = {} if memo is None else memo
        self.ideal_memo: dict = {} if ideal_memo is None else ideal_memo

    @cached_property
    def row_gain(self) -> np.ndarray:
        """Gain of each ranked row."""
        out = np.zeros(self.n_rows, dtype=np.float64)
        out[self.nz] = self.nz_gain
        return out

    @property
    def il_pos(self) -> np.ndarray:
        topic = np.repeat(np.arange(len(self.K)), self.K)
        return np.arange(len(self.il_gain)) - self.il_start[topic]


class _GainPlan:
    """What :func:`_gains` computes from the judgements alone (``qg``, ``qrel``) and the pairs:
    the same for every run scored against them, so kept across the tables of a call
    (:func:`irevalcli.core.memo.same_order`). Its arrays are read-only. (A plain class: made
    once per judgements, and a dataclass would cost every start-up its generated methods.)"""

    __slots__ = ("K", "NL", "ideal_memo", "il_gain", "il_start", "lookups", "low", "pair_entries")

    def __init__(
        self,
        pair_entries: list[tuple[int, float]],  # the level=gain pairs whose level is an integer
        low: int,  # the lowest level a row's label can have a gain at
        NL: np.ndarray,  # per topic: 1 + its highest judged level (0: none judged)
        lookups: list[tuple[int, np.ndarray, np.ndarray]],  # per NL group: (nl, levels, their gains)
        il_start: np.ndarray,
        il_gain: np.ndarray,
        K: np.ndarray,
    ) -> None:
        self.pair_entries, self.low, self.NL, self.lookups = pair_entries, low, NL, lookups
        self.il_start, self.il_gain, self.K = il_start, il_gain, K
        self.ideal_memo: dict = {}  # arrays derived from the ideal lists alone (the ideal DCG prefix)


def gains(t: EvalTable, pairs: tuple[tuple[str, float], ...], rescale: bool = False) -> Gains:
    """Row gains and ideal lists for ``level=gain`` pairs (cached per pairs)."""
    return t.memo(("gains", pairs, rescale), lambda: _gains(t, pairs, rescale))


def _gains(t: EvalTable, pairs: tuple[tuple[str, float], ...], rescale: bool) -> Gains:
    # the gain tables and ideal lists: computed once for every table with these judgements
    plan = same_order(
        _gains,
        ("gain_plan", pairs, rescale, t.nq),
        (t.qg, t.qrel),
        lambda: _gain_plan(t.qg, t.qrel, t.nq, pairs, rescale),
    )
    # only rows whose label can be a level of the gain table can have a gain: judged
    # rows, unless a pair names a negative level
    if not plan.pair_entries:
        # no gain table: a level's gain is its value (rescaled, if at all, from a minimum of
        # level 0's gain 0), so label 0 rows have gain 0 and are dropped below anyway
        cand = np.flatnonzero(t.label > 0)
    else:
        cand = t.judged_rows if plan.low >= 0 else np.flatnonzero(t.label >= plan.low)
    row_group = plan.NL[t.g[cand]]
    cand_gain = np.zeros(len(cand), dtype=np.float64)
    for nl, keys, vals in plan.lookups:  # row gains, topics group by group
        in_group = np.flatnonzero(row_group == nl)
        if len(in_group):
            lab = t.label[cand[in_group]]
            at = np.minimum(np.searchsorted(keys, lab), len(keys) - 1)
            cand_gain[in_group] = np.where(keys[at] == lab, vals[at], 0.0)
    keep = cand_gain != 0
    return Gains(
        nz=cand[keep],
        nz_gain=cand_gain[keep],
        n_rows=len(t.g),
        il_start=plan.il_start,
        il_gain=plan.il_gain,
        K=plan.K,
        ideal_memo=plan.ideal_memo,
    )


def _gain_plan(  # noqa: C901  debt: the gains grammar's cases
    qg: np.ndarray, qrel: np.ndarray, nq: int, pairs: tuple[tuple[str, float], ...], rescale: bool
) -> _GainPlan:
    judged = qrel >= 0
    jg, jl = qg[judged], qrel[judged]
    levels = distinct(jl)  # judged levels present anywhere (>= 0)
    col = np.searchsorted(levels, jl)
    counts = np.bincount(jg * len(levels) + col, minlength=nq * len(levels)).astype(np.int64).reshape(nq, len(levels))
    NL = np.zeros(nq, dtype=np.int64)
    if len(levels):
        top = np.where(counts > 0, levels[None, :], -1).max(axis=1)
        NL = np.where(top >= 0, top + 1, 0)

    pair_entries = [(int(name), float(value)) for name, value in pairs if re.match(_VALID_INT, name)]
    low = min([0] + [lv for lv, _ in pair_entries])
    lookups: list[tuple[int, np.ndarray, np.ndarray]] = []
    il_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (topic per element, gain)
    for nl in distinct(NL).tolist():
        topics = np.flatnonzero(nl == NL)
        # entries: [level, gain, level whose judged count it takes (or None)]
        entries: list[list[Any]] = [[lv, g, None] for lv, g in pair_entries]
        by_level: dict[int, list[Any]] = {}
        for e in entries:
            by_level.setdefault(e[0], e)
        # trec_eval adds every level 0..NL-1; a level nobody judged adds nothing to an ideal
        # list or a document's gain, so only level 0 and the judged levels are walked
        # (a label of 10**7 must not mean a loop of 10**7)
        for v in sorted({0, *levels[levels < nl].tolist()}) if nl > 0 else []:
            first = by_level.get(v)
            if first is not None:
                if first[2] is None:
                    first[2] = v
            else:
                entry = [v, float(v), v]
                entries.append(entry)
                by_level[v] = entry
        ordered = sorted(entries, key=lambda e: e[1])  # stable: ties keep insertion order
        if rescale and ordered:
            mn = min(e[1] for e in ordered)
            mx = max(e[1] for e in ordered)
            if mn < 0 or mx > 1:
                with np.errstate(invalid="ignore", divide="ignore"):
                    ordered = [[e[0], float(np.float64(e[1] - mn) / np.float64(mx - mn)), e[2]] for e in ordered]
        lookup: dict[int, float] = {}
        for e in ordered:
            lookup.setdefault(e[0], e[1])
        if lookup:  # the gain of a row's label, for this group's topics
            keys = np.array(sorted(lookup), dtype=np.int64)
            lookups.append((nl, keys, np.array([lookup[k] for k in keys.tolist()], dtype=np.float64)))
        # ideal list: walk down from the top entry while gains are positive
        walk = []
        for e in reversed(ordered):
            if e[1] <= 0:
                break
            walk.append(e)
        if walk:
            wg = np.array([e[1] for e in walk], dtype=np.float64)
            wc = np.zeros((len(topics), len(walk)), dtype=np.int64)
            for k, e in enumerate(walk):
                if e[2] is not None:
                    c = np.searchsorted(levels, e[2])
                    if c < len(levels) and levels[c] == e[2]:
                        wc[:, k] = counts[topics, c]
            flat = wc.ravel()
            il_parts.append((np.repeat(np.repeat(topics, len(walk)), flat), np.repeat(np.tile(wg, len(topics)), flat)))
    if il_parts:
        it = np.concatenate([p[0] for p in il_parts])
        ig = np.concatenate([p[1] for p in il_parts])
        order = np.argsort(it, kind="stable")
        it, ig = it[order], ig[order]
    else:
        it = np.zeros(0, dtype=np.int64)
        ig = np.zeros(0, dtype=np.float64)
    K = np.bincount(it, minlength=nq).astype(np.int64)
    il_start = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(K, out=il_start[1:])
    for a in (NL, ig, K, il_start, *(x for _, k, v in lookups for x in (k, v))):
        a.setflags(write=False)  # shared by the tables of every run
    return _GainPlan(pair_entries, low, NL, lookups, il_start, ig, K)


def _pairs(p: Params) -> tuple[tuple[str, float], ...]:
    return tuple(p.values)


def _dcg_running(t: EvalTable, G: Gains) -> tuple[np.ndarray, np.ndarray]:
    """The running DCG within each topic (``t.sparse_running`` over the rows of ``G.nz``)."""
    if "dcg_running" not in G.memo:
        G.memo["dcg_running"] = dcg_kernel.running(t, G.nz, G.nz_gain)
    return G.memo["dcg_running"]


def _ideal_topic(G: Gains) -> np.ndarray:
    return np.repeat(np.arange(len(G.K)), G.K)


def _dcg(t: EvalTable, G: Gains) -> np.ndarray:
    return dcg_kernel.total(t, G.nz, G.nz_gain)


def _idcg(G: Gains) -> np.ndarray:
    return dcg_kernel.ideal_total(G.il_gain, G.il_pos, G.K)


def _ratio(num: np.ndarray, den: np.ndarray, otherwise: np.ndarray | float = 0.0) -> np.ndarray:
    out = np.array(np.broadcast_to(otherwise, num.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


@measure("G", params=PAIRS, citation="Kekäläinen & Järvelin")
def G_(t: EvalTable, p: Params) -> np.ndarray:
    """Normalised cumulative gain with a cost model: each retrieved document's gain divided by
    log2(2 + cumulative ideal cost - cumulative gain), over the sum of the ideal gains."""
    G = gains(t, _pairs(p))
    nz = G.nz
    # running gain at the rows with a gain (the other rows add 0); integer gains (the
    # default levels) by one cumsum, exactly as the segmented sum
    if exact_by_cumsum(G.nz_gain):
        sr = seg_running_integral(G.nz_gain, np.searchsorted(nz, t.starts))
    else:
        sr = t.sparse_at_rows(t.sparse_running(nz, G.nz_gain), nz)
    sc = _cost_running(t, G, nz)
    terms = G.nz_gain / np.log2((2 + sc) - sr)
    rg = np.bincount(t.g[nz], weights=terms, minlength=t.nq)
    si = np.bincount(_ideal_topic(G), weights=G.il_gain, minlength=t.nq)
    return _ratio(rg, si)


def _cost_running(t: EvalTable, G: Gains, rows: np.ndarray) -> np.ndarray:
    """G's running cost read at ``rows``: the cost of rank i is the ideal gain at i when
    it is >= 1, else 1 (and 1 past the ideal list), summed down the ranking.

    Within the ideal list it is the ideal list's own running cost; below it the sum
    only adds 1.0s, which is exact while the sum is an integer below 2**53, so it is
    the running cost at the end of the ideal list plus the number of ranks past it.
    Otherwise (fractional gains) every row's cost is summed.
    """
    gi = t.g[rows]
    pos = t.rank_at(rows) - 1
    K = G.K[gi]
    il_cost = np.where(G.il_gain >= 1.0, G.il_gain, 1.0)
    ic = (
        seg_running_integral(il_cost, G.il_start) if exact_by_cumsum(il_cost) else seg_cumsum_exact(il_cost, G.il_start)
    )
    out = np.empty(len(rows), dtype=np.float64)
    inside = pos < K
    out[inside] = ic[G.il_start[gi[inside]] + pos[inside]]
    below = ~inside
    base = np.zeros(np.count_nonzero(below), dtype=np.float64)
    has_il = K[below] > 0
    base[has_il] = ic[G.il_start[gi[below][has_il]] + K[below][has_il] - 1]
    if (np.floor(base) == base).all() and (np.abs(base) < 2.0**52).all() and len(t.g) < 2**52:
        out[below] = base + (pos[below] - K[below] + 1)
        return out
    cost = np.ones(len(t.g), dtype=np.float64)
    allpos = t.rank - 1
    within = allpos < G.K[t.g]
    cost[within] = il_cost[G.il_start[t.g[within]] + allpos[within]]
    return t.seg_cumsum_exact(cost)[rows]


@measure("dcg", params=PAIRS, citation="Järvelin & Kekäläinen, TOIS 2002")
def dcg(t: EvalTable, p: Params) -> np.ndarray:
    """Discounted cumulative gain over all retrieved documents: sum of gain / log2(rank + 1)."""
    return _dcg(t, gains(t, _pairs(p)))


spelling(
    "dcg",
    style="ranx",
    build=ranx("dcg", "dcg_cut"),
    roots=("dcg", "dcg_cut"),
    definition="DCG at k, gain = label, discount log2(i + 1)",
)


@measure("ideal_dcg", params=PAIRS, direction="none")
def ideal_dcg(t: EvalTable, p: Params) -> np.ndarray:
    """DCG of the ideal ranking: every judged document with a positive gain, best first."""
    return _idcg(gains(t, _pairs(p)))


@measure("ndcg", params=PAIRS, citation="Järvelin & Kekäläinen, TOIS 2002")
def ndcg(t: EvalTable, p: Params) -> np.ndarray:
    """Normalised DCG: DCG over all retrieved documents divided by the DCG of the whole ideal
    ranking; gains are the raw relevance levels unless given as level=gain pairs."""
    G = gains(t, _pairs(p))
    return _ratio(_dcg(t, G), _idcg(G))


def _gains_map(value: Any, spec: str) -> tuple[tuple[int, int], ...]:
    """ir_measures' gains={label: gain, ...}: non-negative integers (pytrec_eval's qrels are ints)."""
    if not isinstance(value, dict) or not value:
        raise MeasureParamError(f"{spec}: gains must be a mapping of labels to gains, e.g. gains={{0:1,1:4}}")
    for k, v in value.items():
        for x in (k, v):
            if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                raise MeasureParamError(f"{spec}: gains {k!r}:{v!r}: labels and gains must be non-negative integers")
    return tuple(sorted(value.items()))


def _im_ndcg(args: dict[str, Any], at: str | None, spec: str) -> Target:
    dcg = args.get("dcg", "log2")
    k = int_cutoff(at, spec)
    view = rel_view({"judged_only": args.get("judged_only")}, spec)
    if "gains" in args:
        # ir_measures relabels the qrels (label -> gains.get(label, label)) before pytrec_eval's ndcg
        if dcg != "log2":
            raise MeasureParamError(f"{spec}: gains apply to dcg=log2 only (ir_measures has no exp-log2 with gains)")
        gview = ("gains", _gains_map(args["gains"], spec))
        views = [gview] + ([view["view"], *list(view["views"])] if view else [])
        view = {"view": views[0], "views": tuple(views[1:])}
    if dcg == "log2":
        return Target("ndcg", (), **view) if k is None else Target("ndcg_cut", (k,), **view)
    if dcg == "exp-log2":
        return Target("ndcg_exp", (), **view) if k is None else Target("ndcg_exp_cut", (k,), **view)
    raise MeasureParamError(f"{spec}: dcg={dcg!r} is not one of 'log2', 'exp-log2'")


spelling(
    "nDCG",
    "NDCG",
    style="ir_measures",
    build=_im_ndcg,
    roots=("ndcg", "ndcg_cut", "ndcg_exp", "ndcg_exp_cut"),
    args=("dcg", "gains", "judged_only"),
    definition="nDCG; dcg=log2 (default) is trec_eval's ndcg/ndcg_cut (gain = label), dcg=exp-log2 is gdeval's "
    "(gain 2^label - 1); gains={0:1,1:4} relabels the judgements first (label -> gain, others kept), "
    "as ir_measures does before pytrec_eval's ndcg",
)

spelling(
    "ndcg",
    style="ranx",
    build=ranx("ndcg", "ndcg_cut"),
    roots=("ndcg", "ndcg_cut"),
    definition="nDCG at k, gain = label (trec_eval's ndcg_cut)",
)


def _ideal_prefix(G: Gains) -> np.ndarray:
    """The running DCG of the ideal lists, computed once per gains (ndcg_rel, Rndcg, ndcg_cut)."""
    if "ideal_prefix" not in G.ideal_memo:  # (a function of the ideal lists alone)
        prefix = dcg_kernel.ideal_prefix(G.il_gain, G.il_pos, G.il_start)
        prefix.setflags(write=False)
        G.ideal_memo["ideal_prefix"] = prefix
    return G.ideal_memo["ideal_prefix"]


def _ideal_at(G: Gains, prefix: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Ideal DCG over the first ``depth`` ideal positions (depth clipped to K)."""
    return dcg_kernel.ideal_at(prefix, G.il_start, G.K, depth)


@measure("ndcg_rel", params=PAIRS)
def ndcg_rel(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG averaged over the relevant documents: at each retrieved document with positive
    gain, DCG so far over the ideal DCG at that depth; unretrieved ones add DCG at the end
    over the full ideal DCG; divided by the ideal list's length."""
    G = gains(t, _pairs(p))
    nq = t.nq
    dcg_pref = _dcg_running(t, G)
    ipref = _ideal_prefix(G)
    pos_rows = G.nz[G.nz_gain > 0]
    pg = t.g[pos_rows]
    # ideal DCG accumulated up to min(i + 1, K) positions when row i is reached
    depth = np.minimum(t.rank_at(pos_rows), G.K[pg])
    idcg_i = np.zeros(len(pos_rows), dtype=np.float64)
    ok = depth >= 1
    idcg_i[ok] = ipref[G.il_start[pg[ok]] + depth[ok] - 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.bincount(pg, weights=t.sparse_at_rows(dcg_pref, pos_rows) / idcg_i, minlength=nq)
        cnt = np.bincount(pg, minlength=nq)
        dcg_n = t.sparse_at_depth(dcg_pref, t.n)
        idcg_k = _ideal_at(G, ipref, G.K)
        s = s + ((G.K - cnt).astype(np.float64) * dcg_n) / idcg_k
        value = s / G.K.astype(np.float64)
    return np.where(s > 0.0, value, 0.0)


@measure("Rndcg", params=PAIRS)
def Rndcg(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG averaged over the depths where the ideal gain changes (and once past the end of
    the ideal list when the run is longer); 0 when R = 0."""
    G = gains(t, _pairs(p))
    nq = t.nq
    dcg_pref = _dcg_running(t, G)
    ipref = _ideal_prefix(G)
    it = _ideal_topic(G)
    pos = G.il_pos
    last = pos == G.K[it] - 1
    nxt = np.concatenate((G.il_gain[1:], [0.0]))
    changed = last | (nxt != G.il_gain)
    rec = np.flatnonzero(changed & (ipref > 0))
    rt = it[rec]
    j = pos[rec] + 1
    dcg_j = t.sparse_read(dcg_pref, rt, np.minimum(j, t.n[rt]))
    r1 = dcg_j / ipref[rec]
    tail = np.flatnonzero(t.n >= G.K + 2)
    idcg_k = _ideal_at(G, ipref, G.K)
    dcg_n = t.sparse_at_depth(dcg_pref, t.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = dcg_n[tail] / idcg_k[tail]
        total = np.bincount(np.concatenate((rt, tail)), weights=np.concatenate((r1, r2)), minlength=nq)
        count = np.bincount(np.concatenate((rt, tail)), minlength=nq)
        value = total / count.astype(np.float64)
    return np.where(t.R == 0, 0.0, value)


@measure("ndcg_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, TOIS 2002")
def ndcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG at k: DCG of the top k over the DCG of the ideal top k, gains = relevance levels
    (level=gain pairs do not apply)."""
    G = gains(t, ())
    dcg_pref = _dcg_running(t, G)
    ipref = _ideal_prefix(G)
    d = sparse_at_cutoffs(t, dcg_pref, p.values)  # one row per cutoff
    depth = np.minimum(np.asarray(p.values, dtype=np.int64).reshape(-1, 1), G.K[None, :])
    i = np.zeros(depth.shape, dtype=np.float64)  # the ideal DCG at min(k, K); 0 at depth 0
    ok = depth >= 1
    i[ok] = ipref[np.broadcast_to(G.il_start[:-1], depth.shape)[ok] + depth[ok] - 1]
    return _ratio(d, i, d)


def _persistence(p: Params) -> float:
    value = 0.9
    for name, v in p.values:
        if name == "p":
            value = v
    return value


def _powers(p: float, n: int) -> np.ndarray:
    """1, p, p*p, ... by repeated multiplication (as trec_eval), n + 1 values."""
    seq = np.full(n + 1, p, dtype=np.float64)
    seq[0] = 1.0
    return np.cumprod(seq)


@measure("rbp", params=PAIRS, versions=("10.0",), citation="Moffat & Zobel, TOIS 2008")
def rbp(t: EvalTable, p: Params) -> np.ndarray:
    """Rank-biased precision (1 - p) * sum of gain_i * p^(i-1), p = 0.9 unless given as p=...;
    gains outside [0, 1] are rescaled to (g - min) / (max - min)."""
    persist = _persistence(p)
    G = gains(t, _pairs(p), rescale=True)
    powers = _powers(persist, int(t.n.max()) if t.nq else 0)
    nz = G.nz
    terms = G.nz_gain * powers[t.rank_at(nz) - 1]
    return (1.0 - persist) * np.bincount(t.g[nz], weights=terms, minlength=t.nq)


def _im_rbp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    p = number_arg(args, "p", 0.8, spec)
    if not 0.0 <= p < 1.0:  # trec_eval's own rbp.p= takes any number (and so does ireval's, for identity)
        raise MeasureParamError(f"{spec}: p={p:g} is not in [0, 1)")
    k = int_cutoff(at, spec)
    top = (("top", k),) if k is not None else ()
    if "rel" in args:
        rel = args["rel"]
        if not isinstance(rel, int) or isinstance(rel, bool):
            raise MeasureParamError(f"{spec}: rel={rel!r} is not an integer")
        views = (("binary", rel), *top)
    else:
        views = top
    return Target("rbp", (("p", p),), view=views[0] if views else None, views=views[1:])


spelling(
    "RBP",
    style="ir_measures",
    build=_im_rbp,
    roots=("rbp",),
    args=("p", "rel"),
    definition="rank-biased precision with p = 0.8 by default (trec_eval's rbp defaults to 0.9); with rel=N the "
    "gains are binary at level N (cwl_eval), without it graded as trec_eval's rbp",
)


@measure(
    "rbp_resid",
    params=PAIRS,
    placeholder="zero_named",
    versions=("10.0",),
    citation="Moffat & Zobel, TOIS 2008",
    direction="lower",
    unanswered=1.0,
)
def rbp_resid(t: EvalTable, p: Params) -> np.ndarray:
    """RBP residual: the most RBP could still grow if every unjudged retrieved document and
    everything below the run were relevant; 0 when every retrieved document is judged."""
    persist = _persistence(p)
    nmax = int(t.n.max()) if t.nq else 0
    powers = _powers(persist, nmax)
    judged = t.judged_rows
    jc = np.bincount(t.g[judged], minlength=t.nq)
    u = t.n - jc  # unjudged retrieved
    s = _unjudged_power_sums(t, persist, powers, judged, jc)
    return np.where(u > 0, powers[t.n] + (1.0 - persist) * s, 0.0)


_SKIP_TABLE_MAX = 2048  # deepest ranking whose skip-one table (depth**2 floats) is kept
# the table (depth**2 floats, built once per process) is used when the rows of the topics
# with one judged row are at least depth**2 / this; fewer rows are cheaper summed one by one
# (a DL-size run: 6 ms of a 1000 x 1000 table for a handful of topics, or none)
_SKIP_TABLE_ROWS_SHARE = 2


@lru_cache(maxsize=4)
def _skip_one_sums(persist: float, depth: int) -> np.ndarray:
    """[j, i]: p^0 + ... + p^i added in order, leaving out p^j (one table per process)."""
    powers = _powers(persist, depth)[:depth]
    table = np.tile(powers, (depth, 1))
    np.fill_diagonal(table, 0.0)  # x + 0.0 == x: the running sum is never -0.0
    np.add.accumulate(table, axis=1, out=table)
    table.setflags(write=False)
    return table


def _unjudged_power_sums(
    t: EvalTable, persist: float, powers: np.ndarray, judged: np.ndarray, jc: np.ndarray
) -> np.ndarray:
    """Per topic, p^(rank - 1) summed in rank order over the unjudged rows (as trec_eval).

    A topic with no judged row retrieved sums p^0 .. p^(n-1): a prefix of one running
    sum; with one judged row at rank j + 1, a skip-one sum read from a table shared by
    every chunk (when those topics have enough rows to pay for it); the other topics are
    summed row by row. Every way adds the same terms in the same order.
    """
    nq = t.nq
    s = np.zeros(nq, dtype=np.float64)
    n = t.n
    nmax = len(powers) - 1
    if nq == 0 or nmax == 0:
        return s
    none = (jc == 0) & (n > 0)
    s[none] = np.add.accumulate(powers[:nmax])[n[none] - 1]
    one = jc == 1
    table_pays = int(n[one].sum()) * _SKIP_TABLE_ROWS_SHARE >= nmax * nmax
    if nmax <= _SKIP_TABLE_MAX and not math.isnan(persist) and table_pays:
        jt = t.g[judged]
        first = np.concatenate(([True], jt[1:] != jt[:-1])) if len(jt) else np.zeros(0, dtype=bool)
        single = one[jt] & first
        q = jt[single]
        s[q] = _skip_one_sums(persist, nmax)[t.rank_at(judged[single]) - 1, n[q] - 1]
        rest = np.flatnonzero(jc >= 2)
    else:
        rest = np.flatnonzero(jc >= 1)
    if len(rest):
        rows = np.flatnonzero(t.label < 0)  # the unjudged rows, ascending: rank order per topic
        g = t.g[rows]
        if len(rest) < nq:
            in_rest = np.zeros(nq, dtype=bool)
            in_rest[rest] = True
            keep = in_rest[g]
            rows, g = rows[keep], g[keep]
        s[rest] = np.bincount(g, weights=powers[rows - t.starts[g]], minlength=nq)[rest]
    return s
