"""Impression logs with integer id columns (int8 .. int64, uint*), and hive directories,
read as numbers (irevalcli.io.dataset.read_log): the general reading writes an integer id
as its decimal text ('-5', '0', '9223372036854775807'), orders topics and breaks docno ties
bytewise on those texts ('-12' < '-5' < '0' < '10' < '9'); the numbers must give the same
run, table, results and CLI bytes. What they cannot (a null id, a uint64 past int64, a
hive key that is a column the reading takes) is left to the general reading."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irevalcli.api import evaluate
from irevalcli.core.labelled import build_labelled_table
from irevalcli.core.table import EvalOptions, build_table
from irevalcli.errors import InputError
from irevalcli.io import dataset
from irevalcli.io.dataset import LogRun, _read_labelled, open_dataset, read_labelled
from tests.conftest import same_log_tables

MEASURES = ["gauc", "auc", "ndcg_cut.10", "recip_rank", "map", "P.5", "num_rel_ret", "bpref", "err"]
TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint16(), pa.uint32(), pa.uint64()]
SMALL = [-128, -100, -12, -10, -9, -5, -1, 0, 1, 5, 9, 10, 12, 99, 100, 127]
LARGE = [
    -(2**63),
    -(10**15),
    -(2**53) - 1,
    10**15 - 1,
    10**15,
    2**53,
    2**53 + 1,
    10**16 + 7,
    2**63 - 2,
    2**63 - 1,
]


def _pool(t: pa.DataType) -> list[int]:
    lo, hi = (
        (0, 2 ** (t.bit_width) - 1)
        if pa.types.is_unsigned_integer(t)
        else (-(2 ** (t.bit_width - 1)), 2 ** (t.bit_width - 1) - 1)
    )
    vals = SMALL + (LARGE if t.bit_width == 64 else [lo, hi, hi - 1, lo + 1])
    vals = sorted({v for v in vals if lo <= v <= hi} | {0, 1, 2, 3, 10, 11, 20, 21})
    if t == pa.uint64():
        vals += [2**63]  # (past int64: only where a test wants it)
    return [v for v in vals if v < 2**63]


def _table(rng: np.random.Generator, qtype: pa.DataType, dtype: pa.DataType, nulls: bool = True) -> pa.Table:
    users, docs = _pool(qtype), _pool(dtype)
    qid, docno, score, rel = [], [], [], []
    for u in users:
        n = int(rng.integers(1, len(docs) + 1))
        for d in rng.choice(len(docs), size=n, replace=False):
            qid.append(u)
            docno.append(docs[int(d)])
            score.append(float(rng.integers(0, 4)) / 2 - 0.5)  # many ties: docno decides
            rel.append(int(rng.choice([0, 0, 1, 2, -1])))
    order = rng.permutation(len(qid))  # users interleaved, as in a log
    mask = rng.random(len(rel)) < 0.1 if nulls else None
    return pa.table(
        {
            "qid": pa.array(qid, qtype).take(pa.array(order)),
            "docno": pa.array(docno, dtype).take(pa.array(order)),
            "score": pa.array(score).take(pa.array(order)),
            "rel": pa.array(rel, pa.int8(), mask=mask).take(pa.array(order)),
        }
    )


def _general(spec: str):
    return _read_labelled(open_dataset(spec, "labelled table"), {}, False)


def _check(spec: str) -> None:
    got, ref = read_labelled(spec), _general(spec)
    assert isinstance(got.run, LogRun)
    np.testing.assert_array_equal(got.labels, ref.labels)
    np.testing.assert_array_equal(got.has, ref.has)
    for opts in [EvalOptions(), EvalOptions(ties="input"), EvalOptions(judged_only=True)]:
        fresh = read_labelled(spec)
        fast = build_labelled_table(fresh.run, fresh.labels, fresh.has, opts)
        assert fast is not None
        same_log_tables(fast, build_table(ref.qrels, ref.run, opts, doc_dict=False))
    for name in ("qid", "docno", "score", "lineno"):  # the texts, when asked for
        x, y = getattr(got.run, name), getattr(ref.run, name)
        assert x.equals(y) if isinstance(x, pa.Array) else np.array_equal(x, y), name
    for opts in ({}, {"judged_only": True}, {"complete": True}):
        ev = evaluate(None, spec, MEASURES, labelled=True, **opts)
        want = evaluate(ref.qrels, ref.run, MEASURES, **opts)  # Qrels + Run: the join
        assert ev.per_query.equals(want.per_query) and ev.summary.equals(want.summary)


@pytest.mark.parametrize("dtype", TYPES, ids=str)
def test_integer_ids_read_as_numbers_are_what_the_general_reading_gives(tmp_path, dtype):
    t = _table(np.random.default_rng(dtype.bit_width), dtype, dtype)
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=37)
    _check(str(tmp_path / "t.parquet"))


@pytest.mark.parametrize(
    "qtype, dtype", [(pa.int64(), pa.string()), (pa.string(), pa.int32()), (pa.int8(), pa.uint64())], ids=str
)
def test_integer_and_decimal_text_columns_mixed(tmp_path, qtype, dtype):
    t = _table(
        np.random.default_rng(7),
        pa.int64() if qtype == pa.string() else qtype,
        pa.int64() if dtype == pa.string() else dtype,
    )
    for col, typ in (("qid", qtype), ("docno", dtype)):
        if typ == pa.string():  # canonical decimal texts: the values from 0 to 10**15 - 1
            v = t.column(col).to_numpy()
            t = t.filter(pa.array((v >= 0) & (v < 10**15)))
            t = t.set_column(t.column_names.index(col), col, t.column(col).cast(pa.string()))
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=41)
    _check(str(tmp_path / "t.parquet"))


def test_integer_ids_in_several_files_and_a_hive_directory(tmp_path):
    t = _table(np.random.default_rng(11), pa.int64(), pa.int32(), nulls=False)
    step = -(-t.num_rows // 3)
    for i in range(3):
        (tmp_path / "log" / f"day=2026-11-{i + 1:02d}").mkdir(parents=True)
        pq.write_table(t.slice(i * step, step), tmp_path / "log" / f"day=2026-11-{i + 1:02d}" / "part-0.parquet")
    _check(str(tmp_path / "log"))


def test_a_hive_key_the_reading_takes_is_left_to_the_general_reading(tmp_path):
    t = _table(np.random.default_rng(12), pa.int64(), pa.int64(), nulls=False)
    for u in (3, 5):  # qid from the directories: the files lack it
        (tmp_path / "log" / f"qid={u}").mkdir(parents=True)
        pq.write_table(t.drop(["qid"]).slice(0, 20 + u), tmp_path / "log" / f"qid={u}" / "p.parquet")
    spec = str(tmp_path / "log")
    got, ref = read_labelled(spec), _general(spec)
    assert not isinstance(got.run, LogRun)
    assert got.run.qid.equals(ref.run.qid)


@pytest.mark.parametrize(
    "column, values, error, numbers",
    [
        ("qid", pa.array([1, None, 2], pa.int64()), "no qid value", False),
        ("docno", pa.array([5, 6, None], pa.int16()), "no docno value", False),
        ("docno", pa.array([5, 2**63, 6], pa.uint64()), None, False),  # past int64: texts only
        ("qid", pa.array([1.0, 1.0, 2.0]), None, False),  # floats: '1' from the general reading
        ("qid", pa.array([-1, -1, 2], pa.int64()).dictionary_encode(), None, True),  # (read back plain)
    ],
)
def test_integer_ids_the_numbers_do_not_cover(tmp_path, column, values, error, numbers):
    cols = {"qid": pa.array([1, 1, 2]), "docno": pa.array([5, 6, 5]), "score": [1.0, 2.0, 3.0], "rel": [1, 0, 1]}
    cols[column] = values
    pq.write_table(pa.table(cols), tmp_path / "t.parquet")
    spec = str(tmp_path / "t.parquet")
    if error is not None:
        with pytest.raises(InputError, match=error):
            read_labelled(spec)
        return
    got = read_labelled(spec)
    assert isinstance(got.run, LogRun) == numbers
    ev = evaluate(None, spec, MEASURES, labelled=True)
    ref = _general(spec)
    want = evaluate(ref.qrels, ref.run, MEASURES)
    assert ev.per_query.equals(want.per_query) and ev.summary.equals(want.summary)


@pytest.mark.parametrize("dtype", [pa.int8(), pa.int64(), pa.uint64()], ids=str)
@pytest.mark.parametrize(
    "flags",
    [["-q"], ["-q", "-c"], ["-q", "-J"], ["-q", "-M", "3"], ["-q", "--ties", "input"]],
    ids=lambda f: " ".join(f),
)
def test_integer_ids_give_the_general_readings_cli_bytes(tmp_path, cli, monkeypatch, dtype, flags):
    t = _table(np.random.default_rng(21), dtype, dtype)
    pq.write_table(t, tmp_path / "t.parquet", row_group_size=29)
    assert isinstance(read_labelled(str(tmp_path / "t.parquet")).run, LogRun)
    args = ["--labelled", *flags, "-m", "map", "-m", "ndcg_cut.5", "-m", "P.5", "-m", "gauc", "--format", "json"]
    fast = cli([*args, str(tmp_path / "t.parquet")])
    text = cli(["--labelled", *flags, "-m", "map", "-m", "ndcg_cut.5", str(tmp_path / "t.parquet")])
    monkeypatch.setattr(dataset, "read_log", lambda ds, columns: None)  # the general reading
    slow = cli([*args, str(tmp_path / "t.parquet")])
    slow_text = cli(["--labelled", *flags, "-m", "map", "-m", "ndcg_cut.5", str(tmp_path / "t.parquet")])
    assert fast.code == slow.code == 0, (fast, slow)
    assert fast.out == slow.out and text.out == slow_text.out
    assert fast.out.count(b"\n") > 10
