"""Counts and identifiers: runid, num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable
from .registry import JUDGED_SUM, RUN_NAME, SUM, TOPIC_COUNT, Params, measure
from .spellings import Target, ranx, rel_view, simple, spelling

ALL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")


@measure("runid", kind="str", direction="none", agg=RUN_NAME, per_query=False, rel_formats=ALL_FORMATS)
def runid(t: EvalTable, p: Params) -> list[list[str]]:
    """Run identifier: the 6th field of the last data line of the run file (summary only)."""
    return [[t.runid] * t.nq]


@measure("num_q", kind="int", direction="none", agg=TOPIC_COUNT, per_query=False, rel_formats=ALL_FORMATS)
def num_q(t: EvalTable, p: Params) -> np.ndarray:
    """Number of topics evaluated (under -c: every judged topic) (summary only)."""
    return np.zeros(t.nq)


spelling(
    "NumQ",
    style="ir_measures",
    build=simple("num_q", rel=False),
    roots=("num_q",),
    cutoff="none",
    definition="topics evaluated",
)


@measure("num_ret", kind="int", direction="none", agg=SUM, placeholder="zero_named")
def num_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of documents retrieved (after -M and -J); the summary is the sum over topics."""
    return t.n.astype(np.float64)


def _im_numret(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if "rel" in args:
        return Target("num_rel_ret", (), **rel_view(args, spec))
    return Target("num_ret")


spelling(
    "NumRet",
    style="ir_measures",
    build=_im_numret,
    roots=("num_ret", "num_rel_ret"),
    args=("rel",),
    cutoff="none",
    definition="documents retrieved; NumRet(rel=N): relevant ones retrieved",
)


@measure("num_rel", kind="int", direction="none", agg=JUDGED_SUM)
def num_rel(t: EvalTable, p: Params) -> np.ndarray:
    """Number of relevant documents (judged rel >= -l); the summary is the sum, or under -c
    the number of qrels lines with rel > 0 over all topics (trec_eval ignores -l there)."""
    return t.R.astype(np.float64)


spelling(
    "NumRel",
    style="ir_measures",
    build=simple("num_rel"),
    roots=("num_rel",),
    args=("rel",),
    cutoff="none",
    definition="relevant documents judged (trec_eval's num_rel)",
)


@measure("num_rel_ret", kind="int", agg=SUM)
def num_rel_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of relevant documents retrieved; the summary is the sum over topics."""
    return t.rel_ret.astype(np.float64)


spelling(
    "NumRelRet",
    style="ir_measures",
    build=simple("num_rel_ret"),
    roots=("num_rel_ret",),
    args=("rel",),
    cutoff="none",
    definition="relevant documents retrieved (trec_eval's num_rel_ret)",
)

spelling(
    "hits",
    style="ranx",
    build=ranx("num_rel_ret", "num_rel_ret_cut"),
    roots=("num_rel_ret", "num_rel_ret_cut"),
    definition="relevant documents in the top k (all retrieved without @k)",
)


@measure("num_nonrel_judged_ret", kind="int", direction="none", agg=SUM)
def num_nonrel_judged_ret(t: EvalTable, p: Params) -> np.ndarray:
    """Number of judged non-relevant documents retrieved (0 <= rel < -l); summary is the sum."""
    rows = t.judged_rows
    return np.bincount(t.g[rows[t.label[rows] < t.level]], minlength=t.nq).astype(np.float64)
