"""Every table a Python user holds enters evaluate() as a file would (issue 22 item 4):
pyarrow Tables and RecordBatches, anything exporting Arrow data (Polars), Arrow-backed pandas
columns handed over without a copy, bytes ids as their bytes, float ids in subtopics."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from irevalcli import evaluate
from irevalcli.api import qrels_from_frame, run_from_frame
from irevalcli.errors import InputError
from irevalcli.io.frames import frame_to_binary
from irevalcli.io.subtopics import load_subtopics
from irevalcli.output.formatters import format_trec
from tests.conftest import TREC_EVAL


def _rows(path: Path, width: int) -> list[list[str]]:
    return [line.split()[:width] for line in path.read_text().splitlines() if line.strip()]


def qrels_table() -> pa.Table:
    rows = _rows(TREC_EVAL / "qrels.test", 4)
    return pa.table({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows], "rel": [int(r[3]) for r in rows]})


def run_table() -> pa.Table:
    rows = _rows(TREC_EVAL / "results.test", 6)
    return pa.table(
        {
            "qid": [r[0] for r in rows],
            "docno": [r[2] for r in rows],
            "score": [float(r[4]) for r in rows],
            "runid": [r[5] for r in rows],
        }
    )


def trec(ev) -> bytes:
    return format_trec(ev.results, per_query=True)


@pytest.fixture(scope="module")
def want() -> bytes:
    return trec(evaluate(TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", ["all_trec"]))


class Stream:
    """A table known only by the Arrow C stream interface (as Polars, DuckDB, ... export it)."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema=None):
        return self.table.__arrow_c_stream__(requested_schema)


@pytest.mark.parametrize(
    "wrap",
    [
        lambda t: t,
        lambda t: t.combine_chunks().to_batches()[0],
        Stream,
        lambda t: pa.Table.from_batches(t.to_batches(max_chunksize=100)),  # many chunks
    ],
    ids=["Table", "RecordBatch", "C stream", "chunked"],
)
def test_arrow_tables_print_what_the_files_print(want, wrap):
    assert trec(evaluate(wrap(qrels_table()), wrap(run_table()), ["all_trec"])) == want


def test_integer_and_dictionary_arrow_ids_are_the_text_a_file_holds(want):
    q, r = qrels_table(), run_table()
    q = q.set_column(0, "qid", q["qid"].cast(pa.int32()))
    r = r.set_column(0, "qid", r["qid"].cast(pa.int64())).set_column(1, "docno", r["docno"].dictionary_encode())
    assert trec(evaluate(q, r, ["all_trec"])) == want


def test_polars_frames_print_what_the_files_print(want):
    pl = pytest.importorskip("polars")
    q, r = pl.from_arrow(qrels_table()), pl.from_arrow(run_table())
    assert trec(evaluate(q, r, ["all_trec"])) == want
    cat = r.with_columns(pl.col("docno").cast(pl.Categorical), pl.col("qid").cast(pl.Int64))
    assert trec(evaluate(q, cat, ["all_trec"])) == want


def test_bytes_ids_are_their_bytes():
    """A bytes id is the id a file holding those bytes has (not the text "b'd1'")."""
    q = pd.DataFrame({"qid": [b"1", b"1"], "docno": [b"d1", b"d2"], "rel": [1, 0]})
    r = pa.table({"qid": pa.array([b"1", b"1"]), "docno": pa.array([b"d2", b"d1"]), "score": [2.0, 1.0]})
    assert qrels_from_frame(q).docno.to_pylist() == [b"d1", b"d2"]
    ev = evaluate(q, r, "map")
    assert ev.summary["value"].tolist() == [0.5]  # d1, the one relevant document, at rank 2


def test_arrow_backed_columns_and_double_scores_are_not_copied():
    df = pd.DataFrame(
        {"qid": pd.array(["1", "1"], dtype="string[pyarrow]"), "docno": ["d1", "d2"], "score": [2.0, 1.0]}
    )
    column = df["qid"].array.__arrow_array__()
    assert column.num_chunks == 1
    got = frame_to_binary(df, "qid", "<run DataFrame>")
    assert got.buffers()[2].address == column.chunk(0).buffers()[2].address
    run = run_from_frame(df)
    assert np.shares_memory(run.score, df["score"].to_numpy())


def test_a_many_chunk_arrow_column_is_joined_once():
    df = pd.DataFrame({"qid": pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([["1", "1"], ["2"]])))})
    assert frame_to_binary(df, "qid", "x").to_pylist() == [b"1", b"1", b"2"]


def test_float_subtopic_ids_are_the_integers_a_file_holds():
    sub = load_subtopics(
        pd.DataFrame({"qid": [301.0, 301.0], "subtopic": [1.0, 2.0], "docno": ["a", "a"], "rel": [1, 0]})
    )
    assert sub.qid.to_pylist() == [b"301", b"301"] and sub.subtopic.to_pylist() == [b"1", b"2"]
    with pytest.raises(InputError) as err:
        load_subtopics(pd.DataFrame({"qid": [301.5], "subtopic": [1], "docno": ["a"], "rel": [1]}))
    assert str(err.value) == (
        "<subtopics DataFrame>:1: column 'qid' holds 301.5, which is not an id: ids are strings or integers"
    )
    sub = load_subtopics(pa.table({"qid": [301], "subtopic": ["s"], "docno": ["a"], "rel": [1]}))
    assert sub.qid.to_pylist() == [b"301"]


@pytest.mark.parametrize(
    "docno",
    [
        pd.Series(["d1", None], dtype=object),
        pd.Series(["d1", np.nan], dtype=object),
        pd.Series(["d1", None], dtype="string[pyarrow]"),
        pd.Series(pd.Categorical(["d1", None])),
        pd.Series([1, None], dtype="Int64"),
        pd.Series(["d1", None], dtype=pd.ArrowDtype(pa.large_string())),
    ],
    ids=["object None", "object NaN", "string[pyarrow]", "categorical", "Int64", "ArrowDtype"],
)
def test_a_missing_id_is_refused_in_every_column_type(docno):
    df = pd.DataFrame({"qid": ["1", "1"], "docno": docno, "score": [2.0, 1.0]})
    with pytest.raises(InputError) as err:
        run_from_frame(df)
    assert str(err.value) == "<run DataFrame>:2: column 'docno' is empty (missing value)"
