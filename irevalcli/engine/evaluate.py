"""Requests x table -> per-topic values and the summary, in one pass.

Every requested measure is evaluated over all topics at once (measure
functions are vectorised over the table); the summary follows trec_eval's
accumulate-then-average rules, with sums taken in topic order exactly as
trec_eval's accumulators add them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core.table import EvalOptions, EvalTable
from ..measures.names import Request
from ..measures.registry import Measure, Totals, values_2d
from ..records import Record

if TYPE_CHECKING:
    from .job import Job


class Column(Record):
    """One output label: its values per topic and its summary value."""

    label: str
    root: str
    kind: str  # float | int | str
    per_query: np.ndarray | list[str] | None  # None: no per-topic value
    summary: float | int | str | None  # None: no summary line

    def __init__(
        self,
        label: str,
        root: str,
        kind: str,
        per_query: np.ndarray | list[str] | None,
        summary: float | int | str | None,
    ) -> None:
        self.label = label
        self.root = root
        self.kind = kind
        self.per_query = per_query
        self.summary = summary


class Results(Record):
    """Everything one evaluation produced."""

    qids: list[str]
    columns: list[Column]
    num_q: int
    runid: str
    zscore: bool  # values are z-scores (-Z): trec output prefixes labels with Z
    compat: str
    diagnostics: list[str]
    # retrieved documents (of the evaluated topics) that are judged, rel >= 0; None: not counted
    judged_retrieved: int | None

    def __init__(
        self,
        qids: list[str],
        columns: list[Column],
        num_q: int,
        runid: str,
        zscore: bool = False,
        compat: str = "10.0",
        diagnostics: list[str] | None = None,
        judged_retrieved: int | None = None,
    ) -> None:
        self.qids = qids
        self.columns = columns
        self.num_q = num_q
        self.runid = runid
        self.zscore = zscore
        self.compat = compat
        self.diagnostics = [] if diagnostics is None else diagnostics
        self.judged_retrieved = judged_retrieved

    def per_query_frame(self) -> Any:
        """Tidy per-topic table: qid, measure, value (strings in ``text``)."""
        import pandas as pd

        rows_q: list[str] = []
        rows_m: list[str] = []
        rows_v: list[float] = []
        rows_t: list[str | None] = []
        for col in self.columns:
            if col.per_query is None:
                continue
            rows_q.extend(self.qids)
            rows_m.extend([col.label] * len(self.qids))
            if col.kind == "str":
                rows_v.extend([math.nan] * len(self.qids))
                rows_t.extend(col.per_query)
            else:
                rows_v.extend(np.asarray(col.per_query, dtype=np.float64).tolist())
                rows_t.extend([None] * len(self.qids))
        return pd.DataFrame({"qid": rows_q, "measure": rows_m, "value": rows_v, "text": rows_t})

    def summary_frame(self) -> Any:
        import pandas as pd

        m: list[str] = []
        v: list[float] = []
        t: list[str | None] = []
        for col in self.columns:
            if col.summary is None:
                continue
            m.append(col.label)
            if isinstance(col.summary, str):
                v.append(math.nan)
                t.append(col.summary)
            else:
                v.append(float(col.summary))
                t.append(None)
        return pd.DataFrame({"measure": m, "value": v, "text": t})

    @property
    def summary(self) -> dict[str, float | int | str]:
        return {c.label: c.summary for c in self.columns if c.summary is not None}


class TopicColumn(Record):
    """One output label's per-topic values, before summarising."""

    label: str
    measure: Measure
    values: np.ndarray | list[str] | None  # None: no per-topic value (num_q, runid)
    weights: np.ndarray | None  # a weighted summary's: each topic's weight (the row after the labels)

    def __init__(
        self,
        label: str,
        measure: Measure,
        values: np.ndarray | list[str] | None,
        weights: np.ndarray | None = None,
    ) -> None:
        self.label = label
        self.measure = measure
        self.values = values
        self.weights = weights


def compute_topics(table: EvalTable, requests: Sequence[Request]) -> list[TopicColumn]:
    """Every requested label's value for every topic of ``table``.

    Topics are independent, so tables holding different topics (streamed
    batches) can be computed separately and concatenated.
    """
    nq = table.nq
    missing = table.missing
    out: list[TopicColumn] = []
    for req in requests:
        meas = req.measure
        labels = req.labels
        if not meas.agg.per_topic:
            out.append(TopicColumn(labels[0], meas, None))
            continue
        raw = meas.func(table, req.params)
        if meas.kind == "str":
            for i, label in enumerate(labels):
                col = list(raw[i])
                if missing.any() and meas.placeholder_slot(label):  # placeholder topic: ''
                    for t in np.flatnonzero(missing):
                        col[t] = ""
                out.append(TopicColumn(label, meas, col))
            continue
        vals = values_2d(raw, nq)
        weights = np.array(vals[len(labels)], dtype=np.float64) if meas.agg.weighted else None
        for i, label in enumerate(labels):
            v = np.array(vals[i], dtype=np.float64)
            if missing.any() and meas.placeholder_slot(label):
                v[missing] = 0.0
            out.append(TopicColumn(label, meas, v, weights))
    return out


