"""The fast paths stay fast without changing results: no pandas import on the
evaluation path, the prefetching thread keeps order and errors, and the
Arrow/numpy bridge converts exactly."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import irevalcli.commands.main as cli
import irevalcli.commands.process as process
from irevalcli.engine.stream import prefetch
from irevalcli.errors import InputError
from irevalcli.io.arrow import binary_array, from_numpy, to_numpy, valid_mask

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

PROBE = """
import sys
from irevalcli.commands.main import main
sys.argv = ["ireval", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("pandas imported" if "pandas" in sys.modules else "pandas not imported", file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "map", "-m", "ndcg_cut.10"],
        ["-m", "all_trec", "-q"],
        ["-m", "all_trec", "-q", "-c", "-M", "50", "-J"],
        ["-m", "all_trec", "--stream"],
    ],
)
def test_trec_evaluation_does_not_import_pandas(args):
    """pyarrow's to_numpy/pa.array import pandas (~0.3 s); the trec path avoids them."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args, str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert r.stdout.startswith(("map", "num_ret", "runid"))
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


@pytest.mark.parametrize("measures", [["alpha_ndcg_cut.10", "err_ia_cut.10"], ["PrecisionIAMetric@10"]])
def test_diversity_measures_do_not_import_pandas(tmp_path, measures):
    """The subtopic judgements' reading and the diversity measures convert with io.arrow
    (pyarrow's to_numpy, pa.array and fill_null imported pandas there)."""
    text = (EXAMPLES / "qrels.txt").read_text().splitlines()
    rows = [line.split() for line in text if line.strip() and not line.startswith("#")]
    subtopics = tmp_path / "subtopics.txt"
    subtopics.write_text("".join(f"{q} {1 + i % 2} {d} {r}\n" for i, (q, _, d, r) in enumerate(rows)))
    args = [a for m in measures for a in ("-m", m)]
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            "--subtopics",
            str(subtopics),
            *args,
            str(EXAMPLES / "qrels.txt"),
            str(EXAMPLES / "run.txt"),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert r.stdout.count("\tall\t") == len(measures)
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


def test_out_of_core_evaluation_does_not_import_pandas(tmp_path):
    """The partition pass builds its batches from numpy columns without pa.record_batch's own
    conversion (which imports pandas: it once cost the 10M-line shuffled run 0.28 s)."""
    import random

    lines = (EXAMPLES / "run.txt").read_text().splitlines(keepends=True)
    random.Random(1).shuffle(lines)
    run = tmp_path / "shuffled.txt"
    run.write_text("".join(lines))
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            "-m",
            "map",
            "--stream",
            "--memory-limit",
            "1K",
            str(EXAMPLES / "qrels.txt"),
            str(run),
        ],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "TMPDIR": str(tmp_path)},
    )
    assert r.stdout.startswith("map")
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


