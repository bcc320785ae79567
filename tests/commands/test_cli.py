"""The command line: option parsing, exit codes, exact error text, output formats."""

from __future__ import annotations

import gzip
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from irevalcli.errors import InputError, UsageError
from tests.conftest import TREC_EVAL, write

QRELS = "1 0 a 1\n1 0 b 0\n1 0 c 2\n2 0 a 1\n2 0 d 1\n"
RUN = "1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n1 Q0 c 3 1.0 r1\n2 Q0 d 1 5.0 r1\n2 Q0 e 2 4.0 r1\n"


@pytest.fixture
def files(tmp_path):
    return write(tmp_path / "qrels.txt", QRELS), write(tmp_path / "run.txt", RUN)


def test_default_is_official(cli, files):
    res = cli(files)
    assert res.code == 0 and res.err == ""
    labels = [line.split("\t")[0].strip() for line in res.out.decode().splitlines()]
    assert labels[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert "P_5" in labels and "ndcg" not in labels


def test_trec_eval_option_syntax(cli, files):
    q, r = files
    plain = cli(["-q", "-m", "map", "-m", "P.5", q, r]).out
    # attached values, bundled flags, options after the files, '--'
    assert cli(["-qmmap", "-mP.5", q, r]).out == plain
    assert cli([q, r, "-q", "-mmap", "-m", "P.5"]).out == plain
    assert cli(["-q", "-mmap", "-mP.5", "--", q, r]).out == plain
    assert cli(["--query_eval_wanted", "--measure", "map", "--measure=P.5", q, r]).out == plain


def test_measure_order_is_fixed_and_first_params_win(cli, files):
    q, r = files
    out = cli(["-m", "P.10", "-m", "map", "-m", "P.5", q, r]).out.decode()
    assert [line.split("\t")[0].strip() for line in out.splitlines()] == ["map", "P_10"]


def test_atol_numbers(cli, files):
    q, r = files
    # -l2x is read as 2 (C atol); -lfoo, which atol would read as 0, is refused
    assert cli(["-l2x", "-m", "num_rel", q, r]).out == cli(["-l", "2", "-m", "num_rel", q, r]).out
    res = cli(["-lfoo", "-m", "num_rel", q, r])
    assert (res.code, res.out) == (2, b"")
    assert (
        res.err == "ireval: Invalid value for '-l' / '--level_for_rel': 'foo' is not an integer (see 'ireval --help')\n"
    )


def test_nosummary_and_per_query(cli, files):
    q, r = files
    out = cli(["-q", "-n", "-m", "map", q, r]).out.decode()
    assert out == "map                   \t1\t0.8333\nmap                   \t2\t0.5000\n"


def test_stdin_run(cli, files):
    q, r = files
    assert cli([q, "-"], stdin=Path(r).read_bytes()).out == cli([q, r]).out


def test_gzip_by_content(cli, files, tmp_path):
    q, r = files
    gz = tmp_path / "run.data"  # no .gz suffix: detected by content
    gz.write_bytes(gzip.compress(Path(r).read_bytes()))
    assert cli([q, gz]).out == cli([q, r]).out


def test_version(cli):
    res = cli(["-v"])
    assert res.code == 0 and res.out.decode().startswith("ireval ")


@pytest.mark.parametrize(
    "args,message",
    [
        (["-m", "mapp"], "ireval: unknown measure 'mapp' (did you mean 'map'?); 'ireval measures' lists them\n"),
        (["-m", "P."], "ireval: P.: a '.' must be followed by parameters (e.g. P.5,10)\n"),
        (["-m", "P.0"], "ireval: P.0: cutoff 0 is not a positive integer\n"),
        (["-m", "P.5,5"], "ireval: P.5,5: cutoff 5 is given twice\n"),
        (["-m", "P.abc"], "ireval: P.abc: cutoff 'abc' is not a positive integer\n"),
        (
            ["-m", "ndcg.1=2,3"],
            "ireval: ndcg.1=2,3: malformed parameter '3' (expected key=value pairs, e.g. 1=3,2=9)\n",
        ),
        (["-m", "utility.1,2"], "ireval: utility.1,2: utility takes exactly 4 coefficients (a,b,c,d), got 2\n"),
        (["-M", "-1"], "ireval: -M -1: the number of documents to keep cannot be negative\n"),
        (["-R", "xml"], "ireval: -R xml: unknown judgement format (known: qrels, qrels_jg, prefs, qrels_prefs)\n"),
    ],
)
def test_usage_errors(cli, files, args, message):
    res = cli([*args, *files])
    assert (res.code, res.out, res.err) == (2, b"", message)


def test_missing_argument(cli, files):
    res = cli([files[0]])
    assert res.code == 2 and res.out == b""
    assert res.err == "ireval: Missing argument 'RUN'; usage: ireval [OPTIONS] QRELS RUN (see 'ireval --help')\n"


def test_input_errors_name_file_and_line(cli, tmp_path, files):
    q, _ = files
    bad = write(tmp_path / "bad.run", "1 Q0 a 1 3.0 r\n\n# note\n1 Q0 b 2 x r\n")
    res = cli([q, bad])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {bad}:4: score 'x' is not a number\n"


def test_missing_topic_needs_c(cli, tmp_path, files):
    q, _ = files
    run = write(tmp_path / "r", "1 Q0 a 1 3.0 r1\n")
    res = cli([q, run])
    assert res.code == 2 and res.out == b""
    assert res.err == (
        f"ireval: {run}: topic '2' is judged in {q} but has no results in the run (use -c to score missing topics as 0)\n"
    )
    ok = cli(["-c", "-q", "-m", "num_ret", "-m", "map", q, run])
    assert ok.code == 0
    # topic 1: a at rank 1 is relevant, R = 2 -> AP 1/2; topic 2 is missing -> 0; mean 0.25
    assert ok.out.decode().splitlines()[-2:] == [
        "num_ret               \tall\t1",
        "map                   \tall\t0.2500",
    ]


def test_duplicate_doc_in_run(cli, tmp_path, files):
    q, _ = files
    run = write(tmp_path / "r", "1 Q0 a 1 3.0 r\n2 Q0 a 1 3.0 r\n1 Q0 a 2 2.0 r\n")
    res = cli([q, run])
    assert res.code == 2 and res.out == b""
    assert res.err == f"ireval: {run}:3: document 'a' is retrieved twice for topic '1' (first at line 1)\n"
    # only the documents kept by -M are checked (as trec_eval)
    assert cli(["-M1", q, run]).code == 0


def test_duplicate_qrels_entry(cli, tmp_path, files):
    _, r = files
    q = write(tmp_path / "q", "1 0 a 1\n2 0 a 1\n1 0 a 0\n")
    res = cli([q, r])
    assert res.code == 2
    assert res.err == f"ireval: {q}:3: document 'a' is judged twice for topic '1' (first at line 1)\n"


def test_json_output(cli, files):
    q, r = files
    res = cli(["-q", "-m", "map", "-m", "num_ret", "-m", "relstring", "--format", "json", q, r])
    doc = json.loads(res.out)
    assert doc["summary"] == {"num_ret": 5, "map": pytest.approx((1 + 2 / 3) / 2 / 2 + 0.5 / 2)}
    assert doc["per_query"]["1"]["map"] == pytest.approx((1 + 2 / 3) / 2)
    assert doc["per_query"]["2"]["relstring"] == "1-"
    assert doc["ireval"] and doc["compat"] == "trec_eval 10.0"
    import hashlib

    assert doc["inputs"]["run"]["sha256"] == hashlib.sha256(Path(r).read_bytes()).hexdigest()
    assert doc["options"]["measures"] == ["map", "num_ret", "relstring"]


def test_parquet_output_round_trip(cli, files, tmp_path):
    import pyarrow.parquet as pq

    q, r = files
    out = tmp_path / "scores.parquet"
    res = cli(["-q", "-m", "map", "-m", "P.5", "--format", "parquet", "--output", out, q, r])
    assert res.code == 0 and res.out == b""
    table = pq.read_table(out).to_pandas()
    assert list(table.columns) == ["qid", "measure", "value", "text"]
    row = table[(table.qid == "all") & (table.measure == "map")]
    assert row.value.iloc[0] == pytest.approx(((1 + 2 / 3) / 2 + 0.5) / 2)
    assert set(table.qid) == {"1", "2", "all"}


def test_output_is_atomic_and_left_alone_on_error(cli, files, tmp_path):
    q, r = files
    out = tmp_path / "o.txt"
    out.write_text("previous")
    res = cli(["-m", "nope", "--output", out, q, r])
    assert res.code == 2 and out.read_text() == "previous"
    res = cli(["-m", "map", "--output", out, q, r])
    assert res.code == 0 and out.read_text().startswith("map")
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".ireval-")] == []


