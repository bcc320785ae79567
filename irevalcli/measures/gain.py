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

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..registry import Params, measure
from ..table import EvalTable, seg_cumsum_exact
from .precision import CUTOFFS

_VALID_INT = re.compile(r"^[+-]?[0-9]+$")


@dataclass
class Gains:
    row_gain: np.ndarray  # gain of each ranked row
    il_start: np.ndarray  # offsets of each topic's ideal list (len nq + 1)
    il_gain: np.ndarray  # the ideal lists, topic-major, best first
    K: np.ndarray  # ideal list length per topic

    @property
    def il_pos(self) -> np.ndarray:
        topic = np.repeat(np.arange(len(self.K)), self.K)
        return np.arange(len(self.il_gain)) - self.il_start[topic]


def gains(t: EvalTable, pairs: tuple[tuple[str, float], ...], rescale: bool = False) -> Gains:
    """Row gains and ideal lists for ``level=gain`` pairs (cached per pairs)."""
    key = ("gains", pairs, rescale)
    if key in t._cache:
        return t._cache[key]
    nq = t.nq
    judged = t.judged
    jg, jl = t.qg[judged], t.qrel[judged]
    levels = np.unique(jl)  # judged levels present anywhere (>= 0)
    col = np.searchsorted(levels, jl)
    counts = np.zeros((nq, len(levels)), dtype=np.int64)
    np.add.at(counts, (jg, col), 1)
    NL = np.zeros(nq, dtype=np.int64)
    if len(levels):
        top = np.where(counts > 0, levels[None, :], -1).max(axis=1)
        NL = np.where(top >= 0, top + 1, 0)

    pair_entries = [(int(name), float(value)) for name, value in pairs if _VALID_INT.match(name)]
    row_gain = np.zeros(len(t.g), dtype=np.float64)
    row_group = NL[t.g]
    il_parts: list[tuple[np.ndarray, np.ndarray]] = []  # (topic per element, gain)
    for nl in np.unique(NL).tolist():
        topics = np.flatnonzero(NL == nl)
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
        # row gains for this group's topics
        rows = np.flatnonzero(row_group == nl)
        if len(rows) and lookup:
            keys = np.array(sorted(lookup), dtype=np.int64)
            vals = np.array([lookup[k] for k in keys.tolist()], dtype=np.float64)
            lab = t.label[rows]
            at = np.minimum(np.searchsorted(keys, lab), len(keys) - 1)
            row_gain[rows] = np.where(keys[at] == lab, vals[at], 0.0)
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
    out = Gains(row_gain=row_gain, il_start=il_start, il_gain=ig, K=K)
    t._cache[key] = out
    return out


def _pairs(p: Params) -> tuple[tuple[str, float], ...]:
    return tuple(p.values)


def _discount(pos0: np.ndarray) -> np.ndarray:
    """log2(i + 2) for 0-based positions."""
    return np.log2((pos0 + 2).astype(np.float64))


def _dcg_terms(t: EvalTable, G: Gains) -> np.ndarray:
    terms = np.zeros(len(t.g), dtype=np.float64)
    nz = G.row_gain != 0
    terms[nz] = G.row_gain[nz] / _discount(t.rank[nz] - 1)
    return terms


def _ideal_terms(G: Gains) -> np.ndarray:
    return G.il_gain / _discount(G.il_pos)


def _ideal_topic(G: Gains) -> np.ndarray:
    return np.repeat(np.arange(len(G.K)), G.K)


def _dcg(t: EvalTable, G: Gains) -> np.ndarray:
    nz = G.row_gain != 0
    return t.seg_sum(_dcg_terms(t, G), where=nz)


def _idcg(G: Gains) -> np.ndarray:
    return np.bincount(_ideal_topic(G), weights=_ideal_terms(G), minlength=len(G.K))


def _ratio(num: np.ndarray, den: np.ndarray, otherwise: np.ndarray | float = 0.0) -> np.ndarray:
    out = np.array(np.broadcast_to(otherwise, num.shape), dtype=np.float64)
    np.divide(num, den, out=out, where=den > 0)
    return out


