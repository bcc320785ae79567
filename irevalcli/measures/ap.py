"""Average precision and its relatives: map, gm_map, map_cut, yaap, bpref, gm_bpref, infAP, binG."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable
from ._util import safe_div, sparse_at_cutoffs
from .precision import CUTOFFS
from .registry import GEO_MEAN, LONG_CUTOFFS, Params, measure
from .spellings import REL, Target, bool_arg, ranx, simple, spelling

MIN_GEO_MEAN = 1e-5
INFAP_EPSILON = 1e-5


def _ap_terms(t: EvalTable) -> np.ndarray:
    """Precision at each relevant retrieved rank, one per row of ``t.rel_rows`` (every other
    row's term is 0), in rank order."""

    def terms() -> np.ndarray:
        rows = t.rel_rows
        return t.count_upto(rows, rows) / t.rank_at(rows).astype(np.float64)

    return t.memo("ap_terms", terms)


def _ap_sum(t: EvalTable) -> np.ndarray:
    return t.memo("ap_sum", lambda: np.bincount(t.g[t.rel_rows], weights=_ap_terms(t), minlength=t.nq))


def any_at_level(t: EvalTable) -> np.ndarray:
    """Per topic, whether any retrieved document is at or above the level: trec_eval's map and
    binG are 0 unless one is. It is ``rel_ret > 0`` for levels >= 0; below 0 an unjudged
    document (-c's placeholder included) counts as well."""
    if t.level >= 0:
        return t.rel_ret > 0
    return np.bincount(t.g[t.rel_rows], minlength=t.nq) > 0


def _ap(t: EvalTable) -> np.ndarray:
    return np.where(any_at_level(t), safe_div(_ap_sum(t), t.R), 0.0)


@measure("map", citation="Buckley & Voorhees, SIGIR 2000")
def map_(t: EvalTable, p: Params) -> np.ndarray:
    """Average precision: the sum of the precisions at each relevant retrieved document,
    divided by R (so unretrieved relevant documents count 0)."""
    return _ap(t)


spelling(
    "AP",
    "MAP",
    style="ir_measures",
    build=simple("map", cut_root="map_cut"),
    roots=("map", "map_cut"),
    args=REL,
    definition="average precision; AP@k divides by R (trec_eval's map_cut), not by min(R, k); MAP is ir_measures' "
    "alias of AP (lower-case map is trec_eval's)",
)

spelling(
    "map",
    style="ranx",
    build=ranx("map", "map_cut"),
    roots=("map", "map_cut"),
    definition="average precision over the top k, divided by R (trec_eval's map_cut)",
)


@measure("gm_map", agg=GEO_MEAN, per_query=False, citation="Robertson, CIKM 2006")
def gm_map(t: EvalTable, p: Params) -> np.ndarray:
    """Geometric mean of average precision over topics, each floored at 1e-5 (summary only)."""
    return _ap(t)


@measure("map_cut", params=LONG_CUTOFFS, default=CUTOFFS)
def map_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Average precision over the top k: precisions at relevant documents ranked <= k,
    divided by R."""
    prefix = t.sparse_running(t.rel_rows, _ap_terms(t))
    return safe_div(sparse_at_cutoffs(t, prefix, p.values), t.R)


@measure("yaap", citation="Robertson, 'On smoothing average precision', ECIR 2012")
def yaap(t: EvalTable, p: Params) -> np.ndarray:
    """Yet another AP: ln((1 + S) / (1 + R - S)) with S the unnormalised AP sum."""
    s = _ap_sum(t)
    return np.log((1.0 + s) / (1.0 + t.R.astype(np.float64) - s))


def judged_nonrel_rows(t: EvalTable) -> np.ndarray:
    """Rows of judged non-relevant documents (0 <= label < level), ascending."""

    def rows() -> np.ndarray:
        j = t.judged_rows
        return j[t.label[j] < t.level]

    return t.memo("judged_nonrel_rows", rows)


def _bpref(t: EvalTable) -> np.ndarray:
    return t.memo("bpref", lambda: _bpref_values(t))


def _bpref_values(t: EvalTable) -> np.ndarray:
    rows = t.rel_rows
    if t.level < 0:
        rows = rows[t.label[rows] >= 0]
    gi = t.g[rows]
    nr = t.count_upto(judged_nonrel_rows(t), rows)  # judged non-relevant at or above
    R = t.R[gi]
    den = np.minimum(t.NR[gi], R).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        frac = np.minimum(nr, R).astype(np.float64) / den
    terms = np.where(nr > 0, 1.0 - frac, 1.0)
    total = np.bincount(gi, weights=terms, minlength=t.nq)
    return safe_div(total, t.R)


@measure("bpref", citation="Buckley & Voorhees, SIGIR 2004")
def bpref(t: EvalTable, p: Params) -> np.ndarray:
    """Binary preference: for each relevant retrieved document, 1 - min(nonrel above, R) /
    min(NR, R), counting only judged documents; divided by R."""
    return _bpref(t)


def _tfr_bpref(args: dict[str, Any], at: str | None, spec: str) -> Target:
    return Target("bpref" if bool_arg(args, "use_trec_version", True, spec) else "bpref_R")


spelling(
    "Bpref",
    "BPref",
    style="ir_measures",
    build=simple("bpref"),
    roots=("bpref",),
    args=("rel",),
    cutoff="none",
    definition="trec_eval's bpref",
)

spelling("bpref", style="ranx", build=ranx("bpref", None), roots=("bpref",), definition="trec_eval's bpref")

spelling(
    "BPrefMetric",
    style="tf-ranking",
    build=_tfr_bpref,
    roots=("bpref", "bpref_R"),
    args=("use_trec_version",),
    cutoff="none",
    definition="bpref; use_trec_version=False divides the penalty by R instead of min(R, N) (bpref_R)",
)


@measure("infAP", citation="Yilmaz & Aslam, CIKM 2006")
def infAP(t: EvalTable, p: Params) -> np.ndarray:
    """Inferred AP for sampled judgements: qrels value -1 or below marks a pooled but unjudged
    document; unpooled documents are skipped but keep their rank."""
    rows = t.rel_rows
    if t.level < 0:
        rows = rows[t.label[rows] >= 0]
    j = (t.rank_at(rows) - 1).astype(np.float64)
    rs = t.count_upto(rows, rows)
    nr = t.count_upto(judged_nonrel_rows(t), rows)
    pu = t.count_upto(np.flatnonzero(t.label == -2), rows) if len(rows) else np.zeros(0, dtype=np.int64)
    with np.errstate(invalid="ignore", divide="ignore"):
        term = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((rs - 1 + nr + pu) / j) * (
            (rs - 1 + INFAP_EPSILON) / ((rs - 1 + nr) + 2 * INFAP_EPSILON)
        )
    term = np.where(j == 0, 1.0, term)
    total = np.bincount(t.g[rows], weights=term, minlength=t.nq)
    return safe_div(total, t.R)


spelling(
    "infAP",
    style="ir_measures",
    build=simple("infAP"),
    roots=("infAP",),
    args=("rel",),
    cutoff="none",
    definition="trec_eval's infAP",
)


@measure("gm_bpref", agg=GEO_MEAN, per_query=False)
def gm_bpref(t: EvalTable, p: Params) -> np.ndarray:
    """Geometric mean of bpref over topics, each floored at 1e-5 (summary only)."""
    return _bpref(t)


@measure("binG")
def binG(t: EvalTable, p: Params) -> np.ndarray:
    """Binary G: the sum over relevant retrieved documents of 1 / log2(2 + non-relevant
    documents above it), divided by R."""
    rows = t.rel_rows
    nonrel_above = (t.rank_at(rows) - 1) - (t.count_upto(rows, rows) - 1)
    terms = 1.0 / np.log2((2 + nonrel_above).astype(np.float64))
    total = np.bincount(t.g[rows], weights=terms, minlength=t.nq)
    return np.where(any_at_level(t), safe_div(total, t.R), 0.0)
