"""Results -> bytes: trec (trec_eval's text, byte for byte), json, parquet, and
the results tables csv, markdown, latex and table (runs as rows, measures as
columns).

trec rounds as trec_eval does; json and parquet keep full precision; the
tables print full precision (csv) or 4 places unless ``places`` says otherwise.
Every formatter returns bytes, so the CLI can write them to stdout or
atomically to ``--output``. :func:`format_runs` is the entry point for one or
several runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from ..engine.evaluate import Results
from ..records import Record

if TYPE_CHECKING:
    import pyarrow as pa

    from .tables import Table

# .tables and .cells are imported by the formats that use them: trec text (a small run's
# output) needs neither (2-3 ms of its start-up, two frozen dataclasses among them)


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
    return b"".join(format_trec_pieces(results, per_query=per_query, summary=summary))


def format_trec_pieces(results: Results, *, per_query: bool = False, summary: bool = True) -> Iterator[bytes]:
    """:func:`format_trec`'s output as pieces whose concatenation is the output, made
    as they are consumed, so a large ``-q`` output (12M lines for 100k topics) is
    written block by block instead of being held in memory."""
    z = results.zscore
    prefix = "Z" if z else ""

    def value(kind: str, v: Any) -> str:
        return _trec_value("float" if (z and kind == "int") else kind, v)

    if per_query:
        cols = [c for c in results.columns if c.per_query is not None]
        if cols and results.qids:
            yield from _per_query_blocks(results.qids, cols, prefix, z)
    out: list[str] = []
    if summary:
        for c in results.columns:
            if c.summary is None:
                continue
            p = "" if c.kind == "str" else prefix
            out.append(f"{p}{c.label:<22}\tall\t{value(c.kind, c.summary)}\n")
    yield "".join(out).encode("utf-8", "surrogateescape")


_TOPICS_PER_BLOCK = 2048  # bounds the temporary arrays (~ topics x measures x 150 bytes)


def _per_query_blocks(qids: list[str], cols: list, prefix: str, z: bool) -> Iterator[bytes]:
    """Every topic's lines, block by block of topics, assembled by Arrow: each line is
    (label and tab) + (topic id and tab) + (value and newline), the three pieces
    taken from per-measure and per-topic arrays and joined in one kernel call;
    the joined array's data buffer is the output. Values are formatted as trec_eval
    prints them (:func:`_block_values`).
    """
    import numpy as np
    import pyarrow.compute as pc

    from ..io.arrow import binary_array, from_numpy

    labels = binary_array(
        [(f"{'' if c.kind == 'str' else prefix}{c.label:<22}\t").encode("utf-8", "surrogateescape") for c in cols]
    )
    no_separator = binary_array([b""])[0]  # (pa.scalar would import pandas)
    m = len(cols)
    for lo in range(0, len(qids), _TOPICS_PER_BLOCK):
        hi = min(lo + _TOPICS_PER_BLOCK, len(qids))
        topics = binary_array([f"{q}\t".encode("utf-8", "surrogateescape") for q in qids[lo:hi]])
        lines = pc.binary_join_element_wise(
            labels.take(from_numpy(np.tile(np.arange(m, dtype=np.int64), hi - lo))),
            topics.take(from_numpy(np.repeat(np.arange(hi - lo, dtype=np.int64), m))),
            _block_values(cols, lo, hi, z),
            no_separator,
        )
        offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64, count=lines.offset + len(lines) + 1)
        first, last = int(offsets[lines.offset]), int(offsets[-1])
        yield memoryview(lines.buffers()[2])[first:last].tobytes()


def _block_values(cols: list, lo: int, hi: int, z: bool) -> pa.Array:
    """The values of ``cols`` for topics ``lo:hi`` as printed, each followed by a
    newline, topic by topic (a large_binary array of (hi - lo) x len(cols) items):
    ``%d`` for counts, ``'%s'`` for strings, ``%6.4f`` otherwise (counts too with -Z).

    ``%6.4f`` of a value in [0, 10) is ``d.dddd``: its digits come from the value
    times 10^4 rounded to the nearest integer, which is the exact decimal rounding
    unless the product lies within 1e-9 of a half (the product's error is below
    1e-11 there). Those values, negative ones, larger ones and NaN are formatted by
    Python's ``%``, which rounds the exact binary value as C's printf does; counts
    by Arrow, strings by Python.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..io.arrow import binary_array, from_numpy

    t, m = hi - lo, len(cols)
    numeric = [j for j, c in enumerate(cols) if c.kind == "float" or (c.kind == "int" and z)]
    other = [j for j in range(m) if j not in numeric]
    f = np.full((t, m), np.nan)
    for j in numeric:
        f[:, j] = np.asarray(cols[j].per_query[lo:hi], dtype=np.float64)
    with np.errstate(invalid="ignore", over="ignore"):  # inf and NaN go to Python
        scaled = f * 10000.0
        frac = scaled - np.floor(scaled)
    fast = (f >= 0.0) & (f < 9.99995) & ~np.signbit(f) & (np.abs(frac - 0.5) > 1e-9)
    fast[:, other] = False
    r = np.where(fast, np.rint(scaled), 0.0).astype(np.int64)
    digits = np.empty((t, m, 7), dtype=np.uint8)
    digits[:, :, 0] = r // 10000
    digits[:, :, 2] = r // 1000 % 10
    digits[:, :, 3] = r // 100 % 10
    digits[:, :, 4] = r // 10 % 10
    digits[:, :, 5] = r % 10
    digits += ord("0")
    digits[:, :, 1] = ord(".")
    digits[:, :, 6] = ord("\n")
    offsets = np.arange(0, 7 * t * m + 1, 7, dtype=np.int64)
    values = pa.Array.from_buffers(
        pa.large_binary(), t * m, [None, pa.py_buffer(offsets), pa.py_buffer(digits.reshape(-1))]
    )
    slow = ~fast.reshape(-1)
    if not slow.any():
        return values
    # the other items, in output order: counts and strings whole columns, then floats
    pos = np.flatnonzero(slow)
    topic, col = np.divmod(pos, m)
    col_base = np.full(m, -1, dtype=np.int64)
    col_base[other] = np.arange(len(other), dtype=np.int64) * t
    base = col_base[col]
    whole = base >= 0
    idx = np.where(whole, base + topic, 0)
    idx[~whole] = len(other) * t + np.arange(int(np.count_nonzero(~whole)))
    parts = []
    empty, newline = binary_array([b"", b"\n"])
    for j in other:
        c = cols[j]
        if c.kind == "str":
            parts.append(binary_array([f"'{v}'\n".encode("utf-8", "surrogateescape") for v in c.per_query[lo:hi]]))
        else:
            ints = from_numpy(np.asarray(c.per_query[lo:hi]).astype(np.int64))
            parts.append(
                pc.binary_join_element_wise(pc.cast(ints, pa.string()).cast(pa.large_binary()), empty, newline)
            )
    parts.append(binary_array([f"{_fmt_float(v)}\n".encode() for v in f.reshape(-1)[pos[~whole]].tolist()]))
    return pc.replace_with_mask(values, from_numpy(slow), pa.concat_arrays(parts).take(from_numpy(idx)))


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
    import json

    doc = results_dict(results, per_query=per_query, summary=summary, meta=meta)
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8", "surrogateescape")