@pytest.mark.parametrize(("with_null_label", "text_ids"), [(False, False), (True, False), (True, True)])
def test_labelled_log_evaluation_does_not_import_pandas(tmp_path, with_null_label, text_ids):
    """An impression log read by row group (io.dataset.read_log) converts its columns with
    io.arrow.to_numpy: pyarrow's own to_numpy imported pandas there (its float scores, and a
    label column's null mask), and so did the general labelled reading's fill_null (ids that
    are not numbers)."""
    import pyarrow.parquet as pq

    rng = np.random.default_rng(7)
    n = 3000
    rel = pa.array(rng.integers(0, 2, n), pa.int64())
    if with_null_label:
        rel = pa.array([None if i == 5 else int(v) for i, v in enumerate(rel.to_pylist())], pa.int64())
    qid, docno = np.repeat(np.arange(n // 30), 30), np.tile(np.arange(30), n // 30)
    table = pa.table(
        {
            "qid": pa.array([f"q{q}" for q in qid] if text_ids else qid),
            "docno": pa.array([f"d{d}" for d in docno] if text_ids else docno),
            "score": pa.array(rng.random(n), pa.float32()),
            "rel": rel,
        }
    )
    log = tmp_path / "log.parquet"
    pq.write_table(table, log, row_group_size=1000)
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "--labelled", "-m", "auc", "-m", "gauc", "-m", "ndcg_cut.10", str(log)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "\nauc " in r.stdout
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


# The process entry point (``ireval``'s console script), run to its end; instead of leaving
# with os._exit it prints what was imported and which Arrow allocator served the run.
ENTRY_PROBE = """
import json, os, sys
import irevalcli.commands.main as cli
import irevalcli.commands.process as process

tuned = []  # what each call of process.tune_malloc returned
tune = process.tune_malloc
process.tune_malloc = lambda: tuned.append(tune()) or tuned[-1]

def report(code):
    sys.stdout.flush()
    pool = sys.modules["pyarrow"].default_memory_pool().backend_name if "pyarrow" in sys.modules else None
    tops = sorted({m.split(".")[0] for m in sys.modules})
    blas = os.environ.get("OPENBLAS_NUM_THREADS")
    out = {"code": code, "modules": tops, "pool": pool, "blas": blas, "malloc": tuned}
    print(json.dumps(out), file=sys.stderr)
    sys.stderr.flush()
    os._exit(0)

process.exit_now = report
sys.argv = ["ireval", *sys.argv[1:]]
cli.entry()
"""
HEAVY = ("pandas", "rich", "scipy", "dask", "distributed", "matplotlib")


def run_entry(args, env_pool=None, env_blas=None, env=None):
    import json
    import os

    own = ("ARROW_DEFAULT_MEMORY_POOL", "OPENBLAS_NUM_THREADS", "GLIBC_TUNABLES", *process.MALLOC_USER_VARS)
    env = {**{k: v for k, v in os.environ.items() if k not in own}, **(env or {})}
    if env_pool is not None:
        env["ARROW_DEFAULT_MEMORY_POOL"] = env_pool
    if env_blas is not None:
        env["OPENBLAS_NUM_THREADS"] = env_blas
    r = subprocess.run([sys.executable, "-c", ENTRY_PROBE, *args], capture_output=True, text=True, env=env, check=True)
    return r.stdout, json.loads(r.stderr.strip().splitlines()[-1])


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["-q", "-m", "all_trec"],
        ["-m", "map", "-m", "ndcg_cut.10"],
        ["-c", "-q", "-m", "all_trec", "--compat", "9.0.8"],
        ["-M", "5", "-J", "-l", "2", "-m", "official"],
    ],
)
def test_main_command_writing_trec_text_imports_no_heavy_library(args):
    """The main command writing trec text loads what it uses: numpy and pyarrow, never
    pandas, rich, scipy, dask or matplotlib (each costs start-up time on every small run)."""
    qrels, run = str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")
    out, probe = run_entry([*args, qrels, run])
    assert probe["code"] == 0
    assert out.split("\t")[0].strip() in ("runid", "num_ret", "map", "num_q")
    assert "numpy" in probe["modules"] and "pyarrow" in probe["modules"]
    assert [m for m in HEAVY if m in probe["modules"]] == []
    # several runs against one reading of the qrels: the same
    out, probe = run_entry([*args, qrels, run, run])
    assert probe["code"] == 0 and [m for m in HEAVY if m in probe["modules"]] == []


@pytest.mark.parametrize("args", [["--help"], ["-v"]])
def test_help_and_version_import_neither_numpy_nor_pyarrow(args):
    out, probe = run_entry(args)
    assert probe["code"] == 0 and out.startswith(("Usage: ireval", "ireval "))
    assert [m for m in ("numpy", "pyarrow", *HEAVY) if m in probe["modules"]] == []


