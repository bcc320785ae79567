"""C/W/L measures as cwl_eval computes them (the provider ir_measures runs for BPM, SDCG, INSQ, NERR8-11).

The C/W/L framework (Moffat et al.; Azzopardi, Thomas & Moffat, SIGIR 2019) scores a ranking
as the expected rate of gain sum_i W_i g_i, where W_i = prod_{j<i} C_j / sum_m prod_{j<m} C_j
and C_j is the measure's probability of continuing from rank j to j + 1. As cwl_eval does
(and ir_measures' cwl_eval provider calls it), every measure here:

* scales gains to [0, 1]: g = (clip(max(label, 0), min_rel, max_rel) - min_rel) / (max_rel -
  min_rel), unjudged documents 0; min_rel = 0 and max_rel = the highest label in the qrels
  file unless given (ir_measures requires max_rel: ``BPM(max_rel=4)@10``); all 0 when
  max_rel <= min_rel (cwl_eval refuses that);
* cuts the ranking at depth 1000 and pads it there with documents of gain 0 (cwl_eval's
  max_n), so the W_i of ranks past the end of a short ranking still count;
* uses the run's ranking (ireval's tie rule: score descending, then docno descending).

Where the papers and cwl_eval's code differ, these follow cwl_eval's code, since that is
what ir_measures reports. The tail past the ranking is summed in closed form from a
1000-long table of the C/W/L base weights, not row by row.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable
from ..errors import MeasureParamError
from ._util import exclusive, gmax, opt, pair, seg_cumprod, top_k
from .dcg import discount
from .registry import LONG_CUTOFFS, PAIRS, Params, measure
from .spellings import Build, Target, int_cutoff, number_opts, spelling

DEPTH = 1000  # cwl_eval's max_n
CUTOFFS = (5, 10, 20)
CWL = "Azzopardi, Thomas & Moffat, SIGIR 2019 (cwl_eval, as ir_measures runs it)"


def _check_keys(p: Params, name: str, allowed: tuple[str, ...]) -> None:
    if p.values and isinstance(p.values[0], tuple):
        for k, _ in p.values:
            if k not in allowed:
                raise MeasureParamError(f"{name}: unknown parameter '{k}' (known: {', '.join(allowed)})")


def _range(t: EvalTable, p: Params) -> tuple[float, float]:
    lo = float(pair(p, "min_rel", 0.0))
    hi = pair(p, "max_rel", None)
    return lo, float(gmax(t)) if hi is None else float(hi)


def _gain(t: EvalTable, lo: float, hi: float) -> np.ndarray:
    """cwl_eval's gain of each row: the label clipped to [lo, hi] and scaled to [0, 1]."""
    lab = np.maximum(t.label, 0).astype(np.float64)
    return (np.clip(lab, lo, hi) - lo) / (hi - lo)


def _positive(name: str, key: str, value: float) -> float:
    if not value > 0:
        raise MeasureParamError(f"{name}: {key}={value:g} must be positive")
    return value


def _cwl(t: EvalTable, p: Params, base: np.ndarray, depth: int, stop_on_gain: bool) -> np.ndarray:
    """sum_i W_i g_i for W_i proportional to base[i] (times prod_{j<i} (1 - g_j) when
    ``stop_on_gain``) over ranks 1..depth (depth <= 1000), rows past the ranking having g = 0."""
    lo, hi = _range(t, p)
    if hi <= lo:
        return np.zeros(t.nq)
    v = top_k(t, depth)
    g = _gain(v, lo, hi)
    rank = v.rank
    w = base[rank - 1]
    n = v.n
    last = v.starts[1:] - 1
    if stop_on_gain:
        incl = seg_cumprod(1.0 - g, v.starts)
        w = w * exclusive(v, incl)
        reach = np.where(n > 0, incl[np.maximum(last, 0)] if len(incl) else 1.0, 1.0)  # prod over the ranking
    else:
        reach = np.ones(t.nq)
    bsum = np.concatenate(([0.0], np.cumsum(base[:depth])))
    tail = reach * (bsum[depth] - bsum[n])
    num = v.seg_sum(w * g)
    return num / (v.seg_sum(w) + tail)


def _ranks() -> np.ndarray:
    return np.arange(1, DEPTH + 1, dtype=np.float64)


def _insq_base(T: float) -> np.ndarray:
    """prod_{j<i} ((j + 2T - 1) / (j + 2T))^2 for i = 1..1000 (cwl_eval's INSQ continuation)."""
    c = ((_ranks() + 2.0 * T - 1.0) / (_ranks() + 2.0 * T)) ** 2
    return np.concatenate(([1.0], np.cumprod(c[:-1])))


