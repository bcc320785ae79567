"""numpy <-> Arrow conversions for the hot path that never import pandas.

pyarrow's own ``Array.to_numpy``, ``pa.array(...)`` and ``fill_null`` with a
Python value go through its pandas shim and import pandas on first use, which
costs about 0.3 s of start-up on a run that never needs pandas. These helpers
build the same arrays from the Arrow buffers directly (zero-copy where the
layout allows). ``tests/commands/test_perf_paths.py`` checks that evaluating a run
in the trec format leaves pandas unimported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pyarrow as pa

# Canonical decimal ids (no sign, no leading zero, at most MAX_DIGITS digits) can stand for
# their texts: a text of d digits is canonical when its value is at least LEAST_OF_DIGITS[d]
# (the docnos of core.table, the ids of a log read as numbers in io.dataset).
MAX_DIGITS = 15
LEAST_OF_DIGITS = np.array([0, 0, *(10 ** (d - 1) for d in range(2, MAX_DIGITS + 1))], dtype=np.int64)

_NUMPY_OF = {
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "float": np.float32,
    "double": np.float64,
}


def to_numpy(arr: pa.Array | pa.ChunkedArray, *, nulls_ok: bool = False) -> np.ndarray:
    """A numeric or boolean Arrow array without nulls as numpy (a view where possible), never
    through pyarrow's own ``to_numpy``, which imports pandas for some arrays (a float column of
    a Parquet row group, a boolean mask): a quarter of a second and 30-40 MB.

    With ``nulls_ok`` an array with nulls is accepted and the values in null slots
    are whatever the buffer holds: mask them with :func:`valid_mask`."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if arr.null_count and not nulls_ok:
        raise ValueError("to_numpy: the array has nulls")
    n, off = len(arr), arr.offset
    if pa.types.is_boolean(arr.type):
        if n == 0:
            return np.zeros(0, dtype=bool)
        bits = np.frombuffer(arr.buffers()[1], dtype=np.uint8)
        return np.unpackbits(bits, count=off + n, bitorder="little")[off:].view(bool)
    dtype = _NUMPY_OF.get(str(arr.type))
    if dtype is None and pa.types.is_floating(arr.type):  # (half floats: widened, exactly)
        return to_numpy(arr.cast(pa.float64()), nulls_ok=nulls_ok)
    if dtype is None:
        raise TypeError(f"to_numpy: {arr.type} is not a numeric or boolean type")
    if n == 0:
        return np.zeros(0, dtype=dtype)
    return np.frombuffer(arr.buffers()[1], dtype=dtype, count=off + n)[off:]


def valid_mask(arr: pa.Array) -> np.ndarray:
    """True where the array holds a value (not null)."""
    import pyarrow.compute as pc

    return to_numpy(pc.is_valid(arr))


def from_numpy(x: np.ndarray) -> pa.Array:
    """A 1-d numeric or boolean numpy array as an Arrow array (int64 for indices)."""
    import pyarrow as pa

    x = np.ascontiguousarray(x)
    if x.dtype == bool:
        bits = np.packbits(x, bitorder="little")
        return pa.Array.from_buffers(pa.bool_(), len(x), [None, pa.py_buffer(bits)])
    types = {np.dtype(np.int64): pa.int64(), np.dtype(np.int32): pa.int32(), np.dtype(np.float64): pa.float64()}
    if x.dtype not in types:
        x = x.astype(np.float64 if x.dtype.kind == "f" else np.int64)
    return pa.Array.from_buffers(types[x.dtype], len(x), [None, pa.py_buffer(x)])


def own_type_array(x: np.ndarray) -> pa.Array:
    """A 1-d numeric numpy array as an Arrow array of the same type (uint64 stays uint64, where
    :func:`from_numpy` widens to int64), on its buffer; never through pyarrow's pandas shim."""
    import pyarrow as pa

    x = np.ascontiguousarray(x)
    return pa.Array.from_buffers(pa.from_numpy_dtype(x.dtype), len(x), [None, pa.py_buffer(x)])


