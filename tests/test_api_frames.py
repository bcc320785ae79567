"""The Python API on DataFrames, as the README describes it: ``columns=`` names the columns
(as ``--column`` does for a file) and ``ties="rank"`` orders by the rank column.

Hand-computed: topic 1 judges a relevant, b not; topic 2 judges c relevant. By score, b (2.0)
comes before a (1.0): AP 1/2 for topic 1, 1 for topic 2, MAP 0.75. By the rank column (a 1,
b 2), a comes first: MAP 1.0.
"""

from __future__ import annotations

import pandas as pd
import pytest

from irevalcli import evaluate
from irevalcli.errors import InputError


def _map(qrels, run, **kw) -> float:
    return float(evaluate(qrels, run, "map", **kw).summary.set_index("measure").loc["map", "value"])


QRELS = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "rel": [1, 0, 1]})
RUN = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "score": [1.0, 2.0, 3.0], "rank": [1, 2, 1]})


def test_columns_name_a_dataframes_columns():
    qrels = QRELS.rename(columns={"qid": "topic", "docno": "doc", "rel": "grade"})
    run = RUN.rename(columns={"qid": "topic", "docno": "doc", "score": "sim"})
    both = {"qid": "topic", "docno": "doc", "rel": "grade", "score": "sim"}
    assert _map(qrels, run, columns=both) == 0.75
    assert _map(qrels, run, columns=both, ties="rank") == 1.0


def test_a_named_column_that_is_missing_is_named():
    run = RUN.rename(columns={"score": "sim"})
    with pytest.raises(InputError) as err:
        evaluate(QRELS, run, "map", columns={"score": "similarity"})
    assert str(err.value) == (
        "<run DataFrame>: the run DataFrame has no column 'similarity' (columns['score']; "
        "columns: qid, docno, sim, rank)"
    )


def test_ties_rank_orders_a_dataframe_by_its_rank_column():
    assert _map(QRELS, RUN) == 0.75
    assert _map(QRELS, RUN, ties="rank") == 1.0
    # a rank column and no score, as a file may have: ranked by it
    assert _map(QRELS, RUN.drop(columns="score"), ties="rank") == 1.0
    renamed = RUN.drop(columns="score").rename(columns={"rank": "pos"})
    assert _map(QRELS, renamed, ties="rank", columns={"rank": "pos"}) == 1.0
    # columns={"rank": NAME} without a score ranks by it under any rule (score = -rank)
    assert _map(QRELS, renamed, columns={"rank": "pos"}) == 1.0


def test_ties_rank_without_a_rank_column_is_refused():
    with pytest.raises(InputError) as err:
        evaluate(QRELS, RUN.drop(columns="rank"), "map", ties="rank")
    assert str(err.value) == (
        "<run DataFrame>: the run DataFrame has no rank column, which ties='rank' orders by "
        "(columns: qid, docno, score)"
    )