def _cut_depth(k: int) -> int:
    return int(min(k, DEPTH))


@measure("insq", params=PAIRS, citation="Moffat, Scholer & Thomas, ADCS 2012; " + CWL)
def insq(t: EvalTable, p: Params) -> np.ndarray:
    """INSQ: sum_i W_i g_i with C_i = ((i + 2T - 1) / (i + 2T))^2, so W_i is proportional to
    (2T / (i - 1 + 2T))^2 over ranks 1..1000 (T=1); cwl_eval's gains (label - min_rel) /
    (max_rel - min_rel), min_rel=0, max_rel the highest label (insq.T=2,max_rel=3)."""
    _check_keys(p, "insq", ("T", "min_rel", "max_rel"))
    T = _positive("insq", "T", float(pair(p, "T", 1.0)))
    return _cwl(t, p, _insq_base(T), DEPTH, stop_on_gain=False)


_CWL_GAIN = (
    "cwl_eval's gain (label - min_rel) / (max_rel - min_rel) clipped to [0, 1], min_rel=0, max_rel "
    "the highest label unless given; ranking cut and padded to depth 1000"
)


def _im_cwl(root: str, *names: str) -> Build:
    """cwl_eval's measures without a cutoff (depth 1000): INSQ, NERR10, NERR11."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, number_opts(args, spec, *names, "min_rel", "max_rel"))

    return build


spelling(
    "INSQ",
    style="ir_measures",
    build=_im_cwl("insq", "T"),
    roots=("insq",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="INSQ as cwl_eval computes it: weights (2T / (i - 1 + 2T))^2, T = 1; " + _CWL_GAIN,
)


@measure("nerr10", params=PAIRS, citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021, eq. 10; " + CWL)
def nerr10(t: EvalTable, p: Params) -> np.ndarray:
    """NERR (eq. 10): sum_i W_i g_i with C_i = p (1 - g_i), p = 0.9 (nerr10.p=0.8), so W_i is
    proportional to p^(i-1) prod_{j<i} (1 - g_j), over ranks 1..1000; cwl_eval's gains
    (min_rel=0, max_rel the highest label unless given)."""
    _check_keys(p, "nerr10", ("p", "min_rel", "max_rel"))
    phi = float(pair(p, "p", 0.9))
    if not 0.0 <= phi <= 1.0:
        raise MeasureParamError(f"nerr10: p={phi:g} is not in [0, 1]")
    base = np.concatenate(([1.0], np.cumprod(np.full(DEPTH - 1, phi))))
    return _cwl(t, p, base, DEPTH, stop_on_gain=True)


spelling(
    "NERR10",
    style="ir_measures",
    build=_im_cwl("nerr10", "p"),
    roots=("nerr10",),
    args=("p", "min_rel", "max_rel"),
    cutoff="none",
    definition="NERR eq. 10 as cwl_eval computes it: C_i = p (1 - g_i), p = 0.9; " + _CWL_GAIN,
)


@measure("nerr11", params=PAIRS, citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021, eq. 11; " + CWL)
def nerr11(t: EvalTable, p: Params) -> np.ndarray:
    """NERR (eq. 11): sum_i W_i g_i with C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i), T = 1
    (nerr11.T=2), over ranks 1..1000; cwl_eval's gains (min_rel=0, max_rel the highest label
    unless given)."""
    _check_keys(p, "nerr11", ("T", "min_rel", "max_rel"))
    T = _positive("nerr11", "T", float(pair(p, "T", 1.0)))
    return _cwl(t, p, _insq_base(T), DEPTH, stop_on_gain=True)


spelling(
    "NERR11",
    style="ir_measures",
    build=_im_cwl("nerr11", "T"),
    roots=("nerr11",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="NERR eq. 11 as cwl_eval computes it: C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i), T = 1; " + _CWL_GAIN,
)


@measure(
    "nerr8_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021, eq. 8; " + CWL,
)
def nerr8_cut(t: EvalTable, p: Params) -> np.ndarray:
    """NERR at k (eq. 8): sum_{i<=k} g_i prod_{j<i} (1 - g_j) over sum_{i<=k} prod_{j<i} (1 -
    g_j) (C_i = 1 - g_i below k, 0 at k; ranks past the ranking count with g = 0); cwl_eval's
    gains (min_rel=0, max_rel the highest label; NERR8(max_rel=4)@k sets them)."""
    ones = np.ones(DEPTH)
    return np.stack([_cwl(t, p, ones, _cut_depth(k), stop_on_gain=True) for k in p.values])


def _im_cwl_cut(root: str, *names: str) -> Build:
    """cwl_eval's measures with a required cutoff: BPM, SDCG, NERR8, NERR9."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        if args.get("dcg", "log2") != "log2":
            raise MeasureParamError(f"{spec}: dcg={args['dcg']!r} is not 'log2' (the only SDCG form)")
        k = int_cutoff(at, spec)
        return Target(root, (k,), number_opts(args, spec, *names, "min_rel", "max_rel"))

    return build


