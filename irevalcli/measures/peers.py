"""Measures as other evaluators define them: TF-Ranking's and Elasticsearch's.

TF-Ranking (``tfr.keras.metrics``) scores a list of labelled examples: its list is the
run's retrieved documents here, an unjudged document counting as label 0 (give -J to
drop unjudged documents, as TF-Ranking's mask drops labels below 0). Elasticsearch's
``_rank_eval`` scores the top k hits of a search: the run's top k here.
Relevant means a judged label >= -l (default 1), as in trec_eval.
"""

from __future__ import annotations

import numpy as np

from ..registry import Params, measure
from ..table import EvalTable
from ._util import opt
from .ap import _judged_nonrel_rows
from .precision import CUTOFFS, _safe_div


@measure("P_ret", params="long_cutoffs", default=CUTOFFS,
         citation="TF-Ranking's PrecisionMetric (Pasumarthi et al., KDD 2019); Elasticsearch's rank evaluation "
                  "precision (PrecisionAtK)")
def P_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Precision at k over the documents retrieved within k: rel_k / min(k, num_ret) (P.k divides by
    k). With ignore_unlabeled (Elasticsearch's PrecisionAtK(ignore_unlabeled=true)) the
    unjudged documents in the top k count in neither part: rel_k / judged_k; 0 when that is 0."""
    if opt(p, "ignore_unlabeled", False):
        cum = t.seg_cumsum((t.label != -1).astype(np.int64))  # rated: any qrels line (ES ratings)
        return np.stack([_safe_div(t.rel_at(k), t.at_depth(cum, k)) for k in p.values])
    return np.stack([_safe_div(t.rel_at(k), np.minimum(k, t.n)) for k in p.values])


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
    nr = t.count_upto(_judged_nonrel_rows(t), rows)
    R = t.R[gi].astype(np.float64)
    terms = 1.0 - np.minimum(nr, R) / R  # R >= 1 wherever a relevant row exists
    return _safe_div(np.bincount(gi, weights=terms, minlength=t.nq), t.R)


@measure("arp", agg="wmean", citation="TF-Ranking's ARPMetric (Pasumarthi et al., KDD 2019)")
def arp(t: EvalTable, p: Params) -> np.ndarray:
    """Average relevance position: sum_i label_i * rank_i / sum_i label_i over the retrieved
    documents (graded labels; unjudged and negative count 0; lower is better); 0 when no label is
    positive. The summary is the mean weighted by each topic's sum of labels, as TF-Ranking's."""
    lab = np.maximum(t.label, 0).astype(np.float64)
    w = t.seg_sum(lab)
    return np.stack([_safe_div(t.seg_sum(lab * t.rank), w), w])


@measure("opa", agg="wmean", citation="TF-Ranking's OPAMetric (Pasumarthi et al., KDD 2019)")
def opa(t: EvalTable, p: Params) -> np.ndarray:
    """Ordered pair accuracy: among pairs of retrieved documents with different labels (graded;
    unjudged and negative count 0), the fraction whose higher-labelled document ranks higher; no
    value (-nan) for a topic without such a pair. The summary is the mean weighted by each topic's
    number of pairs, as TF-Ranking's. TF-Ranking compares scores and counts a score tie as wrong;
    ireval compares ranks, so a tie counts for the document --ties puts first."""
    lab = np.maximum(t.label, 0)
    correct = np.zeros(t.nq)
    pairs = np.zeros(t.nq)
    for v in np.unique(lab[lab > 0]).tolist():  # a few label levels, not documents
        lower = (lab < v).astype(np.int64)
        above = t.seg_cumsum(lower)  # lower-labelled documents at or above each row
        total_lower = t.seg_sum(lower.astype(np.float64))
        here = lab == v
        correct += t.seg_sum(total_lower[t.g] - above, where=here)
        pairs += t.seg_count(here) * total_lower
    out = np.full(t.nq, np.nan)
    np.divide(correct, pairs, out=out, where=pairs > 0)
    return np.stack([out, pairs])
