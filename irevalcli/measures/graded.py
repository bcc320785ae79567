"""Graded measures ireval adds: DCG/nDCG variants, CG, ERR, pFound, INST, RBP with raw labels.

The DCG arithmetic (discounts, running and ideal DCG) is the kernel in ``dcg.py``,
shared with trec_eval's ndcg family in ``gain.py``. Gains come from the relevance label of each document (unjudged and negative labels
count 0); like trec_eval's ndcg family these measures ignore -l. The ideal ranking
of a topic holds every judged document with a positive label, highest first. Where
a measure needs the top label g_max (ERR, pFound, INST) it is the highest label in
the judgements of the evaluated topics unless a parameter sets it.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from ..core.table import EvalTable, seg_cumsum_exact
from ..errors import MeasureParamError
from . import dcg as dcg_kernel
from ._util import exclusive, gmax, ideal, opt, pair, row_label, seg_cumprod
from .precision import CUTOFFS
from .registry import LONG_CUTOFFS, PAIRS, Params, measure
from .spellings import Target, int_cutoff, number_arg, number_opts, ranx, simple, spelling

ERR_CUTOFFS = (5, 10, 20)


# ---- DCG family -----------------------------------------------------------------


def _gain(label: np.ndarray, form: str) -> np.ndarray:
    if form == "exp":
        return np.exp2(label) - 1.0
    return label


def _positive_rows(t: EvalTable) -> np.ndarray:
    """Rows with a positive label: the only rows with a gain (0 elsewhere, in both forms)."""

    def rows() -> np.ndarray:
        j = t.judged_rows
        return j[t.label[j] > 0]

    return t.memo("positive_rows", rows)


def _dcg_prefix(t: EvalTable, gain: str, disc: str) -> tuple[np.ndarray, np.ndarray]:
    """Running DCG within each topic (a ``t.sparse_running`` result: the other rows add 0)."""

    def prefix() -> tuple[np.ndarray, np.ndarray]:
        rows = _positive_rows(t)
        return dcg_kernel.running(t, rows, _gain(t.label[rows].astype(np.float64), gain), disc)

    return t.memo(("dcg_prefix", gain, disc), prefix)


def _idcg_prefix(t: EvalTable, gain: str, disc: str) -> np.ndarray:

    def prefix() -> np.ndarray:
        il = ideal(t)
        return dcg_kernel.ideal_prefix(_gain(il.label, gain), il.pos, il.start, disc)

    return t.memo(("idcg_prefix", gain, disc), prefix)


def _dcg_at(t: EvalTable, k: np.ndarray | int, gain: str, disc: str) -> np.ndarray:
    return t.sparse_at_depth(_dcg_prefix(t, gain, disc), k)


def _ndcg_at(t: EvalTable, k: np.ndarray | int, gain: str, disc: str) -> np.ndarray:
    d = _dcg_at(t, k, gain, disc)
    il = ideal(t)
    i = dcg_kernel.ideal_at(_idcg_prefix(t, gain, disc), il.start, il.K, k)
    out = np.zeros(t.nq, dtype=np.float64)
    np.divide(d, i, out=out, where=i > 0)
    return out


def _everything(t: EvalTable) -> np.ndarray:
    """A per-topic depth that covers the whole ranking and the whole ideal list."""
    return np.maximum(t.n, ideal(t).K)


@measure("dcg_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, TOIS 2002")
def dcg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """DCG at k with linear gain: the sum over the top k of rel_i / log2(i + 1)."""
    return np.stack([_dcg_at(t, k, "lin", "log") for k in p.values])


@measure("dcg_exp_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Burges et al., ICML 2005")
def dcg_exp_cut(t: EvalTable, p: Params) -> np.ndarray:
    """DCG at k with exponential gain: the sum over the top k of (2^rel_i - 1) / log2(i + 1)."""
    return np.stack([_dcg_at(t, k, "exp", "log") for k in p.values])


@measure("dcg_exp", citation="Burges et al., ICML 2005")
def dcg_exp(t: EvalTable, p: Params) -> np.ndarray:
    """DCG of the whole ranking with exponential gain: the sum of (2^rel_i - 1) / log2(i + 1)."""
    return _dcg_at(t, t.n, "exp", "log")


spelling(
    "dcg_burges",
    style="ranx",
    build=ranx("dcg_exp", "dcg_exp_cut"),
    roots=("dcg_exp", "dcg_exp_cut"),
    definition="DCG at k, gain 2^label - 1",
)


@measure("ndcg_exp", citation="Burges et al., ICML 2005")
def ndcg_exp(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG of the whole ranking with exponential gain: DCG with gain 2^rel - 1 over the DCG of
    the whole ideal ranking (0 when no document has a positive label)."""
    return _ndcg_at(t, _everything(t), "exp", "log")


