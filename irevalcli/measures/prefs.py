"""Preference measures (``-R prefs`` / ``-R qrels_prefs``): how many judged preferences a ranking fulfils.

A preference ``a > b`` (document a preferred to document b in one judgement
group, JG) is *fulfilled* when a is ranked above b; a retrieved document counts
as above every unretrieved one. The plain measures count every preference, the
``_ret`` ones only preferences between two retrieved documents, and the ``_imp``
ones those with at least one retrieved document. ``simp`` pools the counts over
all JGs of a topic, ``avgjg`` averages the per-JG ratios, and ``pair`` averages
over document pairs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ._util import safe_div
from .registry import SUM, Params, measure

if TYPE_CHECKING:  # (core.judged is imported when a -R format needs it)
    from ..core.judged import PrefsTable

PREFS_FORMATS = ("prefs", "qrels_prefs")


def _avgjg(t: PrefsTable, ful: np.ndarray, poss: np.ndarray) -> np.ndarray:
    """Mean over a topic's JGs of ful/poss (0 for a JG without possible preferences)."""
    total = t.topic_sum(safe_div(ful, poss))
    return np.where(total > 0, total / np.maximum(t.num_jgs, 1), 0.0)


def _avgjg_rnonrel(t: PrefsTable, *, ret_only: bool) -> np.ndarray:
    """trec_eval's prefs_avgjg_Rnonrel(_ret): as many non-relevant as relevant documents per JG.

    With R >= N (R relevant, N non-relevant documents; _ret: retrieved ones) the
    missing non-relevant documents are assumed unretrieved (R - N extra
    preferences per relevant document, fulfilled for each retrieved one);
    otherwise only the first R non-relevant documents are kept (the ``rc_*``
    recount). A JG with no possible preference gives 0/0 = NaN, which makes the
    topic's value 0, exactly as trec_eval does.
    """
    if ret_only:
        R, N = t.num_rel_ret, t.num_nonrel_ret
        ful, poss = t.fr, t.pr
        rc_ful, rc_poss = t.rc_ful_ret, t.rc_poss_ret
    else:
        R, N = t.num_rel, t.num_nonrel
        ful, poss = t.fr + t.fi, t.pr + t.pi + t.pn
        rc_ful, rc_poss = t.rc_ful, t.rc_poss
    extra = (R - N).astype(np.float64)
    ge = R >= N
    f = np.where(ge, ful + t.num_rel_ret * extra, rc_ful)
    p = np.where(ge, poss + t.num_rel * extra, rc_poss)  # num_rel in both variants, as in trec_eval
    with np.errstate(invalid="ignore", divide="ignore"):
        total = t.topic_sum(f / p)
    ok = total > 0  # NaN compares false
    return np.where(ok, total / np.maximum(t.num_jgs, 1), 0.0)


@measure("prefs_num_prefs_poss", kind="int", direction="none", agg=SUM, rel_formats=PREFS_FORMATS)
def prefs_num_prefs_poss(t: PrefsTable, p: Params) -> np.ndarray:
    """Number of possible preferences: every judged preference of every JG, retrieved or not;
    the summary is the sum over topics."""
    return t.topic_sum(t.pr + t.pi + t.pn)


@measure("prefs_num_prefs_ful", kind="int", agg=SUM, rel_formats=PREFS_FORMATS)
def prefs_num_prefs_ful(t: PrefsTable, p: Params) -> np.ndarray:
    """Number of fulfilled preferences: the preferred document is retrieved and ranked above
    the other (which may be unretrieved); the summary is the sum over topics."""
    return t.topic_sum(t.fr + t.fi)


@measure("prefs_num_prefs_ful_ret", kind="int", agg=SUM, rel_formats=PREFS_FORMATS)
def prefs_num_prefs_ful_ret(t: PrefsTable, p: Params) -> np.ndarray:
    """Number of fulfilled preferences between two retrieved documents; the summary is the sum
    over topics."""
    return t.topic_sum(t.fr)


@measure("prefs_simp", rel_formats=PREFS_FORMATS)
def prefs_simp(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of all possible preferences that are fulfilled, pooled over the topic's JGs."""
    return safe_div(t.topic_sum(t.fr + t.fi), t.topic_sum(t.pr + t.pi + t.pn))


@measure("prefs_pair", rel_formats=PREFS_FORMATS)
def prefs_pair(t: PrefsTable, p: Params) -> np.ndarray:
    """Mean over document pairs with any preference of the fraction of their preferences
    (summed over JGs) that the ranking fulfils; pairs of unretrieved documents count 0."""
    return safe_div(t.pair_sum_all, t.pairs_rr + t.pairs_ru + t.pairs_uu)


@measure("prefs_avgjg", rel_formats=PREFS_FORMATS)
def prefs_avgjg(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of possible preferences fulfilled, computed per judgement group (JG: one set of
    judgements, such as one user's) and averaged over the topic's JGs."""
    return _avgjg(t, t.fr + t.fi, t.pr + t.pi + t.pn)


@measure("prefs_avgjg_Rnonrel", rel_formats=PREFS_FORMATS)
def prefs_avgjg_Rnonrel(t: PrefsTable, p: Params) -> np.ndarray:
    """prefs_avgjg as if each JG had as many non-relevant (level <= 0) as relevant documents,
    so that relevant-vs-nonrelevant preferences do not swamp the others."""
    return _avgjg_rnonrel(t, ret_only=False)


@measure("prefs_simp_ret", rel_formats=PREFS_FORMATS)
def prefs_simp_ret(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of preferences between two retrieved documents that are fulfilled, pooled over
    the topic's JGs."""
    return safe_div(t.topic_sum(t.fr), t.topic_sum(t.pr))


@measure("prefs_pair_ret", rel_formats=PREFS_FORMATS)
def prefs_pair_ret(t: PrefsTable, p: Params) -> np.ndarray:
    """prefs_pair over pairs of two retrieved documents only."""
    return safe_div(t.pair_sum_rr, t.pairs_rr)


@measure("prefs_avgjg_ret", rel_formats=PREFS_FORMATS)
def prefs_avgjg_ret(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of preferences between retrieved documents fulfilled, per JG, averaged over the
    topic's JGs."""
    return _avgjg(t, t.fr, t.pr)


@measure("prefs_avgjg_Rnonrel_ret", rel_formats=PREFS_FORMATS)
def prefs_avgjg_Rnonrel_ret(t: PrefsTable, p: Params) -> np.ndarray:
    """prefs_avgjg_Rnonrel restricted to retrieved documents (as many retrieved non-relevant as
    retrieved relevant documents per JG)."""
    return _avgjg_rnonrel(t, ret_only=True)


@measure("prefs_simp_imp", rel_formats=PREFS_FORMATS)
def prefs_simp_imp(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of preferences involving at least one retrieved document that are fulfilled,
    pooled over the topic's JGs."""
    return safe_div(t.topic_sum(t.fr + t.fi), t.topic_sum(t.pr + t.pi))


@measure("prefs_pair_imp", rel_formats=PREFS_FORMATS)
def prefs_pair_imp(t: PrefsTable, p: Params) -> np.ndarray:
    """prefs_pair over pairs with at least one retrieved document."""
    return safe_div(t.pair_sum_all, t.pairs_rr + t.pairs_ru)


@measure("prefs_avgjg_imp", rel_formats=PREFS_FORMATS)
def prefs_avgjg_imp(t: PrefsTable, p: Params) -> np.ndarray:
    """Fraction of preferences involving a retrieved document fulfilled, per JG, averaged over
    the topic's JGs."""
    return _avgjg(t, t.fr + t.fi, t.pr + t.pi)
