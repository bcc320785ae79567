"""Binary-relevance measures ireval adds: RR@k, Judged@k, F at cutoffs, AP variants, relevant
retrieved at k, ranking AUC and GAUC, and the confusion matrix of the retrieved set.

Relevant means a judged label >= -l (default 1), as in trec_eval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable
from ..errors import MeasureParamError
from ._util import OptParams, opt, safe_div
from .precision import CUTOFFS
from .registry import LONG_CUTOFFS, NAN_MEAN, SUM, WEIGHTED_MEAN, Params, measure
from .spellings import BIG, Target, int_cutoff, number_arg, ranx, rel_view, simple, spelling


@measure("recip_rank_cut", params=LONG_CUTOFFS, default=(5, 10, 20), citation="Kantor & Voorhees, IR 2000")
def recip_rank_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Reciprocal rank at k: 1 / the rank of the first relevant document if it is in the top k,
    else 0 (MRR@10 as MS MARCO reports it)."""
    first = t.seg_first(t.is_rel, t.rank.astype(np.float64), default=np.inf)
    return np.stack([np.where(first <= k, 1.0 / first, 0.0) for k in p.values])


@measure("judged", params=LONG_CUTOFFS, default=(5, 10, 20), citation="Sakai, SIGIR 2007 (condensed lists)")
def judged(t: EvalTable, p: Params) -> np.ndarray:
    """Judged at k: documents in the top k with a judgement (qrels value >= 0), divided by k
    (1 - unj at k; ranks past the end of the run count as unjudged)."""
    if opt(p, "judged", "nonneg") == "in_qrels":  # ir_measures: any qrels line, over min(k, num_ret)
        cum = t.seg_cumsum((t.label != -1).astype(np.int64))
        return np.stack([safe_div(t.at_depth(cum, k), np.minimum(k, t.n)) for k in p.values])
    cum = t.seg_cumsum((t.label >= 0).astype(np.int64))
    return np.stack([t.at_depth(cum, k) / float(k) for k in p.values])


