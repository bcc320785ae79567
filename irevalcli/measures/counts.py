"""Counts and identifiers: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""

from __future__ import annotations

import numpy as np

from ..core.table import EvalTable
from .registry import Params, measure

ALL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


@measure("runid", kind="str", agg="runid", per_query=False, rel_formats=ALL_FORMATS)
def runid(t: EvalTable, p: Params) -> list[list[str]]:
    """Run identifier: the 6th field of the last data line of the run file (summary only)."""
    return [[t.runid] * t.nq]


@measure("num_q", kind="int", agg="num_q", per_query=False, rel_formats=ALL_FORMATS)
def num_q(t: EvalTable, p: Params) -> np.ndarray:
    """Number of topics evaluated (under -c: every judged topic) (summary only)."""
    return np.zeros(t.nq)


@measure("num_ret", kind="int", agg="sum", placeholder="zero_named")
def num_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of documents retrieved (after -M and -J); the summary is the sum over topics."""
    return t.n.astype(np.float64)


@measure("num_rel", kind="int", agg="num_rel")
def num_rel(t: EvalTable, p: Params) -> np.ndarray:
    """Number of relevant documents (judged rel >= -l); the summary is the sum, or under -c
    the number of qrels lines with rel > 0 over all topics (trec_eval ignores -l there)."""
    return t.R.astype(np.float64)


@measure("num_rel_ret", kind="int", agg="sum")
def num_rel_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of relevant documents retrieved; the summary is the sum over topics."""
    return t.rel_ret.astype(np.float64)


@measure("num_nonrel_judged_ret", kind="int", agg="sum")
def num_nonrel_judged_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of judged non-relevant documents retrieved (0 <= rel < -l); summary is the sum."""
    rows = t.judged_rows
    return np.bincount(t.g[rows[t.label[rows] < t.level]], minlength=t.nq).astype(np.float64)
