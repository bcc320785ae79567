"""A DataFrame run grouped by topic is scored in parts of whole topics (api._frame_parts,
issue 22 item 4): the same bytes as the path route's one table, the same errors in the
same order; a run not grouped by topic is one table, as before."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from irevalcli import api, evaluate
from irevalcli.engine import parts
from irevalcli.errors import DuplicateDocError, MissingTopicError
from irevalcli.output.formatters import format_trec
from tests.conftest import TREC_EVAL


def _rows(path: Path, width: int) -> list[list[str]]:
    return [line.split()[:width] for line in path.read_text().splitlines() if line.strip()]


def qrels_frame(path: Path) -> pd.DataFrame:
    df = pd.DataFrame(_rows(path, 4), columns=["qid", "iter", "docno", "rel"])
    return df.assign(rel=df["rel"].astype(int))[["qid", "docno", "rel"]]


def run_frame(path: Path) -> pd.DataFrame:
    df = pd.DataFrame(_rows(path, 6), columns=["qid", "q0", "docno", "rank", "score", "runid"])
    return df.assign(score=df["score"].astype(float), rank=df["rank"].astype(int))


@pytest.fixture
def scored_parts(monkeypatch):
    """The number of parts score_part was called for, in parts of ``rows`` rows."""
    calls: list[int] = []
    real = parts.score_part

    def spy(job, run, **kw):
        calls.append(len(run))
        return real(job, run, **kw)

    monkeypatch.setattr(parts, "score_part", spy)

    def use(rows: int) -> list[int]:
        monkeypatch.setattr(api, "FRAME_PART_ROWS", rows)
        return calls

    return use


def trec(ev) -> bytes:
    return format_trec(ev.results, per_query=True)


@pytest.mark.parametrize("rows", [1, 1000, 1 << 16])
@pytest.mark.parametrize(
    "opts",
    [
        {},
        {"complete": True},
        {"complete": True, "max_docs": 100},
        {"rel_level": 2},
        {"judged_only": True},
        {"ties": "input"},
        {"ties": "rank"},
        {"zscores": TREC_EVAL / "zscores_file"},
        {"compat": "9.0.8"},
    ],
)
def test_a_grouped_frame_in_parts_prints_what_the_file_prints(scored_parts, rows, opts):
    q = TREC_EVAL / ("qrels.rel_level" if opts.get("rel_level") else "qrels.test")
    r = TREC_EVAL / "results.test"
    calls = scored_parts(rows)
    got = evaluate(qrels_frame(q), run_frame(r), ["all_trec"], **opts)
    want = evaluate(q, r, ["all_trec"], stream=False, **opts)
    assert trec(got) == trec(want)
    assert got.results.runid == "STANDARD"
    assert sum(calls) == 1500 and len(calls) == {1: 3, 1000: 2, 1 << 16: 1}[rows]  # 3 topics of 500 rows


def test_missing_topics_under_complete_are_scored_once(scored_parts, tmp_path):
    """Topics judged but absent from the run: -c's placeholders, from finish, not from a part."""
    q, r = TREC_EVAL / "qrels.test", tmp_path / "run"
    r.write_text("".join(x for x in (TREC_EVAL / "results.test").read_text().splitlines(True) if x[:3] != "302"))
    run = run_frame(r)
    calls = scored_parts(100)
    got = evaluate(qrels_frame(q), run, ["official"], complete=True)
    want = evaluate(q, r, ["official"], complete=True, stream=False)
    assert trec(got) == trec(want) and got.results.qids == ["301", "302", "303"]
    assert calls == [500, 500]
    with pytest.raises(MissingTopicError) as err:
        evaluate(qrels_frame(q), run, ["map"])
    assert str(err.value) == (
        "<run DataFrame>: topic '302' is judged in <qrels DataFrame> but has no results in the run "
        "(use complete=True to score missing topics as 0)"
    )


def test_a_frame_not_grouped_by_topic_is_one_table(scored_parts):
    q, r = TREC_EVAL / "qrels.test", TREC_EVAL / "results.trunc"  # 301, 303, 301, ...
    calls = scored_parts(1)
    got = evaluate(qrels_frame(q), run_frame(r), ["all_trec"], complete=True)
    assert trec(got) == trec(evaluate(q, r, ["all_trec"], complete=True, stream=False))
    assert calls == []


