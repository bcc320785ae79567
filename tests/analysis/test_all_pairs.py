"""ireval compare --all-pairs and irevalcli.compare_all_pairs(): every run against every other.

Six topics, each with one relevant document; a run ranks it at a known rank k, so a topic's
average precision is 1/k, P_1 is 1 when k = 1, FP is k - 1 and num_ret is k. Three runs:

    a = base.txt   ranks 1 1 1 1 1 1   map 1        P_1 1     FP 0 (sum)   num_ret 6
    b = worse.txt  ranks 2 2 2 2 2 2   map 0.5      P_1 0     FP 6         num_ret 12
    c = mixed.txt  ranks 1 1 2 2 4 4   map 3.5/6    P_1 1/3   FP 8         num_ret 14

Sign test (two-sided binomial on wins out of wins + losses), by hand:
    map  a-b 6 wins: p = 2/2^6 = 0.03125; a-c 4 wins 2 ties: 2/2^4 = 0.125;
         b-c 2 wins 2 ties 2 losses: 1
    P_1  a-b 0.03125; a-c 0.125; b-c 0 wins 4 ties 2 losses: p = 2/2^2 = 0.5
Holm over the 6 comparisons (map's pairs, then P_1's; equal p-values keep that order):
    0.03125 x 6 = 0.1875, then max(0.1875, 0.03125 x 5) = 0.1875, 0.125 x 4 = 0.5,
    max(0.5, 0.125 x 3) = 0.5, 0.5 x 2 = 1, 1.
"""

from __future__ import annotations

import csv
import io
import json

import pytest
import scipy.stats

import irevalcli
from irevalcli.analysis.compare import run_letter
from irevalcli.errors import UsageError
from tests.conftest import write

QRELS = "".join(f"{t} 0 R{t} 1\n{t} 0 N{t} 0\n" for t in range(1, 7))
RANKS = {"base.txt": [1] * 6, "worse.txt": [2] * 6, "mixed.txt": [1, 1, 2, 2, 4, 4]}
RUNS = list(RANKS)


def run_text(ranks: list[int], tag: str) -> str:
    """Topic t: unjudged documents above the relevant one at rank k."""
    lines = []
    for t, k in enumerate(ranks, start=1):
        for i in range(k):
            doc = f"R{t}" if i == k - 1 else f"X{t}_{i}"
            lines.append(f"{t} Q0 {doc} {i + 1} {100 - i} {tag}\n")
    return "".join(lines)


@pytest.fixture
def files(tmp_path):
    write(tmp_path / "qrels.txt", QRELS)
    for name, ranks in RANKS.items():
        write(tmp_path / name, run_text(ranks, name[:-4]))
    return tmp_path


def all_pairs(cli, files, *args):
    res = cli(["compare", "--all-pairs", "qrels.txt", *RUNS, *args], cwd=files)
    assert res.err == "" and res.code == 0
    return res.out.decode()


SIGN = ("-m", "map", "-m", "P.1", "--test", "sign", "--alpha", "0.2")


def test_matrix_wins_and_one_holm_correction_by_hand(files):
    report = irevalcli.compare_all_pairs(
        files / "qrels.txt", [files / r for r in RUNS], ["map", "P.1"], test="sign", alpha=0.2
    )
    assert report.letters == ("a", "b", "c") and report.measures == ("map", "P_1")
    assert [(p.measure, p.letter_a, p.letter_b) for p in report.pairs] == [
        ("map", "a", "b"),
        ("map", "a", "c"),
        ("map", "b", "c"),
        ("P_1", "a", "b"),
        ("P_1", "a", "c"),
        ("P_1", "b", "c"),
    ]
    assert [(p.wins, p.ties, p.losses) for p in report.pairs] == [
        (6, 0, 0),
        (4, 2, 0),
        (2, 2, 2),
        (6, 0, 0),
        (4, 2, 0),
        (0, 4, 2),
    ]
    assert [p.p_value_raw for p in report.pairs] == [0.03125, 0.125, 1.0, 0.03125, 0.125, 0.5]
    assert [p.p_value for p in report.pairs] == [0.1875, 0.5, 1.0, 0.1875, 0.5, 1.0]
    assert report.options["correction"] == "holm" and report.options["comparisons"] == 6
    assert [m.mean for m in report.means] == [1.0, 0.5, 3.5 / 6, 1.0, 0.0, 1 / 3]
    assert report.matrix("map") == [[None, 0.1875, 0.5], [0.1875, None, 1.0], [0.5, 1.0, None]]
    assert report.pair("map", 2, 0) is report.pair("map", 0, 2)
    assert [report.beats("map", i) for i in range(3)] == [[1], [], []]
    assert report.best("map") == [0] and report.best("P_1") == [0]
    doc = report.to_dict()
    assert doc["all_pairs"] is True and doc["better_than"] == {
        "map": {"a": ["b"], "b": [], "c": []},
        "P_1": {"a": ["b"], "b": [], "c": []},
    }
    json.dumps(doc)