def test_output_to_missing_directory(cli, files, tmp_path):
    res = cli(["--output", tmp_path / "no" / "x.txt", *files])
    assert res.code == 2
    assert res.err.startswith("ireval: --output ") and "does not exist" in res.err


def test_measures_command(cli):
    res = cli(["measures", "map"])
    assert res.code == 0 and res.out.decode().startswith("map: Average precision")
    listing = cli(["measures"]).out.decode()
    assert "ndcg_cut" in listing and "all_trec" in listing


def test_help_does_not_import_heavy_libraries():
    code = (
        "import sys; from irevalcli.commands.main import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "bad = [m for m in ('pandas', 'pyarrow', 'numpy') if m in sys.modules]\n"
        "sys.exit(1 if bad else 0)\n"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True)
    assert res.returncode == 0, res.stderr


def test_console_script_end_to_end(files):
    exe = Path(sys.executable).parent / "ireval"
    if not exe.exists():
        pytest.skip("console script not installed in this environment")
    res = subprocess.run([exe, "-m", "map", *map(str, files)], capture_output=True)
    assert res.returncode == 0 and res.stdout.startswith(b"map")
    res = subprocess.run([exe, "-m", "map", str(files[0]), "/nonexistent"], capture_output=True)
    assert res.returncode == 2 and res.stdout == b""
    assert res.stderr == b"ireval: /nonexistent: cannot read run file: no such file\n"


