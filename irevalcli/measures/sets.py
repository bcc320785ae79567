"""Measures of the retrieved set as a whole: utility and set_*."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable
from ._util import safe_div
from .registry import DOUBLE_PARAMS, Params, measure
from .spellings import REL, Build, Target, int_cutoff, number_arg, rel_view, spelling


def _four_coefficients(vals: tuple[float, ...]) -> str | None:
    if len(vals) != 4:
        return f"utility takes exactly 4 coefficients (a,b,c,d), got {len(vals)}"
    return None


@measure(
    "utility",
    params=DOUBLE_PARAMS,
    default=(1.0, -1.0, 0.0, 0.0),
    check_params=_four_coefficients,
    placeholder="zero_named",
)
def utility(t: EvalTable, p: Params) -> np.ndarray:
    """Linear utility a*rel_ret + b*nonrel_ret + c*rel_not_ret + d*nonrel_not_ret (default
    1,-1,0,0); the collection size comes from -N (default 0)."""
    a, b, c, d = p.values
    rr = t.rel_ret
    n = t.n
    R = t.R
    N = t.opts.num_docs
    return a * rr + b * (n - rr) + c * (R - rr) + d * (N + rr - n - R)


@measure("set_P")
def set_P(t: EvalTable, p: Params) -> np.ndarray:
    """Precision of the whole retrieved set: rel_ret / num_ret."""
    return safe_div(t.rel_ret, t.n)


def _set_view(args: dict[str, Any], at: str | None, spec: str) -> dict[str, Any]:
    """The set measures' views: ``@k`` first evaluates the top k only (as -M k), then rel/judged_only."""
    k = int_cutoff(at, spec)
    rest = rel_view(args, spec)
    views = ([("top", k)] if k is not None else []) + ([rest["view"], *rest["views"]] if rest else [])
    return {"view": views[0], "views": tuple(views[1:])} if views else {}


def _im_setp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    root = "set_relative_P" if args.get("relative") is True else "set_P"
    return Target(root, (), **_set_view({k: v for k, v in args.items() if k != "relative"}, at, spec))


_SET_AT = " @k evaluates the top k only (as trec_eval's -M k); ir_measures parses SetP@k but no provider computes it"

spelling(
    "SetP",
    style="ir_measures",
    build=_im_setp,
    roots=("set_P", "set_relative_P"),
    args=("rel", "relative", "judged_only"),
    definition="precision of the retrieved set (trec_eval's set_P);" + _SET_AT,
)


@measure("set_relative_P")
def set_relative_P(t: EvalTable, p: Params) -> np.ndarray:
    """Relative precision of the retrieved set: rel_ret / min(num_ret, R)."""
    return safe_div(t.rel_ret, np.minimum(t.n, t.R))


def _im_set(root: str) -> Build:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, (), **_set_view(args, at, spec))

    return build


spelling(
    "SetRelP",
    style="ir_measures",
    build=_im_set("set_relative_P"),
    roots=("set_relative_P",),
    args=REL,
    definition="trec_eval's set_relative_P;" + _SET_AT,
)


@measure("set_recall")
def set_recall(t: EvalTable, p: Params) -> np.ndarray:
    """Recall of the retrieved set: rel_ret / R."""
    return safe_div(t.rel_ret, t.R)


spelling(
    "SetR",
    style="ir_measures",
    build=_im_set("set_recall"),
    roots=("set_recall",),
    args=("rel",),
    definition="recall of the retrieved set (trec_eval's set_recall);" + _SET_AT,
)


@measure("set_map")
def set_map(t: EvalTable, p: Params) -> np.ndarray:
    """set_P * set_recall, computed as rel_ret^2 / (num_ret * R)."""
    rr = t.rel_ret.astype(np.float64)
    return safe_div(rr * rr, t.n.astype(np.float64) * t.R.astype(np.float64))


spelling(
    "SetAP",
    style="ir_measures",
    build=_im_set("set_map"),
    roots=("set_map",),
    args=REL,
    definition="set_P * set_recall (trec_eval's set_map);" + _SET_AT,
)


@measure("set_F", params=DOUBLE_PARAMS, default=(1.0,))
def set_F(t: EvalTable, p: Params) -> np.ndarray:
    """F measure of the retrieved set, (x+1)*P*R / (x*P + R) with x the parameter (default 1:
    the harmonic mean of set precision and set recall)."""
    x = p.values[0]
    rr = t.rel_ret
    P = safe_div(rr, t.n)
    Rc = safe_div(rr, t.R)
    with np.errstate(invalid="ignore", divide="ignore"):
        f = (x + 1.0) * P * Rc / (x * P + Rc)
    return np.where(rr > 0, f, 0.0)


def _im_setf(args: dict[str, Any], at: str | None, spec: str) -> Target:
    beta = number_arg(args, "beta", 1.0, spec)
    return Target("set_F", (beta,), **_set_view({k: v for k, v in args.items() if k != "beta"}, at, spec))


spelling(
    "SetF",
    style="ir_measures",
    build=_im_setf,
    roots=("set_F",),
    args=("rel", "beta", "judged_only"),
    definition="F of the retrieved set (trec_eval's set_F; its parameter is beta as given);" + _SET_AT,
)
