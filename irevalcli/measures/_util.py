"""Helpers shared by the measure modules: not measures.

* :func:`safe_div`: a ratio that is 0 where its denominator is 0.

* :class:`OptParams` carries the options a friendly name (``P(rel=2)@5``,
  ``ERR@20``, ``map@100-l2``) adds to a measure's trec_eval parameters; the
  measure functions read them with :func:`opt`.
* segmented running products, per-topic ideal label lists, the highest label.
* table views: the same ranked table judged at another relevance level, with
  binary labels, or with labels below the level dropped (ranx's ``-lN``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.table import EvalTable, seg_accumulate
from ..records import Record
from .dcg import ideal_at
from .registry import Params


def safe_div(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """``num / den`` elementwise as float64, and 0 where ``den`` is 0 (trec_eval's rule for an
    undefined ratio: P with no documents, recall with no relevant ones, ...)."""
    den = np.asarray(den, dtype=np.float64)
    out = np.zeros(np.broadcast(num, den).shape, dtype=np.float64)
    np.divide(num, den, out=out, where=den != 0)
    return out


def exact_by_cumsum(values: np.ndarray) -> bool:
    """Whether running sums of ``values`` are exact whatever the order of the additions:
    every value a nonzero integer and their magnitudes summing below 2**52, so every partial
    sum is an integer below 2**53. A global ``cumsum`` minus each segment's base then equals
    the segment's left-to-right sum bit for bit (and no -0.0 can arise)."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        return bool((v != 0).all() and (np.floor(v) == v).all() and np.abs(v).sum() < 2.0**52)