def test_zscores_and_compat_flags(cli):
    res = cli(["-q", "-m", "all_trec", "-Z", "zscores_file", "qrels.test", "results.test"], cwd=TREC_EVAL)
    assert res.code == 0 and res.out == (TREC_EVAL / "out.test.aqZ").read_bytes()
    res = cli(["--compat", "9.0.8", "-m", "rbp", "qrels.test", "results.test"], cwd=TREC_EVAL)
    assert res.code == 2 and res.err == "ireval: measure 'rbp' does not exist in trec_eval 9.0.8 (--compat 9.0.8)\n"


def test_deterministic_bytes(cli, files):
    q, r = files
    outs = {cli(["-q", "-m", "all_trec", q, r]).out for _ in range(3)}
    assert len(outs) == 1


def test_python_api_with_dataframes():
    import pandas as pd

    from irevalcli import evaluate

    qrels = pd.read_csv(io.StringIO(QRELS), sep=" ", header=None, names=["qid", "iter", "docno", "rel"])
    run = pd.read_csv(io.StringIO(RUN), sep=" ", header=None, names=["qid", "iter", "docno", "rank", "score", "runid"])
    ev = evaluate(qrels, run, ["map", "P.5"])
    summary = dict(zip(ev.summary.measure, ev.summary.value))
    assert summary["map"] == pytest.approx(((1 + 2 / 3) / 2 + 0.5) / 2)
    assert summary["P_5"] == pytest.approx((2 / 5 + 1 / 5) / 2)
    pq = ev.per_query
    assert set(pq.columns) == {"qid", "measure", "value", "text"}
    assert pq[(pq.qid == "2") & (pq.measure == "map")].value.iloc[0] == 0.5


def test_env_independent_of_hash_seed(files, tmp_path):
    exe = Path(sys.executable).parent / "ireval"
    if not exe.exists():
        pytest.skip("console script not installed")
    outs = set()
    for seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        outs.add(subprocess.run([exe, "-q", "-m", "all_trec", *map(str, files)], capture_output=True, env=env).stdout)
    assert len(outs) == 1


