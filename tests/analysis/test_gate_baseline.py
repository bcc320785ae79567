"""ireval gate accept (a locked baseline) and ireval gate calibrate (margins from reruns).

The runs are test_gate's: every topic has one relevant document at rank k, so a topic's
average precision is 1/k and every value here is computed by hand.
"""

from __future__ import annotations

import hashlib
import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
import tomllib

import irevalcli
from irevalcli.version import VERSION
from tests.analysis.test_gate import QRELS, RUNS, ap, run_text
from tests.conftest import write

QRELS_SHA = hashlib.sha256(QRELS.encode()).hexdigest()
AGAIN = "; accept a new baseline (ireval gate accept) or give --allow-rebaseline to score its run again"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    write(tmp_path / "qrels.txt", QRELS)
    for name, ranks in RUNS.items():
        write(tmp_path / name, run_text(ranks, name.split(".")[0]))
    return tmp_path


@pytest.fixture
def gate(cli, data):
    def run(*args):
        return cli(["gate", *map(str, args)], cwd=data)

    return run


@pytest.fixture
def record(gate, data) -> Path:
    res = gate("accept", "qrels.txt", "perfect.txt", "-m", "map", "-m", "P.5", "--output", "base.json")
    assert (res.code, res.out, res.err) == (0, b"", "")
    return data / "base.json"


def edit(path: Path, change) -> None:
    doc = json.loads(path.read_text())
    change(doc)
    path.write_text(json.dumps(doc))


# ---------------------------------------------------------------- accept


def test_record_round_trip(record, data):
    doc = json.loads(record.read_text())
    assert next(iter(doc)) == "ireval_baseline" and doc["ireval_baseline"] == 1
    assert doc["ireval"] == VERSION
    assert doc["command"] == "gate accept"
    assert doc["qrels"] == {"path": "qrels.txt", "sha256": QRELS_SHA}
    run_sha = hashlib.sha256((data / "perfect.txt").read_bytes()).hexdigest()
    assert doc["run"] == {
        "path": "perfect.txt",
        "sha256": run_sha,
        "runid": "perfect",
        "missing_topics": [],
        "unjudged_topics": 0,
    }
    assert doc["settings"] == {
        "complete": True,
        "rel_level": 1,
        "max_docs": None,
        "judged_only": False,
        "num_docs": 0,
        "compat": "10.0",
        "ties": "docno",
    }
    assert doc["measures"] == ["map", "P.5"]
    assert doc["topics"] == [str(t) for t in range(1, 9)]
    assert doc["values"]["map"] == {
        "summary": 1.0,
        "agg": "mean",
        "direction": "higher",
        "unscorable": None,
        "per_topic": [1.0] * 8,
    }
    assert doc["values"]["P_5"]["per_topic"] == [0.2] * 8  # one relevant document in the top 5
    assert set(doc["values"]) == {"map", "P_5"}


def test_record_of_missing_topics_and_reading_it_back(gate, data):
    from irevalcli.analysis.baseline import read_record

    res = gate("accept", "qrels.txt", "no_hard.txt", "-m", "map", "--output", "nh.json")
    assert res.code == 0, res.err
    rec = read_record(str(data / "nh.json"))
    assert rec is not None
    sc = rec.scored()
    assert sc.missing == ["7", "8"]
    np.testing.assert_array_equal(sc.values["map"], ap("no_hard.txt"))
    assert sc.mean("map") == 0.75  # the -c summary: the two missing topics score 0


def test_api_accept_baseline_writes_the_same_record(record, data):
    doc = irevalcli.accept_baseline(
        str(data / "qrels.txt"), str(data / "perfect.txt"), ["map", "P.5"], output=data / "api.json"
    )
    on_disk = json.loads((data / "api.json").read_text())
    assert on_disk == json.loads(json.dumps(doc))
    cli_doc = json.loads(record.read_text())
    for key in ("settings", "measures", "topics", "values"):
        assert on_disk[key] == cli_doc[key]
    assert on_disk["qrels"]["sha256"] == QRELS_SHA