def test_bonferroni_and_none_over_all_pairs(files):
    def corrected(correction):
        r = irevalcli.compare_all_pairs(
            files / "qrels.txt", [files / r for r in RUNS], ["map", "P.1"], test="sign", correction=correction
        )
        return [p.p_value for p in r.pairs]

    assert corrected("bonferroni") == [0.1875, 0.75, 1.0, 0.1875, 0.75, 1.0]
    assert corrected("none") == [0.03125, 0.125, 1.0, 0.03125, 0.125, 0.5]


def test_t_test_p_values_are_scipys_on_the_hand_values(files):
    report = irevalcli.compare_all_pairs(files / "qrels.txt", [files / r for r in RUNS], "map", correction="none")
    ap = {"base.txt": [1.0] * 6, "worse.txt": [0.5] * 6, "mixed.txt": [1, 1, 0.5, 0.5, 0.25, 0.25]}
    ab, ac, bc = report.pairs
    assert ab.p_value == 0.0 and ab.statistic is None  # every difference 0.5: no spread
    for p, (x, y) in ((ac, ("base.txt", "mixed.txt")), (bc, ("worse.txt", "mixed.txt"))):
        ref = scipy.stats.ttest_rel(ap[x], ap[y])
        assert (p.statistic, p.p_value) == (float(ref.statistic), float(ref.pvalue))


def test_direction_decides_wins_best_and_marks(files):
    """FP: lower is better (a's 0 is best; b beats c on topics 5-6, loses on 1-2).
    num_ret has no direction: no wins, no best, no mark, though its test has a p-value."""
    report = irevalcli.compare_all_pairs(
        files / "qrels.txt", [files / r for r in RUNS], ["FP", "num_ret"], test="sign", correction="none"
    )
    fp = [p for p in report.pairs if p.measure == "FP"]
    assert [(p.wins, p.ties, p.losses, p.p_value) for p in fp] == [(6, 0, 0, 0.03125), (4, 2, 0, 0.125), (2, 2, 2, 1.0)]
    assert [m.mean for m in report.means if m.measure == "FP"] == [0.0, 6.0, 8.0]
    assert report.best("FP") == [0] and report.beats("FP", 0) == [1]
    nr = [p for p in report.pairs if p.measure == "num_ret"]
    assert [(p.wins, p.ties, p.losses) for p in nr] == [(None, None, None)] * 3
    assert nr[0].p_value == 0.03125 and nr[0].direction == "none"
    assert report.best("num_ret") == [] and report.beats("num_ret", 0) == []