def zeros_for_nulls(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A numeric array with its nulls as 0, of its own type (``fill_null(0)`` without pyarrow's
    pandas shim, through which a Python fill value goes)."""
    import pyarrow as pa

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    values = to_numpy(arr, nulls_ok=True).copy()
    if arr.null_count:
        values[~valid_mask(arr)] = 0
    return own_type_array(values)


def repeated_text(value: str, n: int) -> pa.Array:
    """A string array of ``n`` times ``value`` (``pa.array([value] * n, pa.string())`` without
    a Python list, nor pyarrow's pandas shim); large_string when its bytes need 64-bit offsets."""
    import pyarrow as pa

    data = value.encode("utf-8", "surrogateescape")
    wide = len(data) * n >= 1 << 31
    return _repeated(data, n, pa.large_string() if wide else pa.string(), np.int64 if wide else np.int32)


def repeated_bytes(value: bytes, n: int) -> pa.Array:
    """A large_binary array of ``n`` times ``value`` (``pa.repeat(pa.scalar(value, ...), n)``
    without pyarrow's pandas shim, through which ``pa.scalar`` goes)."""
    import pyarrow as pa

    return _repeated(value, n, pa.large_binary(), np.int64)


def _repeated(data: bytes, n: int, kind: pa.DataType, offset: type) -> pa.Array:
    import pyarrow as pa

    offsets: np.ndarray = np.arange(n + 1, dtype=offset) * len(data)
    return pa.Array.from_buffers(kind, n, [None, pa.py_buffer(offsets), pa.py_buffer(data * n)])


def string_array(values: Sequence[str | None]) -> pa.Array:
    """A string array of ``values`` (None: null), built from its buffers: ``pa.array`` of a list
    goes through pyarrow's pandas shim. UnicodeEncodeError when a value is not UTF-8 (a lone
    surrogate); large_string when its bytes need 64-bit offsets."""
    import pyarrow as pa

    n = len(values)
    texts = ["" if v is None else v for v in values]
    joined = "".join(texts)
    if joined.isascii():
        data = joined.encode("ascii")
        lengths = np.fromiter(map(len, texts), dtype=np.int64, count=n)
    else:
        encoded = [t.encode("utf-8") for t in texts]
        data = b"".join(encoded)
        lengths = np.fromiter(map(len, encoded), dtype=np.int64, count=n)
    wide = len(data) >= 1 << 31
    offsets = np.zeros(n + 1, dtype=np.int64 if wide else np.int32)
    np.cumsum(lengths, out=offsets[1:])
    kind = pa.large_string() if wide else pa.string()
    return pa.Array.from_buffers(kind, n, [_validity(values), pa.py_buffer(offsets), pa.py_buffer(data)])


def float_array(values: Sequence[float | None]) -> pa.Array:
    """A float64 array of ``values`` (None: null), from numpy: no pandas shim."""
    import pyarrow as pa

    x = np.fromiter((np.nan if v is None else v for v in values), dtype=np.float64, count=len(values))
    return pa.Array.from_buffers(pa.float64(), len(x), [_validity(values), pa.py_buffer(x)])


def _validity(values: Sequence[object]) -> pa.Buffer | None:
    """The validity bitmap of ``values`` (None: a null), or None when none is null."""
    import pyarrow as pa

    valid = np.fromiter((v is not None for v in values), dtype=bool, count=len(values))
    return None if valid.all() else pa.py_buffer(np.packbits(valid, bitorder="little"))


def take_rows(values: pa.Array | pa.RecordBatch, rows: np.ndarray) -> pa.Array | pa.RecordBatch:
    """``values.take(rows)`` for integer positions ``rows``: checked here in two numpy passes
    (a ValueError when one is out of range), then taken without Arrow's own check, which about
    doubles the time of a binary column's take (10.5 against 5.9 ms for 491k rows of a
    spilled partition in a random order)."""
    import pyarrow.compute as pc

    rows = np.asarray(rows)
    if rows.dtype.kind not in "iu":
        raise TypeError(f"take_rows: integer positions, not {rows.dtype}")
    if len(rows) and (int(rows.min()) < 0 or int(rows.max()) >= len(values)):
        raise ValueError("take_rows: a position is out of range")
    return pc.take(values, from_numpy(rows), boundscheck=False)


def binary_array(values: list[bytes]) -> pa.Array:
    """A large_binary array of the given byte strings."""
    import pyarrow as pa

    offsets = np.zeros(len(values) + 1, dtype=np.int64)
    if values:
        np.cumsum([len(v) for v in values], out=offsets[1:])
    return pa.Array.from_buffers(
        pa.large_binary(), len(values), [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))]
    )


def text_keys(texts: list[str]) -> pa.Array:
    """The ids ``texts`` (:func:`decode_id`'s) as a large_binary array of their bytes, which
    sort as trec_eval orders ids: when every id is ASCII, one encoding of them all (a tenth of
    the time of encoding each: 100k topic ids); else each its own."""
    import pyarrow as pa

    joined = "".join(texts)
    if not joined.isascii():
        return binary_array([t.encode("utf-8", "surrogateescape") for t in texts])
    offsets = np.zeros(len(texts) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)), out=offsets[1:])
    return pa.Array.from_buffers(
        pa.large_binary(), len(texts), [None, pa.py_buffer(offsets), pa.py_buffer(joined.encode("ascii"))]
    )


def decode_id(b: bytes) -> str:
    """A topic or document id read as bytes, as text (undecodable bytes kept as surrogates)."""
    return b.decode("utf-8", "surrogateescape")