def test_accept_writes_nothing_on_error(gate, data):
    res = gate("accept", "qrels.txt", "perfect.txt", "-m", "nosuch", "--output", "base.json")
    assert res.code == 2
    assert not (data / "base.json").exists()
    res = gate("accept", "qrels.txt", "perfect.txt", "--output", "base.json")
    assert res.code == 2 and "Missing option '-m'" in res.err


def test_accept_to_stdout(gate, record):
    res = gate("accept", "qrels.txt", "perfect.txt", "-m", "map", "-m", "P.5")
    assert res.code == 0
    assert json.loads(res.out) == json.loads(record.read_text())


# ---------------------------------------------------------------- the gate against a record

CHECKS = [
    ("--max-drop", "map=0.01"),
    ("--max-drop", "P.5=0.01"),
    ("--non-inferior", "map=0.05"),
    ("--max-losers", "map=0@0.01"),
    ("--max-drop-rel", "map=2%"),
]


@pytest.mark.parametrize("cand", ["small_drop.txt", "big_drop.txt", "half.txt", "perfect.txt"])
def test_record_gives_the_same_verdict_as_its_run(gate, record, cand):
    args = [a for pair in CHECKS for a in pair] + ["--alpha", "0.05", "-m", "P.5", "--format", "json"]
    by_run = gate("qrels.txt", cand, "--baseline", "perfect.txt", *args)
    by_record = gate("qrels.txt", cand, "--baseline", "base.json", *args)
    assert by_run.code == by_record.code and by_run.code in (0, 1)
    a, b = json.loads(by_run.out), json.loads(by_record.out)
    assert a["checks"] == b["checks"]
    assert a["measures"] == b["measures"]
    assert b["inputs"]["baseline"]["path"] == "base.json"
    assert b["inputs"]["baseline"]["record"] == {
        "path": "base.json",
        "sha256": hashlib.sha256(record.read_bytes()).hexdigest(),
        "ireval": VERSION,
        "run": "perfect.txt",
        "run_sha256": a["inputs"]["baseline"]["sha256"],
        "rebaselined": None,
    }


def test_record_values_are_used_not_recomputed(gate, record, data):
    # the run the record came from is gone: the record alone is the baseline
    (data / "perfect.txt").unlink()
    res = gate("qrels.txt", "small_drop.txt", "--baseline", "base.json", "--max-drop", "map=0.1")
    assert res.code == 0, res.err
    assert res.out.decode().splitlines()[-1] == (
        f"base.json: the baseline values recorded by ireval {VERSION} (run perfect.txt)"
    )
    # and an edited per-topic value is what the gate compares with
    edit(record, lambda d: d["values"]["map"].update(summary=0.5, per_topic=[0.5] * 8))
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0", "--format", "json")
    assert res.code == 0, res.err
    assert json.loads(res.out)["checks"][0]["reason"] == "no drop"


def test_record_is_detected_by_content_not_name(gate, record, data):
    shutil.copy(record, data / "baseline.txt")
    res = gate("qrels.txt", "small_drop.txt", "--baseline", "baseline.txt", "--max-drop", "map=0.01")
    assert res.code == 1
    assert "baseline.txt: the baseline values recorded by" in res.out.decode()


def test_api_gate_takes_a_record(record, data):
    rep = irevalcli.gate(
        str(data / "qrels.txt"), str(data / "small_drop.txt"), baseline=str(record), max_drop={"map": 0.01}
    )
    by_run = irevalcli.gate(
        str(data / "qrels.txt"),
        str(data / "small_drop.txt"),
        baseline=str(data / "perfect.txt"),
        max_drop={"map": 0.01},
    )
    assert rep.checks == by_run.checks and not rep.passed


def test_record_with_min_judged_needs_no_recorded_judged(record, data):
    """judged@K (--min-judged) is the candidate's alone: a record made without it is enough,
    and every verdict and the unjudged pairs are those of the gate against the record's run."""
    kw = {"max_drop": {"map": 0.01}, "min_judged": {5: 0.5}}
    rep = irevalcli.gate(str(data / "qrels.txt"), str(data / "small_drop.txt"), baseline=str(record), **kw)
    by_run = irevalcli.gate(
        str(data / "qrels.txt"), str(data / "small_drop.txt"), baseline=str(data / "perfect.txt"), **kw
    )
    assert [(c.name, c.verdict, c.value, c.judged) for c in rep.checks] == [
        (c.name, c.verdict, c.value, c.judged) for c in by_run.checks
    ]
    assert [c.baseline for c in rep.checks if c.kind == "min_judged"] == [None]  # not recorded
    assert rep.passed == by_run.passed


