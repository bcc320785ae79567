"""DataFrames in, Arrow columns out: the id and column conversions every DataFrame reader
shares (qrels and runs in ``api``, ``-R`` judgements in :mod:`irevalcli.io.judgements`).

pandas and pyarrow are imported inside the functions: ``ireval --help`` imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError

MAX_WHOLE_FLOAT = 2.0**53  # io.trec's: a float beyond this may not be the integer it was written as


def is_table(x: Any) -> bool:
    """Whether ``x`` is taken as a table of rows (:func:`as_frame`), not a path or read input."""
    return hasattr(x, "columns") or hasattr(x, "__arrow_c_stream__") or callable(getattr(x, "to_arrow", None))


def as_frame(table: Any) -> Any:
    """A table the API takes as a pandas DataFrame: a pandas DataFrame as it is; a pyarrow
    Table or RecordBatch, or any table that exports Arrow data (the Arrow C stream interface,
    ``__arrow_c_stream__``, or ``to_arrow()``: Polars, DuckDB, ...), as a DataFrame of
    Arrow-backed columns (``pd.ArrowDtype``) over the same buffers, not copied. None for
    anything else."""
    import pandas as pd

    if isinstance(table, pd.DataFrame):
        return table
    import pyarrow as pa

    if isinstance(table, pa.RecordBatch):
        table = pa.Table.from_batches([table])
    elif not isinstance(table, pa.Table):
        if hasattr(table, "__arrow_c_stream__"):
            table = pa.RecordBatchReader.from_stream(table).read_all()
        elif callable(getattr(table, "to_arrow", None)):
            table = table.to_arrow()
        if not isinstance(table, pa.Table):
            return None
    return _without_views(table).to_pandas(types_mapper=pd.ArrowDtype)


def _without_views(table: Any) -> Any:
    """``table`` with string and binary views (Polars' strings), which pandas cannot type,
    as large_string and large_binary (those columns are copied; the others are not)."""
    import pyarrow as pa

    def plain(t: Any) -> Any:
        if pa.types.is_dictionary(t):
            return pa.dictionary(t.index_type, plain(t.value_type), t.ordered)
        if str(t) == "string_view":
            return pa.large_string()
        if str(t) == "binary_view":
            return pa.large_binary()
        return t

    schema = pa.schema([f.with_type(plain(f.type)) for f in table.schema], metadata=table.schema.metadata)
    return table if schema.equals(table.schema) else table.cast(schema)


def check_columns(df: Any, name: str, what: str) -> None:
    """A DataFrame's column names, each once: ``df[col]`` of a repeated name is a DataFrame,
    not a column, and which of the two holds the values cannot be told."""
    seen: set[str] = set()
    for c in df.columns:
        label = str(c)
        if label in seen:
            raise InputError(name, f"the {what} DataFrame has more than one column named '{label}'; name each once")
        seen.add(label)


def frame_column(df: Any, role: str, name: str, what: str, columns: Mapping[str, str] | None = None) -> str:
    """The DataFrame column playing ``role``, recognised by the same names (and the same
    table, ``io.tabular.ALIASES``) as a CSV, TSV, JSON Lines or Parquet file's header, or
    named by ``columns`` (role -> column name, as ``--column``)."""
    from .tabular import ALIASES, find_column

    check_columns(df, name, what)
    names = [str(c) for c in df.columns]
    col = find_column(role, names, columns or {})
    if col is None and columns and role in columns:
        raise InputError(
            name,
            f"the {what} DataFrame has no column '{columns[role]}' (columns['{role}']; "
            f"columns: {', '.join(names) or 'none'})",
        )
    if col is None:
        known = ", ".join(f"'{a}'" for a in ALIASES[role])
        raise InputError(
            name,
            f"the {what} DataFrame has no {role} column (expected one of {known}; "
            f"columns: {', '.join(names) or 'none'})",
        )
    return col


def frame_to_binary(df: Any, col: str, name: str, *, chunked: bool = False) -> Any:
    """Topic or document ids as bytes, as a file gives them. Floats (a qid column that pandas
    read as 301.0, say) would never match the file's '301': integral ones become integers,
    others are refused, and so are those beyond 2**53 (``1e19``), which are no longer the
    integer they were written as (the readers' rule for whole numbers). ``chunked``: a
    ChunkedArray, an Arrow-backed column's chunks as they are (no joined copy; a caller
    taking slices joins only each slice's chunks)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    values = df[col]
    if pd.api.types.is_float_dtype(values.dtype):
        arr = values.to_numpy(dtype=np.float64)
        bad = ~np.isfinite(arr) | (arr != np.floor(arr))
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(
                name, f"column '{col}' holds {float(arr[i])!r}, which is not an id: ids are strings or integers", i + 1
            )
        big = np.abs(arr) > MAX_WHOLE_FLOAT
        if big.any():
            i = int(np.flatnonzero(big)[0])
            raise InputError(name, f"'{col}' {float(arr[i]):g} is out of range", i + 1)
        values = pd.Series(arr.astype(np.int64))
    fast = _arrow_ids(values, chunked)  # None for a column with missing values: refused below
    if fast is not None:
        return fast
    if values.isna().any():
        i = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InputError(name, f"column '{col}' is empty (missing value)", i + 1)
    try:
        strs = values.astype(str).tolist()
    except UnicodeError:  # pandas' Arrow-backed str refuses lone surrogates: a file's bytes
        strs = [str(v) for v in values.tolist()]
    ids = pa.array([v.encode("utf-8", "surrogateescape") for v in strs], pa.large_binary())
    return pa.chunked_array([ids]) if chunked else ids


def one_array(ids: Any) -> Any:
    """An Array of the ids ``frame_to_binary(..., chunked=True)`` gave (or a slice of them):
    the chunk itself when there is one, else the chunks joined."""
    import pyarrow as pa

    if isinstance(ids, pa.Array):
        return ids
    chunks = [c for c in ids.chunks if len(c)]
    if len(chunks) == 1:
        return chunks[0]
    return pa.concat_arrays(chunks) if chunks else pa.array([], ids.type)


def _arrow_ids(values: Any, chunked: bool = False) -> Any:
    """The ids of a column without nulls as large_binary, the text ``values.astype(str)``
    gives (bytes as they are, as a file holds them), converted by Arrow in one pass:
    Arrow-backed columns are handed over, object columns of strings or bytes, integer
    columns and categoricals of those converted once (a categorical's categories only,
    then taken by code). None when the column holds
    anything else (mixed objects, strings with lone surrogates, bools, ...): the caller's
    general conversion then decides, so the text is the same either way."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa

    if isinstance(values.dtype, pd.CategoricalDtype):
        cats = _arrow_ids(pd.Series(values.dtype.categories))
        codes = values.cat.codes.to_numpy()
        if cats is None or (codes < 0).any():  # (-1: a missing value, refused by the caller)
            return None
        taken = cats.take(pa.array(codes.astype(np.int64, copy=False)))
        return pa.chunked_array([taken]) if chunked else taken
    try:
        arr = _arrow_column(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, TypeError, ValueError):
        return None
    if arr is None:
        return None
    if not isinstance(arr, pa.ChunkedArray):
        arr = pa.chunked_array([arr])
    elif not chunked:
        # one chunk (a frame built from lists, a Parquet file's column) is handed over as it
        # is: combine_chunks copies even a single chunk
        arr = pa.chunked_array([one_array(arr)], arr.type)
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = pa.chunked_array([c.dictionary_decode() for c in arr.chunks], t.value_type)
        t = arr.type
    if arr.null_count:
        return None
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_binary(t) or pa.types.is_large_binary(t):
        ids = arr.cast(pa.large_binary())
    elif pa.types.is_integer(t):
        ids = arr.cast(pa.large_string()).cast(pa.large_binary())
    else:
        return None
    return ids if chunked else one_array(ids)


def _arrow_column(values: Any) -> Any:
    """A non-categorical column as Arrow data (the column's own, for Arrow-backed ones), or
    None when :func:`_arrow_ids` leaves it to the general conversion."""
    import pandas as pd
    import pyarrow as pa

    dtype = values.dtype
    if pd.api.types.is_object_dtype(dtype):
        try:  # strings, the usual case, in one pass (no separate look at each object's type)
            return pa.array(values, type=pa.large_string(), from_pandas=True)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError):
            kind = pd.api.types.infer_dtype(values, skipna=False)
        if kind == "bytes":  # a file's bytes, as they are
            return pa.array(values, type=pa.large_binary())
        return pa.array(values, from_pandas=True) if kind == "integer" else None  # mixed: as astype(str)
    if pd.api.types.is_bool_dtype(dtype):
        return None
    if not (
        pd.api.types.is_integer_dtype(dtype) or isinstance(dtype, pd.ArrowDtype) or pd.api.types.is_string_dtype(dtype)
    ):
        return None
    return pa.array(values, from_pandas=True)
