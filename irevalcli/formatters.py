"""Results -> bytes: trec (trec_eval's text, byte for byte), json, parquet.

Rounding happens only in the trec formatter. Every formatter returns bytes, so
the CLI can write them to stdout or atomically to ``--output``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from .engine import Results


def _fmt_float(v: float) -> str:
    if math.isnan(v):
        return "  -nan"  # glibc prints the x86 default NaN (0.0/0.0) as -nan
    return "%6.4f" % v


def _trec_value(kind: str, v: Any) -> str:
    if kind == "int":
        return "%d" % int(v)
    if kind == "str":
        return str(v)
    return _fmt_float(float(v))


def format_trec(results: Results, *, per_query: bool = False, summary: bool = True, **_: Any) -> bytes:
    """trec_eval's layout: ``%-22s\\t%s\\t%6.4f`` per line; topics first (``-q``), then ``all``.

    With z-scores (-Z) every numeric label is prefixed with ``Z`` and printed with
    ``%6.4f``, integers included; runid and relstring lines are unchanged.
    """
    z = results.zscore
    prefix = "Z" if z else ""

    def value(kind: str, v: Any) -> str:
        return _trec_value("float" if (z and kind == "int") else kind, v)

    out: list[str] = []
    if per_query:
        cols = [c for c in results.columns if c.per_query is not None]
        for ti, qid in enumerate(results.qids):
            for c in cols:
                v = c.per_query[ti]  # type: ignore[index]
                if c.kind == "str":
                    out.append(f"{c.label:<22}\t{qid}\t'{v}'\n")
                else:
                    out.append(f"{prefix}{c.label:<22}\t{qid}\t{value(c.kind, v)}\n")
    if summary:
        for c in results.columns:
            if c.summary is None:
                continue
            p = "" if c.kind == "str" else prefix
            out.append(f"{p}{c.label:<22}\tall\t{value(c.kind, c.summary)}\n")
    return "".join(out).encode("utf-8", "surrogateescape")


def _json_number(kind: str, v: Any) -> Any:
    if kind == "int":
        return int(v)
    if kind == "str":
        return v
    f = float(v)
    return None if math.isnan(f) or math.isinf(f) else f


def results_dict(results: Results, *, per_query: bool = False, summary: bool = True, meta: dict | None = None) -> dict:
    doc: dict[str, Any] = dict(meta or {})
    if summary:
        doc["summary"] = {c.label: _json_number(c.kind, c.summary) for c in results.columns if c.summary is not None}
    if per_query:
        cols = [c for c in results.columns if c.per_query is not None]
        doc["per_query"] = {
            qid: {c.label: _json_number(c.kind, c.per_query[ti]) for c in cols}  # type: ignore[index]
            for ti, qid in enumerate(results.qids)
        }
    return doc


def format_json(results: Results, *, per_query: bool = False, summary: bool = True, meta: dict | None = None) -> bytes:
    """Full-precision JSON: ``summary`` (label -> value), ``per_query`` (qid -> label -> value)
    with -q, plus the metadata the CLI passes (version, options, input hashes).
    Values that are not finite (trec_eval's -nan) are null."""
    doc = results_dict(results, per_query=per_query, summary=summary, meta=meta)
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8", "surrogateescape")


def format_parquet(results: Results, *, per_query: bool = True, summary: bool = True, meta: dict | None = None) -> bytes:
    """A tidy table (qid, measure, value, text): every per-topic value, then the summary rows
    with qid ``all``. ``text`` carries string values (runid, relstring)."""
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    qid: list[str] = []
    meas: list[str] = []
    val: list[float | None] = []
    txt: list[str | None] = []
    if per_query:
        for c in results.columns:
            if c.per_query is None:
                continue
            for ti, q in enumerate(results.qids):
                qid.append(q)
                meas.append(c.label)
                v = c.per_query[ti]  # type: ignore[index]
                if c.kind == "str":
                    val.append(None)
                    txt.append(v)
                else:
                    val.append(float(v))
                    txt.append(None)
    if summary:
        for c in results.columns:
            if c.summary is None:
                continue
            qid.append("all")
            meas.append(c.label)
            if c.kind == "str":
                val.append(None)
                txt.append(str(c.summary))
            else:
                val.append(float(c.summary))
                txt.append(None)
    table = pa.table(
        {
            "qid": pa.array(qid, pa.string()),
            "measure": pa.array(meas, pa.string()),
            "value": pa.array(val, pa.float64()),
            "text": pa.array(txt, pa.string()),
        }
    )
    if meta:
        table = table.replace_schema_metadata({"ireval": json.dumps(meta)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


FORMATTERS: dict[str, Callable[..., bytes]] = {
    "trec": format_trec,
    "json": format_json,
    "parquet": format_parquet,
}