# ---------------------------------------------------------------- refusals


def refused(res, message: str) -> None:
    assert res.code == 2
    assert res.out == b""
    assert res.err == f"ireval: base.json: {message}\n"


def test_refuses_another_rel_level(gate, record):
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01", "-l", "2")
    refused(res, "recorded with -l 1, this gate uses -l 2" + AGAIN)


def test_refuses_another_tie_rule(gate, record):
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01", "--ties", "input")
    refused(res, "recorded with --ties docno, this gate uses --ties input" + AGAIN)


def test_refuses_a_recorded_setting_the_gate_does_not_use(gate, record):
    edit(record, lambda d: d["settings"].update(max_docs=100))
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(res, "recorded with -M 100, this gate uses -M none" + AGAIN)
    edit(record, lambda d: d["settings"].update(max_docs=None, compat="9.0.8"))
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(res, "recorded with --compat 9.0.8, this gate uses --compat 10.0" + AGAIN)


def test_refuses_a_measure_not_recorded(gate, record):
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "ndcg_cut.10=0.01")
    refused(res, "has no ndcg_cut_10 (recorded: map, P_5)" + AGAIN)
    # a report-only measure needs its baseline value too
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01", "-m", "recip_rank")
    refused(res, "has no recip_rank (recorded: map, P_5)" + AGAIN)


def test_refuses_other_qrels(gate, record, data):
    changed = QRELS + "9 0 R9 1\n"
    write(data / "qrels.txt", changed)
    sha = hashlib.sha256(changed.encode()).hexdigest()
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(res, f"recorded against qrels with SHA-256 {QRELS_SHA[:12]}..., these qrels have {sha[:12]}..." + AGAIN)


def test_refuses_another_ireval_version(gate, record):
    edit(record, lambda d: d.update(ireval="0.0.1"))
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(res, f"recorded by ireval 0.0.1, this is ireval {VERSION}" + AGAIN)


def test_api_refuses_too(record, data):
    with pytest.raises(irevalcli.errors.InputError, match=r"recorded with -l 1, this gate uses -l 2"):
        irevalcli.gate(
            str(data / "qrels.txt"), str(data / "half.txt"), baseline=str(record), max_drop={"map": 0}, rel_level=2
        )


# ---------------------------------------------------------------- --allow-rebaseline


def test_allow_rebaseline_scores_the_recorded_run_again(gate, record):
    args = ("qrels.txt", "big_drop.txt", "--max-drop", "map=0.01", "-l", "2", "--format", "json")
    res = gate(*args, "--baseline", "base.json", "--allow-rebaseline")
    by_run = gate(*args, "--baseline", "perfect.txt")
    assert res.code == by_run.code == 0  # at -l 2 nothing is relevant: map is 0 for both
    doc = json.loads(res.out)
    assert doc["checks"] == json.loads(by_run.out)["checks"]
    assert doc["inputs"]["baseline"]["path"] == "perfect.txt"
    assert doc["inputs"]["baseline"]["record"]["rebaselined"] == "recorded with -l 1, this gate uses -l 2"
    text = gate(*args[:-2], "--baseline", "base.json", "--allow-rebaseline").out.decode()
    assert text.replace("\n  ", " ").splitlines()[-1] == (  # a note wraps at 80 columns
        "base.json: its run perfect.txt scored again (--allow-rebaseline): recorded with -l 1, this gate uses -l 2"
    )


def test_allow_rebaseline_with_a_new_measure(gate, record):
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--allow-rebaseline", "--max-drop", "recip_rank=0.6")
    assert res.code == 0, res.err  # recip_rank: 0.5 against the rescored 1.0


def test_allow_rebaseline_is_a_no_op_when_nothing_changed(gate, record, data):
    (data / "perfect.txt").unlink()  # not needed: the record matches
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--allow-rebaseline", "--max-drop", "map=0.6")
    assert res.code == 0, res.err


