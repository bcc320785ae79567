"""``ireval curve``: hand-computed precision-recall curves, CSV and JSON shapes, errors."""

from __future__ import annotations

import json

import pytest

from tests.conftest import write

# Topic A: R = 4, relevant at ranks 1, 3, 6 (d4 is relevant but not retrieved).
# Topic B: R = 1, relevant at rank 2.
QRELS = """\
A 0 a1 1
A 0 a3 2
A 0 a6 1
A 0 a9 1
A 0 a2 0
B 0 b2 1
B 0 b1 0
"""
RUN = """\
A Q0 a1 1 6.0 r1
A Q0 a2 2 5.0 r1
A Q0 a3 3 4.0 r1
A Q0 a4 4 3.0 r1
A Q0 a5 5 2.0 r1
A Q0 a6 6 1.0 r1
B Q0 b1 1 2.0 r1
B Q0 b2 2 1.0 r1
"""
LEVELS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]
# K = lround(x * R): A (R=4) K = 0,0,1,1,2,2,2,3,3,4,4 -> highest precision at or below
# the K-th relevant document (K = 0: the best precision anywhere); K = 4 > 3 retrieved -> 0.
IPREC_A = [1.0, 1.0, 1.0, 1.0, 2 / 3, 2 / 3, 2 / 3, 0.5, 0.5, 0.0, 0.0]
# B (R=1): K = 0 below x = .5 and 1 from .5 (half away from zero); precision 1/2 either way.
IPREC_B = [0.5] * 11
MEAN = [(a + b) / 2 for a, b in zip(IPREC_A, IPREC_B)]


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)


def _csv(out: bytes) -> list[list[str]]:
    return [line.split(",") for line in out.decode().splitlines()]


def test_interpolated_default_levels(cli, files):
    q, r = files
    res = cli(["curve", q, r])
    assert (res.code, res.err) == (0, "")
    rows = _csv(res.out)
    assert rows[0] == ["run", "qid", "recall", "precision"]
    assert [row[:2] for row in rows[1:]] == [[str(r), "all"]] * 11
    assert [float(row[2]) for row in rows[1:]] == LEVELS
    assert [float(row[3]) for row in rows[1:]] == pytest.approx(MEAN)
    assert rows[5][2:] == ["0.4", repr((2 / 3 + 0.5) / 2)]  # full precision, repr-exact


def test_interpolated_per_query_and_order(cli, files):
    q, r = files
    rows = _csv(cli(["curve", q, r, "-q"]).out)[1:]
    assert [row[1] for row in rows] == ["A"] * 11 + ["B"] * 11 + ["all"] * 11
    assert [float(row[3]) for row in rows[:11]] == pytest.approx(IPREC_A)
    assert [float(row[3]) for row in rows[11:22]] == pytest.approx(IPREC_B)


def test_interpolated_matches_iprec_at_recall_exactly(files):
    from irevalcli.api import evaluate
    from irevalcli.commands.curve import build_curve_table, interpolated_curve

    q, r = files
    levels = (0.0, 0.25, 0.5, 0.75, 1.0)
    c = interpolated_curve(build_curve_table(str(q), str(r)), levels)
    ev = evaluate(str(q), str(r), ["iprec_at_recall.0,.25,.5,.75,1"])
    cols = [col for col in ev.results.columns if col.root == "iprec_at_recall"]
    assert c.mean.tolist() == [col.summary for col in cols]
    assert c.per_topic.tolist() == [list(col.per_query) for col in cols]


def test_recall_levels_option(cli, files):
    q, r = files
    rows = _csv(cli(["curve", q, r, "--recall-levels", "1,.5,0"]).out)[1:]
    assert [row[2] for row in rows] == ["0.0", "0.5", "1.0"]
    assert [float(row[3]) for row in rows] == pytest.approx([0.75, (2 / 3 + 0.5) / 2, 0.25])


