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

from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from ..io.arrow import decode_id, from_numpy, to_numpy
from .table import EvalOptions, EvalTable, factorize_sorted, runs_of

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Run


# A log of at least this many rows checks its documents for duplicates in a second thread,
# while its rows are ranked.
BACKGROUND_ROWS = 1 << 20
# Scores are ranked by one sort of packed integers when there are at most this many distinct
# ones (and topic, score rank and row fit in 63 bits); otherwise Arrow sorts by three keys.
PACKED_SCORES = 1 << 16


def build_labelled_table(run: Run, labels: np.ndarray, has: np.ndarray, opts: EvalOptions) -> EvalTable | None:
    """The table ``build_table(qrels, run, opts, doc_dict=False)`` builds when ``qrels`` are
    the rows of ``run`` that have a label (``has``; ``labels``: each row's label), or None
    when that case is left to ``build_table``."""
    if opts.max_docs is not None or opts.only_query is not None or opts.ties == "rank" or not has.any():
        return None
    # topics: the judged ones, numbered in bytewise order (the qrels' qids are the run's)
    code, qid_dict = _topic_codes(run.qid)
    nqid = len(qid_dict)
    every = bool(has.all())  # every row has a label (then every topic is judged)
    judged = np.bincount(code if every else code[has], minlength=nqid) > 0
    topics = np.flatnonzero(judged)
    keep: np.ndarray = np.ones(0, dtype=bool)  # (read only when not all_kept)
    if len(topics) == nqid:  # every topic judged (a log whose rows all have a label): codes are topics
        r_topic, all_kept = code, True
    else:
        topic_of_code = np.full(nqid, -1, dtype=np.int64)
        topic_of_code[topics] = np.arange(len(topics), dtype=np.int64)
        r_topic = topic_of_code[code]
        keep = r_topic >= 0
        all_kept = bool(keep.all())
    g = r_topic if all_kept else r_topic[keep]
    docno = run.docno if all_kept else run.docno.filter(_mask(keep))
    score = run.score if all_kept else run.score[keep]
    if opts.compat == "9.0.8":
        score = score.astype(np.float32).astype(np.float64)  # 9.0.8 stores scores as float
    line = run.lineno if all_kept else run.lineno[keep]
    same, key = _docno_keys(docno)
    with ThreadPoolExecutor(1) as pool:  # (the two sorts of a large log side by side, on two cores)
        twice = pool.submit(_has_duplicates, g, same) if len(g) >= BACKGROUND_ROWS else None
        if twice is None and _has_duplicates(g, same):
            return None  # build_table names the document judged or retrieved twice
        # ties: docno descending (bytewise), or input order (the line ascending)
        order = _ranking(g, len(topics), score, key if opts.ties == "docno" else -line)
        del key, same
        if twice is not None and twice.result():
            return None
    # each row's label as the join would find it: -1 not judged, -2 judged negative
    if every and labels.min() >= 0:
        label = labels  # (not written to: reordered into a new array, or kept as it is)
    else:
        label = np.where(has, np.where(labels < 0, -2, labels), -1)
    if not all_kept:
        label = label[keep]
    g = g[order]
    label = label[order]
    del order
    nq = len(topics)
    starts = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=nq), out=starts[1:])
    if opts.judged_only:
        kept = label >= 0
        g, label = g[kept], label[kept]
        starts[1:] = np.cumsum(np.bincount(g, minlength=nq))
    if every:  # the judgements are the rows as they are (read only, as the table's are)
        qg, qrel = r_topic, labels
    else:
        judged_rows = has if all_kept else has & keep
        qg, qrel = r_topic[judged_rows], labels[judged_rows]
    return EvalTable(
        qids=_texts(qid_dict.take(from_numpy(topics))),
        g=g,
        label=label,
        starts=starts,
        qg=qg,
        qrel=qrel,
        missing=np.zeros(nq, dtype=bool),
        opts=opts,
        runid=run.runid,
        max_label=int(qrel.max()),
    )


