"""The ranked table: numeric docnos (fast path) behave exactly like any other docnos."""

from __future__ import annotations

import random

import numpy as np
import pytest

from irevalcli.core.table import (
    EvalOptions,
    _numeric_ids,
    _permuted,
    build_table,
    decimal_text_order,
    rank_order,
    rank_permutation,
)
from irevalcli.engine.evaluate import evaluate_table
from irevalcli.engine.job import Job
from irevalcli.errors import DuplicateDocError
from irevalcli.io.arrow import binary_array
from irevalcli.io.trec import Source, parse_qrels, parse_run
from irevalcli.measures.names import resolve
from irevalcli.output.formatters import format_trec


def src(text):
    return Source("f", text.encode(), "")


def both_paths(qrels_text, run_text, **opts):
    q, r = parse_qrels(src(qrels_text)), parse_run(src(run_text))
    reqs = resolve(["all_trec"])
    out = []
    for want_dict in (False, True):
        t = build_table(q, r, EvalOptions(**opts), doc_dict=want_dict)
        res = evaluate_table(Job.of(q, reqs, t.opts), t)
        out.append(format_trec(res, per_query=True))
    return out


def test_numeric_ids_only_for_canonical_decimals():
    import pyarrow as pa

    def ids(*xs):
        return _numeric_ids(pa.array([x.encode() for x in xs], pa.large_binary()))

    assert ids("0", "7", "123").tolist() == [0, 7, 123]
    assert ids("07") is None  # a leading zero: '07' and '7' are different docnos
    assert ids("-7") is None and ids("+7") is None and ids("7a") is None and ids("") is None
    assert ids("-0") is None and ids("0x1") is None and ids("1" * 16) is None


def test_numeric_ids_are_the_texts_values_as_int64():
    """Read through Arrow's unsigned parse (half the time of its signed one), the values are
    the texts' own, as int64, from 1 to 15 digits."""
    import pyarrow as pa

    rng = np.random.default_rng(11)
    values = np.concatenate(([0, 9, 10, 10**15 - 1], 10 ** rng.integers(0, 15, 3000) + rng.integers(0, 10**6, 3000)))
    values = values[values < 10**15]
    got = _numeric_ids(pa.array([str(v).encode() for v in values.tolist()], pa.large_binary()))
    assert got.dtype == np.int64
    assert got.tolist() == values.tolist()


def test_decimal_text_order_sorts_as_the_texts():
    rng = np.random.default_rng(3)
    values = np.concatenate(
        (
            [0, 1, 9, 10, 11, 19, 100, 101, 999, 10**14, 10**15 - 1, 99999999999999, 123456789012345],
            rng.integers(0, 10**15, 2000),
            rng.integers(0, 1000, 500),
        )
    ).astype(np.int64)
    keys = decimal_text_order(values)
    texts = [str(v).encode() for v in values.tolist()]
    assert [texts[i] for i in np.argsort(keys, kind="stable")] == sorted(texts)
    # equal keys exactly for equal values
    assert len(np.unique(keys)) == len(np.unique(values))


@pytest.mark.parametrize("seed", range(6))
def test_tied_numeric_docnos_rank_as_their_text(seed):
    """Rows tied on (topic, score) are ordered by docno descending, bytewise: on the numeric
    path by decimal_text_order of the values, on the others by Arrow's sort of the bytes."""
    import pyarrow as pa

    rng = np.random.default_rng(seed)
    n = 300
    topic = np.sort(rng.integers(0, 20, n))
    score = rng.integers(0, 4, n).astype(np.float64)
    # small ids: packed with their tie group into one sorted key; 15 digits: too wide for that
    big = rng.integers(0, 10**15, 200) if seed % 2 else np.arange(1000, 1200)
    ids = rng.choice(np.concatenate((np.arange(0, 120), big)), n, replace=False)
    docno = pa.array([str(v).encode() for v in ids.tolist()], pa.large_binary())
    by_bytes = rank_order(topic, score, docno)
    base, pos, src = rank_permutation(topic, score, docno, numeric_ids=ids.astype(np.int64))
    by_value = np.arange(n) if base is None else base.copy()
    by_value[pos] = src
    assert by_value.tolist() == by_bytes.tolist()


def test_leading_zeros_never_match():
    # the run's '12' is not the qrels' '012'; '5' is judged relevant
    qrels = "1 0 012 1\n1 0 5 1\n"
    run = "1 Q0 12 1 3 r\n1 Q0 5 2 2 r\n"
    fast, slow = both_paths(qrels, run)
    assert fast == slow
    assert b"num_rel_ret           \t1\t1\n" in fast


