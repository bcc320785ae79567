"""Subtopic (diversity) judgements: ``qid subtopic docno rel`` per line, as TREC Web's ndeval reads them.

Read with the same parsers as qrels files (gzip, ``#`` comment lines, exact
``path:line`` errors). A document may be judged for several subtopics of a topic;
the same (topic, subtopic, document) twice is an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import DuplicateDocError, InputError, UsageError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


@dataclass
class SubtopicQrels:
    name: str
    sha256: str
    qid: pa.Array  # binary
    subtopic: pa.Array  # binary
    docno: pa.Array  # binary
    rel: np.ndarray  # int64
    lineno: np.ndarray  # int64


def read_subtopics(path: str | os.PathLike[str], *, hash: bool = True) -> SubtopicQrels:
    """A subtopic qrels file: exactly 4 fields per line, ``qid subtopic docno rel``;
    ``hash``: record its SHA-256."""
    from .irds import is_dataset_id
    from .trec import parse_four_fields, read_source

    if is_dataset_id(path):  # an ir_datasets id (an existing file wins): io.irds
        from .irds import subtopics_source

        src = subtopics_source(os.fspath(path), hash=hash)
    else:
        src = read_source(path, what="subtopic qrels", hash=hash)
    (qid, subtopic, docno), rel, lineno = parse_four_fields(src, what="subtopic qrels", fields="qid subtopic docno rel")
    assert qid is not None and subtopic is not None and docno is not None
    sub = SubtopicQrels(
        name=src.name, sha256=src.sha256, qid=qid, subtopic=subtopic, docno=docno, rel=rel, lineno=lineno
    )
    _check_duplicates(sub)
    return sub


def subtopics_from_frame(df: Any, name: str = "<subtopics DataFrame>") -> SubtopicQrels:
    """A DataFrame with columns qid, subtopic, docno, rel."""
    import numpy as np

    from .frames import check_columns, frame_to_binary
    from .trec import whole_column

    check_columns(df, name, "subtopics")
    for col in ("qid", "subtopic", "docno", "rel"):
        if col not in df.columns:
            raise InputError(name, f"DataFrame has no '{col}' column")

    def binary(col: str) -> Any:
        # as the qrels' and the run's ids: a float qid 301.0 is '301', as a file writes it
        return frame_to_binary(df, col, name)

    sub = SubtopicQrels(
        name=name,
        sha256="",
        qid=binary("qid"),
        subtopic=binary("subtopic"),
        docno=binary("docno"),
        rel=whole_column(df["rel"], name, "relevance label"),
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
    )
    _check_duplicates(sub)
    return sub


def load_subtopics(source: Any, *, hash: bool = True) -> SubtopicQrels:
    """A path or a DataFrame (or an already read :class:`SubtopicQrels`); ``hash``: record a
    file's SHA-256."""
    if isinstance(source, SubtopicQrels):
        return source
    if isinstance(source, (str, os.PathLike)):
        return read_subtopics(source, hash=hash)
    from .frames import as_frame, is_table

    if is_table(source):  # a pandas or Polars DataFrame, a pyarrow Table, ...
        frame = as_frame(source)
        return subtopics_from_frame(source if frame is None else frame)
    raise UsageError(f"subtopics must be a path or a DataFrame, not {type(source).__name__}")


def _check_duplicates(sub: SubtopicQrels) -> None:
    import numpy as np
    import pyarrow as pa

    from .arrow import to_numpy

    if len(sub.rel) == 0:
        return
    chunked = pa.chunked_array([a.cast(pa.large_binary()) for a in (sub.qid, sub.subtopic, sub.docno)])
    codes = chunked.dictionary_encode()
    n = len(sub.rel)
    idx = np.concatenate([to_numpy(c.indices).astype(np.int64) for c in codes.chunks])
    q, s, d = idx[:n], idx[n : 2 * n], idx[2 * n :]
    order = np.lexsort((sub.lineno, d, s, q))
    qo, so, do = q[order], s[order], d[order]
    dup = np.flatnonzero((qo[1:] == qo[:-1]) & (so[1:] == so[:-1]) & (do[1:] == do[:-1]))
    if len(dup):
        first, second = order[dup[0]], order[dup[0] + 1]
        doc = sub.docno[int(second)].as_py().decode("utf-8", "surrogateescape")
        raise DuplicateDocError(
            sub.name,
            f"document '{doc}' is judged twice for the same topic and subtopic (first at line {int(sub.lineno[first])})",
            int(sub.lineno[second]),
        )
