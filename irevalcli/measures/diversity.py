"""Diversity measures over subtopic judgements (``--subtopics FILE``), as TREC Web's ndeval computes
them (pyndeval, which ir_measures runs): alpha-nDCG@k, alpha-DCG@k, ERR-IA@k, nERR-IA@k, NRBP,
nNRBP, MAP-IA, P-IA@k and subtopic recall at k.

They follow ndeval (Clarke et al.): a document is relevant to a subtopic when its subtopic
label is >= -l (binary); the n-th document relevant to the same subtopic adds (1 - alpha)^(n-1)
for it (alpha = 0.5). S is the number of subtopics of the topic with a relevant document. The
ideal ranking is ndeval's greedy one over the documents of the subtopic judgements, ties going
to the larger docno (bytewise). Topics are the ones of the main qrels; a topic without subtopic
judgements (or with no relevant one) scores 0 (ndeval's nNRBP is 0/0 there).

Score ties are ranked as for every measure, by docno descending (trec_eval's order), where
pyndeval breaks them by docno ascending: a run whose ties are in that order, read with
``--ties input``, gives pyndeval's number (tests/measures/test_diversity_ties.py); the spellings say so.

Two more deliberate differences from ndeval: it computes the cut-off measures to depth 20 only
(pyndeval refuses k > 20), ireval to any k; and its "ideal ideal" normalisation of ERR-IA@k
and alpha-DCG@k skips k = 1 (its loop starts at rank 2, so ERR-IA@1 and alpha-DCG@1 are not
divided by S), ireval normalises every k.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.table import EvalTable
from ..errors import MeasureParamError, UsageError
from ..io.arrow import from_numpy, text_keys, to_numpy, valid_mask
from ..records import Record
from ._util import opt, pair
from .dcg import discount
from .registry import LONG_CUTOFFS, PAIRS, Params, measure
from .spellings import Build, Target, int_cutoff, number_opts, rel_view, spelling

if TYPE_CHECKING:
    import pyarrow as pa

ALPHA = 0.5
BETA = 0.5
CUTOFFS = (5, 10, 20)


class _Subtopics(Record):
    # judged (topic, document) pairs: one "doc" per pair, grouped by topic, docno ascending
    doc_topic: np.ndarray
    doc_start: np.ndarray  # offsets of each topic's docs (len nq + 1)
    doc_code: np.ndarray  # code in the table's doc_dict (-1: never retrieved)
    # relevant (doc, subtopic) pairs, ordered by doc then subtopic
    pair_doc: np.ndarray
    pair_sub: np.ndarray  # index of (topic, subtopic)
    nsub: int
    S: np.ndarray  # subtopics with at least one relevant document, per topic
    sub_topic: np.ndarray  # topic of each (topic, subtopic) index

    def __init__(
        self,
        doc_topic: np.ndarray,
        doc_start: np.ndarray,
        doc_code: np.ndarray,
        pair_doc: np.ndarray,
        pair_sub: np.ndarray,
        nsub: int,
        S: np.ndarray,
        sub_topic: np.ndarray,
    ) -> None:
        self.doc_topic = doc_topic
        self.doc_start = doc_start
        self.doc_code = doc_code
        self.pair_doc = pair_doc
        self.pair_sub = pair_sub
        self.nsub = nsub
        self.S = S
        self.sub_topic = sub_topic


def _subtopic_key(values: list[bytes]) -> list:
    """ndeval numbers subtopics; order them numerically when they are numbers."""
    try:
        return [(0, int(v), v) for v in values]
    except ValueError:
        return [(1, 0, v) for v in values]


def _prepare(t: EvalTable) -> _Subtopics:
    return t.memo(("subtopics", t.level), lambda: _subtopics(t))


def _found_at(idx: pa.Array) -> np.ndarray:
    """``pc.index_in``'s positions as int64, -1 where a value was not found (its nulls)."""
    return np.where(valid_mask(idx), to_numpy(idx, nulls_ok=True), -1).astype(np.int64)