@pytest.mark.parametrize("seed", range(8))
def test_numeric_and_dictionary_paths_agree(seed):
    rng = random.Random(seed)
    q, r = [], []
    for t in range(1, rng.randint(2, 12)):
        docs = rng.sample(range(0, 200), rng.randint(1, 40))
        for d in docs:
            if rng.random() < 0.5:
                q.append(f"{t} 0 {d if rng.random() < 0.9 else '0' + str(d)} {rng.choice([-1, 0, 1, 2])}")
            r.append(f"{t} Q0 {d} 0 {rng.choice([1, 2, 3, rng.random()])} run")
    qrels = "\n".join(sorted(set(q), key=lambda x: (x.split()[0], x.split()[2]))) + "\n"
    # keep one judgement per (topic, docno)
    seen, lines = set(), []
    for line in qrels.split("\n"):
        if line and tuple(line.split()[::2][:2]) not in seen:
            seen.add(tuple(line.split()[::2][:2]))
            lines.append(line)
    fast, slow = both_paths("\n".join(lines) + "\n", "\n".join(r) + "\n", complete=True)
    assert fast == slow


def test_duplicates_found_on_the_numeric_path():
    q, r = parse_qrels(src("1 0 5 1\n2 0 5 1\n")), parse_run(src("1 Q0 5 1 3 r\n2 Q0 5 1 3 r\n2 Q0 5 2 1 r\n"))
    with pytest.raises(DuplicateDocError) as e:
        build_table(q, r, EvalOptions(), doc_dict=False)
    assert str(e.value) == "f:3: document '5' is retrieved twice for topic '2' (first at line 2)"


def test_sparse_ids_use_the_dictionary():
    q = parse_qrels(src("1 0 999999999999 1\n"))
    r = parse_run(src("1 Q0 999999999999 1 3 r\n1 Q0 1 2 2 r\n"))
    t = build_table(q, r, EvalOptions(), doc_dict=False)
    assert t.label.tolist() == [1, -1]
    assert np.all(t.g == 0)


@pytest.mark.parametrize("doc_dict", [False, True])
@pytest.mark.parametrize("max_docs", [None, 10])
def test_duplicate_reported_at_its_earliest_repeat(doc_dict, max_docs):
    """A document listed three times, ranked in another order than the lines: the
    message names the second line it appears on, and the first."""
    q = parse_qrels(src("1 0 7 1\n"))
    r = parse_run(src("1 Q0 7 1 3 r\n1 Q0 8 2 9 r\n1 Q0 7 3 1 r\n1 Q0 7 4 2 r\n"))
    with pytest.raises(DuplicateDocError) as e:
        build_table(q, r, EvalOptions(max_docs=max_docs), doc_dict=doc_dict)
    assert str(e.value) == "f:3: document '7' is retrieved twice for topic '1' (first at line 1)"


@pytest.mark.parametrize("shape", ["in_order", "blocks_shuffled", "rows_shuffled", "ungrouped"])
@pytest.mark.parametrize("seed", range(8))
def test_rank_order_is_trec_eval_order(shape, seed):
    """Topic, then score descending, then docno descending (bytewise), whatever the
    input order; the sparse form (base, pos, src) applied to a column gives the same."""
    rng = random.Random(seed)
    rows = []
    for t in range(rng.randint(1, 8)):
        docs = rng.sample(range(200), rng.randint(1, 30))
        block = [(t, float(rng.choice([1, 2, 2, 3, rng.random()])), f"d{d}".encode()) for d in docs]
        if shape in ("in_order", "blocks_shuffled"):
            block.sort(key=lambda r: -r[1])  # ties stay in random docno order
        else:
            rng.shuffle(block)
        rows.append(block)
    if shape == "blocks_shuffled":
        rng.shuffle(rows)
    flat = [r for block in rows for r in block]
    if shape == "ungrouped":
        rng.shuffle(flat)
    topic = np.array([r[0] for r in flat], dtype=np.int64)
    score = np.array([r[1] for r in flat])
    docno = binary_array([r[2] for r in flat])
    want = sorted(range(len(flat)), key=lambda i: (flat[i][0], -flat[i][1], [-b for b in flat[i][2]] + [1]))
    assert rank_order(topic, score, docno).tolist() == want
    base, pos, src_rows = rank_permutation(topic, score, docno)
    keys = [(r[0], -r[1]) for r in flat]
    assert (base is None) == (keys == sorted(keys))  # rows kept in place exactly when already in order
    col = np.arange(len(flat)) * 10
    assert _permuted(col, base, pos, src_rows).tolist() == [10 * i for i in want]


@pytest.mark.parametrize("doc_dict", [False, True])
def test_qrels_duplicates_on_every_docno_path(doc_dict):
    """Judged twice: found with numeric codes, dictionary codes, or (a non-canonical
    docno such as 07 among numeric ones) by text; 7 and 07 are different documents."""
    run = parse_run(src("1 Q0 7 1 3 r\n1 Q0 8 2 2 r\n"))
    for qrels_text, line in (("1 0 7 1\n1 0 8 0\n1 0 7 0\n", 3), ("1 0 07 1\n1 0 8 0\n1 0 07 0\n", 3)):
        with pytest.raises(DuplicateDocError) as e:
            build_table(parse_qrels(src(qrels_text)), run, EvalOptions(), doc_dict=doc_dict)
        assert str(e.value).startswith(f"f:{line}: document ") and "(first at line 1)" in str(e.value)
    table = build_table(parse_qrels(src("1 0 7 1\n1 0 07 0\n1 0 8 2\n")), run, EvalOptions(), doc_dict=doc_dict)
    assert table.label.tolist() == [1, 2]


