"""DataFrames in, Arrow columns out: the id and column conversions every DataFrame reader
shares (qrels and runs in ``api``, ``-R`` judgements in :mod:`irevalcli.io.judgements`).

pandas and pyarrow are imported inside the functions: ``ireval --help`` imports neither.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError


def frame_column(df: Any, role: str, name: str, what: str, columns: Mapping[str, str] | None = None) -> str:
    """The DataFrame column playing ``role``, recognised by the same names (and the same
    table, ``io.tabular.ALIASES``) as a CSV, TSV, JSON Lines or Parquet file's header, or
    named by ``columns`` (role -> column name, as ``--column``)."""
    from .tabular import ALIASES, find_column

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


def frame_to_binary(df: Any, col: str, name: str) -> Any:
    """Topic or document ids as bytes, as a file gives them. Floats (a qid column that pandas
    read as 301.0, say) would never match the file's '301': integral ones become integers,
    others are refused."""
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
        values = pd.Series(arr.astype(np.int64))
    elif values.isna().any():
        i = int(np.flatnonzero(values.isna().to_numpy())[0])
        raise InputError(name, f"column '{col}' is empty (missing value)", i + 1)
    strs = values.astype(str).tolist()
    return pa.array([v.encode("utf-8", "surrogateescape") for v in strs], pa.large_binary())
