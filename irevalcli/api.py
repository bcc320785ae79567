"""The Python API: ``evaluate(qrels, run, measures, ...)``. The CLI is a client of it."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from .core.judged import build_jg_table, build_prefs_table
from .core.table import EvalOptions, build_table
from .engine.evaluate import Results, evaluate_table
from .engine.stream import should_stream
from .errors import DuplicateDocError, InputError, IrevalError, UsageError
from .io.frames import frame_column, frame_to_binary
from .io.judgements import load_judgements
from .io.subtopics import load_subtopics
from .io.tabular import streamable
from .io.trec import Qrels, Run, read_zscores
from .measures.names import Request, resolve

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class TableBuilder:
    """How one ``-R`` judgement format enters the one evaluation path of :func:`evaluate`:
    ``load`` reads the judgements (a path, a DataFrame or already read ones), ``build``
    ranks a run against them into the table the format's measures read
    (``build(judgements, run, opts, subtopics)``). ``is_qrels``: plain qrels, the only format
    with topic-block streaming, ``-Z`` z-scores and subtopic judgements."""

    load: Callable[[Any], Any]
    build: Callable[[Any, Run, EvalOptions, Any], Any]
    is_qrels: bool = False


def _qrels_table(q: Qrels, r: Run, opts: EvalOptions, sub: Any) -> Any:
    table = build_table(q, r, opts, doc_dict=sub is not None)
    table.subtopics = sub
    return table


def _judgements_builder(rel_format: str, build: Callable[[Any, Run, EvalOptions], Any]) -> TableBuilder:
    return TableBuilder(
        load=lambda rel: load_judgements(rel, rel_format), build=lambda j, r, opts, _: build(j, r, opts)
    )


TABLE_BUILDERS: dict[str, TableBuilder] = {
    "qrels": TableBuilder(load=lambda rel: load_qrels(rel), build=_qrels_table, is_qrels=True),
    "qrels_jg": _judgements_builder("qrels_jg", build_jg_table),
    "prefs": _judgements_builder("prefs", build_prefs_table),
    "qrels_prefs": _judgements_builder("qrels_prefs", build_prefs_table),
}
REL_FORMATS = tuple(TABLE_BUILDERS)
COMPAT_MODES = ("10.0", "9.0.8")


@dataclass
class Evaluation:
    """What :func:`evaluate` returns: the results plus the inputs' identities."""

    results: Results
    qrels: Qrels
    run: Run

    @property
    def per_query(self) -> pd.DataFrame:
        """Tidy per-topic values: columns qid, measure, value, text."""
        return self.results.per_query_frame()

    @property
    def summary(self) -> pd.DataFrame:
        """Summary values: columns measure, value, text."""
        return self.results.summary_frame()


def qrels_from_frame(df: Any, name: str = "<qrels DataFrame>") -> Qrels:
    """A qrels DataFrame with columns qid, docno, rel (or any header spelling a qrels file may
    use: query_id, doc_id, relevance, ...)."""
    import numpy as np

    qid_col = frame_column(df, "qid", name, "qrels")
    doc_col = frame_column(df, "docno", name, "qrels")
    rel_col = frame_column(df, "rel", name, "qrels")
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


def run_from_frame(df: Any, name: str = "<run DataFrame>", runid: str = "run") -> Run:
    """A run DataFrame with columns qid, docno, score (and optionally runid), or any header
    spelling a run file may use (query_id, doc_id, ...)."""
    import numpy as np
    import pandas as pd

    qid_col = frame_column(df, "qid", name, "run")
    doc_col = frame_column(df, "docno", name, "run")
    score_col = frame_column(df, "score", name, "run")
    if len(df) == 0:
        raise InputError(name, "the run DataFrame has no results")
    score = pd.to_numeric(df[score_col], errors="coerce")
    bad = score.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(name, f"score '{df[score_col].iloc[i]}' is not a number", i + 1)
    from .io.tabular import find_column

    runid_col = find_column("runid", [str(c) for c in df.columns], {})
    if runid_col is not None:
        runid = str(df[runid_col].iloc[-1])
    from .io.trec import READ_RANKS, check_rank_range, whole_column

    rank = None
    if READ_RANKS.get():  # --ties rank
        rank_col = find_column("rank", [str(c) for c in df.columns], {})
        if rank_col is None:
            raise InputError(
                name,
                f"the run DataFrame has no rank column, which ties='rank' orders by "
                f"(columns: {', '.join(str(c) for c in df.columns)})",
            )
        rank = whole_column(df[rank_col], name, "rank")
        check_rank_range(rank, np.arange(1, len(df) + 1), name)
    return Run(
        name=name,
        sha256="",
        qid=frame_to_binary(df, qid_col, name),
        docno=frame_to_binary(df, doc_col, name),
        score=score.to_numpy(dtype=np.float64),
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
        runid=runid,
        rank=rank,
    )


