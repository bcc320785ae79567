"""Impression logs read as numbers (irevalcli.io.dataset.read_log): a local Parquet log whose
ids are canonical decimals is read row group by row group into numbers, and must give what
the general reading gives (its run and judgements, read again when asked for), the same
table, the same results; anything else is left to the general reading, whose messages say
what is wrong. Its table may be scored a slice of users at a time
(irevalcli.engine.labelled), with the same results."""

from __future__ import annotations

import dataclasses
import mmap

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irevalcli.api import evaluate
from irevalcli.core.labelled import build_labelled_table, slice_cuts
from irevalcli.core.table import EvalOptions, build_table
from irevalcli.engine.evaluate import evaluate_table
from irevalcli.engine.job import Job
from irevalcli.engine.labelled import evaluate_labelled
from irevalcli.errors import DuplicateDocError, InputError
from irevalcli.io.dataset import LogQrels, LogRun, _read_labelled, open_dataset, read_labelled
from irevalcli.io.trec import Qrels, Run
from irevalcli.measures.names import resolve
from tests.conftest import same_log_tables

MEASURES = ["gauc", "auc", "ndcg_cut.10", "recip_rank", "map", "P.5", "num_rel_ret", "bpref", "err"]


def _table(
    rng: np.random.Generator,
    users: int = 60,
    wide: bool = False,
    nulls: bool = True,
    labels: tuple = (0, 0, 0, 1, 2, -1),
) -> pa.Table:
    qid, docno, score, rel = [], [], [], []
    for u in range(users):
        n = int(rng.integers(1, 40))
        for d in rng.choice(5000, size=n, replace=False):
            qid.append(str(u * 7 % 97 + (10**12 if wide and u % 2 else 0)))  # '10' < '9' bytewise
            docno.append(str(int(d) * (10**9 if wide and d % 3 == 0 else 1)))
            score.append(float(rng.integers(0, 7)) / 4 - 0.5)  # many ties, a -0.0
            rel.append(int(rng.choice(labels)))
    mask = rng.random(len(rel)) < 0.1 if nulls else None
    return pa.table(
        {
            "qid": qid,
            "docno": docno,
            "score": [-0.0 if s == 0 and i % 2 else s for i, s in enumerate(score)],
            "rel": pa.array(rel, pa.int8(), mask=mask),
        }
    )


