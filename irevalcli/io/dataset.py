"""Datasets: one run (or qrels, or labelled table) spread over many files, on any fsspec URL.

A dataset is a directory (its files, recursively), or a URL with a scheme (``file://``,
``memory://``, ``s3://``, ``gs://``, ...: whatever fsspec knows), which may hold a glob
(``s3://bucket/run/part-*.parquet``). A plain local glob (``'runs/*.txt'``) stays what it
always was: several runs. Files whose path has a part starting with ``_`` or ``.``
(``_SUCCESS``, ``_metadata``, ``.crc``) are not data. Files are read in sorted path order.

Hive partitioning is understood: a directory ``key=value`` gives each row of the files
under it the column ``key`` with that value (URL-escaped values are unescaped), unless the
file has the column itself; ``qid=301/part.parquet`` holds topic 301's rows.

Each file is read by the same readers as a single input (:mod:`irevalcli.io.tabular`): the
same header recognition, ``--column`` mapping and checks, errors naming the file and row.
Every file must have the schema of the first one (format, column names and types).

Rows keep their place as an order key, ``file index << 32 | line``: the local engine (all
files in one table) and the Dask engine (rows shuffled by topic) order a topic's rows alike.

The local engine reads a dataset whole (:func:`read_run_dataset`); the Dask engine reads it
file by file on its workers (:func:`read_part`). Both read the same bytes the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import DuplicateDocError, InputError, UsageError
from ..machine import cpus
from .arrow import LEAST_OF_DIGITS, MAX_DIGITS, repeated_text, zeros_for_nulls
from .source import is_url
from .trec import Qrels, Run, Source

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_HIVE = re.compile(r"^([^=]+)=(.*)$")
LINE_BITS = 32  # order key: file index << LINE_BITS | line
# the packages of the `dask` extra (pyproject.toml), by name: irevalcli is on no package index
INSTALL_HINT = "pip install 'dask[dataframe]>=2024.12' 'distributed>=2024.12'"


@dataclass(frozen=True)
class Dataset:
    """The files of one dataset, in order, with their hive partition values."""

    spec: str  # as given: the name in messages and outputs
    fs: Any  # an fsspec filesystem, or None for local paths read with open()
    files: tuple[str, ...]  # paths as ``fs`` (or open()) takes them
    names: tuple[str, ...]  # as shown in messages
    hive: tuple[tuple[tuple[str, str], ...], ...]  # per file: (key, value) from its directories
    keys: tuple[str, ...] = field(default=())  # the hive keys every file has
    index: tuple[int, ...] = field(default=())  # a subset's files' places in the whole dataset
    first: str = ""  # a subset's: the whole dataset's first file (schema messages)

    def __len__(self) -> int:
        return len(self.files)

    def only(self, files: Sequence[int]) -> Dataset:
        """The dataset restricted to some files (what one Dask task needs to carry)."""
        return Dataset(
            spec=self.spec,
            fs=self.fs,
            files=tuple(self.files[i] for i in files),
            names=tuple(self.names[i] for i in files),
            hive=tuple(self.hive[i] for i in files),
            keys=self.keys,
            index=tuple(self.place(i) for i in files),
            first=self.first_name,
        )

    def place(self, i: int) -> int:
        """File ``i``'s place in the whole dataset (its order keys' high bits)."""
        return self.index[i] if self.index else i

    @property
    def first_name(self) -> str:
        return self.first or self.names[0]

    def read_bytes(self, i: int, what: str) -> bytes:
        name = self.names[i]
        try:
            if self.fs is None:  # a member is read as the same file alone would be
                from .source import read_whole

                return read_whole(self.files[i], what=what, hash=False, name=name).data
            with self.fs.open(self.files[i], "rb") as fh:
                return bytes(fh.read())
        except FileNotFoundError:
            raise InputError(name, f"cannot read {what} file: no such file") from None
        except PermissionError:
            raise InputError(name, f"cannot read {what} file: permission denied") from None
        except OSError as exc:
            raise InputError(name, f"cannot read {what} file: {exc.strerror or exc}") from None
        except Exception as exc:  # a file system's own failure (fsspec backends raise anything)
            if isinstance(exc, (MemoryError, InputError)):
                raise
            raise InputError(name, f"cannot read {what} file: {url_failure(exc)}") from None


def url_failure(exc: BaseException) -> str:
    """Why a URL could not be read, in a few words: an fsspec file system raises its backend's
    own errors (a refused connection, a missing or broken archive, a client library's)."""
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory" + (f" ({exc.filename})" if exc.filename else "")
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror[0].lower() + exc.strerror[1:]
    text = " ".join(str(exc).split())
    if len(text) > 160:
        text = text[:157] + "..."
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _not_data(rel: str) -> bool:
    return any(part.startswith(("_", ".")) for part in rel.split("/") if part)


def open_dataset(spec: str, what: str) -> Dataset:  # noqa: C901  debt: one branch per layout and format
    """List a dataset's files (a directory, a URL, a URL glob; a single file is a dataset of one)."""
    import glob as globmod

    spec = os.fspath(spec)
    if is_url(spec):
        try:
            import fsspec
        except ImportError:
            raise UsageError(f"{spec}: reading a URL needs fsspec: {INSTALL_HINT}") from None
        try:
            fs, path = fsspec.core.url_to_fs(spec)
        except (ImportError, ValueError) as exc:
            raise InputError(spec, f"cannot read {what} dataset: {' '.join(str(exc).split())}") from None
        except Exception as exc:  # the file system could not be made (zip:// of a missing archive, ftp:// refused)
            if isinstance(exc, MemoryError):
                raise
            raise InputError(spec, f"cannot read {what} dataset: {url_failure(exc)}") from None
        protocol = fs.protocol if isinstance(fs.protocol, str) else fs.protocol[0]
        try:
            if globmod.has_magic(path):
                root = path.split("*")[0].split("?")[0].split("[")[0].rsplit("/", 1)[0]
                files = sorted(p for p in fs.glob(path) if fs.isfile(p))
            elif fs.isdir(path):
                root = path.rstrip("/")
                files = sorted(fs.find(path))
            elif fs.isfile(path):
                root, files = path.rsplit("/", 1)[0] if "/" in path else "", [path]
            else:
                raise InputError(spec, f"cannot read {what} dataset: no such file or directory")
        except OSError as exc:
            raise InputError(spec, f"cannot read {what} dataset: {exc.strerror or exc}") from None
        except Exception as exc:
            if isinstance(exc, (MemoryError, InputError)):
                raise
            raise InputError(spec, f"cannot read {what} dataset: {url_failure(exc)}") from None

        def shown(p: str) -> str:
            return fs.unstrip_protocol(p) if protocol != "file" else f"file://{p}"

    else:
        fs = None
        protocol = ""
        if os.path.isdir(spec):
            root = spec.rstrip("/") or "/"
            files = sorted(
                os.path.join(d, f).replace(os.sep, "/")
                for d, _, names in os.walk(spec, followlinks=True)
                for f in names
            )
        elif os.path.exists(spec):
            root, files = os.path.dirname(spec), [spec]
        else:
            raise InputError(spec, f"cannot read {what} file: no such file")

        def shown(p: str) -> str:
            return p

    rels = [p[len(root) :].lstrip("/") if root and p.startswith(root) else p for p in files]
    keep = [i for i, rel in enumerate(rels) if not _not_data(rel)]
    if not keep:
        raise InputError(spec, f"cannot read {what} dataset: it holds no files")
    files = [files[i] for i in keep]
    rels = [rels[i] for i in keep]
    hive = []
    from urllib.parse import unquote

    for rel in rels:
        pairs = []
        for part in rel.split("/")[:-1]:
            m = _HIVE.match(part)
            if m:
                pairs.append((unquote(m.group(1)), unquote(m.group(2))))
        hive.append(tuple(pairs))
    keys = set(k for k, _ in hive[0])
    for h in hive[1:]:
        keys &= {k for k, _ in h}
    if len(files) >= 1 << (63 - LINE_BITS):
        raise InputError(spec, f"cannot read {what} dataset: more than {1 << (63 - LINE_BITS)} files")
    if fs is None or protocol == "file":  # local members are inputs no output may replace
        from .source import record_input

        for p in files:
            try:
                record_input(os.stat(p), shown(p))
            except OSError:
                pass
    return Dataset(
        spec=spec,
        fs=fs,
        # absolute: a worker of the Dask engine may run in another directory
        files=tuple(files) if fs is not None else tuple(os.path.abspath(p) for p in files),
        names=tuple(shown(p) for p in files),
        hive=tuple(hive),
        keys=tuple(k for k, _ in hive[0] if k in keys),
    )


# ---------------------------------------------------------------- schemas


def _kind(data: bytes, fmt: str, columns: Mapping[str, str], hive: Sequence[tuple[str, str]] = ()) -> str:
    from .tabular import detect

    if fmt != "auto":
        return fmt
    return detect(data, columns, [k for k, _ in hive])


def schema_of(data: bytes, kind: str, name: str) -> tuple[str, ...]:
    """What every file of a dataset must share: its format, and its columns (name and type)."""
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            schema = pq.ParquetFile(pa.BufferReader(data)).schema_arrow
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
            raise InputError(name, f"cannot read the Parquet file ({' '.join(str(exc).split())})") from None
        return (kind, *(f"{f.name} {f.type}" for f in schema))
    if kind in ("tsv", "csv"):
        line = data.split(b"\n", 1)[0].rstrip(b"\r")
        fields = line.split(b"\t" if kind == "tsv" else b",")
        return (kind, *(f.decode("utf-8", "replace").strip() for f in fields))
    return (kind,)


def check_schema(name: str, got: tuple[str, ...], want: tuple[str, ...] | None, first: str) -> None:
    if want is None or got == want:
        return
    if got[0] != want[0]:
        detail = f"it is {got[0]}, {first} is {want[0]}"
    else:
        a, b = set(got[1:]), set(want[1:])
        only_here = [c for c in got[1:] if c not in b]
        only_there = [c for c in want[1:] if c not in a]
        if only_here or only_there:
            detail = (
                "columns "
                + ", ".join([*(f"+{c}" for c in only_here), *(f"-{c}" for c in only_there)])
                + f" against {first}"
            )
        else:
            detail = f"its columns are in another order than {first}'s"
    raise InputError(name, f"schema differs from the dataset's first file ({detail})")


# ---------------------------------------------------------------- reading one file


@dataclass
class Part:
    """One file read: its run (and, for a labelled table, which rows carry a label)."""

    run: Run
    labels: np.ndarray | None = None  # int64 labels (0 where unlabelled)
    labelled: np.ndarray | None = None  # bool: the row carries a label


def _with_hive(data: bytes, name: str, hive: Sequence[tuple[str, str]], fill_label: str | None) -> bytes:
    """Parquet bytes with the hive columns the file lacks added (as strings), and for a
    labelled table the missing labels filled with 0 (their rows are told apart by the caller)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        table = pq.ParquetFile(pa.BufferReader(data)).read()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OSError) as exc:
        raise InputError(name, f"cannot read the Parquet file ({' '.join(str(exc).split())})") from None
    changed = False
    for key, value in hive:
        if key not in table.column_names:
            table = table.append_column(key, repeated_text(value, table.num_rows))
            changed = True
    if fill_label is not None and fill_label in table.column_names:
        col = table.column(fill_label)
        if col.null_count:
            # (a Python fill value goes through pyarrow's pandas shim: numbers and text without it)
            if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
                filled = zeros_for_nulls(col)
            elif pa.types.is_string(col.type) or pa.types.is_large_string(col.type):
                import pyarrow.compute as pc

                filled = pc.coalesce(col.combine_chunks(), repeated_text("0", len(col)).cast(col.type))
            else:
                zero = pa.scalar(0)
                filled = col.fill_null(zero.cast(col.type) if not pa.types.is_dictionary(col.type) else zero)
            table = table.set_column(table.column_names.index(fill_label), fill_label, filled)
            changed = True
    if not changed:
        return data
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, compression="none")
    return bytes(sink.getvalue().to_pybytes())


def read_part(
    ds: Dataset,
    i: int,
    *,
    what: str = "run",
    fmt: str = "auto",
    columns: Mapping[str, str] | None = None,
    schema: tuple[str, ...] | None = None,
    ranks: bool = False,
    labelled: bool = False,
) -> Part:
    """File ``i`` of a dataset as a run (``what="run"``), qrels (``"qrels"``: Part.run is
    None; see :func:`read_qrels_part`) or labelled table; ``lineno`` is the order key."""
    import numpy as np

    from .tabular import find_column, parse_run_source
    from .trec import decompress

    columns = dict(columns or {})
    name = ds.names[i]
    data = decompress(ds.read_bytes(i, what), name, what)
    if not data.strip():  # an empty part (an empty partition): no rows, and no format to check
        return _empty_part(name, ranks, labelled)
    kind = _kind(data, fmt, columns, ds.hive[i])
    check_schema(name, schema_of(data, kind, name), schema, ds.first_name)
    label_col = None
    nulls = None
    if labelled:
        if kind != "parquet":
            raise InputError(name, f"a labelled table must be Parquet (qid, docno, score, rel), not {kind}")
        import pyarrow as pa
        import pyarrow.parquet as pq

        names = [*pq.ParquetFile(pa.BufferReader(data)).schema_arrow.names, *(k for k, _ in ds.hive[i])]
        label_col = find_column("rel", names, columns)
        if label_col is None:
            listing = ", ".join(names)
            raise InputError(
                name, f"no 'rel' column for the labelled table (columns: {listing}); name one with --column rel=NAME"
            )
        fast = _plain_labelled(data, name, ds.hive[i], columns, ranks)
        if fast is not None:
            run, labels, missing = fast
            run.lineno = (np.int64(ds.place(i)) << LINE_BITS) | run.lineno
            has = np.ones(len(labels), dtype=bool) if missing is None else ~missing
            return Part(run, labels=labels, labelled=has)
        nulls = _null_rows(data, label_col)
    if kind == "parquet" and (ds.hive[i] or (label_col is not None and nulls is not None)):
        data = _with_hive(data, name, ds.hive[i], label_col)  # rewritten only when it must be
    src = Source(name=name, data=data, sha256="")
    # a member is read as the same file alone would be, but may hold no rows; its hive
    # directories give it the columns it lacks, whatever its format (Parquet: added above)
    run = parse_run_source(
        src,
        fmt=fmt if fmt != "auto" else kind,
        columns=columns,
        ranks=ranks,
        constants=ds.hive[i] if kind != "parquet" else (),
        allow_empty=True,
    )
    run.lineno = (np.int64(ds.place(i)) << LINE_BITS) | run.lineno
    if not labelled:
        return Part(run)
    from .tabular import parse_qrels_source

    q = parse_qrels_source(Source(name=name, data=data, sha256=""), fmt="parquet", columns=columns, allow_empty=True)
    has = np.ones(len(q.rel), dtype=bool) if nulls is None else ~nulls
    return Part(run, labels=np.where(has, q.rel, 0), labelled=has)


def _plain_labelled(
    data: bytes, name: str, hive: Sequence[tuple[str, str]], columns: Mapping[str, str], ranks: bool
) -> tuple[Run, np.ndarray, np.ndarray | None] | None:
    """A labelled Parquet file read once (run, labels with 0 where missing, rows missing
    one), or None when the general two-pass reading must say what is wrong with it."""
    from .tabular import NotPlain, parse_labelled_parquet

    if ranks:
        return None
    if hive and _needs_hive(data, hive, columns):
        data = _with_hive(data, name, hive, None)
    try:
        return parse_labelled_parquet(Source(name=name, data=data, sha256=""), columns)
    except NotPlain:
        return None


def _needs_hive(data: bytes, hive: Sequence[tuple[str, str]], columns: Mapping[str, str]) -> bool:
    """Whether a column a labelled table's reading takes (qid, docno, score, rel, runid)
    is one of the hive partition's keys rather than the file's own: only then is the file
    rewritten with them (:func:`_with_hive`), as the columns resolve the same either way."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    return takes_hive(pq.ParquetFile(pa.BufferReader(data)).schema_arrow.names, hive, columns)


def takes_hive(own: Sequence[str], hive: Sequence[tuple[str, str]], columns: Mapping[str, str]) -> bool:
    """:func:`_needs_hive` of a file whose own columns are ``own``."""
    from .tabular import find_column

    names = [*own, *(k for k, _ in hive if k not in own)]
    found = (find_column(role, names, columns) for role in ("qid", "docno", "score", "rel", "runid"))
    return any(col is not None and col not in own for col in found)


def _empty_part(name: str, ranks: bool, labelled: bool) -> Part:
    import numpy as np

    run = Run.empty(name)
    if ranks:
        run.rank = np.zeros(0, dtype=np.int64)
    if not labelled:
        return Part(run)
    return Part(run, labels=np.zeros(0, dtype=np.int64), labelled=np.zeros(0, dtype=bool))


def _null_rows(data: bytes, col: str) -> np.ndarray | None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .arrow import to_numpy

    pf = pq.ParquetFile(pa.BufferReader(data))
    if col not in pf.schema_arrow.names:
        return None  # a hive column: never null
    arr = pf.read(columns=[col]).column(col)
    if not arr.null_count:
        return None
    return to_numpy(arr.is_null())


def read_qrels_part(
    ds: Dataset, i: int, *, fmt: str = "auto", columns: Mapping[str, str] | None = None, schema: Any = None
) -> Qrels:
    import numpy as np

    from .tabular import parse_qrels_source
    from .trec import decompress

    columns = dict(columns or {})
    name = ds.names[i]
    data = decompress(ds.read_bytes(i, "qrels"), name, "qrels")
    if not data.strip():  # an empty part: no judgements, no format to check
        return parse_qrels_source(Source(name=name, data=b"", sha256=""), fmt="trec", allow_empty=True)
    kind = _kind(data, fmt, columns, ds.hive[i])
    check_schema(name, schema_of(data, kind, name), schema, ds.first_name)
    if kind == "parquet" and ds.hive[i]:
        data = _with_hive(data, name, ds.hive[i], None)
    q = parse_qrels_source(
        Source(name=name, data=data, sha256=""),
        fmt=fmt if fmt != "auto" else kind,
        columns=columns,
        constants=ds.hive[i] if kind != "parquet" else (),
        allow_empty=True,
    )
    q.lineno = (np.int64(ds.place(i)) << LINE_BITS) | q.lineno
    return q


def first_schema(
    ds: Dataset, what: str, fmt: str = "auto", columns: Mapping[str, str] | None = None
) -> tuple[str, ...]:
    from .trec import decompress

    for i in range(len(ds)):  # the first file with any content (an empty part has no format)
        data = decompress(ds.read_bytes(i, what), ds.names[i], what)
        if data.strip():
            return schema_of(data, _kind(data, fmt, dict(columns or {}), ds.hive[i]), ds.names[i])
    return ("empty",)


# ---------------------------------------------------------------- whole datasets (local engine)


def concat_runs(runs: Sequence[Run], name: str, runid: str) -> Run:
    import numpy as np
    import pyarrow as pa

    def cat(arrs: list[pa.Array]) -> pa.Array:
        return pa.concat_arrays(arrs) if len(arrs) != 1 else arrs[0]

    rank = None
    if runs and all(r.rank is not None for r in runs):
        rank = np.concatenate([r.rank for r in runs])
    return Run(
        name=name,
        sha256="",
        qid=cat([r.qid for r in runs]),
        docno=cat([r.docno for r in runs]),
        score=np.concatenate([r.score for r in runs]),
        lineno=np.concatenate([r.lineno for r in runs]),
        runid=runid,
        rank=rank,
    )


def dataset_runid(ds: Dataset, last: Run) -> str:
    """The runid of the last row of the last file, when its file names one (a runid column,
    TREC text); else one made from the dataset's name, as a single file's is from its name."""
    from .tabular import default_runid

    if last.runid == default_runid(last.name):
        return default_runid(ds.spec.rstrip("/"))
    return last.runid


def read_run_dataset(
    spec: str, *, fmt: str = "auto", columns: Mapping[str, str] | None = None, ranks: bool = False
) -> Run:
    ds = open_dataset(spec, "run")
    schema = first_schema(ds, "run", fmt, columns)
    runs = [read_part(ds, i, fmt=fmt, columns=columns, schema=schema, ranks=ranks).run for i in range(len(ds))]
    runs = [r for r in runs if len(r)]  # empty parts (empty partitions) add nothing
    if not runs:
        raise InputError(ds.spec, "the run dataset has no results (every file is empty)")
    return concat_runs(runs, ds.spec, dataset_runid(ds, runs[-1]))


def read_qrels_dataset(spec: str, *, fmt: str = "auto", columns: Mapping[str, str] | None = None) -> Qrels:
    import numpy as np
    import pyarrow as pa

    ds = open_dataset(spec, "qrels")
    schema = first_schema(ds, "qrels", fmt, columns)
    parts = [read_qrels_part(ds, i, fmt=fmt, columns=columns, schema=schema) for i in range(len(ds))]
    parts = [q for q in parts if len(q.rel)]  # empty parts add nothing
    if not parts:
        raise InputError(ds.spec, "the qrels dataset has no judgements (every file is empty)")
    return Qrels(
        name=ds.spec,
        sha256="",
        qid=pa.concat_arrays([q.qid for q in parts]),
        docno=pa.concat_arrays([q.docno for q in parts]),
        rel=np.concatenate([q.rel for q in parts]),
        lineno=np.concatenate([q.lineno for q in parts]),
    )


def labelled_qrels(run: Run, labels: np.ndarray, labelled: np.ndarray, name: str) -> Qrels:
    """The judgements a labelled table carries: its rows that have a label."""
    from .arrow import from_numpy

    if labelled.all():  # every row judged: the run's columns are the judgements' (no copy)
        return Qrels(name=name, sha256="", qid=run.qid, docno=run.docno, rel=labels, lineno=run.lineno)
    keep = from_numpy(labelled)
    return Qrels(
        name=name,
        sha256="",
        qid=run.qid.filter(keep),
        docno=run.docno.filter(keep),
        rel=labels[labelled],
        lineno=run.lineno[labelled],
    )


@dataclass
class Labelled:
    """A labelled table read: its judgements and its run, and per run row its label (0
    where missing) and whether it has one."""

    qrels: Qrels
    run: Run
    labels: np.ndarray
    has: np.ndarray


def read_labelled_dataset(
    spec: str, *, columns: Mapping[str, str] | None = None, ranks: bool = False
) -> tuple[Qrels, Run]:
    """A labelled table (qid, docno, score, rel per row) as its judgements and its run."""
    got = read_labelled(spec, columns=columns, ranks=ranks)
    return got.qrels, got.run


def read_labelled(spec: str, *, columns: Mapping[str, str] | None = None, ranks: bool = False) -> Labelled:
    """:func:`read_labelled_dataset`, with each run row's label kept.

    A local log of Parquet files whose ids are all canonical decimals is read as numbers
    (:func:`read_log`): its run and judgements then hold the id texts only when something
    asks for them (the general path after a refusal, the API caller), read again then."""
    ds = open_dataset(spec, "labelled table")
    if not ranks:
        got = read_log(ds, columns or {})
        if got is not None:
            return got
    return _read_labelled(ds, columns, ranks)


def _read_labelled(ds: Dataset, columns: Mapping[str, str] | None, ranks: bool) -> Labelled:
    import numpy as np

    schema = first_schema(ds, "labelled table", "auto", columns)
    parts = [
        read_part(ds, i, what="labelled table", columns=columns, schema=schema, ranks=ranks, labelled=True)
        for i in range(len(ds))
    ]
    parts = [p for p in parts if len(p.run)]  # empty parts add nothing
    if not parts:
        raise InputError(ds.spec, "the labelled table has no rows (every file is empty)")
    run = concat_runs([p.run for p in parts], ds.spec, dataset_runid(ds, parts[-1].run))
    labels = np.concatenate([p.labels for p in parts])
    has = np.concatenate([p.labelled for p in parts])
    return Labelled(labelled_qrels(run, labels, has, ds.spec), run, labels, has)


# ---------------------------------------------------------------- impression logs read as numbers

# A log's arrays of at least this many bytes are mapped pages of their own (see _pages).
MAPPED_BYTES = 1 << 22


def decimal_ids(ids: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Each id's value and its number of digits when every id of a string or binary array
    (without nulls) is a canonical decimal, else None."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow import to_numpy

    if not len(ids) or ids.null_count:
        return None
    t = ids.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            ids = ids.cast(pa.large_string() if pa.types.is_large_binary(t) else pa.string())
        except (pa.ArrowInvalid, UnicodeDecodeError):
            return None
    elif not (pa.types.is_string(ids.type) or pa.types.is_large_string(ids.type)):
        return None
    try:
        # to uint64 and viewed as int64: Arrow's unsigned parse takes half the time of its signed
        # one (core.table._numeric_ids); a text with a sign is refused either way, and a value
        # of 2**63 or more (more digits than MAX_DIGITS) is negative in the view, refused below
        v = to_numpy(pc.cast(ids, pa.uint64())).view(np.int64)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None
    width = np.int64 if pa.types.is_large_string(ids.type) else np.int32
    offsets = np.frombuffer(ids.buffers()[1], dtype=width, count=ids.offset + len(ids) + 1)[ids.offset :]
    digits = np.diff(offsets)
    if int(digits.min()) < 1 or int(digits.max()) > MAX_DIGITS or int(v.min()) < 0:
        return None
    # ('+5', '05', '-0' parse to values with fewer digits than their texts)
    if not bool((v >= LEAST_OF_DIGITS[digits]).all()):
        return None
    return v, digits


@dataclass
class LogNumbers:
    """A labelled log's rows as numbers: ``user`` and ``doc``, the values of each row's user
    id and docno, whose decimal text is the id (a canonical decimal, or an integer column's
    value: it may then be negative or have more than 15 digits); ``score``. Handed over
    once (:meth:`LogRun.take_numbers`), to be overwritten.

    ``user`` and ``doc`` are the two halves of ``ids``: int32 when every value fits (half
    the memory), else int64; once both are used, ``ids`` holds as many int64 as rows."""

    user: np.ndarray  # int32 or int64
    doc: np.ndarray  # as user
    score: np.ndarray  # float64
    ids: np.ndarray  # user then doc


def _on_demand(name: str) -> Any:
    """A field of :class:`LogRun`/:class:`LogQrels`: read by their ``_field`` when first asked
    for, or the value it was given."""
    return property(lambda self: self._field(name), lambda self, v: self._own.__setitem__(name, v))


class LogRun(Run):
    """The run of a log read as numbers (:func:`read_log`): its id texts and order keys
    are made only when something reads them (the general path, the API's caller)."""

    def __new__(cls, *args: Any, **fields: Any) -> Any:
        if "qid" in fields:  # dataclasses.replace(): a plain run with the fields given
            return Run(**fields)
        return super().__new__(cls)

    def __init__(self, name: str, runid: str, numbers: LogNumbers, loaded: _Loaded) -> None:
        self._numbers: LogNumbers | None = numbers
        self._loaded = loaded
        self._n = len(numbers.score)
        self._own: dict[str, Any] = {}
        super().__init__(name, "", None, None, None, None, runid)  # type: ignore[arg-type]

    def take_numbers(self) -> LogNumbers | None:
        """The rows as numbers, once: the taker lets each array go when done with it."""
        numbers, self._numbers = self._numbers, None
        return numbers

    def __len__(self) -> int:
        return self._n

    def _field(self, name: str) -> Any:
        got = self._own.get(name)
        if got is None:
            if name == "lineno":
                got = self._loaded.lineno()
            elif name == "score" and self._numbers is not None:
                return self._numbers.score
            else:
                got = getattr(self._loaded.labelled().run, name)
            self._own[name] = got
        return got

    qid, docno, score, lineno = (_on_demand(n) for n in ("qid", "docno", "score", "lineno"))


class LogQrels(Qrels):
    """The judgements of a log read as numbers: the labelled rows' labels at hand, their
    id texts and order keys read when asked for."""

    def __new__(cls, *args: Any, **fields: Any) -> Any:
        if "qid" in fields:  # dataclasses.replace(): plain judgements with the fields given
            return Qrels(**fields)
        return super().__new__(cls)

    def __init__(self, name: str, labels: np.ndarray, has: np.ndarray | None, loaded: _Loaded) -> None:
        self._labels, self._has, self._loaded = labels, has, loaded
        self._own: dict[str, Any] = {}
        super().__init__(name, "", None, None, None, None)  # type: ignore[arg-type]

    def _field(self, name: str) -> Any:
        import numpy as np

        got = self._own.get(name)
        if got is not None:
            return got
        if name == "rel":  # (not kept: made again from the narrow labels when asked for)
            rel = self._labels if self._has is None else self._labels[self._has]
            return rel.astype(np.int64)
        if name == "lineno":
            line = self._loaded.lineno()
            got = line if self._has is None else line[self._has]
        else:
            got = getattr(self._loaded.labelled().qrels, name)
        self._own[name] = got
        return got

    qid, docno, rel, lineno = (_on_demand(n) for n in ("qid", "docno", "rel", "lineno"))


@dataclass
class _Loaded:
    """A log's general reading, done once if ever asked for."""

    ds: Dataset
    columns: Mapping[str, str]
    rows: tuple[int, ...]  # per file
    got: Labelled | None = None

    def labelled(self) -> Labelled:
        if self.got is None:
            self.got = _read_labelled(self.ds, self.columns, False)
        return self.got

    def lineno(self) -> np.ndarray:
        import numpy as np

        return np.concatenate(
            [
                (np.int64(self.ds.place(i)) << LINE_BITS) | np.arange(1, n + 1, dtype=np.int64)
                for i, n in enumerate(self.rows)
            ]
        )


def _integer_ids(t: pa.DataType) -> bool | None:
    """Whether an id column of type ``t`` holds integers (True) or texts (False) that
    :func:`read_log` may read as numbers; None when it leaves the column to the general reading."""
    import pyarrow as pa

    if pa.types.is_integer(t):
        return True
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        return False
    return None


class _Wide(Exception):
    """An id past int32 read into int32 ids (:func:`read_log` reads the log again as int64)."""


def _id_values(ids: pa.Array, integers: bool, out: np.ndarray) -> bool:
    """An id column's values written to ``out`` (int32 or int64): integers as they are
    (their texts are their decimals), texts when every one is a canonical decimal; False
    (``out`` left half written) when there is a null, an unsigned value past int64 or a
    text that is not a canonical decimal. Raises :class:`_Wide` when a value does not fit
    ``out``'s type."""
    import numpy as np
    import pyarrow as pa

    from .arrow import to_numpy

    if not integers:
        got = decimal_ids(ids)
        if got is None:
            return False
        v = got[0]
    else:
        if ids.null_count:
            return False  # the general reading says where ('no qid value')
        v = to_numpy(ids)
        if ids.type == pa.uint64() and len(v) and int(v.max()) > np.iinfo(np.int64).max:
            return False
    if out.dtype != v.dtype and len(v):
        room = np.iinfo(out.dtype)
        if int(v.min()) < room.min or int(v.max()) > room.max:
            raise _Wide
    out[:] = v
    return True


def _narrow_ids(files: Sequence[Any], column: str) -> bool:
    """Whether every row group's statistics say a column's ids fit in int32 (for texts, a
    guess from their bytewise least and greatest, which :func:`_id_values` checks)."""
    for pf in files:
        meta = pf.metadata
        at = [j for j in range(meta.num_columns) if meta.schema.column(j).path == column]
        if len(at) != 1:
            return False
        for g in range(meta.num_row_groups):
            stats = meta.row_group(g).column(at[0]).statistics
            if stats is None or not stats.has_min_max:
                return False
            for x in (stats.min, stats.max):
                if isinstance(x, bytes):
                    x = x.decode("ascii", "replace")
                if isinstance(x, str):
                    if not (x.isascii() and x.isdigit() and len(x) <= 10):
                        return False
                    x = int(x)
                if not isinstance(x, int) or not -(1 << 31) <= x < 1 << 31:
                    return False
    return True


def _pages(n: int, dtype: Any) -> np.ndarray:
    """An array of ``n`` values to be written, a large one in an anonymous mapping of its
    own: numpy asks the kernel for transparent huge pages for a large array, and on a
    virtual machine whose host gives memory lazily a huge page costs about four times its
    small pages to fault in (1 GB on the 2-core benchmark VM: 2.5 s of CPU against 0.6 s)."""
    import mmap

    import numpy as np

    size = n * np.dtype(dtype).itemsize
    if size < MAPPED_BYTES or not size:
        return np.empty(n, dtype=dtype)
    return np.frombuffer(mmap.mmap(-1, size), dtype=dtype)


def read_log(ds: Dataset, columns: Mapping[str, str], *, wide: bool = False) -> Labelled | None:  # noqa: C901  one check per case left to the general reading
    """A local labelled table of Parquet files whose user ids and docnos are all canonical
    decimals or integers, read as numbers: row groups decoded in parallel straight into the
    whole log's arrays (no id text kept, no copy of the file's bytes). None when the
    general reading must do it (another format or layout, a runid or rank column, a null or
    NaN where none may be, an id that is not a canonical decimal nor an integer below
    2**63): it then says what is wrong.

    An integer id's text is its decimal (``-5``, ``0``, ``12345678901234567``: what the
    general reading writes); a hive directory's keys are ignored unless one of them is a
    column the reading takes (then the general reading adds it to the rows).

    The ids are read as int32 when every row group's statistics say they fit (``wide``:
    as int64), and the log is read again as int64 when one does not after all."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from .arrow import to_numpy
    from .tabular import default_runid, find_column

    if ds.fs is not None or "rank" in columns:
        return None
    files = []
    schema = None
    try:
        for path in ds.files:
            with open(path, "rb") as fh:
                if fh.read(4) != b"PAR1":
                    return None
            pf = pq.ParquetFile(path)
            if schema is None:
                schema = pf.schema_arrow
            elif not pf.schema_arrow.equals(schema):
                return None
            files.append(pf)
    except (OSError, pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    assert schema is not None
    names = schema.names
    if len(set(names)) != len(names):
        return None
    cols = [find_column(role, names, columns) for role in ("qid", "docno", "score", "rel")]
    if None in cols or len(set(cols)) != 4 or find_column("runid", names, columns) is not None:
        return None
    if any(takes_hive(names, hive, columns) for hive in ds.hive if hive):
        return None
    qcol, dcol, scol, rcol = (str(c) for c in cols)
    qkind, dkind = (_integer_ids(schema.field(c).type) for c in (qcol, dcol))
    if qkind is None or dkind is None:
        return None
    qint, dint = qkind, dkind
    stype, rtype = schema.field(scol).type, schema.field(rcol).type
    if not pa.types.is_floating(stype) or not pa.types.is_integer(rtype) or rtype == pa.uint64():
        return None
    rows = tuple(pf.metadata.num_rows for pf in files)
    n = sum(rows)
    if not n or not all(rows):
        return None
    groups = []  # (file, row group, first row)
    start = 0
    for i, pf in enumerate(files):
        for g in range(pf.metadata.num_row_groups):
            groups.append((i, g, start))
            start += pf.metadata.row_group(g).num_rows
    # ids in int32 when the statistics say they fit (the fresh pages of a large log cost as
    # much as decoding it), read again as int64 when a value does not
    narrow = not wide and _narrow_ids(files, qcol) and _narrow_ids(files, dcol)
    ids = _pages(2 * n, np.int32 if narrow else np.int64)
    user, doc = ids[:n], ids[n:]
    score = _pages(n, np.float64)
    label = _pages(n, rtype.to_pandas_dtype())
    has: list[np.ndarray] = []  # which rows have a label: made at the first null
    lock = threading.Lock()

    def one(task: tuple[int, int, int]) -> bool:
        try:
            return fill(*task)
        except (pa.ArrowException, OSError, ValueError):  # (a broken file: the general reading says so)
            return False

    def fill(i: int, g: int, at: int) -> bool:
        t = pq.ParquetFile(ds.files[i]).read_row_group(g, columns=[qcol, dcol, scol, rcol], use_threads=False)
        m = t.num_rows
        if not m:
            return True
        part = slice(at, at + m)
        if not _id_values(t.column(qcol).combine_chunks(), qint, user[part]):
            return False
        if not _id_values(t.column(dcol).combine_chunks(), dint, doc[part]):
            return False
        s = t.column(scol).combine_chunks()
        if s.null_count:
            return False
        score[part] = to_numpy(s)
        if np.isnan(score[part]).any():
            return False
        r = t.column(rcol).combine_chunks()
        label[part] = to_numpy(r, nulls_ok=True)
        if r.null_count:
            with lock:
                if not has:
                    has.append(np.ones(n, dtype=bool))
            valid = to_numpy(r.is_valid())
            has[0][part] = valid
            label[part][~valid] = 0  # (as fill_null(0), which would import pandas for its scalar)
        return True

    try:
        with ThreadPoolExecutor(min(cpus(), len(groups))) as pool:
            if not all(pool.map(one, groups)):
                return None
    except _Wide:
        del ids, user, doc, score, label, has
        return read_log(ds, columns, wide=True)
    name = ds.spec
    loaded = _Loaded(ds, columns, rows)
    run = LogRun(name, default_runid(ds.spec.rstrip("/")), LogNumbers(user, doc, score, ids), loaded)
    kept = has[0] if has else None
    qrels = LogQrels(name, label, kept, loaded)
    return Labelled(qrels, run, label, kept if kept is not None else np.broadcast_to(np.True_, (n,)))


# ---------------------------------------------------------------- messages


def locate(key: int, names: Sequence[str]) -> str:
    """``file:line`` of an order key."""
    return f"{names[key >> LINE_BITS]}:{key & ((1 << LINE_BITS) - 1)}"


def relocate(exc: DuplicateDocError, names: Sequence[str]) -> DuplicateDocError:
    """A duplicate found across a dataset's rows, said with each row's file and line."""
    detail = re.sub(r"\(first at line ([0-9]+)\)", lambda m: f"(first at {locate(int(m.group(1)), names)})", exc.detail)
    where = locate(exc.line, names) if exc.line is not None else exc.path
    file, _, line = where.rpartition(":")
    return type(exc)(file, detail, int(line)) if exc.line is not None else type(exc)(where, detail)
