"""Issue 24 item 1: non-inferiority as a gate check. A run passes --non-inferior MEASURE=MARGIN only
when the lower bound of the interval of the paired difference (per topic, better is positive) is
above -MARGIN. Every topic t has a relevant document R{t} at a known rank, so AP is 1/rank and arp
is the rank."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import scipy.stats

import irevalcli
from irevalcli.errors import UsageError
from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n" for t in range(1, 5))


def run_text(ranks: list[int], tag: str) -> str:
    lines = []
    for t, k in enumerate(ranks, start=1):
        docs = [f"R{t}", f"N{t}"] if k == 1 else [f"N{t}", f"R{t}"]
        lines += [f"{t} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


@pytest.fixture
def data(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    write(tmp_path / "base.txt", run_text([1, 1, 1, 1], "base"))  # map 1, arp 1
    write(tmp_path / "cand.txt", run_text([1, 1, 1, 2], "cand"))  # map 0.875: AP differences 0, 0, 0, -0.5
    write(tmp_path / "worse.txt", run_text([2, 2, 2, 1], "worse"))  # arp 2, 2, 2, 1
    return tmp_path


def t_bounds(d):
    d = np.asarray(d, dtype=float)
    half = scipy.stats.t.ppf(0.975, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return d.mean() - half, d.mean() + half


def test_the_t_interval_by_hand(data):
    low, high = t_bounds([0, 0, 0, -0.5])  # mean -0.125, sd 0.25: -0.125 -+ 3.1824 * 0.125
    assert (round(low, 4), round(high, 4)) == (-0.5228, 0.2728)
    q, base, cand = data / "qrels.txt", data / "base.txt", data / "cand.txt"
    ok = irevalcli.gate(q, cand, baseline=base, non_inferior={"map": 0.6}, interval="t")
    (c,) = ok.checks
    assert ok.passed and (c.name, c.reason) == ("map non-inferior, margin 0.6", "CI [-0.5228, +0.2728] above -0.6")
    assert (c.ci_low, c.ci_high, c.interval, c.confidence) == pytest.approx((low, high, "t", 0.95))
    bad = irevalcli.gate(q, cand, baseline=base, non_inferior={"map": 0.5}, interval="t")
    assert bad.checks[0].reason == "CI [-0.5228, +0.2728] reaches -0.5: may be worse by more"


def test_not_significantly_worse_is_not_non_inferior(data, cli):
    """On four topics a 0.125 drop is 'not significant' (p = 0.2), so --max-drop map=0 --alpha 0.05
    passes; the interval reaches -0.52, so --non-inferior map=0.05 fails. Exit codes 0 and 1."""
    args = ["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt"]
    res = cli([*args, "--max-drop", "map=0", "--alpha", "0.05"], cwd=data)
    assert res.code == 0, res.err
    res = cli([*args, "--non-inferior", "map=0.05", "--interval", "t"], cwd=data)
    assert res.code == 1
    assert res.err == "ireval: gate failed: 1 of 1 check failed (map non-inferior, margin 0.05)\n"
    assert res.out.decode().replace("\n  ", " ").splitlines()[-1] == (  # a note wraps at 80 columns
        "non-inferior: the 95% paired t interval of the paired difference (better is +) must lie above -margin."
    )


def test_the_bootstrap_interval_is_scipys_and_named(data, cli):
    args = ["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt", "--non-inferior", "map=0.6"]
    res = cli([*args, "--bootstrap", "500", "--seed", "3", "--format", "json"], cwd=data)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    (c,) = doc["checks"]
    ci = scipy.stats.bootstrap(
        (np.array([0, 0, 0, -0.5]),), np.mean, n_resamples=500, method="percentile", rng=np.random.default_rng(3)
    ).confidence_interval
    assert (c["ci_low"], c["ci_high"]) == (float(ci.low), float(ci.high))
    assert (c["kind"], c["threshold"], c["interval"], c["confidence"]) == ("non_inferior", 0.6, "bootstrap", 0.95)
    assert {k: doc["options"][k] for k in ("interval", "confidence", "bootstrap", "seed")} == {
        "interval": "bootstrap",
        "confidence": 0.95,
        "bootstrap": 500,
        "seed": 3,
    }
    text = (
        cli([*args, "--bootstrap", "500", "--seed", "3"], cwd=data).out.decode().replace("\n  ", " ")
    )  # notes wrap at 80 columns
    assert "non-inferior: the 95% paired bootstrap percentile interval (500 resamples, seed 3) of the" in text


def test_lower_is_better_measures_are_oriented(data):
    """unj.5 (lower is better) rises by 0.2 on three topics (one unjudged document each): the oriented
    differences are -0.2, -0.2, -0.2, 0."""
    write(data / "unjudged.txt", run_text([1, 1, 1, 1], "u") + "".join(f"{t} Q0 X{t} 3 1 u\n" for t in (1, 2, 3)))
    low, high = t_bounds([-0.2, -0.2, -0.2, 0])
    rep = irevalcli.gate(
        data / "qrels.txt", data / "unjudged.txt", baseline=data / "base.txt", non_inferior={"unj.5": 0.1}, interval="t"
    )
    (c,) = rep.checks
    assert not rep.passed and (c.ci_low, c.ci_high) == pytest.approx((low, high))
    assert c.reason == f"CI [{low:+.4f}, {high:+.4f}] reaches -0.1: may be worse by more"
    with pytest.raises(UsageError, match=r"^non_inferior\['arp'\]: arp's summary is weighted \(wmean\)"):
        irevalcli.gate(data / "qrels.txt", data / "worse.txt", baseline=data / "base.txt", non_inferior={"arp": 1})


def test_in_toml_and_refusals(data, cli):
    write(data / "g.toml", 'baseline = "base.txt"\ninterval = "t"\nconfidence = 0.9\n[non_inferior]\nmap = 0.6\n')
    res = cli(["gate", "--config", "g.toml", "qrels.txt", "cand.txt", "--format", "json"], cwd=data)
    assert res.code == 0, res.err
    (c,) = json.loads(res.out)["checks"]
    d = np.array([0, 0, 0, -0.5])
    half = scipy.stats.t.ppf(0.95, 3) * d.std(ddof=1) / 2
    assert c["ci_low"] == pytest.approx(d.mean() - half) and c["confidence"] == 0.9
    res = cli(["gate", "qrels.txt", "cand.txt", "--non-inferior", "map=0.1"], cwd=data)
    assert (res.code, res.err) == (
        2,
        "ireval: --non-inferior map=0.1: non-inferiority needs a baseline: give --baseline RUN "
        "(or 'baseline' in the --config file)\n",
    )
    res = cli(["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt", "--non-inferior", "map=-1"], cwd=data)
    assert res.err == "ireval: --non-inferior map=-1: a margin cannot be negative (an improvement never fails)\n"
    with pytest.raises(UsageError, match=r"^non_inferior\['gauc'\]: gauc's summary is weighted \(wmean\)"):
        irevalcli.gate(data / "qrels.txt", data / "cand.txt", baseline=data / "base.txt", non_inferior={"gauc": 0.1})
    with pytest.raises(UsageError, match=r"^interval='z': expected one of bootstrap, t$"):
        irevalcli.gate(
            data / "qrels.txt", data / "cand.txt", baseline=data / "base.txt", non_inferior={"map": 0.1}, interval="z"
        )


def test_one_topic_has_no_interval_and_fails(data):
    write(data / "one.txt", "1 0 R1 1\n1 0 N1 0\n")
    rep = irevalcli.gate(data / "one.txt", data / "cand.txt", baseline=data / "base.txt", non_inferior={"map": 1})
    assert rep.checks[0].reason == "no 95% paired bootstrap percentile interval: only 1 topic with a value"
    assert not rep.passed


def test_rich_report_fits_80_columns(data, cli, monkeypatch):
    import re

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr("irevalcli.commands.gate.stdout_is_terminal", lambda: True)
    res = cli(
        ["gate", "qrels.txt", "cand.txt", "--baseline", "base.txt", "--non-inferior", "ndcg_cut.10=0.05"], cwd=data
    )
    lines = re.sub(r"\x1b\[[0-9;]*m", "", res.out.decode()).splitlines()
    assert max(len(line) for line in lines) <= 80
