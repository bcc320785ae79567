"""ireval compare: numbers against scipy on the per-topic scores, formats, missing topics, errors."""

from __future__ import annotations

import csv
import io
import json
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.stats

from irevalcli.api import evaluate
from tests.conftest import write

EXAMPLES = Path(__file__).parents[2] / "examples"
QRELS, RUN1, RUN2 = EXAMPLES / "qrels.txt", EXAMPLES / "run.txt", EXAMPLES / "run2.txt"


def per_topic(run: Path | str, label: str, qrels: Path | str = QRELS) -> np.ndarray:
    ev = evaluate(str(qrels), str(run), [label], complete=True)
    (col,) = [c for c in ev.results.columns if c.label == label]
    return np.asarray(col.per_query)


def compare_json(cli, *args) -> dict:
    res = cli(["compare", *map(str, args), "--format", "json"])
    assert res.code == 0, res.err
    return json.loads(res.out)


def test_numbers_match_scipy_on_the_per_topic_scores(cli):
    doc = compare_json(cli, QRELS, RUN1, RUN2, "-m", "map", "-m", "ndcg_cut.10", "--bootstrap", "2000", "--seed", "4")
    assert [c["measure"] for c in doc["comparisons"]] == ["map", "ndcg_cut_10"]
    for c in doc["comparisons"]:
        x, y = per_topic(RUN2, c["measure"]), per_topic(RUN1, c["measure"])
        d = x - y
        t = scipy.stats.ttest_rel(x, y)
        ci = scipy.stats.bootstrap(
            (d,), np.mean, n_resamples=2000, method="percentile", rng=np.random.default_rng(4)
        ).confidence_interval
        assert c["p_value_raw"] == float(t.pvalue)
        assert c["statistic"] == float(t.statistic)
        assert (c["ci_low"], c["ci_high"]) == (float(ci.low), float(ci.high))
        assert c["mean"] == pytest.approx(x.mean(), abs=1e-15)
        assert c["baseline_mean"] == pytest.approx(y.mean(), abs=1e-15)
        assert c["mean_diff"] == pytest.approx(d.mean(), abs=1e-15)
        assert c["rel_diff"] == pytest.approx(c["mean_diff"] / c["baseline_mean"])
        assert c["effect_size"] == pytest.approx(d.mean() / d.std(ddof=1), rel=1e-12)
        assert (c["wins"], c["ties"], c["losses"]) == (int((d > 0).sum()), int((d == 0).sum()), int((d < 0).sum()))
        assert c["gsb"] == (c["wins"] - c["losses"]) / len(d)
        assert c["topics"] == 8 and c["missing_topics"] == 0
    # two comparisons: Holm by default
    raw = sorted((c["p_value_raw"], i) for i, c in enumerate(doc["comparisons"]))
    assert doc["options"]["correction"] == "holm"
    assert doc["comparisons"][raw[0][1]]["p_value"] == pytest.approx(min(1, 2 * raw[0][0]))
    assert doc["comparisons"][raw[1][1]]["p_value"] == pytest.approx(max(min(1, 2 * raw[0][0]), raw[1][0]))


@pytest.mark.parametrize("test", ["wilcoxon", "sign", "randomization"])
def test_other_tests_match_scipy(cli, test):
    doc = compare_json(cli, QRELS, RUN1, RUN2, "-m", "P.10", "--test", test, "--permutations", "100", "--seed", "2")
    (c,) = doc["comparisons"]
    x, y = per_topic(RUN2, "P_10"), per_topic(RUN1, "P_10")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if test == "wilcoxon":
            ref = scipy.stats.wilcoxon(x, y).pvalue
        elif test == "sign":
            ref = scipy.stats.binomtest(int((x > y).sum()), int((x != y).sum())).pvalue
        else:
            ref = scipy.stats.permutation_test(
                (x, y),
                lambda a, b, axis: np.mean(a - b, axis=axis),
                permutation_type="samples",
                vectorized=True,
                n_resamples=100,
                rng=np.random.default_rng(2),
            ).pvalue
    assert c["p_value_raw"] == float(ref)
    assert c["p_value"] == c["p_value_raw"]  # one comparison: no correction
    assert doc["options"]["correction"] == "none"