def concat_topics(parts: list[tuple[list[str], list[TopicColumn]]]) -> tuple[list[str], list[TopicColumn]]:
    """Join per-topic columns of disjoint topic sets, in bytewise topic order."""
    import pyarrow.compute as pc

    from ..io.arrow import text_keys, to_numpy

    qids = [q for part_qids, _ in parts for q in part_qids]
    keys = text_keys(qids)
    idx = to_numpy(pc.sort_indices(keys)).astype(np.int64, copy=False)  # bytewise, stable
    order = idx.tolist()
    columns = []
    for j, first in enumerate(parts[0][1]):
        pieces = [cols[j].values for _, cols in parts]
        if first.values is None:
            columns.append(TopicColumn(first.label, first.measure, None))
        elif isinstance(first.values, list):
            flat = [x for piece in pieces for x in piece]  # type: ignore[union-attr]
            columns.append(TopicColumn(first.label, first.measure, [flat[i] for i in order]))
        else:
            merged: np.ndarray = np.concatenate(pieces)  # type: ignore[arg-type]
            w = None if first.weights is None else np.concatenate([cols[j].weights for _, cols in parts])[idx]
            columns.append(TopicColumn(first.label, first.measure, merged[idx], w))
    return list(map(qids.__getitem__, order)), columns


def _plain_sums(topic_columns: list[TopicColumn], nq: int) -> dict[int, float]:
    """The plain sum of every column whose summary is a function of it (``Summary.plain``), by
    position: one running sum along the topics of all of them at once (each row still
    added left to right, so each total is the one :func:`~irevalcli.measures.registry.seq_sum`
    gives)."""
    plain: list[int] = []
    rows: list[np.ndarray] = []
    for i, tc in enumerate(topic_columns):
        if tc.measure.agg.plain and tc.measure.kind != "str" and isinstance(tc.values, np.ndarray):
            plain.append(i)
            rows.append(tc.values)
    if not plain or nq == 0:
        return {}
    mat = np.stack(rows).astype(np.float64, copy=False)
    return dict(zip(plain, np.cumsum(mat, axis=1)[:, -1].tolist()))


def summarize(
    job: Job, qids: list[str], topic_columns: list[TopicColumn], *, runid: str, opts: EvalOptions | None = None
) -> Results:
    """trec_eval's accumulate-then-average over per-topic values in topic order.

    From the job: ``-c``'s denominator (``num_qrels_topics``, the judged topics) and
    ``num_rel``'s summary under ``-c`` (``num_rel_complete``); with ``zscores`` (``-Z``)
    every per-topic value becomes a z-score before it is summarised, as in trec_eval.
    ``opts``: the options the table was built with, when they are not the job's (a ``-R``
    format's table keeps only those its format has).
    """
    opts = opts or job.opts
    zscores = job.zscores
    nq = len(qids)
    complete = opts.complete
    compat = opts.compat
    denom = job.num_qrels_topics if complete else nq
    convert = None if zscores is None else (lambda label, v: zscores.convert(qids, label, v))
    totals = Totals(nq, denom, complete, runid, job.num_rel_complete, convert)
    sums = _plain_sums(topic_columns, nq) if zscores is None else {}
    columns: list[Column] = []
    for i, tc in enumerate(topic_columns):
        meas, label = tc.measure, tc.label
        summary: float | int | str | None
        if not meas.agg.per_topic:  # num_q, runid: a summary only
            columns.append(Column(label, meas.name, meas.kind, None, meas.agg.aggregate(None, None, totals)))
            continue
        if meas.kind == "str":
            columns.append(Column(label, meas.name, "str", tc.values if meas.per_query else None, None))
            continue
        assert isinstance(tc.values, np.ndarray)
        if i in sums:  # added with the other plain columns (_plain_sums)
            v, summary = tc.values, meas.agg.from_sum(sums[i], totals)
        else:
            v, summary = meas.agg.summarize(label, tc.values, tc.weights, totals)
        if meas.kind == "int" and zscores is None:
            summary = int(summary)
        columns.append(
            Column(label, meas.name, meas.kind, v if meas.per_query else None, summary if meas.summary else None)
        )
    return Results(qids=qids, columns=columns, num_q=int(denom), runid=runid, zscore=zscores is not None, compat=compat)


def evaluate_table(job: Job, table: EvalTable) -> Results:
    """The engine for a table in memory: compute every request of ``job`` over ``table``
    (built from the job's whole judgements) and summarise (see :func:`summarize`)."""
    return summarize(job, table.qids, compute_topics(table, job.requests), runid=table.runid, opts=table.opts)
