"""Judgements by collection name: an ir_datasets id where QRELS (or ``--subtopics``) is expected.

``ireval msmarco-passage/trec-dl-2019/judged run.txt`` reads the qrels of that dataset
through the ``ir_datasets`` package (the ``datasets`` extra), which downloads them once into
its home directory (``IR_DATASETS_HOME``, default ``~/.ir_datasets``). ``irds:ID`` always
means the id; a bare argument means the id only when it is not an existing file and looks
like one (no file-name suffix such as ``.txt``, no existing directory as its first part):
an existing file always wins. ir_datasets is imported here, lazily, and only then.

The judgements are rendered as TREC text, ``query_id iteration doc_id relevance`` per line
in the dataset's order (``iteration`` 0 where it has none) -- the lines ``ir_datasets export
ID qrels --fields relevance`` prints -- and read by the same parser as a qrels file, so
errors name ``irds:ID:LINE`` and the SHA-256 recorded (JSON ``inputs.qrels``) is that of
this text. The name recorded is ``irds:ID``, which given again reads the same judgements.

Every failure is one line (exit 2): the extra not installed, an unknown id (with the
nearest known one), a dataset without qrels (or, for ``--subtopics``, without subtopics),
and qrels that are not on this machine and cannot be downloaded.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING, Any

from ..errors import InputError

if TYPE_CHECKING:
    from .trec import Source

PREFIX = "irds:"
INSTALL_HINT = "pip install 'ir_datasets>=0.5'"  # the `datasets` extra, by name (irevalcli is on no index)
# ids: msmarco-passage/trec-dl-2019/judged, beir/scifact/test, msmarco-document-v2.1/trec-rag-2024
_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.@+-]*(?:/[A-Za-z0-9_.@+-]+)*")
# a name ending so is a file name, never an id (a missing qrels.txt is "no such file")
_FILE_SUFFIXES = (
    ".txt",
    ".tsv",
    ".csv",
    ".gz",
    ".bz2",
    ".xz",
    ".zst",
    ".jsonl",
    ".json",
    ".parquet",
    ".qrels",
    ".trec",
    ".run",
    ".dat",
    ".res",
    ".tmp",
)


def is_dataset_id(spec: Any) -> bool:
    """Whether QRELS ``spec`` names an ir_datasets dataset rather than a file (no import)."""
    if not isinstance(spec, (str, os.PathLike)):
        return False
    s = os.fspath(spec)
    if not isinstance(s, str):
        return False
    if s.startswith(PREFIX):
        return True
    if os.path.exists(s) or not _ID.fullmatch(s) or s.lower().endswith(_FILE_SUFFIXES):
        return False
    head = s.split("/", 1)[0]
    return not ("/" in s and os.path.isdir(head))  # runs/x.txt in an existing runs/: a missing file


def home() -> str:
    """Where ir_datasets keeps its files (as it decides, without creating the directory)."""
    return os.environ.get("IR_DATASETS_HOME") or os.path.join(os.path.expanduser("~"), ".ir_datasets")


def _id(spec: str) -> str:
    return spec[len(PREFIX) :] if spec.startswith(PREFIX) else spec


def _dataset(spec: str, what: str) -> tuple[str, Any]:
    """(the id, its ir_datasets Dataset with qrels). A bare ``spec`` that is no id it knows is
    a missing ``what`` file, said as for any file (with the nearest id, if one is near)."""
    ds_id = _id(spec)
    try:
        import ir_datasets
    except ImportError:
        if spec.startswith(PREFIX):
            raise InputError(spec, f"reading an ir_datasets id needs the ir_datasets package: {INSTALL_HINT}") from None
        raise InputError(
            spec,
            f"cannot read {what} file: no such file; as an ir_datasets id it needs the ir_datasets package: "
            f"{INSTALL_HINT}",
        ) from None
    known = list(ir_datasets.registry)
    if ds_id not in known:
        try:
            with _quiet():
                ds = ir_datasets.load(ds_id)  # an id its patterns make (e.g. clueweb22 parts)
        except Exception:  # KeyError, or a pattern's own failure: not an id it knows
            import difflib

            close = difflib.get_close_matches(ds_id, known, n=1, cutoff=0.6)
            if spec.startswith(PREFIX):
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise InputError(spec, f"unknown ir_datasets id{hint} ('ir_datasets list' lists the ids)") from None
            hint = f", nor an ir_datasets id (did you mean '{close[0]}'?)" if close else ""
            raise InputError(spec, f"cannot read {what} file: no such file{hint}") from None
    else:
        with _quiet():
            ds = ir_datasets.load(ds_id)
    if not ds.has_qrels():
        raise InputError(PREFIX + ds_id, "the ir_datasets dataset has no qrels (relevance judgements)")
    return ds_id, ds


class _quiet:
    """ir_datasets' log lines and download bars go to a buffer, not the terminal: a failure
    is one line, ireval's own."""

    def __enter__(self) -> None:
        import contextlib
        import io

        self._redirect = contextlib.redirect_stderr(io.StringIO())
        self._redirect.__enter__()

    def __exit__(self, *exc: object) -> None:
        self._redirect.__exit__(None, None, None)


