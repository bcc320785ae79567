"""Measures as other evaluators define them: TF-Ranking's and Elasticsearch's.

TF-Ranking (``tfr.keras.metrics``) scores a list of labelled examples: its list is the
run's retrieved documents here, an unjudged document counting as label 0 (give -J to
drop unjudged documents, as TF-Ranking's mask drops labels below 0). Elasticsearch's
``_rank_eval`` scores the top k hits of a search: the run's top k here.
Relevant means a judged label >= -l (default 1), as in trec_eval.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable, distinct
from ..errors import MeasureParamError
from ..io.arrow import from_numpy, text_keys, to_numpy, valid_mask
from . import dcg as dcg_kernel
from ._util import opt, safe_div
from .ap import judged_nonrel_rows
from .precision import CUTOFFS
from .registry import LONG_CUTOFFS, WEIGHTED_MEAN, Params, measure
from .spellings import BIG, Build, Target, bool_arg, int_cutoff, rel_view, simple, spelling


@measure(
    "P_ret",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    citation="TF-Ranking's PrecisionMetric (Pasumarthi et al., KDD 2019); Elasticsearch's rank evaluation "
    "precision (PrecisionAtK)",
)
def P_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Precision at k over the documents retrieved within k: rel_k / min(k, num_ret) (P.k divides by
    k). With ignore_unlabeled (Elasticsearch's PrecisionAtK(ignore_unlabeled=true)) the
    unjudged documents in the top k count in neither part: rel_k / judged_k; 0 when that is 0."""
    if opt(p, "ignore_unlabeled", False):
        cum = t.seg_cumsum((t.label != -1).astype(np.int64))  # rated: any qrels line (ES ratings)
        return np.stack([safe_div(t.rel_at(k), t.at_depth(cum, k)) for k in p.values])
    return np.stack([safe_div(t.rel_at(k), np.minimum(k, t.n)) for k in p.values])


def _positive_arg(args: dict[str, Any], key: str, spec: str) -> int | None:
    v = args.get(key)
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
        raise MeasureParamError(f"{spec}: {key}={v!r} is not a positive integer")
    return v