# ---- packaging: the distribution is `irevalcli` (the index's `ireval` is another project) -------

ROOT = Path(__file__).resolve().parents[2]


def _pyproject() -> dict:
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        import tomli as tomllib
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_distribution_name_license_and_build_requirement():
    meta = _pyproject()
    assert meta["project"]["name"] == "irevalcli"
    assert meta["project"]["scripts"] == {"ireval": "irevalcli.commands.main:entry"}
    assert meta["project"]["license"] == "MIT" and meta["project"]["license-files"] == ["LICENSE"]
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
    # setuptools 77 is the first to take an SPDX string and license-files (no deprecation box)
    assert meta["build-system"]["requires"] == ["setuptools>=77"]


def test_readme_lists_every_runtime_dependency():
    import re

    deps = [re.split(r"[<>=;\[ ]", d)[0] for d in _pyproject()["project"]["dependencies"]]
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"\(runtime dependencies: ([^)]*)\)", readme).group(1)
    assert all(d in listed for d in deps), (deps, listed)


def test_every_install_instruction_works_as_written():
    """Installing `ireval` from a package index would fetch the unrelated project of that name,
    and `irevalcli` (with or without an extra) is on no index: every instruction installs from
    a clone (`pip install .`, `'.[plot]'`), from the wheel, or names the extra's packages."""
    import re

    wrong = re.compile(rb"pip install\s+['\"]?ireval|irevalcli\[")
    hits = []
    for path in ROOT.rglob("*"):
        rel = path.relative_to(ROOT).parts
        if (
            not path.is_file()
            or rel[0] in (".git", ".venv", "build", "dist")
            or rel[0].endswith(".egg-info")
            or "__pycache__" in rel
            or ".venv-ref" in rel
            or path.stat().st_size > 2_000_000
        ):
            continue
        if wrong.search(path.read_bytes()):
            hits.append(str(path.relative_to(ROOT)))
    assert hits == []


def test_make_run_installs_only_the_runtime_and_conformance_stays_in_the_repo():
    make = (ROOT / "Makefile").read_text()
    stamp = make[make.index("$(STAMP): pyproject.toml") : make.index("$(TEST_STAMP): $(STAMP)")]
    # no extras for `make run`; editable as a path (compat), else the default editable install
    assert "pip install --quiet -e . $(COMPAT) || $(BIN)/pip install --quiet -e .\n" in stamp
    assert "[" not in stamp and "EXTRAS" not in stamp
    assert "COMPAT := --config-settings editable_mode=compat\n" in make
    assert "run: $(STAMP)\n" in make and "test: $(TEST_STAMP)\n" in make
    assert "EXTRAS := '.[test,plot,lint,dask,datasets]'\n" in make  # make test: every extra
    assert "$(BIN)/pip install --quiet -e $(EXTRAS) $(COMPAT) || $(BIN)/pip install --quiet -e $(EXTRAS)\n" in make
    conformance = make[make.index("conformance: ") :]
    assert conformance.split("\n")[1] == "\t$(BIN)/python tests/run_conformance.py $(BIN)/ireval tests/data/trec_eval"
    assert ".." not in make  # nothing outside the clone


# ---- subcommand dispatch: a mistyped command, usage errors, a terminal on standard input ------------


@pytest.mark.parametrize(
    "word,meant",
    [
        ("compar", "compare"),
        ("comapre", "compare"),
        ("Gate", "gate"),
        ("pol", "pool"),
        ("mesures", "measures"),
        ("curv", "curve"),
    ],
)
def test_mistyped_subcommand_is_suggested(cli, tmp_path, word, meant):
    res = cli([word, "qrels.txt", "run.txt"], cwd=tmp_path)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        f"ireval: '{word}' is neither a command nor a file; did you mean 'ireval {meant}'? (see 'ireval --help')\n"
    )