def load_qrels(qrels: Any, *, stdin: BinaryIO | None = None, fmt: str = "auto", columns: Any = None) -> Qrels:
    """A qrels path in any input format (``fmt``: auto, trec, tsv, csv, jsonl, parquet;
    ``columns``: role -> column name, e.g. ``{"qid": "query_id"}``), or a DataFrame."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        from .io.dataset import is_dataset, read_qrels_dataset
        from .io.tabular import read_qrels_file

        if is_dataset(qrels):  # a directory or URL: one qrels in many files
            return read_qrels_dataset(os.fspath(qrels), fmt=fmt, columns=columns)

        return read_qrels_file(qrels, fmt=fmt, columns=columns, stdin=stdin)
    if hasattr(qrels, "columns"):
        return qrels_from_frame(qrels)
    raise UsageError(f"qrels must be a path or a DataFrame, not {type(qrels).__name__}")


def load_run(run: Any, *, stdin: BinaryIO | None = None, fmt: str = "auto", columns: Any = None) -> Run:
    """A run path in any input format (``fmt``: auto, trec, msmarco, tsv, csv, jsonl, parquet;
    ``msmarco`` derives scores from ranks and is never detected), or a DataFrame."""
    if isinstance(run, Run):
        return run
    if isinstance(run, (str, os.PathLike)):
        from .io.dataset import is_dataset, read_run_dataset
        from .io.tabular import read_run_file

        if is_dataset(run):  # a directory or URL: one run in many files
            return read_run_dataset(os.fspath(run), fmt=fmt, columns=columns)

        return read_run_file(run, fmt=fmt, columns=columns, stdin=stdin)
    if hasattr(run, "columns"):
        return run_from_frame(run)
    raise UsageError(f"run must be a path or a DataFrame, not {type(run).__name__}")


def _hash_inputs_switch(func: Any) -> Any:
    """Set readers.HASH_INPUTS from the call's ``hash_inputs`` for the duration of the call."""
    import functools

    from .io.trec import hashing

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with hashing(bool(kwargs.get("hash_inputs", True))):
            return func(*args, **kwargs)

    return wrapper


# Command-line spellings in messages -> the API's parameter names (when not called by the CLI)
_API_NAMES = (
    (re.compile(r"\(use -c to "), "(use complete=True to "),
    (re.compile(r"^-M (-?[0-9]+):"), r"max_docs=\1:"),
    (re.compile(r"^-D: "), "only_query: "),
    (re.compile(r"^--compat ([^:]*):"), r"compat='\1':"),
    (re.compile(r"^--ties ([^: ]*)"), r"ties='\1'"),
    (re.compile(r"\(--compat 9\.0\.8\)"), "(compat='9.0.8')"),
    (re.compile(r"use -m ([A-Za-z_]+)"), r"use measures=['\1']"),
    (re.compile(r"-R ([A-Za-z_]+)"), r"rel_format='\1'"),
    (re.compile(r"give --subtopics FILE"), "give subtopics=PATH or a DataFrame"),
    (
        re.compile(r"did you mean '((?:-m [^ ']+ ?)+)'\? one measure per -m"),
        lambda m: "did you mean " + repr(m.group(1).replace("-m ", "").split()) + "? one name per list item",
    ),
)


def _api_names(func: Any) -> Any:
    """Re-word an error raised from a Python call so that it names the parameter to change
    (``complete=True``), not the command line's option (``-c``)."""
    import functools

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .errors import IN_CLI

        try:
            return func(*args, **kwargs)
        except IrevalError as exc:
            if IN_CLI.get():
                raise
            msg = str(exc)
            for pattern, repl in _API_NAMES:
                msg = pattern.sub(repl, msg)
            if msg != str(exc):
                exc.args = (msg,)
            raise

    return wrapper


def _measure_list(measures: Any) -> list[str]:
    """``"map"`` or ``["map", "P.5"]``: a single string is one measure (not its letters)."""
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
        return [r for group in measures for r in resolve(_measure_list(group), rel_format=rel_format, compat=compat)]
    return resolve(_measure_list(measures), rel_format=rel_format, compat=compat)


def _ranks_switch(func: Any) -> Any:
    """Run readers keep the rank column for the duration of a call with ``ties="rank"``."""
    import functools

    from .io.trec import reading_ranks

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with reading_ranks(kwargs.get("ties") == "rank"):
            return func(*args, **kwargs)

    return wrapper


