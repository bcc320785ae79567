"""qrels and TREC run files -> typed columns, with ``path:line`` errors.

Parsing is vectorised over the whole file with numpy: no Python code runs per
line. A file is split into whitespace-separated tokens exactly as trec_eval's
``isspace`` loop does (space, tab, CR, VT, FF separate fields; LF ends a line),
so any run of spaces and tabs between fields and CRLF line ends work. Ids stay
bytes: they are never decoded, hashed or coerced. A CR that is not followed by LF
ends a line (an old Mac file), where trec_eval reads it as a space and so sees
one line.

Comment lines are lines whose first non-blank character is ``#``; a ``#``
anywhere else (inside a docno, say) is data.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

import numpy as np

from ..errors import InputError
from . import source
from .arrow import binary_array, from_numpy, to_numpy

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass
class Source:
    """The raw bytes of one input, with what identifies it."""

    name: str  # as shown in messages: the path, or "<stdin>"
    data: bytes  # decompressed content
    sha256: str  # of the bytes as read (before decompression)


def read_source(
    path: str | os.PathLike[str],
    *,
    what: str,
    stdin: BinaryIO | None = None,
    hash: bool = True,
    progress: Callable[[int], None] | None = None,
) -> Source:
    """Read a whole input: a path, or ``-`` for standard input; gzip, bzip2, xz and zstd by
    content (:mod:`irevalcli.io.source`). ``hash``: compute its SHA-256 (of the bytes as
    stored; "" when False: hashing a 300 MB run costs about half a second, and only the
    outputs that record it need it: ``EvalSettings.hash_inputs``)."""
    raw = source.read_whole(path, what=what, stdin=stdin, hash=hash, progress=progress)
    return Source(name=raw.name, data=decompress(raw.data, raw.name, what), sha256=raw.sha256)


MAX_LINE = 16 << 20  # bytes a single line may take: longer is an error, not gigabytes of memory


def check_line_lengths(data: bytes, name: str, nl: np.ndarray | None = None) -> None:
    """A line longer than :data:`MAX_LINE` is an error naming it (its tokens would take many
    times its size in memory)."""
    import numpy as np

    if len(data) <= MAX_LINE:
        return
    if nl is None:
        nl = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    ends = np.concatenate((nl, [len(data)]))
    gaps = np.diff(ends, prepend=-1) - 1
    long = np.flatnonzero(gaps > MAX_LINE)
    if len(long):
        raise line_too_long(name, int(long[0]) + 1)


def line_too_long(name: str, line: int) -> InputError:
    limit = f"{MAX_LINE >> 20} MiB" if MAX_LINE % (1 << 20) == 0 else f"{MAX_LINE} bytes"
    return InputError(name, f"line longer than {limit} (the limit for one line)", line)


def has_bare_cr(data: bytes) -> bool:
    """A CR that is not part of a CRLF: an old Mac line end (two memchr-speed scans)."""
    return b"\r" in data and data.count(b"\r") != data.count(b"\r\n")


def bare_cr_to_lf(data: bytes) -> bytes:
    """A lone CR ends a line, as LF and CRLF do. trec_eval reads it as a space, so a file
    with CR line ends is one line to it and would score as one result; ireval reads lines.
    Binary Parquet is left alone."""
    if (len(data) >= 12 and data[:4] == b"PAR1" and data[-4:] == b"PAR1") or not has_bare_cr(data):
        return data
    import re

    return re.sub(rb"\r(?!\n)", b"\n", data)


def decompress(raw: bytes, name: str, what: str) -> bytes:
    """The decompressed bytes, with lone CR line ends read as line ends."""
    return bare_cr_to_lf(source.inflate(raw, name, what))


# --------------------------------------------------------------------------
# Tokenizer


@dataclass
class Lines:
    """Tokens of the data lines of a file (comments and skipped blanks removed)."""

    tokens: pa.Array  # every token of the file, in file order (large_binary)
    first_tok: np.ndarray  # index of the first token of each data line
    ntok: np.ndarray  # number of tokens on each data line
    lineno: np.ndarray  # physical 1-based line number of each data line


_SPACE_LUT = None


def space_lut() -> np.ndarray:
    """256 booleans: which byte values are whitespace to trec_eval (C ``isspace``: space, tab,
    LF, VT, FF, CR); index it with a uint8 buffer."""
    global _SPACE_LUT
    if _SPACE_LUT is None:
        import numpy as np

        lut = np.zeros(256, dtype=bool)
        for c in b" \t\n\v\f\r":
            lut[c] = True
        _SPACE_LUT = lut
    return _SPACE_LUT


def _check_nul(data: bytes, name: str) -> None:
    pos = data.find(b"\x00")
    if pos >= 0:
        raise InputError(name, "contains a NUL byte", data.count(b"\n", 0, pos) + 1)


def tokenize(data: bytes, name: str, *, blank_lines_ok: bool, what: str) -> Lines:
    """Split ``data`` into lines and tokens, vectorised.

    Every token's bytes are compacted into one buffer in a single pass, so a
    column is then one Arrow ``take``. ``blank_lines_ok``: results files skip
    blank lines; qrels files refuse them (as trec_eval does).
    """
    import numpy as np
    import pyarrow as pa

    if not data:
        raise InputError(name, f"the {what} file is empty")
    _check_nul(data, name)
    check_line_lengths(data, name)
    if not data.endswith(b"\n"):
        data = data + b"\n"
    buf = np.frombuffer(data, dtype=np.uint8)
    not_sp = ~np.take(space_lut(), buf)
    # token boundaries: +1 where a token starts, -1 just past where it ends
    edge = np.diff(not_sp.view(np.int8), prepend=np.int8(0))
    starts = np.flatnonzero(edge == 1)
    ends = np.flatnonzero(edge == -1)  # the buffer ends in LF, so every token ends
    del edge
    payload = buf[not_sp]
    del not_sp
    offsets = np.zeros(len(starts) + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    tokens = pa.Array.from_buffers(pa.large_binary(), len(starts), [None, pa.py_buffer(offsets), pa.py_buffer(payload)])
    nl = np.flatnonzero(buf == 10)
    before = np.searchsorted(starts, nl)  # tokens that start before each line end
    ntok_all = np.diff(before, prepend=0)
    first_all = before - ntok_all
    del before, starts, ends
    has_tok = ntok_all > 0
    lead = offsets[np.minimum(first_all, max(len(offsets) - 2, 0))] if len(payload) else np.zeros(len(nl), np.int64)
    is_comment = (
        has_tok & (payload[np.minimum(lead, max(len(payload) - 1, 0))] == ord("#")) if len(payload) else has_tok
    )
    if not blank_lines_ok:
        blank = ~has_tok
        if blank.any():
            raise InputError(
                name, "blank line (a qrels line needs 4 fields: qid iter docno rel)", int(np.argmax(blank)) + 1
            )
    idx = np.flatnonzero(has_tok & ~is_comment)
    return Lines(tokens=tokens, first_tok=first_all[idx], ntok=ntok_all[idx], lineno=idx + 1)


def take_tokens(lines: Lines, tok_idx: np.ndarray) -> pa.Array:
    """The tokens at ``tok_idx`` as a pyarrow binary array."""

    return lines.tokens.take(from_numpy(np.asarray(tok_idx, dtype=np.int64)))


def _csv_block_size(nbytes: int) -> int:
    """Arrow parses blocks in parallel: a few per chunk keeps both cores busy
    (on a 16 MiB chunk, 2-4 MiB blocks parse in half the time of one block)."""
    return min(max(nbytes // 6, 1 << 20), 4 << 20)


def _separators(data: bytes, delimiter: bytes) -> int | None:
    """The number of bytes at most 32 (the delimiter, LF and every other control byte) in a
    file of ``delimiter``-separated fields and LF line ends, or None when it has an empty
    field (a doubled, leading or trailing delimiter, or a blank line): two such bytes side
    by side, or one at either end. Checked on the bytes, in blocks of the file (bounded
    temporaries), so the columns nobody reads need not be converted to be checked.

    The count is what the caller compares with the delimiters and line ends of the rows the
    CSV parser found: equal only when no other control byte (CR, VT, FF, NUL, the other
    delimiter) is in the file, which so costs no scan of its own."""
    import numpy as np

    if not data or data[:1] in (delimiter, b"\n") or data[-1:] == delimiter:
        return None
    buf = np.frombuffer(data, dtype=np.uint8)
    # blocks of 1 MiB (8 a streamed chunk: each numpy call of the reading thread takes the
    # GIL back from the main thread), into two reused temporaries
    step = min(1 << 20, len(buf))
    sep = np.empty(step + 1, dtype=bool)
    both = np.empty(step, dtype=bool)
    count = int(buf[-1] <= 32)  # (each block counts its bytes but its last, the next block's first)
    for lo in range(0, len(buf) - 1, step):  # blocks of bytes, not lines
        block = buf[lo : lo + step + 1]
        # one comparison marks both separators (space 32 or tab 9, and LF 10); it also marks
        # other control bytes, which at worst report an empty field that is not one: the
        # general path then reads the file (the caller refuses the file when the count has
        # any byte but its delimiters and line ends, so a real separator is never missed)
        s = np.less_equal(block, 32, out=sep[: len(block)])
        if np.logical_and(s[1:], s[:-1], out=both[: len(block) - 1]).any():
            return None
        count += int(np.count_nonzero(s[:-1]))
    return count


def fast_table(
    data: bytes,
    ncols: int | None,
    min_cols: int,
    types: dict,
    *,
    only_wanted: bool = False,
    release: bool = True,
    threads: bool | None = None,
) -> pa.Table | None:
    """pyarrow's CSV parser (multithreaded), used only when its reading is provably
    the same as trec_eval's: a single delimiter (space or tab), no other
    whitespace or CR, a constant number of fields, no empty field (so no
    doubled, leading or trailing delimiter and no blank line) and no comment
    line. Returns None when not applicable; the general path then reads the
    file and reports any problem exactly.

    ``only_wanted``: convert only the columns of ``types`` (a run's qid, docno and score:
    half of its fields; a qrels file's qid, docno and label) and check for empty fields on
    the bytes instead; otherwise every column is converted and checked. ``release``: give the parser's freed blocks back to
    the system at once (a whole file: they would add to the peak of every later step); a
    streamed chunk keeps them for the next chunk's parse, which would fault them in again.
    ``threads``: whether Arrow parses on its threads (None: when there is more than one block).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    found = _delimiter(data, ncols, min_cols)
    if found is None:
        return None
    d, other, k = found
    if not only_wanted:
        for bad in (other, b"\r", b"\v", b"\f", b"\x00"):  # single bytes: memchr speed
            if data.find(bad) >= 0:
                return None
    # Arrow's integer conversion reads 0x1 as 1 (trec_eval's atol: 0); the general path refuses it.
    # A file without any x byte (one memchr pass) has no 0x: the two-byte search is 30x slower.
    if any(pa.types.is_integer(t) for t in types.values()) and any(
        data.find(x) >= 0 and data.find(b"0" + x) >= 0 for x in (b"x", b"X")
    ):
        return None
    names = [f"f{i}" for i in range(k)]
    wanted = [f"f{i}" for i in sorted(types)]
    # columns not asked for are only checked for empty fields: 32-bit offsets convert
    # faster (a block of the reader is at most a few MiB, far from their limit)
    col_types = {} if only_wanted else {n: pa.binary() for n in names}
    col_types.update({f"f{i}": t for i, t in types.items()})
    # only_wanted: the empty fields and the control bytes (the other delimiter, CR, VT, FF,
    # NUL), in one pass over the bytes; the count is compared with the parsed rows below
    controls = _separators(data, d) if only_wanted else 0
    if controls is None:
        return None
    # a comment line: no field is empty, so a line's first byte is its first field's
    # (a file without any # byte, one memchr pass, has none: the two-byte search costs 40x more)
    if data.find(b"#") >= 0 and (data[:1] == b"#" or data.find(b"\n#") >= 0):
        return None
    table = _read_plain(data, d, names, wanted if only_wanted else [], col_types, release, threads)
    if table is None:
        return None
    if only_wanted:
        # every row has k fields (else the parser raised), so its k - 1 delimiters and its
        # line end (the last line's may be missing) are all the control bytes a plain file has
        rows = table.num_rows
        if controls != k * rows - (0 if data.endswith(b"\n") else 1):
            return None
    for name in [] if only_wanted else names:  # (only_wanted: checked on the bytes)
        col = table.column(name)
        is_text = pa.types.is_large_binary(col.type) or pa.types.is_binary(col.type)
        if is_text and len(col) and pc.min(pc.binary_length(col)).as_py() == 0:
            return None  # an empty field: doubled, leading or trailing delimiter, or a blank line
    return table.select(wanted)


def _delimiter(data: bytes, ncols: int | None, min_cols: int) -> tuple[bytes, bytes, int] | None:
    """(the delimiter, the other one, the number of fields) of the first line, when it has
    one delimiter of the two and ``ncols`` (at least ``min_cols``) fields; else None."""
    end = data.find(b"\n", 0, 1 << 16)
    if end < 0:
        return None  # no line end in the first 64 KiB: not a plain table (the tokenizer says why)
    first = data[:end]
    if b" " in first and b"\t" not in first:
        d, other = b" ", b"\t"
    elif b"\t" in first and b" " not in first:
        d, other = b"\t", b" "
    else:
        return None
    k = first.count(d) + 1
    if k < min_cols or (ncols is not None and k != ncols):
        return None
    return d, other, k


def _read_plain(
    data: bytes, d: bytes, names: list[str], include: list[str], types: dict, release: bool, threads: bool | None
) -> pa.Table | None:
    """Arrow's CSV reading of ``data`` (fields ``names`` split by ``d``, no quoting; ``include``:
    the columns kept, [] for all), or None when it refuses it."""
    import pyarrow as pa
    import pyarrow.csv as csv

    block = _csv_block_size(len(data))
    use_threads = source.arrow_threads(len(data), block) if threads is None else threads
    try:
        return csv.read_csv(
            pa.BufferReader(data),
            csv.ReadOptions(column_names=names, use_threads=use_threads, block_size=block),
            csv.ParseOptions(delimiter=d.decode(), quote_char=False, escape_char=False, ignore_empty_lines=False),
            csv.ConvertOptions(
                include_columns=include,
                column_types=types,
                null_values=[],
                strings_can_be_null=False,
                quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    finally:
        if release:
            pa.default_memory_pool().release_unused()


def _first_bad(mask: np.ndarray) -> int:
    import numpy as np

    return int(np.argmax(mask))


# Unambiguous (each digit can match one way only), so a long run of digits that is not
# a number fails in linear time instead of backtracking quadratically.
_FLOAT_RE = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$|^[+-]?(inf|infinity|nan)$"


def _cast(tokens: pa.Array, to: pa.DataType) -> np.ndarray | None:
    """The fast path: Arrow's parser over the whole column, or None if any token fails."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return to_numpy(pc.cast(tokens.cast(pa.large_string()), to))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def shown(text: str, limit: int = 40) -> str:
    """A token as quoted in a message: long ones are cut, so an error stays one short line."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _slow_parse(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str, pattern: str, conv: type) -> list:
    """Error path: find the first token that is not a number and say which line it is on."""
    import re

    rx = re.compile(pattern.encode(), re.IGNORECASE)
    out = []
    for i, tok in enumerate(tokens.to_pylist()):
        if not rx.match(tok):
            text = tok.decode("utf-8", "replace")
            why = "is not a number"
            if re.match(r"^[+-]?0x", text, re.IGNORECASE):
                why = "is hexadecimal; write it in decimal"
            elif conv is int and re.match(_FLOAT_RE, text, re.IGNORECASE):
                why = "is not an integer (trec_eval would truncate it; ireval refuses)"
            raise InputError(name, f"{what} '{shown(text)}' {why}", int(lines_no[i]))
        try:
            out.append(conv(tok.decode("ascii")))
        except (ValueError, OverflowError):
            raise InputError(name, f"{what} '{shown(tok.decode())}' is out of range", int(lines_no[i])) from None
    return out


def parse_floats(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str) -> np.ndarray:
    """Decimal floating-point numbers; anything else is an error naming the line."""
    import numpy as np
    import pyarrow as pa

    values = _cast(tokens, pa.float64())
    if values is None:
        values = np.array(_slow_parse(tokens, lines_no, name, what, _FLOAT_RE, float), dtype=np.float64)
    return np.ascontiguousarray(values, dtype=np.float64)


def _has_hex(tokens: pa.Array) -> bool:
    import pyarrow as pa
    import pyarrow.compute as pc

    return bool(pc.any(pc.match_substring(tokens.cast(pa.large_string()), "x", ignore_case=True)).as_py())


NOT_WHOLE = "is not an integer (trec_eval would truncate it; ireval refuses)"
MAX_WHOLE_FLOAT = 2.0**53  # a float beyond this may not be the integer it was written as


def first_not_whole(values: np.ndarray) -> tuple[int, str] | None:
    """The first of some float values that is not a whole number ``(index, why)``, or None.

    One rule for every input format: a whole number is accepted however it is typed or
    written (``1``, ``1.0``, ``1e0``), anything else is refused."""
    import numpy as np

    f = np.asarray(values, dtype=np.float64)
    bad = ~np.isfinite(f) | (f != np.floor(f)) | (np.abs(f) > MAX_WHOLE_FLOAT)
    if not bad.any():
        return None
    i = int(np.argmax(bad))
    return i, ("is out of range" if np.isfinite(f[i]) and f[i] == np.floor(f[i]) else NOT_WHOLE)


def whole_column(series: Any, name: str, what: str) -> np.ndarray:
    """A DataFrame column of whole numbers (labels), by the rule of every file format:
    numbers and numeric text that are whole (``1``, ``1.0``, ``"1e0"``) are accepted;
    ``0.5``, ``inf``, missing values and words are refused, naming the row."""
    import numpy as np
    import pandas as pd

    num = pd.to_numeric(series, errors="coerce")
    missing = num.isna().to_numpy()
    if missing.any():
        i = int(np.argmax(missing))
        v = series.iloc[i]
        why = "is missing" if pd.isna(v) else "is not a number"
        raise InputError(name, f"{what} '{v}' {why}", i + 1)
    if pd.api.types.is_unsigned_integer_dtype(num.dtype):
        big = (num > np.iinfo(np.int64).max).to_numpy()
        if big.any():  # would wrap around to a negative label
            i = int(np.argmax(big))
            raise InputError(name, f"{what} '{series.iloc[i]}' is out of range", i + 1)
    f = num.to_numpy(dtype=np.float64)
    if pd.api.types.is_integer_dtype(num.dtype):
        return num.to_numpy(dtype=np.int64)
    bad = first_not_whole(f)
    if bad is not None:
        i, why = bad
        raise InputError(name, f"{what} '{series.iloc[i]}' {why}", i + 1)
    return f.astype(np.int64)


def _atol(text: str) -> int:
    """What C's atol reads: leading blanks are gone already, then a sign and digits."""
    import re

    m = re.match(r"[+-]?[0-9]+", text)
    return int(m.group(0)) if m else 0


def parse_whole(tokens: pa.Array, lines_no: np.ndarray, name: str, what: str, *, trec_text: bool = False) -> np.ndarray:
    """Whole numbers written in decimal: ``1``, ``-1``, and, since their value is whole,
    ``1.0`` and ``1e0`` (every input format accepts those); ``0.5``, ``inf``, ``nan``,
    hexadecimal and words are refused, naming the line. ``trec_text``: the file is one
    trec_eval reads itself, with ``atol``, so a number whose exponent changes it
    (``1e1``: 10 here, 1 to trec_eval) is refused as well."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    exact = _cast(tokens, pa.int64())
    if exact is not None and not _has_hex(tokens):
        return np.ascontiguousarray(exact, dtype=np.int64)
    values = _cast(tokens, pa.float64())
    if values is not None and _has_hex(tokens):
        values = None  # Arrow's cast reads 0x1 as 1: the slow path says it is hexadecimal
    if values is None:  # some token is not a decimal number: the slow path names it
        values = np.array(_slow_parse(tokens, lines_no, name, what, _FLOAT_RE, float), dtype=np.float64)
    bad = first_not_whole(values)
    if bad is not None:
        i, why = bad
        text = tokens[i].as_py().decode("utf-8", "replace")
        raise InputError(name, f"{what} '{shown(text)}' {why}", int(lines_no[i]))
    if trec_text:
        expo = np.flatnonzero(to_numpy(pc.match_substring(tokens.cast(pa.large_string()), "e", ignore_case=True)))
        for i in expo.tolist():  # only tokens with an exponent (rare): atol stops at the 'e'
            text = tokens[i].as_py().decode("ascii")
            if _atol(text) != int(values[i]):
                raise InputError(
                    name,
                    f"{what} '{shown(text)}' is {int(values[i])}, but trec_eval reads it as {_atol(text)}; "
                    f"write {int(values[i])}",
                    int(lines_no[i]),
                )
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

    def take(self, rows: np.ndarray) -> Qrels:
        import numpy as np

        idx = np.flatnonzero(rows) if rows.dtype == bool else rows
        sel = from_numpy(idx)
        return Qrels(self.name, self.sha256, self.qid.take(sel), self.docno.take(sel), self.rel[idx], self.lineno[idx])


@dataclass
class Run:
    name: str
    sha256: str
    qid: pa.Array
    docno: pa.Array
    score: np.ndarray  # float64
    lineno: np.ndarray
    runid: str
    lines: int = 0  # physical lines of the text parsed, when known without counting (else 0)
    rank: np.ndarray | None = None  # int64 rank column, read only for --ties rank (``ranks=True``)

    def __len__(self) -> int:
        return len(self.score)

    @classmethod
    def empty(cls, name: str, runid: str = "") -> Run:
        import numpy as np

        none = binary_array([])
        return cls(name, "", none, none, np.zeros(0), np.zeros(0, dtype=np.int64), runid)

    def slice(self, start: int, stop: int) -> Run:
        """Rows ``start:stop`` without copying."""
        return Run(
            self.name,
            self.sha256,
            self.qid.slice(start, stop - start),
            self.docno.slice(start, stop - start),
            self.score[start:stop],
            self.lineno[start:stop],
            self.runid,
            rank=self.rank[start:stop] if self.rank is not None else None,
        )


def parse_ranks(tokens: pa.Array, lines_no: np.ndarray, name: str) -> np.ndarray:
    """A run's rank column for ``--ties rank``: whole numbers, by the rule of labels
    (``3`` and ``3.0`` are 3; ``2.5``, ``x`` and hexadecimal are refused, naming the line)."""

    rank = parse_whole(tokens, lines_no, name, "rank")
    check_rank_range(rank, lines_no, name)
    return rank


def check_rank_range(rank: np.ndarray, lines_no: np.ndarray, name: str) -> None:
    """Ranks are ordered as floats: beyond 2**53 they would not all be distinct."""
    import numpy as np

    big = np.abs(rank) > MAX_WHOLE_FLOAT
    if big.any():
        i = int(np.argmax(big))
        raise InputError(name, f"rank '{int(rank[i])}' is out of range", int(lines_no[i]))


def read_qrels(path: str | os.PathLike[str], *, stdin: BinaryIO | None = None, hash: bool = True) -> Qrels:
    """A qrels file: exactly 4 fields per line, ``qid iter docno rel``."""
    src = read_source(path, what="qrels", stdin=stdin, hash=hash)
    return parse_qrels(src)


BOM = b"\xef\xbb\xbf"


def refuse_bom(src: Source) -> None:
    """A UTF-8 byte order mark would silently become part of the first topic id."""
    if src.data.startswith(BOM):
        raise InputError(
            src.name,
            "the file starts with a UTF-8 byte order mark; save it without one "
            "(trec_eval would read the mark as part of the first topic id)",
            1,
        )


def parse_four_fields(
    src: Source, *, what: str, fields: str, second: bool = True
) -> tuple[list[pa.Array | None], np.ndarray, np.ndarray]:
    """A judgement file of exactly 4 fields per line, the last an integer label (qrels,
    subtopic qrels): the first three fields as binary columns, the labels, and the
    physical line numbers. ``fields`` names them for messages (``qid iter docno rel``).
    ``second=False``: the second field is checked but not kept (None in its place: qrels'
    iter, which nothing reads)."""
    import numpy as np
    import pyarrow as pa

    refuse_bom(src)
    want = {0: pa.large_binary(), 2: pa.large_binary(), 3: pa.int64()}
    if second:
        want[1] = pa.large_binary()
    # the parser's freed blocks are kept for the run's parse, which follows and reuses them
    # (fewer page faults: 36.5k -> 34k on a Robust04-size run, at the same peak); the run's
    # parse and the table give them back
    fast = fast_table(src.data, 4, 4, want, only_wanted=True, release=False)
    if fast is not None and len(fast):
        ids = [fast.column(f"f{i}").combine_chunks() if i in want else None for i in range(3)]
        return ids, to_numpy(fast.column("f3")), np.arange(1, len(fast) + 1, dtype=np.int64)
    lines = tokenize(src.data, src.name, blank_lines_ok=False, what=what)
    if len(lines.ntok) == 0:
        raise InputError(src.name, f"the {what} file has no judgements (only comments)")
    bad = lines.ntok != 4
    if bad.any():
        i = _first_bad(bad)
        raise InputError(src.name, f"expected 4 fields ({fields}), got {int(lines.ntok[i])}", int(lines.lineno[i]))
    f0 = lines.first_tok
    rel = parse_whole(take_tokens(lines, f0 + 3), lines.lineno, src.name, "relevance label", trec_text=True)
    ids = [take_tokens(lines, f0 + i) if second or i != 1 else None for i in range(3)]
    return ids, rel, np.asarray(lines.lineno, dtype=np.int64)


def parse_qrels(src: Source) -> Qrels:
    (qid, _, docno), rel, lineno = parse_four_fields(src, what="qrels", fields="qid iter docno rel", second=False)
    assert qid is not None and docno is not None
    return Qrels(name=src.name, sha256=src.sha256, qid=qid, docno=docno, rel=rel, lineno=lineno)


def read_run(
    path: str | os.PathLike[str], *, stdin: BinaryIO | None = None, hash: bool = True, ranks: bool = False
) -> Run:
    """A TREC run: ``qid iter docno rank score runid`` (more fields are ignored)."""
    src = read_source(path, what="run", stdin=stdin, hash=hash)
    return parse_run(src, ranks=ranks)


def parse_run(src: Source, *, allow_empty: bool = False, ranks: bool = False, fast: bool = True) -> Run:
    """Parse a whole run (or, with ``allow_empty``, a chunk that may hold no data line).
    ``ranks``: keep the rank column as int64 ``Run.rank`` (only ``--ties rank`` orders by
    it; trec_eval never reads it, so otherwise it is not parsed, nor checked). ``fast``:
    try :func:`fast_run` first (False: the caller has, and it gave None)."""
    import numpy as np

    if allow_empty and not src.data:
        return Run.empty(src.name)
    refuse_bom(src)
    if fast:
        run = fast_run(src, ranks=ranks, release=not allow_empty)
        if run is not None:
            return run
    lines = tokenize(src.data, src.name, blank_lines_ok=True, what="run")
    if len(lines.ntok) == 0 and allow_empty:
        return Run.empty(src.name)
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
    runid = lines.tokens[int(f0[-1] + 5)].as_py().decode("utf-8", "surrogateescape")
    return Run(
        name=src.name,
        sha256=src.sha256,
        qid=take_tokens(lines, f0),
        docno=take_tokens(lines, f0 + 2),
        score=score,
        lineno=np.asarray(lines.lineno, dtype=np.int64),
        runid=runid,
        rank=parse_ranks(take_tokens(lines, f0 + 3), lines.lineno, src.name) if ranks else None,
    )


def fast_run(src: Source, *, ranks: bool = False, release: bool = True, threads: bool | None = None) -> Run | None:
    """The run read by Arrow's CSV parser (:func:`fast_table`) when its reading is provably
    trec_eval's and every score is a number, else None (then :func:`parse_run` reads it, and
    says what is wrong). ``release`` and ``threads``: as for :func:`fast_table`."""
    import numpy as np
    import pyarrow as pa

    if src.data.startswith(BOM):
        return None  # refused by parse_run, in its words
    want = {0: pa.large_binary(), 2: pa.large_binary(), 4: pa.float64()}
    if ranks:
        want[3] = pa.large_binary()
    fast = fast_table(src.data, None, 6, want, only_wanted=True, release=release, threads=threads)
    if fast is None or not len(fast):
        return None
    score = to_numpy(fast.column("f4"))
    if np.isnan(score).any():
        return None
    lineno = np.arange(1, len(fast) + 1, dtype=np.int64)
    return Run(
        name=src.name,
        sha256=src.sha256,
        qid=fast.column("f0").combine_chunks(),
        docno=fast.column("f2").combine_chunks(),
        score=score,
        lineno=lineno,
        runid=_last_runid(src.data),
        lines=len(fast),  # the fast path refuses blank and comment lines: one row a line
        rank=parse_ranks(fast.column("f3").combine_chunks(), lineno, src.name) if ranks else None,
    )


def _last_runid(data: bytes) -> str:
    """The runid (6th field) of the last line of a file the fast path read: every line has
    the same fields, none empty, and no line is blank."""
    end = len(data) - 1 if data.endswith(b"\n") else len(data)
    line = data[data.rfind(b"\n", 0, end) + 1 : end]
    return line.split()[5].decode("utf-8", "surrogateescape")


class ZScores:
    """``-Z`` normalisation table: (qid, label) -> (mean, standard deviation).

    A topic or label missing from the table gives -1000000; a zero standard
    deviation gives 0 when the value equals the mean, else -1000000 (trec_eval).
    """

    MISSING = -1000000.0

    def __init__(self, entries: dict[tuple[str, str], tuple[float, float]]) -> None:
        self.by_label: dict[str, dict[str, tuple[float, float]]] = {}
        for (qid, label), ms in entries.items():
            self.by_label.setdefault(label, {})[qid] = ms

    def convert(self, qids: list[str], label: str, values: np.ndarray) -> np.ndarray:
        table = self.by_label.get(label, {})
        mean = np.full(len(qids), np.nan)
        sd = np.full(len(qids), np.nan)
        index = {q: i for i, q in enumerate(qids)}
        for qid, (m, d) in table.items():  # loops over the Z file's entries, not over topics
            i = index.get(qid)
            if i is not None:
                mean[i], sd[i] = m, d
        out = np.full(len(qids), self.MISSING)
        have = ~np.isnan(mean)
        nz = have & (sd != 0)
        out[nz] = (values[nz] - mean[nz]) / sd[nz]
        zero_sd = have & (sd == 0)
        out[zero_sd & (values == mean)] = 0.0
        return out


def read_zscores(path: str | os.PathLike[str]) -> ZScores:
    """A -Z file: ``qid measure mean stddev`` per line (``#`` lines are comments)."""
    src = read_source(path, what="z-score", stdin=None, hash=False)
    refuse_bom(src)
    lines = tokenize(src.data, src.name, blank_lines_ok=False, what="z-score")
    bad = lines.ntok != 4
    if bad.any():
        i = _first_bad(bad)
        raise InputError(
            src.name, f"expected 4 fields (qid measure mean stddev), got {int(lines.ntok[i])}", int(lines.lineno[i])
        )
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