def _tfr_cut(root: str) -> Build:
    """TF-Ranking's topn, given as topn=k or @k; none: the whole list."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = int_cutoff(at, spec)
        topn = _positive_arg(args, "topn", spec)
        if k is not None and topn is not None and k != topn:
            raise MeasureParamError(f"{spec}: topn={topn} and @{k} disagree")
        opts: tuple[tuple[str, Any], ...] = ()
        if "alpha" in args:
            a = args["alpha"]
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 <= a <= 1:
                raise MeasureParamError(f"{spec}: alpha={a!r} is not a number between 0 and 1")
            opts = (("alpha", float(a)),)
        return Target(root, (k or topn or BIG,), opts)

    return build


def _es_precision(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    kk = _positive_arg(args, "k", spec)
    if k is not None and kk is not None and k != kk:
        raise MeasureParamError(f"{spec}: k={kk} and @{k} disagree")
    opts = (("ignore_unlabeled", True),) if bool_arg(args, "ignore_unlabeled", False, spec) else ()
    level = args.get("relevant_rating_threshold")
    view = rel_view({"rel": level}, spec) if level is not None else {}
    return Target("P_ret", (k or kk or 10,), opts, **view)


spelling(
    "PrecisionMetric",
    style="tf-ranking",
    build=_tfr_cut("P_ret"),
    roots=("P_ret",),
    args=("topn",),
    definition="TF-Ranking's P@k: relevant in the top k over min(k, list length); without topn, over the whole list",
)

spelling(
    "PrecisionAtK",
    style="elasticsearch",
    build=_es_precision,
    roots=("P_ret",),
    args=("k", "ignore_unlabeled", "relevant_rating_threshold"),
    definition="Elasticsearch's rank-evaluation precision: relevant over retrieved in the top k (k = 10 by "
    "default); ignore_unlabeled=true leaves unjudged documents out of the count",
)


@measure("bpref_R", citation="TF-Ranking's BPrefMetric(use_trec_version=False); Buckley & Voorhees, SIGIR 2004")
def bpref_R(t: EvalTable, p: Params) -> np.ndarray:
    """bpref with R as the denominator of the penalty: (1/R) * sum over relevant retrieved r of
    (1 - min(n_r, R) / R), n_r the judged non-relevant documents ranked above r (bpref divides
    n_r by min(R, N)). R and N come from the qrels, as in bpref; TF-Ranking counts them over its
    list, which is the same when every judged document is retrieved."""
    rows = t.rel_rows
    if t.level < 0:
        rows = rows[t.label[rows] >= 0]
    gi = t.g[rows]
    nr = t.count_upto(judged_nonrel_rows(t), rows)
    R = t.R[gi].astype(np.float64)
    terms = 1.0 - np.minimum(nr, R) / R  # R >= 1 wherever a relevant row exists
    return safe_div(np.bincount(gi, weights=terms, minlength=t.nq), t.R)


@measure(
    "arp",
    agg=WEIGHTED_MEAN,
    direction="lower",
    unanswered="refuse",
    citation="TF-Ranking's ARPMetric (Pasumarthi et al., KDD 2019)",
)
def arp(t: EvalTable, p: Params) -> np.ndarray:
    """Average relevance position: sum_i label_i * rank_i / sum_i label_i over the retrieved
    documents (graded labels; unjudged and negative count 0; lower is better); 0 when no label is
    positive. The summary is the mean weighted by each topic's sum of labels, as TF-Ranking's."""
    lab = np.maximum(t.label, 0).astype(np.float64)
    w = t.seg_sum(lab)
    return np.stack([safe_div(t.seg_sum(lab * t.rank), w), w])


spelling(
    "ARPMetric",
    style="tf-ranking",
    build=simple("arp", rel=False),
    roots=("arp",),
    cutoff="none",
    definition="TF-Ranking's average relevance position: sum label*rank / sum label, weighted summary",
)


@measure("opa", agg=WEIGHTED_MEAN, unanswered="refuse", citation="TF-Ranking's OPAMetric (Pasumarthi et al., KDD 2019)")
def opa(t: EvalTable, p: Params) -> np.ndarray:
    """Ordered pair accuracy: among pairs of retrieved documents with different labels (graded;
    unjudged and negative count 0), the fraction whose higher-labelled document ranks higher; no
    value (-nan) for a topic without such a pair. The summary is the mean weighted by each topic's
    number of pairs, as TF-Ranking's. TF-Ranking compares scores and counts a score tie as wrong;
    ireval compares ranks, so a tie counts for the document --ties puts first."""
    lab = np.maximum(t.label, 0)
    correct = np.zeros(t.nq)
    pairs = np.zeros(t.nq)
    for v in distinct(lab[lab > 0]).tolist():  # a few label levels, not documents
        lower = (lab < v).astype(np.int64)
        above = t.seg_cumsum(lower)  # lower-labelled documents at or above each row
        total_lower = t.seg_sum(lower.astype(np.float64))
        here = lab == v
        correct += t.seg_sum(total_lower[t.g] - above, where=here)
        pairs += t.seg_count(here) * total_lower
    out = np.full(t.nq, np.nan)
    np.divide(correct, pairs, out=out, where=pairs > 0)
    return np.stack([out, pairs])


spelling(
    "OPAMetric",
    style="tf-ranking",
    build=simple("opa", rel=False),
    roots=("opa",),
    cutoff="none",
    definition="TF-Ranking's ordered pair accuracy over pairs of retrieved documents with different labels",
)


# ---- TF-Ranking's diversity measures (subtopic judgements: --subtopics FILE) ----------------


def _subtopic_entries(t: EvalTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The subtopic judgements of retrieved documents as (ranked row, subtopic id, label)
    arrays, ordered by subtopic then rank, and per topic the number of subtopics with a relevant
    (label >= -l) document in the judgements (retrieved or not)."""
    return t.memo(("peer_subtopics", t.level), lambda: _subtopic_entries_of(t))