def seg_running_integral(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running sums within the segments ``starts`` (offsets, len segments + 1) of values for
    which :func:`exact_by_cumsum` holds: one ``cumsum``, minus each segment's base."""
    c = np.cumsum(np.asarray(values, dtype=np.float64))
    base = np.concatenate(([0.0], c))[starts[:-1]]
    return c - np.repeat(base, np.diff(starts))


def cutoff_depths(t: EvalTable, ks: Any) -> np.ndarray:
    """``min(k, n)`` for every cutoff of ``ks`` (rows) and topic of ``t`` (columns)."""
    return np.minimum(np.asarray(ks, dtype=np.int64).reshape(-1, 1), t.n[None, :])


def rel_at_cutoffs(t: EvalTable, ks: Any) -> np.ndarray:
    """``t.rel_at(k)`` for every cutoff of ``ks``, one row per cutoff, counted together and
    kept for the table: P, recall, relative_P and success read the same counts."""

    def count() -> np.ndarray:
        listed = t.rel_rows
        begin = t.starts[:-1]
        end = begin + np.maximum(cutoff_depths(t, ks), 0)
        out = (np.searchsorted(listed, end) - np.searchsorted(listed, begin)).astype(np.float64)
        out.setflags(write=False)
        return out

    return t.memo(("rel_at_cutoffs", tuple(ks)), count)


def sparse_at_cutoffs(t: EvalTable, sr: tuple[np.ndarray, np.ndarray], ks: Any, empty: float = 0.0) -> np.ndarray:
    """``t.sparse_at_depth(sr, k)`` for every cutoff of ``ks``, one row per cutoff, read in one call."""
    depth = cutoff_depths(t, ks)
    topic = np.broadcast_to(np.arange(t.nq, dtype=np.int64), depth.shape)
    return t.sparse_read(sr, topic.ravel(), depth.ravel(), empty).reshape(depth.shape)


class OptParams(Params):
    """Params plus options fixed by the spelling of a friendly name (sorted key/value pairs)."""

    __slots__ = ("opts",)

    opts: tuple[tuple[str, Any], ...]

    def __init__(self, values: tuple[Any, ...], printable: str | None, opts: tuple[tuple[str, Any], ...] = ()) -> None:
        super().__init__(values, printable)
        object.__setattr__(self, "opts", opts)


def opt(p: Params, key: str, default: Any = None) -> Any:
    """The option ``key`` of a friendly name, or ``default``."""
    for k, v in getattr(p, "opts", ()):
        if k == key:
            return v
    return default


def pair(p: Params, key: str, default: Any = None) -> Any:
    """A ``key=value`` parameter of a pairs-kind measure (``err.gmax=4``), else an option."""
    if p.values and isinstance(p.values[0], tuple):
        for k, v in p.values:
            if k == key:
                return v
    return opt(p, key, default)


def seg_cumprod(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Running product within each segment, multiplied left to right (as a C loop would)."""
    return seg_accumulate(values, starts, np.multiply)


def exclusive(t: EvalTable, inclusive: np.ndarray, first: float = 1.0) -> np.ndarray:
    """Shift a per-row running value down one row within each topic (``first`` at rank 1)."""
    out = np.empty_like(inclusive)
    if len(out):
        out[1:] = inclusive[:-1]
        out[t.starts[:-1][t.n > 0]] = first
    return out


def gmax(t: EvalTable) -> int:
    """The highest relevance label in the whole qrels file (0 when there is none)."""
    if t.max_label is not None:
        return max(int(t.max_label), 0)
    return max(int(t.qrel.max()), 0) if len(t.qrel) else 0


class Ideal(Record):
    """Per-topic lists of the positive judged labels, highest first."""

    label: np.ndarray  # topic-major, descending within a topic
    start: np.ndarray  # offsets (len nq + 1)
    K: np.ndarray  # list length per topic

    def __init__(self, label: np.ndarray, start: np.ndarray, K: np.ndarray) -> None:
        self.label = label
        self.start = start
        self.K = K

    @property
    def topic(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.K)), self.K)

    @property
    def pos(self) -> np.ndarray:
        """0-based position of each entry in its topic's list."""
        return np.arange(len(self.label)) - self.start[self.topic]

    def at(self, prefix: np.ndarray, depth: np.ndarray | int) -> np.ndarray:
        """A running total over each ideal list read at ``min(depth, K)`` (0 at depth 0)."""
        return ideal_at(prefix, self.start, self.K, depth)


def ideal(t: EvalTable) -> Ideal:
    """The ideal ranking of each topic: every judged document with a positive label, best first."""
    return t.memo("ideal_labels", lambda: _ideal(t))


def _ideal(t: EvalTable) -> Ideal:
    m = t.qrel > 0
    qg, ql = t.qg[m], t.qrel[m]
    order = np.lexsort((-ql, qg))
    K = np.bincount(qg, minlength=t.nq).astype(np.int64)
    start = np.zeros(t.nq + 1, dtype=np.int64)
    np.cumsum(K, out=start[1:])
    return Ideal(label=ql[order].astype(np.float64), start=start, K=K)


def row_label(t: EvalTable) -> np.ndarray:
    """Each ranked row's graded label, unjudged and negative labels as 0."""
    return np.maximum(t.label, 0).astype(np.float64)


# ---- table views -------------------------------------------------------------


def at_level(t: EvalTable, level: int) -> EvalTable:
    """The same table judged at relevance level ``level`` (as -l would), cached on ``t``."""
    if level == t.level:
        return t
    return t.memo(("view_level", level), lambda: t.derive(opts=t.opts.replaced(rel_level=level)))


def binary(t: EvalTable, level: int) -> EvalTable:
    """Labels made binary at ``level``: relevant 1, judged below it 0; unjudged stay -1/-2."""

    def view() -> EvalTable:
        lab = np.where(t.label >= level, 1, np.where(t.label >= 0, 0, t.label))
        qrel = np.where(t.qrel >= level, 1, np.where(t.qrel >= 0, 0, t.qrel))
        return t.derive(label=lab, qrel=qrel, opts=t.opts.replaced(rel_level=1))

    return t.memo(("view_binary", level), view)


def drop_below(t: EvalTable, level: int) -> EvalTable:
    """ranx's ``-lN``: judgements below ``level`` are dropped (label 0), relevant means >= level."""

    def view() -> EvalTable:
        lab = np.where((t.label >= 0) & (t.label < level), 0, t.label)
        qrel = np.where((t.qrel >= 0) & (t.qrel < level), 0, t.qrel)
        return t.derive(label=lab, qrel=qrel, opts=t.opts.replaced(rel_level=level))

    return t.memo(("view_drop", level), view)


def _keep_rows(t: EvalTable, keep: np.ndarray) -> EvalTable:
    g = t.g[keep]
    starts = np.zeros(t.nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=t.nq), out=starts[1:])
    doc = t.doc[keep] if t.doc is not None else None
    return t.derive(g=g, label=t.label[keep], starts=starts, doc=doc)


def judged_only(t: EvalTable, _: int = 0) -> EvalTable:
    """ir_measures' judged_only=True: unjudged documents dropped from the ranking (as -J does)."""
    return t.memo(("view_judged",), lambda: _keep_rows(t, t.label >= 0))


def top_k(t: EvalTable, k: int) -> EvalTable:
    """Only the top ``k`` documents of each ranking (as -M k does)."""
    return t.memo(("view_top", k), lambda: _keep_rows(t, t.rank <= k))


def as_908(t: EvalTable, _: int = 0) -> EvalTable:
    """trec_eval 9.0.8's definitions where they differ (iprec_at_recall's K = trunc(x*R + 0.9))."""
    if t.opts.compat == "9.0.8":
        return t
    return t.memo("view_908", lambda: t.derive(opts=t.opts.replaced(compat="9.0.8")))
