"""qrels and TREC run files -> typed columns, with ``path:line`` errors.

Parsing is vectorised over the whole file with numpy: no Python code runs per
line. A file is split into whitespace-separated tokens exactly as trec_eval's
``isspace`` loop does (space, tab, CR, VT, FF separate fields; LF ends a line),
so any run of spaces and tabs between fields and CRLF line ends work. Ids stay
bytes: they are never decoded, hashed or coerced.

Comment lines are lines whose first non-blank character is ``#``; a ``#``
anywhere else (inside a docno, say) is data.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import lzma
import os
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO

from .errors import InputError

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

GZIP_MAGIC = b"\x1f\x8b"
BZ2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"


@dataclass
class Source:
    """The raw bytes of one input, with what identifies it."""

    name: str  # as shown in messages: the path, or "<stdin>"
    data: bytes  # decompressed content
    sha256: str  # of the bytes as read (before decompression)


def read_source(path: str | os.PathLike[str], *, what: str, stdin: BinaryIO | None = None) -> Source:
    """Read a whole input: a path, or ``-`` for standard input; gzip by content."""
    spath = os.fspath(path)
    if spath == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        raw = stream.read()
        name = "<stdin>"
    else:
        name = spath
        try:
            with open(spath, "rb") as fh:
                raw = fh.read()
        except FileNotFoundError:
            raise InputError(name, f"cannot read {what} file: no such file") from None
        except IsADirectoryError:
            raise InputError(name, f"cannot read {what} file: it is a directory") from None
        except PermissionError:
            raise InputError(name, f"cannot read {what} file: permission denied") from None
        except OSError as exc:
            raise InputError(name, f"cannot read {what} file: {exc.strerror or exc}") from None
    digest = hashlib.sha256(raw).hexdigest()
    data = _decompress(raw, name, what)
    return Source(name=name, data=data, sha256=digest)


def _decompress(raw: bytes, name: str, what: str) -> bytes:
    try:
        if raw.startswith(GZIP_MAGIC):
            return gzip.decompress(raw)
        if raw.startswith(BZ2_MAGIC) and len(raw) > 10 and raw[3:4].isdigit():
            return bz2.decompress(raw)
        if raw.startswith(XZ_MAGIC):
            return lzma.decompress(raw)
    except (OSError, EOFError, ValueError, lzma.LZMAError) as exc:
        raise InputError(name, f"cannot read {what} file: corrupt or truncated compressed data ({exc})") from None
    return raw


# --------------------------------------------------------------------------
# Tokenizer


@dataclass
class Lines:
    """Tokens of the data lines of a file (comments and skipped blanks removed)."""

    buf: np.ndarray  # uint8 view of the file, with a final LF guaranteed
    tok_start: np.ndarray  # int64 start offset of each token
    tok_end: np.ndarray  # int64 end offset (exclusive)
    first_tok: np.ndarray  # index of the first token of each data line
    ntok: np.ndarray  # number of tokens on each data line
    lineno: np.ndarray  # physical 1-based line number of each data line


_SPACE_LUT = None


def _space_lut() -> np.ndarray:
    global _SPACE_LUT
    if _SPACE_LUT is None:
        import numpy as np

        lut = np.zeros(256, dtype=bool)
        for c in b" \t\n\v\f\r":
            lut[c] = True
        _SPACE_LUT = lut
    return _SPACE_LUT


def tokenize(data: bytes, name: str, *, blank_lines_ok: bool, what: str) -> Lines:
    """Split ``data`` into lines and tokens, vectorised.

    ``blank_lines_ok``: results files skip blank lines; qrels files refuse them
    (as trec_eval does).
    """
    import numpy as np

    if not data:
        raise InputError(name, f"the {what} file is empty")
    if not data.endswith(b"\n"):
        data = data + b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    if (buf == 0).any():
        line = int(np.count_nonzero(buf[: int(np.argmax(buf == 0))] == 10)) + 1
        raise InputError(name, "contains a NUL byte", line)

    is_sp = _space_lut()[buf]
    nl = np.flatnonzero(buf == 10)
    # token boundaries: a token is a maximal run of non-space bytes
    not_sp = ~is_sp
    starts = np.flatnonzero(not_sp[1:] & is_sp[:-1]) + 1
    if not_sp[0]:
        starts = np.concatenate(([0], starts))
    ends = np.flatnonzero(not_sp[:-1] & is_sp[1:]) + 1  # buffer ends in LF: every token ends
    del is_sp, not_sp
    tok_line = np.searchsorted(nl, starts)  # line index of each token
    nlines = len(nl)
    ntok_all = np.bincount(tok_line, minlength=nlines)
    first_all = np.concatenate(([0], np.cumsum(ntok_all)[:-1]))
    has_tok = ntok_all > 0
    is_comment = np.zeros(nlines, dtype=bool)
    if len(starts):
        lead = np.where(has_tok, first_all, 0)
        is_comment = has_tok & (buf[starts[np.minimum(lead, len(starts) - 1)]] == ord("#"))
    if not blank_lines_ok:
        blank = ~has_tok
        if blank.any():
            raise InputError(name, "blank line (a qrels line needs 4 fields: qid iter docno rel)", int(np.argmax(blank)) + 1)
    data_line = has_tok & ~is_comment
    idx = np.flatnonzero(data_line)
    return Lines(
        buf=buf,
        tok_start=starts,
        tok_end=ends,
        first_tok=first_all[idx],
        ntok=ntok_all[idx],
        lineno=idx + 1,
    )


def take_tokens(lines: Lines, tok_idx: np.ndarray) -> pa.Array:
    """The tokens at ``tok_idx`` (in increasing order) as a pyarrow binary array."""
    import numpy as np
    import pyarrow as pa

    s = lines.tok_start[tok_idx]
    e = lines.tok_end[tok_idx]
    lengths = e - s
    offsets = np.zeros(len(s) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    # Tokens are requested in file order and never overlap, so their bytes can
    # be gathered with one boolean mask: +1 at each start, -1 at each end.
    mark = np.zeros(len(lines.buf) + 1, dtype=np.int8)
    mark[s] = 1
    mark[e] -= 1
    keep = np.cumsum(mark[:-1], dtype=np.int8).view(bool)
    payload = lines.buf[keep]
    return pa.Array.from_buffers(
        pa.large_binary(), len(s), [None, pa.py_buffer(offsets), pa.py_buffer(payload.tobytes())]
    )


def _first_bad(mask: np.ndarray) -> int:
    import numpy as np

    return int(np.argmax(mask))


_FLOAT_RE = r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|inf|infinity|nan)$"
_INT_RE = r"^[+-]?[0-9]+$"


def _cast(tokens: pa.Array, to: pa.DataType) -> np.ndarray | None:
    """The fast path: Arrow's parser over the whole column, or None if any token fails."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(tokens.cast(pa.large_string()), to).to_numpy(zero_copy_only=False)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _slow_parse(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str, pattern: str, conv: type) -> list:
    """Error path: find the first token that is not a number and say which line it is on."""
    import re

    rx = re.compile(pattern.encode(), re.IGNORECASE)
    out = []
    for i, tok in enumerate(tokens.to_pylist()):
        if not rx.match(tok):
            text = tok.decode("utf-8", "replace")
            why = "is not a number"
            if conv is int and re.match(_FLOAT_RE, text, re.IGNORECASE):
                why = "is not an integer (trec_eval would truncate it; ireval refuses)"
            raise InputError(name, f"{what} '{text}' {why}", int(lines_no[i]))
        try:
            out.append(conv(tok.decode("ascii")))
        except (ValueError, OverflowError):
            raise InputError(name, f"{what} '{tok.decode()}' is out of range", int(lines_no[i])) from None
    return out


