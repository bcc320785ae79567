"""Compatibility (Clarke, Vtyurina & Smucker, TOIS 2021): rank-biased overlap with an ideal ranking.

As ir_measures' compat provider computes it: the ideal ranking holds every judged document
with a label >= -l (default 1: ir_measures' label > 0), highest label first; equal labels
in the order of the run, retrieved documents before unretrieved ones. With n retrieved, K
ideal documents and depth D = max(n, K),

    RBO(run, ideal) = sum_{d<=D} p^(d-1) |run[:d] & ideal[:d]| / d  /  sum_{d<=D} p^(d-1)

and compat = RBO(run, ideal) / RBO(ideal, ideal) (normalize=1, the default), or the plain
RBO with normalize=0; p = 0.95. A document in both lists joins the overlap at depth
max(its rank in the run, its rank in the ideal), so the sum is taken over those documents
from a table of prefix sums, with no loop over depths.

Deliberate difference: ir_measures orders equal labels by run score with unretrieved
documents scoring 0.0, so with negative scores an unretrieved document can come first;
ireval always puts the retrieved ones first (in run order).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable, distinct
from ..errors import MeasureParamError
from ._util import pair
from .registry import PAIRS, Params, measure
from .spellings import Target, number_opts, spelling


@measure("compat", params=PAIRS, citation="Clarke, Vtyurina & Smucker, TOIS 2021 (ir_measures' compat provider)")
def compat(t: EvalTable, p: Params) -> np.ndarray:
    """Compatibility: rank-biased overlap (p = 0.95) of the run with the ideal ranking (every
    judged document with label >= -l, highest label first, ties in run order), to depth
    max(n, K), divided by the ideal ranking's overlap with itself (compat.p=0.8; normalize=0
    gives the plain RBO)."""
    if p.values and isinstance(p.values[0], tuple):
        for k, _ in p.values:
            if k not in ("p", "normalize"):
                raise MeasureParamError(f"compat: unknown parameter '{k}' (known: p, normalize)")
    persist = float(pair(p, "p", 0.95))
    if not 0.0 <= persist <= 1.0:
        raise MeasureParamError(f"compat: p={persist:g} is not in [0, 1]")
    normalize = pair(p, "normalize", 1.0)
    if normalize not in (0, 1, True, False):
        raise MeasureParamError(f"compat: normalize={normalize:g} is not 0 or 1")

    # ideal list: relevant judgements of each topic by label (dense ranks, highest first)
    m = t.judged & (t.qrel >= t.level)
    qg, ql = t.qg[m], t.qrel[m]
    K = np.bincount(qg, minlength=t.nq).astype(np.int64)
    levels = distinct(ql)
    nd = max(len(levels), 1)
    keys = np.sort(qg * nd + (nd - 1 - np.searchsorted(levels, ql)))
    # retrieved relevant rows: their ideal position = (relevant judged with a higher label)
    # + (retrieved ones with the same label ranked above) + 1
    rows = t.rel_rows
    if t.level < 0:
        rows = rows[t.label[rows] >= 0]
    g, lab, rank = t.g[rows], t.label[rows], t.rank_at(rows)
    inv = nd - 1 - np.searchsorted(levels, lab)
    higher = np.searchsorted(keys, g * nd + inv) - np.searchsorted(keys, g * nd)
    order = np.lexsort((rank, inv, g))
    grp = g[order] * nd + inv[order]
    first = np.concatenate(([True], grp[1:] != grp[:-1])) if len(grp) else np.zeros(0, dtype=bool)
    start = np.maximum.accumulate(np.where(first, np.arange(len(grp)), 0)) if len(grp) else grp
    above = np.empty(len(grp), dtype=np.int64)
    above[order] = np.arange(len(grp)) - start
    enter = np.maximum(rank, higher + above + 1)

    D = np.maximum(t.n, K)
    dmax = int(D.max(initial=0))
    powers = np.cumprod(np.concatenate(([1.0], np.full(max(dmax - 1, 0), persist))))  # p^(d-1), as weight *= p
    depth = np.arange(1, dmax + 1, dtype=np.float64)
    wc = np.concatenate(([0.0], np.cumsum(powers / depth)))  # sum_{d<=x} p^(d-1) / d
    pc = np.concatenate(([0.0], np.cumsum(powers)))  # sum_{d<=x} p^(d-1)
    score = np.bincount(g, weights=wc[D[g]] - wc[enter - 1], minlength=t.nq)
    out = np.zeros(t.nq)
    if normalize:
        best = pc[K] + K * (wc[D] - wc[K])
        np.divide(score, best, out=out, where=best > 0)
    else:
        np.divide(score, pc[D], out=out, where=pc[D] > 0)
    return out


def _im_compat(args: dict[str, Any], at: str | None, spec: str) -> Target:
    pairs = list(number_opts(args, spec, "p"))
    if "normalize" in args:
        norm = args["normalize"]
        if not isinstance(norm, bool):
            raise MeasureParamError(f"{spec}: normalize={norm!r} is not True or False")
        pairs.append(("normalize", float(norm)))
    return Target("compat", tuple(pairs))


spelling(
    "Compat",
    style="ir_measures",
    build=_im_compat,
    roots=("compat",),
    args=("p", "normalize"),
    cutoff="none",
    definition="compatibility (Clarke et al. 2021) as ir_measures' compat provider computes it: rank-biased overlap "
    "(p = 0.95) with the ideal ranking to depth max(n, K), over the ideal's overlap with itself",
)
