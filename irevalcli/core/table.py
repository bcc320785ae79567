"""EvalTable: qrels and run joined into one ranked columnar table.

Built once per evaluation, with every topic id and docno factorised once:

* topics are the judged topics (trec_eval 10.0 iterates over the qrels), in
  bytewise ``strcmp`` order (or, for streamed batches, which are put in order
  later, the order of the run); run topics that are not judged are ignored;
* each topic's results are ranked by score descending, ties broken by docno
  descending (bytewise; trec_eval's rule), or with ``ties="input"`` by their order in the
  run file (ranx's and TF-Ranking's rule); with ``ties="rank"`` by the run's rank column
  ascending instead (equal ranks: score descending, then docno descending), the only
  rule that reads the rank column;
* ``-M`` keeps the top M, then each document is labelled with its qrels value,
  ``-1`` when it is not in the qrels and ``-2`` when its qrels value is negative;
  ``-J`` then drops the ``-1``/``-2`` documents and closes the gaps;
* with ``-c`` a topic with no results gets trec_eval's one-document placeholder
  ranking (``ceci_nest_pas_un_docno``, score 1.0).

Every array is numpy; measures are reductions over the topic index ``g``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import DuplicateDocError, MissingTopicError, NoQueriesError, UsageError
from ..io.arrow import LEAST_OF_DIGITS, MAX_DIGITS, binary_array, decode_id, from_numpy, to_numpy, valid_mask
from ..records import FrozenRecord, Record
from .memo import once, same_sort

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Qrels, Run

PLACEHOLDER_DOCNO = b"ceci_nest_pas_un_docno"
_T = TypeVar("_T")


class EvalOptions(FrozenRecord):
    """The trec_eval options that change what is evaluated (a frozen value: ``replaced`` gives
    a copy with some changed; ``_fields`` names them)."""

    __slots__ = ("compat", "complete", "judged_only", "max_docs", "num_docs", "only_query", "rel_level", "ties")

    rel_level: int  # -l
    max_docs: int | None  # -M (None: no limit)
    judged_only: bool  # -J
    complete: bool  # -c
    num_docs: int  # -N
    only_query: str | None  # -D N.qid
    compat: str  # "10.0", or "9.0.8" (pytrec_eval, Anserini): float32 scores, missing topics skipped
    ties: str  # score ties: "docno" (descending, trec_eval), "input" (run file order, ranx)
    # or "rank" (the run's rank column ascending, then score, then docno)

    def __init__(
        self,
        rel_level: int = 1,
        max_docs: int | None = None,
        judged_only: bool = False,
        complete: bool = False,
        num_docs: int = 0,
        only_query: str | None = None,
        compat: str = "10.0",
        ties: str = "docno",
    ) -> None:
        setattr = object.__setattr__
        setattr(self, "rel_level", rel_level)
        setattr(self, "max_docs", max_docs)
        setattr(self, "judged_only", judged_only)
        setattr(self, "complete", complete)
        setattr(self, "num_docs", num_docs)
        setattr(self, "only_query", only_query)
        setattr(self, "compat", compat)
        setattr(self, "ties", ties)


# ---- -D, -c and -M: the rules every table (and every engine) applies, written once --------


def only_query_topics(topics: np.ndarray, qid_dict: pa.Array, opts: EvalOptions, where: str) -> np.ndarray:
    """``-D``: of the judged ``topics`` (codes into ``qid_dict``), the one asked for (all
    without ``-D``); :func:`only_query_unjudged` if it is not among them."""
    if opts.only_query is None:
        return topics
    want = opts.only_query.encode("utf-8", "surrogateescape")
    hit = [c for c in topics.tolist() if qid_dict[c].as_py() == want]
    if not hit:
        raise only_query_unjudged(opts, where)
    return np.asarray(hit, dtype=np.int64)


def only_query_unjudged(opts: EvalOptions, where: str) -> NoQueriesError:
    """``-D``'s topic is not judged in ``where`` (``the qrels``, or a judgement file's name)."""
    return NoQueriesError(f"-D: topic '{opts.only_query}' is not in {where}: nothing to evaluate")


def missing_topic_error(run_name: str, qid: str, judgements: str) -> MissingTopicError:
    """Without ``-c``, a judged topic with no results in the run is refused (trec_eval 10.0)."""
    return MissingTopicError(
        run_name,
        f"topic '{qid}' is judged in {judgements} but has no results in the run (use -c to score missing topics as 0)",
    )


def top_rows(g: np.ndarray, starts: np.ndarray, max_docs: int) -> np.ndarray:
    """``-M``: which rows (topic ``g``, ranked; ``starts``: each topic's first row) are among
    the top ``max_docs`` of their topic."""
    return np.arange(len(g)) - starts[g] < max_docs


class EvalTable(Record):
    """The ranked, labelled results of every evaluated topic."""

    qids: list[str]  # evaluated topics, strcmp order (run order: build_table(run_order=True))
    g: np.ndarray  # topic index of each ranked row
    label: np.ndarray  # qrels value, -1 not pooled, -2 pooled but unjudged
    starts: np.ndarray  # row offset of each topic (len nq + 1)
    qg: np.ndarray  # topic index of each judgement (evaluated topics only)
    qrel: np.ndarray  # its relevance value
    missing: np.ndarray  # bool per topic: placeholder ranking under -c
    opts: EvalOptions
    runid: str
    doc: np.ndarray | None  # docno code of each ranked row (into doc_dict)
    doc_dict: Any  # pa.Array of docnos
    max_label: int | None  # highest relevance label in the whole qrels file
    subtopics: Any  # subtopic judgements (irevalcli.io.subtopics.SubtopicQrels), if given
    _cache: dict  # what :meth:`memo` keeps (a new one for each view)

    def __init__(  # noqa: PLR0913  a value class: one parameter a field, as its dataclass had
        self,
        qids: list[str],
        g: np.ndarray,
        label: np.ndarray,
        starts: np.ndarray,
        qg: np.ndarray,
        qrel: np.ndarray,
        missing: np.ndarray,
        opts: EvalOptions,
        runid: str = "",
        doc: np.ndarray | None = None,
        doc_dict: Any = None,
        max_label: int | None = None,
        subtopics: Any = None,
        _cache: dict | None = None,
    ) -> None:
        self.qids = qids
        self.g = g
        self.label = label
        self.starts = starts
        self.qg = qg
        self.qrel = qrel
        self.missing = missing
        self.opts = opts
        self.runid = runid
        self.doc = doc
        self.doc_dict = doc_dict
        self.max_label = max_label
        self.subtopics = subtopics
        self._cache = {} if _cache is None else _cache

    def __repr__(self) -> str:  # (the memo's contents are not the table's)
        return f"EvalTable(qids={self.qids!r}, nq={self.nq}, rows={len(self.g)}, opts={self.opts!r})"

    # ---- what measures share ----------------------------------------------
    def memo(self, key: Hashable, compute: Callable[[], _T]) -> _T:
        """``compute()``, computed once for this table: what several measures (or one
        measure's cutoffs) read is kept under ``key``, a tuple naming it and what it depends
        on besides the table (``("err_prefix", g_max)``)."""
        cache = self._cache
        if key in cache:
            return cache[key]
        value = cache[key] = compute()
        return value

    def derive(self, **changes: Any) -> EvalTable:
        """The table with some fields changed (``label``, ``opts``, ...): a view such as ``-l``
        at another level or the top k rows, with its own cached columns and memo. Keep a view
        several measures use with :meth:`memo` (``t.memo(("view_top", k), lambda: ...)``)."""
        return self.replaced(_cache={}, **changes)

    # ---- sizes ----------------------------------------------------------
    @property
    def nq(self) -> int:
        return len(self.qids)

    @cached_property
    def n(self) -> np.ndarray:
        """num_ret per topic."""
        return np.diff(self.starts)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of each row within its topic."""
        return np.arange(len(self.g), dtype=np.int64) - self.starts[self.g] + 1

    @property
    def level(self) -> int:
        return self.opts.rel_level

    # ---- judgements -----------------------------------------------------
    @cached_property
    def judged(self) -> np.ndarray:
        """Mask over qrels rows: judged (rel >= 0)."""
        return self.qrel >= 0

    @cached_property
    def R(self) -> np.ndarray:
        """num_rel: judged documents with rel >= level, per topic."""
        m = self.judged & (self.qrel >= self.level)
        return np.bincount(self.qg[m], minlength=self.nq).astype(np.int64)

    @cached_property
    def NR(self) -> np.ndarray:
        """Judged non-relevant documents (0 <= rel < level), per topic."""
        m = self.judged & (self.qrel < self.level)
        return np.bincount(self.qg[m], minlength=self.nq).astype(np.int64)

    # ---- per-row columns --------------------------------------------------
    @cached_property
    def is_rel(self) -> np.ndarray:
        return self.label >= self.level

    @cached_property
    def cum_rel(self) -> np.ndarray:
        """Relevant documents at or above each row, within its topic."""
        return self.seg_cumsum(self.is_rel.astype(np.int64))

    @cached_property
    def rel_ret(self) -> np.ndarray:
        """num_rel_ret per topic (never counts -1/-2 documents, even with -l below 0)."""
        rows = self.rel_rows
        if self.level < 0:
            rows = rows[self.label[rows] >= 0]
        return np.bincount(self.g[rows], minlength=self.nq).astype(np.int64)

    # ---- sparse row lists ---------------------------------------------------
    # Most rows of a deep run are unjudged: measures that only look at judged or
    # relevant rows work on these ascending row lists instead of full columns.
    @cached_property
    def judged_rows(self) -> np.ndarray:
        """Rows whose document is judged (label >= 0), ascending."""
        return np.flatnonzero(self.label >= 0)

    @cached_property
    def rel_rows(self) -> np.ndarray:
        """Rows of relevant documents (``is_rel``), ascending."""
        if self.level >= 0:
            j = self.judged_rows
            return j[self.label[j] >= self.level]
        return np.flatnonzero(self.is_rel)

    def rank_at(self, rows: np.ndarray) -> np.ndarray:
        """1-based rank of the given rows (as ``rank[rows]``, without the full column)."""
        return rows - self.starts[self.g[rows]] + 1

    def count_upto(self, listed: np.ndarray, rows: np.ndarray) -> np.ndarray:
        """For each of ``rows``: how many ``listed`` rows (ascending) are at or above it in
        its topic (a running count of a column read at ``rows``)."""
        tops = self.starts[self.g[rows]]
        return np.searchsorted(listed, rows, side="right") - np.searchsorted(listed, tops, side="left")

    def count_at(self, listed: np.ndarray, k: np.ndarray | int) -> np.ndarray:
        """How many ``listed`` rows (ascending) are in the top ``min(k, n)`` of each topic, as
        floats (``at_depth`` of their running count)."""
        depth = np.minimum(np.broadcast_to(np.asarray(k, dtype=np.int64), (self.nq,)), self.n)
        begin = self.starts[:-1]
        end = begin + np.maximum(depth, 0)
        return (np.searchsorted(listed, end) - np.searchsorted(listed, begin)).astype(np.float64)

    def sparse_running(self, rows: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact running sums within each topic of a column that is ``values`` at ``rows``
        (ascending) and +0.0 on every other row: ``(rows', running at rows')``.

        Only the listed rows are accumulated (adding +0.0 changes no running value that
        is not -0.0, and the running value at a nonzero row is never -0.0). When a listed
        value is -0.0 the whole column is accumulated instead (``rows'`` = every row).
        Read the result with :meth:`sparse_at_rows`, :meth:`sparse_at_depth`,
        :meth:`sparse_read`.
        """
        values = np.asarray(values, dtype=np.float64)
        if (np.signbit(values) & (values == 0.0)).any():
            col = np.zeros(len(self.g), dtype=np.float64)
            col[rows] = values
            return np.arange(len(col), dtype=np.int64), seg_accumulate(col, self.starts)
        return rows, seg_accumulate(values, np.searchsorted(rows, self.starts))

    def sparse_at_rows(self, sr: tuple[np.ndarray, np.ndarray], rows: np.ndarray) -> np.ndarray:
        """A :meth:`sparse_running` result read at some of the rows it was built from."""
        listed, running = sr
        return running[np.searchsorted(listed, rows)]

    def sparse_read(
        self, sr: tuple[np.ndarray, np.ndarray], topic: np.ndarray, depth: np.ndarray, empty: float = 0.0
    ) -> np.ndarray:
        """A :meth:`sparse_running` result read at ``depth`` (1-based, at most n) of ``topic``:
        the running value at the last listed row in the top ``depth``, 0.0 when there is
        none, ``empty`` at depth 0."""
        listed, running = sr
        return seg_read_sparse(listed, running, self.starts, topic, depth, 0.0, empty)

    def sparse_at_depth(self, sr: tuple[np.ndarray, np.ndarray], k: np.ndarray | int, empty: float = 0.0) -> np.ndarray:
        """:meth:`at_depth` of a :meth:`sparse_running` result."""
        depth = np.minimum(np.broadcast_to(np.asarray(k, dtype=np.int64), (self.nq,)), self.n)
        return self.sparse_read(sr, np.arange(self.nq), depth, empty)

    # ---- grouped reductions ---------------------------------------------
    def seg_sum(self, values: np.ndarray, where: np.ndarray | None = None) -> np.ndarray:
        """Per-topic sum, added in rank order (as trec_eval's loops add)."""
        if where is None:
            return np.bincount(self.g, weights=values, minlength=self.nq)
        return np.bincount(self.g[where], weights=values[where], minlength=self.nq)

    def seg_count(self, where: np.ndarray) -> np.ndarray:
        return np.bincount(self.g[where], minlength=self.nq).astype(np.int64)

    def seg_cumsum(self, values: np.ndarray) -> np.ndarray:
        """Running total within each topic (integers only: exact)."""
        c = np.cumsum(values)
        before = np.concatenate(([0], c))[self.starts[:-1]]
        return c - np.repeat(before, self.n)

    def seg_cumsum_exact(self, values: np.ndarray) -> np.ndarray:
        """Running float total within each topic, added left to right as C loops add.

        A global cumsum minus the topic's base would round differently, so rows are
        laid out as a zero-padded (topics x depth) matrix, bucketed by depth so the
        padding stays under 2x, and accumulated along each row.
        """
        return seg_cumsum_exact(values, self.starts)

    def at_depth(self, prefix: np.ndarray, k: np.ndarray | int, empty: float = 0.0) -> np.ndarray:
        """A per-row running total read at depth ``min(k, n)`` of each topic.

        ``k`` is a scalar or one value per topic; depth 0 gives ``empty``.
        """
        depth = np.minimum(np.broadcast_to(np.asarray(k, dtype=np.int64), (self.nq,)), self.n)
        out = np.full(self.nq, empty, dtype=prefix.dtype if prefix.dtype.kind == "f" else np.float64)
        ok = depth >= 1
        if len(prefix):
            out[ok] = prefix[self.starts[:-1][ok] + depth[ok] - 1]
        return out

    def rel_at(self, k: np.ndarray | int) -> np.ndarray:
        """Relevant documents in the top ``k`` of each topic."""
        return self.count_at(self.rel_rows, k)

    def seg_first(self, where: np.ndarray, values: np.ndarray, default: float = 0.0) -> np.ndarray:
        """Value at the first row of each topic where ``where`` holds."""
        out = np.full(self.nq, default, dtype=np.float64)
        idx = np.flatnonzero(where)
        if len(idx):
            gi = self.g[idx]
            firsts = np.concatenate(([True], gi[1:] != gi[:-1]))
            out[gi[firsts]] = values[idx[firsts]]
        return out


# --------------------------------------------------------------------------


def _split_codes(arrays: tuple[pa.Array, ...]) -> tuple[list[np.ndarray], pa.Array]:
    """Dictionary-encode the concatenation of ``arrays``; one code array per input.

    Codes are in first-seen order and the dictionary lists each id once, where it first
    occurs (Arrow's ``dictionary_encode``). Many ids (the docnos of a qrels file and a run)
    are encoded by :func:`_sort_split_codes`, which gives the same codes and dictionary in
    about half the time and memory."""
    import pyarrow as pa

    fast = _sort_split_codes(arrays)
    if fast is not None:
        return fast
    # one hash table over the arrays as chunks: no joined copy of their bytes (every chunk
    # of the result carries the final dictionary; empty inputs have no chunk)
    enc = pa.chunked_array([a.cast(pa.large_binary()) for a in arrays], type=pa.large_binary()).dictionary_encode()
    chunks = enc.chunks
    if not chunks:
        return [np.zeros(0, dtype=np.int64) for _ in arrays], binary_array([])
    idx = np.concatenate([to_numpy(c.indices) for c in chunks]).astype(np.int64, copy=False)
    bounds = np.cumsum([len(a) for a in arrays])[:-1]
    return list(np.split(idx, bounds)), chunks[-1].dictionary


# _sort_split_codes: ids (all inputs together) below this many are left to Arrow's hash table
# (numpy's per-call overhead would dominate), as are ids longer than _SORT_ENCODE_MAX_BYTES (each
# 8 bytes is one more pass) and hash collisions between more than _SORT_ENCODE_MAX_SPLIT ids.
_SORT_ENCODE_MIN = 1 << 15
_SORT_ENCODE_MAX_BYTES = 64
_SORT_ENCODE_MAX_SPLIT = 1 << 12
_HASH_KEEP = 0xFFFF_FFFF_FFFF_FFFF  # bits of each id's hash kept (tests keep few, to force collisions)
_MIX1, _MIX2 = 0xFF51_AFD7_ED55_8CCD, 0xC4CE_B9FE_1A85_EC53  # MurmurHash3's 64-bit finaliser
_LOW_BYTES = [(1 << (8 * m)) - 1 for m in range(9)]  # the low m bytes of a 64-bit word


class _IdWords:
    """The ids of one binary Arrow array as little-endian 64-bit words (word ``j`` holds bytes
    ``8j .. 8j+7`` of each id, zero past its end), read from the array's own buffers."""

    def __init__(self, arr: pa.Array) -> None:
        import pyarrow as pa

        self.arr = arr = arr if pa.types.is_large_binary(arr.type) else arr.cast(pa.large_binary())
        self.n = n = len(arr)
        bufs = arr.buffers()
        self.offsets = np.frombuffer(bufs[1], dtype=np.int64, count=arr.offset + n + 1)[arr.offset :]
        data = bufs[2]
        raw = np.frombuffer(data, dtype=np.uint8) if data is not None and data.size else np.zeros(0, np.uint8)
        if len(raw) < 8:
            raw = np.concatenate((raw, np.zeros(8, dtype=np.uint8)))
        self.raw = raw  # (keeps the bytes alive under the view below)
        # the 8 bytes from each byte position on: unaligned reads, no copy
        self.at = np.ndarray((len(raw) - 7,), dtype=np.uint64, buffer=raw, strides=(1,))
        self.masks = np.array(_LOW_BYTES, dtype=np.uint64)

    def longest(self) -> int:
        return int(np.diff(self.offsets).max())

    def lengths(self, lo: int, hi: int) -> np.ndarray:
        return self.offsets[lo + 1 : hi + 1] - self.offsets[lo:hi]

    def word(self, lo: int, hi: int, j: int) -> np.ndarray:
        """Bytes ``8j .. 8j+7`` of ids ``lo .. hi-1`` as one word each (a fresh array)."""
        p = self.offsets[lo:hi] + 8 * j
        last = len(self.at) - 1
        # offsets never decrease: only the last ids can start a word within 8 bytes of the end,
        # and those are read from 8 bytes before it, then shifted
        tail = int(np.searchsorted(p, last, side="right"))
        w = self.at[p if tail == len(p) else np.minimum(p, last)]
        w[tail:] >>= (np.minimum(p[tail:] - last, 7) * 8).astype(np.uint64)
        cut = self.offsets[lo + 1 : hi + 1] - p
        np.clip(cut, 0, 8, out=cut)
        w &= self.masks[cut]
        return w

    def has_nul(self) -> bool:
        """Whether the ids hold a NUL byte (then zero padding does not tell ``a`` from ``a\\0``).
        Only their own bytes are read: a slice of a large column shares its whole buffer."""
        used = self.raw[int(self.offsets[0]) : int(self.offsets[-1])]
        return bool(len(used)) and int(used.min()) == 0


def _mix(h: np.ndarray) -> np.ndarray:
    """MurmurHash3's finaliser, in place: a bijection of 64-bit words that spreads every bit."""
    s = np.uint64(33)
    h ^= h >> s
    h *= np.uint64(_MIX1)
    h ^= h >> s
    h *= np.uint64(_MIX2)
    h ^= h >> s
    return h


_SORT_ENCODE_BLOCK = 1 << 16  # ids hashed at a time (bounds the temporaries)
_SORT_ENCODE_TRIM = 1 << 18  # ids from which the encoding's freed memory is given back at once


def _sort_split_codes(
    arrays: tuple[pa.Array, ...], with_dictionary: bool = True
) -> tuple[list[np.ndarray], Any] | None:
    """:func:`_split_codes` by sorting hashes: the same codes and dictionary (first-seen order),
    or None when Arrow's hash table should do it (few or long ids, nulls, other types).
    ``with_dictionary=False``: the number of distinct ids instead of their dictionary, and codes
    numbered in no particular order (equal codes still mean equal ids; the docno codes of a
    table whose measures never read a docno: no copy of every distinct id, no renumbering).

    Each id's bytes are read as 64-bit words straight from the Arrow buffers and hashed; the
    high bits of the hash and the id's position are packed into one integer and sorted (a
    numpy sort of integers: several times faster than hashing strings one by one, and it
    holds no hash table). Ids of equal hash are then compared word by word, so the codes
    are exact: ids whose hashes collide are told apart by their bytes."""
    import pyarrow as pa

    sizes = [len(a) for a in arrays]
    n = sum(sizes)
    if n < _SORT_ENCODE_MIN:
        return None
    kinds = (pa.types.is_binary, pa.types.is_large_binary, pa.types.is_string, pa.types.is_large_string)
    if any(a.null_count or not any(k(a.type) for k in kinds) for a in arrays):
        return None
    pieces = [c for a in arrays for c in (a.chunks if isinstance(a, pa.ChunkedArray) else [a]) if len(c)]
    ids = [_IdWords(c) for c in pieces]
    longest = max(w.longest() for w in ids)
    if longest > _SORT_ENCODE_MAX_BYTES:
        return None
    # what tells equal ids apart: their words, and their lengths when an id may end in NUL
    # bytes (which the zero padding cannot tell from no byte); kept, as reading them again in
    # sorted order (random reads of the buffers) takes longer than the rest of the encoding
    nwords = max(1, -(-longest // 8))
    cols = [np.empty(n, dtype=np.uint64) for _ in range(nwords + any(w.has_nul() for w in ids))]
    bits = max(n - 1, 1).bit_length()  # the low bits of each packed key hold the id's position
    keep = np.uint64(_HASH_KEEP & ~((1 << bits) - 1))
    key = np.empty(n, dtype=np.uint64)
    at = 0
    for w in ids:
        for lo in range(0, w.n, _SORT_ENCODE_BLOCK):
            hi = min(lo + _SORT_ENCODE_BLOCK, w.n)
            part = slice(at + lo, at + hi)
            h = w.lengths(lo, hi).astype(np.uint64)
            if len(cols) > nwords:
                cols[nwords][part] = h
            for j in range(nwords):
                cols[j][part] = wj = w.word(lo, hi, j)
                h ^= wj
                _mix(h)
            h &= keep
            h |= np.arange(part.start, part.stop, dtype=np.uint64)
            key[part] = h
        at += w.n
    key.sort()
    same_hash = np.empty(n - 1, dtype=bool)
    for lo in range(0, n - 1, _SORT_ENCODE_BLOCK):  # (in blocks: no temporary of every key)
        hi = min(lo + _SORT_ENCODE_BLOCK, n - 1)
        same_hash[lo:hi] = ((key[lo + 1 : hi + 1] ^ key[lo:hi]) >> np.uint64(bits)) == 0
    key &= np.uint64((1 << bits) - 1)
    pos = key.view(np.int64)  # ids by hash, then position
    del key
    # neighbours of equal hash must be the same id
    differ = np.zeros(n - 1, dtype=bool)
    while cols:
        sorted_col = cols.pop()[pos]
        differ |= sorted_col[1:] != sorted_col[:-1]
        del sorted_col
    new = np.empty(n, dtype=bool)  # the first entry of each group of equal ids, in sorted order
    new[0] = True
    np.logical_not(same_hash, out=new[1:])
    clash = same_hash & differ
    del same_hash, differ
    first_at = None  # each sorted entry's group as its first entry's index, once groups interleave
    if clash.any():
        first_at = np.where(new, np.arange(n, dtype=np.int64), 0)
        np.maximum.accumulate(first_at, out=first_at)
        if not _split_clashes(clash, new, first_at, pos, ids):
            return None
    if not with_dictionary:
        # codes without a dictionary need no particular order: the groups' order by hash
        group = np.cumsum(new, dtype=np.int64)
        group -= 1
        codes = np.empty(n, dtype=np.int64)
        codes[pos] = group if first_at is None else group[first_at]
        count = int(group[-1]) + 1
        del group, first_at, pos, new
        _trim(n)
        return list(np.split(codes, np.cumsum(sizes)[:-1])), count
    # number the groups by where their id first occurs (Arrow's order): the first entry of a
    # group holds its smallest position (equal hashes sort by position)
    heads = pos[new]
    first_seen = np.zeros(n, dtype=bool)
    first_seen[heads] = True
    rank = np.cumsum(first_seen, dtype=np.int32)
    rank -= 1
    codes = np.empty(n, dtype=np.int64)
    if first_at is None:  # every group is a run of sorted entries
        codes[pos] = np.repeat(rank[heads], np.diff(np.flatnonzero(new), append=n))
    else:
        codes[pos] = rank[pos[first_at]]
    del rank, first_at, heads, pos
    dictionary = _take_ids(ids, np.flatnonzero(first_seen))
    del first_seen
    _trim(n)
    return list(np.split(codes, np.cumsum(sizes)[:-1])), dictionary


def _trim(n: int) -> None:
    """After encoding ``n`` ids: give the freed temporaries back to the system (the C library's
    malloc keeps them on its heap, where they would add to the peak of the rest of the table
    and the measures: 8 MiB less at the peak on a Robust04-size run, for a few page faults)."""
    if n >= _SORT_ENCODE_TRIM:
        import pyarrow as pa

        pa.default_memory_pool().release_unused()


def _split_clashes(
    clash: np.ndarray, new: np.ndarray, first_at: np.ndarray, pos: np.ndarray, ids: list[_IdWords]
) -> bool:
    """Tell apart the ids of the hash groups in which neighbours differ (``clash[i]``: sorted
    entries i and i+1 have equal hashes and different ids), by their bytes: update ``new`` and
    ``first_at`` in place. False when there are too many such ids (the caller lets Arrow do it)."""
    group_of = first_at[1:][clash]  # groups with a clash, as their first sorted index
    members = np.flatnonzero(np.isin(first_at, group_of))
    if len(members) > _SORT_ENCODE_MAX_SPLIT:
        return False
    bounds = np.cumsum([w.n for w in ids])
    seen: dict[tuple[int, bytes], int] = {}
    for i in members.tolist():  # (only ids of colliding hashes: a handful, if any)
        item = int(pos[i])
        k = int(np.searchsorted(bounds, item, side="right"))
        local = item - (int(bounds[k - 1]) if k else 0)
        first = seen.setdefault((int(first_at[i]), ids[k].arr[local].as_py()), i)
        new[i] = first == i
        first_at[i] = first
    return True


def _take_ids(ids: list[_IdWords], items: np.ndarray) -> pa.Array:
    """The ids at ``items`` (ascending positions in the pieces one after another), as one
    large_binary array."""
    import pyarrow as pa

    parts = []
    at = 0
    for w in ids:
        lo, hi = np.searchsorted(items, [at, at + w.n])
        if hi > lo:
            parts.append(w.arr.take(from_numpy(items[lo:hi] - at)))
        at += w.n
    return parts[0] if len(parts) == 1 else pa.concat_arrays(parts)


def runs_of(arr: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """(lengths, values) of the runs of equal consecutive values of a non-empty array."""
    import pyarrow.compute as pc

    n = len(arr)
    change = to_numpy(pc.not_equal(arr.slice(1), arr.slice(0, n - 1)))
    starts = np.concatenate(([0], np.flatnonzero(change) + 1))
    return np.diff(starts, append=n), arr.take(from_numpy(starts))


def _blocks(arr: pa.Array) -> tuple[np.ndarray, pa.Array] | None:
    """:func:`runs_of` when ``arr`` is made of few runs of equal values (a run file
    grouped by topic); None when it is not worth it."""
    if len(arr) < 2:
        return None
    lengths, values = runs_of(arr)
    return (lengths, values) if len(lengths) * 8 <= len(arr) else None


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values of a numeric array, ascending: ``np.unique(values)`` for arrays
    without NaN, by a sort. (numpy's ``unique`` without ``return_*`` imports ``numpy.ma``
    on its first call, 15-50 ms of a small run's start-up.)"""
    flat = np.sort(np.asarray(values).ravel())
    if len(flat) < 2:
        return flat
    keep = np.empty(len(flat), dtype=bool)
    keep[0] = True
    np.not_equal(flat[1:], flat[:-1], out=keep[1:])
    return flat[keep]


def count_distinct(ids: pa.Array) -> int:
    """How many distinct values a binary id column holds (the topics of a qrels file),
    through its runs of equal values when it is grouped."""
    import pyarrow.compute as pc

    blocks = _blocks(ids)
    values = blocks[1] if blocks is not None else ids
    return int(pc.count_distinct(values).as_py()) if len(values) else 0


def factorize_sorted(
    *arrays: pa.Array, blocks: dict[int, tuple[np.ndarray, pa.Array]] | None = None
) -> tuple[list[np.ndarray], pa.Array]:
    """Codes for the values of several binary arrays, numbered in bytewise order.

    An array made of long runs of equal values (a run's topic column) is encoded
    through its runs' values only, then expanded. ``blocks`` gives the runs
    (lengths, values) of some arrays by position, when the caller has them.
    """
    import pyarrow.compute as pc

    known = blocks or {}
    runs = [known[i] if i in known else _blocks(a) for i, a in enumerate(arrays)]
    short = tuple(b[1] if b is not None else a for a, b in zip(arrays, runs))
    codes, dictionary = _split_codes(short)
    order = to_numpy(pc.sort_indices(dictionary))
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    codes = [np.repeat(rank[c], b[0]) if b is not None else rank[c] for c, b in zip(codes, runs)]
    return codes, dictionary.take(from_numpy(order))


def _encode(*arrays: pa.Array) -> tuple[list[np.ndarray], pa.Array]:
    """Hash-factorise several binary arrays together (codes in first-seen order)."""
    return _split_codes(arrays)


def check_qrels_duplicates(qrels: Qrels, order: np.ndarray | None = None, ks: np.ndarray | None = None) -> None:
    """Refuse a (topic, docno) judged twice, naming the second line. ``order`` and ``ks``, if
    the caller has them: the stable ascending order of one integer key per judgement, equal
    exactly when (topic, docno) is, and the keys in that order."""
    if order is None or ks is None:
        (qc,), _ = _encode(qrels.qid)
        (dc,), ddict = _encode(qrels.docno)
        order, ks = _stable_sort(qc * max(len(ddict), 1) + dc)
    dup = np.flatnonzero(ks[1:] == ks[:-1])
    if len(dup):
        second_lines = qrels.lineno[order[dup + 1]]
        j = int(np.argmin(second_lines))
        first, second = order[dup[j]], order[dup[j] + 1]
        raise DuplicateDocError(
            qrels.name,
            f"document '{decode_id(qrels.docno[int(second)].as_py())}' is judged twice for topic "
            f"'{decode_id(qrels.qid[int(second)].as_py())}' (first at line {int(qrels.lineno[first])})",
            int(qrels.lineno[second]),
        )


def refuse_repeated_documents(run: Run, key: np.ndarray) -> None:
    """Refuse a document listed twice for a topic of ``run`` (equal ``key``: one integer per row,
    equal exactly when (topic, docno) is), naming the earliest line that repeats one, as the
    evaluation does (:func:`_check_run_duplicates`), for the commands that rank a run without
    a table (``similarity``, ``pool``)."""
    found = _first_repeat(key, run.lineno)
    if found is not None:
        first, i = found
        doc, topic = decode_id(run.docno[i].as_py()), decode_id(run.qid[i].as_py())
        raise retrieved_twice_error(run.name, doc, topic, int(run.lineno[first]), int(run.lineno[i]))


def retrieved_twice_error(run_name: str, doc: str, topic: str, first: int, line: int) -> DuplicateDocError:
    """The error for a document listed twice for a topic: at ``line``, first at ``first``."""
    return DuplicateDocError(
        run_name, f"document '{doc}' is retrieved twice for topic '{topic}' (first at line {first})", line
    )


def _first_repeat(key: np.ndarray, line: np.ndarray) -> tuple[int, int] | None:
    """(the row of the first occurrence, the row of the repeat) for the earliest line that
    repeats a ``key`` (equal keys: the same (topic, docno)), or None when no key repeats."""
    korder = np.lexsort((line, key))  # equal keys in line order
    ks = key[korder]
    dup = np.flatnonzero(ks[1:] == ks[:-1])
    if not len(dup):
        return None
    a, b = korder[dup], korder[dup + 1]
    j = int(np.argmin(line[b]))
    return int(a[j]), int(b[j])


def _stable_sort(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(order, key[order])`` for the stable ascending ``order`` of integer keys: non-negative
    keys small enough to leave room for a position are packed with it into one integer and
    sorted (numpy's integer sort, a few times faster than a stable argsort)."""
    n = len(key)
    bits = max(n - 1, 1).bit_length()
    if n and int(key.min()) >= 0 and int(key.max()) < 1 << (63 - bits):
        packed = np.asarray(key, dtype=np.int64) << bits
        packed |= np.arange(n, dtype=np.int64)
        packed.sort()
        order = packed & ((1 << bits) - 1)
        packed >>= bits
        return order, packed
    order = np.argsort(key, kind="stable")
    return order, key[order]


TIE_RULES = ("docno", "input", "rank")


def rank_order(
    topic: np.ndarray,
    score: np.ndarray,
    docno: pa.Array,
    ties: str = "docno",
    lineno: np.ndarray | None = None,
    rank: np.ndarray | None = None,
) -> np.ndarray:
    """Row order by topic, then score descending, then docno descending (bytewise), or
    with ``ties="input"`` the order of the rows in the run file (``lineno`` ascending);
    with ``ties="rank"`` by topic, then the run's ``rank`` ascending, then score
    descending, then docno descending."""
    base, pos, src = rank_permutation(topic, score, docno, ties, lineno, rank)
    order = np.arange(len(topic), dtype=np.int64) if base is None else base
    order[pos] = src
    return order


def rank_permutation(
    topic: np.ndarray,
    score: np.ndarray,
    docno: pa.Array,
    ties: str = "docno",
    lineno: np.ndarray | None = None,
    rank: np.ndarray | None = None,
    *,
    numeric_ids: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """:func:`rank_order` as ``(base, pos, src)``: the order is ``base`` (None: the rows
    as they are) with ``order[pos] = src``, the rows of tied (topic, score) groups
    reordered by docno. Callers can then skip gathers when the rows are in order.

    TREC runs are usually grouped by topic and sorted by score already; that is
    checked (not assumed) in one pass and then only the topic blocks are
    reordered, if they need it. Otherwise a two-key sort is done. Either way only
    rows whose (topic, score) is tied are ordered by docno, with Arrow's bytewise sort
    (``ties="docno"``), or by ``lineno``, their line in the run file (``ties="input"``;
    without ``lineno``, their position in the arrays).

    ``ties="rank"`` orders by the run's ``rank`` column instead of the score (ascending:
    rank 1 first, as the file says), and rows of equal (topic, rank) by score descending,
    then docno descending: a run whose rank column is constant ranks as trec_eval does.

    ``numeric_ids``: the value of every docno, when each is a canonical decimal
    (:func:`_numeric_ids`): with ``ties="docno"`` tied rows are then ordered by those
    values' text order (:func:`decimal_text_order`), without reading the docnos' bytes.
    """
    if ties == "rank":
        if rank is None:
            raise ValueError("ties='rank' needs the run's rank column")  # pragma: no cover (build_table checks)
        # ranks are at most 2**53 in magnitude (the readers check), so -rank is exact
        return _permutation(topic, -np.asarray(rank, dtype=np.float64), docno, ties, lineno, score)
    return _permutation(topic, score, docno, ties, lineno, None, numeric_ids)


def _permutation(
    topic: np.ndarray,
    score: np.ndarray,
    docno: pa.Array,
    ties: str,
    lineno: np.ndarray | None,
    then_score: np.ndarray | None,
    numeric_ids: np.ndarray | None = None,
) -> tuple[np.ndarray | None, np.ndarray, np.ndarray]:
    """:func:`rank_permutation` by (topic, ``score`` descending); tied rows by ``then_score``
    descending (when given), then docno descending, or by input order."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(topic)
    none = np.zeros(0, dtype=np.int64)
    if n == 0:
        return None, none, none
    same = topic[1:] == topic[:-1]
    block_start = np.concatenate(([0], np.flatnonzero(~same) + 1))
    block_topic = topic[block_start]
    descending = not (same & (score[1:] > score[:-1])).any()  # within each block
    base: np.ndarray | None
    if descending and (block_topic[1:] > block_topic[:-1]).all():
        base = None  # topics in order, scores descending within each
        t_o, s_o = topic, score
    else:
        if descending and len(distinct(block_topic)) == len(block_topic):
            lengths = np.diff(np.concatenate((block_start, [n])))
            by_topic = np.argsort(block_topic, kind="stable")
            first = block_start[by_topic]
            lens = lengths[by_topic]
            base = np.repeat(first - np.concatenate(([0], np.cumsum(lens)[:-1])), lens) + np.arange(n)
        else:
            base = _blocks_by_score(topic, score, block_start, block_topic)
            if base is None:
                base = _by_topic_then_score(topic, score)
        t_o, s_o = topic[base], score[base]
    tie = (t_o[1:] == t_o[:-1]) & (s_o[1:] == s_o[:-1])
    if not tie.any():
        return base, none, none
    in_tie = np.zeros(n, dtype=bool)
    in_tie[1:] |= tie
    in_tie[:-1] |= tie
    pos = np.flatnonzero(in_tie)
    # a tie group starts at a tied row that does not tie with the row before it
    tied_before = np.zeros(len(pos), dtype=bool)
    later = pos > 0
    tied_before[later] = tie[pos[later] - 1]
    gid = np.cumsum(~tied_before)
    rows = pos if base is None else base[pos]
    if ties == "input":
        line = rows if lineno is None else lineno[rows]
        return base, pos, rows[np.lexsort((line, gid))]
    if ties not in ("docno", "rank"):
        raise ValueError(f"unknown tie rule {ties!r}")  # pragma: no cover (the CLI offers TIE_RULES)
    if numeric_ids is not None and then_score is None:
        # docno descending as integers, packed with the group into one key sorted by numpy:
        # half the time of Arrow's sort on the bytes, and no take of them (28k tied rows of a
        # streamed chunk of MS MARCO passage ids: 0.9 against 1.6 + 0.35 ms)
        key = decimal_text_order(numeric_ids[rows])
        span = int(key.max()) + 1
        if (int(gid[-1]) + 1) * span < 1 << (63 - max(len(rows) - 1, 1).bit_length()):
            order, _ = _stable_sort(gid * span + (span - 1 - key))
            return base, pos, rows[order]
    cols = {"g": from_numpy(gid), "d": docno.take(from_numpy(rows))}
    keys = [("g", "ascending"), ("d", "descending")]
    if then_score is not None:
        cols["s"] = from_numpy(np.ascontiguousarray(then_score[rows], dtype=np.float64))
        keys.insert(1, ("s", "descending"))
    perm = to_numpy(pc.sort_indices(pa.table(cols), sort_keys=keys))
    return base, pos, rows[perm]


def _blocks_by_score(
    topic: np.ndarray, score: np.ndarray, block_start: np.ndarray, block_topic: np.ndarray
) -> np.ndarray | None:
    """Rows by topic, then score descending, for rows grouped by topic (each topic one block):
    the blocks, in topic order, as the rows of a (topics x longest block) matrix padded after
    each block, each row sorted on its own (one numpy call; about half the time of Arrow's
    two-key sort on a DL-sized run). Rows of equal topic and score may come in any order:
    :func:`_permutation` then orders every such group by its tie rule. None when a topic
    spans two blocks or the blocks are too unequal for the matrix to stay small."""
    n = len(topic)
    lengths = np.diff(np.concatenate((block_start, [n])))
    width = int(lengths.max())
    if len(block_start) * width > 2 * n + 1024 or len(distinct(block_topic)) != len(block_topic):
        return None
    by_topic = np.argsort(block_topic, kind="stable")
    first, lens = block_start[by_topic], lengths[by_topic]
    at = np.concatenate(([0], np.cumsum(lens)[:-1]))  # each block's offset, blocks in topic order
    k = np.arange(n, dtype=np.int64)
    mat = np.full(len(block_start) * width, np.inf)  # pads last (a score of -inf may sort among them)
    mat[k + np.repeat(np.arange(len(first), dtype=np.int64) * width - at, lens)] = -score[
        k + np.repeat(first - at, lens)
    ]
    order = np.argsort(mat.reshape(len(first), width), axis=1)
    return (order + first[:, None])[order < lens[:, None]]


def _by_topic_then_score(topic: np.ndarray, score: np.ndarray) -> np.ndarray:
    """``np.lexsort((-score, topic))``: rows by topic, then score descending, equal rows in
    their order; Arrow's stable multi-key sort does it 2-3x faster (it sorts each topic's
    rows by score, not the whole column twice)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    keys = pa.table({"t": from_numpy(topic), "s": from_numpy(np.ascontiguousarray(score, dtype=np.float64))})
    return to_numpy(pc.sort_indices(keys, sort_keys=[("t", "ascending"), ("s", "descending")])).astype(np.int64)


def _permuted(a: np.ndarray, base: np.ndarray | None, pos: np.ndarray, src: np.ndarray) -> np.ndarray:
    """``a`` in the order ``(base, pos, src)`` of :func:`rank_permutation` (``a`` itself
    when that order keeps every row where it is)."""
    if base is None and not len(pos):
        return a
    out = a[base] if base is not None else a.copy()
    out[pos] = a[src]
    return out


def _numeric_ids(arr: pa.Array) -> np.ndarray | None:
    """The integer value of every docno when each one is a canonical decimal (no sign,
    no leading zero, at most 15 digits): then value and text determine each other, so
    the value can stand for the text. None otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(arr) == 0:
        return None
    arr = arr.cast(pa.large_binary())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64, count=arr.offset + len(arr) + 1)[arr.offset :]
    lengths = np.diff(offsets)
    if lengths.min() < 1 or lengths.max() > MAX_DIGITS:
        return None
    # every byte a digit, checked first on the bytes (a sixth of the parse's time): the cast
    # then cannot fail, and a failing one costs far more than a whole one (word-like docnos:
    # 100 ms for a streamed chunk's 202k, against 2 ms to parse as many numbers)
    text = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[offsets[0] : offsets[-1]]
    if not np.less(np.subtract(text, ord("0"), dtype=np.uint8), 10).all():
        return None
    # a view, not a cast: no UTF-8 validation. To uint64, not int64: Arrow's unsigned parse
    # takes half the time of its signed one (1.8 against 3.7 ms for those 202k ids)
    ids = to_numpy(pc.cast(arr.view(pa.large_string()), pa.uint64())).view(np.int64)  # (below 10**15)
    # no leading zero: a value with fewer digits than its text ("07" is not "7")
    if not (ids >= LEAST_OF_DIGITS[lengths]).all():
        return None
    return ids


_POWERS_OF_10 = np.array([10**d for d in range(16)], dtype=np.int64)


def decimal_text_order(values: np.ndarray) -> np.ndarray:
    """Non-negative integer keys, below 16 * 10**w for values of at most w digits, that sort
    as the canonical decimal texts of ``values`` (0 <= value < 10**15) sort bytewise: the
    digits padded with zeros on the right to w, then the number of digits (a text that is a
    prefix of another sorts first). Equal keys mean equal values; keys of one call compare."""
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    digits = np.searchsorted(_POWERS_OF_10[1:], values, side="right") + 1
    width = int(digits.max())
    return values * _POWERS_OF_10[width - digits] * 16 + digits


def _doc_codes(
    qrels_docno: pa.Array, run_docno: pa.Array, want_dict: bool, ntopics: int
) -> tuple[np.ndarray, np.ndarray, int, Any, bool]:
    """Codes for qrels and run docnos in one code space: (qrels codes, run codes,
    code bound, dictionary or None, whether the run codes are the docnos' values). Equal codes
    mean equal docnos; a qrels code of -1 matches no run docno.

    Numeric docnos (MS MARCO passage ids) use their value, which avoids hashing
    millions of strings; otherwise, or when a measure needs the dictionary of
    docnos (diversity measures), the docnos are dictionary-encoded.
    """
    if not want_dict:
        ids = _numeric_ids(run_docno)
        # (topic, id) keys must fit an int64: ids below 10**15 and few enough topics
        if ids is not None and (int(ids.max()) + 1) * max(ntopics, 1) < 2**62:
            bound = int(ids.max()) + 1
            qids = once(qrels_docno, "numeric_ids", lambda: _numeric_ids(qrels_docno))  # (the same for every run)
            if qids is None:  # some qrels docno is not canonical: look each up
                import pyarrow as pa
                import pyarrow.compute as pc

                q = qrels_docno.cast(pa.large_binary())
                ok = pc.match_substring_regex(q.cast(pa.large_string(), safe=False), r"^(0|[1-9][0-9]{0,14})$")
                ok = valid_mask(ok) & to_numpy(ok, nulls_ok=True)
                qids = np.full(len(q), -1, dtype=np.int64)
                if ok.any():
                    qids[ok] = to_numpy(pc.cast(q.filter(from_numpy(ok)).cast(pa.large_string()), pa.uint64()))
            qids = np.where((qids >= 0) & (qids < bound), qids, -1)
            return qids, ids, bound, None, True
    if not want_dict:
        fast = _sort_split_codes((qrels_docno, run_docno), with_dictionary=False)
        if fast is not None:
            (q_dcode, r_dcode), count = fast
            return q_dcode, r_dcode, max(count, 1), None, False
    (q_dcode, r_dcode), doc_dict = _encode(qrels_docno, run_docno)
    return q_dcode, r_dcode, max(len(doc_dict), 1), doc_dict if want_dict else None, False


def build_table(
    qrels: Qrels,
    run: Run,
    opts: EvalOptions,
    *,
    doc_dict: bool = True,
    run_blocks: tuple[np.ndarray, pa.Array] | None = None,
    run_order: bool = False,
) -> EvalTable:
    """Join, rank and label; check duplicates and missing topics.

    ``doc_dict``: keep each row's docno code and the dictionary of docnos on the
    table (``doc``, ``doc_dict``) for measures that look documents up (diversity).
    ``run_blocks``: the run's topic column as runs of equal ids (lengths, ids),
    when the caller has found them already.
    ``run_order``: number the topics in the order they first appear in the run
    (topics without results last, bytewise) instead of bytewise, for callers that
    put topics in order themselves (streamed batches): a run that lists its topics
    in another order then needs no reordering of its rows.

    The steps, each a function below: :func:`_evaluated_topics` (which topics, in which
    order), :func:`_topics_with_results` (``-c``, ``--compat 9.0.8``, a missing topic),
    :func:`_run_rows` (the kept run rows, plus ``-c``'s placeholders),
    :func:`_judgements` (the judgements of those topics, checked, keyed for lookup),
    :func:`_rank_and_label` (trec_eval's order, ``-M``, duplicates, labels) and
    :func:`_drop_unjudged` (``-J``).
    """
    topics = _evaluated_topics(qrels, run, opts, run_blocks, run_order)
    _topics_with_results(topics, qrels, run, opts)
    topics.r_qcode, topics.r_lengths = _NO_CODES, None  # (read: each code array let go once used, less at the peak)
    rows = _run_rows(run, topics, opts)
    q_dcode, r_dcode, ndoc, docnos, rows.numeric = _doc_codes(qrels.docno, rows.docno, doc_dict, topics.nq)
    rows.dcode = r_dcode
    judged = _judgements(qrels, topics, q_dcode, ndoc)
    topics.q_qcode = _NO_CODES
    del q_dcode
    label, starts = _rank_and_label(rows, judged, topics, opts, ndoc, docnos, run.name)
    if opts.judged_only:
        label, starts = _drop_unjudged(rows, label, starts, topics.nq)
    assert topics.missing is not None
    return EvalTable(
        qids=topics.qids,
        g=rows.g,
        label=label,
        starts=starts,
        qg=judged.qg,
        qrel=judged.qrel,
        missing=topics.missing,
        opts=opts,
        runid=run.runid,
        doc=rows.dcode if docnos is not None else None,
        doc_dict=docnos,
        max_label=int(qrels.rel.max()) if len(qrels.rel) else 0,
    )


_NO_CODES = np.zeros(0, dtype=np.int64)


class _Topics:
    """The evaluated topics of one table (:func:`build_table`'s first steps)."""

    qids: list[str]  # in the table's order
    q_qcode: np.ndarray  # qid code of each judgement
    r_qcode: np.ndarray  # qid code of each run row, or of each of its runs of rows (r_lengths)
    r_lengths: np.ndarray | None  # the rows in each run of equal qids, when r_qcode is by run
    codes: np.ndarray  # qid code of each evaluated topic
    topic_of_code: np.ndarray  # qid code -> topic index (-1: not evaluated)
    r_topic: np.ndarray | None  # topic index of each run row (-1: not evaluated)
    keep_run: np.ndarray | None  # run rows of evaluated topics
    missing: np.ndarray | None  # bool per topic: no results (a -c placeholder ranking)

    def __init__(
        self,
        qids: list[str],
        q_qcode: np.ndarray,
        r_qcode: np.ndarray,
        codes: np.ndarray,
        topic_of_code: np.ndarray,
        r_topic: np.ndarray | None = None,
        keep_run: np.ndarray | None = None,
        missing: np.ndarray | None = None,
    ) -> None:
        self.qids = qids
        self.q_qcode = q_qcode
        self.r_qcode = r_qcode
        self.r_lengths = None
        self.codes = codes
        self.topic_of_code = topic_of_code
        self.r_topic = r_topic
        self.keep_run = keep_run
        self.missing = missing

    @property
    def nq(self) -> int:
        return len(self.qids)

    def number(self, codes: np.ndarray) -> None:
        """Evaluate the topics ``codes`` (qid codes), in this order."""
        self.codes = codes
        self.topic_of_code[:] = -1
        self.topic_of_code[codes] = np.arange(len(codes))


def _evaluated_topics(
    qrels: Qrels,
    run: Run,
    opts: EvalOptions,
    run_blocks: tuple[np.ndarray, pa.Array] | None,
    run_order: bool,
) -> _Topics:
    """The judged topics (trec_eval 10.0 iterates over the qrels), or ``-D``'s one, numbered
    in bytewise order (factorised once: bytewise order == code order), or with
    ``run_order`` in the order they first appear in the run. With ``run_blocks`` the run's
    qids are coded by run of rows, not row by row (a streamed chunk: 200 runs, 200k rows)."""
    known = {}
    q_blocks = once(qrels.qid, "blocks", lambda: _blocks(qrels.qid))  # (the same for every run)
    if q_blocks is not None:
        known[0] = q_blocks
    r_lengths = None if run_blocks is None else run_blocks[0]
    r_ids = run.qid if run_blocks is None else run_blocks[1]
    (q_qcode, r_qcode), qid_dict = factorize_sorted(qrels.qid, r_ids, blocks=known)
    nqid = len(qid_dict)
    judged_topics = only_query_topics(
        np.flatnonzero(np.bincount(q_qcode, minlength=nqid)), qid_dict, opts, "the qrels"
    )  # ascending, as np.unique
    if run_order and len(judged_topics) > 1 and len(r_qcode):
        if r_lengths is None:
            block_codes = r_qcode[np.concatenate(([0], np.flatnonzero(r_qcode[1:] != r_qcode[:-1]) + 1))]
        else:
            block_codes = r_qcode  # (runs of rows: a topic's first run comes first either way)
        codes, first = np.unique(block_codes, return_index=True)  # each topic's first block
        first_block = np.full(nqid, len(block_codes), dtype=np.int64)
        first_block[codes] = first
        judged_topics = judged_topics[np.argsort(first_block[judged_topics], kind="stable")]
    topics = _Topics(
        qids=_texts(qid_dict.take(from_numpy(judged_topics))),
        q_qcode=q_qcode,
        r_qcode=r_qcode,
        codes=judged_topics,
        topic_of_code=np.full(nqid, -1, dtype=np.int64),
    )
    topics.r_lengths = r_lengths
    topics.number(judged_topics)
    return topics


def _texts(ids: pa.Array) -> list[str]:
    """Binary ids as text (:func:`decode_id`): Arrow's UTF-8 cast when every id is valid UTF-8
    (one call, not a scalar per id: 0.2 s over 100k topics), else id by id."""
    import pyarrow as pa

    try:
        return ids.cast(pa.large_string()).to_pylist()
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return [decode_id(b) for b in ids.to_pylist()]


def _topics_with_results(topics: _Topics, qrels: Qrels, run: Run, opts: EvalOptions) -> None:
    """Which evaluated topics have results: those without get ``-c``'s placeholder ranking,
    are not evaluated at all under ``--compat 9.0.8`` (which walks the run's topics), and
    are an error otherwise."""
    nq = topics.nq
    # the topic of each row, or of each run of rows (every run has rows: the same topics)
    r_topic = topics.topic_of_code[topics.r_qcode]
    keep_run = r_topic >= 0
    has_results = np.zeros(nq, dtype=bool)
    has_results[:] = np.bincount(r_topic[keep_run] if not keep_run.all() else r_topic, minlength=nq)[:nq] > 0
    missing = ~has_results
    if opts.compat == "9.0.8" and missing.any():
        # 9.0.8 walks the run's topics: a judged topic without results is not
        # evaluated at all (with -c it still counts in the averages, as 0)
        topics.qids = [q for q, h in zip(topics.qids, has_results.tolist()) if h]
        topics.number(topics.codes[has_results])
        r_topic = topics.topic_of_code[topics.r_qcode]
        missing = np.zeros(topics.nq, dtype=bool)
        if topics.nq == 0:
            raise NoQueriesError(f"{run.name}: the run shares no topic with {qrels.name}: nothing to evaluate")
    # with or without -c, never a clean 0 (an empty run is -c's placeholders for the parts' engines)
    if nq and missing.all() and opts.only_query is None and len(run.qid):
        raise NoQueriesError(f"{run.name}: the run shares no topic with {qrels.name}: nothing to evaluate")
    if missing.any() and not opts.complete:
        raise missing_topic_error(run.name, topics.qids[int(np.argmax(missing))], qrels.name)
    if topics.r_lengths is not None:
        r_topic = np.repeat(r_topic, topics.r_lengths)
    topics.r_topic, topics.keep_run, topics.missing = r_topic, r_topic >= 0, missing


class _Rows:
    """The run rows of the evaluated topics, as read (then ranked by :func:`_rank_and_label`)."""

    g: np.ndarray  # topic index
    score: np.ndarray
    line: np.ndarray  # line number in the run file (0: a placeholder)
    rank: np.ndarray | None  # the run's rank column (--ties rank only)
    docno: pa.Array
    dcode: np.ndarray  # docno code (none until encoded)
    numeric: bool

    def __init__(
        self, g: np.ndarray, score: np.ndarray, line: np.ndarray, rank: np.ndarray | None, docno: pa.Array
    ) -> None:
        self.g = g
        self.score = score
        self.line = line
        self.rank = rank
        self.docno = docno
        self.dcode = _NO_CODES
        self.numeric = False  # dcode holds each docno's value (each a canonical decimal)


def _run_rows(run: Run, topics: _Topics, opts: EvalOptions) -> _Rows:
    """The run rows of evaluated topics (no copy when every row is kept), ``--compat
    9.0.8``'s float scores, and ``-c``'s one placeholder row per topic without results."""
    import pyarrow as pa

    assert topics.r_topic is not None and topics.keep_run is not None and topics.missing is not None
    keep_run = topics.keep_run
    all_kept = bool(keep_run.all())
    rows = _Rows(
        g=topics.r_topic if all_kept else topics.r_topic[keep_run],
        score=run.score if all_kept else run.score[keep_run],
        line=run.lineno if all_kept else run.lineno[keep_run],
        rank=None,
        docno=run.docno if all_kept else run.docno.filter(from_numpy(keep_run)),
    )
    if opts.ties == "rank":
        if run.rank is None and len(run.score):
            raise UsageError(f"--ties rank: the run {run.name} was read without its rank column")
        ranks = run.rank if run.rank is not None else np.zeros(0, dtype=np.int64)
        rows.rank = ranks if all_kept else ranks[keep_run]
    if opts.compat == "9.0.8":
        rows.score = rows.score.astype(np.float32).astype(np.float64)  # 9.0.8 stores scores as float
    if topics.missing.any():
        mt = np.flatnonzero(topics.missing)
        rows.g = np.concatenate((rows.g, mt))
        rows.score = np.concatenate((rows.score, np.ones(len(mt))))
        rows.line = np.concatenate((rows.line, np.zeros(len(mt), dtype=np.int64)))
        if rows.rank is not None:
            rows.rank = np.concatenate((rows.rank, np.ones(len(mt), dtype=np.int64)))
        placeholders = binary_array([PLACEHOLDER_DOCNO] * len(mt))
        rows.docno = pa.concat_arrays([rows.docno.cast(pa.large_binary()), placeholders])
    return rows


class _Judged:
    """The judgements of the evaluated topics, and those a run row can match, sorted by key."""

    def __init__(self, qg: np.ndarray, qrel: np.ndarray, key_sorted: np.ndarray, rel_sorted: np.ndarray) -> None:
        self.qg = qg  # topic index of each judgement
        self.qrel = qrel  # its relevance value
        self.key_sorted = key_sorted  # (topic, docno code) keys of matchable judgements, ascending
        self.rel_sorted = rel_sorted  # their relevance values


def _judgements(qrels: Qrels, topics: _Topics, q_dcode: np.ndarray, ndoc: int) -> _Judged:
    """The evaluated topics' judgements: checked for duplicates, and keyed by (topic,
    docno code) for the label lookup."""
    q_topic = topics.topic_of_code[topics.q_qcode]
    qmask = q_topic >= 0
    every = bool(qmask.all())  # (then no copies: the codes as they are, the qrels' labels)
    qg = q_topic if every else q_topic[qmask]
    del q_topic
    qrel = qrels.rel if every else qrels.rel[qmask]
    judgements = qrels if every else qrels.take(qmask)
    if (q_dcode >= 0).all():  # every qrels docno has its own code (-1: not canonical, look it up)
        # every judgement can match a run row: one sort checks duplicates and keys the lookup
        qkey = qg * ndoc + (q_dcode if every else q_dcode[qmask])
        # the (topic, docno code) order, as 0 <= qd < ndoc: the same for every run with these codes
        qorder, qkey_sorted = same_sort(qrels, "judgement_order", qkey, _stable_sort)
        del qkey
        check_qrels_duplicates(judgements, qorder, qkey_sorted)
        return _Judged(qg=qg, qrel=qrel, key_sorted=qkey_sorted, rel_sorted=qrel[qorder])
    check_qrels_duplicates(judgements)
    # judgements that can match a run row, keyed by (topic, docno code)
    matchable = q_dcode[qmask] >= 0
    qorder, qkey_sorted = _stable_sort(qg[matchable] * ndoc + q_dcode[qmask][matchable])
    return _Judged(qg=qg, qrel=qrel, key_sorted=qkey_sorted, rel_sorted=qrel[matchable][qorder])


def _rank_and_label(
    rows: _Rows, judged: _Judged, topics: _Topics, opts: EvalOptions, ndoc: int, docnos: Any, run_name: str
) -> tuple[np.ndarray, np.ndarray]:
    """Put ``rows`` in rank order (``g`` and, with ``-M`` or a docno dictionary, ``dcode``
    in place), keep ``-M``'s top rows, refuse a document retrieved twice and label each row
    with its qrels value. Returns (label, row offset of each topic).

    Duplicates and labels do not depend on the row order, so without ``-M`` they are found
    on the rows as read and only the labels (and the docno codes, if kept) are put in rank
    order; ``-M`` keeps the top rows first."""
    nq = topics.nq
    rg, r_dcode, rline = rows.g, rows.dcode, rows.line
    counts = np.bincount(rg, minlength=nq)
    starts = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(counts, out=starts[1:])
    numeric = rows.dcode if rows.numeric else None
    base, pos, src = rank_permutation(rg, rows.score, rows.docno, opts.ties, rline, rows.rank, numeric_ids=numeric)
    rg_ranked = rg[base] if base is not None else rg  # (ties stay within their topic)
    if opts.max_docs is not None:
        rg = rg_ranked
        r_dcode = _permuted(r_dcode, base, pos, src)
        rline = _permuted(rline, base, pos, src)
        keep = top_rows(rg, starts, opts.max_docs)
        rg, r_dcode, rline = rg[keep], r_dcode[keep], rline[keep]
        starts[1:] = np.cumsum(np.bincount(rg, minlength=nq))

    read_dcode, read_docno = rows.dcode, rows.docno  # (the rows as read: the same order)

    def retrieved_twice(code: int, topic: int, first: int, line: int) -> DuplicateDocError:
        # without a dictionary of docnos, the docno of a row that has the code
        at = code if docnos is not None else int(np.argmax(read_dcode == code))
        doc = decode_id((docnos if docnos is not None else read_docno)[at].as_py())
        return retrieved_twice_error(run_name, doc, topics.qids[topic], first, line)

    rkey = rg * ndoc + r_dcode
    # rows in topic order (ranked, or read so): each topic's rows are starts[g]:starts[g + 1]
    grouped = opts.max_docs is not None or base is None or not (rg[1:] < rg[:-1]).any()
    _check_run_duplicates(rkey, r_dcode, rg, rline, ndoc, retrieved_twice, starts if grouped else None)
    label = _lookup_labels(rkey, r_dcode, ndoc, judged.key_sorted, judged.rel_sorted)
    if opts.max_docs is None:
        rg = rg_ranked
        label = _permuted(label, base, pos, src)
        if docnos is not None:
            r_dcode = _permuted(r_dcode, base, pos, src)
    rows.g, rows.dcode, rows.line = rg, r_dcode, rline
    return label, starts


def _drop_unjudged(rows: _Rows, label: np.ndarray, starts: np.ndarray, nq: int) -> tuple[np.ndarray, np.ndarray]:
    """``-J``: drop the rows of unjudged documents (label -1 or -2) and close the gaps."""
    keep = label >= 0
    rows.g, rows.dcode = rows.g[keep], rows.dcode[keep]
    starts[1:] = np.cumsum(np.bincount(rows.g, minlength=nq))
    return label[keep], starts


def _check_run_duplicates(
    rkey: np.ndarray,
    r_dcode: np.ndarray,
    rg: np.ndarray,
    rline: np.ndarray,
    ndoc: int,
    retrieved_twice: Callable[[int, int, int, int], DuplicateDocError],
    starts: np.ndarray | None = None,
) -> None:
    """Refuse a document retrieved twice for a topic (equal ``rkey``: topic ``rg``,
    docno code ``r_dcode``), naming the earliest line that repeats one: the error is
    ``retrieved_twice(docno code, topic, its first line, that line)``. ``starts``: each
    topic's first row, when the rows are in topic order (see :func:`_blocks_may_repeat`)."""
    # only docnos that occur more than once in the whole run can be duplicated, so
    # with dense codes only their rows are sorted (usually a small fraction); sparse
    # numeric ids (a streamed chunk of MS MARCO passage ids) sort every key. Rows in topic
    # order are first sorted topic by topic in 32-bit codes (a third of the time of the dense
    # check on a Robust04-size run, where a third of the docnos occur more than once)
    if starts is not None and not _blocks_may_repeat(r_dcode, rg, ndoc, starts):
        return
    if ndoc <= 8 * len(rkey) + 1024:
        cand = np.sort(rkey[np.bincount(r_dcode, minlength=ndoc)[r_dcode] > 1])
        if not (len(cand) and (cand[1:] == cand[:-1]).any()):
            return
    elif starts is None and not _blocks_may_repeat(r_dcode, rg, ndoc):
        return
    else:
        cand = np.sort(rkey)  # (numpy's hash-based unique is far slower here)
        if not (cand[1:] == cand[:-1]).any():
            return
    found = _first_repeat(rkey, rline)
    if found is not None:
        first, second = found
        raise retrieved_twice(int(r_dcode[first]), int(rg[first]), int(rline[first]), int(rline[second]))


def _blocks_may_repeat(code: np.ndarray, topic: np.ndarray, ndoc: int, starts: np.ndarray | None = None) -> bool:
    """Whether some topic may list a ``code`` twice (False: it certainly does not), for rows
    grouped by topic: each topic's block is sorted on its own, as a row of a (topics x
    longest block) matrix padded with distinct negative values, which is several times
    faster than sorting every (topic, code) key of a sparse code space (a streamed chunk of
    MS MARCO passage ids). ``starts``: the row offset of each topic's block (len topics +
    1), when the caller knows the rows are in topic order; blocks of one length (a run cut
    at a fixed depth) are then the matrix as they lie. Rows not grouped by topic, or blocks
    too unequal for the matrix to stay small, or more than a streamed chunk's rows, say True
    (the caller's exact check then decides)."""
    n = len(code)
    if n < 2:
        return False
    if n > 1 << 21 or ndoc >= 1 << 31:
        return True  # the matrix is for a chunk's rows, in 32-bit codes
    if starts is None:
        first = np.flatnonzero(np.concatenate(([True], topic[1:] != topic[:-1])))
        lengths = np.diff(first, append=n)
        if np.count_nonzero(np.bincount(topic)) != len(first):
            return True  # a topic in two blocks
    else:
        first, lengths = starts[:-1], np.diff(starts)
    width = int(lengths.max())
    if len(first) * width > 2 * n + 1024:
        return True  # blocks too unequal
    if len(first) * width == n:  # every block as long: the rows are the matrix
        rows = code.astype(np.int32).reshape(len(first), width)
    else:
        size = len(first) * width
        mat = np.arange(-1, -1 - size, -1, dtype=np.int64).astype(np.int32)  # distinct pads, below every code
        mat[np.arange(n, dtype=np.int64) + np.repeat(np.arange(len(first)) * width - first, lengths)] = code
        rows = mat.reshape(len(first), width)
    rows.sort(axis=1)
    return bool((rows[:, 1:] == rows[:, :-1]).any())


def _lookup_labels(
    rkey: np.ndarray, r_dcode: np.ndarray, ndoc: int, qkey_sorted: np.ndarray, qrel_sorted: np.ndarray
) -> np.ndarray:
    """Each row's qrels value by its (topic, docno) key: -1 when not judged, -2 when
    judged with a negative value."""
    if len(qkey_sorted) and ndoc <= len(rkey) + len(qkey_sorted) + 1024:
        # dense codes (a docno dictionary's): a table by code
        at = _find_by_owner(rkey, r_dcode, ndoc, qkey_sorted)
        label = qrel_sorted[at]
        label[label < 0] = -2
        label[at < 0] = -1
        return label
    label = np.full(len(rkey), -1, dtype=np.int64)
    if not len(qkey_sorted):
        return label
    # rows whose docno may be judged for some topic (a flag per low 16 bits of the
    # docno code: a cache-sized table; its false hits the exact lookup drops), then
    # the exact (topic, docno) lookup for those, or for all rows when most pass
    judged_doc = np.zeros(1 << 16, dtype=bool)
    judged_doc[(qkey_sorted % ndoc) & 0xFFFF] = True
    rows: np.ndarray | None = np.flatnonzero(judged_doc[r_dcode & 0xFFFF])
    if len(rows) * 2 > len(rkey):  # type: ignore[arg-type]
        rows = None
    if rows is None:
        # most rows' docnos are judged somewhere (a pooled run): a binary search of the sorted
        # keys, which a run grouped by topic reads in order (half the time of a hash lookup)
        at = np.searchsorted(qkey_sorted, rkey)
        at[at == len(qkey_sorted)] = 0
        found = qkey_sorted[at] == rkey
        values = qrel_sorted[at[found]]
        label[found] = np.where(values < 0, -2, values)
        return label
    # the same binary search for those rows only (a hash lookup would first build a hash
    # table of every judgement's key, for each run: 2-3x the time on a DL-sized run)
    keys = rkey[rows]
    at = np.searchsorted(qkey_sorted, keys)
    at[at == len(qkey_sorted)] = 0
    found = qkey_sorted[at] == keys
    if found.any():
        values = qrel_sorted[at[found]]
        label[rows[found]] = np.where(values < 0, -2, values)
    return label


def _find_by_owner(rkey: np.ndarray, r_dcode: np.ndarray, ndoc: int, qkey_sorted: np.ndarray) -> np.ndarray:
    """The judgement of each row's (topic, docno) key, for dense docno codes: its index in
    ``qkey_sorted``, -1 when it is not judged.

    Most docnos are judged for one topic only, so each docno code gets one of its judgements,
    its owner, in a table indexed by code: a row whose key is its docno's owner's is found
    with two reads of memory. Only rows of docnos judged for several topics that their owner
    does not match are looked up by a binary search, among the other judgements (a subsequence
    of the sorted keys, so sorted too)."""
    small = np.int32 if max(ndoc, len(qkey_sorted)) < 1 << 31 else np.int64  # (half the memory)
    qdoc = np.empty(len(qkey_sorted), dtype=small)
    np.remainder(qkey_sorted, ndoc, out=qdoc, casting="unsafe")
    owner = np.full(ndoc, -1, dtype=small)
    owner[qdoc] = np.arange(len(qdoc), dtype=small)  # one judgement of each docno, whichever
    others = np.flatnonzero(owner[qdoc] != np.arange(len(qdoc), dtype=small))  # judgements that own none
    at = owner[r_dcode].astype(np.int64)
    del owner
    missed = qkey_sorted[at] != rkey  # (at -1 reads the last key: a docno judged nowhere)
    at[missed] = -1
    if len(others):
        shared = np.zeros(ndoc, dtype=bool)
        shared[qdoc[others]] = True
        missed &= shared[r_dcode]
        rows = np.flatnonzero(missed)
        if len(rows):
            other_keys = qkey_sorted[others]
            keys = rkey[rows]
            i = np.searchsorted(other_keys, keys)
            i[i == len(other_keys)] = 0
            hit = other_keys[i] == keys
            at[rows[hit]] = others[i[hit]]
    return at


def seg_suffix_max(values: np.ndarray, groups: np.ndarray, ngroups: int) -> np.ndarray:
    """Exact max of ``values[i:]`` within each group (groups contiguous, ascending).

    Values are replaced by their rank among all values and offset per group so
    that, scanning from the end, no group can see another's maximum; the scan is
    integer arithmetic, so the result is exactly one of the input values.
    """
    values = np.asarray(values, dtype=np.float64)
    if len(values) == 0:
        return values
    uniq, rank = np.unique(values, return_inverse=True)
    offset = (ngroups - 1 - np.asarray(groups, dtype=np.int64)) * len(uniq)
    key = (rank.astype(np.int64) + offset)[::-1]
    best = np.maximum.accumulate(key)[::-1] - offset
    return uniq[best]


def seg_accumulate(values: np.ndarray, starts: np.ndarray, ufunc: np.ufunc = np.add) -> np.ndarray:
    """Running ``ufunc`` (add: sums, multiply: products) within each segment of a flat
    array grouped by ``starts``, applied left to right exactly as a C loop would: the
    first row of a segment is its value as-is, row i is ``ufunc(row i-1, value i)``.

    A global cumsum minus each segment's base would round differently, so rows are
    laid out as a (segments x depth) matrix padded with the identity, bucketed by
    depth so the padding stays under 2x, and accumulated along each row (numpy's
    accumulate is sequential, never pairwise).

    Sparse inputs skip the rows that cannot change the running value: ``x + (+0.0)``
    is ``x`` for every ``x`` but ``-0.0``, and ``x * 1.0`` is ``x`` for every ``x``.
    Only the other rows are accumulated, and their running value is carried down
    to the skipped rows (rows above a segment's first such row hold the identity,
    as the sequential loop gives). A running sum can only be ``-0.0`` when every
    value so far is ``-0.0``, so the sum takes that path only when no value is ``-0.0``.
    """
    values = np.asarray(values, dtype=np.float64)
    starts = np.asarray(starts, dtype=np.int64)
    if ufunc is np.add or ufunc is np.multiply:
        ident = 0.0 if ufunc is np.add else 1.0
        if ufunc is np.add:
            keep = values.view(np.int64) != 0  # every value but +0.0 (bit pattern 0)
        else:
            keep = values != 1.0  # NaN is kept
        kept = np.flatnonzero(keep)
        if len(kept) * 4 <= len(values) and not (
            ufunc is np.add and (np.signbit(values[kept]) & (values[kept] == 0.0)).any()
        ):
            running = _seg_accumulate_dense(values[kept], np.searchsorted(kept, starts), ufunc)
            return _seg_fill(keep, kept, running, starts, ident)
    return _seg_accumulate_dense(values, starts, ufunc)


def _seg_fill(keep: np.ndarray, kept: np.ndarray, running: np.ndarray, starts: np.ndarray, ident: float) -> np.ndarray:
    """Carry the running value at the ``kept`` rows down to the rows below them in
    their segment; rows above a segment's first kept row get ``ident``."""
    n_rows = len(keep)
    out_dtype = np.float64
    if n_rows == 0:
        return np.zeros(0, dtype=out_dtype)
    seg_first = starts[:-1][starts[1:] > starts[:-1]]
    marker = keep.copy()
    marker[seg_first] = True
    bp = np.flatnonzero(marker)  # kept rows and segment starts, ascending
    val = np.full(len(bp), ident, dtype=out_dtype)
    val[keep[bp]] = running
    return np.repeat(val, np.diff(bp, append=n_rows))


def _seg_accumulate_dense(values: np.ndarray, starts: np.ndarray, ufunc: np.ufunc) -> np.ndarray:
    """:func:`seg_accumulate` over every row (see there)."""
    out = np.empty_like(values)
    n = np.diff(starts)
    nonempty = np.flatnonzero(n > 0)
    if len(nonempty) == 0:
        return out
    lens = n[nonempty]
    L = int(lens[0])
    if (lens == L).all():  # equal lengths: the rows are the segments back to back
        return ufunc.accumulate(values.reshape(-1, L), axis=1).reshape(-1)
    bucket = np.floor(np.log2(lens)).astype(np.int64)
    for b in distinct(bucket):  # at most log2(longest segment) buckets
        seg = nonempty[bucket == b]
        lens = n[seg]
        rows = np.repeat(np.arange(len(seg)), lens)
        cols = np.arange(len(rows)) - np.repeat(np.cumsum(lens) - lens, lens)
        idx = np.repeat(starts[seg], lens) + cols
        mat = np.full((len(seg), int(lens.max())), ufunc.identity, dtype=np.float64)
        mat[rows, cols] = values[idx]
        ufunc.accumulate(mat, axis=1, out=mat)
        out[idx] = mat[rows, cols]
    return out


def seg_cumsum_exact(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Exact per-segment running sums (see :func:`seg_accumulate`)."""
    return seg_accumulate(values, starts, np.add)


def seg_read_sparse(
    rows: np.ndarray,
    running: np.ndarray,
    starts: np.ndarray,
    seg: np.ndarray,
    depth: np.ndarray,
    ident: float = 0.0,
    empty: float = 0.0,
) -> np.ndarray:
    """Read a running value known only at some rows: for each (segment ``seg``, ``depth``),
    ``running`` at the last of ``rows`` (ascending) within the segment's first ``depth``
    rows; ``ident`` when no listed row is there, ``empty`` when ``depth`` < 1.

    With ``running`` from :func:`seg_accumulate` over the listed rows' values, this is the
    full column's running value whenever every other row holds the identity and that
    does not change the running value (see :func:`seg_accumulate`).
    """
    seg = np.asarray(seg, dtype=np.int64)
    depth = np.asarray(depth, dtype=np.int64)
    out = np.full(len(seg), empty, dtype=np.float64)
    ok = depth >= 1
    if not ok.any():
        return out
    top = starts[seg[ok]]
    j = np.searchsorted(rows, top + depth[ok], side="left") - 1  # last listed row < top + depth
    hit = j >= np.searchsorted(rows, top, side="left")
    val = np.full(len(top), ident, dtype=np.float64)
    val[hit] = running[j[hit]]
    out[ok] = val
    return out