def parse_floats(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str) -> np.ndarray:
    """Decimal floating-point numbers; anything else is an error naming the line."""
    import numpy as np
    import pyarrow as pa

    values = _cast(tokens, pa.float64())
    if values is None:
        values = np.array(_slow_parse(tokens, lines_no, name, what, _FLOAT_RE, float), dtype=np.float64)
    return np.ascontiguousarray(values, dtype=np.float64)


def parse_ints(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str) -> np.ndarray:
    """Decimal integers (an optional sign, then digits); anything else is an error."""
    import numpy as np
    import pyarrow as pa

    values = _cast(tokens, pa.int64())
    if values is None:
        parsed = _slow_parse(tokens, lines_no, name, what, _INT_RE, int)
        big = [i for i, v in enumerate(parsed) if not -(2**62) <= v <= 2**62]
        if big:
            i = big[0]
            raise InputError(name, f"{what} '{parsed[i]}' is out of range", int(lines_no[i]))
        values = np.array(parsed, dtype=np.int64)
    return np.ascontiguousarray(values, dtype=np.int64)


# --------------------------------------------------------------------------
# qrels and runs


@dataclass
class Qrels:
    name: str
    sha256: str
    qid: pa.Array  # binary
    docno: pa.Array  # binary
    rel: np.ndarray  # int64
    lineno: np.ndarray  # int64 physical line numbers