def test_a_file_named_like_a_command_is_still_read_as_qrels(cli, tmp_path):
    write(tmp_path / "compar", QRELS)
    write(tmp_path / "run.txt", RUN)
    res = cli(["-m", "map", "compar", "run.txt"], cwd=tmp_path)
    assert (res.code, res.err) == (0, "") and res.out.startswith(b"map ")
    res = cli(["qrels.txt", "run.txt"], cwd=tmp_path)  # not close to a command: the usual error
    assert res.code == 2 and "did you mean" not in res.err


@pytest.mark.parametrize("sub", ["compare", "gate", "pool", "curve", "measures"])
def test_subcommand_usage_error_points_at_its_own_help(cli, sub):
    res = cli([sub, "--no-such-option"])
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: No such option '--no-such-option'. (see 'ireval {sub} --help')\n"


@pytest.mark.parametrize("prefix", [[], ["compare"], ["curve"]])
def test_reading_a_run_from_a_terminal_says_so(cli, files, monkeypatch, prefix):
    from irevalcli.commands import main as cli_module

    q, r = files
    seen = []
    real = cli_module._isatty
    monkeypatch.setattr(cli_module, "_isatty", lambda s: (seen.append(s) or True) if s is sys.stdin else real(s))
    args = {
        (): ["-m", "map", q, "-"],
        ("compare",): ["compare", "-m", "map", q, r, "-"],
        ("curve",): ["curve", q, "-"],
    }[tuple(prefix)]
    res = cli(args, stdin=RUN.encode())
    assert res.code == 0, res.err
    assert res.err.startswith("ireval: reading the run from standard input (end with Ctrl-D)\n")
    assert seen


def test_no_terminal_note_for_a_pipe_or_a_named_run(cli, files):
    q, _r = files
    assert cli(["-m", "map", q, "-"], stdin=RUN.encode()).err == ""  # the fixture's stdin is no terminal


# ---- the Python API: arguments as a Python user writes them, errors in the API's own terms ----------


def _frames():
    import pandas as pd

    qrels = pd.read_csv(io.StringIO(QRELS), sep=" ", header=None, names=["qid", "iter", "docno", "rel"])
    run = pd.read_csv(io.StringIO(RUN), sep=" ", header=None, names=["qid", "iter", "docno", "rank", "score", "runid"])
    return qrels, run


def _summary(ev):
    return dict(zip(ev.summary.measure, ev.summary.value))


def test_api_takes_one_measure_as_a_string():
    from irevalcli import evaluate

    qrels, run = _frames()
    assert list(evaluate(qrels, run, "map").summary.measure) == ["map"]
    assert list(evaluate(qrels, run, "P.5,10").summary.measure) == ["P_5", "P_10"]
    with pytest.raises(UsageError) as e:
        evaluate(qrels, run, ["map", 5])
    assert str(e.value) == "measures must be a name or a list of names; got 5 (int) in the list"
    with pytest.raises(UsageError) as e:
        evaluate(qrels, run, 5)
    assert str(e.value) == "measures must be a name or a list of names, not int"


def test_api_frames_use_the_file_readers_header_names():
    """query_id/doc_id/relevance: what a CSV or Parquet header may say, a DataFrame may too."""
    from irevalcli import evaluate
    from irevalcli.io.tabular import ALIASES

    qrels, run = _frames()
    want = _summary(evaluate(qrels, run, ["map", "P.5"]))
    renamed_q = qrels.rename(columns={"qid": "query_id", "docno": "doc_id", "rel": "relevance"})
    renamed_r = run.rename(columns={"qid": "query_id", "docno": "doc_id", "runid": "run_id"})
    ev = evaluate(renamed_q, renamed_r, ["map", "P.5"])
    assert _summary(ev) == want and ev.results.runid == "r1"
    for role, frame in (("qid", qrels), ("docno", qrels), ("rel", qrels)):
        for alias in ALIASES[role]:  # every spelling of the shared table
            assert _summary(evaluate(frame.rename(columns={role: alias}), run, ["map", "P.5"])) == want
    with pytest.raises(InputError) as e:
        evaluate(qrels.rename(columns={"rel": "grade"}), run, "map")
    assert str(e.value) == (
        "<qrels DataFrame>: the qrels DataFrame has no rel column (expected one of "
        f"{', '.join(repr(a) for a in ALIASES['rel'])}; columns: qid, iter, docno, grade)"
    )