def make_runs(tmp_path: Path, n: int = 20) -> tuple[Path, Path, Path]:
    """n topics, one relevant document each, placed at a rank drawn from a seeded generator."""
    rng = np.random.default_rng(0)
    qrels, base, run = [], [], []
    for t in range(1, n + 1):
        qrels.append(f"{t} 0 R{t} 1\n")
        for lines, tag in ((base, "b"), (run, "r")):
            k = int(rng.integers(1, 6))
            docs = [f"N{t}_{j}" for j in range(1, k)] + [f"R{t}"]
            lines += [f"{t} Q0 {d} {i + 1} {10 - i} {tag}\n" for i, d in enumerate(docs)]
    return (
        write(tmp_path / "q.txt", "".join(qrels)),
        write(tmp_path / "b.txt", "".join(base)),
        write(tmp_path / "r.txt", "".join(run)),
    )


def test_seeded_randomization_is_reproducible(cli, tmp_path):
    q, b, r = make_runs(tmp_path)
    args = ["compare", q, b, r, "-m", "map", "--test", "randomization", "--permutations", "500"]
    first = cli([*args, "--seed", "1"]).out
    assert cli([*args, "--seed", "1"]).out == first
    assert cli([*args, "--seed", "2"]).out != first
    doc = json.loads(cli([*args, "--seed", "1", "--format", "json"]).out)
    x, y = per_topic(r, "map", q), per_topic(b, "map", q)
    ref = scipy.stats.permutation_test(
        (x, y),
        lambda a, c, axis: np.mean(a - c, axis=axis),
        vectorized=True,
        permutation_type="samples",
        n_resamples=500,
        rng=np.random.default_rng(1),
    )
    assert doc["comparisons"][0]["p_value_raw"] == float(ref.pvalue)


def test_corrections_over_runs_and_measures(cli):
    args = [QRELS, RUN1, RUN2, RUN1, "-m", "map", "-m", "P.5"]
    for corr in ("bonferroni", "holm", "none"):
        doc = compare_json(cli, *args, "--correction", corr)
        raw = [c["p_value_raw"] for c in doc["comparisons"]]
        assert len(raw) == 4  # 2 runs x 2 measures
        got = [c["p_value"] for c in doc["comparisons"]]
        if corr == "none":
            assert got == raw
        elif corr == "bonferroni":
            assert got == pytest.approx([None if p is None else min(1.0, 4 * p) for p in raw])
    # run.txt against itself: every difference is zero, p = 1
    same = [c for c in doc["comparisons"] if c["run"].endswith("run.txt")]
    assert all(c["p_value_raw"] == 1.0 and c["ties"] == 8 and c["ci_low"] == 0.0 for c in same)


def test_missing_topics_score_zero_and_are_reported(cli, tmp_path):
    text = RUN2.read_text()
    cut = write(
        tmp_path / "cut.txt", "".join(line for line in text.splitlines(True) if not line.startswith(("403 ", "405 ")))
    )
    doc = compare_json(cli, QRELS, RUN1, cut, "-m", "map")
    (c,) = doc["comparisons"]
    full = per_topic(RUN2, "map")
    qids = evaluate(str(QRELS), str(RUN2), ["map"]).results.qids
    keep = np.array([q not in ("403", "405") for q in qids])
    assert c["mean"] == pytest.approx(full[keep].sum() / 8)
    assert c["missing_topics"] == 2 and c["topics"] == 8
    assert doc["inputs"]["runs"][0]["missing_topics"] == ["403", "405"]
    text_out = cli(["compare", QRELS, RUN1, cut, "-m", "map"]).out.decode()
    assert f"{cut} has no results for 2 of 8 topics (scored 0): 403 405" in text_out