def _topic_codes(qid: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """``factorize_sorted(qid)``: codes in bytewise order, and the sorted ids. Canonical
    decimal ids over a narrow range are looked up in a table over that range; otherwise a
    log in logging order (users interleaved) is hashed row by row at once, without first
    looking for runs of equal ids, which only pay off when rows come grouped by user."""
    import pyarrow as pa
    import pyarrow.compute as pc

    dec = _decimals(qid)
    if dec is not None and len(dec[0]) and int(dec[0].max()) - int(dec[0].min()) < max(len(qid) // 2, 1 << 20):
        # numeric user ids over a range not much wider than the log: a table over the range
        # instead of hashing every row's text (a hash table of 500k users misses the cache)
        v, lo = dec[0], int(dec[0].min())
        present = np.zeros(int(v.max()) - lo + 1, dtype=bool)
        present[v - lo] = True
        values = np.flatnonzero(present)
        del present
        values += lo
        values = values[np.argsort(_decimal_keys(values, _digits(values)), kind="stable")]
        rank = np.zeros(int(v.max()) - lo + 1, dtype=np.int64)
        rank[values - lo] = np.arange(len(values), dtype=np.int64)
        ids = pc.cast(from_numpy(values), pa.large_string()).cast(pa.large_binary())
        return rank[v - lo], ids
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
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        v = to_numpy(pc.cast(ids.cast(pa.large_string()), pa.int64()))
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        return None
    if not len(v) or int(v.min()) < 0 or int(v.max()) >= 10**15:
        return None
    digits = _lengths(ids)
    if int(digits.min()) < 1 or int(digits.max()) > 15:
        return None
    # the value left-aligned on 15 digits: at least 10**14 unless the text has a sign or a
    # leading zero (or is '0', the one canonical text of 0)
    key = (10 ** np.arange(16, dtype=np.int64))[15 - digits]
    key *= v
    short = np.flatnonzero(key < 10**14)
    if len(short) and not bool(((v[short] == 0) & (digits[short] == 1)).all()):
        return None
    key <<= 4
    key += digits
    return v, key


def _digits(values: np.ndarray) -> np.ndarray:
    """The number of decimal digits of non-negative values below 10**15."""
    return np.searchsorted(10 ** np.arange(1, 16, dtype=np.int64), values, side="right") + 1


def _decimal_keys(values: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """:func:`_decimals`'s bytewise key of canonical decimal values."""
    key = (10 ** np.arange(16, dtype=np.int64))[15 - digits] * values
    key <<= 4
    key += digits
    return key


def _lengths(ids: pa.Array) -> np.ndarray:
    """The byte length of every id of a binary or string array (large or not)."""
    import pyarrow as pa

    width = np.int64 if pa.types.is_large_binary(ids.type) or pa.types.is_large_string(ids.type) else np.int32
    offsets = np.frombuffer(ids.buffers()[1], dtype=width, count=ids.offset + len(ids) + 1)[ids.offset :]
    return np.diff(offsets)


def _has_duplicates(g: np.ndarray, same: np.ndarray) -> bool:
    """Whether some topic lists a document twice (``same``: equal for equal docnos)."""
    if len(g) < 2:
        return False
    key = g * (int(same.max()) + 1)  # in place from here: a few full-length arrays fewer on a 50M-row log
    key += same
    key.sort()
    return bool((key[1:] == key[:-1]).any())


def _ranking(g: np.ndarray, nq: int, score: np.ndarray, tie: np.ndarray) -> np.ndarray:
    """The rows by topic, score descending, then ``tie`` descending (distinct within a
    topic): trec_eval's ranking, as :func:`irevalcli.core.table.rank_permutation` gives it.

    With few distinct scores, one sort of integers: per row its topic, the rank of its
    score among the distinct ones, and its position, packed into one int64; rows of a
    topic with the same score are then put in ``tie`` order. Otherwise Arrow sorts by the
    three keys."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(g)
    zero = score == 0
    s = score + 0.0 if np.signbit(score[zero]).any() else score  # -0.0 is 0.0 (equal scores tie)
    del zero
    bn, bg = max(n - 1, 1).bit_length(), max(nq - 1, 1).bit_length()
    values = None
    most = min(PACKED_SCORES, 1 << max(61 - bg - bn, 0))
    if len(pc.unique(from_numpy(s[: 1 << 16]))) <= most:
        values = pc.unique(from_numpy(s))
    if values is None or len(values) > most:
        keys = pa.record_batch([from_numpy(g), from_numpy(s), from_numpy(tie)], names=["g", "s", "t"])
        order = pc.sort_indices(keys, sort_keys=[("g", "ascending"), ("s", "descending"), ("t", "descending")])
        return to_numpy(order).astype(np.int64, copy=False)
    bs = max(len(values) - 1, 1).bit_length()
    desc = np.sort(to_numpy(values))[::-1]
    srank = to_numpy(pc.index_in(from_numpy(s), value_set=from_numpy(desc)))
    key = np.left_shift(g, bs + bn, dtype=np.int64)
    key |= np.left_shift(srank, bn, dtype=np.int64)
    key |= np.arange(n, dtype=np.int64)
    key.sort()
    rows = key & ((1 << bn) - 1)
    key >>= bn
    tied = key[1:] == key[:-1]
    del key
    if tied.any():
        in_tie = np.zeros(n, dtype=bool)
        in_tie[1:] = tied
        in_tie[:-1] |= tied
        pos = np.flatnonzero(in_tie)
        first = np.ones(len(pos), dtype=bool)  # a tie group starts where a row does not tie with the one before
        later = pos > 0
        first[later] = ~tied[pos[later] - 1]
        gid = np.cumsum(first)
        sub = rows[pos]
        keys = pa.record_batch([from_numpy(gid), from_numpy(tie[sub])], names=["g", "t"])
        perm = to_numpy(pc.sort_indices(keys, sort_keys=[("g", "ascending"), ("t", "descending")]))
        rows[pos] = sub[perm]
    return rows
