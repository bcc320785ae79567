"""--engine dask (issue 17): the same bytes as the local engine, on a LocalCluster of 2 processes.

The CLI runs in-process and connects to the module's cluster with --scheduler, so the
cluster is started once. Inputs are random (seeded): topics of various sizes, tied scores,
graded labels, unjudged documents, topics judged but not retrieved and the reverse.
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def cluster():
    import logging

    from distributed import Client, LocalCluster

    with (
        LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.CRITICAL
        ) as lc,
        Client(lc) as client,
    ):
        yield lc.scheduler_address, client


def _rows(seed: int, nq: int = 25) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    out = []
    for q in range(nq):
        nd = int(rng.integers(1, 60))
        docs = rng.choice(200, size=nd, replace=False)
        for d in docs:
            label = int(rng.integers(0, 4)) if rng.random() < 0.7 else None
            out.append((f"q{q:03d}", f"d{d}", float(rng.integers(0, 12)) / 4, label))
    df = pd.DataFrame(out, columns=["qid", "docno", "score", "rel"])
    df["rel"] = df["rel"].astype("Int64")
    return df.sample(frac=1, random_state=seed).reset_index(drop=True)  # not grouped by topic


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    base = tmp_path_factory.mktemp("dask")
    df = _rows(7)
    judged = df.dropna(subset=["rel"])
    judged = judged[judged.qid != "q005"]  # a retrieved topic nobody judged
    extra = pd.DataFrame({"qid": ["q999"], "docno": ["d1"], "rel": [1]})  # judged, never retrieved
    qrels = pd.concat([judged[["qid", "docno", "rel"]], extra])
    (base / "qrels.txt").write_text("".join(f"{r.qid} 0 {r.docno} {r.rel}\n" for r in qrels.itertuples()))
    chunks = np.array_split(np.arange(len(df)), 6)
    (base / "pq").mkdir()
    (base / "txt").mkdir()
    for i, idx in enumerate(chunks):
        part = df.iloc[idx]
        part[["qid", "docno", "score"]].to_parquet(base / "pq" / f"part-{i}.parquet", index=False)
        (base / "txt" / f"run-{i}.txt").write_text(
            "".join(f"{r.qid} Q0 {r.docno} {k + 1} {r.score} sys{i}\n" for k, r in enumerate(part.itertuples()))
        )
        part.to_parquet(base / f"lab-{i}.parquet", index=False)
    (base / "lab").mkdir()
    for i in range(6):
        os.replace(base / f"lab-{i}.parquet", base / "lab" / f"part-{i}.parquet")
    (base / "pq" / "_SUCCESS").write_bytes(b"")  # not data
    for qid, g in df.groupby("qid"):
        d = base / "hive" / f"qid={qid}"
        d.mkdir(parents=True)
        half = len(g) // 2
        g.iloc[:half][["docno", "score"]].to_parquet(d / "a.parquet", index=False)
        g.iloc[half:][["docno", "score"]].to_parquet(d / "b.parquet", index=False)
    return base


def _both(cli, cluster, args, cwd, *, output: str | None = None):
    """The local engine's result and the dask engine's (stdout, or the --output file's bytes)."""
    outs = []
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        extra = ["--output", f"{output}.{engine[1]}"] if output else []
        res = cli([*args, *engine, *extra], cwd=cwd)
        assert (res.code, res.err) == (0, ""), res.err
        outs.append((cwd / f"{output}.{engine[1]}").read_bytes() if output else res.out)
    return outs


GRADED = ["-m", "auc", "-m", "gauc", "-m", "err", "-m", "pfound", "-m", "ndcg_cut.10", "-m", "recip_rank"]


@pytest.mark.parametrize("run", ["pq", "txt", "hive"])
def test_all_trec_per_topic_is_byte_identical(cli, cluster, data, run):
    local, dask = _both(cli, cluster, ["-q", "-c", "-m", "all_trec", "qrels.txt", run], data)
    assert local == dask and local.count(b"\n") > 1000


@pytest.mark.parametrize(
    "flags",
    [
        ["-q", "-c", "-M", "5"],
        ["-q", "-c", "-J", "-l", "2", "-N", "500"],
        ["-c", "-D", "q007"],
        ["-c", "--ties", "input"],
    ],
)
def test_graded_and_beyond_trec_eval_measures(cli, cluster, data, flags):
    local, dask = _both(cli, cluster, [*flags, *GRADED, "qrels.txt", "pq"], data)
    assert local == dask and b"gauc" in local


def test_missing_topic_is_refused_alike(cli, cluster, data):
    """q999 is judged and never retrieved: without -c both engines refuse, with one message."""
    msgs = []
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli(["-m", "map", "qrels.txt", "pq", *engine], cwd=data)
        msgs.append((res.code, res.out, res.err))
    assert (
        msgs[0]
        == msgs[1]
        == (
            2,
            b"",
            "ireval: pq: topic 'q999' is judged in qrels.txt but has no results in the run "
            "(use -c to score missing topics as 0)\n",
        )
    )


def test_labelled_table(cli, cluster, data):
    local, dask = _both(cli, cluster, ["--labelled", "-q", *GRADED, "-m", "map", "-m", "P.5", "lab"], data)
    assert local == dask
    # the labelled table is the run plus the qrels its labelled rows make
    df = pd.concat([pd.read_parquet(p) for p in sorted((data / "lab").glob("*.parquet"))])
    lab = df.dropna(subset=["rel"])
    (data / "lab-qrels.txt").write_text("".join(f"{r.qid} 0 {r.docno} {r.rel}\n" for r in lab.itertuples()))
    res = cli(["-q", *GRADED, "-m", "map", "-m", "P.5", "lab-qrels.txt", "pq"], cwd=data)
    assert res.code == 0
    same = [ln for ln in res.out.splitlines() if not ln.startswith(b"runid")]
    assert same == [ln for ln in local.splitlines() if not ln.startswith(b"runid")]


def test_labelled_hive_by_a_mapped_topic_column(cli, cluster, data, tmp_path):
    """An impression log laid out by user (user_id=.../), named the topic with --column qid=user_id."""
    df = pd.concat([pd.read_parquet(p) for p in sorted((data / "lab").glob("*.parquet"))])
    for qid, g in df.groupby("qid"):
        d = tmp_path / "log" / f"user_id={qid}"
        d.mkdir(parents=True)
        g.drop(columns=["qid"]).to_parquet(d / "part.parquet", index=False)
    args = ["--labelled", "-q", *GRADED, "--column", "qid=user_id", "log"]
    local, dask = _both(cli, cluster, args, tmp_path)
    flat = cli(["--labelled", "-q", *GRADED, str(data / "lab")], cwd=tmp_path)
    assert local == dask
    assert local == flat.out  # (no runid line: -m names the measures)


@pytest.mark.parametrize("fmt", ["json", "parquet", "csv"])
def test_output_formats(cli, cluster, data, fmt):
    local, dask = _both(
        cli, cluster, ["-q", "-c", *GRADED, "--format", fmt, "qrels.txt", "txt"], data, output=f"o.{fmt}"
    )
    assert local == dask and len(local) > 100


def test_single_file_records_its_sha256(cli, cluster, data):
    local, dask = _both(cli, cluster, ["-c", "-m", "map", "--format", "json", "qrels.txt", "txt/run-0.txt"], data)
    assert local == dask and b'"sha256": ""' not in local.split(b'"run"')[1][:200]


def test_compare_and_gate(cli, cluster, data):
    local, dask = _both(cli, cluster, ["compare", "qrels.txt", "txt", "hive", "-m", "map", "-m", "gauc"], data)
    assert local == dask and b"gauc" in local
    local, dask = _both(
        cli, cluster, ["gate", "qrels.txt", "pq", "--baseline", "txt", "--min", "map=0.1", "--format", "json"], data
    )
    assert local == dask and b'"verdict": "pass"' in local


def test_a_worker_killed_mid_run_changes_nothing(cli, cluster, data, tmp_path):
    """The first scoring task kills its worker (once: a marker file); Dask restarts the worker
    and re-runs what was lost; the output is unchanged."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class KillOnce(WorkerPlugin):
        name = "ireval-kill-once"

        def __init__(self, marker: str) -> None:
            self.marker = marker

        def transition(self, key, start, finish, **kwargs):
            if finish == "executing" and "_score" in str(key):
                try:
                    fd = os.open(self.marker, os.O_CREAT | os.O_EXCL)
                except FileExistsError:
                    return
                os.close(fd)
                os._exit(1)

    client = cluster[1]
    marker = tmp_path / "killed"
    expected = cli(["-q", "-c", *GRADED, "qrels.txt", "pq"], cwd=data)
    client.register_plugin(KillOnce(str(marker)))
    try:
        res = cli(["-q", "-c", *GRADED, "qrels.txt", "pq", "--engine", "dask", "--scheduler", cluster[0]], cwd=data)
    finally:
        client.unregister_worker_plugin(KillOnce.name)
    assert marker.exists()  # a worker did die
    assert (res.code, res.err, res.out) == (0, "", expected.out)
    client.wait_for_workers(2)


# ---- faults ---------------------------------------------------------------------------------------


def test_a_task_whose_workers_keep_dying_is_one_line(cli, data, tmp_path):
    """Every scoring task kills its worker; with allowed-failures 0 Dask gives up at once."""
    import dask
    from distributed import LocalCluster
    from distributed.diagnostics.plugin import WorkerPlugin

    class KillAlways(WorkerPlugin):
        name = "ireval-kill-always"

        def transition(self, key, start, finish, **kwargs):
            if finish == "executing" and "_score" in str(key):
                os._exit(1)

    import logging

    with (
        dask.config.set({"distributed.scheduler.allowed-failures": 0}),
        LocalCluster(
            n_workers=1, processes=True, threads_per_worker=1, dashboard_address=":0", silence_logs=logging.CRITICAL
        ) as lc,
        distributed.Client(lc) as client,
    ):
        client.register_plugin(KillAlways())
        res = cli(
            [
                "-m",
                "map",
                "-c",
                "qrels.txt",
                "pq",
                "--engine",
                "dask",
                "--scheduler",
                lc.scheduler_address,
                "--output",
                str(tmp_path / "o.txt"),
            ],
            cwd=data,
        )
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: Dask gave up on a task: its workers kept dying or the cluster cancelled it "
        "(see the workers' logs: out of memory?)\n",
    )
    assert not (tmp_path / "o.txt").exists()


def test_unreachable_scheduler(cli, data):
    res = cli(
        ["-m", "map", "qrels.txt", "pq", "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9", "--output", "o.txt"],
        cwd=data,
    )
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: --scheduler tcp://127.0.0.1:9: cannot reach the Dask scheduler (no answer within 5 s)\n",
    )
    assert not (data / "o.txt").exists()


def test_unreadable_partition(cli, cluster, tmp_path, data):
    (tmp_path / "ds").mkdir()
    for p in sorted((data / "pq").glob("*.parquet"))[:3]:
        (tmp_path / "ds" / p.name).write_bytes(p.read_bytes())
    bad = tmp_path / "ds" / "part-1.parquet"
    raw = bad.read_bytes()
    bad.write_bytes(raw[:4] + b"\0" * (len(raw) - 8) + raw[-4:])  # Parquet magic, no footer
    try:
        pq.ParquetFile(pa.BufferReader(bad.read_bytes()))
    except (pa.ArrowInvalid, OSError) as exc:
        detail = " ".join(str(exc).split())
    args = ["-m", "map", "-c", str(data / "qrels.txt"), "ds", "--output", "o.txt"]
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli([*args, *engine], cwd=tmp_path)
        assert (res.code, res.out, res.err) == (
            2,
            b"",
            f"ireval: ds/part-1.parquet: cannot read the Parquet file ({detail})\n",
        )
        assert not (tmp_path / "o.txt").exists()


def test_schema_mismatch_between_partitions(cli, cluster, tmp_path, data):
    (tmp_path / "ds").mkdir()
    for p in sorted((data / "pq").glob("*.parquet"))[:3]:
        (tmp_path / "ds" / p.name).write_bytes(p.read_bytes())
    t = pq.read_table(tmp_path / "ds" / "part-2.parquet")
    t = t.set_column(2, "score", pc.cast(t.column("score"), pa.string()))
    pq.write_table(t, tmp_path / "ds" / "part-2.parquet")
    args = ["-m", "map", "-c", str(data / "qrels.txt"), "ds", "--output", "o.txt"]
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli([*args, *engine], cwd=tmp_path)
        assert (res.code, res.out, res.err) == (
            2,
            b"",
            "ireval: ds/part-2.parquet: schema differs from the dataset's first file "
            "(columns +score string, -score double against ds/part-0.parquet)\n",
        )
        assert not (tmp_path / "o.txt").exists()


def test_bad_score_names_file_and_row(cli, cluster, tmp_path, data):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "a.txt").write_text("q1 Q0 d1 1 0.5 r\n")
    (tmp_path / "ds" / "b.txt").write_text("q1 Q0 d2 1 0.4 r\nq1 Q0 d3 2 x r\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli(["-m", "map", "q.txt", "ds", *engine], cwd=tmp_path)
        assert (res.code, res.out) == (2, b"")
        assert res.err.startswith("ireval: ds/b.txt:2: ")


def test_duplicate_across_files_names_both_rows(cli, cluster, tmp_path):
    (tmp_path / "ds").mkdir()
    (tmp_path / "ds" / "a.txt").write_text("q1 Q0 d1 1 0.5 r\n")
    (tmp_path / "ds" / "b.txt").write_text("q1 Q0 d2 1 0.4 r\nq1 Q0 d1 2 0.3 r\n")
    (tmp_path / "q.txt").write_text("q1 0 d1 1\n")
    errs = []
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli(["-m", "map", "q.txt", "ds", *engine], cwd=tmp_path)
        assert (res.code, res.out) == (2, b"")
        errs.append(res.err)
    assert errs[0] == errs[1]
    assert errs[0].startswith("ireval: ds/b.txt:2: ") and "ds/a.txt:1" in errs[0]


def test_without_dask_installed(cli, data, monkeypatch):
    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    res = cli(["-m", "map", "qrels.txt", "pq", "--engine", "dask"], cwd=data)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: --engine dask needs Dask: pip install 'dask[dataframe]>=2024.12' 'distributed>=2024.12'\n",
    )


def test_labelled_table_must_be_parquet(cli, cluster, tmp_path):
    (tmp_path / "lab").mkdir()
    (tmp_path / "lab" / "a.txt").write_text("q1 Q0 d1 1 0.5 r\n")
    for engine in (["--engine", "local"], ["--engine", "dask", "--scheduler", cluster[0]]):
        res = cli(["--labelled", "-m", "auc", "lab", *engine], cwd=tmp_path)
        assert (res.code, res.out, res.err) == (
            2,
            b"",
            "ireval: lab/a.txt: a labelled table must be Parquet (qid, docno, score, rel), not trec\n",
        )


def test_dask_engine_refuses_stdin(cli, cluster, data):
    res = cli(
        ["-m", "map", "qrels.txt", "-", "--engine", "dask", "--scheduler", cluster[0]],
        stdin=b"q1 Q0 d1 1 1 r\n",
        cwd=data,
    )
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: --engine dask reads the run from a file, a directory or a URL, not standard input\n",
    )


def test_local_engine_reads_urls(cli, data):
    """file:// and memory:// datasets read as the directory does (memory:// lives in this process)."""
    import fsspec

    fs = fsspec.filesystem("memory")
    for p in sorted((data / "pq").glob("*.parquet")):
        fs.pipe(f"/ireval-test/pq/{p.name}", p.read_bytes())
    want = cli(["-q", "-c", "-m", "ndcg", "qrels.txt", "pq"], cwd=data).out
    for url in (f"file://{data}/pq", f"file://{data}/pq/part-*.parquet", "memory://ireval-test/pq"):
        res = cli(["-q", "-c", "-m", "ndcg", "qrels.txt", url], cwd=data)
        assert res.code == 0, res.err
        assert res.out.replace(url.encode(), b"pq") == want


def test_help_does_not_import_dask():
    import subprocess

    code = "import sys; from irevalcli.commands.main import main; main(['--help']); print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed', 'fsspec')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]"


def test_partitioned_declared_skips_the_shuffle(cli, cluster, data, tmp_path):
    """Files that each hold whole topics, declared: the same output with or without the shuffle."""
    df = pd.concat([pd.read_parquet(p) for p in sorted((data / "pq").glob("*.parquet"))])
    (tmp_path / "ds").mkdir()
    for i, (_, g) in enumerate(df.groupby(df.qid.str[-1])):
        g.to_parquet(tmp_path / "ds" / f"{i}.parquet", index=False)
    args = ["-q", "-c", *GRADED, str(data / "qrels.txt"), "ds", "--engine", "dask", "--scheduler", cluster[0]]
    a = cli(args, cwd=tmp_path)
    b = cli([*args, "--partitioned-by-topic"], cwd=tmp_path)
    c = cli(args[:-4], cwd=tmp_path)
    assert a.code == b.code == c.code == 0 and a.out == b.out == c.out


def test_api(cluster, data):
    from irevalcli import evaluate
    from irevalcli.engine.dask_engine import session

    local = evaluate(str(data / "qrels.txt"), str(data / "txt"), ["map", "gauc"], complete=True)
    with session("dask", scheduler=cluster[0]):
        dask = evaluate(str(data / "qrels.txt"), str(data / "txt"), ["map", "gauc"], complete=True, engine="dask")
    assert local.per_query.equals(dask.per_query) and local.summary.equals(dask.summary)


def test_empty_parts_and_text_hive_layouts_on_dask(cli, cluster, tmp_path):
    """Issue 21 item 16 on the Dask engine: an empty Parquet part (an empty partition) adds
    nothing, and a hive layout of CSV files gets its topic from the directories, as locally."""
    (tmp_path / "q").write_bytes(b"1 0 a 1\n1 0 b 0\n2 0 c 1\n")
    ds = tmp_path / "ds"
    ds.mkdir()
    pq.write_table(pa.table({"qid": ["1", "1"], "docno": ["a", "b"], "score": [2.0, 1.0]}), ds / "part-0.parquet")
    empty = pa.table(
        {"qid": pa.array([], pa.string()), "docno": pa.array([], pa.string()), "score": pa.array([], pa.float64())}
    )
    pq.write_table(empty, ds / "part-1.parquet")
    pq.write_table(pa.table({"qid": ["2"], "docno": ["c"], "score": [1.0]}), ds / "part-2.parquet")
    pq.write_table(empty, ds / "part-3.parquet")
    local, dask = _both(cli, cluster, ["-q", "-m", "map", "-m", "num_ret", "q", "ds"], tmp_path)
    assert local == dask
    assert b"num_ret               \tall\t3\n" in local
    for q, rows in (("1", "a,2.0\nb,1.0\n"), ("2", "c,1.0\n")):
        (tmp_path / "hive" / f"qid={q}").mkdir(parents=True)
        (tmp_path / "hive" / f"qid={q}" / "part.csv").write_text("docno,score\n" + rows)
    hive_local, hive_dask = _both(cli, cluster, ["-q", "-m", "map", "-m", "num_ret", "q", "hive"], tmp_path)
    assert hive_local == hive_dask
    assert hive_local.replace(b"hive", b"ds") == local
