"""Output formats: golden csv/markdown/latex files, the rich table, --places, and several
runs in one call (trec blocks, JSON and Parquet sections) with one reading of the qrels.

The goldens in tests/data/golden/ are ireval's own output, read by a human when they
change. Regenerate them with ``IREVAL_REGEN_GOLDEN=1 pytest tests/output/test_formats.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from tests.conftest import DATA, TREC_EVAL, write

GOLDEN = DATA / "golden"
RUNS = ["bm25.txt", "dense_v2.txt"]
MEASURES = ["-m", "map", "-m", "P.5", "-m", "ndcg_cut.10", "-m", "num_ret", "-m", "recip_rank"]

CASES = {
    "summary.md": ["--format", "markdown"],
    "summary.tex": ["--format", "latex"],
    "summary.csv": ["--format", "csv"],
    "per_query.md": ["-q", "--format", "markdown", "--places", "3"],
    "per_query.tex": ["-q", "--format", "latex", "-m", "relstring.3"],
    "per_query.csv": ["-q", "--format", "csv", "--places", "3"],
    "summary.table.txt": ["--format", "table"],
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden(cli, name):
    res = cli([*MEASURES, *CASES[name], "qrels.txt", *RUNS], cwd=GOLDEN)
    assert res.code == 0 and res.err == ""
    path = GOLDEN / name
    if os.environ.get("IREVAL_REGEN_GOLDEN"):
        path.write_bytes(res.out)
    assert res.out == path.read_bytes()


def test_golden_markdown_content():
    """What the goldens say, read by a person once: best values in bold, ints not rounded."""
    text = (GOLDEN / "summary.md").read_text().splitlines()
    # measures in the order asked: -m map -m P.5 -m ndcg_cut.10 -m num_ret -m recip_rank
    assert text[0] == "| run | runid | map | P_5 | ndcg_cut_10 | num_ret | recip_rank |"
    assert text[1] == "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
    assert text[2] == "| bm25.txt | bm25 | 0.4352 | 0.2667 | 0.6485 | 9 | **0.8333** |"
    assert text[3] == "| dense_v2.txt | dense_v2 | **0.8611** | **0.4667** | **0.8340** | 10 | **0.8333** |"
    tex = (GOLDEN / "summary.tex").read_text()
    assert tex.startswith("\\begin{tabular}{llrrrrr}\n\\toprule\nrun & runid & map & P\\_5")
    assert "dense\\_v2.txt & dense\\_v2 & \\textbf{0.8611}" in tex


def test_csv_is_full_precision_and_round_trips(cli):
    import csv
    import io

    from irevalcli import evaluate

    res = cli([*MEASURES, "--format", "csv", "qrels.txt", *RUNS], cwd=GOLDEN)
    rows = list(csv.DictReader(io.StringIO(res.out.decode())))
    assert [r["run"] for r in rows] == RUNS and {r["qid"] for r in rows} == {"all"}
    ev = evaluate(GOLDEN / "qrels.txt", GOLDEN / "dense_v2.txt", ["map"])
    assert float(rows[1]["map"]) == ev.results.summary["map"]


def test_places_only_for_tables(cli):
    res = cli(["--places", "2", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: --places applies to csv, markdown, latex and table output, not trec "
        "(trec prints trec_eval's 4 places; json and parquet keep full precision)\n"
    )
    res = cli(["-m", "map", "--places", "1", "--format", "markdown", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert res.out.decode().splitlines()[-1] == "| bm25.txt | bm25 | 0.4 |"  # one run: nothing in bold


def test_table_format_plain_when_piped(cli):
    res = cli([*MEASURES, "--format", "table", "qrels.txt", *RUNS], cwd=GOLDEN)
    assert b"\x1b[" not in res.out
    lines = res.out.decode().splitlines()
    assert lines[0].split() == [
        "run",
        "|",
        "runid",
        "|",
        "map",  # the order asked (-m map -m P.5 -m ndcg_cut.10 -m num_ret -m recip_rank)
        "|",
        "P_5",
        "|",
        "ndcg_cut_10",
        "|",
        "num_ret",
        "|",
        "recip_rank",
    ]
    assert "0.8611" in lines[-1] and all(line == line.rstrip() for line in lines)


def test_table_format_on_a_terminal_is_styled():
    from irevalcli import evaluate
    from irevalcli.output.formatters import RunResults, format_runs

    runs = []
    for name in RUNS:
        ev = evaluate(GOLDEN / "qrels.txt", GOLDEN / name, ["map"])
        runs.append(RunResults(name, ev.results.runid, "", ev.results))
    out = format_runs("table", runs, terminal=True, width=80).decode()
    assert "\x1b[1m0.8611" in out  # the best value in bold


# ---------------------------------------------------------------- several runs


def test_single_run_output_is_unchanged(cli):
    """One run: trec_eval's bytes, and json/parquet as before (no run header, no runs list)."""
    res = cli(["-q", "-m", "all_trec", "qrels.test", "results.test"], cwd=TREC_EVAL)
    assert res.out == (TREC_EVAL / "out.test.aq").read_bytes()
    doc = json.loads(cli(["--format", "json", "qrels.test", "results.test"], cwd=TREC_EVAL).out)
    assert list(doc) == ["ireval", "compat", "options", "inputs", "runid", "num_q", "summary"]
    assert "run_format" not in doc["options"]


