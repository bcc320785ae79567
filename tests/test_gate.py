"""ireval gate: every exit code, the drop rules, missing topics, config files and report formats.

The runs are built so that map is known per topic: every topic has one relevant
document, placed at rank k, so the topic's average precision is 1/k.
"""

from __future__ import annotations

import hashlib
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from .conftest import write

N = 8
QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t}_1 0\n" for t in range(1, N + 1))


def run_text(ranks: list[int | None], tag: str = "r") -> str:
    """Topic t's relevant document at rank ranks[t-1]; None leaves the topic out."""
    lines = []
    for t, k in enumerate(ranks, start=1):
        if k is None:
            continue
        docs = [f"N{t}_{j}" for j in range(1, k)] + [f"R{t}"]
        lines += [f"{t} Q0 {d} {i + 1} {100 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


RUNS = {
    "half.txt": [2] * 8,  # map 0.5
    "perfect.txt": [1] * 8,  # map 1
    "small_drop.txt": [1] * 7 + [2],  # map 0.9375: 0.0625 below perfect
    "big_drop.txt": [2] * 7 + [1],  # map 0.5625: a drop on 7 topics (significant)
    "one_bad.txt": [1] * 7 + [10],  # map 0.8875: a drop on 1 topic (not significant)
    "hard.txt": [1] * 6 + [5, 5],  # map 0.8
    "no_hard.txt": [1] * 6 + [None, None],  # the same without its two hard topics: 0.75 under -c
}


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


def gate_json(gate, *args) -> tuple[int, dict]:
    res = gate(*args, "--format", "json")
    assert res.code in (0, 1), res.err
    return res.code, json.loads(res.out)


def ap(name: str) -> np.ndarray:
    return np.array([0.0 if k is None else 1 / k for k in RUNS[name]])


# ---------------------------------------------------------------- exit 0 / 1


def test_improvement_never_fails(gate):
    for extra in ([], ["--alpha", "0.05"], ["--test", "sign", "--alpha", "0.5"]):
        res = gate("qrels.txt", "perfect.txt", "--baseline", "half.txt", "--max-drop", "map=0",
                   "--max-drop-rel", "map=0", *extra)
        assert (res.code, res.err) == (0, "")


def test_drop_within_tolerance_passes(gate):
    base = ["qrels.txt", "small_drop.txt", "--baseline", "perfect.txt"]
    assert gate(*base, "--max-drop", "map=0.07").code == 0
    assert gate(*base, "--max-drop", "map=0.0625").code == 0  # exactly the tolerance
    assert gate(*base, "--max-drop", "map=0.06").code == 1
    assert gate(*base, "--max-drop-rel", "map=0.07").code == 0
    assert gate(*base, "--max-drop-rel", "map=7%").code == 0
    assert gate(*base, "--max-drop-rel", "map=6%").code == 1


def test_significant_drop_fails_with_alpha(gate):
    res = gate("qrels.txt", "big_drop.txt", "--baseline", "perfect.txt", "--max-drop", "map=0.01", "--alpha", "0.05")
    assert res.code == 1
    assert res.err == "ireval: gate failed: 1 of 1 check failed (map drop <= 0.01)\n"
    _, doc = gate_json(gate, "qrels.txt", "big_drop.txt", "--baseline", "perfect.txt", "--max-drop", "map=0.01",
                       "--alpha", "0.05")
    (check,) = doc["checks"]
    ref = scipy.stats.ttest_rel(ap("big_drop.txt"), ap("perfect.txt"), alternative="less")
    assert check["p_value"] == float(ref.pvalue) < 0.05
    assert (check["verdict"], check["test"], check["alpha"]) == ("fail", "t", 0.05)
    assert check["reason"] == "drop 0.4375 > 0.01, significant (p = 0.0001 < 0.05)"


def test_non_significant_drop_passes_with_alpha(gate):
    args = ["qrels.txt", "one_bad.txt", "--baseline", "perfect.txt", "--max-drop", "map=0.01"]
    code, doc = gate_json(gate, *args, "--alpha", "0.05")
    (check,) = doc["checks"]
    ref = scipy.stats.ttest_rel(ap("one_bad.txt"), ap("perfect.txt"), alternative="less")
    assert check["p_value"] == float(ref.pvalue) > 0.05
    assert (code, check["verdict"]) == (0, "pass")
    assert check["reason"].startswith("drop 0.1125 > 0.01 but not significant (p = 0.")
    assert gate(*args).code == 1  # without --alpha, any drop beyond the tolerance fails


@pytest.mark.parametrize("test", ["wilcoxon", "sign", "randomization"])
def test_one_sided_p_values_match_scipy(gate, test):
    _, doc = gate_json(gate, "qrels.txt", "big_drop.txt", "--baseline", "perfect.txt", "--max-drop", "map=0.01",
                       "--alpha", "0.05", "--test", test, "--permutations", "300", "--seed", "3")
    x, y = ap("big_drop.txt"), ap("perfect.txt")
    if test == "wilcoxon":
        ref = scipy.stats.wilcoxon(x, y, alternative="less").pvalue
    elif test == "sign":
        ref = scipy.stats.binomtest(int((x > y).sum()), int((x != y).sum()), alternative="less").pvalue
    else:
        ref = scipy.stats.permutation_test((x, y), lambda a, b, axis: np.mean(a - b, axis=axis), vectorized=True,
                                           permutation_type="samples", n_resamples=300, alternative="less",
                                           rng=np.random.default_rng(3)).pvalue
    assert doc["checks"][0]["p_value"] == float(ref)


def test_min_floor_needs_no_baseline(gate):
    assert gate("qrels.txt", "small_drop.txt", "--min", "map=0.9").code == 0
    res = gate("qrels.txt", "small_drop.txt", "--min", "map=0.95", "--min", "recip_rank=0.5")
    assert (res.code, res.err) == (1, "ireval: gate failed: 1 of 2 checks failed (map >= 0.95)\n")


def test_missing_topics_count_as_zero(gate):
    """Dropping the two hard topics would give map 1.0 over the topics left; they count as 0."""
    code, doc = gate_json(gate, "qrels.txt", "no_hard.txt", "--min", "map=0.78")
    assert code == 1
    assert doc["checks"][0]["value"] == 0.75
    assert doc["inputs"]["run"]["missing_topics"] == ["7", "8"]
    code, doc = gate_json(gate, "qrels.txt", "no_hard.txt", "--baseline", "hard.txt", "--max-drop", "map=0.04")
    assert code == 1 and doc["checks"][0]["diff"] == pytest.approx(-0.05)
    out = gate("qrels.txt", "no_hard.txt", "--min", "map=0.5").out.decode()
    assert "no_hard.txt has no results for 2 of 8 topics (scored 0): 7 8" in out


# ---------------------------------------------------------------- exit 2


@pytest.mark.parametrize(
    "args,message",
    [
        (["qrels.txt", "perfect.txt", "--min", "mapp=0.2"],
         "unknown measure 'mapp' (did you mean 'map'?); 'ireval measures' lists them"),
        (["qrels.txt", "perfect.txt", "--min", "map=abc"], "--min map=abc: 'abc' is not a number"),
        (["qrels.txt", "perfect.txt", "--min", "map"], "--min map: expected MEASURE=VALUE, e.g. --min map=0.25"),
        (["qrels.txt", "perfect.txt", "--min", "P=0.2"],
         "--min P=0.2: 'P' names 9 values (P_5, P_10, P_15, P_20, ...); name one, e.g. P_5"),
        (["qrels.txt", "perfect.txt", "--max-drop", "map=0.1"],
         "--max-drop map=0.1: a drop needs a baseline: give --baseline RUN (or 'baseline' in the --config file)"),
        (["qrels.txt", "perfect.txt", "--baseline", "half.txt", "--max-drop", "map=-0.1"],
         "--max-drop map=-0.1: a tolerance cannot be negative (an improvement never fails)"),
        (["qrels.txt", "perfect.txt"], ("nothing to check: give --min, --max-drop or --max-drop-rel "
                                       "(or [min], [max_drop], [max_drop_rel] tables in a --config file)")),
        (["qrels.txt", "perfect.txt", "--min", "map=0.1", "--min", "map=0.2"],
         "--min map=0.2: --min is given twice for map (also --min map=0.1)"),
        (["qrels.txt", "perfect.txt", "--min", "gm_map=0.1"],
         ("--min gm_map=0.1: no per-topic values to compare (measures such as runid, num_q and gm_map have only a "
         "summary)")),
        (["perfect.txt", "--min", "map=0.1"], "no qrels: give QRELS before RUN or 'qrels' in the --config file"),
    ],
)
def test_usage_errors_exit_2(gate, args, message):
    res = gate(*args)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {message}\n")


def test_malformed_input_gives_2_not_1(gate, data):
    write(data / "broken.txt", "1 Q0 R1 1 1.0 x\n2 Q0 R2 1\n")
    # the floor would fail, but a bad file is an input error
    for args in (["qrels.txt", "broken.txt", "--min", "map=0.99"],
                 ["qrels.txt", "big_drop.txt", "--baseline", "broken.txt", "--max-drop", "map=0"]):
        res = gate(*args)
        assert (res.code, res.out) == (2, b"")
        assert res.err.startswith("ireval: broken.txt:2: ")
    res = gate("nope.txt", "perfect.txt", "--min", "map=0.99")
    assert (res.code, res.err) == (2, "ireval: nope.txt: cannot read qrels file: no such file\n")
    write(data / "other.txt", "99 Q0 R1 1 1.0 x\n")
    res = gate("qrels.txt", "other.txt", "--min", "map=0.99")
    assert (res.code, res.err) == (2, ("ireval: other.txt: none of its 1 topics is judged in qrels.txt: the topics do "
                                      "not line up (wrong qrels file?)\n"))


@pytest.mark.parametrize(
    "text,message",
    [
        ("alpha = 0.05\n[min\n", "gate.toml: not valid TOML: "),
        ("tresholds = 1\n", ("gate.toml: unknown key 'tresholds' (known: qrels, run, baseline, measures, min, "
                            "max_drop, max_drop_rel, alpha, test, seed, permutations, level_for_rel, ties)")),
        ("alpha = 2\n[min]\nmap = 0.1\n", "gate.toml: 'alpha' must be a number between 0 and 1, got 2"),
        ("test = 'z'\n", "gate.toml: 'test' must be one of t, wilcoxon, randomization, sign, got 'z'"),
        ("[min]\nmap = 'high'\n", "gate.toml [min] map: 'high' is not a number"),
        ("min = 0.3\n", "gate.toml: 'min' must be a table of MEASURE = VALUE, e.g. [min] map = 0.2"),
        ("__import__('os') = 1\n", "gate.toml: not valid TOML: "),
    ],
)
def test_bad_config_gives_2(gate, data, text, message):
    write(data / "gate.toml", text)
    res = gate("--config", "gate.toml", "qrels.txt", "perfect.txt")
    assert res.code == 2 and res.out == b""
    assert res.err.startswith(f"ireval: {message}")


# ---------------------------------------------------------------- config


CONFIG = """\
# paths are relative to this file
qrels = "../qrels.txt"
baseline = "../perfect.txt"
measures = ["P.5"]
test = "wilcoxon"
alpha = 0.05

[min]
map = 0.5
recip_rank = 0.6

[max_drop]
map = 0.01

[max_drop_rel]
"ndcg_cut.10" = 0.05
"""

FLAGS = ["qrels.txt", "one_bad.txt", "--baseline", "perfect.txt", "-m", "P.5", "--test", "wilcoxon", "--alpha", "0.05",
         "--min", "map=0.5", "--min", "recip_rank=0.6", "--max-drop", "map=0.01", "--max-drop-rel", "ndcg_cut.10=0.05"]


def _without_sources(doc: dict) -> dict:
    doc = json.loads(json.dumps(doc))
    for c in doc["checks"]:
        del c["source"]
    doc["inputs"]["config"] = None
    for what in ("qrels", "run", "baseline"):
        doc["inputs"][what]["path"] = Path(doc["inputs"][what]["path"]).name
    return doc


def test_config_file_is_equivalent_to_flags(gate, data):
    (data / "ci").mkdir()
    write(data / "ci" / "gate.toml", CONFIG)
    code_f, flags = gate_json(gate, *FLAGS)
    code_c, conf = gate_json(gate, "--config", "ci/gate.toml", "one_bad.txt")
    assert code_f == code_c == 0
    assert conf["inputs"]["qrels"]["path"] == "ci/../qrels.txt"
    assert conf["inputs"]["config"] == {"path": "ci/gate.toml",
                                        "sha256": hashlib.sha256(CONFIG.encode()).hexdigest()}
    assert _without_sources(conf) == _without_sources(flags)
    assert [c["name"] for c in conf["checks"]] == ["map >= 0.5", "recip_rank >= 0.6", "map drop <= 0.01",
                                                   "ndcg_cut_10 drop <= 5%"]
    assert [m["measure"] for m in conf["measures"]] == ["map", "recip_rank", "ndcg_cut_10", "P_5"]


def test_command_line_overrides_config(gate, data):
    write(data / "gate.toml", CONFIG.replace("../", ""))
    assert gate("--config", "gate.toml", "one_bad.txt").code == 0
    res = gate("--config", "gate.toml", "one_bad.txt", "--min", "map=0.95")
    assert (res.code, res.err) == (1, "ireval: gate failed: 1 of 4 checks failed (map >= 0.95)\n")
    code, doc = gate_json(gate, "--config", "gate.toml", "one_bad.txt", "--test", "t", "--baseline", "half.txt")
    assert code == 0 and doc["options"]["test"] == "t" and doc["inputs"]["baseline"]["path"] == "half.txt"


# ---------------------------------------------------------------- formats


def test_json_report(gate, data):
    code, doc = gate_json(gate, "qrels.txt", "small_drop.txt", "--baseline", "perfect.txt", "--min", "map=0.5",
                          "--max-drop", "map=0.01")
    assert code == 1
    assert (doc["command"], doc["verdict"], doc["checks_total"], doc["checks_failed"]) == ("gate", "fail", 2, 1)
    for what, name in (("qrels", "qrels.txt"), ("run", "small_drop.txt"), ("baseline", "perfect.txt")):
        assert doc["inputs"][what]["sha256"] == hashlib.sha256((data / name).read_bytes()).hexdigest()
    floor, drop = doc["checks"]
    assert floor == {"name": "map >= 0.5", "kind": "min", "measure": "map", "threshold": 0.5, "value": 0.9375,
                     "baseline": 1.0, "diff": -0.0625, "rel_diff": -0.0625, "test": None, "p_value": None,
                     "alpha": None, "verdict": "pass", "reason": "at or above the floor: 0.9375 >= 0.5",
                     "source": "--min map=0.5"}
    assert (drop["verdict"], drop["reason"]) == ("fail", "drop 0.0625 > 0.01")


def test_junit_is_well_formed(gate):
    res = gate("qrels.txt", "big_drop.txt", "--baseline", "perfect.txt", "--min", "map=0.5", "--max-drop", "map=0.01",
               "--max-drop-rel", "recip_rank=0.4", "--format", "junit")
    assert res.code == 1
    root = ET.fromstring(res.out)
    suite = root.find("testsuite")
    assert (root.tag, root.get("tests"), root.get("failures")) == ("testsuites", "3", "2")
    cases = suite.findall("testcase")
    assert [c.get("name") for c in cases] == ["map >= 0.5", "map drop <= 0.01", "recip_rank drop <= 40%"]
    assert [c.find("failure") is not None for c in cases] == [False, True, True]
    assert cases[1].find("failure").get("message") == "drop 0.4375 > 0.01"
    props = {p.get("name"): p.get("value") for p in suite.find("properties")}
    assert props["run"] == "big_drop.txt" and len(props["run.sha256"]) == 64


MARKDOWN = """\
### ❌ ireval gate: FAILED: 1 of 3 checks failed

| Check | Value | Baseline | Diff | p | Verdict | Why |
|---|---:|---:|---:|---:|---|---|
| map >= 0.9 | 0.8875 | 1.0000 | -0.1125 | - | ❌ **fail** | below the floor: 0.8875 < 0.9 |
| map drop <= 0.01 | 0.8875 | 1.0000 | -0.1125 | 0.1753 | ✅ pass | drop 0.1125 > 0.01 but not significant (p = 0.1753 >= 0.1) |
| recip_rank drop <= 20% | 0.8875 | 1.0000 | -0.1125 | 0.1753 | ✅ pass | drop 11.25% within the tolerance 20% |

- one_bad.txt against perfect.txt, on the 8 topics judged in qrels.txt (a topic without results scores 0).
- p: one-sided paired t-test, candidate worse than baseline; a drop beyond its tolerance fails only if p < 0.1.
- P_10: 0.1000 (baseline 0.1000, +0.0000)

<details><summary>inputs (SHA-256)</summary>

- qrels: `qrels.txt` `{qrels}`
- run: `one_bad.txt` `{run}`
- baseline: `perfect.txt` `{base}`

</details>
"""


def test_markdown_golden(gate, data):
    res = gate("qrels.txt", "one_bad.txt", "--baseline", "perfect.txt", "--min", "map=0.9", "--max-drop", "map=0.01",
               "--max-drop-rel", "recip_rank=0.2", "--alpha", "0.1", "-m", "P.10", "--format", "markdown")
    sha = {k: hashlib.sha256((data / f).read_bytes()).hexdigest()
           for k, f in (("qrels", "qrels.txt"), ("run", "one_bad.txt"), ("base", "perfect.txt"))}
    assert res.out.decode() == MARKDOWN.format(**sha)


def test_report_is_written_atomically_before_exit_1(gate, data):
    args = ["qrels.txt", "big_drop.txt", "--min", "map=0.9", "--format", "json"]
    res = gate(*args, "--output", "report.json")
    assert (res.code, res.out) == (1, b"")
    assert res.err == "ireval: gate failed: 1 of 1 check failed (map >= 0.9)\n"
    assert (data / "report.json").read_bytes() == gate(*args).out
    assert [p.name for p in data.iterdir() if p.name.startswith(".ireval-")] == []


def test_plain_and_rich_tables(gate, monkeypatch):
    args = ["qrels.txt", "small_drop.txt", "--baseline", "perfect.txt", "--min", "map=0.5"]
    lines = gate(*args).out.decode().splitlines()
    assert lines[0] == "ireval gate: passed: 1 check"
    assert lines[2].split() == ["Check", "Value", "Baseline", "Diff", "p", "Verdict", "Why"]
    assert lines[4].split() == ["map", ">=", "0.5", "0.9375", "1.0000", "-0.0625", "-", "pass", "at", "or", "above",
                                "the", "floor:", "0.9375", ">=", "0.5"]
    monkeypatch.setattr("irevalcli.gate.stdout_is_terminal", lambda: True)
    out = gate(*args).out.decode()
    assert "\x1b[" in out and "ireval gate: passed: 1 check" in out and "0.9375" in out