def test_allow_rebaseline_needs_the_same_run(gate, record, data):
    why = "recorded with -l 1, this gate uses -l 2"
    old = hashlib.sha256((data / "perfect.txt").read_bytes()).hexdigest()
    write(data / "perfect.txt", run_text(RUNS["half.txt"], "perfect"))
    new = hashlib.sha256((data / "perfect.txt").read_bytes()).hexdigest()
    args = ("qrels.txt", "half.txt", "--baseline", "base.json", "--allow-rebaseline", "--max-drop", "map=0.01")
    res = gate(*args, "-l", "2")
    refused(
        res,
        f"{why}; --allow-rebaseline scores its run perfect.txt again, but that file has changed since it was "
        f"accepted (SHA-256 {new[:12]}..., recorded {old[:12]}...)",
    )
    (data / "perfect.txt").unlink()
    res = gate(*args, "-l", "2")
    refused(
        res,
        f"{why}; --allow-rebaseline scores its run perfect.txt again, which is not there (give that run as --baseline)",
    )


# ---------------------------------------------------------------- not a record


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"ireval_baseline": 1, "ireval": "0', "invalid JSON, line 1 column 34: Unterminated string starting at"),
        ("{oops", "invalid JSON, line 1 column 2: Expecting property name enclosed in double quotes"),
        ('{"a": 1}', "a JSON object without the key 'ireval_baseline'"),
        ('{"ireval": "0.1.0", "command": "gate", "checks": []}', "it is the JSON output of 'ireval gate'"),
        ('{"ireval_baseline": 2}', "record format 2, this ireval reads format 1"),
        ('{"ireval_baseline": 1, "ireval": "0.1.0"}', "no 'qrels'"),
    ],
)
def test_corrupted_or_foreign_json_is_refused_in_one_line(gate, data, text, message):
    write(data / "base.json", text)
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(res, f"not an ireval baseline record: {message} (make one with ireval gate accept)")


def test_malformed_values_are_refused(gate, record):
    edit(record, lambda d: d["values"]["map"].update(per_topic=[1.0] * 7))
    res = gate("qrels.txt", "half.txt", "--baseline", "base.json", "--max-drop", "map=0.01")
    refused(
        res,
        "not an ireval baseline record: the values of map are malformed (one per topic, with summary, agg, "
        "direction) (make one with ireval gate accept)",
    )


def test_a_jsonl_run_is_still_a_run(gate, data):
    lines = [json.dumps({"qid": str(t), "docno": f"R{t}", "rank": 1, "score": 1.0, "runid": "j"}) for t in range(1, 9)]
    write(data / "base.jsonl", "\n".join(lines) + "\n")
    write(data / "one.jsonl", lines[0] + "\n")
    res = gate("qrels.txt", "perfect.txt", "--baseline", "base.jsonl", "--max-drop", "map=0")
    assert res.code == 0, res.err
    res = gate("qrels.txt", "perfect.txt", "--baseline", "one.jsonl", "--max-drop", "map=0")
    assert res.code == 0, res.err


# ---------------------------------------------------------------- the command line


def test_a_qrels_file_named_accept(gate, data):
    shutil.copy(data / "qrels.txt", data / "accept")
    res = gate("./accept", "half.txt", "--min", "map=0.5")
    assert res.code == 0, res.err
    assert res.out.decode().splitlines()[-1].startswith("half.txt, on the 8 topics judged in ./accept")
    res = gate("--min", "map=0.5", "--", "accept", "half.txt")
    assert res.code == 0, res.err


def test_subcommand_help(gate):
    res = gate("accept", "--help")
    assert res.code == 0 and res.out.startswith(b"Usage: ireval gate accept [OPTIONS] QRELS RUN\n")
    res = gate("calibrate", "--help")
    assert res.code == 0 and res.out.startswith(b"Usage: ireval gate calibrate [OPTIONS] QRELS RUN1 RUN2 RUN3...\n")


# ---------------------------------------------------------------- calibrate