def test_several_runs_trec_blocks(cli, tmp_path):
    both = cli(["-m", "map", "-m", "P.5", "qrels.txt", *RUNS], cwd=GOLDEN)
    one = [cli(["-m", "map", "-m", "P.5", "qrels.txt", r], cwd=GOLDEN).out for r in RUNS]
    assert both.code == 0
    assert both.out == (
        b"==> bm25.txt (runid bm25) <==\n" + one[0] + b"\n==> dense_v2.txt (runid dense_v2) <==\n" + one[1]
    )


def test_several_runs_against_trec_eval_output(cli, tmp_path):
    """Each block of a multi-run call is byte-identical to trec_eval on that run alone."""
    run2 = write(tmp_path / "copy.test", (TREC_EVAL / "results.test").read_text())
    res = cli(["-q", "-m", "all_trec", TREC_EVAL / "qrels.test", TREC_EVAL / "results.test", run2])
    blocks = res.out.split(b"\n==> ")
    want = (TREC_EVAL / "out.test.aq").read_bytes()
    assert blocks[0].split(b"\n", 1)[1] == want and blocks[1].split(b"\n", 1)[1] == want


def test_glob_of_runs(cli):
    res = cli(["-m", "map", "qrels.txt", "*_v2.txt", "bm*.txt"], cwd=GOLDEN)
    headers = [line for line in res.out.decode().splitlines() if line.startswith("==>")]
    assert headers == ["==> dense_v2.txt (runid dense_v2) <==", "==> bm25.txt (runid bm25) <=="]


def test_qrels_read_once(cli, monkeypatch):
    from irevalcli.io import tabular as inputs

    calls = []
    real = inputs.parse_qrels_source
    monkeypatch.setattr(inputs, "parse_qrels_source", lambda *a, **k: calls.append(1) or real(*a, **k))
    assert cli(["-m", "map", "qrels.txt", *RUNS, "bm25.txt"], cwd=GOLDEN).code == 0
    assert len(calls) == 1


def test_several_runs_json(cli):
    res = cli(["-q", "-m", "map", "--format", "json", "qrels.txt", *RUNS], cwd=GOLDEN)
    doc = json.loads(res.out)
    assert list(doc) == ["ireval", "compat", "options", "inputs", "runs"]
    assert list(doc["inputs"]) == ["qrels"]
    assert [(r["path"], r["runid"], r["num_q"]) for r in doc["runs"]] == [
        ("bm25.txt", "bm25", 3),
        ("dense_v2.txt", "dense_v2", 3),
    ]
    import hashlib

    assert doc["runs"][1]["sha256"] == hashlib.sha256((GOLDEN / "dense_v2.txt").read_bytes()).hexdigest()
    assert doc["runs"][1]["summary"]["map"] == pytest.approx(0.8611111111111112)
    assert set(doc["runs"][0]["per_query"]) == {"101", "102", "103"}


def test_several_runs_parquet(cli, tmp_path):
    out = tmp_path / "s.parquet"
    res = cli(["-q", "-m", "map", "--format", "parquet", "--output", out, "qrels.txt", *RUNS], cwd=GOLDEN)
    assert res.code == 0
    table = pq.read_table(out)
    assert table.column_names == ["run", "runid", "qid", "measure", "value", "text"]
    df = table.to_pandas()
    assert sorted(set(zip(df.run, df.runid))) == [("bm25.txt", "bm25"), ("dense_v2.txt", "dense_v2")]
    row = df[(df.runid == "dense_v2") & (df.qid == "all")]
    assert row.value.iloc[0] == pytest.approx(0.8611111111111112)
    meta = json.loads(table.schema.metadata[b"ireval"])
    assert meta["inputs"]["qrels"]["path"] == "qrels.txt"


