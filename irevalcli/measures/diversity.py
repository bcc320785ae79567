"""Diversity measures over subtopic judgements (``--subtopics FILE``): alpha-nDCG@k and ERR-IA@k.

They follow TREC Web's ndeval (Clarke et al.): a document is relevant to a subtopic
when its subtopic label is >= -l (binary); the n-th document relevant to the same
subtopic adds (1 - alpha)^(n-1) for it (alpha = 0.5). The ideal ranking is ndeval's
greedy one over the documents of the subtopic judgements, ties going to the larger
docno (bytewise). Topics are the ones of the main qrels; a topic without subtopic
judgements (or with no relevant one) scores 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import UsageError
from .registry import Params, measure
from ..core.table import EvalTable
from ._util import opt

ALPHA = 0.5
CUTOFFS = (5, 10, 20)


@dataclass
class _Subtopics:
    # judged (topic, document) pairs: one "doc" per pair, grouped by topic, docno ascending
    doc_topic: np.ndarray
    doc_start: np.ndarray  # offsets of each topic's docs (len nq + 1)
    doc_code: np.ndarray  # code in the table's doc_dict (-1: never retrieved)
    # relevant (doc, subtopic) pairs, ordered by doc then subtopic
    pair_doc: np.ndarray
    pair_sub: np.ndarray  # index of (topic, subtopic)
    nsub: int
    S: np.ndarray  # subtopics with at least one relevant document, per topic


def _subtopic_key(values: list[bytes]) -> list:
    """ndeval numbers subtopics; order them numerically when they are numbers."""
    try:
        return [(0, int(v), v) for v in values]
    except ValueError:
        return [(1, 0, v) for v in values]


def _prepare(t: EvalTable) -> _Subtopics:
    key = ("subtopics", t.level)
    if key in t._cache:
        return t._cache[key]
    import pyarrow as pa
    import pyarrow.compute as pc

    sub = t.subtopics
    if sub is None:
        raise UsageError("alpha_ndcg_cut and err_ia_cut need subtopic judgements: give --subtopics FILE")
    qset = pa.array([q.encode("utf-8", "surrogateescape") for q in t.qids], pa.large_binary())
    topic = pc.index_in(sub.qid.cast(pa.large_binary()), value_set=qset).to_numpy(zero_copy_only=False)
    topic = np.where(np.isnan(topic.astype(np.float64)), -1, topic).astype(np.int64)
    keep = topic >= 0
    topic = topic[keep]
    docno = sub.docno.cast(pa.large_binary()).filter(pa.array(keep))
    subtopic = sub.subtopic.cast(pa.large_binary()).filter(pa.array(keep))
    rel = (sub.rel[keep] >= t.level).astype(np.int64)
    # documents: (topic, docno) pairs, docno in bytewise order within a topic
    denc = docno.dictionary_encode()
    ddict = denc.dictionary
    drank = np.empty(len(ddict), dtype=np.int64)
    drank[pc.sort_indices(ddict).to_numpy()] = np.arange(len(ddict))
    dcode = drank[denc.indices.to_numpy(zero_copy_only=False).astype(np.int64)] if len(ddict) else np.zeros(0, np.int64)
    pairkey = np.unique(topic * max(len(ddict), 1) + dcode)
    doc_of_row = np.searchsorted(pairkey, topic * max(len(ddict), 1) + dcode)
    doc_topic = pairkey // max(len(ddict), 1)
    doc_start = np.zeros(t.nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc_topic, minlength=t.nq), out=doc_start[1:])
    sorted_docs = ddict.take(pa.array(pc.sort_indices(ddict).to_numpy()))
    doc_docno = sorted_docs.take(pa.array(pairkey % max(len(ddict), 1))) if len(pairkey) else sorted_docs
    if t.doc_dict is not None and len(pairkey):
        code = pc.index_in(doc_docno, value_set=t.doc_dict.cast(pa.large_binary())).to_numpy(zero_copy_only=False)
        doc_code = np.where(np.isnan(code.astype(np.float64)), -1, code).astype(np.int64)
    else:
        doc_code = np.full(len(pairkey), -1, dtype=np.int64)
    # subtopics: (topic, subtopic) pairs
    senc = subtopic.dictionary_encode()
    sdict = [v.as_py() for v in senc.dictionary]
    srank = np.empty(len(sdict), dtype=np.int64)
    skeys = _subtopic_key(sdict)
    srank[sorted(range(len(sdict)), key=lambda i: skeys[i])] = np.arange(len(sdict))
    scode = srank[senc.indices.to_numpy(zero_copy_only=False).astype(np.int64)] if len(sdict) else np.zeros(0, np.int64)
    m = rel > 0
    skey = topic[m] * max(len(sdict), 1) + scode[m]
    uniq, pair_sub = np.unique(skey, return_inverse=True)
    pair_doc = doc_of_row[m]
    order = np.lexsort((scode[m], pair_doc))
    S = np.bincount(uniq // max(len(sdict), 1), minlength=t.nq).astype(np.int64)
    out = _Subtopics(
        doc_topic=doc_topic,
        doc_start=doc_start,
        doc_code=doc_code,
        pair_doc=pair_doc[order],
        pair_sub=pair_sub.reshape(-1)[order],
        nsub=len(uniq),
        S=S,
    )
    t._cache[key] = out
    return out


def _run_gains(t: EvalTable, st: _Subtopics, alpha: float) -> np.ndarray:
    """Each ranked row's novelty gain: the sum over its relevant subtopics of (1 - alpha)^(times
    the subtopic was covered above it)."""
    ndoc = len(st.doc_topic)
    gain = np.zeros(len(t.g), dtype=np.float64)
    if ndoc == 0 or len(st.pair_doc) == 0 or t.doc is None:
        return gain
    # ranked row of each judged doc (-1 if not retrieved): match (topic, doc code)
    width = int(max(st.doc_code.max(initial=0), t.doc.max(initial=0))) + 1
    row_key = t.g * width + t.doc
    doc_key = st.doc_topic * width + st.doc_code
    order = np.argsort(row_key, kind="stable")
    pos = np.searchsorted(row_key[order], doc_key)
    pos_c = np.minimum(pos, max(len(order) - 1, 0))
    found = (st.doc_code >= 0) & (pos < len(order)) & (row_key[order][pos_c] == doc_key) if len(order) else np.zeros(ndoc, bool)
    doc_row = np.where(found, order[pos_c], -1)
    prow = doc_row[st.pair_doc]
    ok = prow >= 0
    prow, psub = prow[ok], st.pair_sub[ok]
    # times each subtopic was covered above: rank order within each (topic, subtopic)
    o = np.lexsort((prow, psub))
    ps = psub[o]
    first = np.concatenate(([True], ps[1:] != ps[:-1])) if len(ps) else np.zeros(0, bool)
    grp_start = np.maximum.accumulate(np.where(first, np.arange(len(ps)), 0)) if len(ps) else ps
    seen = np.empty(len(ps), dtype=np.int64)
    seen[o] = np.arange(len(ps)) - grp_start
    # add in (row, subtopic) order, as ndeval's loop over subtopics does
    o2 = np.lexsort((psub, prow))
    return np.bincount(prow[o2], weights=(1.0 - alpha) ** seen[o2], minlength=len(t.g))


def _ideal_gains(t: EvalTable, st: _Subtopics, alpha: float, depth: int) -> np.ndarray:
    """ndeval's greedy ideal ranking, (topics x depth) gains: at each rank take the document
    with the largest novelty gain (ties: the larger docno) and discount its subtopics."""
    nq = t.nq
    out = np.zeros((nq, depth), dtype=np.float64)
    ndoc = len(st.doc_topic)
    if ndoc == 0:
        return out
    sub_gain = np.ones(st.nsub, dtype=np.float64)
    alive = np.ones(ndoc, dtype=bool)
    has = np.flatnonzero(np.diff(st.doc_start) > 0)
    starts = st.doc_start[has]
    pos_in_topic = np.arange(ndoc) - st.doc_start[st.doc_topic]
    # pairs grouped by document (sorted by doc, then subtopic)
    pair_start = np.searchsorted(st.pair_doc, np.arange(ndoc + 1))
    for r in range(depth):  # one vectorised greedy step per rank, over all topics at once
        score = np.bincount(st.pair_doc, weights=sub_gain[st.pair_sub], minlength=ndoc)
        score = np.where(alive, score, -1.0)
        best = np.maximum.reduceat(score, starts)
        cand = alive & (score == _spread(best, has, st))
        pick_pos = np.maximum.reduceat(np.where(cand, pos_in_topic, -1), starts)
        ok = pick_pos >= 0
        if not ok.any():
            break
        chosen = starts[ok] + pick_pos[ok]
        out[has[ok], r] = score[chosen]
        alive[chosen] = False
        lo, hi = pair_start[chosen], pair_start[chosen + 1]
        lens = hi - lo
        idx = np.repeat(lo, lens) + (np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens))
        sub_gain[st.pair_sub[idx]] *= 1.0 - alpha
    return out


def _spread(best: np.ndarray, has: np.ndarray, st: _Subtopics) -> np.ndarray:
    """Per-topic values (topics with documents) broadcast to each of their documents."""
    full = np.full(len(st.doc_start) - 1, -np.inf)
    full[has] = best
    return full[st.doc_topic]


def _alpha(p: Params) -> float:
    return float(opt(p, "alpha", ALPHA))


def _discount(rank: np.ndarray) -> np.ndarray:
    return np.log2(np.asarray(rank, dtype=np.float64) + 1.0)


@measure("alpha_ndcg_cut", params="long_cutoffs", default=CUTOFFS, needs_subtopics=True,
         citation="Clarke et al., SIGIR 2008; ndeval (TREC Web track)")
def alpha_ndcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """alpha-nDCG at k: the sum over the top k of the novelty gain (each relevant subtopic adds
    (1 - alpha)^(times it was covered above), alpha = 0.5) / log2(i + 1), over the same sum for
    ndeval's greedy ideal ranking (needs --subtopics)."""
    st = _prepare(t)
    alpha = _alpha(p)
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha) / _discount(t.rank))
    depth = int(max(p.values))
    ig = _ideal_gains(t, st, alpha, depth)
    iprefix = np.cumsum(ig / _discount(np.arange(1, depth + 1))[None, :], axis=1)
    out = []
    for k in p.values:
        d = t.at_depth(prefix, k)
        i = iprefix[:, k - 1]
        v = np.zeros(t.nq)
        np.divide(d, i, out=v, where=(i > 0) & (d != 0))
        out.append(v)
    return np.stack(out)


@measure("err_ia_cut", params="long_cutoffs", default=CUTOFFS, needs_subtopics=True,
         citation="Chapelle et al., CIKM 2009; Agrawal et al., WSDM 2009; ndeval (TREC Web track)")
def err_ia_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Intent-aware ERR at k as ndeval computes it: the sum over the top k of the novelty gain
    (alpha = 0.5) / i, divided by the same sum for a ranking whose every document is relevant to
    every subtopic, S * sum_{i<=k} (1 - alpha)^(i-1) / i (needs --subtopics)."""
    st = _prepare(t)
    alpha = _alpha(p)
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha) / t.rank.astype(np.float64))
    out = []
    for k in p.values:
        ranks = np.arange(1, k + 1, dtype=np.float64)
        ideal_ideal = np.cumsum((1.0 - alpha) ** (ranks - 1) / ranks)[-1]
        den = st.S.astype(np.float64) * ideal_ideal
        v = np.zeros(t.nq)
        np.divide(t.at_depth(prefix, k), den, out=v, where=den > 0)
        out.append(v)
    return np.stack(out)

