"""Judgement-group measures (``-R qrels_jg``): qrels measures averaged over a topic's judgement groups.

A qrels_jg file is a qrels file whose second column names a judgement group
(JG), e.g. one assessor. Each JG's judgements score the ranking as a qrels file
would; the topic's value is the mean over its JGs (a JG with no relevant
document scores 0 and still counts).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .ap import map_
from .precision import CUTOFFS, P, Rprec_mult
from .registry import DOUBLE_CUTOFFS, LONG_CUTOFFS, Params, measure

if TYPE_CHECKING:  # (core.judged is imported when a -R format needs it)
    from ..core.judged import JgTable

JG_FORMATS = ("qrels_jg",)


@measure("map_avgjg", rel_formats=JG_FORMATS)
def map_avgjg(t: JgTable, p: Params) -> np.ndarray:
    """Average precision (map) per judgement group, averaged over the topic's judgement groups."""
    return t.average_over_jgs(map_(t.segments, p))


@measure("P_avgjg", params=LONG_CUTOFFS, default=CUTOFFS, rel_formats=JG_FORMATS)
def P_avgjg(t: JgTable, p: Params) -> np.ndarray:
    """Precision at k per judgement group, averaged over the topic's judgement groups."""
    return t.average_over_jgs(P(t.segments, p))


@measure(
    "Rprec_mult_avgjg",
    params=DOUBLE_CUTOFFS,
    default=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    rel_formats=JG_FORMATS,
)
def Rprec_mult_avgjg(t: JgTable, p: Params) -> np.ndarray:
    """Precision at x*R documents (R: that group's relevant count) per judgement group, averaged
    over the topic's judgement groups."""
    return t.average_over_jgs(Rprec_mult(t.segments, p))