def test_complete_counts_missing_topic_as_zero(cli, files, tmp_path):
    _, r = files
    q2 = write(tmp_path / "qrels2.txt", QRELS + "C 0 c1 1\nC 0 c2 1\n")
    res = cli(["curve", q2, r])
    assert res.code == 2
    assert res.err == (
        f"ireval: {r}: topic 'C' is judged in {q2} but has no results in the run "
        "(use -c to score missing topics as 0)\n"
    )
    rows = _csv(cli(["curve", q2, r, "-c", "-q"]).out)[1:]
    assert [row[1] for row in rows] == ["A"] * 11 + ["B"] * 11 + ["C"] * 11 + ["all"] * 11
    assert [float(row[3]) for row in rows[22:33]] == [0.0] * 11
    assert [float(row[3]) for row in rows[33:]] == pytest.approx([(a + b) / 3 for a, b in zip(IPREC_A, IPREC_B)])


def test_all_points(cli, tmp_path):
    # topic Z is judged with no relevant document (R = 0): it has no points
    q2 = write(tmp_path / "qrels2.txt", QRELS + "Z 0 z1 0\n")
    r2 = write(tmp_path / "run2.txt", RUN + "Z Q0 z1 1 1.0 r1\n")
    res = cli(["curve", q2, r2, "--points", "all"])
    assert res.code == 0
    rows = _csv(res.out)
    assert rows[0] == ["run", "qid", "rank", "recall", "precision"]
    got = [(row[1], int(row[2]), float(row[3]), float(row[4])) for row in rows[1:]]
    assert got == [
        ("A", 1, 0.25, 1.0),
        ("A", 3, 0.5, pytest.approx(2 / 3)),
        ("A", 6, 0.75, 0.5),
        ("B", 2, 1.0, 0.5),
    ]
    assert rows[2][4] == repr(2 / 3)


def test_all_points_function(files):
    from irevalcli.commands.curve import all_points, build_curve_table

    q, r = files
    p = all_points(build_curve_table(str(q), str(r)))
    assert p.qids == ["A", "B"]
    assert p.topic.tolist() == [0, 0, 0, 1]
    assert p.rank.tolist() == [1, 3, 6, 2]
    assert p.recall.tolist() == [0.25, 0.5, 0.75, 1.0]
    assert p.precision.tolist() == [1.0, 2 / 3, 0.5, 0.5]


def test_rel_level(cli, files):
    q, r = files
    # -l 2: only a3 is relevant (R = 1 for A, 0 for B)
    rows = _csv(cli(["curve", q, r, "--points", "all", "-l", "2"]).out)[1:]
    assert rows == [[str(r), "A", "3", "1.0", repr(1 / 3)]]


def test_json_shape(cli, files, tmp_path):
    q, r = files
    r2 = write(tmp_path / "run2.txt", RUN.replace("r1", "r2"))
    res = cli(["curve", q, r, r2, "--format", "json", "-q", "--recall-levels", "0,1"])
    assert res.code == 0
    doc = json.loads(res.out)
    assert list(doc) == ["runs"]
    assert [(x["run"], x["runid"]) for x in doc["runs"]] == [(str(r), "r1"), (str(r2), "r2")]
    first = doc["runs"][0]
    assert first["curve"] == [{"recall": 0.0, "precision": 0.75}, {"recall": 1.0, "precision": 0.25}]
    assert first["per_query"] == {
        "A": [{"recall": 0.0, "precision": 1.0}, {"recall": 1.0, "precision": 0.0}],
        "B": [{"recall": 0.0, "precision": 0.5}, {"recall": 1.0, "precision": 0.5}],
    }
    plain = json.loads(cli(["curve", q, r, "--format", "json"]).out)
    assert plain["runs"][0]["per_query"] == {}
    pts = json.loads(cli(["curve", q, r, "--format", "json", "--points", "all"]).out)["runs"][0]
    assert pts["curve"] is None
    assert pts["per_query"]["B"] == [{"rank": 2, "recall": 1.0, "precision": 0.5}]
    assert [p["rank"] for p in pts["per_query"]["A"]] == [1, 3, 6]


def test_output_file_and_multiple_runs(cli, files, tmp_path):
    q, r = files
    out = tmp_path / "curve.csv"
    res = cli(["curve", q, r, r, "--output", out])
    assert (res.code, res.out, res.err) == (0, b"", "")
    text = out.read_bytes()
    assert text == cli(["curve", q, r, r]).out
    assert text.count(b"\n") == 1 + 22 and text.endswith(b"\n")


