"""One evaluation path: the options travel as one typed object (irevalcli.settings.EvalSettings),
and evaluate() alone decides reading, streaming, hashing and progress."""

from __future__ import annotations

import ast
import gzip
import os
from contextlib import contextmanager
from pathlib import Path

import pytest

from irevalcli.api import evaluate
from irevalcli.errors import UsageError
from irevalcli.output.formatters import format_trec
from irevalcli.settings import NO_PROGRESS, EvalSettings
from tests.conftest import TREC_EVAL

QRELS = str(TREC_EVAL / "qrels.test")
RUN = str(TREC_EVAL / "results.test")
PKG = Path(__file__).resolve().parents[1] / "irevalcli"


def _trec(ev) -> bytes:
    return format_trec(ev.results, per_query=True)


@pytest.mark.parametrize(
    "names",
    [
        {},
        {"complete": True},
        {"max_docs": 5, "judged_only": True},
        {"rel_level": 2, "num_docs": 1000},
        {"ties": "input", "compat": "9.0.8"},
        {"only_query": "301"},
        {"stream": True, "chunk_bytes": 4096, "hash_inputs": False},
    ],
)
def test_options_object_gives_what_the_keywords_give(names):
    by_keywords = evaluate(QRELS, RUN, ["map", "P.5", "ndcg_cut.10", "num_ret"], **names)
    by_object = evaluate(QRELS, RUN, ["map", "P.5", "ndcg_cut.10", "num_ret"], options=EvalSettings.of(**names))
    assert _trec(by_object) == _trec(by_keywords)
    assert by_object.run.sha256 == by_keywords.run.sha256 and by_object.qrels.sha256 == by_keywords.qrels.sha256


def test_flat_names_land_in_the_table_options():
    s = EvalSettings.of(complete=True, max_docs=7, ties="input", rel_format="qrels", stream=False)
    assert s.table.complete and s.table.max_docs == 7 and s.ties == "input" and s.table.ties == "input"
    assert s.stream is False and s.updated(max_docs=3).table.max_docs == 3 and s.table.max_docs == 7
    with pytest.raises(AttributeError):
        s.rel_format = "prefs"  # type: ignore[misc]  # frozen


def test_options_and_keywords_together_are_refused():
    with pytest.raises(TypeError) as err:
        evaluate(QRELS, RUN, "map", options=EvalSettings(), complete=True)
    assert str(err.value) == (
        "evaluate() takes options=EvalSettings(...) or settings as keywords, not both (got options= and complete=)"
    )


def test_an_unknown_setting_is_a_type_error():
    with pytest.raises(TypeError) as err:
        evaluate(QRELS, RUN, "map", completed=True)
    assert str(err.value).startswith("unknown setting 'completed' (known: ")


@pytest.mark.parametrize(
    ("names", "message"),
    [
        ({"max_docs": -1}, "max_docs=-1: the number of documents to keep cannot be negative"),
        (
            {"rel_format": "bogus"},
            "rel_format='bogus': unknown judgement format (known: qrels, qrels_jg, prefs, qrels_prefs)",
        ),
        ({"compat": "9.0"}, "compat='9.0': unknown version (known: 10.0, 9.0.8)"),
        ({"ties": "random"}, "ties='random': unknown tie rule (known: docno, input, rank)"),
        (
            {"ties": "input", "rel_format": "prefs"},
            "ties='input' applies to rel_format='qrels' judgements, not rel_format='prefs'",
        ),
        (
            {"qrels_format": "tsv", "rel_format": "prefs"},
            "qrels_format and columns['rel'] apply to rel_format='qrels' judgements, not rel_format='prefs'",
        ),
    ],
)
def test_settings_are_checked_when_made_with_the_messages_evaluate_gives(names, message):
    """One place checks the settings: making them (so an invalid one never exists), in the
    API's words outside the command line; evaluate's keyword form says the same."""
    with pytest.raises(UsageError) as made:
        EvalSettings.of(**names)
    with pytest.raises(UsageError) as evaluated:
        evaluate(QRELS, RUN, "map", **names)
    assert str(made.value) == str(evaluated.value) == message