def test_api_float_ids_become_integers_or_are_refused():
    from irevalcli import evaluate

    qrels, run = _frames()
    want = _summary(evaluate(qrels, run, "map"))
    # pandas reads a qid column with a gap as floats: 1.0 must still match the run's 1
    assert _summary(evaluate(qrels.astype({"qid": float}), run, "map")) == want
    assert _summary(evaluate(qrels, run.astype({"qid": float}), "map")) == want
    bad = run.astype({"qid": float})
    bad.loc[3, "qid"] = 2.5
    with pytest.raises(InputError) as e:
        evaluate(qrels, bad, "map")
    assert str(e.value) == "<run DataFrame>:4: column 'qid' holds 2.5, which is not an id: ids are strings or integers"
    nan = qrels.astype({"qid": float})
    nan.loc[1, "qid"] = float("nan")
    with pytest.raises(InputError) as e:
        evaluate(nan, run, "map")
    assert (
        str(e.value) == "<qrels DataFrame>:2: column 'qid' holds nan, which is not an id: ids are strings or integers"
    )


def test_api_refuses_an_empty_qrels_frame_as_the_cli_refuses_an_empty_file():
    from irevalcli import evaluate

    qrels, run = _frames()
    with pytest.raises(InputError) as e:
        evaluate(qrels.iloc[:0], run, "map")
    assert str(e.value) == "<qrels DataFrame>: the qrels DataFrame has no judgements"
    with pytest.raises(InputError) as e:
        evaluate(qrels, run.iloc[:0], "map")
    assert str(e.value) == "<run DataFrame>: the run DataFrame has no results"


def test_api_errors_name_the_api_parameters(files):
    from irevalcli import evaluate
    from irevalcli.errors import MeasureParamError, MissingTopicError, UnknownMeasureError

    qrels, run = _frames()
    run = run[run.qid == 1]
    with pytest.raises(MissingTopicError) as e:
        evaluate(qrels, run, "map")
    assert str(e.value) == (
        "<run DataFrame>: topic '2' is judged in <qrels DataFrame> but has no results in the run "
        "(use complete=True to score missing topics as 0)"
    )
    q, r = files
    write(r, RUN.split("2 Q0")[0])
    with pytest.raises(MissingTopicError) as e:  # a path, read by the streaming reader: the same words
        evaluate(q, r, "map", stream=True)
    assert str(e.value).endswith("(use complete=True to score missing topics as 0)")
    with pytest.raises(UsageError) as e:
        evaluate(q, r, "map", max_docs=-1)
    assert str(e.value) == "max_docs=-1: the number of documents to keep cannot be negative"
    with pytest.raises(UsageError) as e:
        evaluate(q, r, "map", compat="9.1")
    assert str(e.value) == "compat='9.1': unknown version (known: 10.0, 9.0.8)"
    with pytest.raises(UnknownMeasureError) as e:
        evaluate(q, r, "rbp", compat="9.0.8")
    assert str(e.value) == "measure 'rbp' does not exist in trec_eval 9.0.8 (compat='9.0.8')"
    with pytest.raises(UnknownMeasureError) as e:
        evaluate(q, r, "map,ndcg")
    assert str(e.value) == (
        "unknown measure 'map,ndcg' (did you mean ['map', 'ndcg']? one name per list item); "
        "'ireval measures' lists them"
    )
    with pytest.raises(MeasureParamError) as e:
        evaluate(q, r, "map", rel_format="prefs")
    assert str(e.value) == (
        "measure 'map' cannot be computed from rel_format='prefs' judgements "
        "(it needs rel_format='qrels'); with rel_format='prefs' use measures=['all_prefs']"
    )
    # the command line keeps its own option names
    res = _cli_main(["-m", "map", str(q), str(r)])
    assert res[1].endswith("(use -c to score missing topics as 0)\n")


def _cli_main(args):
    code = "import sys; from irevalcli.commands.main import main; sys.exit(main(sys.argv[1:]))"
    p = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    return p.returncode, p.stderr