@measure("G", params="pairs", citation="Kekäläinen & Järvelin")
def G_(t: EvalTable, p: Params) -> np.ndarray:
    """Normalised cumulative gain with a cost model: each retrieved document's gain divided by
    log2(2 + cumulative ideal cost - cumulative gain), over the sum of the ideal gains."""
    G = gains(t, _pairs(p))
    sr = t.seg_cumsum_exact(G.row_gain)
    # cost of rank i: the ideal gain at i when it is >= 1, else 1
    cost = np.ones(len(t.g), dtype=np.float64)
    pos = t.rank - 1
    inside = pos < G.K[t.g]
    idx = G.il_start[t.g[inside]] + pos[inside]
    ilv = G.il_gain[idx] if len(idx) else np.zeros(0)
    cost[inside] = np.where(ilv >= 1.0, ilv, 1.0)
    sc = t.seg_cumsum_exact(cost)
    nz = G.row_gain != 0
    terms = np.zeros(len(t.g), dtype=np.float64)
    terms[nz] = G.row_gain[nz] / np.log2((2 + sc[nz]) - sr[nz])
    rg = t.seg_sum(terms, where=nz)
    si = np.bincount(_ideal_topic(G), weights=G.il_gain, minlength=t.nq)
    return _ratio(rg, si)


@measure("dcg", params="pairs", citation="Järvelin & Kekäläinen, TOIS 2002")
def dcg(t: EvalTable, p: Params) -> np.ndarray:
    """Discounted cumulative gain over all retrieved documents: sum of gain / log2(rank + 1)."""
    return _dcg(t, gains(t, _pairs(p)))


@measure("ideal_dcg", params="pairs")
def ideal_dcg(t: EvalTable, p: Params) -> np.ndarray:
    """DCG of the ideal ranking: every judged document with a positive gain, best first."""
    return _idcg(gains(t, _pairs(p)))


@measure("ndcg", params="pairs", citation="Järvelin & Kekäläinen, TOIS 2002")
def ndcg(t: EvalTable, p: Params) -> np.ndarray:
    """Normalised DCG: DCG over all retrieved documents divided by the DCG of the whole ideal
    ranking; gains are the raw relevance levels unless given as level=gain pairs."""
    G = gains(t, _pairs(p))
    return _ratio(_dcg(t, G), _idcg(G))


def _ideal_prefix(G: Gains) -> np.ndarray:
    return seg_cumsum_exact(_ideal_terms(G), G.il_start)


def _ideal_at(G: Gains, prefix: np.ndarray, depth: np.ndarray) -> np.ndarray:
    """Ideal DCG over the first ``depth`` ideal positions (depth clipped to K)."""
    d = np.minimum(depth, G.K)
    out = np.zeros(len(G.K), dtype=np.float64)
    ok = d >= 1
    out[ok] = prefix[G.il_start[:-1][ok] + d[ok] - 1]
    return out


