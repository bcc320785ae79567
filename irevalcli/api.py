"""The Python API: ``evaluate(qrels, run, measures, ...)``. The CLI is a client of it."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from .core.table import EvalOptions, build_table
from .engine.evaluate import Results, evaluate_table
from .engine.job import Job
from .engine.stream import should_stream
from .errors import DuplicateDocError, InputError, IrevalError, UsageError
from .io.frames import as_frame, frame_column, frame_to_binary, is_table
from .io.tabular import streamable
from .io.trec import Qrels, Run, read_zscores
from .measures.names import Request, asked_order, resolve
from .records import FrozenRecord, Record
from .settings import COMPAT_MODES as COMPAT_MODES  # re-exported: the API's names
from .settings import NO_PROGRESS, REL_FORMATS, Advance, EvalSettings, ProgressReport, api_wording

if TYPE_CHECKING:
    import pandas as pd


class TableBuilder(FrozenRecord):
    """How one ``-R`` judgement format enters the one evaluation path of :func:`evaluate`:
    ``load`` reads the judgements (a path, a DataFrame or already read ones; ``load(judgements,
    settings, advance)``, ``advance`` taking the bytes read when someone watches), ``build``
    ranks a run against them into the table the format's measures read
    (``build(judgements, run, opts, subtopics)``). ``is_qrels``: plain qrels, the only format
    with topic-block streaming, ``-Z`` z-scores and subtopic judgements."""

    __slots__ = ("build", "is_qrels", "load")

    load: Callable[[Any, EvalSettings, Advance | None], Any]
    build: Callable[[Any, Run, EvalOptions, Any], Any]
    is_qrels: bool

    def __init__(
        self,
        load: Callable[[Any, EvalSettings, Advance | None], Any],
        build: Callable[[Any, Run, EvalOptions, Any], Any],
        is_qrels: bool = False,
    ) -> None:
        object.__setattr__(self, "load", load)
        object.__setattr__(self, "build", build)
        object.__setattr__(self, "is_qrels", is_qrels)


def _qrels_table(q: Qrels, r: Run, opts: EvalOptions, sub: Any) -> Any:
    table = build_table(q, r, opts, doc_dict=sub is not None)
    table.subtopics = sub
    return table


def _load_qrels(rel: Any, settings: EvalSettings, advance: Advance | None) -> Qrels:
    return load_qrels(
        rel, fmt=settings.qrels_format, columns=settings.columns, progress=advance, hash=settings.hash_inputs
    )


def _judgements_builder(rel_format: str, builder: str) -> TableBuilder:
    """A ``-R`` format read by io.judgements and ranked by ``core.judged.<builder>``, both
    imported when the format is used (5 ms of every other run's start-up)."""

    def load(rel: Any, settings: EvalSettings, advance: Advance | None) -> Any:
        from .io.judgements import load_judgements

        return load_judgements(rel, rel_format, hash=settings.hash_inputs)

    def build(j: Any, r: Run, opts: EvalOptions, _: Any) -> Any:
        from .core import judged

        return getattr(judged, builder)(j, r, opts)

    return TableBuilder(load=load, build=build)


TABLE_BUILDERS: dict[str, TableBuilder] = {
    "qrels": TableBuilder(load=_load_qrels, build=_qrels_table, is_qrels=True),
    "qrels_jg": _judgements_builder("qrels_jg", "build_jg_table"),
    "prefs": _judgements_builder("prefs", "build_prefs_table"),
    "qrels_prefs": _judgements_builder("qrels_prefs", "build_prefs_table"),
}
assert tuple(TABLE_BUILDERS) == REL_FORMATS, "settings.REL_FORMATS names the table builders"


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: the results plus the inputs' identities."""

    results: Results  # its columns in trec_eval's measure order, as trec text prints them
    qrels: Qrels
    run: Run
    asked: dict[str, int] | None = None  # label -> place asked (measures.names.asked_order)

    @property
    def per_query(self) -> pd.DataFrame:
        """Tidy per-topic values: columns qid, measure, value, text; measures in the order asked."""
        return self.in_asked_order().per_query_frame()

    @property
    def summary(self) -> pd.DataFrame:
        """Summary values: columns measure, value, text; measures in the order asked."""
        return self.in_asked_order().summary_frame()

    def in_asked_order(self) -> Results:
        """The results with their measures in the order they were asked (trec text keeps
        trec_eval's order: :attr:`results`)."""
        return in_asked_order(self.results, self.asked or {})


def in_asked_order(results: Results, order: dict[str, int]) -> Results:
    """``results`` with its columns in the order the measures were asked (``order``: label ->
    place, :func:`irevalcli.measures.names.asked_order`); labels of one place keep their order,
    and a label ``order`` does not know keeps its place after the known ones."""
    if not order:
        return results
    last = max(order.values()) + 1

    def key(item: tuple[int, Any]) -> tuple[int, int]:
        i, c = item
        return (order.get(c.label, order.get(f"root:{c.root}", last)), i)

    return results.replaced(columns=[c for _, c in sorted(enumerate(results.columns), key=key)])


def qrels_from_frame(df: Any, name: str = "<qrels DataFrame>", columns: Any = None) -> Qrels:
    """A qrels DataFrame with columns qid, docno, rel (or any header spelling a qrels file may
    use: query_id, doc_id, relevance, ...; ``columns``: role -> column name, as for a file)."""
    import numpy as np

    qid_col = frame_column(df, "qid", name, "qrels", columns)
    doc_col = frame_column(df, "docno", name, "qrels", columns)
    rel_col = frame_column(df, "rel", name, "qrels", columns)
    if len(df) == 0:
        raise InputError(name, "the qrels DataFrame has no judgements")
    from .io.trec import whole_column

    rel = whole_column(df[rel_col], name, "relevance label")
    return Qrels(
        name=name,
        sha256="",
        qid=frame_to_binary(df, qid_col, name),
        docno=frame_to_binary(df, doc_col, name),
        rel=rel,
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
    )


def run_from_frame(
    df: Any,
    name: str = "<run DataFrame>",
    runid: str = "run",
    columns: Any = None,
    *,
    ranks: bool = False,
    chunked: bool = False,
) -> Run:
    """A run DataFrame with columns qid, docno, score (and optionally runid), or any header
    spelling a run file may use (query_id, doc_id, ...); ``columns``: role -> column name, as
    for a file. As a file's, a run with a rank column named in ``columns`` and no score is
    ranked by it (score = -rank), and ``ties="rank"`` needs a rank column and no score.
    ``ranks``: keep the rank column (``ties="rank"`` orders by it; a score only breaks equal ranks).
    ``chunked``: qid and docno as ChunkedArrays (see ``io.frames.frame_to_binary``), for a
    caller that takes the run in slices (:func:`_frame_parts`)."""
    import numpy as np
    import pandas as pd

    from .io.tabular import find_column
    from .io.trec import check_rank_range, whole_column

    columns = dict(columns or {})
    names = [str(c) for c in df.columns]
    by_rank = "rank" in columns and "score" not in columns  # columns={"rank": NAME}: score = -rank
    qid_col = frame_column(df, "qid", name, "run", columns)
    doc_col = frame_column(df, "docno", name, "run", columns)
    if ranks and not by_rank:
        score_col = find_column("score", names, columns)
    else:
        score_col = None if by_rank else frame_column(df, "score", name, "run", columns)
    rank_col = None
    if ranks or by_rank:
        rank_col = find_column("rank", names, columns)
        if rank_col is None and by_rank:
            frame_column(df, "rank", name, "run", columns)  # raises: names the missing column
        if rank_col is None:
            raise InputError(
                name, f"the run DataFrame has no rank column, which ties='rank' orders by (columns: {', '.join(names)})"
            )
    if len(df) == 0:
        raise InputError(name, "the run DataFrame has no results")
    rank = None
    if rank_col is not None:
        rank = whole_column(df[rank_col], name, "rank")
        check_rank_range(rank, np.arange(1, len(df) + 1), name)
    if score_col is not None:
        column = df[score_col]
        if column.dtype == np.float64:  # numpy's doubles: the column itself, no copy
            scores = column.to_numpy()
            bad = np.isnan(scores)
        else:
            score = pd.to_numeric(column, errors="coerce")
            bad = score.isna().to_numpy()
            scores = score.to_numpy(dtype=np.float64, na_value=np.nan)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise InputError(name, f"score '{column.iloc[i]}' is not a number", i + 1)
    else:
        assert rank is not None
        scores = -rank.astype(np.float64)
    runid_col = find_column("runid", names, columns)
    if runid_col is not None:
        runid = str(df[runid_col].iloc[-1])
    return Run(
        name=name,
        sha256="",
        qid=frame_to_binary(df, qid_col, name, chunked=chunked),
        docno=frame_to_binary(df, doc_col, name, chunked=chunked),
        score=scores,
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
        runid=runid,
        rank=rank if ranks else None,
    )


def load_qrels(
    qrels: Any,
    *,
    stdin: BinaryIO | None = None,
    fmt: str = "auto",
    columns: Any = None,
    progress: Advance | None = None,
    hash: bool = True,
) -> Qrels:
    """A qrels path in any input format (``fmt``: auto, trec, tsv, csv, jsonl, parquet;
    ``columns``: role -> column name, e.g. ``{"qid": "query_id"}``), or a DataFrame.
    ``progress`` is called with the number of bytes read as a file is read; ``hash``: record
    a file's SHA-256 (``Qrels.sha256``; "" when False)."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        from .io.source import is_dataset
        from .io.tabular import read_qrels_file

        if is_dataset(qrels):  # a directory or URL: one qrels in many files
            from .io.dataset import read_qrels_dataset

            return read_qrels_dataset(os.fspath(qrels), fmt=fmt, columns=columns)
        return read_qrels_file(qrels, fmt=fmt, columns=columns, stdin=stdin, progress=progress, hash=hash)
    if is_table(qrels):  # a pandas or Polars DataFrame, a pyarrow Table, ...
        frame = as_frame(qrels)
        return qrels_from_frame(qrels if frame is None else frame, columns=columns)
    raise UsageError(f"qrels must be a path or a DataFrame, not {type(qrels).__name__}")


def load_run(
    run: Any,
    *,
    stdin: BinaryIO | None = None,
    fmt: str = "auto",
    columns: Any = None,
    progress: Advance | None = None,
    hash: bool = True,
    ranks: bool = False,
) -> Run:
    """A run path in any input format (``fmt``: auto, trec, msmarco, tsv, csv, jsonl, parquet;
    ``msmarco`` derives scores from ranks and is never detected), or a DataFrame.
    ``progress`` is called with the number of bytes read as a file is read; ``hash``: record
    a file's SHA-256 (``Run.sha256``; "" when False); ``ranks``: keep the rank column
    (``Run.rank``, which ``ties="rank"`` orders by: ``EvalSettings.read_ranks``)."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        from .io.source import is_dataset
        from .io.tabular import read_run_file

        if is_dataset(run):  # a directory or URL: one run in many files
            from .io.dataset import read_run_dataset

            return read_run_dataset(os.fspath(run), fmt=fmt, columns=columns, ranks=ranks)
        return read_run_file(run, fmt=fmt, columns=columns, stdin=stdin, progress=progress, hash=hash, ranks=ranks)
    if is_table(run):  # a pandas or Polars DataFrame, a pyarrow Table, ...
        frame = as_frame(run)
        return run_from_frame(run if frame is None else frame, columns=columns, ranks=ranks)
    raise UsageError(f"run must be a path or a DataFrame, not {type(run).__name__}")


def _api_names(func: Any) -> Any:
    """Re-word an error raised from a Python call so that it names the parameter to change
    (``complete=True``), not the command line's option (``-c``): :func:`settings.api_wording`."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except IrevalError as exc:
            api_wording(exc)
            raise

    return wrapper


def _measure_list(measures: Any) -> list[str]:
    """``"map"`` or ``["map", "P.5"]``: a single string is one measure (not its letters), or
    several separated by blanks (``"ndcg_cut.10 map"``, split by ``resolve``)."""
    if isinstance(measures, str):
        return [measures]
    try:
        items = list(measures)
    except TypeError:
        raise UsageError(f"measures must be a name or a list of names, not {type(measures).__name__}") from None
    for m in items:
        if not isinstance(m, str):
            raise UsageError(f"measures must be a name or a list of names; got {m!r} ({type(m).__name__}) in the list")
    return items


def _flat_specs(measures: Any) -> list[str]:
    """Every spec of ``measures`` (a name, a list, or a list of lists), in the order given."""
    if isinstance(measures, str):
        return [measures]
    return [m for g in measures for m in ([g] if isinstance(g, str) else _measure_list(g))]


def _requests(measures: Any, *, rel_format: str, compat: str) -> list[Request]:
    """The requests for ``measures``: a name, a list of names, or a list of such lists.

    Each inner list is resolved on its own, as one ``-m`` command line (so ``[["P.5"],
    ["P.10"]]`` asks for both cutoffs, which trec_eval's grammar keeps apart), and every
    request is computed on the same table: compare and gate build each run's table once
    however many measures they check. A label asked for twice keeps its first value.
    """
    if (
        not isinstance(measures, str)
        and isinstance(measures, Sequence)
        and measures
        and all(not isinstance(g, str) and isinstance(g, Sequence) for g in measures)
    ):
        return [r for group in measures for r in resolve(_merged(group), rel_format=rel_format, compat=compat)]
    return resolve(_merged(measures), rel_format=rel_format, compat=compat)


def _merged(measures: Any) -> list[str]:
    """The specs of one list, a cutoff measure's later parameters merged into its first
    (``["P.5", "P.10"]`` or ``"P.5 P.10"``: P_5 and P_10). trec_eval keeps only the first
    parameters given for a measure, which the trec text of the command line reproduces (with
    a note); the API prints no trec text, so it computes every measure asked, as the command
    line's other formats do, never dropping one silently."""
    from .measures.names import repeated_parameters, split_specs

    return repeated_parameters(split_specs(_measure_list(measures)), keep="all")[0]


@_api_names
def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Sequence[str] = ("official",),
    *,
    options: EvalSettings | None = None,
    progress: ProgressReport | None = None,
    stdin: BinaryIO | None = None,
    **settings: Any,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` exactly as trec_eval 10.0 would.

    ``qrels`` and ``run`` are paths (``-`` reads the run from stdin; gzip is detected)
    or DataFrames (qrels: qid, docno, rel; run: qid, docno, score[, runid]): pandas or Polars
    DataFrames, pyarrow Tables, any table exporting Arrow data (``io.frames.as_frame``).
    ``measures``: one name, several in one string separated by blanks (``"ndcg_cut.10 map"``),
    or a list of names (``"map"``, ``["P.5,10", "ndcg_cut_10"]``,
    ``"all_trec"``). DataFrame columns are recognised by the same names as file headers
    (``query_id``, ``doc_id``, ``relevance``, ...); float ids that are whole numbers (a qid
    column read as 301.0) become integers ("301"), other floats are refused.

    The options are one :class:`irevalcli.settings.EvalSettings` (``options=``), or its names
    as keywords (``evaluate(q, r, "map", complete=True)``; not both):
    ``complete``, ``rel_level``, ``max_docs``, ``judged_only``, ``num_docs``, ``only_query``
    and ``rel_format`` (``"qrels"``, ``"qrels_jg"``, ``"prefs"``, ``"qrels_prefs"``) and
    ``zscores`` are trec_eval's ``-c -l -M -J -N -D -R -Z``; ``compat="9.0.8"``
    reproduces trec_eval 9.0.8 (the version inside pytrec_eval) instead of 10.0.
    ``ties``: how documents with equal scores are ordered, ``"docno"`` (descending; trec_eval's
    rule, in both versions) or ``"input"`` (their order in the run; ranx's and TF-Ranking's);
    ``"rank"`` orders by the run's rank column ascending instead of the score (equal ranks by
    score descending, then docno descending); the rank column must then hold whole numbers.
    ``run_format``, ``qrels_format`` (``"auto"`` detects all but msmarco) and ``columns``
    (role -> column name) say how files are read.
    ``stream``: evaluate a run file topic block by topic block in bounded memory
    (default: automatically for files of 32 MiB or more, gzip/bzip2/xz/zstd files and standard input);
    a run that is not grouped by topic is then read whole (standard input from a temporary
    spool of what was read). The results are identical either way. ``chunk_bytes``: bytes
    parsed at a time when streaming.
    ``hash_inputs``: record each input file's SHA-256 (``Evaluation.qrels.sha256`` and
    ``.run.sha256``; empty when False, which saves reading time on large runs).
    ``subtopics``: subtopic judgements (``qid subtopic docno rel``; a path or a DataFrame with
    those columns) for the diversity measures (alpha_ndcg_cut, err_ia_cut, nrbp, map_ia, ...).

    ``progress`` (a :class:`irevalcli.settings.ProgressReport`) is told when each input is
    read (with the bytes read as they are, whole or streamed) and when the run is evaluated.
    ``stdin``: where ``-`` reads from (default: the process's standard input).

    Beyond one machine: ``run`` (and ``qrels``) may be a dataset, a directory or a URL
    (``file://``, ``s3://``, ...: any fsspec URL, a glob allowed) of Parquet or TREC files,
    hive partitioning understood (``qid=301/part.parquet``), read as one input.
    ``labelled=True``: ``run`` is one table carrying the label with each row (qid, docno,
    score, rel; a missing label is an unjudged row) and ``qrels`` is None.
    ``engine="dask"`` scores the run on a Dask cluster (the current
    :func:`irevalcli.engine.dask_engine.session`, else a local one for the call), with the
    same results; ``partitioned=True`` declares that no topic spans two files (no shuffle).
    ``run_format`` and ``columns`` (role -> column name) say how the dataset's files are read.
    Raises :class:`irevalcli.errors.IrevalError` subclasses with user-facing messages.
    """
    from .io.source import reading_session

    s = EvalSettings.given(options, settings, "evaluate()")
    # a pipe named as a path read from its source once, however often it is opened (sniffed,
    # then read); inputs are hashed (or not) and run ranks read (or not) as the settings say,
    # each reader told so (hash=s.hash_inputs, ranks=s.read_ranks)
    with reading_session():
        counts = _judged_counts(measures, s)
        ev = _evaluate(qrels, run, measures, s, progress or NO_PROGRESS, stdin, counts)
    if s.rel_format == "qrels" and s.zscores is None:
        _count_judged(ev.results, counts)
    ev.asked = asked_order(_flat_specs(measures), rel_format=s.rel_format, compat=s.compat)
    return ev


# Retrieved documents with a judgement (rel >= 0) are these two counts together: every engine
# computes them beside the measures asked for, so that a run none of whose documents is judged
# (document qrels against a passage run) is noticed (Results.judged_retrieved).
JUDGED_COUNTS = ("num_rel_ret", "num_nonrel_judged_ret")


def nothing_judged(qrels_name: str) -> str:
    """What is wrong with a run none of whose retrieved documents is judged (its scores say nothing)."""
    return (
        f"none of the documents it retrieved is judged in {qrels_name}: the document ids do not line up "
        "(document qrels against a passage run, or another collection's ids?)"
    )


def _judged_counts(measures: Any, s: EvalSettings) -> list[str]:
    """The judged counts to compute beside ``measures`` (those not asked for already)."""
    if s.rel_format != "qrels" or s.zscores is not None:  # -Z needs z-scores for every measure
        return []
    asked = {label for r in _requests(measures, rel_format=s.rel_format, compat=s.compat) for label in r.labels}
    return [name for name in JUDGED_COUNTS if name not in asked]


def _count_judged(results: Results, hidden: list[str]) -> None:
    """Set ``results.judged_retrieved`` and drop the counts that were not asked for."""
    import numpy as np

    cols = {c.label: c for c in results.columns if c.label in JUDGED_COUNTS and c.per_query is not None}
    if len(cols) == len(JUDGED_COUNTS):
        results.judged_retrieved = int(sum(np.nansum(np.asarray(c.per_query, dtype=np.float64)) for c in cols.values()))
    if hidden:
        results.columns = [c for c in results.columns if c.label not in hidden]


def _path(x: Any) -> str | None:
    """``x`` as a path string, or None when it is not a path (a DataFrame, read inputs)."""
    return os.fspath(x) if isinstance(x, (str, os.PathLike)) else None


def _evaluate(
    qrels: Any,
    run: Any,
    measures: Any,
    s: EvalSettings,
    progress: ProgressReport,
    stdin: BinaryIO | None,
    counts: Sequence[str] = (),
) -> Evaluation:
    requests = _requests(measures, rel_format=s.rel_format, compat=s.compat)
    if counts:
        requests += resolve(list(counts), rel_format=s.rel_format, compat=s.compat)
    need = [r.labels[0] for r in requests if r.measure.needs_subtopics]
    if need and s.subtopics is None:
        raise UsageError(f"measure '{need[0]}' needs subtopic judgements: give --subtopics FILE")
    fmt = TABLE_BUILDERS[s.rel_format]
    if (s.engine != "local" or s.labelled) and not fmt.is_qrels:
        raise UsageError(f"-R {s.rel_format}: --engine dask and --labelled read -R qrels judgements")
    if s.engine == "dask" and (_path(run) is None or _path(run) == "-"):
        raise UsageError("--engine dask reads the run from a file, a directory or a URL, not standard input")
    begun = _begin_stream(run, stdin, s, fmt, progress)
    try:
        return _evaluate_read(qrels, run, requests, s, fmt, progress, stdin, begun)
    finally:
        if begun is not None:
            begun.close()  # (the run not evaluated: an error in the judgements, or a usage error)


def _begin_stream(
    run: Any, stdin: BinaryIO | None, s: EvalSettings, fmt: TableBuilder, progress: ProgressReport
) -> Any:
    """A regular run file that will be streamed begins to be read and parsed now, beside its
    judgements (:class:`irevalcli.engine.stream.Begun`), when no one watches the reading:
    else None. (Not a pipe or FIFO named as a path: its spool's handles share one offset,
    read one at a time.)"""
    import stat

    path = _path(run)
    if path is None or path == "-" or s.labelled or getattr(progress, "watching", True):
        return None
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
    except (OSError, ValueError):
        return None  # (the error is the reading's, in its turn)
    if not _streams(RunInput(run, path, stdin, s, fmt, progress)):
        return None
    from .engine.stream import CHUNK_BYTES, Begun

    return Begun(path, chunk_bytes=s.chunk_bytes or CHUNK_BYTES, hash=s.hash_inputs, ranks=s.read_ranks)


def _evaluate_read(
    qrels: Any,
    run: Any,
    requests: list[Request],
    s: EvalSettings,
    fmt: TableBuilder,
    progress: ProgressReport,
    stdin: BinaryIO | None,
    begun: Any,
) -> Evaluation:
    q, run = _judgements(qrels, run, s, fmt, progress)
    if s.labelled and s.engine == "local":
        done = _labelled(q, run, requests, s, progress)
        if done is not None:
            return done
        run = run.run  # the general way: the run joined to its own judgements
    subtopics = None
    if s.subtopics is not None and fmt.is_qrels:
        from .io.subtopics import load_subtopics  # (only then: not on every run's start-up)

        subtopics = load_subtopics(s.subtopics, hash=s.hash_inputs)
    job = Job.of(
        q,
        requests,
        s.table,
        subtopics=subtopics,
        zscores=read_zscores(s.zscores) if s.zscores is not None and fmt.is_qrels else None,
    )
    given = RunInput(run, _path(run), stdin, s, fmt, progress, begun=begun)
    for engine in ENGINES:
        if engine.applies(given):
            done = engine.run(job, given)
            if done is not None:
                return done
    raise AssertionError("the whole engine takes every run")  # pragma: no cover


def _labelled(q: Qrels, got: Any, requests: Sequence[Request], s: EvalSettings, progress: ProgressReport) -> Any:
    """A labelled table (``got``: :class:`irevalcli.io.dataset.Labelled`) scored without
    joining its run to its own judgements (:mod:`irevalcli.core.labelled`), or None when that
    table is left to the general path (subtopics, ``-M``, ``-D``, ``--ties rank``, duplicates)."""
    if s.subtopics is not None:
        return None
    import numpy as np

    from .core.labelled import build_labelled_table
    from .engine.labelled import evaluate_labelled

    table = build_labelled_table(got.run, got.labels, got.has, s.table)
    if table is None:
        return None
    # the whole-qrels facts, from the table: its topics are every judged one (no -D here)
    job = Job(
        q,
        tuple(requests),
        s.table,
        None,
        read_zscores(s.zscores) if s.zscores is not None else None,
        num_qrels_topics=table.nq,
        num_rel_complete=int(np.count_nonzero(table.qrel > 0)),
        max_label=table.max_label or 0,
    )
    with progress.step("evaluating", None):
        results = evaluate_labelled(job, table)
    return Evaluation(results=results, qrels=q, run=got.run)


def _judgements(qrels: Any, run: Any, s: EvalSettings, fmt: TableBuilder, progress: ProgressReport) -> tuple[Any, Any]:
    """The judgements, read (None: a labelled table's, which the Dask engine reads on the
    cluster), and the run (a labelled table's rows, read with its judgements)."""
    if s.labelled and s.engine == "dask":
        return None, run
    if s.labelled:  # one table carrying its own judgements (and each row's label: see _labelled)
        from .io.dataset import read_labelled

        got = read_labelled(os.fspath(run), columns=s.columns, ranks=s.read_ranks)
        return got.qrels, got
    if s.engine == "dask":
        return load_qrels(qrels, fmt=s.qrels_format, columns=s.columns, hash=s.hash_inputs), run
    qpath = _path(qrels)
    if qpath is None:  # read already, or a DataFrame
        return fmt.load(qrels, s, None), run
    if fmt.is_qrels:
        with progress.reading("reading", qpath) as advance:
            return fmt.load(qrels, s, advance), run
    with progress.step("reading", qpath):
        return fmt.load(qrels, s, None), run


class RunInput(Record):
    """The run as the engines of :data:`ENGINES` are given it, and what an engine that
    declined it learnt for the next: the run is not grouped by topic; standard input, spooled
    from its first byte."""

    run: Any  # a path, a DataFrame or a read Run
    path: str | None  # the run's path (None: not a path)
    stdin: BinaryIO | None
    settings: EvalSettings
    builder: TableBuilder
    progress: ProgressReport
    not_grouped: bool
    spooled: BinaryIO | None
    begun: Any  # the run's stream begun beside its judgements (engine.stream.Begun), or None

    def __init__(  # noqa: PLR0913  the fields of a record
        self,
        run: Any,
        path: str | None,
        stdin: BinaryIO | None,
        settings: EvalSettings,
        builder: TableBuilder,
        progress: ProgressReport,
        not_grouped: bool = False,
        spooled: BinaryIO | None = None,
        begun: Any = None,
    ) -> None:
        self.run = run
        self.path = path
        self.stdin = stdin
        self.settings = settings
        self.builder = builder
        self.progress = progress
        self.not_grouped = not_grouped
        self.spooled = spooled
        self.begun = begun


class EngineChoice(FrozenRecord):
    """One way to evaluate a run: ``applies`` says whether it is to be tried, ``run`` evaluates
    the job, or returns None to leave the run to the next choice."""

    __slots__ = ("applies", "name", "run")

    name: str
    applies: Callable[[RunInput], bool]
    run: Callable[[Job, RunInput], Evaluation | None]

    def __init__(
        self, name: str, applies: Callable[[RunInput], bool], run: Callable[[Job, RunInput], Evaluation | None]
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "applies", applies)
        object.__setattr__(self, "run", run)


def _streams(given: RunInput) -> bool:
    """Whether the run is evaluated topic block by topic block (see ``stream`` in :func:`evaluate`)."""
    s, path = given.settings, given.path
    if given.begun is not None:
        return True  # (decided before it was begun: not asked again of a file being read)
    return (
        path is not None
        and s.engine == "local"
        and given.builder.is_qrels
        and s.only_query is None
        and s.run_format == "auto"
        and not _dataset(path)
        and should_stream(path, s.stream)
        and (path == "-" or streamable(path))
    )


def _on_dask(job: Job, given: RunInput) -> Evaluation:
    """``engine="dask"``: the qrels (and subtopics, z-scores) read here, the run on the cluster."""
    from .engine.dask_engine import evaluate_dask
    from .io.source import is_url, reread_safe

    assert given.path is not None
    local = given.path
    if not is_url(local) and not os.path.isdir(local) and not reread_safe(local):  # each worker opens it itself
        raise UsageError(
            f"--engine dask reads the run from a file, a directory or a URL, not a pipe or FIFO ({local}); "
            "save it to a file first"
        )
    ev = evaluate_dask(job, given.path, given.settings)
    return Evaluation(results=ev.results, qrels=ev.qrels, run=ev.run)


def _streamed(job: Job, given: RunInput) -> Evaluation | None:
    """Topic block by topic block, in bounded memory; None when the run is not grouped by topic."""
    from .engine import stream

    path = given.path
    assert path is not None
    try:
        with given.progress.reading("evaluating", path) as advance:
            results, sha = stream.evaluate_stream(
                job,
                path,
                chunk_bytes=given.settings.chunk_bytes or stream.CHUNK_BYTES,
                stdin=given.stdin,
                progress=advance,
                hash=given.settings.hash_inputs,
                ranks=given.settings.read_ranks,
                begun=given.begun,
            )
    except stream.NotGrouped as exc:
        # not grouped by topic (or, on standard input, not TREC text): standard input is
        # read again from its first byte, spooled while it was streamed
        given.not_grouped = True
        given.spooled = getattr(exc, "rest", None)
        return None
    return _streamed_evaluation(job, results, path, sha)


def _out_of_core(job: Job, given: RunInput) -> Evaluation | None:
    """A run not grouped by topic, partitioned by topic on disk; None when it fits
    ``memory_limit`` (then it is read whole)."""
    from .engine.spill import evaluate_out_of_core

    path = given.path
    assert path is not None
    with given.progress.step("evaluating", path):
        done = evaluate_out_of_core(
            job,
            path,
            spool=given.spooled,
            memory_limit=given.settings.memory_limit,
            chunk_bytes=given.settings.chunk_bytes,
            hash=given.settings.hash_inputs,
            ranks=given.settings.read_ranks,
        )
    return _streamed_evaluation(job, done[0], path, done[1]) if done is not None else None


def _streamed_evaluation(job: Job, results: Results, path: str, sha: str) -> Evaluation:
    info = Run.empty("<stdin>" if path == "-" else path, results.runid)
    info.sha256 = sha
    return Evaluation(results=results, qrels=job.qrels, run=info)


def _whole(job: Job, given: RunInput) -> Evaluation:
    """The run read whole, one table in memory."""
    s, path, run = given.settings, given.path, given.run
    fmt, cols, hashed, ranks = s.run_format, s.columns, s.hash_inputs, s.read_ranks
    if isinstance(run, ReadAhead):  # read by its thread meanwhile (its error, if any, raised here)
        r = run.result()
    elif given.spooled is not None:
        with given.spooled:
            r = load_run(run, stdin=given.spooled, fmt=fmt, columns=cols, hash=hashed, ranks=ranks)
    elif path is not None:
        with given.progress.reading("reading", path) as advance:
            r = load_run(run, stdin=given.stdin, fmt=fmt, columns=cols, progress=advance, hash=hashed, ranks=ranks)
    else:
        r = load_run(run, stdin=given.stdin, fmt=fmt, columns=cols, hash=hashed, ranks=ranks)
    q = job.qrels
    with given.progress.step("evaluating", path):
        try:
            table = given.builder.build(q, r, s.table, job.subtopics)
        except DuplicateDocError as exc:
            raise _relocated(exc, r, q) from None
        results = evaluate_table(job, table)
    return Evaluation(results=results, qrels=q, run=r)  # (q: Judgements for the -R formats)


class ReadAhead:
    """A run file read by a thread of its own (:func:`load_run`, as :func:`_whole` reads it)
    while the run before it is evaluated; :func:`evaluate` takes it in place of the path. Its
    error, if any, is raised where the file would have been read: by :meth:`result`."""

    def __init__(self, path: str, settings: EvalSettings) -> None:
        import contextvars
        import threading

        self.path = path
        self._run: Run | None = None
        self._error: BaseException | None = None
        # in the caller's context: its reading session (which records the files read) and its wording
        context = contextvars.copy_context()
        # not a daemon: a thread still inside Arrow's parser when the interpreter shuts down (the
        # judgements' error ended an API caller's or a test's call early) is waited for, not
        # killed mid-parse, which aborts the process (engine/stream.py's prefetch says more)
        self._thread = threading.Thread(target=context.run, args=(self._read, settings), daemon=False)
        self._thread.start()

    def _read(self, s: EvalSettings) -> None:
        try:
            self._run = load_run(self.path, fmt=s.run_format, columns=s.columns, hash=s.hash_inputs, ranks=s.read_ranks)
        except BaseException as exc:  # (raised by result(), in the evaluating thread)
            self._error = exc

    def result(self) -> Run:
        self._thread.join()
        if self._error is not None:
            raise self._error
        assert self._run is not None
        return self._run


def read_ahead(paths: Sequence[str], settings: EvalSettings) -> Callable[[int], Any]:
    """For a call that evaluates the runs ``paths`` one after another against the same
    judgements: ``take(i)`` is the ``i``-th run to give :func:`evaluate`, and starts reading
    the next one in a thread, so that it is parsed (by Arrow, mostly outside the GIL) while
    this one is ranked and scored. Only a regular file that would be read whole in the
    calling thread is read ahead (not a streamed, compressed or large run, standard input, a
    dataset, or on the Dask engine); any other is given as its path. The results, the errors
    and their order are the same: an error of a run read ahead is raised as it is evaluated.
    The first run is read by the first evaluation, after the judgements: read beside them,
    both parsers' buffers would be resident at once (a Robust04-size run: 134 -> 146-150 MiB
    at the peak, for no measured gain in time)."""
    ahead: dict[int, ReadAhead] = {}

    def take(i: int) -> Any:
        nxt = i + 1
        if nxt < len(paths) and _reads_whole(paths[nxt], settings):
            ahead[nxt] = ReadAhead(paths[nxt], settings)
        got = ahead.pop(i, None)
        return paths[i] if got is None else got

    return take


def _reads_whole(path: str, s: EvalSettings) -> bool:
    """Whether :func:`evaluate` reads the run file ``path`` whole, with :func:`_whole`."""
    import stat

    if s.engine != "local" or s.labelled or path == "-":
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # (a directory is a dataset)
            return False
    except (OSError, ValueError):
        return False
    if _dataset(path):
        return False
    return not _streams(RunInput(path, path, None, s, TABLE_BUILDERS[s.rel_format], NO_PROGRESS))


# Rows of a DataFrame run scored at a time (whole topics; a topic longer than this is one part).
# Measured on 2 cores (benchmarks/drivers/frames.py): the Robust04 run (249k rows) in parts of
# 32k-64k rows takes 0.6x the CPU time of one table of every row and half its memory above the
# DataFrames (128k: 0.8x; 256k: one table's); the 7M-line MS MARCO run is as fast from 64k to
# 512k rows (0.5x one table), and slower below (each part's fixed cost).
FRAME_PART_ROWS = 1 << 16


def _frame_parts_apply(given: RunInput) -> bool:
    """A DataFrame run with plain qrels, on the local engine, every topic evaluated: the cases
    a streamed file is evaluated in parts (``-D`` and the ``-R`` formats take the whole table)."""
    s = given.settings
    return (
        given.path is None
        and is_table(given.run)
        and s.engine == "local"
        and given.builder.is_qrels
        and s.only_query is None
    )


def _frame_parts(job: Job, given: RunInput) -> Evaluation | None:
    """A DataFrame run grouped by topic (each topic's rows together, as a run file lists
    them), scored in parts of whole topics of about :data:`FRAME_PART_ROWS` rows by the
    engine of streamed files (:mod:`irevalcli.engine.parts`): the same values, the same
    errors in the same order, at about half the time and a fraction of the memory of one
    table of every row. A run not grouped by topic is left to the whole table (None)."""
    import dataclasses
    import itertools

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from .core.table import runs_of
    from .engine.parts import Part, finish, score_part, whole_run_checks
    from .io.frames import one_array

    s = given.settings
    pool = pa.default_memory_pool()
    frame = as_frame(given.run)
    # ids as the column's chunks: each part joins its own rows' chunks only (no chunk
    # boundary inside it: no copy at all), not the whole column at once
    run = run_from_frame(given.run if frame is None else frame, columns=s.columns, ranks=s.read_ranks, chunked=True)
    lengths, topics = runs_of(run.qid)  # (a DataFrame run has rows: run_from_frame refuses none)
    topics = one_array(topics)
    if len(pc.unique(topics)) != len(topics):  # a topic in two blocks: one table of every row
        given.run = dataclasses.replace(run, qid=one_array(run.qid), docno=one_array(run.docno))
        return None
    ends = np.cumsum(lengths)
    # part k: the topics [cuts[k], cuts[k+1]), each part at least one topic
    cuts = [0]
    while cuts[-1] < len(lengths):
        lo = cuts[-1]
        base = int(ends[lo - 1]) if lo else 0
        cuts.append(max(int(np.searchsorted(ends, base + FRAME_PART_ROWS, side="right")), lo + 1))
    parts: list[Part] = []
    with given.progress.step("evaluating", None):
        for lo, hi in itertools.pairwise(cuts):
            first = int(ends[lo - 1]) if lo else 0
            part_topics = topics.slice(lo, hi - lo)
            rows = run.slice(first, int(ends[hi - 1]))
            rows = dataclasses.replace(rows, qid=one_array(rows.qid), docno=one_array(rows.docno))
            try:
                part = score_part(job, rows, run_blocks=(lengths[lo:hi], part_topics), topics=part_topics)
            except DuplicateDocError as exc:
                # the errors the whole table raises before this one (a missing topic, a
                # judgement given twice), else this one: the earliest line, as topics are in order
                whole_run_checks(job, topics, path=run.name, duplicate=exc)
                raise AssertionError("whole_run_checks raises the duplicate") from exc  # pragma: no cover
            if part is not None:
                parts.append(part)
            # the part's freed Arrow blocks go back at once: Arrow's default pool (mimalloc,
            # unless the process chose another) would keep them resident while the next part
            # allocates others, adding to the evaluation's peak
            pool.release_unused()
        results = finish(job, parts, topics, path=run.name, runid=run.runid)
    # the run as read: its qid and docno as the DataFrame's chunks (ChunkedArrays), not joined
    return Evaluation(results=results, qrels=job.qrels, run=run)


# The engines, tried in this order; the first that applies and does not decline evaluates the
# run. A new engine is one entry here (and its module under engine/, taking a Job).
ENGINES: tuple[EngineChoice, ...] = (
    EngineChoice("dask", lambda given: given.settings.engine == "dask", _on_dask),
    EngineChoice("streamed", _streams, _streamed),
    EngineChoice("out of core", lambda given: given.not_grouped, _out_of_core),
    EngineChoice("DataFrame in parts", _frame_parts_apply, _frame_parts),
    EngineChoice("whole", lambda given: True, _whole),
)


def _dataset(path: Any) -> bool:
    from .io.source import is_dataset

    return is_dataset(path)


def _relocated(exc: DuplicateDocError, run: Any, qrels: Any) -> DuplicateDocError:
    """A duplicate in a dataset (its rows numbered by order key) named by its file and line."""
    for inp in (run, qrels):
        if getattr(inp, "name", None) == exc.path and _dataset(exc.path):
            from .io.dataset import open_dataset, relocate

            return relocate(exc, open_dataset(exc.path, "run").names)
    return exc
