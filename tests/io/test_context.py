"""Reading follows its arguments, not a context (issue 23, item 2): every reader takes
``hash=`` (record the SHA-256 of the bytes as stored) and, for runs, ``ranks=`` (keep the
rank column, which ``--ties rank`` orders by), with no context variable set around it; the
settings' ``hash_inputs`` and ``read_ranks`` are what the API and the commands pass, down
to every engine. Hashing is done in one place, :mod:`irevalcli.io.source`.

Hand-computed: topic 1 judges a relevant (1), b not; topic 2 judges c relevant (2), d not.
The run gives b rank 1 and score 1.0, a rank 2 and score 2.0 (topic 1), d rank 1 and score
3.0, c rank 2 and score 4.0 (topic 2). By score (``--ties docno``) each relevant document
is first: AP 1 and 1, MAP 1. By rank (``--ties rank``) each is second: AP 1/2 and 1/2,
MAP 0.5.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import io
from pathlib import Path

import pandas as pd
import pytest

from irevalcli import evaluate
from irevalcli.api import load_qrels, load_run
from irevalcli.engine import spill, stream
from irevalcli.io.source import digest, read_whole
from irevalcli.io.tabular import read_qrels_file, read_run_file
from irevalcli.io.trec import read_qrels, read_run, read_source
from irevalcli.output.formatters import format_trec
from irevalcli.settings import EvalSettings
from tests.conftest import write

PKG = Path(__file__).resolve().parents[2] / "irevalcli"
QRELS = "1 0 a 1\n1 0 b 0\n2 0 c 2\n2 0 d 0\n"
GROUPED = "1 Q0 b 1 1.0 r\n1 Q0 a 2 2.0 r\n2 Q0 d 1 3.0 r\n2 Q0 c 2 4.0 r\n"
UNGROUPED = "1 Q0 b 1 1.0 r\n2 Q0 d 1 3.0 r\n1 Q0 a 2 2.0 r\n2 Q0 c 2 4.0 r\n"
BY_SCORE = b"map                   \tall\t1.0000\n"
BY_RANK = b"map                   \tall\t0.5000\n"


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def files(tmp_path):
    q = write(tmp_path / "qrels", QRELS)
    r = write(tmp_path / "run", GROUPED)
    gz = tmp_path / "run.gz"
    gz.write_bytes(gzip.compress(GROUPED.encode(), mtime=0))
    return q, r, gz


def test_whole_readers_hash_as_told(files):
    q, r, gz = files
    for path in (q, r, gz):  # the bytes as stored: a gzip file's compressed bytes
        assert read_source(path, what="run").sha256 == sha(path)
        assert read_source(path, what="run", hash=False).sha256 == ""
    assert (read_qrels(q).sha256, read_qrels(q, hash=False).sha256) == (sha(q), "")
    assert (read_run(gz).sha256, read_run(gz, hash=False).sha256) == (sha(gz), "")
    assert (read_qrels_file(q).sha256, read_qrels_file(q, hash=False).sha256) == (sha(q), "")
    assert (read_run_file(r).sha256, read_run_file(r, hash=False).sha256) == (sha(r), "")
    assert (load_qrels(q).sha256, load_qrels(q, hash=False).sha256) == (sha(q), "")
    assert (load_run(gz).sha256, load_run(gz, hash=False).sha256) == (sha(gz), "")
    stdin = io.BytesIO(GROUPED.encode())
    assert read_run_file("-", stdin=stdin, hash=False).sha256 == ""


def test_judgement_formats_and_subtopics_hash_as_told(tmp_path):
    from irevalcli.io.judgements import load_judgements
    from irevalcli.io.subtopics import load_subtopics

    jg = write(tmp_path / "jg", "1 A a 1\n1 A b 0\n")
    sub = write(tmp_path / "sub", "1 1 a 1\n1 2 b 1\n")
    assert (load_judgements(jg, "qrels_jg").sha256, load_judgements(jg, "qrels_jg", hash=False).sha256) == (sha(jg), "")
    assert (load_subtopics(sub).sha256, load_subtopics(sub, hash=False).sha256) == (sha(sub), "")


def test_run_readers_keep_ranks_as_told(files, tmp_path):
    _, r, gz = files
    assert read_run(r).rank is None
    assert read_run(r, ranks=True).rank.tolist() == [1, 2, 1, 2]
    assert read_run_file(gz).rank is None
    assert read_run_file(gz, ranks=True).rank.tolist() == [1, 2, 1, 2]
    tsv = write(tmp_path / "run.tsv", "qid\tdocno\trank\tscore\n1\tb\t1\t1.0\n1\ta\t2\t2.0\n")
    assert read_run_file(tsv).rank is None
    assert read_run_file(tsv, ranks=True).rank.tolist() == [1, 2]
    df = pd.DataFrame({"qid": ["1", "1"], "docno": ["b", "a"], "score": [1.0, 2.0], "rank": [1, 2]})
    assert load_run(df).rank is None
    assert load_run(df, ranks=True).rank.tolist() == [1, 2]
    folder = tmp_path / "dataset"
    folder.mkdir()
    write(folder / "part-0.txt", GROUPED)
    assert load_run(str(folder)).rank is None
    assert load_run(str(folder), ranks=True).rank.tolist() == [1, 2, 1, 2]


def test_a_run_without_scores_is_read_only_when_ranks_are_read(tmp_path):
    from irevalcli.errors import InputError

    tsv = write(tmp_path / "run.tsv", "qid\tdocno\trank\n1\tb\t1\n1\ta\t2\n")
    with pytest.raises(InputError) as e:
        read_run_file(tsv)
    assert str(e.value) == (
        f"{tsv}: no 'score' column for the run (columns: qid, docno, rank); to rank by its 'rank' column "
        "(rank 1 first: score = -rank) give --column rank=rank, or name a score column with --column score=NAME"
    )
    run = read_run_file(tsv, ranks=True)  # --ties rank: the rank column orders, no score needed
    assert (run.rank.tolist(), run.score.tolist()) == ([1, 2], [-1.0, -2.0])


def test_settings_say_what_readers_are_told():
    assert (EvalSettings().hash_inputs, EvalSettings().read_ranks) == (True, False)
    assert EvalSettings.of(ties="rank").read_ranks is True
    assert EvalSettings.of(ties="input").read_ranks is False
    assert EvalSettings.of(hash_inputs=False).hash_inputs is False


@pytest.fixture
def told(monkeypatch):
    """What the streamed and out-of-core engines are told (hash=, ranks=), engine by engine."""
    seen: list[tuple[str, bool, bool]] = []
    real_stream, real_spill = stream.evaluate_stream, spill.evaluate_out_of_core

    def streamed(*args, **kw):
        seen.append(("streamed", kw["hash"], kw["ranks"]))
        return real_stream(*args, **kw)

    def out_of_core(*args, **kw):
        seen.append(("out of core", kw["hash"], kw["ranks"]))
        return real_spill(*args, **kw)

    monkeypatch.setattr(stream, "evaluate_stream", streamed)
    monkeypatch.setattr(spill, "evaluate_out_of_core", out_of_core)
    return seen


@pytest.mark.parametrize("hash_inputs", [True, False])
@pytest.mark.parametrize("ties", ["docno", "rank"])
@pytest.mark.parametrize(
    "how",
    [
        ("whole", GROUPED, {"stream": False}, []),
        ("streamed", GROUPED, {"stream": True}, ["streamed"]),
        ("out of core", UNGROUPED, {"stream": True, "memory_limit": "1K"}, ["streamed", "out of core"]),
        ("whole after both", UNGROUPED, {"stream": True, "memory_limit": "1G"}, ["streamed", "out of core"]),
    ],
    ids=lambda how: how[0],
)
def test_every_engine_hashes_and_reads_ranks_as_the_settings_say(tmp_path, told, how, ties, hash_inputs):
    _, text, kw, engines = how
    q, r = write(tmp_path / "qrels", QRELS), write(tmp_path / "run", text)
    ev = evaluate(q, r, "map", ties=ties, hash_inputs=hash_inputs, **kw)
    assert format_trec(ev.results, per_query=False) == (BY_RANK if ties == "rank" else BY_SCORE)
    assert (ev.qrels.sha256, ev.run.sha256) == ((sha(q), sha(r)) if hash_inputs else ("", ""))
    assert told == [(e, hash_inputs, ties == "rank") for e in engines]


@pytest.mark.parametrize("ties", ["docno", "rank"])
def test_standard_input_spooled_then_read_whole_hashes_and_ranks(tmp_path, ties):
    q = write(tmp_path / "qrels", QRELS)
    for hash_inputs in (True, False):
        stdin = io.BytesIO(UNGROUPED.encode())
        ev = evaluate(q, "-", "map", ties=ties, hash_inputs=hash_inputs, stdin=stdin, memory_limit="1G")
        assert format_trec(ev.results, per_query=False) == (BY_RANK if ties == "rank" else BY_SCORE)
        want = hashlib.sha256(UNGROUPED.encode()).hexdigest() if hash_inputs else ""
        assert ev.run.sha256 == want


def test_a_dataframe_run_is_ranked_by_its_rank_column_as_told(tmp_path):
    q = write(tmp_path / "qrels", QRELS)
    rows = [line.split() for line in GROUPED.splitlines()]
    df = pd.DataFrame({"qid": [r[0] for r in rows], "docno": [r[2] for r in rows], "rank": [int(r[3]) for r in rows]})
    df["score"] = [float(r[4]) for r in rows]
    assert format_trec(evaluate(q, df, "map", ties="rank").results, per_query=False) == BY_RANK
    assert format_trec(evaluate(q, df, "map").results, per_query=False) == BY_SCORE


def test_commands_that_read_before_evaluating_pass_ties_rank(cli, tmp_path):
    """``ireval curve --ties rank`` reads its runs itself (no evaluate() around the reading):
    the first relevant document is second by rank, first by score."""
    q, r = write(tmp_path / "qrels", QRELS), write(tmp_path / "run", GROUPED)
    by_rank = cli(["curve", "--points", "all", "--ties", "rank", str(q), str(r)], cwd=tmp_path)
    by_score = cli(["curve", "--points", "all", str(q), str(r)], cwd=tmp_path)
    assert (by_rank.code, by_score.code) == (0, 0)
    head = b"run,qid,rank,recall,precision\n"
    assert by_rank.out == head + f"{r},1,2,1.0,0.5\n{r},2,2,1.0,0.5\n".encode()
    assert by_score.out == head + f"{r},1,1,1.0,1.0\n{r},2,1,1.0,1.0\n".encode()


def test_json_records_the_sha256_and_trec_text_does_not_hash(cli, files, monkeypatch):
    """The eval command hashes only for the formats that record it (hash_inputs), and the
    readers hash as they are told, whatever the context."""
    import json

    q, r, gz = files
    doc = json.loads(cli(["-m", "map", "--format", "json", str(q), str(gz)]).out)
    assert doc["inputs"]["qrels"] == {"path": str(q), "sha256": sha(q)}
    assert doc["inputs"]["run"] == {"path": str(gz), "sha256": sha(gz)}
    calls: list[bool] = []
    real = read_whole

    def spy(*args, **kw):
        calls.append(kw.get("hash", True))
        return real(*args, **kw)

    import irevalcli.io.source as source

    monkeypatch.setattr(source, "read_whole", spy)
    assert cli(["-m", "map", "--no-stream", str(q), str(r)]).out == b"map                   \tall\t1.0000\n"
    assert calls == [False, False]  # the qrels and the run, read whole, not hashed


def test_digest_is_the_one_hash_of_bytes_in_memory(tmp_path):
    assert digest(b"abc") == hashlib.sha256(b"abc").hexdigest()
    assert digest(b"abc", hash=False) == ""
    from irevalcli.io.config import read_config

    cfg = write(tmp_path / "gate.toml", 'measures = ["map"]\n')
    assert read_config(str(cfg)) == ({"measures": ["map"]}, sha(cfg))


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_hashing_is_done_in_the_byte_source_only():
    importers = set()
    for p in PKG.rglob("*.py"):
        for node in ast.walk(_tree(p)):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            if "hashlib" in names:
                importers.add(str(p.relative_to(PKG)))
    assert importers == {"io/source.py"}


def test_the_context_variables_left_are_the_ones_that_span_a_call():
    """No reader is steered by a context variable. The four left each span a whole command
    or session rather than choose how an input is read: the front end wording messages
    (errors.IN_CLI), the command's inputs no output may replace (output/files), the Dask
    session's client (engine/dask_engine) and the reading session (io/source)."""
    found = set()
    for p in PKG.rglob("*.py"):
        for node in ast.walk(_tree(p)):
            if isinstance(node, (ast.Assign, ast.AnnAssign)):
                value = node.value
                if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "ContextVar":
                    target = node.targets[0] if isinstance(node, ast.Assign) else node.target
                    found.add(f"{p.relative_to(PKG)}:{getattr(target, 'id', '?')}")
    assert found == {
        "errors.py:IN_CLI",
        "output/files.py:COMMAND_INPUTS",
        "engine/dask_engine.py:_CLIENT",
        "io/source.py:_SESSION",
    }