def test_ireval_process_uses_the_system_allocator_unless_told_otherwise():
    """The ireval process sets Arrow's allocator to malloc (less resident memory on small and
    medium runs, see commands/main.py ARROW_POOL); ARROW_DEFAULT_MEMORY_POOL set by the user wins."""
    args = ["-m", "map", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")]
    out, probe = run_entry(args)
    assert probe["pool"] == "system" and out.startswith("map")
    out, probe = run_entry(args, env_pool="mimalloc")
    assert probe["pool"] == "mimalloc" and out.startswith("map")


def test_ireval_process_runs_blas_on_one_thread_unless_told_otherwise():
    """The ireval process asks OpenBLAS for one thread before numpy loads (its idle workers
    spin: see commands/main.py BLAS_THREADS); OPENBLAS_NUM_THREADS set by the user wins."""
    args = ["-m", "map", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")]
    out, probe = run_entry(args)
    assert probe["blas"] == "1" and out.startswith("map")
    out, probe = run_entry(args, env_blas="2")
    assert probe["blas"] == "2" and out.startswith("map")


def _glibc() -> bool:
    import platform

    return sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"


@pytest.mark.skipif(not _glibc(), reason="the allocator tuned is GNU libc's")
def test_ireval_process_tunes_malloc_once_it_has_work_unless_told_otherwise():
    """The ireval process keeps large blocks in malloc's heaps (commands/process.py
    MALLOC_OPTIONS: a streamed run's chunks no longer fault in new pages); not for --help, not
    when the user tuned malloc through the environment, never for a caller of main() or the API."""
    args = ["-m", "map", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")]
    out, probe = run_entry(args)
    assert probe["malloc"] == [True] and out.startswith("map")
    for var in ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_"):
        out, probe = run_entry(args, env={var: "1048576"})
        assert probe["malloc"] == [False] and out.startswith("map")
    out, probe = run_entry(args, env={"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1048576"})
    assert probe["malloc"] == [False] and out.startswith("map")
    out, probe = run_entry(["--help"])
    assert probe["malloc"] == [] and out.startswith("Usage: ireval")
    out, probe = run_entry(
        ["compare", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt"), str(EXAMPLES / "run2.txt")]
    )
    assert probe["malloc"] == [True] and probe["code"] == 0


def test_main_called_in_process_leaves_malloc_alone(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(process, "tune_malloc", lambda: calls.append(1))
    assert cli.main(["-m", "map", str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")]) == 0
    assert capsys.readouterr().out.startswith("map") and calls == []


def test_prefetch_keeps_order():
    with prefetch(iter(range(1000)), depth=2) as it:
        assert list(it) == list(range(1000))


def test_prefetch_raises_in_order():
    def items():
        yield 1
        yield 2
        raise InputError("run.txt", "bad line", 7)

    got = []
    with pytest.raises(InputError) as exc, prefetch(items()) as it:  # the items before the error arrive first
        got.extend(it)
    assert got == [1, 2]
    assert exc.value.line == 7


def test_prefetch_stops_worker_when_consumer_stops():
    before = threading.active_count()
    produced = []

    def items():
        for i in range(10**6):
            produced.append(i)
            yield i

    with prefetch(items()) as gen:
        assert next(gen) == 0
    assert threading.active_count() == before  # joined on leaving the block
    assert len(produced) < 10


def test_prefetch_reads_in_the_callers_reading_session(tmp_path):
    """The worker thread runs in the caller's context: what it opens is recorded in the
    caller's reading session (which also finds a pipe's spool there)."""
    from irevalcli.io.source import inputs_read, open_input, reading_session

    f = tmp_path / "run.txt"
    f.write_bytes(b"x")

    def items():
        with open_input(f, what="run") as fh:
            yield fh.read()

    with reading_session():
        with prefetch(items()) as it:
            assert list(it) == [b"x"]
        assert list(inputs_read().values()) == [str(f)]


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, -1, 2**40], dtype=np.int64),
        np.array([0.5, -0.0, np.inf], dtype=np.float64),
        np.array([1, 2], dtype=np.int32),
        np.array([True, False, True, True, False, False, True, False, True]),
        np.zeros(0, dtype=np.int64),
    ],
)
def test_bridge_round_trip(values):
    arr = from_numpy(values)
    assert arr.to_pylist() == values.tolist()
    back = to_numpy(arr)
    assert back.dtype == values.dtype
    assert np.array_equal(back, values)
    # sliced arrays keep their offset (bit offsets for booleans)
    if len(values) > 2:
        assert np.array_equal(to_numpy(arr.slice(1, len(values) - 2)), values[1:-1])


def test_bridge_nulls_and_binary():
    arr = pa.array([1, None, 3], pa.int64())
    with pytest.raises(ValueError):
        to_numpy(arr)
    assert valid_mask(arr).tolist() == [True, False, True]
    vals = to_numpy(arr, nulls_ok=True)
    assert vals[0] == 1 and vals[2] == 3
    b = binary_array([b"a", b"", b"xyz"])
    assert b.type == pa.large_binary() and b.to_pylist() == [b"a", b"", b"xyz"]
    assert binary_array([]).to_pylist() == []
    assert to_numpy(pa.chunked_array([[1, 2], [3]], pa.int64())).tolist() == [1, 2, 3]


def test_bridge_widens_other_dtypes_without_truncating():
    assert from_numpy(np.array([1.5, -2.25], dtype=np.float32)).to_pylist() == [1.5, -2.25]
    assert from_numpy(np.array([7, 255], dtype=np.uint8)).to_pylist() == [7, 255]


@pytest.mark.parametrize("label_type", [pa.int64(), pa.string()])
def test_labelled_hive_dataset_with_missing_labels_does_not_import_pandas(tmp_path, label_type):
    """A hive-partitioned labelled dataset whose files lack the topic column, and whose labels
    have nulls: io.dataset adds the column and fills the labels without pyarrow's pandas shim
    (a list-built string column and fill_null with a Python value both imported pandas)."""
    import pyarrow.parquet as pq

    for q in range(3):
        part = tmp_path / "hive" / f"qid=q{q}"
        part.mkdir(parents=True)
        labels = [None if i == 3 else i % 2 for i in range(20)]
        rel = pa.array(
            [None if v is None else (str(v) if label_type == pa.string() else v) for v in labels], label_type
        )
        scores = pa.array(np.arange(20, 0, -1), pa.float64())
        table = pa.table({"docno": pa.array([f"d{i}" for i in range(20)]), "score": scores, "rel": rel})
        pq.write_table(table, part / "part.parquet")
    r = subprocess.run(
        [sys.executable, "-c", PROBE, "--labelled", "-q", "-m", "map", "-m", "auc", str(tmp_path / "hive")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = r.stdout.splitlines()
    assert [ln.split()[1] for ln in lines if ln.startswith("map")] == ["q0", "q1", "q2", "all"]
    assert lines[-1].split() == ["auc", "all", "0.4111"]
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


@pytest.mark.parametrize(
    "args",
    [
        ["pool", "-k", "5", str(EXAMPLES / "run.txt"), str(EXAMPLES / "run2.txt")],
        [
            "pool",
            "-k",
            "5",
            "--qrels",
            str(EXAMPLES / "qrels.txt"),
            str(EXAMPLES / "run.txt"),
            str(EXAMPLES / "run2.txt"),
        ],
        ["similarity", str(EXAMPLES / "run.txt"), str(EXAMPLES / "run2.txt")],
        ["gate", "--config", str(EXAMPLES / "gate.toml"), "--min-judged", "10=0.1", "--unjudged-out", "UJ"],
    ],
)
def test_pool_similarity_and_unjudged_pairs_do_not_import_pandas(args, tmp_path):
    """ireval pool and gate's unjudged pairs grouped and joined with Arrow's Table.group_by and
    join, and built columns with pa.array and pa.scalar; similarity converted with pyarrow's
    to_numpy: each imports pandas (a quarter of a second and 30-40 MB). They now work on
    (topic, docno) integer keys in numpy (core.pairs)."""
    if args[0] == "gate":
        args = [*args[:-1], str(tmp_path / "unjudged.txt"), str(EXAMPLES / "run2.txt")]
    r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    assert r.stdout
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


@pytest.mark.parametrize("fmt", ["parquet", "json", "csv", "markdown"])
def test_output_formats_do_not_import_pandas(fmt, tmp_path):
    """The parquet table was built with pa.array of Python lists (pyarrow's pandas shim: a
    quarter of a second); its columns now come from their buffers (io.arrow.string_array,
    float_array). Two runs and -q: every column of the tidy table."""
    out = tmp_path / f"out.{fmt}"
    q, r, r2 = (str(EXAMPLES / f) for f in ("qrels.txt", "run.txt", "run2.txt"))
    args = ["-q", "-m", "all_trec", "--format", fmt, "--output", str(out), q, r, r2]
    res = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
    assert out.stat().st_size > 0
    assert res.stderr.strip().splitlines()[-1] == "pandas not imported"


def test_text_hive_layouts_and_prefs_judgements_do_not_import_pandas(tmp_path):
    """A hive directory of CSV files (its topic column from the directory names) and -R
    qrels_prefs judgements with -c placeholders built their columns with pa.array of Python
    values (pyarrow's pandas shim): now io.arrow.repeated_text, from_numpy and binary_array."""
    for q in ("401", "402"):
        part = tmp_path / "hive" / f"qid={q}"
        part.mkdir(parents=True)
        (part / "part.csv").write_text("docno,score\nD15613,3\nD41875,2\nD1,1\n")
    qrels = tmp_path / "qp.txt"
    qrels.write_text((EXAMPLES / "qrels.txt").read_text() + "zz 0 dx 1\n")
    for args in (
        ["-c", "-q", "-m", "map", "-m", "num_ret", str(EXAMPLES / "qrels.txt"), str(tmp_path / "hive")],
        ["-R", "qrels_prefs", "-c", "-m", "all_prefs", str(qrels), str(EXAMPLES / "run.txt")],
    ):
        r = subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, check=True)
        assert r.stdout.startswith(("num_ret", "runid"))
        assert r.stderr.strip().splitlines()[-1] == "pandas not imported"
