"""One Job for every engine (issue 23): the whole-qrels facts computed once, and the engines
tried as one ordered chain by ``api.evaluate``."""

from __future__ import annotations

import dataclasses

import pytest

from irevalcli import api, evaluate
from irevalcli.core.table import EvalOptions
from irevalcli.engine.evaluate import Column, Results
from irevalcli.engine.job import Job, whole_qrels_facts
from irevalcli.io.judgements import load_judgements
from irevalcli.io.trec import Run, Source, parse_qrels
from irevalcli.measures.names import resolve
from irevalcli.output.formatters import format_trec
from tests.conftest import write

QRELS = "1 0 a 2\n1 0 b 0\n2 0 c 1\n2 0 d 3\n3 0 e -1\n"
GROUPED = "1 Q0 a 1 3 r\n1 Q0 x 2 2 r\n2 Q0 c 1 5 r\n2 Q0 d 2 4 r\n3 Q0 e 1 1 r\n"
UNGROUPED = "1 Q0 a 1 3 r\n2 Q0 c 1 5 r\n1 Q0 x 2 2 r\n3 Q0 e 1 1 r\n2 Q0 d 2 4 r\n"


def test_whole_qrels_facts_are_counted_by_hand():
    q = parse_qrels(Source("q", QRELS.encode(), ""))
    # topics 1, 2, 3; rel > 0: a, c, d; the highest label: d's 3
    assert whole_qrels_facts(q) == (3, 3, 3)
    job = Job.of(q, resolve(["map"]), EvalOptions())
    assert (job.num_qrels_topics, job.num_rel_complete, job.max_label) == (3, 3, 3)
    assert job.requests == tuple(resolve(["map"]))
    only_negative = parse_qrels(Source("q", b"7 0 a -1\n7 0 b -2\n", ""))
    assert whole_qrels_facts(only_negative) == (1, 0, -1)
    assert whole_qrels_facts(None) == (0, 0, 0)


def test_judgement_formats_have_topics_but_no_labels_to_count(tmp_path):
    prefs = write(tmp_path / "prefs", "1 jg1 s1 a 2\n1 jg1 s1 b 1\n4 jg1 s1 c 1\n")
    assert whole_qrels_facts(load_judgements(prefs, "prefs")) == (2, 0, 0)


def test_a_job_cannot_be_changed_only_replaced():
    job = Job.of(parse_qrels(Source("q", QRELS.encode(), "")), resolve(["map"]), EvalOptions())
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.max_label = 9  # type: ignore[misc]
    assert dataclasses.replace(job, max_label=9).max_label == 9


def test_the_engines_are_one_ordered_chain():
    assert [e.name for e in api.ENGINES] == ["dask", "streamed", "out of core", "DataFrame in parts", "whole"]


@pytest.mark.parametrize(
    ("run_text", "stream", "tried"),
    [
        (GROUPED, False, ["whole"]),
        (GROUPED, True, ["streamed"]),
        # not grouped by topic: the streamed engine declines, out of core finds that it fits
        # in memory and declines too, and the whole engine takes it
        (UNGROUPED, True, ["streamed", "out of core", "whole"]),
    ],
)
def test_each_engine_is_given_the_one_job_and_may_decline(tmp_path, monkeypatch, run_text, stream, tried):
    q = write(tmp_path / "q", QRELS)
    run = write(tmp_path / "run", run_text)
    seen: list[tuple[str, Job]] = []

    def watched(choice):
        def run_(job, given):
            seen.append((choice.name, job))
            return choice.run(job, given)

        return choice.replaced(run=run_)

    monkeypatch.setattr(api, "ENGINES", tuple(watched(c) for c in api.ENGINES))
    got = evaluate(q, run, ["all_trec"], stream=stream, complete=True)
    assert [name for name, _ in seen] == tried
    jobs = {id(job) for _, job in seen}
    assert len(jobs) == 1  # one job, made once
    job = seen[0][1]
    assert (job.num_qrels_topics, job.num_rel_complete, job.max_label) == (3, 3, 3)
    assert job.opts.complete
    whole = evaluate(q, run, ["all_trec"], stream=False, complete=True)
    assert format_trec(got.results, per_query=True) == format_trec(whole.results, per_query=True)


def test_a_new_engine_is_one_entry_in_the_chain(tmp_path, monkeypatch):
    """An engine put first in the chain takes the job; one that declines leaves the run to the next."""
    q = write(tmp_path / "q", QRELS)
    run = write(tmp_path / "run", GROUPED)
    whole = evaluate(q, run, ["map", "num_rel"], stream=False)

    def declines(job, given):
        return None

    def takes(job, given):
        return api.Evaluation(
            Results(["1"], [Column("num_rel", "num_rel", "int", None, job.num_rel_complete)], 1, "probe"),
            job.qrels,
            Run.empty("probe", "probe"),
        )

    monkeypatch.setattr(api, "ENGINES", (api.EngineChoice("declines", lambda g: True, declines), *api.ENGINES))
    assert format_trec(evaluate(q, run, ["map", "num_rel"]).results) == format_trec(whole.results)
    monkeypatch.setattr(api, "ENGINES", (api.EngineChoice("probe", lambda g: True, takes), *api.ENGINES))
    assert format_trec(evaluate(q, run, ["map"]).results) == b"num_rel               \tall\t3\n"


@pytest.mark.parametrize(("rel_format", "stream"), [("qrels", False), ("qrels", True), ("prefs", False)])
def test_the_d_and_c_rules_say_the_same_for_every_table_and_engine(cli, tmp_path, stream, rel_format):
    """-D's topic not judged, and a judged topic without results (no -c): one wording, from
    core.table, for plain qrels and the -R formats, whole or streamed."""
    if rel_format == "qrels":
        q = write(tmp_path / "q", "1 0 a 1\n2 0 b 1\n")
        m = "map"
    else:
        q = write(tmp_path / "q", "1 jg1 s a 2\n1 jg1 s b 1\n2 jg1 s c 1\n")
        m = "prefs_simp"
    run = write(tmp_path / "r", "1 Q0 a 1 3 r\n")
    flags = ["-R", rel_format, "-m", m, "--stream" if stream else "--no-stream"]
    res = cli([*flags, "-D", "1.9", q, run])
    where = "the qrels" if rel_format == "qrels" else str(q)
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: -D: topic '9' is not in {where}: nothing to evaluate\n"
    res = cli([*flags, q, run])
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: {run}: topic '2' is judged in {q} but has no results in the run (use -c to score missing topics as 0)\n"
    )