def test_plain_text_within_80_columns(cli, files):
    out = all_pairs(cli, files, *SIGN)
    assert out == (
        "Runs:\n"
        "  a  base.txt\n"
        "  b  worse.txt\n"
        "  c  mixed.txt\n"
        "\n"
        "Measure         a       b       c\n"
        "-------  --------  ------  ------\n"
        "map      1.0000 b  0.5000  0.5833\n"
        "P_1      1.0000 b  0.0000  0.3333\n"
        "\n"
        "Measure  Pair    Mean 1st  Mean 2nd  W/T/L        p   p raw\n"
        "-------  ------  --------  --------  -----  -------  ------\n"
        "map      a vs b    1.0000    0.5000  6/0/0  0.1875*  0.0312\n"
        "         a vs c    1.0000    0.5833  4/2/0   0.5000  0.1250\n"
        "         b vs c    0.5000    0.5833  2/2/2   1.0000  1.0000\n"
        "P_1      a vs b    1.0000    0.0000  6/0/0  0.1875*  0.0312\n"
        "         a vs c    1.0000    0.3333  4/2/0   0.5000  0.1250\n"
        "         b vs c    0.0000    0.3333  0/4/2   1.0000  0.5000\n"
        "\n"
        "6 topics judged in qrels.txt; a topic missing from a run scores 0.\n"
        "p: sign test, two-sided, Holm-corrected over 6 comparisons (3 pairs x 2\n"
        "measures); * p < 0.2.\n"
        "W/T/L: topics where the pair's first run is better / equal / worse, by the\n"
        "measure's direction (- for a measure without one).\n"
        "A letter after a mean: significantly better than the run with that letter.\n"
    )
    assert max(len(line) for line in out.splitlines()) <= 80


def test_plain_text_splits_many_runs_to_fit_80_columns(cli, files):
    names = [f"run{i}.txt" for i in range(12)]
    for i, name in enumerate(names):
        write(files / name, run_text([1 + (i + t) % 3 for t in range(6)], f"r{i}"))
    res = cli(["compare", "--all-pairs", "qrels.txt", *names, "-m", "ndcg_cut.10", "--test", "sign"], cwd=files)
    assert res.code == 0, res.err
    out = res.out.decode()
    assert max(len(line) for line in out.splitlines()) <= 80
    # 11 + 8 x 8 = 75 columns: runs a-h, then i-l under a second header
    assert "\nMeasure           a       b       c       d       e       f       g       h\n" in out
    assert "\nMeasure           i       j       k       l\n" in out


def test_latex_table_for_a_paper(cli, files):
    out = all_pairs(cli, files, *SIGN, "--format", "latex")
    assert out == (
        "\\begin{table}\n"
        "\\centering\n"
        "\\caption{map, P\\_1 of each run over 6 topics. The best value of each measure is in bold. "
        "A superscript letter marks a value significantly better than the run with that letter "
        "(sign test, two-sided, Holm correction over 6 comparisons (3 pairs x 2 measures), $p < 0.2$).}\n"
        "\\begin{tabular}{llrr}\n"
        "\\toprule\n"
        " & Run & map & P\\_1 \\\\\n"
        "\\midrule\n"
        "a & base.txt & \\textbf{1.0000}$^{b}$ & \\textbf{1.0000}$^{b}$ \\\\\n"
        "b & worse.txt & 0.5000 & 0.0000 \\\\\n"
        "c & mixed.txt & 0.5833 & 0.3333 \\\\\n"
        "\\bottomrule\n"
        "\\end{tabular}\n"
        "\\end{table}\n"
    )


def test_latex_lower_is_better_and_no_direction(cli, files):
    out = all_pairs(
        cli, files, "-m", "FP", "-m", "num_ret", "--test", "sign", "--correction", "none", "--format", "latex"
    )
    rows = out.split("\\midrule\n")[1].split("\\bottomrule")[0]
    assert rows == (
        "a & base.txt & \\textbf{0.0000}$^{b}$ & 6.0000 \\\\\n"
        "b & worse.txt & 6.0000 & 12.0000 \\\\\n"
        "c & mixed.txt & 8.0000 & 14.0000 \\\\\n"
    )
    assert "sign test, two-sided, no correction over 6 comparisons" in out