def _text(ds_id: str, ds: Any, fields: tuple[str, ...]) -> bytes:
    """The dataset's judgements as lines of ``fields`` (``iteration`` 0 where absent)."""
    cls = ds.qrels_cls()
    have = tuple(getattr(cls, "_fields", ()))
    getters = []
    for f in fields:
        if f in have:
            getters.append(have.index(f))
        elif f == "iteration":
            getters.append(-1)
        else:  # the caller checked the fields it needs
            raise AssertionError(f)
    try:
        with _quiet():
            lines = [" ".join("0" if i < 0 else str(rec[i]) for i in getters) + "\n" for rec in ds.qrels_iter()]
    except Exception as exc:
        failed = isinstance(exc, OSError) or (
            isinstance(exc, RuntimeError) and exc.args[:1] == ("All download sources failed",)
        )
        if not failed:  # the files are there, and ir_datasets cannot read them
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise InputError(PREFIX + ds_id, f"ir_datasets cannot read the qrels: {reason}") from None
        where = os.path.join(home(), ds_id.split("/", 1)[0])
        raise InputError(
            PREFIX + ds_id,
            f"the qrels are not on this machine and could not be downloaded ({type(exc).__name__}): "
            f"ir_datasets keeps its files in {where} (IR_DATASETS_HOME, default ~/.ir_datasets); "
            f"run 'ir_datasets export {ds_id} qrels' where there is a network and copy that directory here",
        ) from None
    return "".join(lines).encode("utf-8", "surrogateescape")


def _fields(ds: Any) -> tuple[str, ...]:
    return tuple(getattr(ds.qrels_cls(), "_fields", ()))


def qrels_source(spec: str, *, hash: bool = True) -> Source:
    """The qrels of the ir_datasets dataset ``spec`` (``ID`` or ``irds:ID``) as TREC qrels
    text named ``irds:ID``, for the qrels parser (``hash``: with the SHA-256 of that text)."""
    ds_id, ds = _dataset(spec, "qrels")
    fields = _fields(ds)
    name = PREFIX + ds_id
    if "subtopic_id" in fields:
        raise InputError(
            name,
            "its qrels judge subtopics (query_id, doc_id, relevance, subtopic_id): give it as --subtopics, "
            "and the topic-level qrels as QRELS",
        )
    if not {"query_id", "doc_id", "relevance"} <= set(fields):
        raise InputError(name, f"its qrels are not relevance judgements (fields: {', '.join(fields) or 'none'})")
    return _source(name, _text(ds_id, ds, ("query_id", "iteration", "doc_id", "relevance")), "qrels", hash)


def subtopics_source(spec: str, *, hash: bool = True) -> Source:
    """The subtopic judgements of the ir_datasets dataset ``spec`` as ``qid subtopic docno rel``
    text named ``irds:ID``, for the subtopic qrels parser (``hash``: with its SHA-256)."""
    ds_id, ds = _dataset(spec, "subtopic qrels")
    fields = _fields(ds)
    name = PREFIX + ds_id
    if "subtopic_id" not in fields:
        raise InputError(
            name, f"the ir_datasets dataset has no subtopic judgements (its qrels: {', '.join(fields) or 'none'})"
        )
    text = _text(ds_id, ds, ("query_id", "subtopic_id", "doc_id", "relevance"))
    return _source(name, text, "subtopic qrels", hash)


def _source(name: str, data: bytes, what: str, hash: bool) -> Source:
    from .source import digest
    from .trec import Source

    if not data:
        raise InputError(name, f"the ir_datasets dataset's {what} are empty")
    return Source(name=name, data=data, sha256=digest(data, hash=hash))