def _duplicated(run: pd.DataFrame, *rows: int) -> pd.DataFrame:
    """``run`` with row i's docno given to row i + 1 (same topic) for each i of ``rows``."""
    run = run.copy()
    for i in rows:
        run.loc[run.index[i + 1], "docno"] = run["docno"].iloc[i]
    return run


@pytest.mark.parametrize("rows", [1, 100, 1 << 16])
def test_the_earliest_duplicate_is_named_as_one_table_names_it(scored_parts, rows):
    q = qrels_frame(TREC_EVAL / "qrels.test")
    run = _duplicated(run_frame(TREC_EVAL / "results.test"), 1000, 40)  # topics of rows 1000 and 40
    scored_parts(rows)
    with pytest.raises(DuplicateDocError) as err:
        evaluate(q, run, ["map"])
    assert str(err.value) == (
        "<run DataFrame>:42: document 'FR940804-0-00125' is retrieved twice for topic '301' (first at line 41)"
    )


@pytest.mark.parametrize("rows", [1, 100])
def test_a_judgement_given_twice_is_named_before_a_duplicate_document(scored_parts, rows):
    """One table checks the judgements before the run's rows: so do the parts, whichever
    part finds a duplicate document first."""
    q = qrels_frame(TREC_EVAL / "qrels.test")
    q = pd.concat([q, q.iloc[[3000]]], ignore_index=True)  # judged twice: line 3682
    run = _duplicated(run_frame(TREC_EVAL / "results.test"), 40)
    scored_parts(rows)
    with pytest.raises(DuplicateDocError) as err:
        evaluate(q, run, ["map"])
    doc, topic = q["docno"].iloc[3000], q["qid"].iloc[3000]
    assert str(err.value) == (
        f"<qrels DataFrame>:3682: document '{doc}' is judged twice for topic '{topic}' (first at line 3001)"
    )
    # and a missing topic before either
    with pytest.raises(MissingTopicError) as err:
        evaluate(q, run[run["qid"] != "303"], ["map"])
    assert str(err.value).startswith("<run DataFrame>: topic '303' is judged in <qrels DataFrame> but has no results")


@pytest.mark.parametrize("rows", [1, 499, 1000])
@pytest.mark.parametrize("chunk", [7, 500, 1 << 16])
def test_arrow_chunks_inside_and_across_parts(scored_parts, rows, chunk):
    """An Arrow-backed run read in chunks (as pandas.read_csv gives it): each part joins only
    its own rows' chunks; the values and the run kept on the Evaluation are the file's."""
    import pyarrow as pa

    q, r = TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"
    table = pa.Table.from_pandas(run_frame(r), preserve_index=False)
    run = pa.Table.from_batches(table.to_batches(max_chunksize=chunk)).to_pandas(types_mapper=pd.ArrowDtype)
    calls = scored_parts(rows)
    got = evaluate(qrels_frame(q), run, ["all_trec"])
    assert trec(got) == trec(evaluate(q, r, ["all_trec"], stream=False))
    assert sum(calls) == 1500
    assert got.run.qid.to_pylist() == [x.encode() for x in table["qid"].to_pylist()]
    assert got.run.docno.to_pylist() == [x.encode() for x in table["docno"].to_pylist()]


@pytest.mark.parametrize("rows", [1, 1000])
def test_diversity_measures_with_subtopics_in_parts(scored_parts, tmp_path, rows):
    """Subtopic judgements (a DataFrame too) reach every part, as they reach a streamed file's."""
    q, r = TREC_EVAL / "qrels.test", TREC_EVAL / "results.test"
    rows_q = _rows(q, 4)
    sub = pd.DataFrame(
        [(qid, s, doc, (i + s) % 2) for i, (qid, _, doc, _) in enumerate(rows_q) for s in (1, 2, 3) if (i * s) % 3],
        columns=["qid", "subtopic", "docno", "rel"],
    )
    path = tmp_path / "sub"
    path.write_text("".join(f"{a} {b} {c} {d}\n" for a, b, c, d in sub.itertuples(index=False)))
    measures = ["alpha_ndcg_cut.5,10", "err_ia_cut.5,20", "nrbp", "map_ia"]
    calls = scored_parts(rows)
    got = evaluate(qrels_frame(q), run_frame(r), measures, subtopics=sub)
    assert trec(got) == trec(evaluate(q, r, measures, subtopics=path, stream=False))
    assert len(calls) == {1: 3, 1000: 2}[rows]
