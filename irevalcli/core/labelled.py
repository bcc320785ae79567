"""The table of a labelled run (an impression log: each row carries its own label), built
without joining the run to its judgements.

:func:`irevalcli.core.table.build_table` matches every run row with the qrels by (topic,
docno): for a labelled table the qrels are the run's own rows, so the label of each row is
known already and the join (hashing both sides, sorting the keys, looking every row up) is
wasted work. :func:`build_labelled_table` gives the same :class:`EvalTable`, field for
field, from the rows and their labels, and leaves to ``build_table`` what it does not cover
(``-M``, ``-D``, ``--ties rank``, documents judged or retrieved twice: their errors and
their tables stay exactly ``build_table``'s).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING

import numpy as np

from ..io.arrow import decode_id, from_numpy, to_numpy
from ..io.dataset import decimal_ids
from .table import EvalOptions, EvalTable, factorize_sorted, runs_of

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.dataset import LogNumbers
    from ..io.trec import Run


# A log of at least this many rows checks its documents for duplicates in a second thread,
# while its rows are ranked.
BACKGROUND_ROWS = 1 << 20
# Scores are ranked by one sort of packed integers when there are at most this many distinct
# ones (and topic, score rank and row fit in 63 bits); otherwise Arrow sorts by three keys.
PACKED_SCORES = 1 << 16
BLOCK = 1 << 20  # rows worked on at a time where a full-length temporary would be needed


def build_labelled_table(run: Run, labels: np.ndarray, has: np.ndarray, opts: EvalOptions) -> EvalTable | None:
    """The table ``build_table(qrels, run, opts, doc_dict=False)`` builds when ``qrels`` are
    the rows of ``run`` that have a label (``has``; ``labels``: each row's label), or None
    when that case is left to ``build_table``.

    A log read as numbers (:class:`irevalcli.io.dataset.LogRun`) hands its arrays over and
    is ranked from them (no id text); each array is let go as soon as it is used. When
    every row has a label of at least 0 the judgements are the ranked rows themselves
    (``qg is g``, ``qrel is label``: the same multiset of judgements, in ranked order)."""
    take = getattr(run, "take_numbers", None)
    numbers = take() if take is not None else None  # (let go here when not used)
    if opts.max_docs is not None or opts.only_query is not None or opts.ties == "rank" or not has.any():
        return None
    # topics: the judged ones, numbered in bytewise order (the qrels' qids are the run's)
    own = numbers is not None  # (then every array below is this call's, to overwrite)
    ndoc = 0  # distinct docnos (of a log read as numbers)
    ids = None  # the buffer of their values (its int32 halves: as many int64 as rows)
    if numbers is not None:
        ids = numbers.ids
        code, qid_dict, doc_rank, ndoc = _number_codes(numbers)
    else:
        code, qid_dict = _topic_codes(run.qid)
    nqid = len(qid_dict)
    every = bool(has.all())  # every row has a label (then every topic is judged)
    # (the codes are compact: with every row labelled, every one is a judged topic)
    topics = np.arange(nqid) if every else np.flatnonzero(np.bincount(code[has], minlength=nqid))
    keep: np.ndarray = np.ones(0, dtype=bool)  # (read only when not all_kept)
    if len(topics) == nqid:  # every topic judged (a log whose rows all have a label): codes are topics
        r_topic, all_kept = code, True
    else:
        topic_of_code = np.full(nqid, -1, dtype=np.int64)
        topic_of_code[topics] = np.arange(len(topics), dtype=np.int64)
        r_topic = topic_of_code[code]
        keep = r_topic >= 0
        all_kept = bool(keep.all())
    del code
    g = r_topic if all_kept else r_topic[keep]
    if numbers is not None:
        same = key = doc_rank if all_kept else doc_rank[keep]
        del doc_rank
        score = numbers.score if all_kept else numbers.score[keep]
        numbers = None
        # input order: the rows' places (their order keys rise with them)
        line = np.arange(len(g), dtype=np.int64) if opts.ties == "input" else None
    else:
        docno = run.docno if all_kept else run.docno.filter(_mask(keep))
        score = run.score if all_kept else run.score[keep]
        line = run.lineno if all_kept else run.lineno[keep]
        same, key = _docno_keys(docno)
    if opts.compat == "9.0.8":
        score = score.astype(np.float32).astype(np.float64)  # 9.0.8 stores scores as float
    nq = len(topics)
    plain = every and labels.min() >= 0
    # a log read as numbers, every row labelled (so every topic kept), ties by docno: each
    # row's topic, score, docno and label packed in one integer, sorted in place of the scores
    layout = _layout(nq, score, ndoc, labels) if own and plain and opts.ties == "docno" else None
    if layout is not None:
        assert ids is not None
        del same, line, r_topic
        ranked = _rank_packed(layout, g, score, key, labels, g if g.dtype == np.int64 else ids.view(np.int64))
        del score, key
        if ranked is None:
            return None  # build_table names the document judged or retrieved twice
        g, label = ranked
        return _table(qid_dict, topics, g, label, g, label, opts, run.runid)
    ids = None
    r_topic, g, key = _int64_codes(r_topic, g, key)  # (int32 codes of a log read as numbers)
    same = key if own else same
    with ThreadPoolExecutor(1) as pool:  # (the two sorts of a large log side by side, on two cores)
        twice = pool.submit(_has_duplicates, g, same) if len(g) >= BACKGROUND_ROWS else None
        if twice is None and _has_duplicates(g, same):
            return None  # build_table names the document judged or retrieved twice
        # ties: docno descending (bytewise), or input order (the line ascending)
        cols = [score]
        del score
        if opts.ties == "docno":
            order = _ranking(g, len(topics), cols, key)
        else:
            assert line is not None
            order = _ranking(g, len(topics), cols, -line)
        del key, same, line
        if twice is not None and twice.result():
            return None
    # each row's label as the join would find it: -1 not judged, -2 judged negative
    if plain:
        label = labels  # (not written to: reordered into a new array)
    else:
        label = np.where(has, np.where(labels < 0, -2, labels), -1)
    if not all_kept:
        label = label[keep]
    if plain:  # the judgements are the ranked rows: one copy of each column
        g = g[order]
        label = label[order].astype(np.int64, copy=False)
        del order
        qg, qrel = g, label
    else:
        if every:  # the judgements are the rows as they are (read only, as the table's are)
            qg, qrel = r_topic, labels.astype(np.int64, copy=False)
        else:
            judged_rows = has if all_kept else has & keep
            qg, qrel = r_topic[judged_rows], labels[judged_rows].astype(np.int64, copy=False)
        g = g[order]
        label = label[order].astype(np.int64, copy=False)
        del order
    del r_topic
    return _table(qid_dict, topics, g, label, qg, qrel, opts, run.runid)


def _number_codes(numbers: LogNumbers) -> tuple[np.ndarray, pa.Array, np.ndarray, int]:
    """A log's users and docnos (its :class:`irevalcli.io.dataset.LogNumbers`, taken):
    their ranks in bytewise order (equal for equal texts, compact), side by side on two
    cores, in place of their values; the user ids in that order, and the number of docnos."""
    import pyarrow as pa
    import pyarrow.compute as pc

    with ThreadPoolExecutor(1) as pool:
        docs = pool.submit(_value_ranks, numbers.doc)
        code, values = _value_ranks(numbers.user)
        doc_rank, doc_values = docs.result()
    qid_dict = pc.cast(from_numpy(values), pa.large_string()).cast(pa.large_binary())
    numbers.user = numbers.doc = np.zeros(0, dtype=np.int64)
    return code, qid_dict, doc_rank, len(doc_values)


def _int64_codes(r_topic: np.ndarray, g: np.ndarray, doc: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes as int64 (``g``: ``r_topic`` itself or its rows kept), for the general ranking."""
    wide = r_topic.astype(np.int64, copy=False)
    return wide, wide if g is r_topic else g.astype(np.int64, copy=False), doc.astype(np.int64, copy=False)


def _table(
    qid_dict: pa.Array,
    topics: np.ndarray,
    g: np.ndarray,
    label: np.ndarray,
    qg: np.ndarray,
    qrel: np.ndarray,
    opts: EvalOptions,
    runid: str,
) -> EvalTable:
    """The table of ranked rows (``g``: each one's topic, ascending; ``label``), the
    judgements ``qg``, ``qrel``; ``topics``: the codes of ``qid_dict`` evaluated."""
    nq = len(topics)
    if opts.judged_only:
        kept = label >= 0
        g, label = g[kept], label[kept]
    starts = np.searchsorted(g, np.arange(nq + 1, dtype=np.int64))  # (g ascending)
    return EvalTable(
        qids=_texts(qid_dict.take(from_numpy(topics))),
        g=g,
        label=label,
        starts=starts,
        qg=qg,
        qrel=qrel,
        missing=np.zeros(nq, dtype=bool),
        opts=opts,
        runid=runid,
        max_label=int(qrel.max()),
    )


@dataclass(frozen=True)
class _Layout:
    """How :func:`_rank_packed` packs a row in one int64: from the high bits, its topic,
    its score's rank (scores descending: ``desc``, the distinct ones), ``ntie - 1`` minus
    its tie key (docno rank: ties descending) and its label (``label_bits`` wide)."""

    desc: np.ndarray  # float64, descending, no -0.0
    ntie: int
    label_bits: int

    @property
    def tie_shift(self) -> int:
        return self.label_bits

    @property
    def score_shift(self) -> int:
        return self.label_bits + max(self.ntie - 1, 0).bit_length()

    @property
    def topic_shift(self) -> int:
        return self.score_shift + max(len(self.desc) - 1, 0).bit_length()


def _layout(nq: int, score: np.ndarray, ntie: int, labels: np.ndarray) -> _Layout | None:
    """The packing of :func:`_rank_packed` for ``nq`` topics, ``score``, tie keys below
    ``ntie`` and labels (all at least 0), or None when it does not fit in 63 bits (or there
    are more than PACKED_SCORES distinct scores)."""
    import pyarrow.compute as pc

    if not len(score) or score.dtype != np.float64 or not score.flags.c_contiguous or not score.flags.writeable:
        return None
    label_bits = int(labels.max()).bit_length()
    room = 63 - max(nq - 1, 0).bit_length() - max(ntie - 1, 0).bit_length() - label_bits
    if room < 0:
        return None
    most = min(PACKED_SCORES, 1 << room)
    if len(pc.unique(from_numpy(score[: 1 << 16]))) > most:
        return None
    n = len(score)
    halves = [score[: n // 2], score[n // 2 :]] if n >= BACKGROUND_ROWS else [score]
    with ThreadPoolExecutor(len(halves)) as pool:  # (two halves on two cores)
        values = np.concatenate(list(pool.map(lambda h: to_numpy(pc.unique(from_numpy(h))), halves)))
    if len(values) > 4 * most or np.isnan(values).any():
        return None
    desc = np.unique(values + 0.0)[::-1]  # (-0.0 is 0.0: equal scores tie)
    if len(desc) > most:
        return None
    return _Layout(np.ascontiguousarray(desc), ntie, label_bits)


def _rank_packed(
    layout: _Layout, g: np.ndarray, score: np.ndarray, tie: np.ndarray, labels: np.ndarray, out: np.ndarray
) -> tuple[np.ndarray, np.ndarray] | None:
    """The rows by topic, score descending, then ``tie`` descending: each row's topic
    (int64, written to ``out``, which may be ``g``'s or ``tie``'s memory) and label (int64,
    ``score``'s buffer), or None when a topic has two rows of the same ``tie`` (a document
    retrieved twice).

    One int64 per row (:class:`_Layout`) is written over its score, a block at a time, and
    the keys sorted: no permutation is gathered, and no full-length array is made. The
    topic and tie bits of each slice of whole topics are then sorted again (a slice that
    fits the cache) to find a document listed twice; ``score`` and ``out`` are overwritten."""
    import pyarrow.compute as pc

    n = len(g)
    ts, ss, gs = layout.tie_shift, layout.score_shift, layout.topic_shift
    value_set = from_numpy(layout.desc)
    key = score.view(np.int64)

    def pack(lo: int, hi: int) -> bool:
        srank = to_numpy(pc.index_in(from_numpy(score[lo:hi] + 0.0), value_set=value_set))
        k = np.left_shift(g[lo:hi], gs, dtype=np.int64)
        k |= np.left_shift(srank, ss, dtype=np.int64)
        t = np.subtract(layout.ntie - 1, tie[lo:hi], dtype=np.int64)
        k |= np.left_shift(t, ts, out=t)
        k |= labels[lo:hi]
        key[lo:hi] = k  # (the block's scores were read above)
        return True

    _each(list(pairwise([*range(0, n, BLOCK), n])), pack)
    key.sort()
    # slices of whole topics: a topic starts at the first key at least its topic's lowest key
    ends = [int(np.searchsorted(key, (int(key[r]) >> gs) << gs)) for r in range(BLOCK, n, BLOCK)]
    same_doc = ~((((1 << gs) - 1) ^ ((1 << ss) - 1)) | ((1 << ts) - 1))  # the topic and tie bits
    low = (1 << layout.label_bits) - 1

    def part(lo: int, hi: int) -> bool:
        k = key[lo:hi]
        both = np.bitwise_and(k, same_doc)
        both.sort()
        if bool((both[1:] == both[:-1]).any()):
            return False
        np.right_shift(k, gs, out=out[lo:hi])
        np.bitwise_and(k, low, out=k)
        return True

    return (out, key) if _each(list(pairwise(sorted({0, n, *ends}))), part) else None


def _each(pairs: list[tuple[int, int]], work: Callable[[int, int], bool]) -> bool:
    """Whether ``work(lo, hi)`` holds for every pair, two at a time on a large log."""
    if not pairs or pairs[-1][1] < BACKGROUND_ROWS or len(pairs) < 2:
        return all(work(lo, hi) for lo, hi in pairs)
    with ThreadPoolExecutor(2) as pool:
        return all(pool.map(lambda p: work(*p), pairs))


def _value_ranks(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ids given as the values whose decimal texts they are (``v``, overwritten): each one's
    rank among the distinct ones in their texts' bytewise order, and those values in that order."""
    lo, hi = int(v.min()), int(v.max())
    if hi - lo < max(len(v) // 2, 1 << 20):  # a table over the range (see _topic_codes)
        if not v.flags.writeable:  # (a view of an Arrow buffer)
            v = v.copy()
        # (a block at a time: numpy indexes with int64, a full-length copy of int32 values)
        present = np.zeros(hi - lo + 1, dtype=bool)
        for a in range(0, len(v), BLOCK):
            part = v[a : a + BLOCK]
            part -= lo
            present[part] = True
        values = np.flatnonzero(present)
        del present
        values += lo
        values = values[_text_order(values)]
        rank = np.zeros(hi - lo + 1, dtype=v.dtype)
        rank[values - lo] = np.arange(len(values), dtype=v.dtype)
        for a in range(0, len(v), BLOCK):  # (in place: each value read before its slot is written)
            part = v[a : a + BLOCK]
            np.take(rank, part, out=part, mode="clip")
        return v, values
    values, code = np.unique(v, return_inverse=True)
    order = _text_order(values)
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order), dtype=np.int64)
    return rank[code.reshape(-1)], values[order]


def _text_order(values: np.ndarray) -> np.ndarray:
    """The order of distinct int64 values (ascending) by their decimal texts, bytewise: by
    a key of their digits when all are canonical decimals (0 to 10**15 - 1), else by Arrow
    sorting the texts ('-' is before every digit; '-12' < '-5' < '0' < '10' < '9')."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(values) or (int(values[0]) >= 0 and int(values[-1]) < 10**15):
        return np.argsort(_decimal_keys(values, _digits(values)), kind="stable")
    return to_numpy(pc.sort_indices(pc.cast(from_numpy(values), pa.large_string()))).astype(np.int64, copy=False)


def _topic_codes(qid: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """``factorize_sorted(qid)``: codes in bytewise order, and the sorted ids. Canonical
    decimal ids over a narrow range are looked up in a table over that range; otherwise a
    log in logging order (users interleaved) is hashed row by row at once, without first
    looking for runs of equal ids, which only pay off when rows come grouped by user."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dec = decimal_ids(qid)
    if dec is not None and int(dec[0].max()) - int(dec[0].min()) < max(len(qid) // 2, 1 << 20):
        # numeric user ids over a range not much wider than the log: a table over the range
        # instead of hashing every row's text (a hash table of 500k users misses the cache)
        code, values = _value_ranks(dec[0])
        return code, pc.cast(from_numpy(values), pa.large_string()).cast(pa.large_binary())
    head = qid.slice(0, min(len(qid), 1 << 16))
    if len(head) > 1 and len(runs_of(head)[0]) * 8 > len(head):
        enc = qid.dictionary_encode()
        order = to_numpy(pc.sort_indices(enc.dictionary))
        rank = np.empty(len(order), dtype=np.int64)
        rank[order] = np.arange(len(order), dtype=np.int64)
        return rank[to_numpy(enc.indices)], enc.dictionary.take(from_numpy(order))
    (code,), ids = factorize_sorted(qid)
    return code, ids


def _mask(keep: np.ndarray) -> pa.Array:
    return from_numpy(keep)


def _texts(ids: pa.Array) -> list[str]:
    """``[decode_id(b) for b in ids]``, in one conversion when every id is valid UTF-8."""
    import pyarrow as pa

    try:
        return ids.cast(pa.large_string()).to_pylist()  # (the cast checks the UTF-8)
    except (pa.ArrowInvalid, UnicodeDecodeError):
        return [decode_id(b) for b in ids.to_pylist()]


def _docno_keys(docno: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Two integer keys per docno: ``same`` (equal for equal texts, and compact: from 0 to
    about the number of distinct docnos or of their values) and ``key`` (in the texts'
    bytewise order, equal only for equal texts).

    When every docno is a canonical decimal (no sign, no leading zero, at most 15 digits)
    both come from its value: ``same`` is the value, and ``key`` the digits left-aligned
    on 15 places then the length, which orders as the text does ('10' < '9', '1' < '10').
    Otherwise both are the rank of the text among the distinct docnos, sorted bytewise."""
    import pyarrow.compute as pc

    dec = _decimals(docno)
    if dec is not None:
        v, key = dec
        return v - int(v.min()), key
    enc = docno.dictionary_encode()
    rank = np.empty(len(enc.dictionary), dtype=np.int64)
    rank[to_numpy(pc.sort_indices(enc.dictionary))] = np.arange(len(rank), dtype=np.int64)
    code = rank[to_numpy(enc.indices)]
    return code, code


def _decimals(ids: pa.Array) -> tuple[np.ndarray, np.ndarray] | None:
    """Each id's value and bytewise key (see :func:`_docno_keys`) when every id is a
    canonical decimal (no sign, no leading zero, at most 15 digits), else None."""
    got = decimal_ids(ids)
    return None if got is None else (got[0], _decimal_keys(*got))


def _digits(values: np.ndarray) -> np.ndarray:
    """The number of decimal digits of non-negative values below 10**15."""
    return np.searchsorted(10 ** np.arange(1, 16, dtype=np.int64), values, side="right") + 1


def _decimal_keys(values: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """:func:`_decimals`'s bytewise key of canonical decimal values."""
    key = (10 ** np.arange(16, dtype=np.int64))[15 - digits] * values
    key <<= 4
    key += digits
    return key


def _has_duplicates(g: np.ndarray, same: np.ndarray) -> bool:
    """Whether some topic lists a document twice (``same``: equal for equal docnos)."""
    if len(g) < 2:
        return False
    width = int(same.max()) + 1
    if (int(g.max()) + 1) * width >= 1 << 63:  # docno values too far apart to pack with the topic
        same = np.unique(same, return_inverse=True)[1].reshape(-1)
        width = int(same.max()) + 1
    key = g * width  # in place from here: a few full-length arrays fewer on a 50M-row log
    key += same
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _ranking(g: np.ndarray, nq: int, cols: list[np.ndarray], tie: np.ndarray) -> np.ndarray:
    """The rows by topic, score descending, then ``tie`` descending (distinct within a
    topic): trec_eval's ranking, as :func:`irevalcli.core.table.rank_permutation` gives it.
    ``cols``: ``[score]``, emptied (the scores are let go once ranked).

    With few distinct scores, one sort of integers: per row its topic, the rank of its
    score among the distinct ones, and its position, packed into one int64; rows of a
    topic with the same score are then put in ``tie`` order. Otherwise Arrow sorts by the
    three keys."""
    import pyarrow as pa
    import pyarrow.compute as pc

    score = cols.pop()
    n = len(g)
    zero = score == 0
    s = score + 0.0 if np.signbit(score[zero]).any() else score  # -0.0 is 0.0 (equal scores tie)
    del zero, score
    bn, bg = max(n - 1, 1).bit_length(), max(nq - 1, 1).bit_length()
    values = None
    most = min(PACKED_SCORES, 1 << max(61 - bg - bn, 0))
    if len(pc.unique(from_numpy(s[: 1 << 16]))) <= most:
        values = pc.unique(from_numpy(s))
    if values is None or len(values) > most:
        keys = pa.record_batch([from_numpy(g), from_numpy(s), from_numpy(tie)], names=["g", "s", "t"])
        del s
        order = pc.sort_indices(keys, sort_keys=[("g", "ascending"), ("s", "descending"), ("t", "descending")])
        return to_numpy(order).astype(np.int64, copy=False)
    bs = max(len(values) - 1, 1).bit_length()
    desc = np.sort(to_numpy(values))[::-1]
    srank = to_numpy(pc.index_in(from_numpy(s), value_set=from_numpy(desc)))
    del s
    key = np.empty(n, dtype=np.int64)
    for lo in range(0, n, BLOCK):  # (a block at a time: no full-length temporaries)
        k = key[lo : lo + BLOCK]
        np.left_shift(g[lo : lo + BLOCK], bs + bn, out=k)
        k |= np.left_shift(srank[lo : lo + BLOCK], bn, dtype=np.int64)
        k |= np.arange(lo, lo + len(k), dtype=np.int64)
    del srank
    key.sort()
    # rows tied with the next one (same topic and score), then the rows alone (in place)
    tied = np.empty(max(n - 1, 0), dtype=bool)
    for lo in range(0, n - 1, BLOCK):
        hi = min(lo + BLOCK, n - 1)
        np.equal(key[lo + 1 : hi + 1] >> bn, key[lo:hi] >> bn, out=tied[lo:hi])
    rows = key
    rows &= (1 << bn) - 1
    del key
    if tied.any():
        in_tie = np.zeros(n, dtype=bool)
        in_tie[1:] = tied
        in_tie[:-1] |= tied
        pos = np.flatnonzero(in_tie)
        del in_tie
        first = np.ones(len(pos), dtype=bool)  # a tie group starts where a row does not tie with the one before
        later = pos > 0
        first[later] = ~tied[pos[later] - 1]
        del tied, later
        gid = np.cumsum(first)
        del first
        sub = rows[pos]
        keys = pa.record_batch([from_numpy(gid), from_numpy(tie[sub])], names=["g", "t"])
        del gid
        perm = to_numpy(pc.sort_indices(keys, sort_keys=[("g", "ascending"), ("t", "descending")]))
        del keys
        rows[pos] = sub[perm]
    return rows


def slice_cuts(table: EvalTable, rows: int) -> list[tuple[int, int]]:
    """Where a labelled log's table may be cut into tables of whole topics of about ``rows``
    rows each (:func:`table_slice`) that score as the whole does: each holds its topics'
    judgements (only when they are its ranked rows: ``qg is g``) and every label value
    of the whole table, so that nothing a measure reads from the whole table's labels (its
    highest label, its levels) differs. One slice, the whole, when it cannot or is small."""
    n, nq = len(table.g), table.nq
    whole = [(0, nq)]
    if n <= rows or nq < 2 or table.qg is not table.g or table.qrel is not table.label:
        return whole
    starts, label = table.starts, table.label
    cuts = np.searchsorted(starts, np.arange(rows, n, rows), side="left")
    cuts = np.unique(np.concatenate(([0], cuts[(cuts > 0) & (cuts < nq)], [nq])))
    pairs = list(zip(cuts[:-1].tolist(), cuts[1:].tolist()))
    lo, hi = int(label.min()), int(label.max())
    if hi - lo >= 1 << 16:
        return whole

    def levels(a: int, b: int) -> np.ndarray:
        part = label[starts[a] : starts[b]]
        return np.bincount(part - lo if lo else part, minlength=hi - lo + 1) > 0  # (labels from 0: no copy)

    seen = [levels(a, b) for a, b in pairs]
    if not all(np.array_equal(s, seen[0]) for s in seen):
        return whole
    return pairs


def table_slice(table: EvalTable, a: int, b: int) -> EvalTable:
    """Topics ``a`` to ``b`` of a table :func:`slice_cuts` cut."""
    if (a, b) == (0, table.nq):
        return table
    starts = table.starts
    r0, r1 = int(starts[a]), int(starts[b])
    g = table.g[r0:r1] - a
    label = table.label[r0:r1]
    return table.derive(
        qids=table.qids[a:b],
        g=g,
        label=label,
        starts=starts[a : b + 1] - r0,
        qg=g,
        qrel=label,
        missing=table.missing[a:b],
    )
