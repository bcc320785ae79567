"""``--engine dask``: a run (or labelled table) scored on a Dask cluster.

Dask does the distribution: ``dask.dataframe`` reads the dataset one file per partition
(each file by the same readers as locally, :mod:`irevalcli.io.dataset`), shuffles the rows
by topic (skipped when the dataset is partitioned by topic already), and every partition
is scored on a worker by the core engine (:func:`irevalcli.engine.parts.score_part`, numpy
over the whole partition). Only the per-topic values come back; the summary is computed
on the client by :func:`irevalcli.engine.parts.finish`, as for a run read whole, so the
output is the local engine's, byte for byte. A worker that dies is replaced and its tasks
re-run by Dask. Dask is imported here only, and only when this engine runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ClusterError, DuplicateDocError, InputError, UsageError
from ..io.dataset import INSTALL_HINT, Dataset
from ..settings import EvalSettings

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Qrels, Run
    from .evaluate import Results
    from .job import Job

CONNECT_TIMEOUT = 5  # seconds to reach a --scheduler
_CLIENT: ContextVar[Any] = ContextVar("irevalcli_dask_client", default=None)


def require_dask() -> None:
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError:
        raise UsageError(f"--engine dask needs Dask: {INSTALL_HINT}") from None


def check_engine_options(engine: str, scheduler: str | None, workers: int | None) -> None:
    """Refuse engine options that do not go together (the checks are :class:`EvalSettings`')."""
    EvalSettings(engine=engine, scheduler=scheduler, workers=workers)


def _quiet() -> None:
    import logging

    for name in ("distributed", "dask", "tornado", "bokeh", "asyncio"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


# Schemes of a --scheduler address ireval can connect to: plain TCP and websockets. tls:// and
# wss:// need a security configuration (certificates) ireval takes no option for; ucx:// needs
# UCX; inproc:// is a scheduler inside this process, which no command line has.
SCHEMES = ("tcp", "ws")
# Open files a local cluster needs (sockets between scheduler, nannies and workers, pipes):
# measured, 2 workers start under a limit of 64 and hang under 40.
FILES_PER_WORKER = 16
FILES_BASE = 32


def check_scheduler(scheduler: str) -> None:
    scheme = scheduler.split("://", 1)[0].lower() if "://" in scheduler else "tcp"
    if scheme not in SCHEMES:
        why = {
            "tls": "needs TLS certificates, which ireval takes no option for",
            "wss": "needs TLS certificates, which ireval takes no option for",
            "ucx": "needs UCX",
            "inproc": "names a scheduler inside this process",
        }.get(scheme, "is not a scheme Dask knows")
        raise ClusterError(
            f"--scheduler {scheduler}: {scheme}:// {why}; ireval connects to tcp:// and ws:// schedulers"
        )


def _open_files_for(workers: int) -> None:
    """Make room for a local cluster's open files: raise the soft limit towards the hard one
    if need be; if even that is too low, say so (a cluster short of files hangs, flooding
    tracebacks, instead of failing)."""
    try:
        import resource
    except ImportError:
        return
    need = FILES_BASE + FILES_PER_WORKER * workers
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft >= need:
        return
    if hard == resource.RLIM_INFINITY or hard >= need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (need, hard))
        return
    raise ClusterError(
        f"cannot start a local Dask cluster of {workers} workers: it needs about {need} open files and the "
        f"limit is {hard} (ulimit -n); raise it, or give fewer --workers"
    )


@contextlib.contextmanager
def session(engine: str = "local", scheduler: str | None = None, workers: int | None = None) -> Iterator[Any]:
    """The Dask client every evaluation in the block uses (None for the local engine):
    connected to ``scheduler``, or to a LocalCluster of ``workers`` processes (default: one
    per core) started now and shut down when the block ends."""
    check_engine_options(engine, scheduler, workers)
    if engine == "local" or _CLIENT.get() is not None:
        yield _CLIENT.get()
        return
    require_dask()
    _quiet()
    from distributed import Client, LocalCluster

    cluster = None
    try:
        if scheduler is not None:
            check_scheduler(scheduler)
            client = Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
        else:
            import logging

            _open_files_for(workers or os.cpu_count() or 1)
            cluster = LocalCluster(
                n_workers=workers or os.cpu_count() or 1,
                threads_per_worker=1,
                processes=True,
                dashboard_address=":0",
                silence_logs=logging.CRITICAL,
            )
            client = Client(cluster, set_as_default=False)
    except ClusterError:
        raise
    except Exception as exc:  # Dask's failures to start or connect have no common type
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()
        if isinstance(exc, MemoryError):
            raise
        detail = " ".join(str(exc).split()) or type(exc).__name__
        if scheduler is None:
            raise ClusterError(f"cannot start a local Dask cluster: {detail}") from None
        timed_out = "Timed out" in str(exc) or isinstance(exc, TimeoutError)
        why = f"no answer within {CONNECT_TIMEOUT} s" if timed_out else detail
        raise ClusterError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({why})") from None
    token = _CLIENT.set(client)
    try:
        yield client
    finally:
        _CLIENT.reset(token)
        with contextlib.suppress(Exception):
            client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()


@dataclass(frozen=True)
class Reading:
    """How a worker reads the dataset's files (sent with every task: nothing per file)."""

    fmt: str
    columns: Mapping[str, str]
    schema: tuple[str, ...]
    ranks: bool
    labelled: bool
    only_query: bytes | None


def _arrow_table(reading: Reading, ds: Dataset) -> pa.Table:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..io.dataset import read_part

    tables = []
    for i in range(len(ds)):  # the files of one partition (one, or a hive topic's)
        part = read_part(
            ds,
            i,
            what="labelled table" if reading.labelled else "run",
            fmt=reading.fmt,
            columns=reading.columns,
            schema=reading.schema,
            ranks=reading.ranks,
            labelled=reading.labelled,
        )
        r = part.run
        cols: dict[str, Any] = {"qid": r.qid, "docno": r.docno, "score": pa.array(r.score), "order": pa.array(r.lineno)}
        if reading.ranks:
            cols["rank"] = pa.array(r.rank if r.rank is not None else np.zeros(len(r), dtype=np.int64))
        if reading.labelled:
            assert part.labels is not None and part.labelled is not None
            cols["rel"] = pa.array(part.labels, mask=~part.labelled)
        t = pa.table(cols)
        if reading.only_query is not None:
            t = t.filter(pc.equal(t.column("qid"), pa.scalar(reading.only_query, pa.large_binary())))
        tables.append(t)
    return pa.concat_tables(tables) if len(tables) != 1 else tables[0]


def _frame(ds: Dataset, reading: Reading) -> Any:
    import pandas as pd

    return _arrow_table(reading, ds).to_pandas(types_mapper=pd.ArrowDtype)


def _meta(reading: Reading) -> Any:
    import pandas as pd
    import pyarrow as pa

    fields = [
        ("qid", pa.large_binary()),
        ("docno", pa.large_binary()),
        ("score", pa.float64()),
        ("order", pa.int64()),
    ]
    if reading.ranks:
        fields.append(("rank", pa.int64()))
    if reading.labelled:
        fields.append(("rel", pa.int64()))
    return pa.schema(fields).empty_table().to_pandas(types_mapper=pd.ArrowDtype)


@dataclass
class Scored:
    """What one partition sends back: its per-topic values and facts about its topics."""

    part: Any  # parts.Part or None
    seen: pa.Array  # the run's topic ids in the partition
    judged: pa.Array | None  # labelled table: the topics with a label
    num_rel: int  # labelled table: rows labelled > 0


@dataclass(frozen=True)
class Scoring:
    """What a partition's task needs beside the job (which every worker holds once)."""

    name: str
    runid: str
    labelled: bool


def _score(df: Any, job: Job, how: Scoring) -> Scored:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..io.arrow import to_numpy
    from ..io.dataset import labelled_qrels
    from ..io.trec import Run
    from .parts import score_part

    t = pa.Table.from_pandas(df, preserve_index=False)
    t = t.take(pc.sort_indices(t.column("order")))  # the rows in the local engine's order
    order = to_numpy(t.column("order").combine_chunks())
    run = Run(
        name=how.name,
        sha256="",
        qid=t.column("qid").combine_chunks(),
        docno=t.column("docno").combine_chunks(),
        score=to_numpy(t.column("score").combine_chunks()).astype(np.float64, copy=False),
        lineno=order,
        runid=how.runid,
        rank=to_numpy(t.column("rank").combine_chunks()) if "rank" in t.column_names else None,
    )
    seen = pc.unique(run.qid)
    judged = None
    num_rel = 0
    qrels = None  # the job's
    if how.labelled:
        rel = t.column("rel").combine_chunks()
        has = to_numpy(rel.is_valid())
        labels = to_numpy(rel.fill_null(0))
        qrels = labelled_qrels(run, labels, has, how.name)
        judged = pc.unique(qrels.qid)
        num_rel = int(np.count_nonzero(qrels.rel > 0))
    # a duplicate is named by its order keys here, by file and line on the client
    part = score_part(job, run, qrels=qrels, topics=seen)
    return Scored(part, seen, judged, num_rel)


def _label_max(ds: Dataset, columns: Mapping[str, str], schema: tuple[str, ...]) -> int:
    """The highest label in file ``i`` of a labelled table (0 when none): the label column
    alone when it is typed numbers, else the file read as :func:`_score` will read it."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from ..io.dataset import read_part
    from ..io.tabular import find_column
    from ..io.trec import decompress

    i = 0  # ds: one file
    data = decompress(ds.read_bytes(i, "labelled table"), ds.names[i], "labelled table")
    try:
        pf = pq.ParquetFile(pa.BufferReader(data))
        col = find_column("rel", pf.schema_arrow.names, columns)
        if col is not None:
            arr = pf.read(columns=[col]).column(col)
            if pa.types.is_integer(arr.type) or pa.types.is_boolean(arr.type):
                m = pc.max(arr.cast(pa.int64())).as_py()
                return max(int(m), 0) if m is not None else 0
    except (pa.ArrowInvalid, OSError):
        pass  # read_part names what is wrong
    part = read_part(ds, i, what="labelled table", columns=columns, schema=schema, labelled=True)
    assert part.labels is not None and part.labelled is not None
    labels = part.labels[part.labelled]
    return max(int(labels.max()), 0) if len(labels) else 0


def _run_info(ds: Dataset, fmt: str, columns: Mapping[str, str], schema: Any, ranks: bool, hashing: bool) -> Any:
    """The dataset's runid (its last file's), and a single file's SHA-256 when hashing."""
    from ..io.dataset import dataset_runid, read_part
    from ..io.source import digest

    for last in range(len(ds) - 1, -1, -1):  # the last file with rows (empty parts add nothing)
        part = read_part(ds, last, fmt=fmt, columns=columns, schema=schema, ranks=ranks)
        if len(part.run):
            break
    sha = digest(ds.read_bytes(0, "run")) if hashing and len(ds) == 1 else ""
    return dataset_runid(ds, part.run), sha