def test_two_parameters_of_one_measure_are_both_compared(cli):
    doc = compare_json(cli, QRELS, RUN1, RUN2, "-m", "P.10", "-m", "P.5", "-m", "P_10")
    assert [c["measure"] for c in doc["comparisons"]] == ["P_10", "P_5"]


def test_worst_topics(cli):
    doc = compare_json(cli, QRELS, RUN1, RUN2, "-m", "P.10", "--worst", "3")
    (c,) = doc["comparisons"]
    assert c["worst"] == [{"qid": "407", "value": 0.7, "baseline": 0.9, "diff": pytest.approx(-0.2)}]
    assert compare_json(cli, QRELS, RUN1, RUN2, "-m", "P.10")["comparisons"][0]["worst"] == []


def test_risk_measures(cli):
    doc = compare_json(cli, QRELS, RUN2, RUN1, "-m", "urisk.5:map", "-m", "TRisk:map")
    x, y = per_topic(RUN1, "map"), per_topic(RUN2, "map")
    d = x - y
    u, t = doc["risk"]
    assert (u["measure"], u["risk"], u["alpha"], u["of"]) == ("URisk_5:map", "URisk", 5.0, "map")
    assert u["value"] == pytest.approx(np.where(d < 0, 6 * d, d).mean())
    z = np.where(d < 0, 2 * d, d)
    ref = scipy.stats.ttest_1samp(z, 0.0)
    assert (t["measure"], t["value"], t["p_value"]) == ("TRisk_1:map", float(ref.statistic), float(ref.pvalue))
    assert doc["comparisons"] == []


def test_output_is_deterministic_and_atomic(cli, tmp_path):
    args = ["compare", QRELS, RUN1, RUN2, "-m", "map", "-m", "P.10"]
    for fmt in ("table", "json", "markdown", "latex", "csv"):
        a = cli([*args, "--format", fmt]).out
        assert a and cli([*args, "--format", fmt]).out == a
    out = tmp_path / "cmp.json"
    res = cli([*args, "--format", "json", "--output", out])
    assert res.code == 0 and res.out == b""
    assert out.read_bytes() == cli([*args, "--format", "json"]).out


def test_csv_and_latex(cli):
    args = ["compare", QRELS, RUN1, RUN2, "-m", "map", "-m", "P.10"]
    rows = list(csv.DictReader(io.StringIO(cli([*args, "--format", "csv"]).out.decode())))
    doc = compare_json(cli, *args[1:])
    assert [r["measure"] for r in rows] == ["map", "P_10"]
    for r, c in zip(rows, doc["comparisons"]):
        assert float(r["p_value"]) == c["p_value"] and float(r["ci_low"]) == c["ci_low"]
        assert int(r["wins"]) == c["wins"]
    tex = cli([*args, "--format", "latex"]).out.decode()
    assert tex.count(r"\begin{tabular}") == 1 and r"P\_10" in tex and tex.rstrip().splitlines()[-2] == r"\end{tabular}"


def test_plain_table_text(cli):
    out = cli(["compare", QRELS, RUN1, RUN2, "-m", "map"]).out.decode()
    lines = out.splitlines()
    assert lines[0].split() == [
        "Measure",
        "Run",
        "Mean",
        "Diff",
        "Rel",
        "W/T/L",
        "GSB",
        "95%",
        "CI",
        "p",
        "d",
        "Missing",
    ]
    assert lines[2].split()[:4] == ["map", str(RUN1), "(baseline)", "0.6594"]
    assert lines[3].split()[:5] == [str(RUN2), "0.7453", "+0.0859", "+13.0%", "8/0/0"]
    assert "p: paired t-test, two-sided, uncorrected over 1 comparison; * p < 0.05." in out


def test_rich_table_on_a_terminal(cli, monkeypatch):
    monkeypatch.setattr("irevalcli.commands.compare.stdout_is_terminal", lambda: True)
    out = cli(["compare", QRELS, RUN1, RUN2, "-m", "map"]).out.decode()
    assert "\x1b[" in out and "ireval compare: against" in out and "0.7453" in out