def _subtopic_entries_of(t: EvalTable) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..errors import UsageError

    sub = t.subtopics
    if sub is None:
        raise UsageError("PrecisionIAMetric and AlphaDCGMetric need subtopic judgements: give --subtopics FILE")
    qset = text_keys(t.qids)
    topic = pc.index_in(sub.qid.cast(pa.large_binary()), value_set=qset)
    keep = valid_mask(topic)
    topic = to_numpy(topic, nulls_ok=True).astype(np.int64)[keep]
    label = sub.rel[keep]
    # subtopic ids per (topic, subtopic)
    scode = to_numpy(sub.subtopic.cast(pa.large_binary()).filter(from_numpy(keep)).dictionary_encode().indices).astype(
        np.int64
    )
    width = int(scode.max(initial=0)) + 1
    sid = topic * width + scode
    rel = label >= t.level
    S = np.bincount(distinct(sid[rel]) // width, minlength=t.nq).astype(np.float64) if rel.any() else np.zeros(t.nq)
    # the ranked row of each judged document (-1: not retrieved)
    row = np.full(len(topic), -1, dtype=np.int64)
    if t.doc is not None and t.doc_dict is not None and len(topic) and len(t.g):
        code = pc.index_in(
            sub.docno.cast(pa.large_binary()).filter(from_numpy(keep)), value_set=t.doc_dict.cast(pa.large_binary())
        )
        has = valid_mask(code)
        code = np.where(has, to_numpy(code, nulls_ok=True), 0).astype(np.int64)
        dwidth = int(max(code.max(initial=0), t.doc.max(initial=0))) + 1
        row_key = t.g * dwidth + t.doc
        order = np.argsort(row_key, kind="stable")
        want = topic * dwidth + code
        pos = np.minimum(np.searchsorted(row_key[order], want), len(order) - 1)
        hit = has & (row_key[order][pos] == want)
        row = np.where(hit, order[pos], -1)
    ok = row >= 0
    row, sid, label = row[ok], sid[ok], label[ok]
    o = np.lexsort((row, sid))
    return row[o], sid[o], label[o].astype(np.float64), S


@measure(
    "P_IA_ret",
    params=LONG_CUTOFFS,
    default=(5, 10, 20),
    needs_subtopics=True,
    citation="TF-Ranking's PrecisionIAMetric; Agrawal et al., WSDM 2009; Clarke et al., TREC 2009 Web track",
)
def P_IA_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Intent-aware precision at k as TF-Ranking computes it: the (document, subtopic) pairs in the
    top k with a subtopic label >= -l, divided by S * min(k, num_ret), S the subtopics with a
    relevant document; 0 when S = 0 (needs --subtopics). TF-Ranking counts S over its list, the
    same when every judged document is retrieved."""
    row, _, label, S = _subtopic_entries(t)
    hits = np.zeros(len(t.g))
    np.add.at(hits, row[label >= t.level], 1.0)
    cum = t.seg_cumsum_exact(hits)
    return np.stack([safe_div(t.at_depth(cum, k), S * np.minimum(k, t.n)) for k in p.values])


spelling(
    "PrecisionIAMetric",
    style="tf-ranking",
    build=_tfr_cut("P_IA_ret"),
    roots=("P_IA_ret",),
    args=("topn",),
    definition="TF-Ranking's intent-aware precision: relevant (document, subtopic) pairs in the top k over "
    "S * min(k, list length); needs --subtopics",
)


@measure(
    "alpha_dcg_label_cut",
    params=LONG_CUTOFFS,
    default=(5, 10, 20),
    needs_subtopics=True,
    citation="TF-Ranking's AlphaDCGMetric; Clarke et al., SIGIR 2008",
)
def alpha_dcg_label_cut(t: EvalTable, p: Params) -> np.ndarray:
    """alpha-DCG at k as TF-Ranking computes it, not normalised and with graded subtopic labels:
    sum over the top k of sum_t y_(i,t) * (1 - alpha)^(sum of y_(j,t) ranked above i) / log2(i + 1),
    alpha = 0.5 (AlphaDCGMetric(alpha=a) sets it; negative labels count 0; needs --subtopics). With
    binary labels it is the numerator of alpha_ndcg_cut."""
    alpha = float(opt(p, "alpha", 0.5))
    row, sid, label, _ = _subtopic_entries(t)
    y = np.maximum(label, 0.0)
    # labels of the same subtopic ranked above: exclusive running sum within each subtopic
    first = np.concatenate(([True], sid[1:] != sid[:-1])) if len(sid) else np.zeros(0, bool)
    run = np.cumsum(y) - y
    above = run - np.maximum.accumulate(np.where(first, run, 0.0)) if len(sid) else run
    gain = np.bincount(row, weights=y * (1.0 - alpha) ** above, minlength=len(t.g))
    prefix = t.seg_cumsum_exact(dcg_kernel.terms(gain, t.rank))
    return np.stack([t.at_depth(prefix, k) for k in p.values])


spelling(
    "AlphaDCGMetric",
    style="tf-ranking",
    build=_tfr_cut("alpha_dcg_label_cut"),
    roots=("alpha_dcg_label_cut",),
    args=("topn", "alpha"),
    definition="TF-Ranking's alpha-DCG: not normalised, graded subtopic labels as gains, alpha = 0.5; "
    "needs --subtopics",
)
