"""(topic, docno) pairs as integers, for the commands that pool or compare runs' top documents.

Topics and docnos of several inputs (runs, judgements) are numbered together in bytewise
order (:func:`~irevalcli.core.table.factorize_sorted`), so a pair is one integer key,
``topic code * docnos + docno code``, equal exactly when the pair is, and keys sort as the
pairs do: by topic, then docno, bytewise (the order of a qrels file written from them).
Sets of pairs are then sorts, searches and counts in numpy: no Arrow grouping or join,
whose Python side imports pandas (a quarter of a second and 30-40 MB).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..io.arrow import from_numpy
from .table import distinct, factorize_sorted, rank_order, top_rows

if TYPE_CHECKING:
    import pyarrow as pa


class PairCodes:
    """The inputs' (topic, docno) pairs as keys: ``topic[i]`` and ``key[i]`` per row of input
    ``i``, and the two dictionaries that turn keys back into ids."""

    def __init__(self, inputs: Sequence[Any]) -> None:  # anything with qid and docno columns
        import pyarrow as pa

        self.topic, self._qids = factorize_sorted(*(x.qid.cast(pa.large_binary()) for x in inputs))
        doc, self._docnos = factorize_sorted(*(x.docno.cast(pa.large_binary()) for x in inputs))
        self._ndoc = max(len(self._docnos), 1)
        self.key = [t * self._ndoc + d for t, d in zip(self.topic, doc)]

    def topic_of(self, keys: np.ndarray) -> np.ndarray:
        """The topic code of each of ``keys``."""
        return keys // self._ndoc

    def ids(self, keys: np.ndarray) -> tuple[pa.Array, pa.Array]:
        """The (topic ids, docnos) of ``keys``, as large_binary arrays."""
        return self._qids.take(from_numpy(self.topic_of(keys))), self._docnos.take(from_numpy(keys % self._ndoc))


def top_of_each_topic(topic: np.ndarray, run: Any, depth: int, ties: str = "docno") -> np.ndarray:
    """The positions of ``run``'s top ``depth`` rows of each topic (``topic``: each row's topic
    code), ranked as trec_eval ranks them under the ``ties`` rule."""
    order = rank_order(topic, run.score, run.docno, ties, run.lineno, run.rank)
    if not len(order):
        return order
    t = topic[order]  # ascending: rank_order ranks topic by topic
    starts = np.zeros(int(t[-1]) + 2, dtype=np.int64)  # each topic code's first ranked row
    np.cumsum(np.bincount(t), out=starts[1:])
    return order[top_rows(t, starts, depth)]


def member(keys: np.ndarray, of: np.ndarray) -> np.ndarray:
    """Which of ``keys`` are among ``of`` (integers; ``np.isin`` through one sort of ``of``)."""
    pool = distinct(of)
    if not len(pool) or not len(keys):
        return np.zeros(len(keys), dtype=bool)
    return pool[np.minimum(np.searchsorted(pool, keys), len(pool) - 1)] == keys
