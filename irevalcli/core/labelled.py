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

from typing import TYPE_CHECKING

import numpy as np

from ..io.arrow import decode_id, from_numpy, to_numpy
from .table import EvalOptions, EvalTable, factorize_sorted, rank_permutation, runs_of

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Run


def build_labelled_table(run: Run, labels: np.ndarray, has: np.ndarray, opts: EvalOptions) -> EvalTable | None:
    """The table ``build_table(qrels, run, opts, doc_dict=False)`` builds when ``qrels`` are
    the rows of ``run`` that have a label (``has``; ``labels``: each row's label), or None
    when that case is left to ``build_table``."""
    if opts.max_docs is not None or opts.only_query is not None or opts.ties == "rank" or not has.any():
        return None
    # topics: the judged ones, numbered in bytewise order (the qrels' qids are the run's)
    code, qid_dict = _topic_codes(run.qid)
    nqid = len(qid_dict)
    judged = np.bincount(code if has.all() else code[has], minlength=nqid) > 0
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
    if _has_duplicates(g, docno, len(topics)):
        return None  # build_table names the document judged or retrieved twice
    score = run.score if all_kept else run.score[keep]
    if opts.compat == "9.0.8":
        score = score.astype(np.float32).astype(np.float64)  # 9.0.8 stores scores as float
    line = run.lineno if all_kept else run.lineno[keep]
    # each row's label as the join would find it: -1 not judged, -2 judged negative
    if has.all() and labels.min() >= 0:
        label = labels  # (not written to: reordered into a new array, or kept as it is)
    else:
        label = np.where(has, np.where(labels < 0, -2, labels), -1)
    if not all_kept:
        label = label[keep]
    base, pos, src = rank_permutation(g, score, docno, opts.ties, line, None)
    if base is not None or len(pos):
        order = base if base is not None else np.arange(len(g), dtype=np.int64)
        if base is not None:
            g = g[base]  # (ties stay within their topic)
        order[pos] = src
        label = label[order]
    nq = len(topics)
    starts = np.zeros(nq + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=nq), out=starts[1:])
    if opts.judged_only:
        kept = label >= 0
        g, label = g[kept], label[kept]
        starts[1:] = np.cumsum(np.bincount(g, minlength=nq))
    judged_rows = has if all_kept else has & keep
    return EvalTable(
        qids=_texts(qid_dict.take(from_numpy(topics))),
        g=g,
        label=label,
        starts=starts,
        qg=r_topic[judged_rows],
        qrel=labels[judged_rows],
        missing=np.zeros(nq, dtype=bool),
        opts=opts,
        runid=run.runid,
        max_label=int(labels[has].max()),
    )


def _topic_codes(qid: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """``factorize_sorted(qid)``: codes in bytewise order, and the sorted ids. A log in
    logging order (users interleaved) is hashed row by row at once, without first looking
    for runs of equal ids, which only pay off when rows come grouped by user."""
    import pyarrow.compute as pc

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


def _has_duplicates(g: np.ndarray, docno: pa.Array, nq: int) -> bool:
    """Whether some topic lists a document twice (or may: equal integer values of
    different texts, such as '7' and '07', count as equal here)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(g) < 2:
        return False
    code = None
    try:
        ids = to_numpy(pc.cast(docno.cast(pa.large_string()), pa.int64()))
        lo, hi = int(ids.min()), int(ids.max())
        if (hi - lo + 1) * max(nq, 1) < 2**62:
            code, bound = ids - lo if lo else ids, hi - lo + 1
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, OverflowError):
        code = None
    if code is None:
        code = to_numpy(docno.dictionary_encode().indices).astype(np.int64, copy=False)
        bound = int(code.max()) + 1
    key = g * bound  # in place from here: a few full-length arrays fewer on a 50M-row log
    key += code
    key.sort()
    return bool((key[1:] == key[:-1]).any())