@dataclass
class Run:
    name: str
    sha256: str
    qid: pa.Array
    docno: pa.Array
    score: np.ndarray  # float64
    lineno: np.ndarray
    runid: str


def read_qrels(path: str | os.PathLike[str], *, stdin: BinaryIO | None = None) -> Qrels:
    """A qrels file: exactly 4 fields per line, ``qid iter docno rel``."""
    src = read_source(path, what="qrels", stdin=stdin)
    return parse_qrels(src)


def parse_qrels(src: Source) -> Qrels:
    import numpy as np

    lines = tokenize(src.data, src.name, blank_lines_ok=False, what="qrels")
    if len(lines.ntok) == 0:
        raise InputError(src.name, "the qrels file has no judgements (only comments)")
    bad = lines.ntok != 4
    if bad.any():
        i = _first_bad(bad)
        raise InputError(
            src.name, f"expected 4 fields (qid iter docno rel), got {int(lines.ntok[i])}", int(lines.lineno[i])
        )
    f0 = lines.first_tok
    rel = parse_ints(take_tokens(lines, f0 + 3), lines.lineno, src.name, "relevance label")
    return Qrels(
        name=src.name,
        sha256=src.sha256,
        qid=take_tokens(lines, f0),
        docno=take_tokens(lines, f0 + 2),
        rel=rel,
        lineno=np.asarray(lines.lineno, dtype=np.int64),
    )


def read_run(path: str | os.PathLike[str], *, stdin: BinaryIO | None = None) -> Run:
    """A TREC run: ``qid iter docno rank score runid`` (more fields are ignored)."""
    src = read_source(path, what="run", stdin=stdin)
    return parse_run(src)


def parse_run(src: Source) -> Run:
    import numpy as np

    lines = tokenize(src.data, src.name, blank_lines_ok=True, what="run")
    if len(lines.ntok) == 0:
        raise InputError(src.name, "the run file has no results (only comments or blank lines)")
    bad = lines.ntok < 6
    if bad.any():
        i = _first_bad(bad)
        raise InputError(
            src.name,
            f"expected at least 6 fields (qid iter docno rank score runid), got {int(lines.ntok[i])}",
            int(lines.lineno[i]),
        )
    f0 = lines.first_tok
    score = parse_floats(take_tokens(lines, f0 + 4), lines.lineno, src.name, "score")
    nan = np.isnan(score)
    if nan.any():
        raise InputError(src.name, "score 'nan' cannot be ranked", int(lines.lineno[_first_bad(nan)]))
    last = f0[-1] + 5
    runid = bytes(lines.buf[lines.tok_start[last] : lines.tok_end[last]]).decode("utf-8", "surrogateescape")
    return Run(
        name=src.name,
        sha256=src.sha256,
        qid=take_tokens(lines, f0),
        docno=take_tokens(lines, f0 + 2),
        score=score,
        lineno=np.asarray(lines.lineno, dtype=np.int64),
        runid=runid,
    )


def read_zscores(path: str | os.PathLike[str]):  # -> engine.ZScores
    """A -Z file: ``qid measure mean stddev`` per line (``#`` lines are comments)."""
    from .engine import ZScores

    src = read_source(path, what="z-score", stdin=None)
    lines = tokenize(src.data, src.name, blank_lines_ok=False, what="z-score")
    bad = lines.ntok != 4
    if bad.any():
        i = _first_bad(bad)
        raise InputError(src.name, f"expected 4 fields (qid measure mean stddev), got {int(lines.ntok[i])}", int(lines.lineno[i]))
    f0 = lines.first_tok
    qid = take_tokens(lines, f0).to_pylist()
    label = take_tokens(lines, f0 + 1).to_pylist()
    mean = parse_floats(take_tokens(lines, f0 + 2), lines.lineno, src.name, "mean")
    sd = parse_floats(take_tokens(lines, f0 + 3), lines.lineno, src.name, "standard deviation")
    entries: dict[tuple[str, str], tuple[float, float]] = {}
    for i, (q, m) in enumerate(zip(qid, label)):  # the Z file is small: one entry per line
        key = (q.decode("utf-8", "surrogateescape"), m.decode("utf-8", "surrogateescape"))
        if key in entries:
            raise InputError(src.name, f"topic '{key[0]}' measure '{key[1]}' is given twice", int(lines.lineno[i]))
        entries[key] = (float(mean[i]), float(sd[i]))
    return ZScores(entries)