def format_parquet(
    results: Results, *, per_query: bool = True, summary: bool = True, meta: dict | None = None
) -> bytes:
    """A tidy table (qid, measure, value, text): every per-topic value, then the summary rows
    with qid ``all``. ``text`` carries string values (runid, relstring)."""
    import io
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..io.arrow import float_array

    qid, meas, val, txt = _tidy(results, per_query=per_query, summary=summary)
    table = pa.table(
        {
            "qid": _string_array(qid),
            "measure": _string_array(meas),
            "value": float_array(val),
            "text": _string_array(txt),
        }
    )
    if meta:
        table = table.replace_schema_metadata({"ireval": json.dumps(meta)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def _string_array(values: list) -> pa.Array:
    """A Parquet string column. Ids are bytes, and a string column holds UTF-8: a byte that
    is not UTF-8 is written as its ``\\xNN`` escape (as messages print it)."""
    from ..io.arrow import string_array

    try:
        return string_array(values)
    except UnicodeEncodeError:
        from .cells import undecodable_escaped

        return string_array([None if v is None else undecodable_escaped(v) for v in values])


def _tidy(results: Results, *, per_query: bool, summary: bool) -> tuple[list, list, list, list]:
    """The (qid, measure, value, text) rows of the parquet table."""
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
                v = c.per_query[ti]
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
    return qid, meas, val, txt


FORMATTERS: dict[str, Callable[..., bytes]] = {
    "trec": format_trec,
    "json": format_json,
    "parquet": format_parquet,
}


# --------------------------------------------------------------------------
# Several runs, and results tables


class RunResults(Record):
    """One run's results and what identifies it in multi-run output."""

    path: str  # as given on the command line ("<stdin>" for -)
    runid: str
    sha256: str
    results: Results

    def __init__(self, path: str, runid: str, sha256: str, results: Results) -> None:
        self.path = path
        self.runid = runid
        self.sha256 = sha256
        self.results = results


TABLE_FORMATS = ("csv", "markdown", "latex", "table")
DEFAULT_PLACES = {"csv": None, "markdown": 4, "latex": 4, "table": 4}  # None: full precision


def run_header(run: RunResults) -> str:
    """The line that starts each run's block in multi-run trec output."""
    return f"==> {run.path} (runid {run.runid}) <=="


def format_trec_runs(runs: Sequence[RunResults], *, per_query: bool = False, summary: bool = True) -> bytes:
    """One run: trec_eval's bytes. Several: each block starts with ``==> PATH (runid RUNID) <==``
    and blocks are separated by a blank line (as ``head`` does with several files)."""
    if len(runs) == 1:
        return format_trec(runs[0].results, per_query=per_query, summary=summary)
    blocks = []
    for run in runs:
        head = (run_header(run) + "\n").encode("utf-8", "surrogateescape")
        blocks.append(head + format_trec(run.results, per_query=per_query, summary=summary))
    return b"\n".join(blocks)


def format_json_runs(
    runs: Sequence[RunResults], *, per_query: bool = False, summary: bool = True, meta: dict | None = None
) -> bytes:
    """Several runs: the shared metadata, then ``runs``: one object per run with its path,
    SHA-256, runid, num_q, ``summary`` and (with -q) ``per_query``."""
    import json

    doc: dict[str, Any] = dict(meta or {})
    doc["runs"] = [
        results_dict(
            run.results,
            per_query=per_query,
            summary=summary,
            meta={"path": run.path, "sha256": run.sha256, "runid": run.runid, "num_q": run.results.num_q},
        )
        for run in runs
    ]
    text = json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8", "surrogateescape")


def format_parquet_runs(
    runs: Sequence[RunResults], *, per_query: bool = True, summary: bool = True, meta: dict | None = None
) -> bytes:
    """Several runs: the tidy table with two leading columns, ``run`` (the path) and ``runid``."""
    import io
    import json

    import pyarrow as pa
    import pyarrow.parquet as pq

    cols: dict[str, list] = {"run": [], "runid": [], "qid": [], "measure": [], "value": [], "text": []}
    for run in runs:
        qid, meas, val, txt = _tidy(run.results, per_query=per_query, summary=summary)
        cols["run"] += [run.path] * len(qid)
        cols["runid"] += [run.runid] * len(qid)
        cols["qid"] += qid
        cols["measure"] += meas
        cols["value"] += val
        cols["text"] += txt
    from ..io.arrow import float_array

    table = pa.table({k: float_array(v) if k == "value" else _string_array(v) for k, v in cols.items()})
    if meta:
        table = table.replace_schema_metadata({"ireval": json.dumps(meta)})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


class _Grid(Record):
    """Rows (qid, run) x measure columns, shared by the table formats."""

    labels: list[str]
    kinds: list[str]  # float | int | str, per label
    rows: list[tuple[str, int, list[Any]]]  # (qid, run index, value per label or None)

    def __init__(self, labels: list[str], kinds: list[str], rows: list[tuple[str, int, list[Any]]]) -> None:
        self.labels = labels
        self.kinds = kinds
        self.rows = rows


def _grid(runs: Sequence[RunResults], *, per_query: bool, summary: bool) -> _Grid:
    labels: list[str] = []
    kinds: dict[str, str] = {}
    for run in runs:
        for c in run.results.columns:
            if c.root == "runid" or c.label in kinds:
                continue
            if (per_query and c.per_query is not None) or (summary and c.summary is not None):
                labels.append(c.label)
                kinds[c.label] = "float" if (run.results.zscore and c.kind == "int") else c.kind
    rows: list[tuple[str, int, list[Any]]] = []
    if per_query:
        per_topic: list[dict[str, list[Any]]] = []
        topics: set[str] = set()
        for run in runs:
            index = {q: i for i, q in enumerate(run.results.qids)}
            cols = {c.label: c for c in run.results.columns if c.per_query is not None}
            per_topic.append(
                {
                    q: [cols[lb].per_query[i] if lb in cols else None for lb in labels]  # type: ignore[index]
                    for q, i in index.items()
                }
            )
            topics.update(index)
        for q in sorted(topics, key=lambda t: t.encode("utf-8", "surrogateescape")):
            for ri, values in enumerate(per_topic):
                if q in values:
                    rows.append((q, ri, values[q]))
    if summary:
        for ri, run in enumerate(runs):
            sums = {c.label: c.summary for c in run.results.columns if c.summary is not None}
            rows.append(("all", ri, [sums.get(lb) for lb in labels]))
    return _Grid(labels, [kinds[lb] for lb in labels], rows)


def _cell(kind: str, v: Any, places: int | None) -> str:
    if v is None:
        return ""
    if kind == "str":
        return str(v)
    if kind == "int":
        return str(int(v))
    f = float(v)
    if math.isnan(f) or math.isinf(f):
        return str(f)
    return repr(f) if places is None else f"{f:.{places}f}"


def _cells(grid: _Grid, places: int | None) -> tuple[list[list[str]], list[list[bool]]]:
    """Formatted cells, and which are the best (highest) value of their column among the
    runs of the same topic (compared as printed; only real-valued measures; only with several runs)."""
    text = [[_cell(k, v, places) for k, v in zip(grid.kinds, values)] for _, _, values in grid.rows]
    best = [[False] * len(grid.labels) for _ in grid.rows]
    groups: dict[str, list[int]] = {}
    for i, (qid, _, _) in enumerate(grid.rows):
        groups.setdefault(qid, []).append(i)
    for members in groups.values():
        if len(members) < 2:
            continue
        for j, kind in enumerate(grid.kinds):
            if kind != "float":
                continue
            shown = [(i, float(text[i][j])) for i in members if text[i][j] not in ("", "nan")]
            if not shown:
                continue
            top = max(v for _, v in shown)
            for i, v in shown:
                best[i][j] = v == top
    return text, best


def _table(
    runs: Sequence[RunResults],
    grid: _Grid,
    text: list[list[str]],
    best: list[list[bool]],
    cols: Sequence[int],
    *,
    ids: Sequence[str],
    numbered: bool = False,
) -> Table:
    """The results as a table: the id columns ``ids`` (run, runid, qid), then the measure
    columns ``cols``; the best value of a column among the runs of a topic bold; a section
    per topic. ``numbered``: a run by its number (eval's legend names it), not its path."""
    from .tables import Cell, Entry, Table

    rows: list[list[Entry]] = []
    sections = set()
    for i, ((qid, ri, _values), cells, marks) in enumerate(zip(grid.rows, text, best)):
        if i and qid != grid.rows[i - 1][0]:
            sections.add(i)
        named = {"run": str(ri + 1) if numbered else runs[ri].path, "runid": runs[ri].runid, "qid": qid}
        shown = [Cell(cells[c], marks[c], number=grid.kinds[c] != "str") for c in cols]
        rows.append([*(named[h] for h in ids), *shown])
    align = "l" * len(ids) + "".join("l" if grid.kinds[c] == "str" else "r" for c in cols)
    headers = [*ids, *(grid.labels[c] for c in cols)]
    return Table(
        headers, rows, align, fold=range(len(ids)), sections=frozenset(sections) if "qid" in ids else frozenset()
    )


def _whole(runs: Sequence[RunResults], per_query: bool, summary: bool, places: int | None, ids: Sequence[str]) -> Table:
    grid = _grid(runs, per_query=per_query, summary=summary)
    text, best = _cells(grid, places)
    return _table(runs, grid, text, best, range(len(grid.labels)), ids=ids)


def format_csv(
    runs: Sequence[RunResults], *, per_query: bool = False, summary: bool = True, places: int | None = None, **_: Any
) -> bytes:
    """``run,runid,qid,<measure>...``: one row per run (qid ``all``), with -q one per run and topic
    too (topics in bytewise order, the runs of each topic together, summaries last). Full precision
    unless ``places``. Text cells a spreadsheet would run as a formula get a leading ``'``
    (:func:`irevalcli.output.files.csv_text_cell`)."""
    from .tables import render_csv

    table = _whole(runs, per_query, summary, places, ("run", "runid", "qid"))
    return render_csv(table).encode("utf-8", "surrogateescape")


def _id_columns(per_query: bool) -> list[str]:
    """The id columns of every results table, in csv's order: run, runid (and qid with -q)."""
    return ["run", "runid", "qid"] if per_query else ["run", "runid"]


def format_markdown(
    runs: Sequence[RunResults], *, per_query: bool = False, summary: bool = True, places: int | None = 4, **_: Any
) -> bytes:
    """A GitHub-flavoured Markdown table: runs as rows, measures as columns, the best value of
    each column in bold."""
    from .tables import render_markdown

    table = _whole(runs, per_query, summary, places, _id_columns(per_query))
    return render_markdown(table, spaced_rule=True).encode("utf-8", "surrogateescape")


def format_latex(
    runs: Sequence[RunResults], *, per_query: bool = False, summary: bool = True, places: int | None = 4, **_: Any
) -> bytes:
    """A booktabs ``tabular`` for a paper: runs as rows, measures as columns, the best value of
    each column in bold; with -q a rule separates the topics."""
    from .tables import render_latex

    table = _whole(runs, per_query, summary, places, _id_columns(per_query))
    return render_latex(table).encode("utf-8", "surrogateescape")


def format_table(
    runs: Sequence[RunResults],
    *,
    per_query: bool = False,
    summary: bool = True,
    places: int | None = 4,
    terminal: bool = False,
    width: int | None = None,
    **_: Any,
) -> bytes:
    """A rich table for people: colour and bold on a terminal, plain text otherwise.

    On a terminal the table fits its width, deliberately: when run paths and runids do not
    fit, runs are numbered and a legend under the table names them; when the measures still
    do not fit, they are shown in several tables of as many columns as fit. Nothing is cut
    mid-word. Plain text (a pipe, a file) is never wrapped."""
    import io

    from rich.console import Console

    from .cells import one_line_cell
    from .tables import rich_grid

    grid = _grid(runs, per_query=per_query, summary=summary)
    text, best = _cells(grid, places)
    buf = io.StringIO()
    console = Console(
        file=buf,
        width=width or 10_000,
        force_terminal=terminal,
        color_system="standard" if terminal else None,
        no_color=not terminal,
        highlight=False,
        emoji=False,
        legacy_windows=False,
    )

    def table(cols: list[int], numbered: bool) -> Any:
        ids = (["run", "qid"] if per_query else ["run"]) if numbered else _id_columns(per_query)
        return rich_grid(_table(runs, grid, text, best, cols, ids=ids, numbered=numbered), terminal=terminal)

    columns = list(range(len(grid.labels)))
    numbered = False
    if terminal and width:

        def fits(cols: list[int], numbered: bool) -> bool:
            return (
                console.measure(table(cols, numbered), options=console.options.update(max_width=1_000_000)).maximum
                <= width
            )

        numbered = not fits(columns, False)
        groups: list[list[int]] = []
        for c in columns:  # greedily, as many measure columns per table as fit
            if groups and fits([*groups[-1], c], numbered):
                groups[-1].append(c)
            else:
                groups.append([c])
    else:
        groups = [columns]
    for i, cols in enumerate(groups):
        if i:
            console.print()
        console.print(table(cols, numbered))
    if numbered:
        from rich.text import Text

        console.print()
        for ri, run in enumerate(runs):
            console.print(Text(one_line_cell(f"{ri + 1}: {run.path} (runid {run.runid})")))
    out = "\n".join(line.rstrip() for line in buf.getvalue().split("\n"))
    return out.encode("utf-8", "surrogateescape")


TABLE_FORMATTERS: dict[str, Callable[..., bytes]] = {
    "csv": format_csv,
    "markdown": format_markdown,
    "latex": format_latex,
    "table": format_table,
}
OUTPUT_FORMATS = ("trec", "json", "parquet", *TABLE_FORMATS)


def format_runs(
    fmt: str,
    runs: Sequence[RunResults],
    *,
    per_query: bool = False,
    summary: bool = True,
    meta: dict | None = None,
    places: int | None = None,
    terminal: bool = False,
    width: int | None = None,
) -> bytes:
    """Any output format for one or several runs. One run in trec, json or parquet gives
    exactly what :data:`FORMATTERS` gives (``meta`` is then that run's metadata)."""
    if fmt in TABLE_FORMATTERS:
        p = DEFAULT_PLACES[fmt] if places is None else places
        return TABLE_FORMATTERS[fmt](
            runs, per_query=per_query, summary=summary, places=p, terminal=terminal, width=width
        )
    if fmt == "trec":
        return format_trec_runs(runs, per_query=per_query, summary=summary)
    if len(runs) == 1:
        return FORMATTERS[fmt](runs[0].results, per_query=per_query, summary=summary, meta=meta)
    if fmt == "json":
        return format_json_runs(runs, per_query=per_query, summary=summary, meta=meta)
    return format_parquet_runs(runs, per_query=per_query, summary=summary, meta=meta)
