"""Issue 24 item 3: judgment coverage. ``--min-judged K=FRACTION`` fails a run whose judged@K (ireval's
``judged.K``: its top K with a judgement >= 0, over K; the mean over the judged topics, a topic without
results counting 0) is below FRACTION; ``--unjudged-out FILE`` writes the unjudged top-K pairs as
``qid 0 docno -1`` lines (what ``ireval pool`` writes, and reads as --qrels); judged@K is shown beside
every check.

Hand-computed: topic 1 judges a (1), b (0) and c (-1: pooled, not judged); topic 2 a (1) and x (2);
topic 3 r (1). The candidate's top 2: topic 1 a, c (1 of 2 judged); topic 2 z, a (1 of 2); topic 3
nothing (0); topic 9 is not judged (ignored). judged@2 = (0.5 + 0.5 + 0) / 3 = 0.3333; its unjudged
top-2 pairs are (1, c) and (2, z). AP: topic 1 a at rank 1 (1), topic 2 a at rank 2 of 2 relevant
(0.25), topic 3 0: map = 1.25 / 3 = 0.4167."""

from __future__ import annotations

import json
import re

import pytest

import irevalcli
from irevalcli.errors import UsageError
from tests.conftest import write

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c -1\n2 0 a 1\n2 0 x 2\n3 0 r 1\n"
CAND = "1 Q0 a 1 3 cand\n1 Q0 c 2 2 cand\n1 Q0 d 3 1 cand\n2 Q0 z 1 3 cand\n2 Q0 a 2 2 cand\n9 Q0 q 1 1 cand\n"
BASE = "1 Q0 a 1 3 base\n1 Q0 b 2 2 base\n2 Q0 a 1 3 base\n2 Q0 x 2 2 base\n3 Q0 r 1 1 base\n"