def _write(table: pa.Table, path, parts: int = 1) -> str:
    """One file of small row groups, or a directory of ``parts`` files."""
    if parts == 1:
        pq.write_table(table, path, row_group_size=97)
        return str(path)
    path.mkdir()
    step = -(-table.num_rows // parts)
    for i in range(parts):
        pq.write_table(table.slice(i * step, step), path / f"part-{i:02d}.parquet", row_group_size=53)
    return str(path)


def _general(spec: str):
    return _read_labelled(open_dataset(spec, "labelled table"), {}, False)


@pytest.mark.parametrize("parts", [1, 3])
@pytest.mark.parametrize("wide", [False, True], ids=["range", "wide"])
@pytest.mark.parametrize("nulls", [False, True], ids=["all-labelled", "nulls"])
def test_log_read_as_numbers_is_what_the_general_reading_gives(tmp_path, parts, wide, nulls):
    spec = _write(
        _table(np.random.default_rng(parts + 2 * wide + 4 * nulls), wide=wide, nulls=nulls), tmp_path / "log", parts
    )
    got, ref = read_labelled(spec), _general(spec)
    assert isinstance(got.run, LogRun) and isinstance(got.qrels, LogQrels)
    np.testing.assert_array_equal(got.labels, ref.labels)
    np.testing.assert_array_equal(got.has, ref.has)
    for opts in [EvalOptions(), EvalOptions(ties="input"), EvalOptions(judged_only=True), EvalOptions(compat="9.0.8")]:
        fast = build_labelled_table(read_labelled(spec).run, got.labels, got.has, opts)
        slow = build_table(ref.qrels, ref.run, opts, doc_dict=False)
        assert fast is not None
        same_log_tables(fast, slow)
    # the texts, when asked for, are the general reading's
    for name in ("qid", "docno", "score", "lineno"):
        x, y = getattr(got.run, name), getattr(ref.run, name)
        assert x.equals(y) if isinstance(x, pa.Array) else np.array_equal(x, y), name
    for name in ("qid", "docno", "rel", "lineno"):
        x, y = getattr(got.qrels, name), getattr(ref.qrels, name)
        assert x.equals(y) if isinstance(x, pa.Array) else np.array_equal(x, y), name
    assert got.qrels.rel.dtype == np.int64
    assert (got.run.name, got.run.runid, len(got.run)) == (ref.run.name, ref.run.runid, len(ref.run))
    # replaced fields give plain ones
    run = dataclasses.replace(got.run, runid="x")
    assert type(run) is Run and run.runid == "x" and run.qid.equals(ref.run.qid)
    qrels = dataclasses.replace(got.qrels, name="x")
    assert type(qrels) is Qrels and qrels.name == "x" and np.array_equal(qrels.rel, ref.qrels.rel)


def test_log_results_are_the_general_ones(tmp_path):
    spec = _write(_table(np.random.default_rng(5)), tmp_path / "log", 3)
    for opts in ({}, {"judged_only": True}, {"max_docs": 5}, {"ties": "input"}, {"complete": True}):
        ev = evaluate(None, spec, MEASURES, labelled=True, **opts)
        ref = _general(spec)
        want = evaluate(ref.qrels, ref.run, MEASURES, **opts)  # Qrels + Run: the join
        assert ev.per_query.equals(want.per_query) and ev.summary.equals(want.summary)


@pytest.mark.parametrize(
    "column, values",
    [
        ("docno", ["7", "+7", "8"]),  # a sign
        ("docno", ["7", "07", "8"]),  # a leading zero
        ("qid", ["1", "01", "1"]),
        ("qid", ["u1", "u1", "u2"]),  # not numbers
        ("docno", ["1", "2", "1234567890123456"]),  # 16 digits
        ("docno", ["1", "", "3"]),
    ],
)
def test_ids_not_canonical_decimals_are_read_the_general_way(tmp_path, column, values):
    cols = {"qid": ["1", "1", "2"], "docno": ["5", "6", "5"], "score": [1.0, 2.0, 3.0], "rel": [1, 0, 1]}
    cols[column] = values
    pq.write_table(pa.table(cols), tmp_path / "t.parquet")
    spec = str(tmp_path / "t.parquet")
    try:
        got = read_labelled(spec)
    except InputError:
        with pytest.raises(InputError):
            _general(spec)
        return
    assert not isinstance(got.run, LogRun)


@pytest.mark.parametrize(
    "extra, score, error",
    [
        ({"runid": ["a", "a", "b"]}, [1.0, 2.0, 3.0], None),  # a runid column: the last row's runid
        ({}, [1.0, float("nan"), 3.0], "score 'nan' cannot be ranked"),
        ({}, pa.array([1.0, None, 3.0]), "no score value"),
        ({}, pa.array([1, 2, 3], pa.int32()), None),  # integer scores
    ],
)
def test_what_the_numbers_do_not_cover_is_left_to_the_general_reading(tmp_path, extra, score, error):
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"qid": ["1", "1", "2"], "docno": ["5", "6", "5"], "score": score, "rel": [1, 0, 1], **extra}), path
    )
    if error is not None:
        with pytest.raises(InputError, match=error):
            read_labelled(str(path))
        return
    got = read_labelled(str(path))
    assert not isinstance(got.run, LogRun)
    assert got.run.runid == ("b" if extra else "t")


def test_a_duplicate_across_row_groups_is_named_as_before(tmp_path):
    t = _table(np.random.default_rng(3), nulls=False)
    t = pa.concat_tables([t, t.slice(5, 1)])  # the 6th row again, last
    spec = _write(t, tmp_path / "log.parquet")
    assert isinstance(read_labelled(spec).run, LogRun)
    with pytest.raises(DuplicateDocError) as fast:
        evaluate(None, spec, "auc", labelled=True)
    ref = _general(spec)
    with pytest.raises(DuplicateDocError) as slow:
        evaluate(ref.qrels, ref.run, "auc")
    assert str(fast.value) == str(slow.value) and f":{t.num_rows}:" in str(fast.value)


@pytest.mark.parametrize("rows", [1, 300, 700, 10**9])
def test_a_log_scored_a_slice_of_users_at_a_time_gives_the_same_results(tmp_path, rows):
    spec = _write(
        _table(np.random.default_rng(9), users=90, nulls=False, labels=(0, 0, 1, 2)), tmp_path / "log.parquet"
    )
    requests = resolve(MEASURES, rel_format="qrels", compat="10.0")
    table = build_labelled_table(
        read_labelled(spec).run, *[getattr(read_labelled(spec), k) for k in ("labels", "has")], EvalOptions()
    )
    assert table is not None
    got = read_labelled(spec)
    job = Job(
        got.qrels,
        tuple(requests),
        EvalOptions(),
        None,
        None,
        num_qrels_topics=table.nq,
        num_rel_complete=0,
        max_label=table.max_label or 0,
    )
    cuts = slice_cuts(table, rows)
    assert (len(cuts) > 1) == (rows in (300, 700))
    whole, sliced = evaluate_table(job, table), evaluate_labelled(job, table, rows)
    assert whole.qids == sliced.qids
    for a, b in zip(whole.columns, sliced.columns):
        assert a.label == b.label and a.summary == b.summary
        np.testing.assert_array_equal(np.asarray(a.per_query), np.asarray(b.per_query))