def test_calibrate_hand_computed(gate):
    # map per topic: half 0.5 everywhere; perfect 1; small_drop 1 but 0.5 on topic 8.
    # summaries 0.5, 1, 0.9375: mean 0.8125, sd = sqrt((0.3125² + 0.1875² + 0.125²) / 2)
    # = sqrt(0.07421875) = 0.272431; 3 x that = 0.817293 -> 0.8173.
    # per topic, (0.5, 1, 1) or (0.5, 1, 0.5): sd sqrt(1/12) = 0.288675 on every topic;
    # 3 x sqrt(2) x 0.288675 / sqrt(8) = sqrt(3)/4 = 0.433013 -> 0.4331.
    # P_5 is 0.2 in every run and topic: no spread. num_ret has no direction.
    res = gate("calibrate", "qrels.txt", "half.txt", "perfect.txt", "small_drop.txt", "-m", "map P.5", "-m", "num_ret")
    assert res.code == 0, res.err
    assert res.out.decode() == (
        "# ireval gate calibrate: 3 runs, 8 topics judged in qrels.txt\n"
        "# s_run: sd (n-1) across the runs of the summary; s_topic: mean over topics of the\n"
        "# per-topic sd (n-1) across the runs\n"
        "# map: s_run 0.272431, s_topic 0.288675\n"
        "# P_5: s_run 0.000000, s_topic 0.000000\n"
        "# num_ret: s_run 4.358899, s_topic 0.577350\n"
        "\n"
        "[max_drop]  # 3 x s_run\n"
        "map = 0.8173\n"
        "\n"
        "[non_inferior]  # 3 x sqrt(2) x s_topic / sqrt(topics)\n"
        "map = 0.4331\n"
        "\n"
        "# P_5: no run-to-run spread (every run scores the same); choose a margin by what matters\n"
        "# num_ret: no direction, so no drop check\n"
    )
    assert math.isclose(math.sqrt(0.07421875), 0.2724311839712921)
    # num_ret: 16, 8, 9 documents retrieved; sd = sqrt(((16-11)² + 3² + 2²) / 2) = sqrt(19)
    assert math.isclose(4.358899, math.sqrt(19), abs_tol=1e-6)


def test_calibrate_fragment_is_a_gate_config(gate, data):
    res = gate("calibrate", "qrels.txt", "half.txt", "perfect.txt", "small_drop.txt", "-m", "map")
    fragment = res.out.decode()
    assert tomllib.loads(fragment) == {"max_drop": {"map": 0.8173}, "non_inferior": {"map": 0.4331}}
    write(data / "gate.toml", 'baseline = "perfect.txt"\n' + fragment)
    res = gate("qrels.txt", "small_drop.txt", "--config", "gate.toml", "--format", "json")
    assert res.code == 0, res.err
    assert [c["kind"] for c in json.loads(res.out)["checks"]] == ["max_drop", "non_inferior"]


@pytest.mark.parametrize(
    ("runs", "n"), [(["half.txt", "perfect.txt"], "2 runs"), (["half.txt"], "1 run"), ([], "0 runs")]
)
def test_calibrate_needs_three_runs(gate, runs, n):
    res = gate("calibrate", "qrels.txt", *runs, "-m", "map")
    assert res.code == 2 and res.out == b""
    assert res.err == (
        f"ireval: gate calibrate needs QRELS and at least 3 runs of the same system (reruns or seeds), got {n}\n"
    )


def test_api_calibrate_needs_three_runs(data):
    from irevalcli.analysis.calibrate import calibrate

    with pytest.raises(irevalcli.errors.UsageError, match="at least 3 runs of the same system"):
        calibrate(str(data / "qrels.txt"), [str(data / "half.txt")] * 2, ["map"])


def test_spread_leaves_out_topics_without_a_value_in_every_run():
    from irevalcli.analysis.calibrate import spread_of

    nan = math.nan
    s = spread_of("auc", "higher", "nanmean", [0.5, 0.5, 0.5], [[1.0, nan], [0.5, 0.2], [0.0, 0.4]])
    # only topic 1 has a value in every run: sd(1, 0.5, 0) = 0.5; 3 x sqrt(2) x 0.5 / sqrt(1) = 2.12132
    assert (s.topics, s.s_topic, s.s_run) == (1, 0.5, 0.0)
    assert (s.non_inferior, s.max_drop) == (2.1214, None)