@_api_names
@_hash_inputs_switch
@_ranks_switch
def evaluate(
    qrels: Any,
    run: Any,
    measures: str | Sequence[str] = ("official",),
    *,
    complete: bool = False,
    rel_level: int = 1,
    max_docs: int | None = None,
    judged_only: bool = False,
    num_docs: int = 0,
    only_query: str | None = None,
    rel_format: str = "qrels",
    compat: str = "10.0",
    zscores: str | os.PathLike[str] | None = None,
    ties: str = "docno",
    stream: bool | None = None,
    chunk_bytes: int | None = None,
    stdin: BinaryIO | None = None,
    subtopics: Any = None,
    hash_inputs: bool = True,
    engine: str = "local",
    labelled: bool = False,
    partitioned: bool = False,
    run_format: str = "auto",
    columns: Any = None,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` exactly as trec_eval 10.0 would.

    ``qrels`` and ``run`` are paths (``-`` reads the run from stdin; gzip is detected)
    or DataFrames (qrels: qid, docno, rel; run: qid, docno, score[, runid]).
    ``measures``: one trec_eval name or a list of them (``"map"``, ``["P.5,10", "ndcg_cut_10"]``,
    ``"all_trec"``). DataFrame columns are recognised by the same names as file headers
    (``query_id``, ``doc_id``, ``relevance``, ...); float ids that are whole numbers (a qid
    column read as 301.0) become integers ("301"), other floats are refused.
    The keyword options are trec_eval's ``-c -l -M -J -N -D -R -Z``; ``compat="9.0.8"``
    reproduces trec_eval 9.0.8 (the version inside pytrec_eval) instead of 10.0.
    ``ties``: how documents with equal scores are ordered, ``"docno"`` (descending; trec_eval's
    rule, in both versions) or ``"input"`` (their order in the run; ranx's and TF-Ranking's);
    ``"rank"`` orders by the run's rank column ascending instead of the score (equal ranks by
    score descending, then docno descending); the rank column must then hold whole numbers.
    ``stream``: evaluate a run file topic block by topic block in bounded memory
    (default: automatically for files of 32 MiB or more, gzip/bzip2/xz/zstd files and standard input);
    a run that is not grouped by topic is then read whole (standard input from a temporary
    spool of what was read). The results are identical either way.
    ``hash_inputs``: record each input file's SHA-256 (``Evaluation.qrels.sha256`` and
    ``.run.sha256``; empty when False, which saves reading time on large runs).
    ``subtopics``: subtopic judgements (``qid subtopic docno rel``; a path or a DataFrame with
    those columns) for the diversity measures (alpha_ndcg_cut, err_ia_cut, nrbp, map_ia, ...).
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
    if max_docs is not None and max_docs < 0:
        raise UsageError(f"-M {max_docs}: the number of documents to keep cannot be negative")
    if rel_format not in REL_FORMATS:
        raise UsageError(f"-R {rel_format}: unknown judgement format (known: {', '.join(REL_FORMATS)})")
    if compat not in COMPAT_MODES:
        raise UsageError(f"--compat {compat}: unknown version (known: {', '.join(COMPAT_MODES)})")
    from .core.table import TIE_RULES

    if ties not in TIE_RULES:
        raise UsageError(f"--ties {ties}: unknown tie rule (known: {', '.join(TIE_RULES)})")
    if ties != "docno" and rel_format != "qrels":
        raise UsageError(f"--ties {ties} applies to -R qrels judgements, not -R {rel_format}")
    requests = _requests(measures, rel_format=rel_format, compat=compat)
    need = [r.labels[0] for r in requests if r.measure.extra.get("needs_subtopics")]
    if need and subtopics is None:
        raise UsageError(f"measure '{need[0]}' needs subtopic judgements: give --subtopics FILE")
    fmt = TABLE_BUILDERS[rel_format]
    if engine != "local" or labelled:
        from .engine.dask_engine import check_engine_options

        check_engine_options(engine, None, None)
        if not fmt.is_qrels:
            raise UsageError(f"-R {rel_format}: --engine dask and --labelled read -R qrels judgements")
    if engine == "dask":  # the dask engine: one call
        opts = EvalOptions(
            rel_level=rel_level,
            max_docs=max_docs,
            judged_only=judged_only,
            complete=complete,
            num_docs=num_docs,
            only_query=only_query,
            compat=compat,
            ties=ties,
        )
        return _evaluate_on_dask(
            qrels,
            run,
            requests,
            opts,
            labelled=labelled,
            subtopics=subtopics,
            zscores=zscores,
            hash_inputs=hash_inputs,
            run_format=run_format,
            columns=columns,
            partitioned=partitioned,
        )
    if labelled:
        from .io.dataset import read_labelled_dataset

        q, run = read_labelled_dataset(os.fspath(run), columns=columns)
    else:
        q = fmt.load(qrels)
    sub = load_subtopics(subtopics) if subtopics is not None and fmt.is_qrels else None
    z = read_zscores(zscores) if zscores is not None and fmt.is_qrels else None
    import numpy as np

    nqrels_topics = len(np.unique(_codes(q.qid)))
    num_rel_complete = int(np.count_nonzero(q.rel > 0)) if fmt.is_qrels else 0
    spooled = None
    if (
        fmt.is_qrels
        and only_query is None
        and not _dataset(run)
        and should_stream(run, stream)
        and (os.fspath(run) == "-" or streamable(run))
    ):
        from .engine.stream import CHUNK_BYTES, NotGrouped, evaluate_stream

        opts = EvalOptions(
            rel_level=rel_level,
            max_docs=max_docs,
            judged_only=judged_only,
            complete=complete,
            num_docs=num_docs,
            compat=compat,
            ties=ties,
        )
        try:
            results, sha = evaluate_stream(
                q,
                os.fspath(run),
                requests,
                opts,
                num_qrels_topics=nqrels_topics,
                num_rel_complete=num_rel_complete,
                zscores=z,
                chunk_bytes=chunk_bytes or CHUNK_BYTES,
                subtopics=sub,
                stdin=stdin,
            )
            info = Run.empty("<stdin>" if os.fspath(run) == "-" else os.fspath(run), results.runid)
            info.sha256 = sha
            return Evaluation(results=results, qrels=q, run=info)
        except NotGrouped as exc:
            # not grouped by topic (or, on standard input, not TREC text): read it whole below;
            # standard input from its first byte again, spooled while it was streamed
            spooled = getattr(exc, "rest", None)
    if spooled is not None:
        with spooled:
            r = load_run(run, stdin=spooled)
    else:
        r = load_run(run, stdin=stdin, fmt=run_format, columns=columns)
    opts = EvalOptions(
        rel_level=rel_level,
        max_docs=max_docs,
        judged_only=judged_only,
        complete=complete,
        num_docs=num_docs,
        only_query=only_query,
        compat=compat,
        ties=ties,
    )
    try:
        table = fmt.build(q, r, opts, sub)
    except DuplicateDocError as exc:
        raise _relocated(exc, r, q) from None
    results = evaluate_table(
        table,
        requests,
        num_qrels_topics=nqrels_topics,
        num_rel_complete=num_rel_complete,
        zscores=z,
    )
    return Evaluation(results=results, qrels=q, run=r)  # (q: Judgements for the -R formats)


def _dataset(path: Any) -> bool:
    from .io.dataset import is_dataset

    return is_dataset(path)


def _relocated(exc: DuplicateDocError, run: Any, qrels: Any) -> DuplicateDocError:
    """A duplicate in a dataset (its rows numbered by order key) named by its file and line."""
    for inp in (run, qrels):
        if getattr(inp, "name", None) == exc.path and _dataset(exc.path):
            from .io.dataset import open_dataset, relocate

            return relocate(exc, open_dataset(exc.path, "run").names)
    return exc


def _evaluate_on_dask(
    qrels: Any,
    run: Any,
    requests: list[Request],
    opts: EvalOptions,
    *,
    labelled: bool,
    subtopics: Any,
    zscores: Any,
    hash_inputs: bool,
    run_format: str,
    columns: Any,
    partitioned: bool,
) -> Evaluation:
    """``engine="dask"``: the qrels (and subtopics, z-scores) read here, the run on the cluster."""
    import numpy as np

    from .engine.dask_engine import evaluate_dask
    from .io.tabular import parse_column_map
    from .io.trec import READ_RANKS

    if not isinstance(run, (str, os.PathLike)) or os.fspath(run) == "-":
        raise UsageError("--engine dask reads the run from a file, a directory or a URL, not standard input")
    q = None if labelled else load_qrels(qrels)
    sub = load_subtopics(subtopics) if subtopics is not None else None
    z = read_zscores(zscores) if zscores is not None else None
    ev = evaluate_dask(
        q,
        os.fspath(run),
        requests,
        opts,
        num_qrels_topics=len(np.unique(_codes(q.qid))) if q is not None else 0,
        num_rel_complete=int(np.count_nonzero(q.rel > 0)) if q is not None else 0,
        zscores=z,
        subtopics=sub,
        run_format=run_format,
        columns=parse_column_map(columns),
        ranks=READ_RANKS.get() or opts.ties == "rank",
        partitioned=partitioned,
        hashing=hash_inputs,
    )
    return Evaluation(results=ev.results, qrels=ev.qrels, run=ev.run)


def _codes(arr: Any) -> Any:
    from .io.arrow import to_numpy

    return to_numpy(arr.dictionary_encode().indices)
