"""Issue 24 item 4: a per-topic loser budget, --max-losers MEASURE=N@EPSILON: at most N topics
worse than the baseline by more than EPSILON, the losers listed. Topic t's relevant document is at
a known rank k, so its AP is 1/k."""

from __future__ import annotations

import json

import pytest

import irevalcli
from irevalcli.errors import UsageError
from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n{t} 0 M{t} 0\n" for t in range(1, 6))


def run_text(ranks: list[int], tag: str) -> str:
    lines = []
    for t, k in enumerate(ranks, start=1):
        docs = [f"N{t}", f"M{t}"]
        docs.insert(k - 1, f"R{t}")
        lines += [f"{t} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


@pytest.fixture
def data(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    write(tmp_path / "base.txt", run_text([1, 1, 1, 1, 2], "base"))  # AP 1, 1, 1, 1, 0.5
    # AP 0.5 (-0.5), 1/3 (-0.6667), 1, 1, 1 (+0.5): two topics lost by more than 0.4
    write(tmp_path / "cand.txt", run_text([2, 3, 1, 1, 1], "cand"))
    return tmp_path


def test_losers_are_counted_and_listed(data, cli):
    args = ["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt"]
    res = cli([*args, "--max-losers", "map=1@0.4"], cwd=data)
    assert res.code == 1
    lines = res.out.decode().splitlines()
    assert lines[0] == "ireval gate: FAILED: 1 of 1 check failed"
    assert lines[4:6] == [  # piped, the report fits 80 columns: names and reasons wrap
        "map losers <= 1 (by  0.7667    0.9000  -0.1333  -  FAIL     2 topics lost > 1: 2",
        "> 0.4)                                                      1",
    ]
    assert "Losers (map, by > 0.4): 2 -0.6667, 1 -0.5000" in res.out.decode().replace("\n  ", " ").splitlines()
    assert res.err == "ireval: gate failed: 1 of 1 check failed (map losers <= 1 (by > 0.4))\n"
    ok = cli([*args, "--max-losers", "map=2@0.4", "--format", "json"], cwd=data)
    assert ok.code == 0
    (c,) = json.loads(ok.out)["checks"]
    assert (c["kind"], c["threshold"], c["epsilon"], c["reason"]) == (
        "max_losers",
        2.0,
        0.4,
        "2 topics lost, at most 2: 2 1",
    )
    assert [(t["qid"], t["value"], t["baseline"]) for t in c["losers"]] == [("2", 1 / 3, 1.0), ("1", 0.5, 1.0)]
    # by more than 0.6: only topic 2
    rep = irevalcli.gate(data / "qrels.txt", data / "cand.txt", baseline=data / "base.txt", max_losers={"map": "0@0.6"})
    assert rep.checks[0].reason == "1 topics lost > 0: 2" and not rep.passed
    none = irevalcli.gate(data / "qrels.txt", data / "base.txt", baseline=data / "base.txt", max_losers={"map": "0@0"})
    assert none.passed and none.checks[0].reason == "no topic lost more than 0"


def test_markdown_lists_the_losers(data, cli):
    res = cli(
        [
            "gate",
            "qrels.txt",
            "cand.txt",
            "--baseline",
            "base.txt",
            "--max-losers",
            "map=1@0.4",
            "--format",
            "markdown",
        ],
        cwd=data,
    )
    text = res.out.decode()
    assert "| map losers <= 1 (by > 0.4) |" in text and "- Losers (map, by > 0.4): 2 -0.6667, 1 -0.5000\n" in text


def test_in_toml_and_refusals(data, cli):
    write(data / "g.toml", 'baseline = "base.txt"\n[max_losers]\nmap = "2@0.4"\n')
    assert cli(["gate", "--config", "g.toml", "qrels.txt", "cand.txt"], cwd=data).code == 0
    for value, err in (
        ("3", "expected N@EPSILON (at most N topics worse by more than EPSILON), e.g. 3@0.05"),
        ("x@0.1", "expected N@EPSILON (at most N topics worse by more than EPSILON), e.g. 3@0.05"),
        ("1@-0.1", "EPSILON cannot be negative"),
        ("1@abc", "'abc' is not a number"),
    ):
        res = cli(["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt", "--max-losers", f"map={value}"], cwd=data)
        assert (res.code, res.err) == (2, f"ireval: --max-losers map={value}: {err}\n")
    with pytest.raises(UsageError, match=r"^max_losers\['num_ret'\]: num_ret has no direction"):
        irevalcli.gate(data / "qrels.txt", data / "cand.txt", baseline=data / "base.txt", max_losers={"num_ret": "1@0"})
