"""The DCG kernel: gain x discount x cutoff, for every DCG-family measure.

A DCG-family measure chooses the gain of each ranked row (``gain.py``: trec_eval's gain
table with ``level=gain`` pairs; ``graded.py``: the label or 2^label - 1), a discount
form, and the depths it reads; the arithmetic is here, once:

* :func:`discount` of a 1-based rank: ``"log"`` log2(rank + 1) (trec_eval, Burges) or
  ``"jk"`` max(1, log2(rank)) (Järvelin & Kekäläinen's original);
* :func:`running` DCG within each topic over the rows with a gain (exact running sums,
  read with ``EvalTable.sparse_at_depth`` and friends), :func:`total` DCG of each whole
  ranking (the terms added in rank order);
* :func:`ideal_prefix`: the running DCG of each topic's ideal list, and :func:`ideal_at`
  to read it at a depth (clipped to the list's length; 0 at depth 0).

Adding a discount form (``"jk"`` was one) touches :func:`discount` only.
"""

from __future__ import annotations

import numpy as np

from ..core.table import EvalTable, seg_cumsum_exact

DISCOUNTS = ("log", "jk")


def discount(rank: np.ndarray, form: str = "log") -> np.ndarray:
    """The discount at each 1-based ``rank``: log2(rank + 1) (``"log"``) or max(1, log2(rank))
    (``"jk"``)."""
    r = np.asarray(rank).astype(np.float64)
    if form == "jk":
        return np.maximum(1.0, np.log2(r))
    return np.log2(r + 1.0)


def terms(gain: np.ndarray, rank: np.ndarray, form: str = "log") -> np.ndarray:
    """Each DCG term: ``gain / discount(rank, form)``."""
    return gain / discount(rank, form)


def running(t: EvalTable, rows: np.ndarray, gain: np.ndarray, form: str = "log") -> tuple[np.ndarray, np.ndarray]:
    """The running DCG within each topic of ``t`` when ``rows`` (ascending) have ``gain`` and
    every other row 0: a :meth:`EvalTable.sparse_running` result."""
    return t.sparse_running(rows, terms(gain, t.rank_at(rows), form))


def total(t: EvalTable, rows: np.ndarray, gain: np.ndarray, form: str = "log") -> np.ndarray:
    """DCG of each topic's whole ranking: the terms of ``rows`` added in rank order."""
    return np.bincount(t.g[rows], weights=terms(gain, t.rank_at(rows), form), minlength=t.nq)


def ideal_prefix(gain: np.ndarray, pos: np.ndarray, start: np.ndarray, form: str = "log") -> np.ndarray:
    """The running DCG of each topic's ideal list (``gain`` topic-major, best first, ``pos``
    the 0-based position in its list, ``start`` the lists' offsets)."""
    return seg_cumsum_exact(terms(gain, pos + 1, form), start)


def ideal_at(prefix: np.ndarray, start: np.ndarray, K: np.ndarray, depth: np.ndarray | int) -> np.ndarray:
    """An :func:`ideal_prefix` (or any running total over the ideal lists) read at
    ``min(depth, K)`` for each topic; 0 at depth 0."""
    d = np.minimum(np.broadcast_to(np.asarray(depth, dtype=np.int64), K.shape), K)
    out = np.zeros(len(K), dtype=np.float64)
    ok = d >= 1
    out[ok] = prefix[start[:-1][ok] + d[ok] - 1]
    return out


def ideal_total(gain: np.ndarray, pos: np.ndarray, K: np.ndarray, form: str = "log") -> np.ndarray:
    """DCG of each topic's whole ideal list (``K`` entries each), the terms added in order."""
    topic = np.repeat(np.arange(len(K)), K)
    return np.bincount(topic, weights=terms(gain, pos + 1, form), minlength=len(K))