spelling(
    "ndcg_burges",
    style="ranx",
    build=ranx("ndcg_exp", "ndcg_exp_cut"),
    roots=("ndcg_exp", "ndcg_exp_cut"),
    definition="nDCG at k, gain 2^label - 1",
)


@measure("ndcg_exp_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Burges et al., ICML 2005")
def ndcg_exp_cut(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG at k with exponential gain: the sum over the top k of (2^rel_i - 1) / log2(i + 1),
    over the same sum for the ideal top k (as gdeval and ranx's ndcg_burges compute it)."""
    return np.stack([_ndcg_at(t, k, "exp", "log") for k in p.values])


@measure("dcg_jk_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, SIGIR 2000")
def dcg_jk_cut(t: EvalTable, p: Params) -> np.ndarray:
    """DCG at k in the original Järvelin–Kekäläinen form: rel_1 + the sum over 2 <= i <= k of
    rel_i / log2(i)."""
    return np.stack([_dcg_at(t, k, "lin", "jk") for k in p.values])


@measure("ndcg_jk_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, SIGIR 2000")
def ndcg_jk_cut(t: EvalTable, p: Params) -> np.ndarray:
    """nDCG at k in the original Järvelin–Kekäläinen form: (rel_1 + the sum over 2 <= i <= k of
    rel_i / log2(i)) over the same sum for the ideal top k."""
    return np.stack([_ndcg_at(t, k, "lin", "jk") for k in p.values])


@measure("cg_cut", params=LONG_CUTOFFS, default=CUTOFFS, citation="Järvelin & Kekäläinen, SIGIR 2000")
def cg_cut(t: EvalTable, p: Params) -> np.ndarray:
    """Cumulative gain at k: the sum of the relevance labels of the top k documents."""

    def prefix() -> tuple[np.ndarray, np.ndarray]:
        rows = _positive_rows(t)
        return t.sparse_running(rows, t.label[rows].astype(np.float64))

    running = t.memo("cg_prefix", prefix)
    return np.stack([t.sparse_at_depth(running, k) for k in p.values])


spelling(
    "CG",
    style="ireval",
    build=simple("cg_cut", cut_root="cg_cut", rel=False),
    roots=("cg_cut",),
    cutoff="required",
    definition="cumulative gain at k: the sum of the labels of the top k",
)


# ---- cascade measures: ERR and pFound ---------------------------------------------


def _gmax_param(t: EvalTable, p: Params, name: str) -> int:
    value = pair(p, "gmax", None)
    if value is None:
        return gmax(t)
    if value < 0 or value != int(value):
        raise MeasureParamError(f"{name}: gmax={value:g} is not a non-negative integer")
    return int(value)


def _stop_prob(t: EvalTable, g_max: int) -> np.ndarray:
    """R(g) = (2^g - 1) / 2^g_max for each row, labels clipped to [0, g_max]."""
    g = np.clip(t.label, 0, g_max).astype(np.float64)
    return (np.exp2(g) - 1.0) / np.exp2(float(g_max))


def _check_keys(p: Params, name: str, allowed: tuple[str, ...]) -> None:
    if p.values and isinstance(p.values[0], tuple):
        for k, _ in p.values:
            if k not in allowed:
                raise MeasureParamError(f"{name}: unknown parameter '{k}' (known: {', '.join(allowed)})")


def _depth(p: Params, t: EvalTable) -> np.ndarray | int:
    k = pair(p, "k", None)
    return t.n if k is None else int(k)


def _err_prefix(t: EvalTable, g_max: int) -> np.ndarray:

    def prefix() -> np.ndarray:
        r = _stop_prob(t, g_max)
        reach = exclusive(t, seg_cumprod(1.0 - r, t.starts))
        return t.seg_cumsum_exact(r * reach / t.rank.astype(np.float64))

    return t.memo(("err_prefix", g_max), prefix)


@measure("err", params=PAIRS, citation="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009")
def err(t: EvalTable, p: Params) -> np.ndarray:
    """Expected reciprocal rank: the sum over ranks i of R_i / i * prod_{j<i} (1 - R_j), with
    R = (2^rel - 1) / 2^g_max; g_max is the highest label unless given (err.gmax=4), and k=K
    stops at rank K."""
    _check_keys(p, "err", ("gmax", "k"))
    return t.at_depth(_err_prefix(t, _gmax_param(t, p, "err")), _depth(p, t))


def _im_err(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    if k is None:
        return Target("err", (("gmax", 4.0),))
    return Target("err_cut", (k,), (("gmax", 4),))


spelling(
    "ERR",
    style="ir_measures",
    build=_im_err,
    roots=("err", "err_cut"),
    definition="ERR as gdeval computes it for ir_measures: g_max fixed at 4, R = (2^label - 1) / 16; "
    "ireval's err_cut.k takes g_max from the qrels",
)


@measure("err_cut", params=LONG_CUTOFFS, default=ERR_CUTOFFS, citation="Chapelle, Metzler, Zhang & Grinspan, CIKM 2009")
def err_cut(t: EvalTable, p: Params) -> np.ndarray:
    """ERR at k: the sum over the top k of R_i / i * prod_{j<i} (1 - R_j), R = (2^rel - 1) /
    2^g_max, g_max the highest label in the qrels file."""
    prefix = _err_prefix(t, _gmax_param(t, p, "err_cut"))
    return np.stack([t.at_depth(prefix, k) for k in p.values])


def _pfound_prefix(t: EvalTable, g_max: int, p_break: float) -> np.ndarray:

    def prefix() -> np.ndarray:
        r = _stop_prob(t, g_max)
        look = exclusive(t, seg_cumprod((1.0 - r) * (1.0 - p_break), t.starts))
        return t.seg_cumsum_exact(look * r)

    return t.memo(("pfound_prefix", g_max, p_break), prefix)


def _p_break(p: Params, name: str) -> float:
    pb = float(pair(p, "p_break", 0.15))
    if not 0.0 <= pb <= 1.0:
        raise MeasureParamError(f"{name}: p_break={pb:g} is not a probability in [0, 1]")
    return pb


@measure("pfound", params=PAIRS, citation="Segalovich, ROMIP 2009 (Yandex)")
def pfound(t: EvalTable, p: Params) -> np.ndarray:
    """pFound: the sum over ranks of pLook_i * pRel_i, pLook_1 = 1, pLook_{i+1} = pLook_i *
    (1 - pRel_i) * (1 - p_break), pRel = (2^rel - 1) / 2^g_max; p_break=0.15, g_max the highest
    label, and k=K stops at rank K unless given."""
    _check_keys(p, "pfound", ("p_break", "gmax", "k"))
    prefix = _pfound_prefix(t, _gmax_param(t, p, "pfound"), _p_break(p, "pfound"))
    return t.at_depth(prefix, _depth(p, t))


def _ir_pfound(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = int_cutoff(at, spec)
    opts = number_opts(args, spec, "p_break", "gmax")
    if k is None:
        return Target("pfound", opts)
    return Target("pfound_cut", (k,), opts)


spelling(
    "pFound",
    style="ireval",
    build=_ir_pfound,
    roots=("pfound", "pfound_cut"),
    args=("p_break", "gmax"),
    definition="pFound (Yandex): p_break 0.15, pRel = (2^label - 1) / 2^g_max, g_max the highest label in the qrels",
)


@measure("pfound_cut", params=LONG_CUTOFFS, default=ERR_CUTOFFS, citation="Segalovich, ROMIP 2009 (Yandex)")
def pfound_cut(t: EvalTable, p: Params) -> np.ndarray:
    """pFound at k: the sum over the top k of pLook_i * pRel_i with p_break 0.15 and pRel =
    (2^rel - 1) / 2^g_max."""
    prefix = _pfound_prefix(t, _gmax_param(t, p, "pfound_cut"), _p_break(p, "pfound_cut"))
    return np.stack([t.at_depth(prefix, k) for k in p.values])


# ---- INST ------------------------------------------------------------------------

INST_DEPTH = 1000


def _trigamma(x: np.ndarray) -> np.ndarray:
    """psi_1(x) for x > 0: recurrence up to x >= 20, then the asymptotic series."""
    x = np.asarray(x, dtype=np.float64).copy()
    acc = np.zeros_like(x)
    for _ in range(20):
        small = x < 20.0
        if not small.any():
            break
        acc[small] += 1.0 / (x[small] * x[small])
        x[small] += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    series = inv + inv2 / 2.0 + inv * inv2 * (1.0 / 6.0 - inv2 * (1.0 / 30.0 - inv2 * (1.0 / 42.0 - inv2 / 30.0)))
    return acc + series


@measure("inst", params=PAIRS, citation="Moffat, Bailey, Scholer & Thomas, ADCS 2015")
def inst(t: EvalTable, p: Params) -> np.ndarray:
    """INST: the expected rate of gain sum_i W_i g_i of an adaptive user with target T (T=1),
    continuing from rank i with C_i = ((i + T + T_i - 1) / (i + T + T_i))^2, T_i = T - the gain
    so far; g = (rel - min_rel) / (max_rel - min_rel) clipped to [0, 1] (min_rel=0, max_rel the
    highest label); the ranking is cut or padded with non-relevant documents to depth 1000, as
    cwl_eval does."""
    _check_keys(p, "inst", ("T", "min_rel", "max_rel"))
    T = float(pair(p, "T", 1.0))
    lo = float(pair(p, "min_rel", 0.0))
    hi = pair(p, "max_rel", None)
    hi = float(gmax(t)) if hi is None else float(hi)
    if T <= 0:
        raise MeasureParamError(f"inst: T={T:g} must be positive")
    if hi <= lo:
        return np.zeros(t.nq)
    D = INST_DEPTH
    keep = t.rank <= D
    g = t.g[keep]
    rank = t.rank[keep].astype(np.float64)
    gain = (np.clip(np.maximum(t.label[keep], 0).astype(np.float64), lo, hi) - lo) / (hi - lo)
    n = np.minimum(t.n, D)
    starts = np.zeros(t.nq + 1, dtype=np.int64)
    np.cumsum(n, out=starts[1:])
    S = seg_cumsum_exact(gain, starts)  # gain so far, inclusive
    c = ((rank + 2.0 * T - S - 1.0) / (rank + 2.0 * T - S)) ** 2
    incl = seg_cumprod(c, starts)
    reach = np.empty_like(incl)  # prod_{j<i} C_j
    if len(reach):
        reach[1:] = incl[:-1]
        reach[starts[:-1][n > 0]] = 1.0
    num = np.bincount(g, weights=reach * gain, minlength=t.nq)
    head = np.bincount(g, weights=reach, minlength=t.nq)
    # positions n+1..D hold no gain: C telescopes, prod_{j=n+1}^{m} C_j = ((n + a) / (m + a))^2
    last = np.maximum(starts[1:] - 1, 0)
    has = n > 0
    P_n = np.where(has, incl[last] if len(incl) else 1.0, 1.0)
    S_n = np.where(has, S[last] if len(S) else 0.0, 0.0)
    a = 2.0 * T - S_n
    x0 = n.astype(np.float64) + a
    tail = np.where(n < D, P_n * x0 * x0 * (_trigamma(x0) - _trigamma(D + a)), 0.0)
    return num / (head + tail)


def _im_inst(args: dict[str, Any], at: str | None, spec: str) -> Target:
    pairs = [("T", number_arg(args, "T", 1.0, spec)), ("min_rel", number_arg(args, "min_rel", 0.0, spec))]
    pairs += number_opts(args, spec, "max_rel")
    return Target("inst", tuple(pairs))


spelling(
    "INST",
    style="ir_measures",
    build=_im_inst,
    roots=("inst",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="INST as cwl_eval computes it: gain (label - min_rel) / (max_rel - min_rel), depth 1000",
)


# ---- RBP with raw labels ---------------------------------------------------------


@measure("rbp_label", params=PAIRS, citation="Moffat & Zobel, TOIS 2008")
def rbp_label(t: EvalTable, p: Params) -> np.ndarray:
    """RBP with the relevance label itself as gain (no rescaling, so it exceeds 1 with labels
    above 1): (1 - p) * the sum of rel_i * p^(i-1), p = 0.9 unless given (rbp_label.p=0.8), as
    ranx computes rbp."""
    _check_keys(p, "rbp_label", ("p",))
    persist = float(pair(p, "p", opt(p, "p", 0.9)))
    if not 0.0 <= persist < 1.0:
        raise MeasureParamError(f"rbp_label: p={persist:g} is not in [0, 1)")
    nmax = int(t.n.max()) if t.nq and len(t.n) else 0
    seq = np.full(nmax + 1, persist)
    seq[0] = 1.0
    powers = np.cumprod(seq)
    lab = row_label(t)
    return (1.0 - persist) * t.seg_sum(lab * powers[t.rank - 1])


def _ranx_rbp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if at is None or not re.fullmatch(r"[0-9]+", at):
        raise MeasureParamError(f"{spec}: ranx's rbp needs its persistence as digits, e.g. rbp.95 (p = 0.95)")
    view: dict[str, Any] = {"view": ("drop", args["level"])} if "level" in args else {}
    return Target("rbp_label", (("p", float(f"0.{at}")),), **view)


spelling(
    "rbp",
    style="ranx",
    build=_ranx_rbp,
    roots=("rbp_label",),
    dotted=True,
    definition="RBP with persistence 0.NN from rbp.NN and the raw label as gain (no rescaling)",
)