def test_markdown_csv_json(cli, files):
    md = all_pairs(cli, files, *SIGN, "--format", "markdown")
    assert md.startswith(
        "### ireval compare: every run against every other\n\n"
        "|  | Run | map | P_1 |\n"
        "|---|---|---:|---:|\n"
        "| a | base.txt | **1.0000**<sup>b</sup> | **1.0000**<sup>b</sup> |\n"
        "| b | worse.txt | 0.5000 | 0.0000 |\n"
        "| c | mixed.txt | 0.5833 | 0.3333 |\n"
    )
    assert md.endswith("- Bold: the best value of each measure.\n")
    rows = list(csv.DictReader(io.StringIO(all_pairs(cli, files, *SIGN, "--format", "csv"))))
    assert [(r["measure"], r["run_a"], r["run_b"], r["wins"], r["ties"], r["losses"], r["p_value"]) for r in rows] == [
        ("map", "base.txt", "worse.txt", "6", "0", "0", "0.1875"),
        ("map", "base.txt", "mixed.txt", "4", "2", "0", "0.5"),
        ("map", "worse.txt", "mixed.txt", "2", "2", "2", "1.0"),
        ("P_1", "base.txt", "worse.txt", "6", "0", "0", "0.1875"),
        ("P_1", "base.txt", "mixed.txt", "4", "2", "0", "0.5"),
        ("P_1", "worse.txt", "mixed.txt", "0", "4", "2", "1.0"),
    ]
    doc = json.loads(all_pairs(cli, files, *SIGN, "--format", "json"))
    assert doc["matrix"]["P_1"] == [[None, 0.1875, 0.5], [0.1875, None, 1.0], [0.5, 1.0, None]]
    assert doc["runs"] == [
        {"run": "base.txt", "letter": "a"},
        {"run": "worse.txt", "letter": "b"},
        {"run": "mixed.txt", "letter": "c"},
    ]
    assert doc["options"]["correction"] == "holm" and doc["options"]["comparisons"] == 6
    assert doc["pairs"][5]["p_value_raw"] == 0.5


def test_refused_with_all_pairs(cli, files):
    base = ["compare", "--all-pairs", "qrels.txt", *RUNS]
    for extra, msg in (
        (["--worst", "3"], "--worst is about one baseline; --all-pairs reports no lost topics"),
        (["--bootstrap", "50"], "--bootstrap is about one baseline; --all-pairs reports no confidence interval"),
        (["--confidence", "0.9"], "--confidence is about one baseline; --all-pairs reports no confidence interval"),
        (
            ["-m", "urisk:map"],
            "-m urisk:map: a risk measure weighs losses against one baseline; --all-pairs has none "
            "(compare without --all-pairs)",
        ),
    ):
        res = cli([*base, *extra], cwd=files)
        assert (res.code, res.out, res.err) == (2, b"", f"ireval: {msg}\n")


def test_api_checks_its_arguments(files):
    with pytest.raises(UsageError, match=r"^--all-pairs: expected at least two runs to compare$"):
        irevalcli.compare_all_pairs(files / "qrels.txt", [files / "base.txt"])
    with pytest.raises(UsageError, match=r"^runs: expected a list of at least two runs$"):
        irevalcli.compare_all_pairs(files / "qrels.txt", str(files / "base.txt"))
    with pytest.raises(UsageError, match=r"^test='z': expected one of t, wilcoxon, randomization, sign$"):
        irevalcli.compare_all_pairs(files / "qrels.txt", [files / r for r in RUNS], test="z")
    assert "compare_all_pairs" in irevalcli.__all__


def test_letters_go_on_after_z():
    assert [run_letter(i) for i in (0, 1, 25, 26, 27, 51, 52, 701, 702)] == [
        "a",
        "b",
        "z",
        "aa",
        "ab",
        "az",
        "ba",
        "zz",
        "aaa",
    ]


def test_missing_topics_are_scored_and_noted_and_names_escaped(cli, files):
    """my_run.txt answers topics 1-3 at rank 1 only: AP 1 1 1 0 0 0 under -c, map 0.5."""
    write(files / "my_run.txt", run_text([1, 1, 1], "partial"))
    res = cli(
        ["compare", "--all-pairs", "qrels.txt", "base.txt", "my_run.txt", "-m", "map", "--test", "sign"], cwd=files
    )
    out = res.out.decode()
    assert res.code == 0 and res.err == ""
    assert "map      1.0000  0.5000\n" in out
    assert "map      a vs b    1.0000    0.5000  3/3/0  0.2500  0.2500\n" in out
    assert out.endswith("my_run.txt has no results for 3 of 6 topics (scored 0): 4 5 6\n")
    tex = cli(
        ["compare", "--all-pairs", "qrels.txt", "base.txt", "my_run.txt", "--format", "latex"], cwd=files
    ).out.decode()
    assert "b & my\\_run.txt & 0.5000 \\\\\n" in tex
