"""Precision- and recall-oriented measures at cutoffs, and interpolated precision."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable, seg_suffix_max
from ..errors import MeasureParamError
from ._util import rel_at_cutoffs, safe_div
from .registry import DOUBLE_CUTOFFS, DOUBLE_PARAMS, LONG_CUTOFFS, PER_TOPIC_ONLY, Params, measure
from .spellings import REL, Target, ranx, rel_view, simple, spelling

CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
RECALL_POINTS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


@measure("Rprec")
def Rprec(t: EvalTable, p: Params) -> np.ndarray:
    """R-precision: precision after R documents (R = number of relevant documents)."""
    return safe_div(t.rel_at(t.R), t.R)


spelling(
    "Rprec",
    "RPrec",
    style="ir_measures",
    build=simple("Rprec"),
    roots=("Rprec",),
    args=REL,
    cutoff="none",
    definition="precision at R (trec_eval's Rprec)",
)

spelling("r-precision", style="ranx", build=ranx("Rprec", None), roots=("Rprec",), definition="precision at R")


@measure("recip_rank")
def recip_rank(t: EvalTable, p: Params) -> np.ndarray:
    """Reciprocal rank of the first relevant document (0 if none is retrieved)."""
    rows = t.rel_rows
    first = np.full(t.nq, np.inf, dtype=np.float64)
    if len(rows):
        gi = t.g[rows]
        firsts = np.concatenate(([True], gi[1:] != gi[:-1]))
        first[gi[firsts]] = t.rank_at(rows[firsts]).astype(np.float64)
    return 1.0 / first


spelling(
    "RR",
    "MRR",
    style="ir_measures",
    build=simple("recip_rank", cut_root="recip_rank_cut"),
    roots=("recip_rank", "recip_rank_cut"),
    args=REL,
    definition="reciprocal rank; RR@k is 0 when the first relevant document is below k (MS MARCO's MRR@10)",
)

spelling(
    "mrr",
    style="ranx",
    build=ranx("recip_rank", "recip_rank_cut"),
    roots=("recip_rank", "recip_rank_cut"),
    definition="reciprocal rank of the first relevant document in the top k",
)


def _lround(x: np.ndarray) -> np.ndarray:
    """C lround: round half away from zero."""
    return (np.sign(x) * np.floor(np.abs(x) + 0.5)).astype(np.int64)


def _short_by(t: EvalTable) -> np.ndarray:
    """Per topic, how many documents at or above a negative ``-l`` level trec_eval's reverse
    scans (iprec_at_recall, 11pt_avg, Rprec_mult) step over beyond num_rel_ret: the unjudged
    ones (-1, -2) the level admits. 0 for every level >= 0."""
    if t.level >= 0:
        return np.zeros(t.nq, dtype=np.int64)
    return np.bincount(t.g[t.rel_rows], minlength=t.nq).astype(np.int64) - t.rel_ret


def interpolated_points(t: EvalTable, xs: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_interpolated_points`, computed once per table and points (iprec_at_recall and
    11pt_avg read the same points); the arrays are read-only."""

    def compute() -> tuple[np.ndarray, np.ndarray]:
        values, emitted = _interpolated_points(t, xs)
        values.setflags(write=False)
        emitted.setflags(write=False)
        return values, emitted

    return t.memo(("interpolated_points", tuple(xs)), compute)