def test_slices_each_hold_every_label_or_the_table_is_whole(tmp_path):
    """A slice without the whole table's highest label would see another highest label
    (nDCG with gains, graded measures): the table is then scored whole."""
    qid = [str(u) for u in range(20) for _ in range(5)]
    docno = [str(d) for _ in range(20) for d in range(5)]
    rel = [3 if u == 0 and d == 0 else d % 2 for u in range(20) for d in range(5)]
    pq.write_table(pa.table({"qid": qid, "docno": docno, "score": [1.0] * 100, "rel": rel}), tmp_path / "t.parquet")
    got = read_labelled(str(tmp_path / "t.parquet"))
    table = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert table is not None and slice_cuts(table, 10) == [(0, 20)]


def test_a_row_group_arrow_refuses_is_left_to_the_general_reading(tmp_path, monkeypatch):
    """An error decoding a row group (here: made up) leaves the log to the general reading,
    which says what is wrong with the file (here: nothing, it reads it whole)."""
    spec = _write(_table(np.random.default_rng(4)), tmp_path / "log.parquet")

    def refuse(self, *args, **kwargs):
        raise pa.ArrowInvalid("bad page")

    monkeypatch.setattr(pq.ParquetFile, "read_row_group", refuse)
    got = read_labelled(spec)
    assert not isinstance(got.run, LogRun) and got.run.qid.equals(_general(spec).run.qid)


def _ids_log(path, qid: list, docno: list, **write) -> str:
    n = len(qid)
    rng = np.random.default_rng(n)
    t = pa.table({"qid": qid, "docno": docno, "score": rng.integers(0, 3, n) / 2, "rel": rng.integers(0, 3, n)})
    pq.write_table(t, path, row_group_size=max(n // 3, 1), **write)
    return str(path)


@pytest.mark.parametrize(
    "case, ids",
    [
        ("narrow", np.int32),
        ("stats-guess-wrong", np.int64),  # bytewise least '1', greatest '9', and 5000000000 between
        ("integers-past-int32", np.int64),
        ("no-statistics", np.int64),
        ("negative-integers", np.int32),
    ],
)
def test_ids_read_as_int32_when_they_fit(tmp_path, case, ids):
    """A log's ids are read as int32 when every row group's statistics say they fit, and
    read again as int64 when a text id does not after all: the same table either way."""
    users = [str(u) for u in range(1, 10)] * 6
    docs = [str(d) for d in range(54)]
    write = {}
    if case == "stats-guess-wrong":
        docs[40] = "5000000000"
    elif case == "integers-past-int32":
        users = [int(u) * 10**10 for u in users]
    elif case == "no-statistics":
        write = {"write_statistics": False}
    elif case == "negative-integers":
        users = [-(2**31) + int(u) for u in users]
        docs = [-int(d) for d in docs]
    spec = _ids_log(tmp_path / "log.parquet", users, docs, **write)
    got = read_labelled(spec)
    assert isinstance(got.run, LogRun) and got.run._numbers.ids.dtype == ids
    ref = _general(spec)
    for opts in (EvalOptions(), EvalOptions(ties="input")):
        fast = build_labelled_table(read_labelled(spec).run, got.labels, got.has, opts)
        assert fast is not None
        same_log_tables(fast, build_table(ref.qrels, ref.run, opts, doc_dict=False))
    ev = evaluate(None, spec, MEASURES, labelled=True)
    want = evaluate(ref.qrels, ref.run, MEASURES)
    assert ev.per_query.equals(want.per_query) and ev.summary.equals(want.summary)


@pytest.mark.parametrize("mapped", [0, 1 << 40], ids=["mapped", "numpy"])
def test_log_arrays_in_mapped_pages_read_the_same(tmp_path, monkeypatch, mapped):
    """A large log's arrays are anonymous mappings of their own (no transparent huge pages):
    writable, of the type asked for, and the ids' buffer viewed as int64 once used."""
    from irevalcli.io import dataset

    monkeypatch.setattr(dataset, "MAPPED_BYTES", mapped)
    a = dataset._pages(6, np.int32)
    assert a.dtype == np.int32 and len(a) == 6 and a.flags.writeable and a.flags.c_contiguous
    a[:] = 7
    assert a.view(np.int64).shape == (3,)
    spec = _write(_table(np.random.default_rng(4), nulls=False, labels=(0, 1, 2)), tmp_path / "log.parquet")
    got = read_labelled(spec)
    assert isinstance(getattr(got.run._numbers.ids.base, "obj", None), mmap.mmap) == (mapped == 0)
    ref = _general(spec)
    fast = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert fast is not None
    same_log_tables(fast, build_table(ref.qrels, ref.run, EvalOptions(), doc_dict=False))
