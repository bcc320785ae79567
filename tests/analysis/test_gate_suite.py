"""Issue 24 item 5: several collections in one gate. A --config with [[collection]] blocks (name, qrels,
run or candidate, baseline, measures and the check tables of a config file, inside each block) checks every
collection; the drop p-values of every collection x measure are Holm-corrected together; one verdict and
one report, each row naming its collection; the paths in a block resolve as every config path does.

Hand-computed: each collection judges R{t} relevant and N{t}, M{t} not, on topics 1-4; AP = 1 / the rank
of R{t}. web: baseline ranks 1 1 1 1 (map 1), candidate 1 1 1 2 (map 0.875; differences 0 0 0 -0.5: paired
t = -1 on 3 degrees of freedom). news: baseline 1 1 1 1, candidate 2 2 2 3 (map 0.4583; differences
-0.5 -0.5 -0.5 -0.6667: mean -13/24, sd 1/12, t = -13). Holm over the two: news' p doubled, web's the
larger of its own and that."""

from __future__ import annotations

import json

import pytest
from scipy import stats

from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n{t} 0 M{t} 0\n" for t in range(1, 5))


def run_text(ranks: list[int], tag: str) -> str:
    lines = []
    for t, k in enumerate(ranks, start=1):
        docs = [f"N{t}", f"M{t}"]
        docs.insert(k - 1, f"R{t}")
        lines += [f"{t} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
    return "".join(lines)


SUITE = """alpha = {alpha}

[[collection]]
name = "web"
qrels = "web_qrels.txt"
candidate = "web_cand.txt"
baseline = "web_base.txt"
[collection.max_drop]
map = 0.01

[[collection]]
name = "news"
qrels = "news_qrels.txt"
run = "news_cand.txt"
baseline = "news_base.txt"
measures = ["P.1"]
[collection.max_drop]
map = 0.01
[collection.min]
map = 0.4
"""
P_WEB = float(stats.t.cdf(-1, 3))  # 0.1955
P_NEWS = float(stats.t.cdf(-13, 3))  # 0.00049


@pytest.fixture
def data(tmp_path):
    d = tmp_path / "suite"
    d.mkdir()
    for name in ("web", "news"):
        write(d / f"{name}_qrels.txt", QRELS)
        write(d / f"{name}_base.txt", run_text([1, 1, 1, 1], "base"))
    write(d / "web_cand.txt", run_text([1, 1, 1, 2], "cand"))
    write(d / "news_cand.txt", run_text([2, 2, 2, 3], "cand"))
    write(d / "suite.toml", SUITE.format(alpha=0.05))
    return tmp_path


def test_every_collection_checked_one_verdict(cli, data):
    res = cli(["gate", "--config", "suite/suite.toml"], cwd=data)  # paths relative to the config's folder
    assert res.code == 1
    lines = res.out.decode().splitlines()
    assert lines[0] == "ireval gate: FAILED: 1 of 3 checks failed"
    assert max(map(len, lines)) <= 80  # piped too: names, reasons and notes wrap at spaces
    assert lines[2:] == [
        "Check               Value  Baseline     Diff       p  Verdict  Why",
        "-----------------  ------  --------  -------  ------  -------  -----------------",
        "web: map drop <=   0.8750    1.0000  -0.1250  0.1955  pass     drop 0.1250 >",
        "0.01                                                           0.01 but not",
        "                                                               significant (p =",
        "                                                               0.1955 >= 0.05)",
        "news: map >= 0.4   0.4583    1.0000  -0.5417       -  pass     at or above the",
        "                                                               floor: 0.4583 >=",
        "                                                               0.4",
        "news: map drop <=  0.4583    1.0000  -0.5417  0.0010  FAIL     drop 0.5417 >",
        "0.01                                                           0.01, significant",
        "                                                               (p = 0.0010 <",
        "                                                               0.05)",
        "",
        "web: suite/web_cand.txt against suite/web_base.txt, on the 4 topics judged in",
        "  suite/web_qrels.txt (a topic without results scores 0).",
        "news: suite/news_cand.txt against suite/news_base.txt, on the 4 topics judged in",
        "  suite/news_qrels.txt (a topic without results scores 0).",
        "p: one-sided paired t-test, candidate worse than baseline; a drop beyond its",
        "  tolerance fails only if p < 0.05; p Holm-corrected over the 2 drop tests of",
        "  every collection.",
        "news: P_1: 0.0000 (baseline 1.0000, -1.0000)",
    ]
    assert res.err == "ireval: gate failed: 1 of 3 checks failed (news: map drop <= 0.01)\n"


def test_json_records_the_suite_and_holm(cli, data):
    res = cli(["gate", "--config", "suite/suite.toml", "--format", "json"], cwd=data)
    doc = json.loads(res.out)
    assert (doc["options"]["correction"], doc["options"]["tests_corrected"], doc["topics"]) == ("holm", 2, 8)
    blocks = doc["inputs"]["collections"]
    assert [(b["name"], b["run"]["path"], b["baseline"]["path"], b["qrels"]["path"], b["topics"]) for b in blocks] == [
        ("web", "suite/web_cand.txt", "suite/web_base.txt", "suite/web_qrels.txt", 4),
        ("news", "suite/news_cand.txt", "suite/news_base.txt", "suite/news_qrels.txt", 4),
    ]
    assert doc["inputs"]["config"]["path"] == "suite/suite.toml"
    rows = {c["name"]: c for c in doc["checks"]}
    assert [c["collection"] for c in doc["checks"]] == ["web", "news", "news"]
    assert rows["web: map drop <= 0.01"]["p_value"] == pytest.approx(P_WEB, rel=1e-9)
    assert rows["news: map drop <= 0.01"]["p_value"] == pytest.approx(2 * P_NEWS, rel=1e-9)
    assert rows["news: map drop <= 0.01"]["value"] == pytest.approx(11 / 24, abs=1e-15)
    assert [(m["collection"], m["measure"]) for m in doc["measures"]] == [
        ("web", "map"),
        ("news", "map"),
        ("news", "P_1"),
    ]


def test_holm_lets_through_what_one_collection_alone_fails(cli, data):
    """At alpha 0.0008 news' own p (0.00049) is significant, its Holm-corrected one (0.00098) is not."""
    alone = cli(
        [
            "gate",
            "suite/news_qrels.txt",
            "suite/news_cand.txt",
            "--baseline",
            "suite/news_base.txt",
            "--max-drop",
            "map=0.01",
            "--alpha",
            "0.0008",
        ],
        cwd=data,
    )
    assert alone.code == 1
    res = cli(["gate", "--config", "suite/suite.toml", "--alpha", "0.0008", "--format", "json"], cwd=data)
    assert res.code == 0, res.err
    rows = {c["name"]: c for c in json.loads(res.out)["checks"]}
    assert rows["news: map drop <= 0.01"]["reason"] == ("drop 0.5417 > 0.01 but not significant (p = 0.0010 >= 0.0008)")


def test_markdown_and_junit_name_each_collection(cli, data):
    md = cli(["gate", "--config", "suite/suite.toml", "--format", "markdown"], cwd=data).out.decode()
    assert "| news: map drop <= 0.01 |" in md
    assert "- web run: `suite/web_cand.txt` `" in md and "- news baseline: `suite/news_base.txt` `" in md
    junit = cli(["gate", "--config", "suite/suite.toml", "--format", "junit"], cwd=data).out.decode()
    assert '<property name="web qrels" value="suite/web_qrels.txt" />' in junit
    assert 'name="news: map drop &lt;= 0.01"' in junit


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        (
            '[[collection]]\nqrels = "q.txt"\n',
            "suite/bad.toml: [[collection]] block 1 needs a name (a non-empty string)",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\n[collection.min]\nmap = 0.1\n'
            '[[collection]]\nname = "a"\n',
            "suite/bad.toml: [[collection]] 'a' is named twice; give each block its own name",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\nalpha = 0.1\n',
            "suite/bad.toml: [[collection]] 'a': unknown key 'alpha' (known: name, qrels, run, candidate, baseline, "
            "measures, min, max_drop, max_drop_rel, non_inferior, max_losers, min_judged)",
        ),
        (
            'run = "web_cand.txt"\n[[collection]]\nname = "a"\n',
            "suite/bad.toml: 'run' belongs inside each [[collection]] block (at the top: alpha, test, seed, "
            "permutations, level_for_rel, ties, interval, confidence, bootstrap)",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\n',
            "suite/bad.toml: [[collection]] 'a': nothing to check: give [collection.min], [collection.max_drop], ...",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\n[collection.min]\nmap = 0.1\n',
            "suite/bad.toml: [[collection]] 'a': no 'run'",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\n[collection.max_drop]\n'
            "map = 0.1\n",
            "suite/bad.toml: [[collection]] 'a': suite/bad.toml [[collection]] 'a' [max_drop] map: a drop needs a "
            "'baseline'",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "s3://bucket/q.txt"\nrun = "web_cand.txt"\n',
            "suite/bad.toml: 'qrels' is the URL s3://bucket/q.txt; a config file may name local files only (give "
            "the URL on the command line, or --allow-remote-config-paths to read URLs named in config files)",
        ),
        (
            '[[collection]]\nname = "a"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\ncandidate = "x"\n',
            "suite/bad.toml: [[collection]] 'a': give the run as 'run' or 'candidate', not both",
        ),
        (
            "collection = 3\n",
            "suite/bad.toml: 'collection' must be [[collection]] blocks (name, qrels, run, baseline, checks)",
        ),
    ],
)
def test_bad_suites_exit_2(cli, data, toml, message):
    write(data / "suite" / "bad.toml", toml)
    res = cli(["gate", "--config", "suite/bad.toml"], cwd=data)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {message}\n")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["suite/web_cand.txt"],
            "[QRELS] RUN: suite/suite.toml has [[collection]] blocks, which name every input and check; give them "
            "inside its blocks",
        ),
        (
            ["--min", "map=0.1"],
            "--min: suite/suite.toml has [[collection]] blocks, which name every input and check; give them "
            "inside its blocks",
        ),
        (
            ["--unjudged-out", "u.qrels"],
            "--unjudged-out u.qrels: applies to one run, not a suite of [[collection]] blocks",
        ),
    ],
)
def test_suite_command_line_errors(cli, data, args, message):
    res = cli(["gate", "--config", "suite/suite.toml", *args], cwd=data)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: {message}\n")