@pytest.mark.parametrize(
    "args,message",
    [
        (["-m", "mapp"], "ireval: unknown measure 'mapp' (did you mean 'map'?); 'ireval measures' lists them\n"),
        (
            ["-m", "gm_map"],
            (
                "ireval: -m gm_map: no per-topic values to compare (measures such as runid, num_q and "
                "gm_map have only a summary)\n"
            ),
        ),
        (["-m", "urisk.x:map"], "ireval: -m urisk.x:map: risk parameter alpha 'x' is not a number\n"),
        (["-m", "urisk.1_0:map"], "ireval: -m urisk.1_0:map: risk parameter alpha '1_0' is not a number\n"),
        (["-m", "trisk.nan:map"], "ireval: -m trisk.nan:map: risk parameter alpha 'nan' is not a number\n"),
    ],
)
def test_usage_errors(cli, args, message):
    res = cli(["compare", QRELS, RUN1, RUN2, *args])
    assert (res.code, res.out, res.err) == (2, b"", message)


def test_input_errors_exit_2(cli, tmp_path):
    bad = write(tmp_path / "bad.txt", "401 Q0 D1 1 1.0 x\n401 Q0 D2 2\n")
    res = cli(["compare", QRELS, RUN1, bad])
    assert res.code == 2 and res.err.startswith(f"ireval: {bad}:2: ")
    other = write(tmp_path / "other.txt", "999 Q0 D1 1 1.0 x\n")
    res = cli(["compare", QRELS, RUN1, other])
    assert (res.code, res.err) == (
        2,
        (
            f"ireval: {other}: none of its 1 topics is judged in {QRELS}: the topics do "
            "not line up (wrong qrels file?)\n"
        ),
    )
    res = cli(["compare", QRELS, RUN1, tmp_path / "nope.txt"])
    assert res.code == 2 and "no such file" in res.err


# ---------------------------------------------------------------- issue 13/14: NaN, sums, ids, 80 columns


def _visible(data: bytes) -> list[str]:
    import re

    return re.sub(r"\x1b\[[0-9;]*m", "", data.decode()).splitlines()


def test_auc_compares_on_the_topics_that_have_a_value(cli, tmp_path):
    """auc's mean is its own summary, and the paired statistics use the topics where both runs have a value."""
    qrels = write(tmp_path / "q.txt", "1 0 a 1\n1 0 b 0\n2 0 c 1\n2 0 d 0\n3 0 e 1\n")  # topic 3: no auc
    base = write(tmp_path / "b.txt", "1 Q0 b 1 2 b\n1 Q0 a 2 1 b\n2 Q0 d 1 2 b\n2 Q0 c 2 1 b\n3 Q0 e 1 1 b\n")
    run = write(tmp_path / "r.txt", "1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n2 Q0 d 1 2 r\n2 Q0 c 2 1 r\n3 Q0 e 1 1 r\n")
    doc = compare_json(cli, qrels, base, run, "-m", "auc", "--worst", "3")
    (c,) = doc["comparisons"]
    assert (c["mean"], c["baseline_mean"], c["mean_diff"]) == (0.5, 0.0, 0.5)
    assert (c["wins"], c["ties"], c["losses"], c["topics"], c["topics_with_value"]) == (1, 1, 0, 3, 2)
    assert c["gsb"] == 0.5
    x, y = np.array([1.0, 0.0]), np.array([0.0, 0.0])
    assert c["p_value"] == float(scipy.stats.ttest_rel(x, y).pvalue)


def test_no_value_is_null_in_json_and_a_dash_in_tables(cli, tmp_path):
    qrels = write(tmp_path / "q.txt", "1 0 a 1\n2 0 c 1\n")
    run = write(tmp_path / "r.txt", "1 Q0 a 1 2 r\n2 Q0 c 1 1 r\n")
    res = cli(["compare", qrels, run, run, "-m", "auc", "-m", "trisk:auc", "--format", "json"])
    assert res.code == 0 and b"NaN" not in res.out
    doc = json.loads(res.out)
    assert doc["baselines"][0]["mean"] is None and doc["comparisons"][0]["topics_with_value"] == 0
    for fmt in ("table", "markdown", "latex", "csv"):
        out = cli(["compare", qrels, run, run, "-m", "auc", "--format", fmt]).out.decode()
        assert "nan" not in out.lower(), fmt