@pytest.mark.parametrize(
    ("args", "err"),
    [
        (["--recall-levels", ".1,x"], "ireval: --recall-levels .1,x: 'x' is not a number\n"),
        (["--recall-levels", ".5,1.5"], "ireval: --recall-levels .5,1.5: 1.5 is not between 0 and 1\n"),
        (["--recall-levels", ".5,.50"], "ireval: --recall-levels .5,.50: level 0.5 is given twice\n"),
        (
            ["--points", "all", "--recall-levels", ".5"],
            "ireval: --recall-levels applies to --points interpolated only\n",
        ),
    ],
)
def test_option_errors(cli, files, args, err):
    q, r = files
    res = cli(["curve", q, r, *args])
    assert (res.code, res.out, res.err) == (2, b"", err)


def test_usage_and_input_errors(cli, files, tmp_path):
    q, r = files
    res = cli(["curve", q, r, "--points", "some"])
    assert res.code == 2 and res.err.count("\n") == 1 and res.err.startswith("ireval: ")
    res = cli(["curve", q])
    assert res.code == 2 and res.err.count("\n") == 1
    res = cli(["curve", q, tmp_path / "nope.txt"])
    assert res.code == 2 and res.err.count("\n") == 1 and "nope.txt" in res.err
    res = cli(["curve", q, r, "--output", tmp_path / "no" / "dir.csv"])
    assert res.code == 2 and res.err.count("\n") == 1 and "does not exist" in res.err


def test_help_lists_curve(cli):
    res = cli(["--help"])
    assert "ireval curve QRELS RUN..." in res.out.decode()
    assert cli(["curve", "--help"]).code == 0


@pytest.mark.parametrize("complete", [False, True])
def test_golden_inputs_match_iprec_at_recall(complete):
    from irevalcli.api import evaluate
    from irevalcli.commands.curve import build_curve_table, interpolated_curve
    from tests.conftest import DATA

    q, r = DATA / "golden" / "qrels.txt", DATA / "golden" / "bm25.txt"
    c = interpolated_curve(build_curve_table(q, r, complete=complete))
    cols = [x for x in evaluate(q, r, ["iprec_at_recall"], complete=complete).results.columns]
    assert c.mean.tolist() == [x.summary for x in cols if x.root == "iprec_at_recall"]


def test_format_from_the_output_name_and_clashes(cli, files, tmp_path):
    q, r = files
    res = cli(["curve", q, r, "--output", tmp_path / "c.json"])
    assert res.code == 0 and json.loads((tmp_path / "c.json").read_text())["runs"][0]["run"] == str(r)
    res = cli(["curve", q, r, "--format", "csv", "--output", tmp_path / "c2.json"])
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: --format csv contradicts --output {tmp_path / 'c2.json'}, whose name says json; "
        "drop --format or give a name that matches it\n"
    )
    assert not (tmp_path / "c2.json").exists()


def test_output_that_is_an_input_is_refused(cli, files):
    q, r = files
    before = r.read_bytes()
    res = cli(["curve", q, r, "--output", r])
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: --output {r}: is the input file {r}; writing it would destroy the input (give another output file)\n"
    )
    assert r.read_bytes() == before


def test_csv_text_cells_cannot_be_formulas(cli, tmp_path):
    write(tmp_path / "qrels.txt", "=1+1 0 a 1\n-7 0 a 1\n")
    r = write(tmp_path / "-r.txt", "=1+1 Q0 a 1 1 r\n-7 Q0 a 1 1 r\n")
    res = cli(["curve", "-q", "--recall-levels", "1", "--", "qrels.txt", "-r.txt"], cwd=tmp_path)
    assert res.code == 0, res.err
    assert _csv(res.out) == [
        ["run", "qid", "recall", "precision"],
        ["'-r.txt", "-7", "1.0", "1.0"],
        ["'-r.txt", "'=1+1", "1.0", "1.0"],
        ["'-r.txt", "all", "1.0", "1.0"],
    ]
    assert r.exists()
