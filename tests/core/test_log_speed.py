"""The impression-log ranking (issue 22 item 5): irevalcli.core.labelled ranks a labelled
table's rows itself (packed integer sort, or Arrow's three-key sort; duplicates checked in
a second thread on a large log) and must give build_table's table, field for field, in
every case: ties broken by docno bytewise (numeric docnos of different lengths), or by
input order."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irevalcli.api import evaluate
from irevalcli.core import labelled
from irevalcli.core.labelled import build_labelled_table
from irevalcli.core.table import EvalOptions, build_table
from irevalcli.io.dataset import read_labelled


def _judgements(t) -> tuple[np.ndarray, np.ndarray]:
    """A table's judgements as a multiset: (topic, label) sorted (the labelled table may
    list them in ranked order, build_table in the table's)."""
    order = np.lexsort((t.qrel, t.qg))
    return t.qg[order], t.qrel[order]


def _same_table(a, b) -> None:
    for x, y in zip(_judgements(a), _judgements(b)):
        assert x.dtype == y.dtype
        np.testing.assert_array_equal(x, y)
    for name in a._fields:
        if name in ("_cache", "qg", "qrel") or (name in ("doc", "doc_dict") and getattr(a, name) is None):
            continue
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


def _log(path, rng: np.random.Generator, docnos: str, distinct_scores: int, users: int = 30) -> None:
    qid, docno, score, rel = [], [], [], []
    for u in range(users):
        n = int(rng.integers(1, 40))
        for d in rng.choice(3000, size=n, replace=False):
            qid.append(f"{u * 7 % 31}")  # numeric topic ids of different lengths
            if docnos == "numeric":  # canonical decimals of 1 to 4 digits: bytewise != numeric order
                docno.append(str(int(d)))
            elif docnos == "padded":  # '07' and '7', '00' and '0' are two documents each
                docno.append(("0" if d % 2 else "") + str(int(d) // 2))
            elif docnos == "signed":  # '+7' and '7' are two documents
                docno.append(("+" if d % 2 else "") + str(int(d) // 2))
            else:
                docno.append(f"d{int(d) % 97}-{int(d)}")
            score.append(float(rng.integers(0, distinct_scores)) / 8 - 1.0)
            rel.append(int(rng.choice([0, 0, 1, 2, -1])))
    mask = rng.random(len(rel)) < 0.1
    pq.write_table(
        pa.table({"qid": qid, "docno": docno, "score": score, "rel": pa.array(rel, pa.int64(), mask=mask)}), path
    )


OPTIONS = [EvalOptions(), EvalOptions(ties="input"), EvalOptions(judged_only=True), EvalOptions(compat="9.0.8")]


@pytest.mark.parametrize("docnos", ["numeric", "padded", "signed", "text"])
@pytest.mark.parametrize("packed", [True, False], ids=["packed", "arrow"])
@pytest.mark.parametrize("background", [True, False], ids=["thread", "inline"])
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: repr(o)[:50])
def test_ranked_as_build_table_ranks(tmp_path, monkeypatch, docnos, packed, background, opts):
    if not packed:
        monkeypatch.setattr(labelled, "PACKED_SCORES", 1)
    if background:
        monkeypatch.setattr(labelled, "BACKGROUND_ROWS", 0)
    path = tmp_path / "log.parquet"
    _log(path, np.random.default_rng(len(docnos) + packed), docnos, distinct_scores=5)
    got = read_labelled(str(path))
    fast = build_labelled_table(got.run, got.labels, got.has, opts)
    assert fast is not None
    _same_table(fast, build_table(got.qrels, got.run, opts, doc_dict=False))


@pytest.mark.parametrize("spread", [1, 10**9], ids=["table", "hashed"])
def test_numeric_user_ids_coded_in_bytewise_order(tmp_path, spread):
    """Numeric user ids over a narrow range go through a table over it, over a wide one
    through the hash; either way '10' comes before '9', as build_table orders them."""
    path = tmp_path / "log.parquet"
    rng = np.random.default_rng(5)
    n = 600
    qid = (rng.integers(0, 120, n) * spread).astype(str)
    docno = np.arange(n).astype(str)
    pq.write_table(pa.table({"qid": qid, "docno": docno, "score": rng.random(n), "rel": rng.integers(0, 2, n)}), path)
    got = read_labelled(str(path))
    fast = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert fast is not None and fast.qids == sorted(set(qid.tolist()))
    _same_table(fast, build_table(got.qrels, got.run, EvalOptions(), doc_dict=False))


def test_many_distinct_scores_take_arrows_sort(tmp_path):
    """More distinct scores than PACKED_SCORES (a model's float outputs): the same table."""
    path = tmp_path / "log.parquet"
    rng = np.random.default_rng(3)
    n = (labelled.PACKED_SCORES + 1) * 2
    qid = rng.integers(0, 500, n).astype(str)
    docno = np.arange(n).astype(str)
    score = rng.random(n)
    score[: n // 4] = np.round(score[: n // 4], 2)  # and ties among them
    pq.write_table(pa.table({"qid": qid, "docno": docno, "score": score, "rel": rng.integers(0, 2, n)}), path)
    got = read_labelled(str(path))
    fast = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert fast is not None
    _same_table(fast, build_table(got.qrels, got.run, EvalOptions(), doc_dict=False))


def test_tied_docnos_rank_bytewise_descending(tmp_path):
    """Hand-checked: one topic, every score tied, so docno descending bytewise decides:
    9 > 100 > 10 > 1 (a numeric order would put 100 first); the relevant '10' is third."""
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"qid": ["q"] * 4, "docno": ["1", "10", "100", "9"], "score": [0.5] * 4, "rel": [0, 1, 0, 0]}), path
    )
    ev = evaluate(None, str(path), ["recip_rank", "auc"], labelled=True)
    # recip_rank 1/3; auc: the relevant row beats the one non-relevant row below it ('1') of 3
    assert ev.summary.set_index("measure")["value"].to_dict() == {"recip_rank": 1 / 3, "auc": 1 / 3}


@pytest.mark.parametrize("background", [True, False], ids=["thread", "inline"])
def test_duplicates_found_in_either_thread(tmp_path, monkeypatch, background):
    """A document twice for one topic with different scores: not adjacent once ranked."""
    if background:
        monkeypatch.setattr(labelled, "BACKGROUND_ROWS", 0)
    path = tmp_path / "dup.parquet"
    pq.write_table(
        pa.table({"qid": ["q", "q", "q"], "docno": ["10", "9", "10"], "score": [3.0, 2.0, 1.0], "rel": [1, 0, 0]}),
        path,
    )
    got = read_labelled(str(path))
    assert build_labelled_table(got.run, got.labels, got.has, EvalOptions()) is None


def test_duplicates_of_docno_values_too_far_apart_to_pack_with_the_topic():
    """Topic and docno value packed in one int64 would wrap past 2**63: (topic 0, docno 4)
    and (topic 4, docno 0) would collide with docno values up to 2**62; they are compacted
    first."""
    g = np.array([0, 4, 1, 2, 3], dtype=np.int64)
    same = np.array([4, 0, 1 << 62, 7, 7], dtype=np.int64)
    assert not labelled._has_duplicates(g, same)
    assert labelled._has_duplicates(
        np.array([0, 4, 4], dtype=np.int64), np.array([4, 1 << 62, 1 << 62], dtype=np.int64)
    )


def _plain_log(path, rng: np.random.Generator, users: int = 40, labels=(0, 0, 0, 1, 2, 5), wide: bool = False) -> None:
    """A log read as numbers whose every row is labelled (at least 0): numeric user ids and
    docnos of different lengths ('10' < '9' bytewise), few distinct scores (ties), -0.0 and
    0.0; ``wide``: some docnos past int32 (the ids read as int64)."""
    qid, docno, score, rel = [], [], [], []
    for u in range(users):
        n = int(rng.integers(1, 60))
        for d in rng.choice(3000, size=n, replace=False):
            qid.append(str(u * 7 % 53))
            docno.append(str(int(d) + (10**10 if wide and d % 2 else 0)))
            s = float(rng.integers(-2, 3)) / 4
            score.append(-0.0 if s == 0 and rng.random() < 0.5 else s)
            rel.append(int(rng.choice(labels)))
    pq.write_table(pa.table({"qid": qid, "docno": docno, "score": score, "rel": pa.array(rel, pa.int8())}), path)


def _no_general_ranking(*args, **kwargs):
    raise AssertionError("the packed ranking was expected")


@pytest.mark.parametrize("block", [7, 64, 1 << 20])
@pytest.mark.parametrize("background", [True, False], ids=["threads", "inline"])
@pytest.mark.parametrize(
    "opts", [EvalOptions(), EvalOptions(judged_only=True), EvalOptions(compat="9.0.8")], ids=["10", "-J", "9.0.8"]
)
@pytest.mark.parametrize("wide", [False, True], ids=["int32", "int64"])
def test_packed_ranking_is_build_tables(tmp_path, monkeypatch, block, background, opts, wide):
    """Every row labelled, ties by docno: topic, score, docno and label sorted as one
    integer written over the scores (in blocks, the duplicates looked for a slice of whole
    topics at a time): build_table's table, field for field."""
    monkeypatch.setattr(labelled, "BLOCK", block)
    monkeypatch.setattr(labelled, "_ranking", _no_general_ranking)
    if background:
        monkeypatch.setattr(labelled, "BACKGROUND_ROWS", 0)
    path = tmp_path / "log.parquet"
    _plain_log(path, np.random.default_rng(block), wide=wide)
    got = read_labelled(str(path))
    assert got.run._numbers.ids.dtype == (np.int64 if wide else np.int32)
    fast = build_labelled_table(got.run, got.labels, got.has, opts)
    assert fast is not None and fast.g.dtype == fast.label.dtype == np.int64
    ref = read_labelled(str(path))
    _same_table(fast, build_table(ref.qrels, ref.run, opts, doc_dict=False))


@pytest.mark.parametrize("block", [5, 1 << 20])
@pytest.mark.parametrize("background", [True, False], ids=["threads", "inline"])
def test_packed_ranking_finds_a_document_listed_twice(tmp_path, monkeypatch, block, background):
    """A docno twice for a topic with different scores (not adjacent once ranked), in the
    last slice of topics: no table (build_table names it), as the general path says."""
    monkeypatch.setattr(labelled, "BLOCK", block)
    monkeypatch.setattr(labelled, "_ranking", _no_general_ranking)
    if background:
        monkeypatch.setattr(labelled, "BACKGROUND_ROWS", 0)
    qid = [str(q) for q in range(9) for _ in range(4)]
    docno = [str(10 * q + d) for q in range(9) for d in range(4)]
    docno[-1] = docno[-4]  # topic 8: its first document again, scored lower
    score = [float(-d) for _ in range(9) for d in range(4)]
    path = tmp_path / "dup.parquet"
    pq.write_table(pa.table({"qid": qid, "docno": docno, "score": score, "rel": [1, 0, 0, 2] * 9}), path)
    got = read_labelled(str(path))
    assert build_labelled_table(got.run, got.labels, got.has, EvalOptions()) is None


def test_a_log_too_wide_to_pack_is_ranked_the_general_way(monkeypatch):
    """Topic, score and docno bits past 63, or more distinct scores than PACKED_SCORES: no
    layout (the general ranking ranks it)."""
    score = np.array([1.0, 0.5, 0.5])
    labels = np.array([0, 1, 1], dtype=np.int8)
    assert labelled._layout(3, score, 3, labels) is not None
    assert labelled._layout(1 << 40, score, 1 << 22, labels) is None
    monkeypatch.setattr(labelled, "PACKED_SCORES", 1)
    assert labelled._layout(3, score, 3, labels) is None