def test_summed_measures_compare_their_sums(cli):
    """num_rel_ret's summary is a sum over topics: so are its difference and its interval."""
    doc = compare_json(cli, QRELS, RUN1, RUN2, "-m", "num_rel_ret", "--bootstrap", "500")
    (c,) = doc["comparisons"]
    x, y = per_topic(RUN2, "num_rel_ret"), per_topic(RUN1, "num_rel_ret")
    assert (c["mean"], c["baseline_mean"], c["mean_diff"]) == (x.sum(), y.sum(), x.sum() - y.sum())
    ci = scipy.stats.bootstrap(
        (x - y,), np.mean, n_resamples=500, method="percentile", rng=np.random.default_rng(0)
    ).confidence_interval
    assert (c["ci_low"], c["ci_high"]) == (float(ci.low) * len(x), float(ci.high) * len(x))


def test_no_negative_zero_in_an_interval():
    from irevalcli.commands.compare import _ci

    assert _ci({"ci_low": -7.7e-18, "ci_high": 0.11634}) == "[+0.0000, +0.1163]"


def test_standard_input_is_named_dash(cli):
    res = cli(["compare", QRELS, RUN1, "-", "--format", "json"], stdin=RUN2.read_bytes())
    doc = json.loads(res.out)
    assert doc["inputs"]["runs"][0]["path"] == "-" and doc["comparisons"][0]["run"] == "-"


def test_rich_table_fits_80_columns(cli, monkeypatch):
    """An 80-column terminal gets two tables (means, then paired statistics), no line wider than 80,
    no blank lines piled under the title, and every word of every cell whole."""
    from irevalcli.commands.compare import Settings, _table_rows, format_rich, run_compare

    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setattr("irevalcli.commands.compare.stdout_is_terminal", lambda: True)
    args = [QRELS, RUN1, RUN2, RUN1, "-m", "map", "-m", "ndcg_cut.10", "-m", "trisk:map", "--worst", "2"]
    lines = _visible(cli(["compare", *args]).out)
    assert max(len(line) for line in lines) <= 80
    assert (
        lines[0].startswith("ireval compare: against ") and lines[1].strip() == "" and lines[2].split()[0] == "Measure"
    )
    assert any(line.startswith("Paired statistics") for line in lines)
    report = run_compare(
        str(QRELS), str(RUN1), [str(RUN2), str(RUN1)], ["map", "ndcg_cut.10", "trisk:map"], Settings(worst=2)
    )
    rows, _ = _table_rows(report)
    words = {w for row in rows for cell in row for w in cell.split() if len(w) <= 16}
    assert words <= {w for line in lines for w in line.split()}
    wide = _visible(format_rich(report, width=200))
    assert not any(line.startswith("Paired statistics") for line in wide)  # one table when it fits


def test_ids_are_never_markup(cli, tmp_path, monkeypatch):
    monkeypatch.setattr("irevalcli.commands.compare.stdout_is_terminal", lambda: True)
    qrels = write(tmp_path / "q.txt", "1 0 a 1\n[/x] 0 a 1\n[red]y[/red] 0 a 1\n")
    base = write(tmp_path / "[red]b.txt", "1 Q0 a 1 2 b\n[/x] Q0 a 1 2 b\n[red]y[/red] Q0 a 1 2 b\n")
    run = write(tmp_path / "[x]run[", "1 Q0 a 1 2 r\n")
    res = cli(["compare", qrels.name, base.name, run.name, "--worst", "2"], cwd=tmp_path)
    assert res.code == 0, res.err
    lines = _visible(res.out)
    assert lines[0].rstrip() == "ireval compare: against [red]b.txt"
    assert "[x]run[ has no results for 2 of 3 topics (scored 0): [/x] [red]y[/red]" in lines
    assert "Lost most ([x]run[, map): [/x] -1.0000, [red]y[/red] -1.0000" in lines


