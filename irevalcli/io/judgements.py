"""Reading trec_eval's other judgement formats (``-R``): qrels_jg, prefs and qrels_prefs.

The ranked tables built from them are in :mod:`irevalcli.core.judged`.

* ``qrels_jg`` (``qid jg docno rel``): a qrels file whose second column names a
  judgement group (JG, e.g. one assessor). Each JG is scored like a qrels file on
  its own, and ``map_avgjg``, ``P_avgjg`` and ``Rprec_mult_avgjg`` average over
  the JGs of a topic. A run is ranked as for qrels (ties: docno descending).
* ``prefs`` (``qid jg jsg docno rel_level``): preference judgements. Within a
  judgement sub-group (JSG) a document with a higher ``rel_level`` is preferred
  to one with a lower level. A JG with several JSGs combines them through the
  transitive closure of their preferences.
* ``qrels_prefs`` (``qid jg docno rel_level``): a qrels file read as prefs, with
  one JSG per JG: every document is preferred to every document with a lower
  level.

For the prefs formats a run is ranked by score descending with ties broken by
docno **ascending** (trec_eval's ``form_prefs_counts``), ``-M`` applies, and
``-l``/``-J``/``-N`` do not. The judged documents of a topic get internal ids:
retrieved ones by rank (``0..NJR-1``), then the others by docno. A preference
``a > b`` then counts as fulfilled when ``a`` is retrieved above ``b``.

Comment lines (first non-blank character ``#``) are skipped in all three formats,
like qrels; trec_eval 10.0 parses the line after a comment as data and has no
comment support in its qrels_prefs reader (ireval's rule is documented).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ..errors import InputError, UsageError
from .trec import (
    Source,
    parse_floats,
    parse_whole,
    read_source,
    space_lut,
    take_tokens,
    tokenize,
)

if TYPE_CHECKING:
    import pyarrow as pa

FIELDS = {
    "qrels_jg": ("qid", "jg", "docno", "rel"),
    "prefs": ("qid", "jg", "jsg", "docno", "rel_level"),
    "qrels_prefs": ("qid", "jg", "docno", "rel_level"),
}


@dataclass
class Judgements:
    """A qrels_jg, prefs or qrels_prefs file: one entry per data line."""

    name: str
    sha256: str
    rel_format: str
    qid: pa.Array  # binary
    jg: pa.Array  # binary: judgement group
    jsg: pa.Array | None  # binary: judgement sub-group (None: one per JG)
    docno: pa.Array  # binary
    level: np.ndarray  # int64 rel (qrels_jg) or float64 rel_level (prefs formats)
    lineno: np.ndarray  # int64 physical line numbers


def read_judgements(
    path: str | os.PathLike[str], rel_format: str, *, stdin: BinaryIO | None = None, hash: bool = True
) -> Judgements:
    """A judgement file in ``rel_format`` (qrels_jg, prefs or qrels_prefs); ``hash``: record its SHA-256."""
    src = read_source(path, what=rel_format, stdin=stdin, hash=hash)
    return parse_judgements(src, rel_format)


def _first_blank_line(data: bytes) -> int | None:
    """Physical number of the first line with no fields, if any."""
    if not data.endswith(b"\n"):
        data += b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    text = np.concatenate(([0], np.cumsum(~space_lut()[buf])))
    per_line = np.diff(text[np.flatnonzero(buf == 10) + 1], prepend=0)
    blank = np.flatnonzero(per_line == 0)
    return int(blank[0]) + 1 if len(blank) else None


def parse_judgements(src: Source, rel_format: str) -> Judgements:
    fields = FIELDS[rel_format]
    nf = len(fields)
    layout = " ".join(fields)
    lines = tokenize(src.data, src.name, blank_lines_ok=True, what=rel_format)
    blank = _first_blank_line(src.data)
    if blank is not None:
        raise InputError(src.name, f"blank line (a {rel_format} line needs {nf} fields: {layout})", blank)
    if len(lines.ntok) == 0:
        raise InputError(src.name, f"the {rel_format} file has no judgements (only comments)")
    bad = lines.ntok != nf
    if bad.any():
        i = int(np.argmax(bad))
        raise InputError(src.name, f"expected {nf} fields ({layout}), got {int(lines.ntok[i])}", int(lines.lineno[i]))
    f0 = lines.first_tok
    last = take_tokens(lines, f0 + nf - 1)
    if rel_format == "qrels_jg":
        level = parse_whole(last, lines.lineno, src.name, "relevance label", trec_text=True)
    else:
        level = parse_floats(last, lines.lineno, src.name, "rel_level")
        nan = np.isnan(level)
        if nan.any():
            raise InputError(src.name, "rel_level 'nan' cannot be compared", int(lines.lineno[int(np.argmax(nan))]))
    return Judgements(
        name=src.name,
        sha256=src.sha256,
        rel_format=rel_format,
        qid=take_tokens(lines, f0),
        jg=take_tokens(lines, f0 + 1),
        jsg=take_tokens(lines, f0 + 2) if rel_format == "prefs" else None,
        docno=take_tokens(lines, f0 + nf - 2),
        level=level,
        lineno=np.asarray(lines.lineno, dtype=np.int64),
    )


def judgements_from_frame(df: Any, rel_format: str, name: str = "<judgements DataFrame>") -> Judgements:
    """A DataFrame with the format's columns: qid, jg, [jsg,] docno, rel (or rel_level)."""
    import pandas as pd

    from .frames import check_columns, frame_to_binary

    check_columns(df, name, "judgements")
    col = "rel" if "rel" in df.columns else "rel_level"
    if col not in df.columns:
        raise InputError(name, "DataFrame has no 'rel' column")
    if rel_format == "qrels_jg":
        from .trec import whole_column

        level = whole_column(df[col], name, "relevance label")
    else:
        level = pd.to_numeric(df[col], errors="coerce")
        bad = level.isna()
        if bad.any():
            i = int(np.flatnonzero(bad.to_numpy())[0])
            raise InputError(name, f"{col} '{df[col].iloc[i]}' is not a number", i + 1)
        level = level.to_numpy(dtype=np.float64)
    return Judgements(
        name=name,
        sha256="",
        rel_format=rel_format,
        qid=frame_to_binary(df, "qid", name),
        jg=frame_to_binary(df, "jg", name),
        jsg=frame_to_binary(df, "jsg", name) if rel_format == "prefs" else None,
        docno=frame_to_binary(df, "docno", name),
        level=level,
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
    )


def load_judgements(rel: Any, rel_format: str, *, hash: bool = True) -> Judgements:
    """Judgements in ``rel_format`` from a path, a DataFrame or a :class:`Judgements`
    (``hash``: record a file's SHA-256)."""
    if isinstance(rel, Judgements):
        return rel
    if isinstance(rel, (str, os.PathLike)):
        return read_judgements(rel, rel_format, hash=hash)
    from .frames import as_frame, is_table

    if is_table(rel):  # a pandas or Polars DataFrame, a pyarrow Table, ...
        frame = as_frame(rel)
        return judgements_from_frame(rel if frame is None else frame, rel_format)
    raise UsageError(f"judgements must be a path or a DataFrame, not {type(rel).__name__}")