def _subtopics(t: EvalTable) -> _Subtopics:
    import pyarrow as pa
    import pyarrow.compute as pc

    sub = t.subtopics
    if sub is None:
        raise UsageError("the diversity measures need subtopic judgements: give --subtopics FILE")
    qset = text_keys(t.qids)
    topic = _found_at(pc.index_in(sub.qid.cast(pa.large_binary()), value_set=qset))
    keep = topic >= 0
    topic = topic[keep]
    docno = sub.docno.cast(pa.large_binary()).filter(from_numpy(keep))
    subtopic = sub.subtopic.cast(pa.large_binary()).filter(from_numpy(keep))
    rel = (sub.rel[keep] >= t.level).astype(np.int64)
    # documents: (topic, docno) pairs, docno in bytewise order within a topic
    denc = docno.dictionary_encode()
    ddict = denc.dictionary
    drank = np.empty(len(ddict), dtype=np.int64)
    drank[to_numpy(pc.sort_indices(ddict))] = np.arange(len(ddict))
    dcode = drank[to_numpy(denc.indices).astype(np.int64)] if len(ddict) else np.zeros(0, np.int64)
    pairkey = np.unique(topic * max(len(ddict), 1) + dcode)
    doc_of_row = np.searchsorted(pairkey, topic * max(len(ddict), 1) + dcode)
    doc_topic = pairkey // max(len(ddict), 1)
    doc_start = np.zeros(t.nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(doc_topic, minlength=t.nq), out=doc_start[1:])
    sorted_docs = ddict.take(pc.sort_indices(ddict))
    doc_docno = sorted_docs.take(from_numpy(pairkey % max(len(ddict), 1))) if len(pairkey) else sorted_docs
    if t.doc_dict is not None and len(pairkey):
        doc_code = _found_at(pc.index_in(doc_docno, value_set=t.doc_dict.cast(pa.large_binary())))
    else:
        doc_code = np.full(len(pairkey), -1, dtype=np.int64)
    # subtopics: (topic, subtopic) pairs
    senc = subtopic.dictionary_encode()
    sdict = [v.as_py() for v in senc.dictionary]
    srank = np.empty(len(sdict), dtype=np.int64)
    skeys = _subtopic_key(sdict)
    srank[sorted(range(len(sdict)), key=lambda i: skeys[i])] = np.arange(len(sdict))
    scode = srank[to_numpy(senc.indices).astype(np.int64)] if len(sdict) else np.zeros(0, np.int64)
    m = rel > 0
    skey = topic[m] * max(len(sdict), 1) + scode[m]
    uniq, pair_sub = np.unique(skey, return_inverse=True)
    pair_doc = doc_of_row[m]
    order = np.lexsort((scode[m], pair_doc))
    S = np.bincount(uniq // max(len(sdict), 1), minlength=t.nq).astype(np.int64)
    return _Subtopics(
        doc_topic=doc_topic,
        doc_start=doc_start,
        doc_code=doc_code,
        pair_doc=pair_doc[order],
        pair_sub=pair_sub.reshape(-1)[order],
        nsub=len(uniq),
        S=S,
        sub_topic=(uniq // max(len(sdict), 1)).astype(np.int64),
    )


def _run_pairs(t: EvalTable, st: _Subtopics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The retrieved relevant (document, subtopic) pairs: (ranked row, subtopic, times the
    subtopic was covered above the row), in (row, subtopic) order, as ndeval's loop visits them.
    ``st``: the table's :func:`_prepare`."""
    return t.memo(("run_pairs", t.level), lambda: _run_pairs_of(t, st))


def _run_pairs_of(t: EvalTable, st: _Subtopics) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    ndoc = len(st.doc_topic)
    none = np.zeros(0, dtype=np.int64)
    if ndoc == 0 or len(st.pair_doc) == 0 or t.doc is None:
        return none, none, none
    # ranked row of each judged doc (-1 if not retrieved): match (topic, doc code)
    width = int(max(st.doc_code.max(initial=0), t.doc.max(initial=0))) + 1
    row_key = t.g * width + t.doc
    doc_key = st.doc_topic * width + st.doc_code
    order = np.argsort(row_key, kind="stable")
    pos = np.searchsorted(row_key[order], doc_key)
    pos_c = np.minimum(pos, max(len(order) - 1, 0))
    found = (
        (st.doc_code >= 0) & (pos < len(order)) & (row_key[order][pos_c] == doc_key)
        if len(order)
        else np.zeros(ndoc, bool)
    )
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
    # (row, subtopic) order, as ndeval's loop over subtopics adds
    o2 = np.lexsort((psub, prow))
    return prow[o2], psub[o2], seen[o2]


def _run_gains(t: EvalTable, st: _Subtopics, alpha: float) -> np.ndarray:
    """Each ranked row's novelty gain: the sum over its relevant subtopics of (1 - alpha)^(times
    the subtopic was covered above it)."""
    prow, _, seen = _run_pairs(t, st)
    return np.bincount(prow, weights=(1.0 - alpha) ** seen, minlength=len(t.g))


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


@measure(
    "alpha_ndcg_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Clarke et al., SIGIR 2008; ndeval (TREC Web track)",
)
def alpha_ndcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """alpha-nDCG at k: the sum over the top k of the novelty gain (each relevant subtopic adds
    (1 - alpha)^(times it was covered above), alpha = 0.5) / log2(i + 1), over the same sum for
    ndeval's greedy ideal ranking (needs --subtopics)."""
    st = _prepare(t)
    alpha = _alpha(p)
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha) / discount(t.rank))
    depth = int(max(p.values))
    ig = _ideal_gains(t, st, alpha, depth)
    iprefix = np.cumsum(ig / discount(np.arange(1, depth + 1))[None, :], axis=1)
    out = []
    for k in p.values:
        d = t.at_depth(prefix, k)
        i = iprefix[:, k - 1]
        v = np.zeros(t.nq)
        np.divide(d, i, out=v, where=(i > 0) & (d != 0))
        out.append(v)
    return np.stack(out)


# What every ir_measures spelling of an ndeval measure says (issue 21 item 10): pyndeval's
# number except where scores tie, and how to get pyndeval's there too.
_NDEVAL = (
    "as ndeval (pyndeval) computes it, with score ties by docno descending (trec_eval's order); pyndeval "
    "breaks them by docno ascending (for its number, put a run's ties in that order and give --ties input); "
    "needs --subtopics"
)


def _im_diversity(root: str) -> Build:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = int_cutoff(at, spec)
        if k is None:
            raise MeasureParamError(f"{spec}: a cutoff is required (e.g. {spec}@20)")
        opts = number_opts(args, spec, "alpha")
        return Target(root, (k,), opts, **rel_view(args, spec))

    return build


spelling(
    "alpha_nDCG",
    "α_nDCG",
    style="ir_measures",
    build=_im_diversity("alpha_ndcg_cut"),
    roots=("alpha_ndcg_cut",),
    args=("alpha", "rel", "judged_only"),
    cutoff="required",
    definition="alpha-nDCG at k over subtopic judgements, " + _NDEVAL,
)


@measure(
    "err_ia_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Chapelle et al., CIKM 2009; Agrawal et al., WSDM 2009; ndeval (TREC Web track)",
)
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


spelling(
    "ERR_IA",
    style="ir_measures",
    build=_im_diversity("err_ia_cut"),
    roots=("err_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware ERR at k with ndeval's collection-independent normalisation, " + _NDEVAL,
)


def _ideal_ideal(alpha: float, k: int, discount: np.ndarray) -> float:
    """sum_{i<=k} (1 - alpha)^(i-1) * discount_i: a ranking whose every document is relevant to
    every subtopic, per subtopic (ndeval's "ideal ideal")."""
    return float(np.cumsum((1.0 - alpha) ** np.arange(k) * discount[:k])[-1])


@measure(
    "alpha_dcg_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Clarke et al., SIGIR 2008; ndeval (TREC Web track), as pyndeval and ir_measures compute it",
)
def alpha_dcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """alpha-DCG at k with ndeval's collection-independent normalisation: the sum over the top k
    of the novelty gain / log2(i + 1), divided by S * sum_{i<=k} (1 - alpha)^(i-1) / log2(i + 1),
    S the number of subtopics with a relevant document (alpha = 0.5; needs --subtopics)."""
    st = _prepare(t)
    alpha = _alpha(p)
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha) / discount(t.rank))
    disc = 1.0 / discount(np.arange(1, int(max(p.values)) + 1))
    out = []
    for k in p.values:
        den = st.S.astype(np.float64) * _ideal_ideal(alpha, k, disc)
        v = np.zeros(t.nq)
        np.divide(t.at_depth(prefix, k), den, out=v, where=den > 0)
        out.append(v)
    return np.stack(out)