def _im_judged(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    return Target("judged", (k or BIG,), (("judged", "in_qrels"),))


spelling(
    "Judged",
    style="ir_measures",
    build=_im_judged,
    roots=("judged",),
    definition="judged at k as ir_measures counts it: documents in the top k that have a qrels line (any label, "
    "negative ones too) over min(k, num_ret); ireval's judged.k counts labels >= 0 over k",
)


@measure("num_rel_ret_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Bassani, ECIR 2022 (ranx hits@k)")
def num_rel_ret_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Relevant documents in the top k (ranx's hits@k); the summary is the mean over topics."""
    return np.stack([t.rel_at(k) for k in p.values])


@measure("F", params=LONG_CUTOFFS, default=CUTOFFS, citation="van Rijsbergen, Information Retrieval 1979")
def F(t: EvalTable, p: Params) -> np.ndarray:
    """F-beta at k: (1 + b^2) * P@k * R@k / (b^2 * P@k + R@k) with P@k = rel_k / k and R@k =
    rel_k / R; b = 1 (F1) unless a friendly name gives F(beta=b)@k; 0 when rel_k = 0."""
    b2 = float(opt(p, "beta", 1.0)) ** 2
    out = []
    for k in p.values:
        r = t.rel_at(k)
        prec = r / float(k)
        rec = safe_div(r, t.R)
        den = b2 * prec + rec
        out.append(np.where(r > 0, safe_div((1.0 + b2) * prec * rec, den), 0.0))
    return np.stack(out)


def _ir_f(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    beta = number_arg(args, "beta", 1.0, spec)
    view = rel_view({k2: v for k2, v in args.items() if k2 == "rel"}, spec)
    return Target("F", (k,), (("beta", beta),), **view)


spelling(
    "F",
    style="ireval",
    build=_ir_f,
    roots=("F",),
    args=("beta", "rel"),
    cutoff="required",
    definition="F-beta at k from P@k = r/k and R@k = r/R, F(beta=b)@k (bare F is trec-style: F.5,10,...)",
)

spelling(
    "f1",
    style="ranx",
    build=ranx("set_F", "F"),
    roots=("F", "set_F"),
    definition="F1 at k from P@k = r/k and R@k = r/R; without @k, of the retrieved set",
)


def _prec_at_rel(t: EvalTable) -> np.ndarray:
    terms = np.zeros(len(t.g), dtype=np.float64)
    rel = t.is_rel
    terms[rel] = t.cum_rel[rel] / t.rank[rel].astype(np.float64)
    return terms


@measure(
    "map_capped_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    citation="the min(R, k) form of MAP@k used in recommender evaluation (e.g. ml_metrics apk)",
)
def map_capped_cut(t: EvalTable, p: Params) -> np.ndarray:
    """AP at k over min(R, k): the precisions at the relevant documents in the top k, divided by
    min(R, k) (map_cut divides by R)."""
    prefix = t.seg_cumsum_exact(_prec_at_rel(t))
    return np.stack([safe_div(t.at_depth(prefix, k), np.minimum(t.R, k)) for k in p.values])


@measure("map_rel_ret", citation="e.g. Manning, Raghavan & Schütze, IR book 2008, sec. 8.4")
def map_rel_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Simplified AP: the mean of the precisions at the relevant retrieved documents (divided by
    the number retrieved, not by R); 0 when none is retrieved."""
    return safe_div(t.seg_sum(_prec_at_rel(t), where=t.is_rel), t.seg_count(t.is_rel))


# ---- ranking AUC ------------------------------------------------------------------


def _auc_parts(t: EvalTable, p: Params) -> tuple[np.ndarray, np.ndarray]:
    """(AUC numerator, number of pairs) per topic."""
    if opt(p, "retrieved_only", False):
        # ir_measures' Accuracy: retrieved documents in the top k only; unjudged count as non-relevant
        k = opt(p, "cutoff", None)
        keep = t.rank <= (k if k else np.iinfo(np.int64).max)
        rel = t.is_rel & keep
        non = ~t.is_rel & keep
        nr_above = t.seg_cumsum(non.astype(np.int64))
        n_non = t.seg_count(non).astype(np.float64)
        won = t.seg_sum((n_non[t.g] - nr_above).astype(np.float64), where=rel)
        return won, t.seg_count(rel) * n_non
    return t.memo(("auc_parts",), lambda: _ranked_auc_parts(t))


def _ranked_auc_parts(t: EvalTable) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_auc_parts` over the judged documents (shared by auc and gauc): a running
    count of the judged non-relevant rows, read at the relevant rows only."""
    label = t.label
    judged = label >= 0
    rows = t.rel_rows if t.level >= 0 else np.flatnonzero(t.is_rel & judged)  # relevant, judged
    non = judged
    non &= label < t.level  # (judged is a fresh array)
    cnon = np.zeros(len(label) + 1, dtype=np.int64)
    np.cumsum(non, out=cnon[1:])
    before = cnon[t.starts[:-1]]  # judged non-relevant rows above each topic's first
    g = t.g[rows]
    nr_above = cnon[rows + 1] - before[g]
    R = t.R.astype(np.float64)
    NR = t.NR.astype(np.float64)
    # a retrieved relevant document beats every judged non-relevant one not ranked above it
    won = np.bincount(g, weights=(NR[g] - nr_above).astype(np.float64), minlength=t.nq)
    r_unret = R - np.bincount(g, minlength=t.nq).astype(np.int64)
    n_unret = NR - (cnon[t.starts[1:]] - before)
    return won + 0.5 * r_unret * n_unret, R * NR


def _auc(t: EvalTable, p: Params) -> np.ndarray:
    num, pairs = _auc_parts(t, p)
    out = np.full(t.nq, np.nan)
    np.divide(num, pairs, out=out, where=pairs > 0)
    return out


@measure("auc", agg=NAN_MEAN, citation="Hanley & McNeil, Radiology 1982; Cortes & Mohri, NIPS 2003")
def auc(t: EvalTable, p: Params) -> np.ndarray:
    """Ranking AUC: the fraction of (relevant, judged non-relevant) pairs in which the relevant
    document ranks higher; judged documents not retrieved rank below every retrieved one and tie
    among themselves (a tie counts 1/2). A topic without such a pair has no value (-nan) and
    the summary is the mean over the topics that have one."""
    return _auc(t, p)


def _im_accuracy(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    opts: tuple[tuple[str, Any], ...] = (("retrieved_only", True),)
    if k is not None:
        opts += (("cutoff", k),)
    return Target("auc", (), opts, **rel_view(args, spec))


spelling(
    "Accuracy",
    style="ir_measures",
    build=_im_accuracy,
    roots=("auc",),
    args=("rel",),
    definition="ir_measures' Accuracy: among the retrieved documents (top k) only, the fraction of (relevant, "
    "non-relevant) pairs in the right order, unjudged counting as non-relevant; no value for a topic "
    "without both (ir_measures fails when every retrieved document is relevant)",
)

spelling(
    "AUC",
    style="ireval",
    build=simple("auc"),
    roots=("auc",),
    args=("rel",),
    cutoff="none",
    definition="ranking AUC over (relevant, judged non-relevant) pairs, unretrieved judged documents tied last",
)


@measure("gauc", agg=WEIGHTED_MEAN, citation="Zhou et al., KDD 2018 (Deep Interest Network)")
def gauc(t: EvalTable, p: Params) -> np.ndarray:
    """Group AUC: per topic the auc; the summary averages it over the topics that have one,
    weighted by each topic's number of judged documents (GAUC(weight=uniform): plain mean)."""
    a = _auc(t, p)
    weight = opt(p, "weight", "judged")
    if weight == "uniform":
        w = np.ones(t.nq)
    elif weight == "positives":
        w = t.R.astype(np.float64)
    else:
        w = (t.R + t.NR).astype(np.float64)
    return np.stack([a, w])


def _ir_gauc(args: dict[str, Any], at: str | None, spec: str) -> Target:
    weight = args.get("weight", "judged")
    if weight not in ("judged", "uniform", "positives"):
        raise MeasureParamError(f"{spec}: weight={weight!r} is not one of 'judged', 'uniform', 'positives'")
    view = rel_view({k: v for k, v in args.items() if k == "rel"}, spec)
    if weight == "positives":  # RecBole's GAUC
        return Target("gauc_pos", (), **view)
    return Target("gauc", (), (("weight", weight),), **view)


spelling(
    "GAUC",
    style="ireval",
    build=_ir_gauc,
    roots=("gauc", "gauc_pos"),
    args=("weight", "rel"),
    cutoff="none",
    definition="AUC averaged over topics weighted by judged documents (weight=uniform: plain mean; "
    "weight=positives: by relevant documents, RecBole's GAUC)",
)


@measure("gauc_pos", agg=WEIGHTED_MEAN, citation="RecBole's GAUC (Zhao et al., CIKM 2021); Zhou et al., KDD 2018")
def gauc_pos(t: EvalTable, p: Params) -> np.ndarray:
    """Group AUC as RecBole computes it: per topic the auc, averaged over the topics that have
    one weighted by each topic's number of relevant documents R (sum_u auc_u * R_u / sum_u R_u);
    RecBole leaves out users with no positive or no negative item, as the auc has no value for them."""
    return gauc(t, OptParams(p.values, p.printable, (("weight", "positives"),)))


# ---- confusion matrix of the retrieved set ---------------------------------------


def _collection(t: EvalTable, name: str) -> int:
    N = t.opts.num_docs
    if N <= 0:
        raise MeasureParamError(f"measure '{name}' needs the collection size: give -N NUMBER_OF_DOCUMENTS")
    return N


@measure("TP", kind="int", agg=SUM, citation="van Rijsbergen, Information Retrieval 1979 (the contingency table)")
def TP(t: EvalTable, p: Params) -> np.ndarray:
    """True positives: relevant documents retrieved (num_rel_ret); the summary is the sum."""
    return t.rel_ret.astype(np.float64)


@measure(
    "FP",
    kind="int",
    direction="lower",
    agg=SUM,
    citation="van Rijsbergen, Information Retrieval 1979 (the contingency table)",
)
def FP(t: EvalTable, p: Params) -> np.ndarray:
    """False positives: retrieved documents that are not relevant (unjudged included); the
    summary is the sum."""
    return (t.n - t.rel_ret).astype(np.float64)


@measure(
    "FN",
    kind="int",
    direction="lower",
    agg=SUM,
    citation="van Rijsbergen, Information Retrieval 1979 (the contingency table)",
)
def FN(t: EvalTable, p: Params) -> np.ndarray:
    """False negatives: relevant documents not retrieved (R - num_rel_ret); the summary is the sum."""
    return (t.R - t.rel_ret).astype(np.float64)


@measure("TN", kind="int", agg=SUM, citation="van Rijsbergen, Information Retrieval 1979 (the contingency table)")
def TN(t: EvalTable, p: Params) -> np.ndarray:
    """True negatives: documents neither retrieved nor relevant, N - num_ret - R + num_rel_ret
    with N the collection size from -N (required); the summary is the sum."""
    N = _collection(t, "TN")
    return (N - t.n - t.R + t.rel_ret).astype(np.float64)


@measure("accuracy", citation="van Rijsbergen, Information Retrieval 1979 (the contingency table)")
def accuracy(t: EvalTable, p: Params) -> np.ndarray:
    """Accuracy of the retrieved set as a classifier: (TP + TN) / N, N the collection size from
    -N (required)."""
    N = _collection(t, "accuracy")
    tn = N - t.n - t.R + t.rel_ret
    return (t.rel_ret + tn) / float(N)