def test_output_never_replaces_a_collections_input(cli, data):
    before = (data / "suite" / "news_base.txt").read_bytes()
    res = cli(["gate", "--config", "suite/suite.toml", "--output", "suite/news_base.txt"], cwd=data)
    assert (res.code, res.err) == (
        2,
        "ireval: --output suite/news_base.txt: is the input file suite/news_base.txt; writing it would destroy "
        "the input (give another output file)\n",
    )
    assert (data / "suite" / "news_base.txt").read_bytes() == before


def test_min_judged_in_a_block(cli, data):
    """Every document of the runs is judged: judged@2 = 1 in web, shown beside its rows only."""
    write(
        data / "suite" / "j.toml",
        '[[collection]]\nname = "web"\nqrels = "web_qrels.txt"\nrun = "web_cand.txt"\n[collection.min_judged]\n'
        '2 = 0.9\n[collection.min]\nmap = 0.8\n[[collection]]\nname = "news"\nqrels = "news_qrels.txt"\n'
        'run = "news_cand.txt"\n[collection.min]\nmap = 0.5\n',
    )
    res = cli(["gate", "--config", "suite/j.toml", "--format", "json"], cwd=data)
    assert res.code == 1
    doc = json.loads(res.out)
    assert doc["options"]["judged_k"] == 2
    assert [(c["name"], c["judged"], c["verdict"]) for c in doc["checks"]] == [
        ("web: map >= 0.8", 1.0, "pass"),
        ("web: judged@2 >= 0.9", 1.0, "pass"),
        ("news: map >= 0.5", None, "fail"),
    ]
    write(data / "suite" / "k.toml", (data / "suite" / "j.toml").read_text() + "[collection.min_judged]\n3 = 0.5\n")
    res = cli(["gate", "--config", "suite/k.toml"], cwd=data)
    assert res.err == "ireval: suite/k.toml: [min_judged] gives 2 depths across the collections (2, 3); give one K\n"


