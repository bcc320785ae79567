"""DataFrames in the API are checked as the readers check files (issue 21 items 11 and 13):
huge unsigned labels and float ids beyond 2**53 are out of range, not wrapped or overflowed;
a repeated column name is one message, not an AttributeError."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from irevalcli.api import load_qrels, qrels_from_frame, run_from_frame
from irevalcli.errors import InputError
from irevalcli.io.judgements import judgements_from_frame
from irevalcli.io.subtopics import subtopics_from_frame


def _raises(fn, message: str) -> None:
    with pytest.raises(InputError) as err:
        fn()
    assert str(err.value) == message


@pytest.mark.parametrize(
    "col",
    [
        np.array([1, 2**63 + 5], dtype=np.uint64),
        pd.Series([1, 2**63 + 5], dtype=object),
        pd.array([1, 2**63 + 5], dtype="uint64[pyarrow]"),
    ],
    ids=["uint64", "python-int", "arrow-uint64"],
)
def test_huge_unsigned_label_is_out_of_range_in_every_frame_reader(col):
    want = "relevance label '9223372036854775813' is out of range"
    _raises(
        lambda: qrels_from_frame(pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": col})),
        f"<qrels DataFrame>:2: {want}",
    )
    _raises(
        lambda: subtopics_from_frame(
            pd.DataFrame({"qid": ["1", "1"], "subtopic": ["s", "s"], "docno": ["a", "b"], "rel": col})
        ),
        f"<subtopics DataFrame>:2: {want}",
    )
    _raises(
        lambda: judgements_from_frame(
            pd.DataFrame({"qid": ["1", "1"], "jg": ["j", "j"], "docno": ["a", "b"], "rel": col}), "qrels_jg"
        ),
        f"<judgements DataFrame>:2: {want}",
    )


def test_the_reader_words_the_same_label_the_same_way(tmp_path):
    p = tmp_path / "q.txt"
    p.write_text("1 0 a 1\n1 0 b 9223372036854775813\n")
    _raises(lambda: load_qrels(p), f"{p}:2: relevance label '9223372036854775813' is out of range")


def test_largest_signed_label_still_reads():
    q = qrels_from_frame(pd.DataFrame({"qid": ["1"], "docno": ["a"], "rel": np.array([2**62], dtype=np.uint64)}))
    assert q.rel.tolist() == [2**62]


def test_huge_unsigned_rank_is_out_of_range():
    df = pd.DataFrame(
        {"qid": ["1", "1"], "docno": ["a", "b"], "score": [1.0, 2.0], "rank": np.array([1, 2**64 - 1], dtype=np.uint64)}
    )
    _raises(lambda: run_from_frame(df, ranks=True), "<run DataFrame>:2: rank '18446744073709551615' is out of range")


@pytest.mark.parametrize("v", [1e19, -1e19, 2.0**53 + 2])
def test_float_ids_beyond_2_53_are_out_of_range(v):
    df = pd.DataFrame({"qid": [1.0, v], "docno": ["a", "b"], "rel": [1, 1]})
    _raises(lambda: qrels_from_frame(df), f"<qrels DataFrame>:2: 'qid' {v:g} is out of range")
    run = pd.DataFrame({"qid": ["1", "1"], "docno": [3.0, v], "score": [1.0, 2.0]})
    _raises(lambda: run_from_frame(run), f"<run DataFrame>:2: 'docno' {v:g} is out of range")


def test_float_ids_up_to_2_53_are_integers():
    q = qrels_from_frame(pd.DataFrame({"qid": [301.0, 2.0**53], "docno": ["a", "b"], "rel": [1, 1]}))
    assert q.qid.to_pylist() == [b"301", b"9007199254740992"]


def test_repeated_column_names_are_refused_in_every_frame_reader():
    q = pd.DataFrame([["1", "a", 1, 1]], columns=["qid", "docno", "rel", "rel"])
    _raises(
        lambda: qrels_from_frame(q),
        "<qrels DataFrame>: the qrels DataFrame has more than one column named 'rel'; name each once",
    )
    r = pd.DataFrame([["1", "1", "a", 1.0]], columns=["qid", "qid", "docno", "score"])
    _raises(
        lambda: run_from_frame(r),
        "<run DataFrame>: the run DataFrame has more than one column named 'qid'; name each once",
    )
    s = pd.DataFrame([["1", "s", "a", 1, "x"]], columns=["qid", "subtopic", "docno", "rel", "x"]).rename(
        columns={"x": "docno"}
    )
    _raises(
        lambda: subtopics_from_frame(s),
        "<subtopics DataFrame>: the subtopics DataFrame has more than one column named 'docno'; name each once",
    )
    j = pd.DataFrame([["1", "j", "a", 1, 2]], columns=["qid", "jg", "docno", "rel", "rel"])
    _raises(
        lambda: judgements_from_frame(j, "qrels_jg"),
        "<judgements DataFrame>: the judgements DataFrame has more than one column named 'rel'; name each once",
    )


def test_repeated_columns_through_evaluate_are_one_input_error():
    import irevalcli

    q = pd.DataFrame([["1", "a", 1]], columns=["query_id", "query_id", "relevance"])
    r = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    with pytest.raises(InputError, match="more than one column named 'query_id'"):
        irevalcli.evaluate(q, r, ["map"])


def test_a_parquet_file_words_a_huge_unsigned_label_and_rank_the_same_way(tmp_path):
    """The same class in the Parquet reader: a uint64 column past int64 was an ArrowInvalid (exit 3)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from irevalcli.api import load_run

    q = tmp_path / "q.parquet"
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "rel": pa.array([1, 2**63 + 5], pa.uint64())}), q)
    _raises(lambda: load_qrels(q), f"{q}: row 2: relevance label '9223372036854775813' is out of range")
    r = tmp_path / "r.parquet"
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "rank": pa.array([1, 2**64 - 1], pa.uint64())}), r)
    _raises(lambda: load_run(r, columns={"rank": "rank"}), f"{r}: row 2: rank '18446744073709551615' is out of range")
    small = tmp_path / "small.parquet"
    pq.write_table(pa.table({"qid": ["1"], "docno": ["a"], "rel": pa.array([2**62], pa.uint64())}), small)
    assert load_qrels(small).rel.tolist() == [2**62]
