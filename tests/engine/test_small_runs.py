"""Issue 22 item 1 (small runs): what the ireval process loads and computes on a small run's
path. Timings are benchmarks (benchmarks/shapes.py, shapes dl, dl50, startup), never tests:
these tests pin what the start-up work is made of."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import irevalcli.commands.completion as completion
import irevalcli.commands.main as cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# The console script's entry point, run to its end; instead of leaving with os._exit it
# prints the names of the modules imported.
PROBE = """
import json, os, sys
import irevalcli.commands.main as cli
import irevalcli.commands.process as process

def report(code):
    sys.stdout.flush()
    import gc

    print(json.dumps({"code": code, "modules": sorted(sys.modules), "gc": gc.get_threshold()}), file=sys.stderr)
    sys.stderr.flush()
    os._exit(0)

process.exit_now = report
sys.argv = ["ireval", *sys.argv[1:]]
cli.entry()
"""

NOT_ON_THE_PATH = (
    "shutil",
    "click.shell_completion",
    "irevalcli.commands.completion",
    # the table formats' modules, and --subtopics' reader: not for a run's trec text
    "irevalcli.output.tables",
    "irevalcli.output.cells",
    "irevalcli.io.subtopics",
    # a file is not a dataset: directories and URLs alone need their reader; a plain name is
    # not a pattern; suggestions only for a misspelt name
    "irevalcli.io.dataset",
    "glob",
    "difflib",
)


def _probe(args: list[str]) -> tuple[str, dict]:
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    probe = json.loads(r.stderr.strip().splitlines()[-1])
    assert probe["code"] == 0
    return r.stdout, probe


def _modules(args: list[str]) -> tuple[str, list[str]]:
    out, probe = _probe(args)
    return out, probe["modules"]


def test_ireval_process_collects_cyclic_garbage_less_often():
    out, probe = _probe(["-m", "map", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")])
    assert out.startswith("map")
    assert probe["gc"] == [100_000, 10, 10] == list(cli.GC_THRESHOLD)


def test_importing_the_command_leaves_the_callers_collector_alone():
    code = "import gc; t = gc.get_threshold(); import irevalcli.commands.main; print(gc.get_threshold() == t)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout == "True\n"


def test_completion_variable_is_the_one_completion_reads():
    assert cli.COMPLETE_VAR == completion.COMPLETE_VAR == "_IREVAL_COMPLETE"


def test_trec_text_run_loads_neither_completion_nor_shutil():
    out, modules = _modules(["-q", "-m", "all_trec", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")])
    assert out.startswith("num_ret")
    assert [m for m in NOT_ON_THE_PATH if m in modules] == []


def test_trec_text_runs_never_import_the_real_pyarrow_compute():
    """io/lightcompute.py: the kernels of a run's path (trec_eval's measures, -q, several
    runs, -c, -M, -J) without pyarrow.compute's wrappers (its docstrings module is their mark)."""
    q, r = str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    for args in (["-q", "-m", "all_trec", q, r], ["-c", "-M", "5", "-J", "-q", q, r, r]):
        out, modules = _modules(args)
        assert out.startswith(("num_ret", "==> "))
        assert "pyarrow.compute" in modules and "pyarrow._compute_docstrings" not in modules


def test_help_and_a_usage_error_never_load_the_byte_source():
    """--help and a usage error end in click's make_context: nothing is read, so neither the
    byte source (io/source.py: compression modules, the reading session) nor pyarrow."""
    out, modules = _modules(["--help"])
    assert out.startswith("Usage: ireval")
    assert [m for m in ("irevalcli.io.source", "gzip", "pyarrow", "numpy") if m in modules] == []


def test_version_loads_neither_completion_nor_shutil():
    out, modules = _modules(["-v"])
    assert out == f"ireval {cli.__version__} (trec_eval 10.0 semantics)\n"
    assert [m for m in NOT_ON_THE_PATH if m in modules] == []