def _topic_groups(ds: Dataset, columns: Mapping[str, str], schema: tuple[str, ...], partitioned: bool) -> Any:
    """Files grouped so that each group holds whole topics, or None (rows must be shuffled):
    by the hive key that is the topic column (files without a column of that name), or one
    file per group when the dataset is declared partitioned by topic."""
    from ..io.tabular import find_column

    if partitioned:
        return [[i] for i in range(len(ds))]
    key = find_column("qid", list(ds.keys), columns)
    in_file = {c.split(" ", 1)[0] for c in schema[1:]}
    if key is None or schema[0] != "parquet" or key in in_file:
        return None
    groups: dict[str, list[int]] = {}
    for i, pairs in enumerate(ds.hive):
        groups.setdefault(dict(pairs)[key], []).append(i)
    return list(groups.values())


def _bundles(groups: list[list[int]], nfiles: int, nthreads: int, ds: Dataset) -> list[Dataset]:
    """Whole topic groups bundled into partitions of about ``nfiles / (4 × threads)`` files:
    a hive layout of 100k small topic directories is a few hundred tasks, not 100k."""
    per = max(1, nfiles // (4 * nthreads))
    out: list[Dataset] = []
    cur: list[int] = []
    for g in groups:
        cur += g
        if len(cur) >= per:
            out.append(ds.only(cur))
            cur = []
    if cur:
        out.append(ds.only(cur))
    return out


@dataclass
class DaskEvaluation:
    results: Results
    qrels: Qrels
    run: Run


def evaluate_dask(job: Job, run_spec: str, settings: EvalSettings) -> DaskEvaluation:
    """Evaluate the run (or, when ``job.qrels`` is None, the labelled table) at ``run_spec`` on
    the session's cluster (:func:`session`), or on a LocalCluster started for this call;
    ``settings`` says how the dataset is read (``run_format``, ``columns``, ``ties``,
    ``partitioned``, ``hash_inputs``)."""
    with session("dask") as client:
        return _evaluate(client, job, run_spec, settings)


def _evaluate(client: Any, job: Job, run_spec: str, settings: EvalSettings) -> DaskEvaluation:
    import dataclasses

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..core.table import only_query_unjudged
    from ..io.arrow import binary_array
    from ..io.dataset import first_schema, open_dataset, relocate
    from ..io.trec import Qrels, Run
    from .parts import finish

    qrels, opts = job.qrels, job.opts
    run_format, columns = settings.run_format, dict(settings.columns or {})
    ranks, hashing = settings.read_ranks, settings.hash_inputs
    labelled = qrels is None
    what = "labelled table" if labelled else "run"
    ds = open_dataset(run_spec, what)
    schema = first_schema(ds, what, run_format, columns)
    only = opts.only_query.encode("utf-8", "surrogateescape") if opts.only_query is not None else None
    if not labelled and only is not None:
        assert qrels is not None
        if not pc.any(pc.equal(qrels.qid, pa.scalar(only, qrels.qid.type))).as_py():
            raise only_query_unjudged(opts, "the qrels")
    reading = Reading(run_format, columns, schema, ranks, labelled, only)
    groups = _topic_groups(ds, columns, schema, settings.partitioned)

    with _cluster_errors(client), client.as_current():
        import dask
        import dask.dataframe as dd

        ends = ds.only(sorted({0, len(ds) - 1}))  # the first file (its hash) and the last (its runid)
        info = client.submit(_run_info, ends, run_format, columns, schema, ranks, hashing, pure=False)
        if labelled:  # the whole table's highest label, which every part's measures need
            subsets = [ds.only([i]) for i in range(len(ds))]
            maxes = client.gather(client.map(_label_max, subsets, columns=columns, schema=schema, pure=False))
            job = dataclasses.replace(job, max_label=max(maxes) if maxes else 0)
        runid, sha = client.gather(info)
        nthreads = sum(client.nthreads().values()) or 1
        if groups is None:
            frame = dd.from_map(_frame, [ds.only([i]) for i in range(len(ds))], reading=reading, meta=_meta(reading))
            frame = frame.shuffle(on="qid", npartitions=max(len(ds), 2 * nthreads))
        else:
            frame = dd.from_map(_frame, _bundles(groups, len(ds), nthreads, ds), reading=reading, meta=_meta(reading))
        how = Scoring(ds.spec, runid, labelled)
        job_future = client.scatter(job, broadcast=True)  # the qrels and subtopics sent once to each worker
        tasks = [dask.delayed(_score)(p, job_future, how) for p in frame.to_delayed()]
        try:
            scored: list[Scored] = client.gather(client.compute(tasks))
        except DuplicateDocError as exc:
            if exc.path != ds.spec:
                raise
            raise relocate(exc, ds.names) from None

    parts = [s.part for s in scored if s.part is not None]
    seen = pc.unique(pa.concat_arrays([s.seen for s in scored])) if scored else binary_array([])
    name = ds.spec
    if labelled:
        judged = pc.unique(pa.concat_arrays([s.judged for s in scored if s.judged is not None] or [binary_array([])]))
        # the whole-qrels facts of a table whose judgements only the workers saw
        job = dataclasses.replace(job, num_qrels_topics=len(judged), num_rel_complete=sum(s.num_rel for s in scored))
        if only is not None:
            judged = judged.filter(pc.equal(judged, pa.scalar(only, judged.type)))
            if not len(judged):
                raise only_query_unjudged(opts, "the qrels")
        qrels_seen = Qrels(
            name, "", judged, judged, np.zeros(len(judged), dtype=np.int64), np.zeros(len(judged), dtype=np.int64)
        )
        final_qrels = qrels_seen
    else:
        assert qrels is not None
        final_qrels = qrels
        if only is not None:
            final_qrels = qrels.take(
                pc.equal(qrels.qid, pa.scalar(only, qrels.qid.type)).to_numpy(zero_copy_only=False)
            )
    results = finish(dataclasses.replace(job, qrels=final_qrels), parts, seen, path=name, runid=runid)
    # the run's identity and its topics, one row each (its rows stay on the cluster)
    info_run = Run(name, sha, seen, seen, np.zeros(len(seen)), np.zeros(len(seen), dtype=np.int64), runid)
    return DaskEvaluation(results=results, qrels=qrels if qrels is not None else final_qrels, run=info_run)


@contextlib.contextmanager
def _cluster_errors(client: Any) -> Iterator[None]:
    """Dask's failures as one line: a task whose workers kept dying, a lost scheduler."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker

    try:
        yield
    except InputError:
        raise
    except (KilledWorker, CancelledError):
        # a task whose workers died more often than the scheduler allows (the others are then
        # cancelled), or a cluster shut down under the run
        raise ClusterError(
            "Dask gave up on a task: its workers kept dying or the cluster cancelled it "
            "(see the workers' logs: out of memory?)"
        ) from None
    except (OSError, TimeoutError) as exc:
        raise ClusterError(f"lost the Dask cluster ({' '.join(str(exc).split()) or type(exc).__name__})") from None
