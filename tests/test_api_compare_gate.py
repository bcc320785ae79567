"""irevalcli.compare() and irevalcli.gate(): the library side of the two commands, called
without click. Every topic has one relevant document at a known rank k, so its average
precision is 1/k and every mean below is computed by hand."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

import irevalcli
from irevalcli.errors import InputError, UsageError
from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n" for t in range(1, 5))


def run_text(ranks: list[int | None], tag: str) -> str:
    lines = []
    for t, k in enumerate(ranks, start=1):
        if k is None:
            continue
        docs = [f"N{t}"] * (k - 1) + [f"R{t}"]
        lines += [f"{t} Q0 {d if i == k - 1 else f'X{t}_{i}'} {i + 1} {100 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


@pytest.fixture
def files(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    write(tmp_path / "base.txt", run_text([1, 1, 1, 1], "base"))  # map 1
    write(tmp_path / "worse.txt", run_text([2, 2, 2, 1], "worse"))  # map (0.5*3 + 1) / 4 = 0.625
    write(tmp_path / "partial.txt", run_text([1, None, None, None], "partial"))  # map 0.25 under -c
    return tmp_path


def test_public_names():
    assert {"compare", "gate", "evaluate"} <= set(irevalcli.__all__)
    assert irevalcli.compare.__module__ == "irevalcli.analysis.compare"
    assert irevalcli.gate.__module__ == "irevalcli.analysis.gate"


def test_compare_returns_a_typed_report(files):
    report = irevalcli.compare(files / "qrels.txt", files / "base.txt", files / "worse.txt", ["map"])
    (c,) = report.comparisons
    assert (c.measure, c.mean, c.baseline_mean, c.mean_diff) == ("map", 0.625, 1.0, -0.375)
    assert (c.wins, c.ties, c.losses) == (0, 1, 3)
    assert c.gsb == -0.75 and report.topics == 4 and c.missing_topics == 0
    with pytest.raises(AttributeError):
        c.mean = 1.0  # frozen
    doc = report.to_dict()
    assert doc["command"] == "compare" and doc["comparisons"][0]["losses"] == 3
    json.dumps(doc)  # JSON-ready


def test_compare_counts_missing_topics_and_takes_dataframes(files):
    q = pd.DataFrame({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "rel": [1, 0, 1]})
    base = pd.DataFrame({"qid": ["1", "2"], "docno": ["a", "c"], "score": [2.0, 1.0]})
    run = pd.DataFrame({"qid": ["1"], "docno": ["a"], "score": [1.0]})
    (c,) = irevalcli.compare(q, base, [run], "map").comparisons
    assert (c.mean, c.baseline_mean, c.missing_topics) == (0.5, 1.0, 1)


def test_gate_verdicts_without_click(files):
    q, base = files / "qrels.txt", files / "base.txt"
    report = irevalcli.gate(q, files / "worse.txt", baseline=base, max_drop={"map": 0.5}, min={"map": 0.7})
    assert not report.passed and report.verdict == "fail" and report.checks_failed == 1
    floor, drop = report.checks
    assert (floor.kind, floor.verdict, floor.reason) == ("min", "fail", "below the floor: 0.6250 < 0.7")
    assert (drop.kind, drop.verdict, drop.reason) == ("max_drop", "pass", "drop 0.3750 within the tolerance 0.5")
    ok = irevalcli.gate(q, files / "base.txt", min={"map": 1})
    assert ok.passed and ok.checks[0].reason == "at or above the floor: 1.0000 >= 1"


def test_gate_scores_missing_topics_as_zero(files):
    report = irevalcli.gate(files / "qrels.txt", files / "partial.txt", min={"map": 0.3})
    assert report.checks[0].value == 0.25 and not report.passed
    assert report.to_dict()["inputs"]["run"]["missing_topics"] == ["2", "3", "4"]


def test_gate_refuses_bad_checks_with_one_line(files):
    q, run = files / "qrels.txt", files / "worse.txt"
    with pytest.raises(UsageError, match=r"^max_drop\['map'\]: a drop needs a baseline: give baseline=$"):
        irevalcli.gate(q, run, max_drop={"map": 0.1})
    with pytest.raises(
        UsageError,
        match=r"^nothing to check: give min, max_drop, max_drop_rel, non_inferior, max_losers or min_judged$",
    ):
        irevalcli.gate(q, run)
    with pytest.raises(UsageError, match=r"^alpha=2: expected a number between 0 and 1, or None$"):
        irevalcli.gate(q, run, min={"map": 0.1}, alpha=2)
    with pytest.raises(UsageError, match=r"^test='z': expected one of t, wilcoxon, randomization, sign$"):
        irevalcli.compare(q, run, run, test="z")
    with pytest.raises(InputError):
        irevalcli.gate(q, files / "nope.txt", min={"map": 0.1})


def test_the_library_does_not_import_click():
    code = (
        "import sys, irevalcli.analysis.compare, irevalcli.analysis.gate; "
        "print('click' in sys.modules, 'rich' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_cli_json_is_the_report(files, cli):
    """The command renders what the library decided: same checks, same numbers."""
    res = cli(["gate", "qrels.txt", "worse.txt", "--min", "map=0.7", "--format", "json"], cwd=files)
    assert res.code == 1
    doc = json.loads(res.out)
    lib = irevalcli.gate(files / "qrels.txt", files / "worse.txt", min={"map": 0.7}).to_dict()
    assert [c["reason"] for c in doc["checks"]] == [c["reason"] for c in lib["checks"]]