def test_exact_by_cumsum_only_for_nonzero_integers_summing_below_2_to_52():
    import numpy as np

    from irevalcli.measures._util import exact_by_cumsum, seg_running_integral

    assert exact_by_cumsum(np.array([1.0, 3.0, -2.0]))
    assert exact_by_cumsum(np.array([], dtype=np.float64))
    assert not exact_by_cumsum(np.array([1.0, 0.5]))  # a fraction: rounding depends on the order
    assert not exact_by_cumsum(np.array([1.0, 0.0]))  # a zero could be -0.0
    assert not exact_by_cumsum(np.array([2.0**51, 2.0**51]))
    assert not exact_by_cumsum(np.array([1.0, np.nan]))
    assert not exact_by_cumsum(np.array([1.0, np.inf]))
    # segments [1, 2], [], [3, 4, -1]
    got = seg_running_integral(np.array([1.0, 2.0, 3.0, 4.0, -1.0]), np.array([0, 2, 2, 5]))
    assert got.tolist() == [1.0, 3.0, 3.0, 7.0, 6.0]


def test_summary_sums_taken_together_are_the_left_to_right_sums():
    """summarize adds every plain column's values in one 2-D running sum; each total must be
    the left-to-right sum of its own column (not numpy's pairwise sum), bit for bit."""
    import random
    from types import SimpleNamespace

    import numpy as np

    from irevalcli.engine import evaluate as ev
    from irevalcli.measures.registry import GEO_MEAN, JUDGED_SUM, MEAN, PER_TOPIC_ONLY, SUM, seq_sum

    rng = random.Random(7)
    nq = 37
    cols = []
    for agg in (MEAN, SUM, JUDGED_SUM, GEO_MEAN, MEAN):
        values = np.array([rng.choice([rng.random(), 1e16 * rng.random(), -rng.random(), 1e-9]) for _ in range(nq)])
        cols.append(ev.TopicColumn("x", SimpleNamespace(agg=agg, kind="float"), values))
    cols.append(ev.TopicColumn("s", SimpleNamespace(agg=PER_TOPIC_ONLY, kind="str"), ["a"] * nq))
    sums = ev._plain_sums(cols, nq)
    assert sorted(sums) == [0, 1, 2, 4]
    for i, total in sums.items():
        running = 0.0
        for v in cols[i].values.tolist():
            running += v
        assert total == running == seq_sum(cols[i].values)
    assert ev._plain_sums(cols, 0) == {}


def test_version_loads_no_measure_module():
    """-v and --help need neither the registry nor the spellings (measures.reference is the
    measures command's)."""
    _, modules = _modules(["-v"])
    assert [m for m in modules if m.startswith("irevalcli.measures")] == []


def test_short_options_are_parsed_without_long_option_suggestions(monkeypatch):
    """click reads ``-q`` as a long option first; the eval command's parser goes on to the
    short options without computing "did you mean" suggestions (difflib) that it drops, and an
    unknown long option still gets click's suggestion."""
    import difflib

    import click

    calls: list[str] = []
    real = difflib.get_close_matches

    def counted(word: str, *a: object, **k: object) -> list[str]:
        calls.append(word)
        return real(word, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(difflib, "get_close_matches", counted)
    qrels, run = str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    ctx = cli.eval_command.make_context("ireval", ["-q", "-c", "-mP.5", "-m", "map", qrels, run])
    assert ctx.params["per_query"] == 1 and ctx.params["complete"] == 1
    assert ctx.params["measures"] == ("P.5", "map")
    assert calls == []
    try:
        cli.eval_command.make_context("ireval", ["--query_eval_wante", qrels, run])
    except click.NoSuchOption as exc:
        assert exc.possibilities == ["--query_eval_wanted"]
    else:
        raise AssertionError("an unknown long option was accepted")
    assert calls == ["--query_eval_wante"]


def test_a_click_parser_without_the_private_hooks_is_left_alone(monkeypatch):
    """The short-option shortcut leans on click's private ``_match_long_opt``/``_long_opt``;
    a click whose parser has neither gets its own parser back, unchanged (no AttributeError
    on every command line)."""
    import click

    built = object()
    monkeypatch.setattr(click.Command, "make_parser", lambda self, ctx: built)
    ctx = click.Context(cli.eval_command)
    assert cli.eval_command.make_parser(ctx) is built