class Recorder:
    """A ProgressReport that writes down what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str | None]] = []
        self.read: dict[tuple[str, str], int] = {}

    @contextmanager
    def reading(self, label, path):
        self.events.append(("reading", label, path))
        self.read[(label, path)] = 0

        def advance(n: int) -> None:
            self.read[(label, path)] += n

        yield advance

    @contextmanager
    def step(self, label, path=None):
        self.events.append(("step", label, path))
        yield


def test_progress_of_a_run_read_whole():
    rec = Recorder()
    ev = evaluate(QRELS, RUN, "map", stream=False, progress=rec)
    assert rec.events == [("reading", "reading", QRELS), ("reading", "reading", RUN), ("step", "evaluating", RUN)]
    assert rec.read == {("reading", QRELS): os.path.getsize(QRELS), ("reading", RUN): os.path.getsize(RUN)}
    assert _trec(ev) == _trec(evaluate(QRELS, RUN, "map", stream=False, progress=NO_PROGRESS))


def test_progress_of_a_streamed_run(tmp_path):
    """A streamed run reports the bytes read as stored (compressed), from the reading thread."""
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(Path(RUN).read_bytes()))
    rec = Recorder()
    ev = evaluate(QRELS, str(gz), "map", chunk_bytes=4096, progress=rec)  # gzip: streamed unasked
    assert rec.events == [("reading", "reading", QRELS), ("reading", "evaluating", str(gz))]
    assert rec.read[("evaluating", str(gz))] == gz.stat().st_size
    assert _trec(ev) == _trec(evaluate(QRELS, RUN, "map", stream=False))


def test_progress_of_judgements_in_another_format():
    rec = Recorder()
    prefs, run = str(TREC_EVAL / "prefs.test"), str(TREC_EVAL / "prefs.results.test")
    evaluate(prefs, run, "all_prefs", rel_format="prefs", progress=rec)
    assert rec.events == [("step", "reading", prefs), ("reading", "reading", run), ("step", "evaluating", run)]


def test_read_judgements_are_not_read_again():
    """The command line reads QRELS once for every run: an evaluation's judgements go into the next."""
    first = evaluate(QRELS, RUN, "map", hash_inputs=True)
    rec = Recorder()
    again = evaluate(first.qrels, RUN, "map", progress=rec)
    assert again.qrels is first.qrels and ("reading", "reading", QRELS) not in rec.events


def _names_imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.Attribute):
            names.add(node.attr)
    return names


DECIDERS = {
    # whether a run is streamed: evaluate() decides (api)
    "should_stream": {"api.py"},
    "streamable": {"api.py"},
}


@pytest.mark.parametrize("name", sorted(DECIDERS))
def test_each_decision_is_taken_in_one_place(name):
    """The command line passes paths, settings and a progress display; it never decides
    itself whether to stream (io and engine define these). Whether to hash and to read ranks
    are the settings' ``hash_inputs`` and ``read_ranks``, given to each reader as arguments."""
    users = {
        str(p.relative_to(PKG))
        for p in PKG.rglob("*.py")
        if p.parent.name not in ("io", "engine") and name in _names_imported(p)
    }
    assert users == DECIDERS[name]


@pytest.mark.skipif(os.name != "posix", reason="needs a POSIX pseudo-terminal")
def test_a_streamed_run_draws_its_reading_bar_on_a_terminal():
    """The command line's display is what evaluate() reports to: a streamed run (read in the
    reading thread) shows a bar, and stdout is the same bytes as without a display."""
    from tests.commands.test_progress import plain_stdout, run_under_pty

    args = ["-m", "map", "--stream", "qrels.test", "results.test", "results.test"]
    code, out, tty = run_under_pty(["--progress", *args])
    assert code == 0 and b"reading qrels.test" in tty and b"evaluating run 2/2 results.test" in tty
    assert b"/65.5 kB" in tty  # the run's bar, sized by the file (65490 bytes): not a bare spinner
    assert out == plain_stdout(args) and b"\x1b[" not in out


def test_the_eval_command_passes_paths_settings_and_output_settings():
    """run_eval takes paths, one EvalSettings and one OutputSettings, not an option each."""
    import inspect

    from irevalcli.commands.main import run_eval

    assert list(inspect.signature(run_eval).parameters) == ["qrels", "runs", "measures", "settings", "out"]
    params = inspect.signature(evaluate).parameters
    named = [n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    assert named == ["qrels", "run", "measures", "options", "progress", "stdin"]


def test_commands_evaluate_with_one_settings_object():
    """Every evaluate() call under commands/ and analysis/ (where compare and gate score their
    runs) passes options= (and perhaps progress=), never the settings as separate keywords."""
    calls = []
    for path in sorted([*(PKG / "commands").glob("*.py"), *(PKG / "analysis").glob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "evaluate":
                calls.append((f"{path.parent.name}/{path.name}", sorted(k.arg or "**" for k in node.keywords)))
    assert {name for name, _ in calls} == {"commands/main.py", "analysis/compare.py", "commands/plot.py"}
    for name, keywords in calls:
        assert "options" in keywords and set(keywords) <= {"options", "progress"}, (name, keywords)