def test_error_in_a_later_run_prints_nothing(cli, tmp_path):
    bad = write(tmp_path / "bad.txt", "101 Q0 d1 1 x r\n")
    res = cli(["-m", "map", GOLDEN / "qrels.txt", GOLDEN / "bm25.txt", bad])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {bad}:1: score 'x' is not a number\n"


def test_stdin_among_several_runs(cli):
    data = (GOLDEN / "bm25.txt").read_bytes()
    res = cli(["-m", "map", "qrels.txt", "dense_v2.txt", "-"], cwd=GOLDEN, stdin=data)
    assert res.out.decode().splitlines()[3] == "==> <stdin> (runid bm25) <=="
    res = cli(["-m", "map", "qrels.txt", "-", "-"], cwd=GOLDEN, stdin=data)
    assert res.code == 2 and res.err == "ireval: only one run can be read from standard input ('-')\n"


@pytest.mark.parametrize("fmt", ["trec", "json", "csv", "markdown", "latex", "table"])
def test_every_format_deterministic(cli, fmt):
    outs = {cli(["-q", *MEASURES, "--format", fmt, "qrels.txt", *RUNS], cwd=GOLDEN).out for _ in range(2)}
    assert len(outs) == 1


def test_nan_and_latex_escaping():
    from irevalcli.engine.evaluate import Column, Results
    from irevalcli.output.formatters import RunResults, format_runs

    res = Results(qids=["q_1"], columns=[Column("x%", "x%", "float", None, float("nan"))], num_q=1, runid="a&b")
    runs = [RunResults("r#1.txt", "a&b", "", res), RunResults("r2", "c", "", res)]
    out = format_runs("latex", runs).decode()
    assert "r\\#1.txt & a\\&b & nan \\\\" in out and "x\\%" in out
    assert format_runs("markdown", [RunResults("a|b", "c", "", res)]).decode().splitlines()[2] == "| a\\|b | c | nan |"


def test_paths_are_shown_as_given(cli):
    res = cli(["-m", "map", "--format", "csv", "./qrels.txt", "./bm25.txt"], cwd=GOLDEN)
    assert res.out.decode().splitlines()[1].startswith("./bm25.txt,bm25,all,")
    assert Path(GOLDEN / "summary.csv").exists()


