"""Input formats: detect what a qrels or run file is, and read it into the same
:class:`~irevalcli.io.trec.Qrels` / :class:`~irevalcli.io.trec.Run` objects.

Formats (``auto`` detects them by content, after gzip/bzip2/xz/zstd decompression):

- ``trec``: trec_eval's whitespace-separated text (:mod:`irevalcli.io.trec`).
- ``tsv`` / ``csv``: a header line naming the columns, then one row per line
  (tab- or comma-separated, ``"``-quoting as pandas writes it).
- ``jsonl``: JSON Lines, one object per line.
- ``parquet``: a Parquet file (detected by its ``PAR1`` magic at both ends: a TREC
  file whose first topic id starts with ``PAR1`` stays TREC text).
- ``msmarco`` (runs only, never detected): ``qid docno rank`` per line, no score;
  the score is derived from the rank (``-rank``), so rank 1 is best.

Tabular formats need the columns ``qid``, ``docno`` and ``score`` (runs) or
``rel`` (qrels); ``runid`` is optional. Common other names are recognised
(``query_id``, ``doc_id``, ``relevance``, ...) and any name can be mapped
with ``columns={"qid": "topic_no"}`` (``--column qid=topic_no``).

Every reader is vectorised (pyarrow's CSV, JSON and Parquet readers, then
Arrow casts); only when the fast path fails is the file rescanned in Python,
to name the line (or, for Parquet, the row) that is wrong.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from ..errors import InputError, UsageError
from . import source
from .arrow import repeated_text, to_numpy, zeros_for_nulls
from .trec import Qrels, Run, Source, read_source, refuse_bom

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

RUN_FORMATS = ("auto", "trec", "msmarco", "tsv", "csv", "jsonl", "parquet")
QRELS_FORMATS = ("auto", "trec", "tsv", "csv", "jsonl", "parquet")
ROLES = ("qid", "docno", "score", "rel", "runid", "rank")
# names recognised without --column, in order of preference
ALIASES: dict[str, tuple[str, ...]] = {
    "qid": ("qid", "query_id", "topic", "query-id", "queryid"),  # query-id, corpus-id, score: BEIR's qrels
    "docno": ("docno", "doc_id", "docid", "corpus-id", "corpus_id", "doc"),
    "score": ("score",),
    "rel": ("rel", "relevance", "label"),  # and BEIR's "score" (see find_column)
    "runid": ("runid", "run_id"),
    "rank": ("rank",),
}
PARQUET_MAGIC = b"PAR1"
_COMPRESSED_SUFFIXES = (".gz", ".bz2", ".xz", ".zst", ".zstd")
_FORMAT_SUFFIXES = (".txt", ".trec", ".run", ".res", ".tsv", ".csv", ".jsonl", ".json", ".parquet", ".pq")

Progress = Callable[[int], None]  # called with the number of bytes just read


# --------------------------------------------------------------------------
# Options


def parse_column_map(specs: Sequence[str] | Mapping[str, str] | None) -> dict[str, str]:
    """``["qid=query_id", "docno=doc,score=s"]`` -> ``{"qid": "query_id", ...}``."""
    if not specs:
        return {}
    import difflib

    if isinstance(specs, Mapping):
        items = list(specs.items())
    else:
        items = []
        for spec in specs:
            for part in spec.split(","):
                if not part.strip():
                    continue
                role, eq, name = part.partition("=")
                if not eq or not role.strip() or not name.strip():
                    raise UsageError(
                        f"--column {part}: expected ROLE=NAME, e.g. qid=query_id (roles: {', '.join(ROLES)})"
                    )
                items.append((role.strip(), name.strip()))
    out: dict[str, str] = {}
    for role, name in items:
        if role not in ROLES:
            close = difflib.get_close_matches(role, ROLES, n=1)
            hint = f"did you mean '{close[0]}'? " if close else ""
            raise UsageError(f"--column {role}={name}: unknown role '{role}' ({hint}roles: {', '.join(ROLES)})")
        if role in out and out[role] != name:
            raise UsageError(f"--column {role}: given twice ({out[role]}, {name})")
        out[role] = name
    return out


def check_format(fmt: str, what: str) -> None:
    known = RUN_FORMATS if what == "run" else QRELS_FORMATS
    if fmt not in known:
        raise UsageError(f"--{what}-format {fmt}: unknown format (known: {', '.join(known)})")


def default_runid(name: str) -> str:
    """The runid of a file that has none: its name without directory and known suffixes."""
    if name == "<stdin>":
        return "stdin"
    base = os.path.basename(name)
    for suffixes in (_COMPRESSED_SUFFIXES, _FORMAT_SUFFIXES):
        for suf in suffixes:
            if base.lower().endswith(suf) and len(base) > len(suf):
                base = base[: -len(suf)]
                break
    return base or name


# --------------------------------------------------------------------------
# Detection


def _first_line(data: bytes) -> bytes:
    end = data.find(b"\n")
    line = data if end < 0 else data[:end]
    return line.rstrip(b"\r")


def _header_fields(line: bytes, delim: bytes) -> list[str]:
    import csv

    text = line.decode("utf-8", "surrogateescape")
    try:
        row = next(csv.reader([text], delimiter=delim.decode(), quotechar='"'))
    except (csv.Error, StopIteration):
        return []
    return [f.strip() for f in row]


def find_column(role: str, names: Sequence[str], columns: Mapping[str, str]) -> str | None:
    """The header column playing ``role`` (qid, docno, rel, score, ...): ``columns[role]`` if
    given (None when the header lacks it), else the first of ``ALIASES[role]`` present, exactly
    then case-insensitively; None when there is none."""
    if role in columns:
        return columns[role] if columns[role] in names else None
    for alias in ALIASES[role]:
        if alias in names:
            return alias
    lowered = {n.lower(): n for n in names}
    for alias in ALIASES[role]:
        if alias in lowered:
            return lowered[alias]
    if role == "rel" and {"query-id", "corpus-id", "score"} <= set(lowered):
        return lowered["score"]  # BEIR's qrels header: query-id corpus-id score (a run's score is never a label)
    return None


def _looks_like_header(data: bytes) -> bool:
    """A first line of tab- or comma-separated fields none of which is a number."""
    line = _first_line(data)
    for delim in (b"\t", b","):
        if delim in line:
            fields = _header_fields(line, delim)
            return bool(fields) and not any(_is_number(f) for f in fields)
    return False


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def detect(data: bytes, columns: Mapping[str, str] | None = None, extra: Sequence[str] = ()) -> str:
    """The format of (decompressed) ``data``: parquet, jsonl, tsv, csv or trec.

    A first line split by tabs (or commas) that names a qid and a docno column
    is a header; anything else is TREC text. ``extra``: column names the file's rows
    get from elsewhere (a dataset's hive directories, ``qid=301/``).
    """
    columns = columns or {}
    if is_parquet(data):
        return "parquet"
    if data[:4096].lstrip()[:1] == b"{" and _json_object_line(_first_line(data.lstrip())):
        return "jsonl"
    line = _first_line(data)
    for delim, fmt in ((b"\t", "tsv"), (b",", "csv")):
        if delim in line:
            names = [*_header_fields(line, delim), *extra]
            if find_column("qid", names, columns) and find_column("docno", names, columns):
                return fmt
            return "trec"
    return "trec"


def is_parquet(data: bytes) -> bool:
    """Parquet by its head and its footer (both ``PAR1``), not by the first four bytes alone."""
    return len(data) >= 12 and data[:4] == PARQUET_MAGIC and data[-4:] == PARQUET_MAGIC


def strip_header_bom(src: Source, fmt: str, columns: Mapping[str, str]) -> None:
    """A spreadsheet's CSV/TSV export starts with a UTF-8 byte order mark: drop it there.
    Anywhere else (TREC text) it is refused, since trec_eval would read it as part of an id."""
    from .trec import BOM

    if src.data.startswith(BOM) and (fmt if fmt != "auto" else detect(src.data[len(BOM) :], columns)) in ("csv", "tsv"):
        src.data = src.data[len(BOM) :]


def _json_object_line(line: bytes) -> bool:
    """A first line that parses as a JSON object (so a TREC qid like '{1}' stays TREC)."""
    import json

    try:
        return isinstance(json.loads(line), dict)
    except ValueError:
        return False


def streamable(path: Any, fmt: str = "auto") -> bool:
    """Whether the bounded-memory streaming reader can take this run: TREC text, plain or compressed."""
    from .source import sniff_head

    if fmt not in ("auto", "trec") or not isinstance(path, (str, os.PathLike)) or os.fspath(path) == "-":
        return False
    head = sniff_head(os.fspath(path))  # a pipe named as a path is spooled: the sniff loses nothing
    if head is None:
        return False
    if fmt == "trec":
        return True
    # detect() knows Parquet by its head and its footer; a head alone never has the footer, so
    # a head starting PAR1 is not streamed: the whole-file reader sees both ends and decides
    return not head.startswith(PARQUET_MAGIC) and detect(head) == "trec"


# --------------------------------------------------------------------------
# Reading


def read_input(
    path: str | os.PathLike[str],
    *,
    what: str,
    stdin: BinaryIO | None = None,
    progress: Progress | None = None,
    hash: bool = True,
) -> Source:
    """:func:`readers.read_source`, reporting bytes read to ``progress`` as it goes (not for
    standard input, whose size is not known)."""
    if os.fspath(path) == "-":
        progress = None
    return read_source(path, what=what, stdin=stdin, hash=hash, progress=progress)


def read_qrels_file(
    path: str | os.PathLike[str],
    *,
    fmt: str = "auto",
    columns: Mapping[str, str] | Sequence[str] | None = None,
    stdin: BinaryIO | None = None,
    progress: Progress | None = None,
    hash: bool = True,
) -> Qrels:
    """A qrels file in any supported format (``fmt="auto"`` detects it). ``hash``: record
    its SHA-256 (an ir_datasets id's: of its judgements as read)."""
    check_format(fmt, "qrels")
    cmap = parse_column_map(columns)
    from .irds import is_dataset_id

    if is_dataset_id(path):  # an ir_datasets id (an existing file wins): io.irds
        from .irds import qrels_source

        src = qrels_source(os.fspath(path), hash=hash)
    else:
        src = read_input(path, what="qrels", stdin=stdin, progress=progress, hash=hash)
    return parse_qrels_source(src, fmt=fmt, columns=cmap)


def read_run_file(
    path: str | os.PathLike[str],
    *,
    fmt: str = "auto",
    columns: Mapping[str, str] | Sequence[str] | None = None,
    stdin: BinaryIO | None = None,
    progress: Progress | None = None,
    hash: bool = True,
    ranks: bool = False,
) -> Run:
    """A run file in any supported format (``fmt="auto"`` detects it; ``msmarco`` must be asked for).
    ``hash``: record its SHA-256; ``ranks``: keep its rank column (``--ties rank``)."""
    check_format(fmt, "run")
    cmap = parse_column_map(columns)
    src = read_input(path, what="run", stdin=stdin, progress=progress, hash=hash)
    return parse_run_source(src, fmt=fmt, columns=cmap, ranks=ranks)


def parse_qrels_source(
    src: Source,
    *,
    fmt: str = "auto",
    columns: Mapping[str, str] | None = None,
    constants: Sequence[tuple[str, str]] = (),
    allow_empty: bool = False,
) -> Qrels:
    """Qrels from their bytes. ``constants``: (column, value) pairs every row has unless the
    file has that column (a dataset's hive directories). ``allow_empty``: a file without
    judgements (a dataset's empty part) gives empty qrels instead of an error."""
    from .trec import parse_qrels

    columns = columns or {}
    strip_header_bom(src, fmt, columns)
    refuse_bom(src)
    kind = detect(src.data, columns, [k for k, _ in constants]) if fmt == "auto" else fmt
    if allow_empty and (not src.data.strip() or (kind == "trec" and _only_comments(src.data))):
        return _empty_qrels(src.name)
    if kind == "trec":
        try:
            return parse_qrels(src)
        except InputError as exc:
            if not exc.detail.startswith("expected 4 fields") or not exc.detail.endswith(("got 6", "got 7")):
                raise
            hint = (
                "; it looks like a run (qid iter docno rank score runid): are QRELS and RUN swapped? QRELS comes first"
            )
            raise type(exc)(src.name, exc.detail + hint, exc.line) from None
    if not src.data:
        raise InputError(src.name, "the qrels file is empty")
    tab = _read_tabular(src, kind, ("qid", "docno", "rel"), (), columns, "qrels", constants)
    if len(tab.lineno) == 0:
        if allow_empty:
            return _empty_qrels(src.name)
        raise InputError(src.name, "the qrels file has no judgements (only a header)")
    return Qrels(
        name=src.name,
        sha256=src.sha256,
        qid=_ids(tab, "qid"),
        docno=_ids(tab, "docno"),
        rel=_ints(tab, "rel", "relevance label"),
        lineno=tab.lineno,
    )


def parse_run_source(
    src: Source,
    *,
    fmt: str = "auto",
    columns: Mapping[str, str] | None = None,
    ranks: bool = False,
    constants: Sequence[tuple[str, str]] = (),
    allow_empty: bool = False,
) -> Run:
    """A run's rows from its bytes; ``ranks``: keep the rank column, for ``--ties rank``.
    ``constants``: (column, value)
    pairs every row has unless the file has that column (a dataset's hive directories).
    ``allow_empty``: a file without results (a dataset's empty part) gives an empty run
    instead of an error."""
    from .trec import parse_run

    columns = columns or {}
    strip_header_bom(src, fmt, columns)
    refuse_bom(src)
    kind = detect(src.data, columns, [k for k, _ in constants]) if fmt == "auto" else fmt
    if allow_empty and (not src.data.strip() or (kind == "trec" and _only_comments(src.data))):
        return _empty_run(src.name, ranks)
    if kind == "trec":
        try:
            return parse_run(src, ranks=ranks)
        except InputError as exc:
            raise explain_run_error(exc, src.data) from None
    if not src.data:
        raise InputError(src.name, "the run file is empty")
    if kind == "msmarco":
        return _parse_msmarco(src, ranks)
    import numpy as np

    by_rank = "rank" in columns and "score" not in columns  # --column rank=NAME: score = -rank
    # --ties rank orders by the rank column; a score only breaks equal ranks
    if ranks:
        required, optional = ("qid", "docno", "rank"), ("runid",) if by_rank else ("runid", "score")
    else:
        required, optional = ("qid", "docno", "rank" if by_rank else "score"), ("runid",)
    tab = _read_tabular(src, kind, required, optional, columns, "run", constants)
    if tab.nrows == 0:
        if allow_empty:
            return _empty_run(src.name, ranks)
        raise InputError(src.name, "the run file has no results")
    rank = _ranks(tab) if by_rank or ranks else None
    if "score" in tab.cols:
        score = _floats(tab, "score", "score")
    else:
        assert rank is not None
        score = -rank.astype(np.float64)
    runid = default_runid(src.name)
    if "runid" in tab.cols:
        last = _ids(tab, "runid")[tab.nrows - 1].as_py()
        runid = last.decode("utf-8", "surrogateescape")
    return Run(
        name=src.name,
        sha256=src.sha256,
        qid=_ids(tab, "qid"),
        docno=_ids(tab, "docno"),
        score=score,
        lineno=tab.lineno,
        runid=runid,
        rank=rank if ranks else None,
    )


def parse_labelled_parquet(
    src: Source, columns: Mapping[str, str] | None = None, *, ranks: bool = False
) -> tuple[Run, np.ndarray, Any]:
    """A labelled Parquet table (qid, docno, score, rel per row) read once: its run, each
    row's label (0 where the label is missing) and the rows whose label is missing (a bool
    array, or None when every row has one). Only for what :func:`parse_run_source` and
    :func:`parse_qrels_source` would both accept without error: anything else (a missing
    column, a bad value, ``--ties rank``, ``--column rank=``) raises :class:`NotPlain`, and the
    caller reads the table the general way, whose messages then say what is wrong."""
    import numpy as np
    import pyarrow as pa

    columns = columns or {}
    if ranks or "rank" in columns:
        raise NotPlain
    try:
        tab = _read_tabular(src, "parquet", ("qid", "docno", "score", "rel"), ("runid",), columns, "run")
        if tab.nrows == 0:
            raise NotPlain
        label = tab.cols["rel"]
        nulls = None
        if label.null_count:
            if not (pa.types.is_integer(label.type) or pa.types.is_floating(label.type)):
                raise NotPlain
            nulls = to_numpy(label.is_null())
            # (fill_null(pa.scalar(0)) went through pyarrow's pandas shim: pandas imported, a
            # quarter of a second)
            tab.cols["rel"] = zeros_for_nulls(label)
        score = _floats(tab, "score", "score")
        runid = default_runid(src.name)
        if "runid" in tab.cols:
            runid = _ids(tab, "runid")[tab.nrows - 1].as_py().decode("utf-8", "surrogateescape")
        run = Run(
            name=src.name,
            sha256=src.sha256,
            qid=_ids(tab, "qid"),
            docno=_ids(tab, "docno"),
            score=score,
            lineno=tab.lineno,
            runid=runid,
            rank=None,
        )
        labels = _ints(tab, "rel", "relevance label")
    except InputError:
        raise NotPlain from None
    return run, np.asarray(labels, dtype=np.int64), nulls


class NotPlain(Exception):
    """:func:`parse_labelled_parquet` leaves this table to the general readers."""


def _only_comments(data: bytes) -> bool:
    """TREC text with no data line: only blank lines and ``#`` comment lines."""
    return all(not line.strip() or line.lstrip().startswith(b"#") for line in data.splitlines())


def _empty_qrels(name: str) -> Qrels:
    import numpy as np

    from .arrow import binary_array

    none = binary_array([])
    return Qrels(name, "", none, none, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


def _empty_run(name: str, ranks: bool) -> Run:
    import numpy as np

    run = Run.empty(name, default_runid(name))
    if ranks:
        run.rank = np.zeros(0, dtype=np.int64)
    return run


def _ranks(tab: _Table) -> np.ndarray:
    """The rank column: whole numbers, as labels are (``3.0`` is 3, ``2.5`` is refused)."""
    from .trec import check_rank_range

    rank = _ints(tab, "rank", "rank")
    try:
        check_rank_range(rank, tab.lineno, tab.name)
    except InputError as exc:
        raise tab.rewrap(exc) from None
    return rank


def explain_run_error(exc: InputError, data: bytes) -> InputError:
    """A TREC run's parse error with a hint at the likely slip (a header line, a CSV
    without its header, a qrels file or an MS MARCO run given as the run). ``data`` is
    the text the error's line number counts in."""
    if (
        exc.line == 1
        and exc.detail.startswith("score '")
        and exc.detail.endswith("is not a number")
        and not any(_is_number(f) for f in _first_line(data).decode("utf-8", "replace").split()[3:5])
    ):
        hint = "; line 1 looks like a header, which TREC text does not have: delete it"
    elif not exc.detail.startswith("expected at least 6 fields"):
        return exc
    elif exc.line == 1 and _looks_like_header(data):
        hint = "; is line 1 a header? name its columns with --column, e.g. --column qid=NAME,docno=NAME"
    elif exc.detail.endswith(("got 1", "got 2")) and _bad_line(data, exc.line).count(b",") >= 2:
        hint = (
            "; the line looks comma-separated: give the file a header line naming its columns "
            "(e.g. qid,docno,score) to read it as CSV"
        )
    elif exc.detail.endswith("got 4"):
        hint = "; it looks like a qrels file (qid iter docno rel), not a run: judgements go before the runs (pool: --qrels FILE)"
    elif exc.detail.endswith("got 3"):
        hint = "; for an MS MARCO run (qid docno rank) use --run-format msmarco"
    else:
        return exc
    return type(exc)(exc.path, exc.detail + hint, exc.line)


def _bad_line(data: bytes, line: int | None) -> bytes:
    """The text of 1-based physical ``line`` (for a hint; an error path only)."""
    if not line or line > 10000:  # a hint is not worth a long scan
        return b""
    start = 0
    for _ in range(line - 1):
        start = data.find(b"\n", start) + 1
        if start == 0:
            return b""
    end = data.find(b"\n", start)
    return data[start : end if end >= 0 else len(data)]


def _parse_msmarco(src: Source, ranks: bool) -> Run:
    import numpy as np
    import pyarrow as pa

    from .trec import fast_table, parse_whole, take_tokens, tokenize

    fast = fast_table(src.data, 3, 3, {0: pa.large_binary(), 1: pa.large_binary(), 2: pa.int64()})
    if fast is not None and len(fast):
        qid, docno = fast.column("f0").combine_chunks(), fast.column("f1").combine_chunks()
        rank = to_numpy(fast.column("f2"))
        lineno = np.arange(1, len(fast) + 1, dtype=np.int64)
    else:
        lines = tokenize(src.data, src.name, blank_lines_ok=True, what="run")
        if len(lines.ntok) == 0:
            raise InputError(src.name, "the run file has no results (only comments or blank lines)")
        bad = lines.ntok != 3
        if bad.any():
            i = int(np.argmax(bad))
            raise InputError(
                src.name, f"expected 3 fields (qid docno rank), got {int(lines.ntok[i])}", int(lines.lineno[i])
            )
        f0 = lines.first_tok
        qid, docno = take_tokens(lines, f0), take_tokens(lines, f0 + 1)
        rank = parse_whole(take_tokens(lines, f0 + 2), lines.lineno, src.name, "rank")
        lineno = np.asarray(lines.lineno, dtype=np.int64)
    return Run(
        name=src.name,
        sha256=src.sha256,
        qid=qid,
        docno=docno,
        score=-rank.astype(np.float64),
        lineno=lineno,
        runid=default_runid(src.name),
        rank=_msmarco_ranks(rank, lineno, src.name) if ranks else None,
    )


def _msmarco_ranks(rank: np.ndarray, lineno: np.ndarray, name: str) -> np.ndarray | None:
    """An MS MARCO run's ranks kept for --ties rank."""
    from .trec import check_rank_range

    check_rank_range(rank, lineno, name)
    return rank


# --------------------------------------------------------------------------
# Tabular formats


class _Table:
    """The columns a reader found, by role, with where each row came from."""

    def __init__(self, name: str, cols: dict[str, pa.Array], lineno: np.ndarray, kind: str) -> None:
        self.name = name
        self.cols = cols
        self.lineno = lineno
        self.kind = kind
        self.nrows = len(lineno)

    def error(self, message: str, i: int | None = None) -> InputError:
        if i is None:
            return InputError(self.name, message)
        n = int(self.lineno[i])
        if self.kind == "parquet":
            return InputError(self.name, f"row {n}: {message}")
        return InputError(self.name, message, n)

    def rewrap(self, exc: InputError) -> InputError:
        """A parse helper's ``path:line`` error, said as a row for Parquet."""
        if self.kind == "parquet" and exc.line is not None:
            return type(exc)(self.name, f"row {exc.line}: {exc.detail}")
        return exc


def _resolve(
    names: Sequence[str],
    required: Sequence[str],
    optional: Sequence[str],
    columns: Mapping[str, str],
    src: str,
    what: str,
) -> dict[str, str]:
    found: dict[str, str] = {}
    listing = ", ".join(names) if names else "none"
    seen: set[str] = set()
    for name in names:  # every format alike: a repeated name would pick one of them silently
        if name in seen:
            raise InputError(
                src, f"the column '{name}' appears twice (columns: {listing}); give each column its own name"
            )
        seen.add(name)
    for role in (*required, *optional):
        col = find_column(role, names, columns)
        if col is None:
            if role in columns:
                raise InputError(src, f"--column {role}={columns[role]}: no such column (columns: {listing})")
            if role == "rank" and what == "run" and "score" in optional:  # --ties rank: rank required
                raise InputError(
                    src,
                    f"no 'rank' column for the run (columns: {listing}); --ties rank orders by it: name one "
                    "with --column rank=NAME, or use --ties docno or --ties input",
                )
            if role in required:
                rank = find_column("rank", names, {}) if role == "score" else None
                if rank is not None:  # --column score=rank would rank backwards
                    raise InputError(
                        src,
                        f"no 'score' column for the {what} (columns: {listing}); to rank by its '{rank}' "
                        f"column (rank 1 first: score = -rank) give --column rank={rank}, or name a score "
                        "column with --column score=NAME",
                    )
                raise InputError(
                    src, f"no '{role}' column for the {what} (columns: {listing}); name one with --column {role}=NAME"
                )
            continue
        found[role] = col
    return found


def _read_tabular(
    src: Source,
    kind: str,
    required: Sequence[str],
    optional: Sequence[str],
    columns: Mapping[str, str],
    what: str,
    constants: Sequence[tuple[str, str]] = (),
) -> _Table:
    """The roles' columns of a tabular file; a ``constants`` column the file lacks is every
    row's value (as a hive directory gives it), in every format alike."""
    values = dict(constants)
    reader = _TableReader(src, kind, required, optional, columns, what, tuple(values))
    tab = reader.read()
    for role, col in reader.constant_roles.items():
        tab.cols[role] = repeated_text(values[col], tab.nrows)  # (pa.array of a list imports pandas)
    return tab


class _TableReader:
    """One tabular file's reading: the columns it has, plus any ``extra`` column names its
    rows get from elsewhere (:attr:`constant_roles`: the roles found among those)."""

    def __init__(
        self,
        src: Source,
        kind: str,
        required: Sequence[str],
        optional: Sequence[str],
        columns: Mapping[str, str],
        what: str,
        extra: tuple[str, ...],
    ) -> None:
        self.src, self.kind, self.required, self.optional = src, kind, required, optional
        self.columns, self.what, self.extra = columns, what, extra
        self.constant_roles: dict[str, str] = {}

    def resolve(self, names: Sequence[str]) -> dict[str, str]:
        """Roles -> the file's column names (roles met by an extra column kept apart)."""
        missing = [k for k in self.extra if k not in names]
        found = _resolve([*names, *missing], self.required, self.optional, self.columns, self.src.name, self.what)
        self.constant_roles = {r: c for r, c in found.items() if c in missing}
        return {r: c for r, c in found.items() if c not in missing}

    def read(self) -> _Table:
        src, kind = self.src, self.kind
        if kind in ("tsv", "csv"):
            return _read_delimited(src, "\t" if kind == "tsv" else ",", kind, self.resolve)
        if kind == "jsonl":
            return _read_jsonl(src, self.resolve)
        if kind == "parquet":
            return _read_parquet(src, self.resolve)
        raise UsageError(f"unknown {self.what} format '{kind}'")


Resolve = Callable[[Sequence[str]], dict[str, str]]


def _line_numbers(data: bytes, nrows: int, skip: int, blank: str) -> np.ndarray:
    """1-based line numbers of the ``nrows`` data rows after ``skip`` header lines.

    ``blank``: which lines a reader skipped: ``empty`` (CSV: nothing but CR) or
    ``space`` (JSON: nothing but whitespace). Fast when there are none.
    """
    import numpy as np

    total = data.count(b"\n") + (0 if data.endswith(b"\n") else 1)
    if total - skip == nrows:
        return np.arange(skip + 1, skip + nrows + 1, dtype=np.int64)
    from .trec import space_lut

    buf = np.frombuffer(data if data.endswith(b"\n") else data + b"\n", dtype=np.uint8)
    nl = np.flatnonzero(buf == 10)
    if blank == "space":
        content = ~np.take(space_lut(), buf)
    else:
        content = (buf != 10) & (buf != 13)
    counts = np.diff(np.concatenate(([0], np.cumsum(content)[nl])))
    rows = np.flatnonzero(counts > 0) + 1
    rows = rows[rows > skip]
    if len(rows) != nrows:  # values spanning lines: fall back to counting rows
        return np.arange(skip + 1, skip + nrows + 1, dtype=np.int64)
    return rows.astype(np.int64)


def _read_delimited(src: Source, delim: str, kind: str, resolve: Resolve) -> _Table:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    header = _first_line(src.data)
    names = _header_fields(header, delim.encode())
    found = resolve(names)
    # Arrow takes the columns by position (c0, c1, ...): a header name need not be UTF-8
    position = {name: f"c{i}" for i, name in reversed(list(enumerate(names)))}
    found = {role: position[name] for role, name in found.items()}
    wanted = list(dict.fromkeys(found.values()))
    try:
        table = pacsv.read_csv(
            pa.BufferReader(src.data),
            pacsv.ReadOptions(
                use_threads=source.arrow_threads(len(src.data), 1 << 24),
                block_size=1 << 24,
                column_names=[f"c{i}" for i in range(len(names))],
                skip_rows=1,
            ),
            pacsv.ParseOptions(
                delimiter=delim,
                quote_char='"',
                double_quote=True,
                escape_char=False,
                newlines_in_values=False,
                ignore_empty_lines=True,
            ),
            pacsv.ConvertOptions(
                column_types={c: pa.large_binary() for c in wanted},
                include_columns=wanted,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowKeyError) as exc:
        raise _delimited_error(src, delim, kind, len(names), exc) from None
    lineno = _line_numbers(src.data, table.num_rows, 1, "empty")
    cols = {role: _trim(table.column(col).combine_chunks()) for role, col in found.items()}
    return _Table(src.name, cols, lineno, kind)


def _trim(arr: pa.Array) -> pa.Array:
    """Blanks around a CSV/TSV value are padding, as around a header name (``1, a, 3``)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    return pc.ascii_trim(arr.view(pa.large_string()), " \t").view(pa.large_binary())


def _delimited_error(src: Source, delim: str, kind: str, ncols: int, exc: Exception) -> InputError:
    """Rescan a file pyarrow refused, to say which line is wrong."""
    import csv
    import io

    text = io.StringIO(src.data.decode("utf-8", "surrogateescape"), newline="")
    reader = csv.reader(text, delimiter=delim, quotechar='"')
    try:
        for row in reader:
            if reader.line_num == 1 or not row:
                continue
            if len(row) != ncols:
                return InputError(
                    src.name,
                    f"expected {ncols} {kind.upper()} fields (as in the header), got {len(row)}",
                    reader.line_num,
                )
    except csv.Error as err:
        return InputError(src.name, f"malformed {kind.upper()} ({err})", reader.line_num)
    detail = " ".join(str(exc).split())
    return InputError(src.name, f"cannot read the {kind.upper()} file ({detail})")


def _json_type(value: Any) -> pa.DataType | None:
    import pyarrow as pa

    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None
    if isinstance(value, int):
        return pa.int64()
    if isinstance(value, float):
        return pa.float64()
    return pa.string()


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _read_jsonl(src: Source, resolve: Resolve) -> _Table:
    import json

    import pyarrow as pa
    import pyarrow.json as pj

    data = src.data
    start = len(data) - len(data.lstrip())
    end = data.find(b"\n", start)
    first_line = data.count(b"\n", 0, start) + 1
    try:
        pairs: list[str] = []

        def keys(items: list[tuple[str, Any]]) -> dict[str, Any]:
            pairs[:] = [k for k, _ in items]  # the last object closed is the outermost: its keys, repeated too
            return dict(items)

        first = json.loads(data[start : end if end >= 0 else len(data)], object_pairs_hook=keys)
    except ValueError as exc:
        raise InputError(src.name, f"not valid JSON ({exc.args[0].split(':')[0]})", first_line) from None
    if not isinstance(first, dict):
        raise InputError(src.name, f"expected a JSON object, got {_json_kind(first)}", first_line)
    found = resolve(pairs)
    fields = []
    for role, col in found.items():
        typ = _json_type(first[col])
        if typ is None:
            raise InputError(
                src.name, f"'{col}' is {_json_kind(first[col])}; expected a string or a number", first_line
            )
        if role in ("score", "rel") and typ == pa.int64():
            typ = pa.float64()  # 3 then 2.5 is fine for numbers
        fields.append((col, typ))
    schema = pa.schema(list(dict(fields).items()))
    try:
        table = pj.read_json(
            pa.BufferReader(data),
            pj.ReadOptions(use_threads=source.arrow_threads(len(data), 1 << 24), block_size=1 << 24),
            pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="ignore", newlines_in_values=False),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise _jsonl_error(src, dict(fields), exc) from None
    lineno = _line_numbers(data, table.num_rows, 0, "space")
    cols = {role: table.column(col).combine_chunks() for role, col in found.items()}
    return _Table(src.name, cols, lineno, "jsonl")


def _jsonl_error(src: Source, types: dict[str, pa.DataType], exc: Exception) -> InputError:
    """Rescan JSON Lines pyarrow refused, to say which line is wrong and why."""
    import json

    import pyarrow as pa

    seen: dict[str, tuple[str, int]] = {}
    for i, raw in enumerate(src.data.split(b"\n"), start=1):
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
        except ValueError as err:
            return InputError(src.name, f"not valid JSON ({err.args[0].split(':')[0]})", i)
        if not isinstance(obj, dict):
            return InputError(src.name, f"expected a JSON object, got {_json_kind(obj)}", i)
        for col, typ in types.items():
            if col not in obj:
                continue  # reported as missing after reading
            v = obj[col]
            kind = _json_kind(v)
            if v is not None and _json_type(v) is None:
                return InputError(src.name, f"'{col}' is {kind}; expected a string or a number", i)
            if v is None:
                continue
            if col in seen and seen[col][0] != kind:
                return InputError(src.name, f"'{col}' is {kind} here but {seen[col][0]} on line {seen[col][1]}", i)
            seen.setdefault(col, (kind, i))
            if typ == pa.int64() and isinstance(v, int) and not -(2**63) <= v < 2**63:
                return InputError(src.name, f"'{col}' {v} is out of range", i)
    detail = " ".join(str(exc).split())
    return InputError(src.name, f"cannot read the JSON Lines file ({detail})")


def _read_parquet(src: Source, resolve: Resolve) -> _Table:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pf = pq.ParquetFile(pa.BufferReader(src.data))
        names = pf.schema_arrow.names
        found = resolve(names)
        threads = source.arrow_threads(len(src.data), 1 << 24)  # row groups and columns in parallel
        table = pf.read(columns=list(dict.fromkeys(found.values())), use_threads=threads)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        detail = " ".join(str(exc).split())
        raise InputError(src.name, f"cannot read the Parquet file ({detail})") from None
    cols = {role: table.column(col).combine_chunks() for role, col in found.items()}
    return _Table(src.name, cols, np.arange(1, table.num_rows + 1, dtype=np.int64), "parquet")


# --------------------------------------------------------------------------
# Typed columns


def _plain(arr: pa.Array) -> pa.Array:
    import pyarrow as pa

    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def _first_null(tab: _Table, arr: pa.Array, role: str) -> None:
    import numpy as np

    if arr.null_count:
        i = int(np.argmax(to_numpy(arr.is_null())))
        raise tab.error(f"no {role} value", i)


def _ids(tab: _Table, role: str) -> pa.Array:
    """An id column as large_binary (numbers are written in decimal)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _plain(tab.cols[role])
    _first_null(tab, arr, role)
    t = arr.type
    if pa.types.is_large_binary(t):
        out = arr
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t):
        out = arr.cast(pa.large_binary())
    elif pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t):
        out = pc.cast(arr, pa.large_string()).cast(pa.large_binary())
    else:
        raise tab.error(f"the {role} column has type {t}; expected strings or numbers")
    if len(out) and role != "runid":
        # from the offsets (a compute call with a Python 0 would import pandas, 0.5 s)
        offsets = np.frombuffer(out.buffers()[1], dtype=np.int64, count=out.offset + len(out) + 1)[out.offset :]
        empty = offsets[1:] == offsets[:-1]
        if empty.any():
            raise tab.error(f"empty {role}", int(np.argmax(empty)))
    return out


def _floats(tab: _Table, role: str, what: str) -> np.ndarray:
    import numpy as np
    import pyarrow as pa

    from .trec import parse_floats

    arr = _plain(tab.cols[role])
    _first_null(tab, arr, role)
    t = arr.type
    if pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_boolean(t):
        values = to_numpy(arr.cast(pa.float64()))
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            values = parse_floats(arr.cast(pa.large_binary()), tab.lineno, tab.name, what)
        except InputError as exc:
            raise tab.rewrap(exc) from None
    else:
        raise tab.error(f"the {role} column has type {t}; expected numbers")
    values = np.ascontiguousarray(values, dtype=np.float64)
    nan = np.isnan(values)
    if nan.any():
        raise tab.error(f"{what} 'nan' cannot be ranked", int(np.argmax(nan)))
    return values


def _ints(tab: _Table, role: str, what: str) -> np.ndarray:
    """Whole numbers (labels, ranks), one rule for every format: typed integers; typed
    floats and text that are whole numbers (``1.0``, ``1e0``); anything else is refused."""
    import numpy as np
    import pyarrow as pa

    from .trec import first_not_whole, parse_whole

    arr = _plain(tab.cols[role])
    _first_null(tab, arr, role)
    t = arr.type
    if t == pa.uint64():  # a value past int64 would not cast (or would wrap): refused as the readers do
        u = to_numpy(arr)
        big = np.flatnonzero(u > np.iinfo(np.int64).max)
        if len(big):
            i = int(big[0])
            raise tab.error(f"{what} '{int(u[i])}' is out of range", i)
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        values = to_numpy(arr.cast(pa.int64()))
    elif pa.types.is_floating(t) or pa.types.is_decimal(t):
        f = to_numpy(arr.cast(pa.float64()))
        bad = first_not_whole(f)
        if bad is not None:
            i, why = bad
            raise tab.error(f"{what} '{f[i]:g}' {why}", i)
        values = f.astype(np.int64)
    elif pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            values = parse_whole(arr.cast(pa.large_binary()), tab.lineno, tab.name, what)
        except InputError as exc:
            raise tab.rewrap(exc) from None
    else:
        raise tab.error(f"the {role} column has type {t}; expected integers")
    return np.ascontiguousarray(values, dtype=np.int64)


def expand_runs(args: Sequence[str]) -> list[str]:
    """Run arguments as files: a pattern such as ``runs/*.txt`` that names no file itself is
    expanded (sorted, so the order is the same everywhere); ``-`` is standard input, at most once."""
    out: list[str] = []
    for arg in args:
        # a URL is one dataset; glob.has_magic's own test, without importing glob for a plain name
        if arg == "-" or "://" in arg or os.path.exists(arg) or not any(c in arg for c in "*?["):
            out.append(arg)
            continue
        import glob

        matches = sorted(glob.glob(arg))
        if not matches:
            raise InputError(arg, "cannot read run file: no file matches this pattern")
        out.extend(matches)
    if out.count("-") > 1:
        raise UsageError("only one run can be read from standard input ('-')")
    return out
