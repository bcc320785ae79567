"""Measures of the retrieved set as a whole: utility and set_*."""

from __future__ import annotations

import numpy as np

from ..core.table import EvalTable
from ._util import safe_div
from .registry import Params, measure


def _four_coefficients(vals: tuple[float, ...]) -> str | None:
    if len(vals) != 4:
        return f"utility takes exactly 4 coefficients (a,b,c,d), got {len(vals)}"
    return None


@measure(
    "utility",
    params="double_params",
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


@measure("set_relative_P")
def set_relative_P(t: EvalTable, p: Params) -> np.ndarray:
    """Relative precision of the retrieved set: rel_ret / min(num_ret, R)."""
    return safe_div(t.rel_ret, np.minimum(t.n, t.R))


@measure("set_recall")
def set_recall(t: EvalTable, p: Params) -> np.ndarray:
    """Recall of the retrieved set: rel_ret / R."""
    return safe_div(t.rel_ret, t.R)


@measure("set_map")
def set_map(t: EvalTable, p: Params) -> np.ndarray:
    """set_P * set_recall, computed as rel_ret^2 / (num_ret * R)."""
    rr = t.rel_ret.astype(np.float64)
    return safe_div(rr * rr, t.n.astype(np.float64) * t.R.astype(np.float64))


@measure("set_F", params="double_params", default=(1.0,))
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
