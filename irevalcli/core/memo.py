"""What is computed from one input object once, however many runs are evaluated against it.

A call that evaluates many runs against one reading of the qrels (``ireval QRELS RUN1 ...
RUN50``, compare, gate) hands the same :class:`~irevalcli.io.trec.Qrels` object (and its
arrays) to every run's table. The qrels-side work of a table that does not depend on the run
(the runs of equal topic ids, the numeric docno ids, the whole-qrels facts of a job, the sort
of the judgement keys) is kept here under the object it was computed from, and given again
while that object lives: an entry goes when its object is collected, and only the last
:data:`SIZE` objects keep theirs (a streamed run's parts each take their own slice).

Only what is a function of the object alone is kept under it; :func:`same_order` keeps a
result with the arrays it was computed from and gives it again only for equal arrays.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

import numpy as np

_T = TypeVar("_T")
SIZE = 8  # objects whose results are kept (the newest)
_MEMO: dict[int, tuple[weakref.ref, dict[Hashable, Any]]] = {}  # id -> (the object, its results)


def _entry(obj: Any) -> dict[Hashable, Any] | None:
    """The results kept for ``obj`` (made empty the first time), or None when it cannot be
    referenced weakly (then nothing is kept for it)."""
    key = id(obj)
    got = _MEMO.get(key)
    if got is not None and got[0]() is obj:
        return got[1]

    def forget(_: weakref.ref) -> None:
        _forget(key)

    try:
        ref = weakref.ref(obj, forget)
    except TypeError:
        return None
    if len(_MEMO) >= SIZE:
        try:
            _MEMO.pop(next(iter(_MEMO)), None)  # the oldest
        except (StopIteration, RuntimeError):  # (emptied or changed by another thread meanwhile)
            pass
    results: dict[Hashable, Any] = {}
    _MEMO[key] = (ref, results)
    return results


def _forget(key: int) -> None:
    got = _MEMO.get(key)
    if got is not None and got[0]() is None:
        # (pop: a streamed run's parts are scored in two threads, and the other may have
        # dropped the entry meanwhile; a KeyError here would be printed from the collector)
        _MEMO.pop(key, None)


def once(obj: Any, name: Hashable, compute: Callable[[], _T]) -> _T:
    """``compute()``, a function of ``obj`` alone (which it must not change), computed once
    while ``obj`` lives. The value is shared: callers must not modify it."""
    results = _entry(obj)
    if results is None:
        return compute()
    if name in results:
        return results[name]
    value = results[name] = compute()
    return value


def same_order(obj: Any, name: Hashable, arrays: tuple[np.ndarray, ...], compute: Callable[[], _T]) -> _T:
    """``compute()``, a function of ``arrays`` alone, kept under ``obj`` with a copy of the
    arrays and given again while ``obj`` lives for arrays equal to them (checked, element by
    element: a run that changes them computes its own)."""
    results = _entry(obj)
    if results is None:
        return compute()
    kept = results.get(name)
    if kept is not None:
        kept_arrays, value = kept
        if len(kept_arrays) == len(arrays) and all(
            k.dtype == a.dtype and np.array_equal(k, a) for k, a in zip(kept_arrays, arrays)
        ):
            return value
    value = compute()
    results[name] = (tuple(np.array(a, copy=True) for a in arrays), value)
    return value


def same_sort(
    obj: Any, name: Hashable, key: np.ndarray, sort: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
) -> tuple[np.ndarray, np.ndarray]:
    """``sort(key)``: a permutation ``order`` of the integer array ``key`` and ``key[order]``,
    a function of ``key`` alone, kept under ``obj`` and given again while ``obj`` lives for a
    ``key`` equal to the one it was computed from. Only the result is kept (no copy of
    ``key``, as :func:`same_order` keeps): as ``order`` is a permutation, ``key[order]``
    equals the kept sorted keys exactly when ``key`` equals the kept key, element by element,
    and that gather is the caller's anyway. The arrays given are shared: callers must not
    modify them."""
    results = _entry(obj)
    if results is None:
        return sort(key)
    kept = results.get(name)
    if kept is not None:
        order, sorted_key = kept
        if len(order) == len(key) and sorted_key.dtype == key.dtype:
            again = key[order]
            if np.array_equal(again, sorted_key):
                return order, sorted_key
    value = results[name] = sort(key)
    return value