def _interpolated_points(t: EvalTable, xs: tuple[float, ...]) -> tuple[np.ndarray, np.ndarray]:
    """trec_eval's interpolated precision at recall points ``xs`` (in the given order).

    K = lround(x*R) in 10.0; trunc(x*R + 0.9) under ``--compat 9.0.8``.

    Returns (values[point, topic], output[point, topic]): ``output`` says whether the
    point was emitted by trec_eval's reverse scan (points it skips stay 0). For
    ascending points this is the textbook definition: 0 when the K = lround(x*R)-th
    relevant document is not retrieved, else the highest precision at or below it.
    """
    nq = t.nq
    ncut = len(xs)
    rel_ret = t.rel_ret
    xr = np.asarray(xs, dtype=np.float64)[:, None] * t.R.astype(np.float64)[None, :]
    if t.opts.compat == "9.0.8":
        K = np.trunc(xr + 0.9).astype(np.int64)  # trec_eval 9.0.8's (long)(x*R + 0.9)
    else:
        K = _lround(xr)
    # precision at each relevant retrieved document, and its suffix max per topic
    rel_rows = t.rel_rows
    cum = t.count_upto(rel_rows, rel_rows)  # relevant at or above (cum_rel)
    if t.level < 0:
        # trec_eval's reverse scan counts down from num_rel_ret (judged documents only) but
        # steps at every document at or above the level, unjudged ones (-1, -2) included:
        # each such document is counted short by D = (their number) - num_rel_ret, and the
        # top D of them are never reached (the scan stops at 0)
        cum = cum - _short_by(t)[t.g[rel_rows]]
        keep = cum > 0
        rel_rows, cum = rel_rows[keep], cum[keep]
    rg = t.g[rel_rows]
    prec = cum / t.rank_at(rel_rows).astype(np.float64)
    smax = seg_suffix_max(prec, rg, nq)
    rel_start = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(rg, minlength=nq), out=rel_start[1:])
    with np.errstate(invalid="ignore", divide="ignore"):
        initial = rel_ret / t.n.astype(np.float64)  # 0/0 -> NaN, as in C
    final = initial.copy()
    has = rel_ret > 0
    final[has] = smax[rel_start[:-1][has]]

    values = np.zeros((ncut, nq), dtype=np.float64)
    emitted = np.zeros((ncut, nq), dtype=bool)
    cc = ncut - 1
    # leading points (from the top) beyond num_rel_ret are skipped per topic
    skipping = np.ones(nq, dtype=bool)
    prev = rel_ret.copy()
    stuck = np.zeros(nq, dtype=bool)
    for cc in range(ncut - 1, -1, -1):
        k = K[cc]
        skip = skipping & (k > rel_ret)
        skipping = skip
        live = ~skip
        hit = live & ~stuck & (k >= 1) & (k <= prev)
        idx = rel_start[:-1] + np.maximum(k, 1) - 1
        values[cc, hit] = smax[idx[hit]] if len(smax) else 0.0
        prev = np.where(hit, k, prev)
        stuck = stuck | (live & ~hit)
        late = live & ~hit
        values[cc, late] = final[late]
        emitted[cc] = live
    return values, emitted


@measure("iprec_at_recall", params=DOUBLE_CUTOFFS, default=RECALL_POINTS)
def iprec_at_recall(t: EvalTable, p: Params) -> np.ndarray:
    """Interpolated precision at recall x: the highest precision at any rank at or below the
    one where recall x is reached (K = lround(x*R) relevant documents)."""
    values, _ = interpolated_points(t, p.values)
    return values


def _im_iprec(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if at is None:
        raise MeasureParamError(f"{spec}: a recall level is required (e.g. IPrec@0.5)")
    try:
        x = float(at)
    except ValueError:
        raise MeasureParamError(f"{spec}: recall level '{at}' is not a number") from None
    # pytrec_eval embeds trec_eval 9.0.8, whose K for recall x is trunc(x*R + 0.9)
    return Target("iprec_at_recall", (x,), **rel_view(args, spec, (("908", 0),)))


spelling(
    "IPrec",
    style="ir_measures",
    build=_im_iprec,
    roots=("iprec_at_recall",),
    args=REL,
    cutoff="required",
    definition="interpolated precision at recall level x, IPrec@x, as pytrec_eval (trec_eval 9.0.8) computes "
    "it: the K-th relevant document with K = trunc(x*R + 0.9) (10.0's iprec_at_recall uses lround(x*R))",
)


@measure("P", params=LONG_CUTOFFS, default=CUTOFFS)
def P(t: EvalTable, p: Params) -> np.ndarray:
    """Precision at k: relevant documents in the top k, divided by k (missing ranks count as
    non-relevant)."""
    ks = np.asarray(p.values, dtype=np.float64).reshape(-1, 1)
    return rel_at_cutoffs(t, p.values) / ks


spelling(
    "P",
    "Precision",
    style="ir_measures",
    build=simple("P", cut_root="P"),
    roots=("P",),
    args=REL,
    cutoff="required",
    definition="precision at k (pytrec_eval: trec_eval's P)",
)

spelling(
    "precision",
    style="ranx",
    build=ranx("set_P", "P"),
    roots=("P", "set_P"),
    definition="precision at k (P); without @k, of the retrieved set (set_P)",
)


def _relstring_check(vals: tuple[float, ...]) -> str | None:
    return None


@measure(
    "relstring",
    direction="none",
    params=DOUBLE_PARAMS,
    default=(10.0,),
    kind="str",
    agg=PER_TOPIC_ONLY,
    summary=False,
    placeholder="zero_named",
)
def relstring(t: EvalTable, p: Params) -> list[list[str]]:
    """The relevance of the first k ranks (default 10) as text: a digit per level, '>' above
    9, '-' not in the pool, '.' pooled but unjudged (per topic only)."""
    k = int(min(max(p.values[0], 0), 2**62)) if p.values else 0  # a k beyond any ranking shows all of it
    m = np.minimum(t.n, k)  # rows shown per topic: the top min(k, n)
    first = np.concatenate(([0], np.cumsum(m)[:-1]))
    keep = np.repeat(t.starts[:-1] - first, m) + np.arange(int(m.sum()))
    lab = t.label[keep]
    chars = np.where(lab > 9, ord(">"), np.where(lab >= 0, ord("0") + np.clip(lab, 0, 9), 0)).astype(np.uint8)
    chars[lab == -1] = ord("-")
    chars[lab == -2] = ord(".")
    chars[lab < -2] = ord("<")
    text = chars.tobytes().decode("ascii")
    ends = np.cumsum(m)
    begins = ends - m
    return [[text[b:e] for b, e in zip(begins.tolist(), ends.tolist())]]


@measure("recall", params=LONG_CUTOFFS, default=CUTOFFS)
def recall(t: EvalTable, p: Params) -> np.ndarray:
    """Recall at k: relevant documents in the top k, divided by R."""
    return safe_div(rel_at_cutoffs(t, p.values), t.R)


spelling(
    "R",
    "Recall",
    style="ir_measures",
    build=simple("recall", cut_root="recall"),
    roots=("recall",),
    args=REL,
    cutoff="required",
    definition="recall at k: relevant in the top k over R (trec_eval's recall)",
)

spelling(
    "recall",
    style="ranx",
    build=ranx("set_recall", "recall"),
    roots=("recall", "set_recall"),
    definition="recall at k; without @k (and with -lN), of the retrieved set",
)


@measure("Rprec_mult", params=DOUBLE_CUTOFFS, default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0))
def Rprec_mult(t: EvalTable, p: Params) -> np.ndarray:
    """Precision at x*R documents (cutoff trunc(x*R + 0.9)); Rprec_mult_1.00 is Rprec."""
    out = []
    short = _short_by(t)  # -l below 0: trec_eval's scan counts the unjudged ones it admits short
    for x in p.values:
        c = np.trunc(x * t.R.astype(np.float64) + 0.9).astype(np.int64)
        out.append(safe_div(np.maximum(t.rel_at(c) - short, 0), np.where(c >= 1, c, 0)))
    return np.stack(out)