spelling(
    "alpha_DCG",
    "α_DCG",
    style="ir_measures",
    build=_im_diversity("alpha_dcg_cut"),
    roots=("alpha_dcg_cut",),
    args=("alpha", "rel", "judged_only"),
    cutoff="required",
    definition="alpha-DCG at k over S * sum_{i<=k} (1 - alpha)^(i-1) / log2(i + 1) (collection-independent "
    "normalisation), " + _NDEVAL + "; ndeval leaves @1 undivided, ireval divides every k",
)


@measure(
    "nerr_ia_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Chapelle et al., CIKM 2009; Agrawal et al., WSDM 2009; ndeval (TREC Web track)",
)
def nerr_ia_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Intent-aware ERR at k with ndeval's collection-dependent normalisation: the sum over the
    top k of the novelty gain / i (alpha = 0.5), over the same sum for ndeval's greedy ideal
    ranking (needs --subtopics)."""
    st = _prepare(t)
    alpha = _alpha(p)
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha) / t.rank.astype(np.float64))
    depth = int(max(p.values))
    ig = _ideal_gains(t, st, alpha, depth)
    iprefix = np.cumsum(ig / np.arange(1, depth + 1, dtype=np.float64)[None, :], axis=1)
    out = []
    for k in p.values:
        d = t.at_depth(prefix, k)
        i = iprefix[:, k - 1]
        v = np.zeros(t.nq)
        np.divide(d, i, out=v, where=(i > 0) & (d != 0))
        out.append(v)
    return np.stack(out)


spelling(
    "nERR_IA",
    style="ir_measures",
    build=_im_diversity("nerr_ia_cut"),
    roots=("nerr_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware ERR at k over the same for ndeval's greedy ideal ranking (collection-dependent "
    "normalisation), " + _NDEVAL,
)


def _covered(t: EvalTable, st: _Subtopics, alpha: float, p: Params) -> np.ndarray:
    """Per cutoff, a per-row count read at depth k (alpha 0: relevant pairs; 1: new subtopics)."""
    prefix = t.seg_cumsum_exact(_run_gains(t, st, alpha))
    return np.stack([t.at_depth(prefix, k) for k in p.values])


@measure(
    "p_ia_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Agrawal et al., WSDM 2009; ndeval (TREC Web track)",
)
def p_ia_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Intent-aware precision at k as ndeval computes it: the (document, subtopic) relevant pairs
    in the top k over k * S, i.e. P@k averaged over the S subtopics with a relevant document
    (needs --subtopics)."""
    st = _prepare(t)
    count = _covered(t, st, 0.0, p)
    den = np.array([float(k) for k in p.values])[:, None] * st.S.astype(np.float64)[None, :]
    out = np.zeros_like(count)
    np.divide(count, den, out=out, where=den > 0)
    return out