# ---------------------------------------------------------------- the gate's invariant, for a suite


def _table(kind: str, measure: str, threshold: float) -> tuple[str, str]:
    from tests.analysis.test_gate import _losers_arg

    if kind == "min_judged":
        return "5", repr(threshold)
    if kind == "max_losers":
        return json.dumps(measure), json.dumps(_losers_arg(threshold))
    return json.dumps(measure), repr(threshold)


def test_a_suite_judges_each_collection_as_its_own_gate(tmp_path_factory):
    """For random collections (qrels, runs, baselines, checks): every row of the suite has the verdict of the
    same check in the collection's own gate, except that a drop check under alpha may pass in the suite only
    by its Holm-corrected p (a larger p); the suite exits 0 only when every row passes, and 2 when a collection
    alone is refused. A check worse than its bound thus never passes in a suite where it fails alone, unless it
    is a drop whose corrected p-value is not significant."""
    from hypothesis import HealthCheck, event, example, given, settings
    from hypothesis import strategies as st

    from tests.analysis.test_gate import _main, _run_lines, _strategies

    run_st, qrels_st, checks_st, alpha_st, _ = _strategies()
    root = tmp_path_factory.mktemp("suite_property")
    collection = st.tuples(qrels_st, run_st, run_st, checks_st)

    two = (
        {1: {0: 1, 1: 0}, 2: {0: 1, 1: 0}, 3: {0: 1, 1: 0}},
        {1: [(1, 1.0), (0, 0.5)], 2: [(1, 1.0), (0, 0.5)], 3: [(0, 1.0), (4, 0.5)]},
        {1: [(0, 1.0), (1, 0.5)], 2: [(0, 1.0), (1, 0.5)], 3: [(0, 1.0), (1, 0.5)]},
        [("max_drop", "map", 0.01), ("min_judged", "map", 0.25), ("max_losers", "map", 0.25)],
    )
    one = (
        {1: {0: 1}, 2: {0: 2}},
        {1: [(0, 1.0)], 2: [(3, 1.0), (0, 0.5)]},
        {1: [(0, 1.0)], 2: [(0, 1.0)]},
        [
            ("max_drop_rel", "map", 0.1),
            ("non_inferior", "P.5", 0.1),
        ],
    )

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @example(collections=[two, one], alpha=0.5)
    @example(collections=[two, one], alpha=None)
    @given(collections=st.lists(collection, min_size=1, max_size=3), alpha=alpha_st)
    def prop(collections, alpha):
        blocks, alone = [], {}
        for i, (qrels, cand, base, checks) in enumerate(collections):
            checks = [(k, "judged.5", t) if k == "min_judged" else (k, m, t) for k, m, t in checks]
            d = root / f"c{i}"
            d.mkdir(exist_ok=True)
            (d / "q.txt").write_text("".join(f"{t} 0 d{x} {r}\n" for t, j in qrels.items() for x, r in j.items()))
            (d / "c.txt").write_text(_run_lines(cand, "c"))
            (d / "b.txt").write_text(_run_lines(base, "b"))
            if not (d / "c.txt").read_text() or not (d / "b.txt").read_text():
                return
            tables: dict[str, list[str]] = {}
            for kind, measure, threshold in checks:
                key, value = _table(kind, measure, threshold)
                tables.setdefault(kind, []).append(f"{key} = {value}")
            block = (
                f'[[collection]]\nname = "c{i}"\nqrels = "c{i}/q.txt"\nrun = "c{i}/c.txt"\nbaseline = "c{i}/b.txt"\n'
            )
            block += "".join(f"[collection.{k}]\n" + "\n".join(v) + "\n" for k, v in tables.items())
            blocks.append(block)
            one = f"c{i}/one.toml"
            (root / one).write_text(
                (f"alpha = {alpha}\n" if alpha is not None else "")
                + 'qrels = "q.txt"\nrun = "c.txt"\nbaseline = "b.txt"\n'
                + "".join(f"[{k}]\n" + "\n".join(v) + "\n" for k, v in tables.items())
            )
            alone[f"c{i}"] = _main(["gate", "--config", str(root / one), "--format", "json"])
        (root / "suite.toml").write_text((f"alpha = {alpha}\n" if alpha is not None else "") + "".join(blocks))
        code, out, err = _main(["gate", "--config", str(root / "suite.toml"), "--format", "json"])
        if any(c == 2 for c, _, _ in alone.values()):
            assert code == 2 and out == b"", err  # a collection refused alone is refused in the suite
            event("refused")
            return
        assert code in (0, 1), err
        event(f"suite exit {code}")
        doc = json.loads(out)
        verdicts = {}
        for name, (_, o, _) in alone.items():
            for row in json.loads(o)["checks"]:
                verdicts[f"{name}: {row['name']}"] = row
        assert sorted(r["name"] for r in doc["checks"]) == sorted(verdicts)
        for row in doc["checks"]:
            own = verdicts[row["name"]]
            if row["kind"] in ("max_drop", "max_drop_rel") and alpha is not None and row["p_value"] is not None:
                assert row["p_value"] >= own["p_value"] - 1e-15
                assert row["verdict"] == own["verdict"] or (own["verdict"] == "fail" and row["p_value"] >= alpha)
            else:
                assert row["verdict"] == own["verdict"], (row, own)
        assert code == (0 if all(r["verdict"] == "pass" for r in doc["checks"]) else 1)

    prop()
