"""DataFrames in, Arrow columns out: the id and column conversions every DataFrame reader
shares (qrels and runs in ``api``, ``-R`` judgements in :mod:`irevalcli.io.judgements`).

pandas and pyarrow are imported inside the functions: ``ireval --help`` imports neither.
"""

from __future__ import annotations

from typing import Any

from ..errors import InputError

MAX_WHOLE_FLOAT = 2.0**53  # io.trec's: a float beyond this may not be the integer it was written as


def check_columns(df: Any, name: str, what: str) -> None:
    """A DataFrame's column names, each once: ``df[col]`` of a repeated name is a DataFrame,
    not a column, and which of the two holds the values cannot be told."""
    seen: set[str] = set()
    for c in df.columns:
        label = str(c)
        if label in seen:
            raise InputError(name, f"the {what} DataFrame has more than one column named '{label}'; name each once")
        seen.add(label)


def frame_column(df: Any, role: str, name: str, what: str) -> str:
    """The DataFrame column playing ``role``, recognised by the same names (and the same
    table, ``io.tabular.ALIASES``) as a CSV, TSV, JSON Lines or Parquet file's header."""
    from .tabular import ALIASES, find_column

    check_columns(df, name, what)
    names = [str(c) for c in df.columns]
    col = find_column(role, names, {})
    if col is None:
        known = ", ".join(f"'{a}'" for a in ALIASES[role])
        raise InputError(
            name,
            f"the {what} DataFrame has no {role} column (expected one of {known}; "
            f"columns: {', '.join(names) or 'none'})",
        )
    return col


def frame_to_binary(df: Any, col: str, name: str) -> Any:
    """Topic or document ids as bytes, as a file gives them. Floats (a qid column that pandas
    read as 301.0, say) would never match the file's '301': integral ones become integers,
    others are refused, and so are those beyond 2**53 (``1e19``), which are no longer the
    integer they were written as (the readers' rule for whole numbers)."""
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
    elif values.isna().any():
        i = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InputError(name, f"column '{col}' is empty (missing value)", i + 1)
    strs = values.astype(str).tolist()
    return pa.array([v.encode("utf-8", "surrogateescape") for v in strs], pa.large_binary())