spelling(
    "NERR8",
    style="ir_measures",
    build=_im_cwl_cut("nerr8_cut"),
    roots=("nerr8_cut",),
    args=("min_rel", "max_rel"),
    cutoff="required",
    definition="NERR eq. 8 (Azzopardi et al. 2021) as cwl_eval computes it: C_i = 1 - g_i truncated at k; " + _CWL_GAIN,
)


@measure(
    "nerr9_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    citation="Azzopardi, Mackenzie & Moffat, ICTIR 2021, eq. 9; " + CWL,
)
def nerr9_cut(t: EvalTable, p: Params) -> np.ndarray:
    """NERR at k (eq. 9): sum_{i<=k} W_i g_i with C_i = i / (i + 1) (1 - g_i) below k, so W_i
    is proportional to prod_{j<i} (1 - g_j) / i; cwl_eval's gains (min_rel=0, max_rel the
    highest label; NERR9(max_rel=4)@k sets them)."""
    inv = 1.0 / _ranks()
    return np.stack([_cwl(t, p, inv, _cut_depth(k), stop_on_gain=True) for k in p.values])


spelling(
    "NERR9",
    style="ir_measures",
    build=_im_cwl_cut("nerr9_cut"),
    roots=("nerr9_cut",),
    args=("min_rel", "max_rel"),
    cutoff="required",
    definition="NERR eq. 9 as cwl_eval computes it: C_i = i / (i + 1) (1 - g_i) truncated at k; " + _CWL_GAIN,
)


@measure(
    "sdcg_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, TOIS 2002 (discount); " + CWL
)
def sdcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Scaled DCG at k (cwl_eval's NDCG-k): sum_{i<=k} g_i / log2(i + 1) over sum_{i<=k} 1 /
    log2(i + 1), i.e. nDCG as if k documents of the top grade existed; cwl_eval's gains
    (min_rel=0, max_rel the highest label; SDCG(max_rel=4)@k sets them)."""
    base = 1.0 / discount(_ranks())
    return np.stack([_cwl(t, p, base, _cut_depth(k), stop_on_gain=False) for k in p.values])


spelling(
    "SDCG",
    style="ir_measures",
    build=_im_cwl_cut("sdcg_cut"),
    roots=("sdcg_cut",),
    args=("dcg", "min_rel", "max_rel"),
    cutoff="required",
    definition="scaled DCG at k as cwl_eval computes it: DCG@k over sum_{i<=k} 1/log2(i+1) "
    "(nDCG as if k top-grade documents existed); " + _CWL_GAIN,
)


@measure(
    "bpm_cut",
    params=LONG_CUTOFFS,
    default=CUTOFFS,
    citation="Zhang, Liu, Li, Zhang, Xu & Ma, SIGIR 2017 (static BPM); " + CWL,
)
def bpm_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Bejeweled Player Model at k (static, as cwl_eval): the user stops at rank m, the first
    rank whose gain so far reaches T or m = k (at most 1000); BPM = the gain of the top m / m.
    T = 1, cwl_eval's gains (min_rel=0, max_rel the highest label; BPM(T=2,max_rel=4)@k)."""
    T = float(opt(p, "T", 1.0))
    lo, hi = _range(t, p)
    out = []
    for k in p.values:
        depth = _cut_depth(k)
        if hi <= lo:
            out.append(np.zeros(t.nq))
            continue
        v = top_k(t, depth)
        S = v.seg_cumsum_exact(_gain(v, lo, hi))  # gain so far, added left to right as np.cumsum
        first = v.seg_first(S >= T, v.rank.astype(np.float64), default=np.inf)
        m = np.minimum(first, float(depth))
        out.append(v.at_depth(S, m.astype(np.int64)) / m)
    return np.stack(out)


spelling(
    "BPM",
    style="ir_measures",
    build=_im_cwl_cut("bpm_cut", "T"),
    roots=("bpm_cut",),
    args=("T", "min_rel", "max_rel"),
    cutoff="required",
    definition="static Bejeweled Player Model as cwl_eval computes it: stop at the first rank "
    "whose gain so far reaches T (1) or at k; the mean gain down to there; " + _CWL_GAIN,
)
