"""The fast input paths give what the general ones give: labelled tables read once and
ranked without a join (irevalcli.core.labelled), DataFrame id columns converted by Arrow
(irevalcli.io.frames)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from irevalcli.api import evaluate, qrels_from_frame, run_from_frame
from irevalcli.core.labelled import build_labelled_table
from irevalcli.core.table import EvalOptions, build_table
from irevalcli.errors import DuplicateDocError, InputError
from irevalcli.io.dataset import read_labelled

MEASURES = ["gauc", "auc", "ndcg_cut.10", "recip_rank", "map", "P.5", "num_rel_ret", "bpref"]


def _log(rng: np.random.Generator, users: int = 40, numeric: bool = True) -> pd.DataFrame:
    rows = []
    for u in range(users):
        n = int(rng.integers(1, 30))
        docs = rng.choice(5000, size=n, replace=False)
        for d in docs:
            rows.append(
                {
                    "qid": f"u{u % 37}" if u < 37 else f"{u}",
                    "docno": str(int(d)) if numeric else f"D-{int(d):05d}",
                    "score": float(rng.integers(0, 6)) / 4,  # many ties
                    "rel": int(rng.choice([0, 0, 0, 1, 2, -1])),
                }
            )
    df = pd.DataFrame(rows).drop_duplicates(["qid", "docno"])
    return df.sample(frac=1.0, random_state=int(rng.integers(1 << 30))).reset_index(drop=True)


def _write(df: pd.DataFrame, path, null_every: int = 0) -> None:
    rel = pa.array(df["rel"].to_numpy(), pa.int64())
    if null_every:
        mask = np.arange(len(df)) % null_every == 0
        rel = pa.array(np.where(mask, 0, df["rel"].to_numpy()), pa.int64(), mask=mask)
    table = pa.table({"qid": df["qid"].astype(str), "docno": df["docno"].astype(str), "score": df["score"], "rel": rel})
    pq.write_table(table, path)


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
            continue  # build_table keeps the docnos it dictionary-encoded (only diversity measures read them)
        x, y = getattr(a, name), getattr(b, name)
        if isinstance(x, np.ndarray):
            assert x.dtype == y.dtype, name
            np.testing.assert_array_equal(x, y, err_msg=name)
        else:
            assert x == y, name


OPTIONS = [
    EvalOptions(),
    EvalOptions(judged_only=True),
    EvalOptions(complete=True),
    EvalOptions(compat="9.0.8"),
    EvalOptions(ties="input"),
    EvalOptions(rel_level=2),
]


@pytest.mark.parametrize("numeric", [True, False])
@pytest.mark.parametrize("null_every", [0, 3])
@pytest.mark.parametrize("opts", OPTIONS, ids=lambda o: repr(o)[:60])
def test_labelled_table_equals_the_joined_one(tmp_path, numeric, null_every, opts):
    rng = np.random.default_rng(7 + numeric + null_every)
    path = tmp_path / "log.parquet"
    _write(_log(rng, numeric=numeric), path, null_every)
    got = read_labelled(str(path))
    fast = build_labelled_table(got.run, got.labels, got.has, opts)
    assert fast is not None
    _same_table(fast, build_table(got.qrels, got.run, opts, doc_dict=False))


def test_labelled_table_users_without_labels_are_not_evaluated(tmp_path):
    df = pd.DataFrame(
        {"qid": ["a", "a", "b", "b", "c"], "docno": ["1", "2", "1", "3", "9"], "score": [1.0, 2.0, 3.0, 3.0, 1.0]}
    )
    rel = pa.array([1, 0, None, None, 0], pa.int64())
    pq.write_table(pa.table({**{k: df[k] for k in df}, "rel": rel}), tmp_path / "t.parquet")
    got = read_labelled(str(tmp_path / "t.parquet"))
    fast = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert fast is not None and fast.qids == ["a", "c"]
    _same_table(fast, build_table(got.qrels, got.run, EvalOptions(), doc_dict=False))


@pytest.mark.parametrize("docnos", [["7", "7"], ["D1", "D1"]])
def test_labelled_duplicates_are_refused_as_before(tmp_path, docnos):
    pq.write_table(
        pa.table({"qid": ["q", "q", "q"], "docno": [*docnos, "8"], "score": [1.0, 2.0, 3.0], "rel": [1, 0, 1]}),
        tmp_path / "dup.parquet",
    )
    got = read_labelled(str(tmp_path / "dup.parquet"))
    assert build_labelled_table(got.run, got.labels, got.has, EvalOptions()) is None
    with pytest.raises(DuplicateDocError) as e:
        evaluate(None, str(tmp_path / "dup.parquet"), "auc", labelled=True)
    name = str(tmp_path / "dup.parquet")
    assert str(e.value) == f"{name}:2: document '{docnos[0]}' is judged twice for topic 'q' (first at line 1)"


def test_labelled_numeric_lookalikes_are_not_duplicates(tmp_path):
    """'7' and '07' are different documents; the integer check only sends them to the join."""
    path = tmp_path / "t.parquet"
    pq.write_table(
        pa.table({"qid": ["q", "q", "q"], "docno": ["7", "07", "8"], "score": [1.0, 2.0, 3.0], "rel": [1, 0, 1]}), path
    )
    ev = evaluate(None, str(path), ["auc", "recip_rank"], labelled=True)
    assert ev.summary.set_index("measure")["value"].to_dict() == {"auc": 0.5, "recip_rank": 1.0}


def test_labelled_results_are_the_same_through_either_table(tmp_path):
    rng = np.random.default_rng(11)
    path = tmp_path / "log.parquet"
    _write(_log(rng, users=80), path, 5)
    for opts in ({}, {"judged_only": True}, {"max_docs": 5}, {"only_query": "u3"}):
        ev = evaluate(None, str(path), MEASURES, labelled=True, **opts)
        got = read_labelled(str(path))
        ref = evaluate(got.qrels, got.run, MEASURES, **opts)  # Qrels + Run: always the join
        pd.testing.assert_frame_equal(ev.per_query, ref.per_query)
        pd.testing.assert_frame_equal(ev.summary, ref.summary)


# ---- DataFrames ------------------------------------------------------------------


def _frames(rng: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    df = _log(rng, users=60)
    run = df[["qid", "docno", "score"]].copy()
    qrels = df[df["rel"] >= 0][["qid", "docno", "rel"]].copy()
    return qrels, run


KINDS = {
    "object": lambda s: s.astype(object),
    "arrow": lambda s: s.astype(pd.ArrowDtype(pa.string())),
    "arrow_large": lambda s: s.astype(pd.ArrowDtype(pa.large_string())),
    "string": lambda s: s.astype("string"),
    "category": lambda s: s.astype("category"),
    "arrow_dict": lambda s: pd.Series(
        pd.arrays.ArrowExtensionArray(pa.array(s.tolist()).dictionary_encode()), index=s.index
    ),
}


@pytest.mark.parametrize("kind", list(KINDS))
def test_dataframe_id_columns_of_every_kind_give_the_same_ids(kind):
    qrels, run = _frames(np.random.default_rng(3))
    want = qrels_from_frame(qrels.astype({"qid": object, "docno": object}))
    conv = KINDS[kind]
    got = qrels_from_frame(qrels.assign(qid=conv(qrels["qid"]), docno=conv(qrels["docno"])))
    assert got.qid.equals(want.qid) and got.docno.equals(want.docno)
    r_want = run_from_frame(run)
    r_got = run_from_frame(run.assign(qid=conv(run["qid"]), docno=conv(run["docno"])))
    assert r_got.qid.equals(r_want.qid) and r_got.docno.equals(r_want.docno)
    assert r_got.qid.type == pa.large_binary()
    a = evaluate(qrels, run, MEASURES).summary
    b = evaluate(
        qrels.assign(qid=conv(qrels["qid"]), docno=conv(qrels["docno"])),
        run.assign(qid=conv(run["qid"]), docno=conv(run["docno"])),
        MEASURES,
    ).summary
    pd.testing.assert_frame_equal(a, b)


@pytest.mark.parametrize(
    "values,want",
    [
        (pd.Series([301, 302, -3], dtype="int64"), [b"301", b"302", b"-3"]),
        (pd.Series([301, 302], dtype="uint16"), [b"301", b"302"]),
        (pd.Series([301, 302], dtype="Int64"), [b"301", b"302"]),
        (pd.Series([301, 302], dtype=pd.ArrowDtype(pa.int32())), [b"301", b"302"]),
        (pd.Series([301.0, 7.0]), [b"301", b"7"]),
        (pd.Series([True, False]), [b"True", b"False"]),
        (pd.Series([1, "a", 2.5], dtype=object), [b"1", b"a", b"2.5"]),
        (pd.Series([b"x", "y"], dtype=object), [b"x", b"y"]),  # pandas 3's astype(str) decodes bytes
        (pd.Series(["caf\u00e9", "a\udcffb"], dtype=object), ["caf\u00e9".encode(), b"a\xffb"]),
        (pd.Series([5, 6]).astype("category"), [b"5", b"6"]),
        (pd.Series(["b", "a", "b"]).astype("category"), [b"b", b"a", b"b"]),
    ],
)
def test_dataframe_ids_are_the_text_astype_str_gives(values, want):
    from irevalcli.io.frames import frame_to_binary

    got = frame_to_binary(pd.DataFrame({"qid": values}), "qid", "<df>")
    assert got.type == pa.large_binary()
    assert got.to_pylist() == want


@pytest.mark.parametrize(
    "column",
    [
        pd.Series(["a", None, "c"], dtype=object),
        pd.Series(["a", None, "c"], dtype=pd.ArrowDtype(pa.string())),
        pd.Series(["a", None, "c"], dtype="string"),
        pd.Series(["a", None, "c"]).astype("category"),
        pd.Series([1, None, 3], dtype="Int64"),
    ],
)
def test_dataframe_null_ids_are_refused_with_the_same_message(column):
    df = pd.DataFrame({"qid": column, "docno": ["d1", "d2", "d3"], "score": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError) as e:
        run_from_frame(df)
    assert str(e.value) == "<run DataFrame>:2: column 'qid' is empty (missing value)"


def test_labelled_table_with_undecodable_topic_ids(tmp_path):
    path = tmp_path / "t.parquet"
    qid = pa.array([b"u\xff", b"u\xff", b"v", b"v"], pa.binary())
    pq.write_table(
        pa.table({"qid": qid, "docno": ["1", "2", "1", "2"], "score": [1.0, 2.0, 2.0, 2.0], "rel": [1, 0, 0, 1]}), path
    )
    got = read_labelled(str(path))
    fast = build_labelled_table(got.run, got.labels, got.has, EvalOptions())
    assert fast is not None and fast.qids == ["u\udcff", "v"]
    _same_table(fast, build_table(got.qrels, got.run, EvalOptions(), doc_dict=False))