@pytest.fixture
def data(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    write(tmp_path / "cand.txt", CAND)
    write(tmp_path / "base.txt", BASE)
    return tmp_path


def gate(cli, data, *args):
    return cli(["gate", "qrels.txt", "cand.txt", *args], cwd=data)


def test_a_run_judged_below_the_fraction_fails(cli, data):
    res = gate(cli, data, "--min-judged", "2=0.5")
    assert res.code == 1
    lines = res.out.decode().splitlines()
    assert lines[0] == "ireval gate: FAILED: 1 of 1 check failed"
    assert lines[2].split() == ["Check", "Value", "Judged@2", "Baseline", "Diff", "p", "Verdict", "Why"]
    assert lines[4:6] == [  # piped, the report fits 80 columns: the reason wraps
        "judged@2 >= 0.5  0.3333    0.3333         -     -  -  FAIL     below the floor:",
        "                                                               0.3333 < 0.5",
    ]
    assert "Judged@2: the share of the run's top 2 judged (judged.2), the mean over 3 topics." in (
        res.out.decode().replace("\n  ", " ").splitlines()
    )
    assert res.err == "ireval: gate failed: 1 of 1 check failed (judged@2 >= 0.5)\n"
    ok = gate(cli, data, "--min-judged", "2=0.3333")
    assert ok.code == 0, ok.err
    assert ok.out.decode().splitlines()[4:7] == [
        "judged@2 >=       0.3333    0.3333         -     -  -  pass     at or above the",
        "0.3333                                                          floor: 0.33333",
        "                                                                >= 0.3333",
    ]


def test_judged_at_k_beside_every_check_and_in_json(cli, data):
    args = ["--baseline", "base.txt", "--min", "map=0.4", "--max-drop", "map=0.6", "--min-judged", "2=0.3"]
    res = gate(cli, data, *args, "--format", "json")
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert doc["options"]["judged_k"] == 2
    assert "unjudged_pairs" not in doc
    rows = {c["name"]: c for c in doc["checks"]}
    assert list(rows) == ["map >= 0.4", "map drop <= 0.6", "judged@2 >= 0.3"]
    for c in rows.values():
        assert (c["judged"], c["judged_k"]) == (pytest.approx(1 / 3, abs=1e-15), 2)
    j = rows["judged@2 >= 0.3"]
    # the baseline's top 2: a, b | a, x | r: judged 1, 1, 0.5
    assert (j["kind"], j["measure"], j["value"], j["baseline"]) == (
        "min_judged",
        "judged_2",
        pytest.approx(1 / 3, abs=1e-15),
        pytest.approx(2.5 / 3, abs=1e-15),
    )
    assert j["source"] == "--min-judged 2=0.3"
    assert rows["map >= 0.4"]["value"] == pytest.approx(1.25 / 3, abs=1e-15)
    md = gate(cli, data, *args, "--format", "markdown").out.decode()
    assert "| Check | Value | Judged@2 | Baseline | Diff | p | Verdict | Why |" in md.replace("  ", " ")
    assert re.search(r"\| map >= 0\.4 +\| +0\.4167 \| +0\.3333 \|", md)
    junit = gate(cli, data, *args, "--format", "junit").out.decode()
    assert "value 0.4167, judged@2 0.3333, baseline 1.0000" in junit
    # without --min-judged: no column, and null in JSON
    plain = gate(cli, data, "--min", "map=0.4")
    assert "Judged" not in plain.out.decode()


def test_rich_report_stays_within_80_columns(cli, data, monkeypatch):
    from irevalcli.commands.gate import format_rich

    args = [
        "--baseline",
        "base.txt",
        "--min",
        "map=0.4",
        "--max-drop-rel",
        "ndcg_cut.100=0.01",
        "--min-judged",
        "2=0.9",
    ]
    doc = json.loads(gate(cli, data, *args, "--format", "json").out)
    text = format_rich(doc, width=80).decode()
    lines = re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("Judged@2" in line for line in lines)


def test_unjudged_out_writes_the_pairs_pool_reads(cli, data):
    res = gate(cli, data, "--min-judged", "2=0.9", "--unjudged-out", "todo.qrels")
    assert res.code == 1
    assert (data / "todo.qrels").read_bytes() == b"1 0 c -1\n2 0 z -1\n"
    assert "Unjudged top-2 (qid, docno) pairs written: 2." in res.out.decode().splitlines()
    doc = json.loads(gate(cli, data, "--min-judged", "2=0.9", "--unjudged-out", "todo.qrels", "--format", "json").out)
    assert doc["unjudged_pairs"] == 2
    # ireval pool reads it as --qrels: its pairs are left out of the run's top-2 pool
    pool = cli(["pool", "cand.txt", "--depth", "2", "--qrels", "todo.qrels"], cwd=data)
    assert pool.code == 0, pool.err
    assert pool.out == b"1 0 a -1\n2 0 a -1\n9 0 q -1\n"
    # written with the report, both atomically: --output too
    res = gate(cli, data, "--min-judged", "2=0.3", "--unjudged-out", "u2.qrels", "--output", "r.json")
    assert res.code == 0 and res.out == b""
    assert (data / "u2.qrels").read_bytes() == b"1 0 c -1\n2 0 z -1\n"
    assert json.loads((data / "r.json").read_bytes())["unjudged_pairs"] == 2


def test_a_fully_judged_top_k_writes_an_empty_file(cli, data):
    res = cli(["gate", "qrels.txt", "base.txt", "--min-judged", "1=1", "--unjudged-out", "none.qrels"], cwd=data)
    assert res.code == 0, res.err
    assert (data / "none.qrels").read_bytes() == b""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--min-judged", "x=0.5"], "--min-judged x=0.5: K must be a whole number of documents >= 1, got 'x'"),
        (["--min-judged", "0=0.5"], "--min-judged 0=0.5: K must be a whole number of documents >= 1, got '0'"),
        (
            ["--min-judged", "10=1.5"],
            "--min-judged 10=1.5: FRACTION must be from 0 to 1 (a share of the top K), got 1.5",
        ),
        (["--min-judged", "10=abc"], "--min-judged 10=abc: 'abc' is not a number"),
        (["--min-judged", "10"], "--min-judged 10: expected MEASURE=VALUE, e.g. --min-judged 10=0.9"),
        (
            ["--min-judged", "10=0.5", "--min-judged", "5=0.5"],
            "--min-judged 5=0.5: --min-judged is given twice (also --min-judged 10=0.5); give one K=FRACTION",
        ),
        (
            ["--min", "map=0.1", "--unjudged-out", "u.qrels"],
            "--unjudged-out u.qrels: needs --min-judged K=FRACTION (or [min_judged] in the --config file) "
            "for the depth K",
        ),
        (
            ["--min-judged", "2=0.5", "--unjudged-out", "-"],
            "--unjudged-out -: cannot be standard output; give a file of its own",
        ),
        (
            ["--min-judged", "2=0.5", "--unjudged-out", "r.txt", "--output", "r.txt"],
            "--unjudged-out r.txt: cannot be --output; give a file of its own",
        ),
        (
            ["--min-judged", "2=0.5", "--unjudged-out", "qrels.txt"],
            "--unjudged-out qrels.txt: is the input file qrels.txt; writing it would destroy the input "
            "(give another output file)",
        ),
    ],
)
def test_bad_options_exit_2_and_write_nothing(cli, data, args, message):
    before = sorted(p.name for p in data.iterdir())
    res = gate(cli, data, *args)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {message}\n")
    assert sorted(p.name for p in data.iterdir()) == before
    assert (data / "qrels.txt").read_text() == QRELS