@measure("11pt_avg", params=DOUBLE_PARAMS, default=RECALL_POINTS)
def eleven_pt_avg(t: EvalTable, p: Params) -> np.ndarray:
    """Mean interpolated precision over the recall points (default 0.0, 0.1, ..., 1.0)."""
    values, emitted = interpolated_points(t, p.values)
    total = np.zeros(t.nq, dtype=np.float64)
    for cc in range(len(p.values) - 1, -1, -1):  # trec_eval adds the points in this order
        total = np.where(emitted[cc], total + values[cc], total)
    return total / len(p.values)


@measure("relative_P", params=LONG_CUTOFFS, default=CUTOFFS)
def relative_P(t: EvalTable, p: Params) -> np.ndarray:
    """Relative precision at k: relevant in the top k divided by min(k, R)."""
    ks = np.asarray(p.values, dtype=np.int64).reshape(-1, 1)
    return safe_div(rel_at_cutoffs(t, p.values), np.minimum(ks, t.R))


spelling(
    "R_cap",
    style="ireval",
    build=simple("relative_P", cut_root="relative_P"),
    roots=("relative_P",),
    args=REL,
    cutoff="required",
    definition="capped recall r / min(R, k) (trec_eval's relative_P)",
)


@measure("success", params=LONG_CUTOFFS, default=(1, 5, 10))
def success(t: EvalTable, p: Params) -> np.ndarray:
    """Success at k: 1 if a relevant document is in the top k, else 0."""
    return (rel_at_cutoffs(t, p.values) > 0).astype(np.float64)


spelling(
    "Success",
    style="ir_measures",
    build=simple("success", cut_root="success"),
    roots=("success",),
    args=REL,
    cutoff="required",
    definition="1 if a relevant document is in the top k (trec_eval's success)",
)

spelling(
    "hit_rate",
    style="ranx",
    build=ranx("success", "success", big=True),
    roots=("success",),
    definition="1 if a relevant document is in the top k (trec_eval's success)",
)


@measure(
    "unj",
    params=LONG_CUTOFFS,
    direction="lower",
    unanswered=1.0,
    default=(5, 10, 20),
    placeholder="zero",
    versions=("10.0",),
)
def unj(t: EvalTable, p: Params) -> np.ndarray:
    """Unjudged at k: documents in the top k that are not judged (not in the qrels, or with a
    negative qrels value), divided by k."""
    # unjudged in the top min(k, n): that depth minus the judged ones there
    out = []
    for k in p.values:
        depth = np.maximum(np.minimum(k, t.n), 0).astype(np.float64)
        out.append((depth - t.count_at(t.judged_rows, k)) / float(k))
    return np.stack(out)