def test_text_report_counts_unjudged_topics(cli, tmp_path):
    extra = write(tmp_path / "extra.txt", RUN2.read_text() + "999 Q0 X 1 1 x\n")
    out = cli(["compare", QRELS, RUN1, extra]).out.decode()
    assert f"{extra} has 1 topic not judged in {QRELS} (ignored)" in out.splitlines()


def test_each_run_table_is_built_once_however_many_batches(monkeypatch, tmp_path):
    """-m P.5 -m P.10 -m ndcg_cut.5 -m ndcg_cut.10 needs several -m lists (trec_eval keeps the
    first parameters of a measure), but each run's table is built once (issue 15)."""
    import irevalcli.api as api
    from irevalcli.commands.compare import load_inputs, measure_batches, score_run

    calls = []
    real = api.build_table

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "build_table", counting)
    (tmp_path / "q").write_text("1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (tmp_path / "r1").write_text("1 Q0 a 1 2 x\n1 Q0 b 2 1 x\n2 Q0 c 1 1 x\n")
    specs = ["P.5", "P.10", "ndcg_cut.5", "ndcg_cut.10"]
    batches, labels = measure_batches(specs)
    assert len(batches) == 2 and labels == ["P_5", "P_10", "ndcg_cut_5", "ndcg_cut_10"]
    qrels, (run,) = load_inputs(str(tmp_path / "q"), [str(tmp_path / "r1")])
    scored = score_run(qrels, run, batches, labels)
    assert len(calls) == 1  # one table for all the batches
    assert scored.values["P_5"].tolist() == [0.2, 0.2] and scored.values["P_10"].tolist() == [0.1, 0.1]
    assert scored.values["ndcg_cut_10"].tolist() == [1.0, 1.0]


def test_evaluate_takes_lists_of_measure_lists():
    """evaluate(q, r, [["P.5"], ["P.10"]]): each inner list is one -m command line."""
    import pandas as pd

    from irevalcli import evaluate

    q = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "rel": [1, 0]})
    r = pd.DataFrame({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]})
    s = evaluate(q, r, [["P.1"], ["P.2", "map"]]).results.summary
    assert (s["P_1"], s["P_2"], s["map"]) == (1.0, 0.5, 1.0)


def test_quoted_globs_name_their_runs_as_in_the_main_command(cli, tmp_path):
    """'runs/*.txt' (quoted, so the shell leaves it) names its files, sorted; BASELINE is the
    first. The same report as the files named one by one; --all-pairs takes a glob alone."""
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "a.txt").write_bytes(RUN1.read_bytes())
    (runs / "b.txt").write_bytes(RUN2.read_bytes())
    args = ["-m", "map", "--format", "json"]
    named = cli(["compare", str(QRELS), "runs/a.txt", "runs/b.txt", *args], cwd=tmp_path)
    globbed = cli(["compare", str(QRELS), "runs/*.txt", *args], cwd=tmp_path)
    assert named.code == 0 and (globbed.code, globbed.out) == (0, named.out)
    pairs = cli(["compare", "--all-pairs", str(QRELS), "runs/*.txt", *args], cwd=tmp_path)
    assert (
        pairs.code == 0
        and pairs.out
        == cli(["compare", "--all-pairs", str(QRELS), "runs/a.txt", "runs/b.txt", *args], cwd=tmp_path).out
    )
    one = cli(["compare", str(QRELS), "runs/a.*", *args], cwd=tmp_path)
    assert (one.code, one.err) == (2, "ireval: Missing argument 'RUN...'. (see 'ireval compare --help')\n")
    none = cli(["compare", str(QRELS), "runs/a.txt", "other/*.txt", *args], cwd=tmp_path)
    assert (none.code, none.err) == (2, "ireval: other/*.txt: cannot read run file: no file matches this pattern\n")