spelling(
    "P_IA",
    style="ir_measures",
    build=_im_diversity("p_ia_cut"),
    roots=("p_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware precision at k: relevant (document, subtopic) pairs in the top k over k * S, " + _NDEVAL,
)


@measure(
    "strec_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    needs_subtopics=True,
    citation="Zhai, Cohen & Lafferty, SIGIR 2003; ndeval (TREC Web track)",
)
def strec_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Subtopic recall at k: the subtopics with a relevant document in the top k over S, the
    subtopics with a relevant document at all (needs --subtopics)."""
    st = _prepare(t)
    count = _covered(t, st, 1.0, p)
    S = st.S.astype(np.float64)[None, :]
    out = np.zeros_like(count)
    np.divide(count, np.broadcast_to(S, count.shape), out=out, where=S > 0)
    return out


spelling(
    "StRecall",
    style="ir_measures",
    build=_im_diversity("strec_cut"),
    roots=("strec_cut",),
    args=("rel",),
    cutoff="required",
    definition="subtopic recall at k: subtopics covered by the top k over S, " + _NDEVAL,
)


@measure("map_ia", needs_subtopics=True, citation="Agrawal et al., WSDM 2009; ndeval (TREC Web track)")
def map_ia(t: EvalTable, p: Params) -> np.ndarray:
    """Intent-aware average precision as ndeval computes it (MAP-IA): the mean over the S
    subtopics with a relevant document of the subtopic's AP, sum over its relevant retrieved
    documents of (its relevant documents at or above) / rank, divided by its number of relevant
    documents (needs --subtopics)."""
    st = _prepare(t)
    prow, psub, seen = _run_pairs(t, st)
    ap_terms = (seen + 1).astype(np.float64) / t.rank[prow].astype(np.float64)
    nrel = np.bincount(st.pair_sub, minlength=st.nsub).astype(np.float64)
    per_sub = np.bincount(psub, weights=ap_terms, minlength=st.nsub)
    ap = np.zeros(st.nsub)
    np.divide(per_sub, nrel, out=ap, where=nrel > 0)
    total = np.bincount(st.sub_topic, weights=ap, minlength=t.nq)
    out = np.zeros(t.nq)
    np.divide(total, st.S.astype(np.float64), out=out, where=st.S > 0)
    return out


def _im_ap_ia(args: dict[str, Any], at: str | None, spec: str) -> Target:
    return Target("map_ia", (), **rel_view(args, spec))


spelling(
    "AP_IA",
    "MAP_IA",
    style="ir_measures",
    build=_im_ap_ia,
    roots=("map_ia",),
    args=("rel", "judged_only"),
    cutoff="none",
    definition="intent-aware AP: the mean over the subtopics of each subtopic's AP, " + _NDEVAL,
)


def _alpha_beta(p: Params, name: str) -> tuple[float, float]:
    if p.values and isinstance(p.values[0], tuple):
        for k, _ in p.values:
            if k not in ("alpha", "beta"):
                raise MeasureParamError(f"{name}: unknown parameter '{k}' (known: alpha, beta)")
    alpha = float(pair(p, "alpha", ALPHA))
    beta = float(pair(p, "beta", BETA))
    for key, v in (("alpha", alpha), ("beta", beta)):
        if not 0.0 <= v <= 1.0:
            raise MeasureParamError(f"{name}: {key}={v:g} is not in [0, 1]")
    return alpha, beta


def _nrbp_sum(gains: np.ndarray, rank: np.ndarray, g: np.ndarray, nq: int, beta: float) -> np.ndarray:
    nmax = int(rank.max()) if len(rank) else 0
    powers = np.cumprod(np.concatenate(([1.0], np.full(max(nmax - 1, 0), beta))))  # beta^(i-1), as ndeval's decay
    return np.bincount(g, weights=gains * powers[rank - 1], minlength=nq) if len(rank) else np.zeros(nq)


def _nrbp(t: EvalTable, st: _Subtopics, alpha: float, beta: float) -> np.ndarray:
    raw = _nrbp_sum(_run_gains(t, st, alpha), t.rank, t.g, t.nq, beta)
    out = np.zeros(t.nq)
    np.divide(raw * (1.0 - (1.0 - alpha) * beta), st.S.astype(np.float64), out=out, where=st.S > 0)
    return out


@measure(
    "nrbp",
    params=PAIRS,
    needs_subtopics=True,
    citation="Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval (TREC Web track)",
)
def nrbp(t: EvalTable, p: Params) -> np.ndarray:
    """Novelty- and rank-biased precision with ndeval's collection-independent normalisation:
    (1 - (1 - alpha) beta) / S * the sum over the whole ranking of the novelty gain * beta^(i-1),
    alpha = beta = 0.5 (nrbp.alpha=0.3,beta=0.8; needs --subtopics)."""
    alpha, beta = _alpha_beta(p, "nrbp")
    return _nrbp(t, _prepare(t), alpha, beta)


def _im_nrbp(root: str) -> Build:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, number_opts(args, spec, "alpha", "beta"), **rel_view(args, spec))

    return build


spelling(
    "NRBP",
    style="ir_measures",
    build=_im_nrbp("nrbp"),
    roots=("nrbp",),
    args=("alpha", "beta", "rel"),
    cutoff="none",
    definition="novelty- and rank-biased precision, (1 - (1 - alpha) beta) / S * sum of novelty "
    "gain * beta^(i-1), alpha = beta = 0.5, " + _NDEVAL,
)


@measure(
    "nnrbp",
    params=PAIRS,
    needs_subtopics=True,
    citation="Clarke, Kolla & Vechtomova, ICTIR 2009; ndeval (TREC Web track)",
)
def nnrbp(t: EvalTable, p: Params) -> np.ndarray:
    """NRBP with ndeval's collection-dependent normalisation: the run's NRBP over the NRBP of
    ndeval's greedy ideal ranking of every judged document (alpha = beta = 0.5; needs
    --subtopics)."""
    alpha, beta = _alpha_beta(p, "nnrbp")
    st = _prepare(t)
    run = _nrbp(t, st, alpha, beta)
    # the ideal ranking's documents with a gain; past the depth where beta^r * S / (1 - beta)
    # is below 1e-18 of the first term, the rest cannot change the sum
    relevant_docs = np.unique(st.pair_doc)
    per_topic = np.bincount(st.doc_topic[relevant_docs], minlength=t.nq)
    depth = int(per_topic.max(initial=0))
    if 0.0 < beta < 1.0 and depth:
        cap = math.log(1e-18 * (1.0 - beta) / max(int(st.S.max(initial=1)), 1)) / math.log(beta)
        depth = min(depth, max(math.ceil(cap), 1))
    elif beta == 0.0:
        depth = min(depth, 1)
    ig = _ideal_gains(t, st, alpha, max(depth, 1))
    ranks = np.arange(1, ig.shape[1] + 1)
    powers = np.cumprod(np.concatenate(([1.0], np.full(len(ranks) - 1, beta))))
    ideal = (ig * powers[None, :]).sum(axis=1) * (1.0 - (1.0 - alpha) * beta)
    ideal_n = np.zeros(t.nq)
    np.divide(ideal, st.S.astype(np.float64), out=ideal_n, where=st.S > 0)
    out = np.zeros(t.nq)
    np.divide(run, ideal_n, out=out, where=ideal_n > 0)
    return out


spelling(
    "nNRBP",
    style="ir_measures",
    build=_im_nrbp("nnrbp"),
    roots=("nnrbp",),
    args=("alpha", "beta", "rel"),
    cutoff="none",
    definition="NRBP over the NRBP of ndeval's greedy ideal ranking, " + _NDEVAL,
)