def test_memo_computes_once_and_derive_starts_afresh():
    q = parse_qrels(src("1 0 a 1\n1 0 b 2\n2 0 c 1\n"))
    r = parse_run(src("1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n2 Q0 c 1 1 r\n2 Q0 d 2 0 r\n"))
    t = build_table(q, r, EvalOptions(), doc_dict=False)
    calls = []
    assert t.memo(("k", 1), lambda: calls.append(1) or "first") == "first"
    assert t.memo(("k", 1), lambda: calls.append(2) or "second") == "first"
    assert t.memo(("k", 2), lambda: calls.append(3) or "other") == "other"
    assert calls == [1, 3]
    assert t.R.tolist() == [2, 1]  # a cached column
    strict = t.derive(opts=EvalOptions(rel_level=2))
    assert strict.R.tolist() == [1, 0]  # computed again for the view, not carried over
    assert t.R.tolist() == [2, 1]
    assert strict.memo(("k", 1), lambda: "view's own") == "view's own"
    assert strict.label is t.label and strict.opts.rel_level == 2


@pytest.mark.parametrize(
    "lines, dup",
    [
        # grouped, equal blocks, the same ids in two topics: no duplicate
        (["1 5000000", "1 7000000", "2 7000000", "2 5000000"], None),
        # grouped, equal blocks, a duplicate in the second topic
        (
            ["1 5000000", "1 7000000", "2 7000000", "2 7000000"],
            "f:4: document '7000000' is retrieved twice for topic '2' (first at line 3)",
        ),
        # unequal blocks (padded rows must not match each other or an id)
        (["1 5000000", "2 5000001", "2 5000002", "2 5000003", "3 5000001"], None),
        (
            ["1 5000000", "2 5000001", "2 5000002", "2 5000001", "3 9"],
            "f:4: document '5000001' is retrieved twice for topic '2' (first at line 2)",
        ),
        # a topic in two blocks (not grouped): its repeat across the blocks is found
        (
            ["1 5000000", "2 5000001", "1 5000000"],
            "f:3: document '5000000' is retrieved twice for topic '1' (first at line 1)",
        ),
        (["1 5000000", "2 5000001", "1 5000002"], None),
        # topics listed out of bytewise order: grouped in the file, not in the table's order
        (
            ["9 5000000", "9 5000001", "10 5000001", "10 5000001"],
            "f:4: document '5000001' is retrieved twice for topic '10' (first at line 3)",
        ),
        (["9 5000000", "9 5000001", "10 5000001", "10 5000000"], None),
        # blocks too unequal for the matrix: the sort of every key decides
        (
            ["1 5000000", *[f"2 {5000000 + i}" for i in range(1, 40)], "2 5000005"],
            "f:41: document '5000005' is retrieved twice for topic '2' (first at line 6)",
        ),
    ],
)
@pytest.mark.parametrize("scores", ["descending", "ascending", "tied"])
@pytest.mark.parametrize(("run_order", "max_docs"), [(False, None), (True, None), (False, 100), (True, 100)])
def test_duplicates_among_sparse_numeric_ids(lines, dup, scores, run_order, max_docs):
    """Sparse numeric docnos (a streamed chunk of MS MARCO passage ids) are checked topic
    block by topic block, on the rows as read when they are in the table's topic order (or
    ranked, with -M); every layout and row order gives the whole sort's answer."""
    rows = [x.split() for x in lines]
    topics = sorted({t for t, _ in rows})
    q = parse_qrels(src("".join(f"{t} 0 5000001 1\n" for t in topics)))  # every topic has results
    score = {"descending": lambda i: 100 - i, "ascending": lambda i: i, "tied": lambda i: 1}[scores]
    r = parse_run(src("".join(f"{t} Q0 {d} 1 {score(i)} r\n" for i, (t, d) in enumerate(rows))))
    opts = EvalOptions(max_docs=max_docs)
    if dup is None:
        t = build_table(q, r, opts, doc_dict=False, run_order=run_order)
        assert sorted(t.qids) == topics and int(t.n.sum()) == len(lines)
    else:
        with pytest.raises(DuplicateDocError) as e:
            build_table(q, r, opts, doc_dict=False, run_order=run_order)
        assert str(e.value) == dup


def test_topic_ids_that_are_not_utf8_keep_their_bytes():
    """Topic ids are decoded all at once when they are UTF-8, one by one (surrogates for the
    bytes that are not) otherwise: the same text either way."""
    for first in (b"\xff7", "é7".encode()):
        q = parse_qrels(Source("f", first + b" 0 d1 1\nq2 0 d1 1\n", ""))
        r = parse_run(Source("f", first + b" Q0 d1 1 2 r\nq2 Q0 d1 1 2 r\n", ""))
        t = build_table(q, r, EvalOptions())
        assert t.qids == sorted(
            [first.decode("utf-8", "surrogateescape"), "q2"], key=lambda s: s.encode("utf-8", "surrogateescape")
        )