def test_an_input_error_writes_no_unjudged_file(cli, data):
    write(data / "bad.txt", "1 Q0 a 1\n")
    res = cli(["gate", "qrels.txt", "bad.txt", "--min-judged", "2=0.5", "--unjudged-out", "u.qrels"], cwd=data)
    assert res.code == 2 and res.out == b""
    assert not (data / "u.qrels").exists()


def test_config_min_judged(cli, data):
    write(data / "gate.toml", 'qrels = "qrels.txt"\nrun = "cand.txt"\n[min_judged]\n2 = 0.5\n')
    res = cli(["gate", "--config", "gate.toml", "--format", "json"], cwd=data)
    assert res.code == 1
    (c,) = json.loads(res.out)["checks"]
    assert (c["name"], c["source"]) == ("judged@2 >= 0.5", "gate.toml [min_judged] 2")
    # the command line's K replaces the config file's
    res = cli(["gate", "--config", "gate.toml", "--min-judged", "3=0.2", "--format", "json"], cwd=data)
    assert res.code == 0, res.err
    (c,) = json.loads(res.out)["checks"]
    # top 3: a, c, d | z, a | nothing: (1/3 + 1/3 + 0) / 3
    assert (c["name"], c["value"]) == ("judged@3 >= 0.2", pytest.approx(2 / 9, abs=1e-15))
    write(data / "two.toml", 'qrels = "qrels.txt"\nrun = "cand.txt"\n[min_judged]\n2 = 0.5\n5 = 0.5\n')
    res = cli(["gate", "--config", "two.toml"], cwd=data)
    assert (res.code, res.err) == (2, "ireval: two.toml: [min_judged] gives 2 depths (2, 5); give one K = FRACTION\n")


def test_api_min_judged(data):
    rep = irevalcli.gate(data / "qrels.txt", data / "cand.txt", min_judged={2: 0.5})
    assert not rep.passed
    (c,) = rep.checks
    assert (c.kind, c.value, c.judged, c.judged_k) == ("min_judged", pytest.approx(1 / 3), pytest.approx(1 / 3), 2)
    assert c.reason == "below the floor: 0.3333 < 0.5"
    assert rep.unjudged is None
    with pytest.raises(UsageError, match=r"^min_judged=\{2: 0\.5, 5: 0\.5\}: give one K \(the depth of judged@K\)$"):
        irevalcli.gate(data / "qrels.txt", data / "cand.txt", min_judged={2: 0.5, 5: 0.5})