def test_format_typo_suggests_the_fix(cli):
    res = cli(["--format", "mardown", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: Invalid value for '--format': 'mardown' is not one of 'trec', 'json', 'parquet', 'csv', "
        "'markdown', 'latex', 'table' (did you mean 'markdown'?) (see 'ireval --help')\n"
    )


@pytest.mark.parametrize("block", [1, 2, 3, 2048])
@pytest.mark.parametrize("z", [False, True])
def test_trec_per_query_lines_match_printf_one_by_one(monkeypatch, block, z):
    """The block-wise ``%`` formatting of -q lines equals formatting each line on its own."""
    import numpy as np

    from irevalcli.engine.evaluate import Column, Results
    from irevalcli.output import formatters

    monkeypatch.setattr(formatters, "_TOPICS_PER_BLOCK", block)
    qids = ["1", "10", "2", "b%s", "\udcff"]
    f = np.array([0.5, 1 / 3, np.nan, -0.0, 2.00005])
    cols = [
        Column("runid", "runid", "str", None, "r"),
        Column("num_ret", "num_ret", "int", np.array([3, 0, 1000, 7, 12]), 1022),
        Column("map", "map", "float", f, 0.1),
        Column("P_5%", "P", "float", np.array([1.0, 0.0, 0.25, 1e-5, 0.99995]), 0.2),
        Column("relstring", "relstring", "str", ["10R", "", "-", "'", "%d"], None),
    ]
    res = Results(qids=qids, columns=cols, num_q=5, runid="r", zscore=z)
    expected = []
    p = "Z" if z else ""
    for i, q in enumerate(qids):
        expected.append(
            f"{p}num_ret               \t{q}\t{'%6.4f' % cols[1].per_query[i] if z else cols[1].per_query[i]}\n"
        )
        expected.append(f"{p}map                   \t{q}\t{'  -nan' if np.isnan(f[i]) else '%6.4f' % f[i]}\n")
        expected.append(f"{p}P_5%                  \t{q}\t{'%6.4f' % cols[3].per_query[i]}\n")
        expected.append(f"relstring             \t{q}\t'{cols[4].per_query[i]}'\n")
    got = formatters.format_trec(res, per_query=True, summary=False)
    assert got == "".join(expected).encode("utf-8", "surrogateescape")


def test_per_query_values_print_as_printf_would():
    """The vectorised ``%6.4f`` (digits of the value times 10^4, rounded) against
    Python's ``%`` (C printf's rounding of the exact binary value) on values built to
    break it: exact halves (k/32), values one ulp either side of every 4-place half
    in [0, 10), the top of the fast range, random values, and what goes to Python
    (negative zero, negatives, 10 and more, NaN, infinities)."""
    import numpy as np

    from irevalcli.engine.evaluate import Column
    from irevalcli.output.formatters import _block_values, _fmt_float

    rng = np.random.default_rng(20240607)
    halves = (np.arange(0, 100000) + 0.5) / 10000
    values = np.concatenate(
        [
            np.arange(0, 320) / 32,
            halves,
            np.nextafter(halves, 0),
            np.nextafter(halves, 20),
            np.arange(0, 100000) / 10000,
            rng.random(100000),
            rng.random(100000) * 10,
            10 ** rng.uniform(-12, 0.99, 100000),
            [9.99994, 9.999949999999, 9.99995, np.nextafter(9.99995, 0), 5e-5, 4.9999999999e-5, 1e-300],
            [-0.0, -1e-9, -0.5, 10.0, 123.45675, 1e17, np.nan, np.inf, -np.inf],
        ]
    )
    order = rng.permutation(len(values))  # fast and slow values interleaved
    values = values[order]
    col = Column("x", "x", "float", values, None)
    got = _block_values([col], 0, len(values), False)
    want = [f"{_fmt_float(v)}\n".encode() for v in values.tolist()]
    assert got.to_pylist() == want
    ints = Column("n", "n", "int", np.array([0, 7, -3, 10**15]), None)
    assert _block_values([ints], 0, 4, False).to_pylist() == [b"0\n", b"7\n", b"-3\n", b"1000000000000000\n"]
    assert _block_values([ints], 1, 3, True).to_pylist() == [b"7.0000\n", b"-3.0000\n"]
    # several columns: topic by topic, counts, strings and floats in column order
    cols = [ints, Column("s", "s", "str", ["a", "b", "c", "d"], None), Column("f", "f", "float", values[:4], None)]
    want = [x for i in range(4) for x in (f"{ints.per_query[i]}\n", f"'{'abcd'[i]}'\n", f"{_fmt_float(values[i])}\n")]
    assert _block_values(cols, 0, 4, False).to_pylist() == [w.encode() for w in want]


# ---- ids are data in every format ----------------------------------------------------------------------


def _hostile(tmp_path: Path, qid: bytes, runid: bytes, run_name: str = "run.txt") -> Path:
    (tmp_path / "qrels.txt").write_bytes(qid + b" 0 a 1\n" + qid + b" 0 b 0\n")
    (tmp_path / run_name).write_bytes(qid + b" Q0 a 1 3 " + runid + b"\n" + qid + b" Q0 b 2 1 " + runid + b"\n")
    return tmp_path / run_name


@pytest.mark.parametrize("runid,qid", [(b"[/x]", b"[red]q[/red]"), (b"[bold]r", b"q\\"), (b"r\\", b"[/]")])
def test_table_shows_markup_as_written(cli, tmp_path, runid, qid):
    _hostile(tmp_path, qid, runid)
    for terminal in (False, True):
        from irevalcli import evaluate
        from irevalcli.output.formatters import RunResults, format_table

        ev = evaluate(str(tmp_path / "qrels.txt"), str(tmp_path / "run.txt"), ["map"])
        text = format_table(
            [RunResults("run.txt", ev.results.runid, "", ev.results)], per_query=True, terminal=terminal
        ).decode()
        assert runid.decode() in text and qid.decode() in text
    res = cli(["-q", "-m", "map", "--format", "table", "qrels.txt", "run.txt"], cwd=tmp_path)
    assert res.code == 0 and res.err == ""
    assert runid in res.out and qid in res.out


def test_csv_neutralises_formula_cells_but_not_numbers(cli, tmp_path):
    _hostile(tmp_path, b"-3", b'=HYPERLINK("http://x","y")', run_name="@run.txt")
    res = cli(["-q", "-m", "map", "-m", "relstring", "--format", "csv", "qrels.txt", "@run.txt"], cwd=tmp_path)
    assert res.code == 0
    assert res.out == (
        b"run,runid,qid,map,relstring\n"
        b'\'@run.txt,"\'=HYPERLINK(""http://x"",""y"")",-3,1.0,10\n'
        b'\'@run.txt,"\'=HYPERLINK(""http://x"",""y"")",all,1.0,\n'
    )


def test_csv_text_cell_rules():
    from irevalcli.output.cells import csv_text_cell

    assert [csv_text_cell(x) for x in ("=1+1", "+x", "-x", "@SUM(A1)", "\tx", "\rx", "-0.5", "+3", "-1e5", "a=b")] == [
        "'=1+1",
        "'+x",
        "'-x",
        "'@SUM(A1)",
        "'\tx",
        "'\rx",
        "-0.5",
        "+3",
        "-1e5",
        "a=b",
    ]


def test_markdown_and_latex_cells_stay_on_one_line(cli, tmp_path):
    name = "run\nwith|pipe.txt"
    _hostile(tmp_path, b"q|1", b"r\x1b", run_name=name)
    res = cli(["-q", "-m", "map", "--format", "markdown", "qrels.txt", name], cwd=tmp_path)
    assert res.code == 0
    assert res.out.decode().splitlines() == [
        "| run | runid | qid | map |",
        "| --- | --- | --- | ---: |",
        "| run\\nwith\\|pipe.txt | r\\x1b | q\\|1 | 1.0000 |",
        "| run\\nwith\\|pipe.txt | r\\x1b | all | 1.0000 |",
    ]
    res = cli(["-m", "map", "--format", "latex", "qrels.txt", name], cwd=tmp_path)
    assert res.code == 0
    assert "run\\textbackslash{}nwith|pipe.txt & r\\textbackslash{}x1b & 1.0000 \\\\\n" in res.out.decode()


def test_one_column_order_for_every_results_table(cli):
    heads = {}
    for fmt in ("csv", "markdown", "latex", "table"):
        res = cli(["-q", "-m", "map", "--format", fmt, "qrels.txt", *RUNS], cwd=GOLDEN)
        first = res.out.decode().splitlines()[2 if fmt == "latex" else 0]
        heads[fmt] = [
            w
            for w in first.replace("|", " ").replace("&", " ").replace(",", " ").split()
            if w in ("run", "runid", "qid")
        ]
    assert set(map(tuple, heads.values())) == {("run", "runid", "qid")}, heads


def test_parquet_and_json_with_ids_that_are_not_utf8(cli, tmp_path):
    """Parquet string columns hold UTF-8: a byte that is not is written as its \\xNN escape,
    as messages spell it. (JSON, trec and csv print the bytes back as read.)"""
    _hostile(tmp_path, b"q\xff", b"r\xfe")
    for extra in ([], ["run.txt"]):  # one run, and several (run and runid columns)
        res = cli(
            [
                "-q",
                "-m",
                "map",
                "-m",
                "runid",
                "--format",
                "parquet",
                "--output",
                "o.parquet",
                "qrels.txt",
                "run.txt",
                *extra,
            ],
            cwd=tmp_path,
        )
        assert (res.code, res.err) == (0, "")
        t = pq.read_table(tmp_path / "o.parquet").to_pylist()
        assert {r["qid"] for r in t} == {"q\\xff", "all"}
        assert {r["text"] for r in t if r["measure"] == "runid"} == {"r\\xfe"}
        if extra:
            assert {r["runid"] for r in t} == {"r\\xfe"}
    res = cli(["-q", "-m", "map", "qrels.txt", "run.txt"], cwd=tmp_path)
    assert res.out == b"map                   \tq\xff\t1.0000\nmap                   \tall\t1.0000\n"


def test_format_is_taken_from_the_output_name(cli, tmp_path):
    for name, check in (
        ("s.json", lambda b: json.loads(b)["summary"]["map"] > 0),
        ("s.parquet", lambda b: b.startswith(b"PAR1")),
        ("s.md", lambda b: b.startswith(b"| run | runid |")),
        ("s.tex", lambda b: b.startswith(b"\\begin{tabular}")),
        ("s.csv", lambda b: b.startswith(b"run,runid,qid,map\n")),
    ):
        res = cli(["-m", "map", "--output", tmp_path / name, "qrels.txt", "bm25.txt"], cwd=GOLDEN)
        assert (res.code, res.err) == (0, "") and check((tmp_path / name).read_bytes()), name
    res = cli(["-m", "map", "--format", "csv", "--output", tmp_path / "t.CSV", "qrels.txt", "bm25.txt"], cwd=GOLDEN)
    assert res.code == 0  # the same format in another case is no clash


def test_repeated_cutoffs_computed_in_every_non_trec_format(cli, tmp_path):
    args = ["-m", "P.5", "-m", "P.10", "qrels.txt", "bm25.txt"]
    for fmt in ("json", "csv", "markdown", "latex", "table"):
        res = cli([*args, "--format", fmt], cwd=GOLDEN)
        p10 = b"P\\_10" if fmt == "latex" else b"P_10"
        assert res.code == 0 and res.err == "" and p10 in res.out, fmt
    res = cli([*args, "--format", "parquet", "--output", tmp_path / "p.parquet"], cwd=GOLDEN)
    assert {r["measure"] for r in pq.read_table(tmp_path / "p.parquet").to_pylist()} == {"P_5", "P_10"}
    res = cli(args, cwd=GOLDEN)
    assert res.out.decode().split("\t")[0].strip() == "P_5" and b"P_10" not in res.out
    assert res.err == (
        "ireval: note: -m P.10 ignored: trec_eval keeps the first parameters given for a measure "
        "(-m P.5); write -m P.5,10\n"
    )


@pytest.mark.parametrize("width", [80, 40])
def test_table_on_a_terminal_fits_its_width_without_cutting_words(width):
    """Issue 14 item 16: six measures and two runs are 93 columns wide; at 80 (or 40) the runs
    are numbered with a legend, and measures that still do not fit go to further tables."""
    import re

    from irevalcli import evaluate
    from irevalcli.output.formatters import RunResults, format_runs

    root = Path(__file__).resolve().parents[2] / "examples"
    measures = ["map", "P.10", "ndcg_cut.10", "recall.100", "recip_rank", "bpref"]
    runs = []
    for name in ("run.txt", "run2.txt"):
        ev = evaluate(root / "qrels.txt", root / name, measures)
        runs.append(RunResults(f"examples/{name}", ev.results.runid, "", ev.results))
    plain = re.sub(r"\x1b\[[0-9;]*m", "", format_runs("table", runs, terminal=True, width=width).decode())
    lines = plain.split("\n")
    assert max(map(len, lines)) <= width
    words = plain.split()
    for label in ("map", "bpref", "recip_rank", "P_10", "recall_100", "ndcg_cut_10", "0.8803"):
        assert label in words  # whole, never folded
    assert "1: examples/run.txt (runid bm25)" in lines and "2: examples/run2.txt (runid dense)" in lines
    wide = format_runs("table", runs, terminal=True, width=200).decode()
    assert "examples/run2.txt" in wide and "(runid" not in wide  # what fits is shown as it is


@pytest.mark.parametrize("stream", ["--stream", "--no-stream", None])
def test_a_parquet_run_is_never_streamed_as_text(cli, tmp_path, stream):
    """The streaming reader takes TREC text only: a Parquet run (its head starts PAR1, but
    only the whole file shows the footer detect() needs) is read whole, whatever its size
    or --stream says. It used to be streamed as text and refused for its NUL bytes."""
    import pyarrow as pa

    n = 30000  # more than the 64 KiB head the format is sniffed from
    run = tmp_path / "run.parquet"
    pq.write_table(
        pa.table({"qid": ["101"] * n, "docno": [f"d{i}" for i in range(n)], "score": [float(-i) for i in range(n)]}),
        run,
        compression="none",
    )
    assert run.stat().st_size > 1 << 16
    qrels = write(tmp_path / "q.txt", "101 0 d0 1\n101 0 d1 0\n")
    res = cli(["-m", "map", "-m", "num_ret", qrels, run, *([stream] if stream else [])])
    assert (res.code, res.err) == (0, "")
    assert res.out == b"num_ret               \tall\t30000\nmap                   \tall\t1.0000\n"