@measure("ndcg_rel", params="pairs")
def ndcg_rel(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG averaged over the relevant documents: at each retrieved document with positive
    gain, DCG so far over the ideal DCG at that depth; unretrieved ones add DCG at the end
    over the full ideal DCG; divided by the ideal list's length."""
    G = gains(t, _pairs(p))
    nq = t.nq
    dcg_pref = t.seg_cumsum_exact(_dcg_terms(t, G))
    ipref = _ideal_prefix(G)
    pos_rows = np.flatnonzero(G.row_gain > 0)
    pg = t.g[pos_rows]
    # ideal DCG accumulated up to min(i + 1, K) positions when row i is reached
    depth = np.minimum(t.rank[pos_rows], G.K[pg])
    idcg_i = np.zeros(len(pos_rows), dtype=np.float64)
    ok = depth >= 1
    idcg_i[ok] = ipref[G.il_start[pg[ok]] + depth[ok] - 1]
    with np.errstate(invalid="ignore", divide="ignore"):
        s = np.bincount(pg, weights=dcg_pref[pos_rows] / idcg_i, minlength=nq)
        cnt = np.bincount(pg, minlength=nq)
        dcg_n = t.at_depth(dcg_pref, t.n)
        idcg_k = _ideal_at(G, ipref, G.K)
        s = s + ((G.K - cnt).astype(np.float64) * dcg_n) / idcg_k
        value = s / G.K.astype(np.float64)
    return np.where(s > 0.0, value, 0.0)


@measure("Rndcg", params="pairs")
def Rndcg(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG averaged over the depths where the ideal gain changes (and once past the end of
    the ideal list when the run is longer); 0 when R = 0."""
    G = gains(t, _pairs(p))
    nq = t.nq
    dcg_pref = t.seg_cumsum_exact(_dcg_terms(t, G))
    ipref = _ideal_prefix(G)
    it = _ideal_topic(G)
    pos = G.il_pos
    last = pos == G.K[it] - 1
    nxt = np.concatenate((G.il_gain[1:], [0.0]))
    changed = last | (nxt != G.il_gain)
    rec = np.flatnonzero(changed & (ipref > 0))
    rt = it[rec]
    j = pos[rec] + 1
    dcg_j = np.zeros(len(rec), dtype=np.float64)
    dj = np.minimum(j, t.n[rt])
    okj = dj >= 1
    dcg_j[okj] = dcg_pref[t.starts[rt[okj]] + dj[okj] - 1]
    r1 = dcg_j / ipref[rec]
    tail = np.flatnonzero(t.n >= G.K + 2)
    idcg_k = _ideal_at(G, ipref, G.K)
    dcg_n = t.at_depth(dcg_pref, t.n)
    with np.errstate(invalid="ignore", divide="ignore"):
        r2 = dcg_n[tail] / idcg_k[tail]
        total = np.bincount(np.concatenate((rt, tail)), weights=np.concatenate((r1, r2)), minlength=nq)
        count = np.bincount(np.concatenate((rt, tail)), minlength=nq)
        value = total / count.astype(np.float64)
    return np.where(t.R == 0, 0.0, value)


@measure("ndcg_cut", params="long_cutoffs", default=CUTOFFS, citation="Järvelin & Kekäläinen, TOIS 2002")
def ndcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG at k: DCG of the top k over the DCG of the ideal top k, gains = relevance levels
    (level=gain pairs do not apply)."""
    G = gains(t, ())
    dcg_pref = t.seg_cumsum_exact(_dcg_terms(t, G))
    ipref = _ideal_prefix(G)
    out = []
    for k in p.values:
        d = t.at_depth(dcg_pref, k)
        i = _ideal_at(G, ipref, np.full(t.nq, k, dtype=np.int64))
        out.append(_ratio(d, i, d))
    return np.stack(out)


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


@measure("rbp", params="pairs", citation="Moffat & Zobel, TOIS 2008")
def rbp(t: EvalTable, p: Params) -> np.ndarray:
    """Rank-biased precision (1 - p) * sum of gain_i * p^(i-1), p = 0.9 unless given as p=...;
    gains outside [0, 1] are rescaled to (g - min) / (max - min)."""
    persist = _persistence(p)
    G = gains(t, _pairs(p), rescale=True)
    powers = _powers(persist, int(t.n.max()) if t.nq else 0)
    nz = G.row_gain != 0
    terms = G.row_gain * powers[t.rank - 1]
    return (1.0 - persist) * t.seg_sum(terms, where=nz)


@measure("rbp_resid", params="pairs", citation="Moffat & Zobel, TOIS 2008")
def rbp_resid(t: EvalTable, p: Params) -> np.ndarray:
    """RBP residual: the most RBP could still grow if every unjudged retrieved document and
    everything below the run were relevant; 0 when every retrieved document is judged."""
    persist = _persistence(p)
    powers = _powers(persist, int(t.n.max()) if t.nq else 0)
    unj = t.label < 0
    s = t.seg_sum(powers[t.rank - 1], where=unj)
    u = t.seg_count(unj)
    return np.where(u > 0, powers[t.n] + (1.0 - persist) * s, 0.0)
