"""Average precision and its relatives: map, gm_map, map_cut, yaap, bpref, gm_bpref, infAP, binG."""

from __future__ import annotations

import numpy as np

from ..registry import Params, measure
from ..table import EvalTable
from .precision import CUTOFFS, _safe_div

MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 1e-5


def _ap_terms(t: EvalTable) -> np.ndarray:
    """Precision at each relevant retrieved rank (0 elsewhere), in rank order."""
    terms = np.zeros(len(t.g), dtype=np.float64)
    rel = t.is_rel
    terms[rel] = t.cum_rel[rel] / t.rank[rel].astype(np.float64)
    return terms


def _ap_sum(t: EvalTable) -> np.ndarray:
    key = "ap_sum"
    if key not in t._cache:
        t._cache[key] = t.seg_sum(_ap_terms(t), where=t.is_rel)
    return t._cache[key]


def _ap(t: EvalTable) -> np.ndarray:
    return np.where(t.rel_ret > 0, _safe_div(_ap_sum(t), t.R), 0.0)


@measure("map", citation="Buckley & Voorhees, SIGIR 2000")
def map_(t: EvalTable, p: Params) -> np.ndarray:
    """Average precision: the sum of the precisions at each relevant retrieved document,
    divided by R (so unretrieved relevant documents count 0)."""
    return _ap(t)


@measure("gm_map", agg="gmean", per_query=False, citation="Robertson, CIKM 2006")
def gm_map(t: EvalTable, p: Params) -> np.ndarray:
    """Geometric mean of average precision over topics, each floored at 1e-5 (summary only)."""
    return _ap(t)


@measure("map_cut", params="long_cutoffs", default=CUTOFFS)
def map_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Average precision over the top k: precisions at relevant documents ranked <= k,
    divided by R."""
    prefix = t.seg_cumsum_exact(_ap_terms(t))
    return np.stack([_safe_div(t.at_depth(prefix, k), t.R) for k in p.values])


@measure("yaap", citation="Robertson, 'On smoothing average precision', ECIR 2012")
def yaap(t: EvalTable, p: Params) -> np.ndarray:
    """Yet another AP: ln((1 + S) / (1 + R - S)) with S the unnormalised AP sum."""
    s = _ap_sum(t)
    return np.log((1.0 + s) / (1.0 + t.R.astype(np.float64) - s))


def _bpref(t: EvalTable) -> np.ndarray:
    judged_nonrel = (t.label >= 0) & (t.label < t.level)
    nr_above = t.seg_cumsum(judged_nonrel.astype(np.int64))
    rel = t.is_rel & (t.label >= 0)
    gi = t.g[rel]
    nr = nr_above[rel]
    R = t.R[gi]
    den = np.minimum(t.NR[gi], R).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.minimum(nr, R).astype(np.float64) / den
    terms = np.where(nr > 0, 1.0 - frac, 1.0)
    total = np.bincount(gi, weights=terms, minlength=t.nq)
    return _safe_div(total, t.R)


@measure("bpref", citation="Buckley & Voorhees, SIGIR 2004")
def bpref(t: EvalTable, p: Params) -> np.ndarray:
    """Binary preference: for each relevant retrieved document, 1 - min(nonrel above, R) /
    min(NR, R), counting only judged documents; divided by R."""
    return _bpref(t)


@measure("infAP", citation="Yilmaz & Aslam, CIKM 2006")
def infAP(t: EvalTable, p: Params) -> np.ndarray:
    """Inferred AP for sampled judgements: qrels value -1 or below marks a pooled but unjudged
    document; unpooled documents are skipped but keep their rank."""
    lab = t.label
    judged_nonrel = (lab >= 0) & (lab < t.level)
    rel = (lab >= 0) & (lab >= t.level)
    nr_c = t.seg_cumsum(judged_nonrel.astype(np.int64))
    pu_c = t.seg_cumsum((lab == -2).astype(np.int64))
    rs_c = t.seg_cumsum(rel.astype(np.int64))
    rows = np.flatnonzero(rel)
    j = (t.rank[rows] - 1).astype(np.float64)
    rs = rs_c[rows]
    nr = nr_c[rows]
    pu = pu_c[rows]
    with np.errstate(invalid="ignore", divide="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rs - 1 + nr + pu) / j) * (
            (rs - 1 + INFAP_EPSILON) / ((rs - 1 + nr) + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, term)
    total = np.bincount(t.g[rows], weights=term, minlength=t.nq)
    return _safe_div(total, t.R)


@measure("gm_bpref", agg="gmean", per_query=False)
def gm_bpref(t: EvalTable, p: Params) -> np.ndarray:
    """Geometric mean of bpref over topics, each floored at 1e-5 (summary only)."""
    return _bpref(t)


@measure("binG")
def binG(t: EvalTable, p: Params) -> np.ndarray:
    """Binary G: the sum over relevant retrieved documents of 1 / log2(2 + non-relevant
    documents above it), divided by R."""
    rel = t.is_rel
    rows = np.flatnonzero(rel)
    nonrel_above = (t.rank[rows] - 1) - (t.cum_rel[rows] - 1)
    terms = 1.0 / np.log2((2 + nonrel_above).astype(np.float64))
    total = np.bincount(t.g[rows], weights=terms, minlength=t.nq)
    return np.where(t.rel_ret > 0, _safe_div(total, t.R), 0.0)
