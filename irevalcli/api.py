"""The Python API: ``evaluate(qrels, run, measures, ...)``. The CLI is a client of it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, BinaryIO

from .engine import Results, evaluate_table
from .errors import InputError, UsageError
from .inputs import streamable
from .names import resolve
from .readers import Qrels, Run, read_zscores
from .stream import should_stream
from .subtopics import load_subtopics
from .table import EvalOptions, build_table

if TYPE_CHECKING:
    import pandas as pd


REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")
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


def _frame_to_binary(df: Any, col: str, what: str) -> Any:
    import pyarrow as pa

    if col not in df.columns:
        raise InputError(what, f"DataFrame has no '{col}' column (columns: {', '.join(map(str, df.columns))})")
    values = df[col].astype(str).tolist()
    return pa.array([v.encode("utf-8", "surrogateescape") for v in values], pa.large_binary())


def qrels_from_frame(df: Any, name: str = "<qrels DataFrame>") -> Qrels:
    """A qrels DataFrame with columns qid, docno, rel."""
    import numpy as np
    import pandas as pd

    if "rel" not in df.columns:
        raise InputError(name, "DataFrame has no 'rel' column")
    rel = pd.to_numeric(df["rel"], errors="coerce")
    bad = rel.isna() | (rel != np.floor(rel))
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(name, f"relevance label '{df['rel'].iloc[i]}' is not an integer", i + 1)
    return Qrels(
        name=name,
        sha256="",
        qid=_frame_to_binary(df, "qid", name),
        docno=_frame_to_binary(df, "docno", name),
        rel=rel.to_numpy(dtype=np.int64),
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
    )


def run_from_frame(df: Any, name: str = "<run DataFrame>", runid: str = "run") -> Run:
    """A run DataFrame with columns qid, docno, score (and optionally runid)."""
    import numpy as np
    import pandas as pd

    if "score" not in df.columns:
        raise InputError(name, "DataFrame has no 'score' column")
    score = pd.to_numeric(df["score"], errors="coerce")
    bad = score.isna()
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(name, f"score '{df['score'].iloc[i]}' is not a number", i + 1)
    if len(df) == 0:
        raise InputError(name, "the run has no results")
    if "runid" in df.columns:
        runid = str(df["runid"].iloc[-1])
    return Run(
        name=name,
        sha256="",
        qid=_frame_to_binary(df, "qid", name),
        docno=_frame_to_binary(df, "docno", name),
        score=score.to_numpy(dtype=np.float64),
        lineno=np.arange(1, len(df) + 1, dtype=np.int64),
        runid=runid,
    )


def load_qrels(qrels: Any, *, stdin: BinaryIO | None = None, fmt: str = "auto", columns: Any = None) -> Qrels:
    """A qrels path in any input format (``fmt``: auto, trec, tsv, csv, jsonl, parquet;
    ``columns``: role -> column name, e.g. ``{"qid": "query_id"}``), or a DataFrame."""
    if isinstance(qrels, Qrels):
        return qrels
    if isinstance(qrels, (str, os.PathLike)):
        from .inputs import read_qrels_file

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
        from .inputs import read_run_file

        return read_run_file(run, fmt=fmt, columns=columns, stdin=stdin)
    if hasattr(run, "columns"):
        return run_from_frame(run)
    raise UsageError(f"run must be a path or a DataFrame, not {type(run).__name__}")


def _hash_inputs_switch(func: Any) -> Any:
    """Set readers.HASH_INPUTS from the call's ``hash_inputs`` for the duration of the call."""
    import functools

    from .readers import hashing

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        with hashing(bool(kwargs.get("hash_inputs", True))):
            return func(*args, **kwargs)

    return wrapper


@_hash_inputs_switch
def evaluate(
    qrels: Any,
    run: Any,
    measures: Sequence[str] = ("official",),
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
    stream: bool | None = None,
    chunk_bytes: int | None = None,
    stdin: BinaryIO | None = None,
    subtopics: Any = None,
    hash_inputs: bool = True,
) -> Evaluation:
    """Evaluate ``run`` against ``qrels`` exactly as trec_eval 10.0 would.

    ``qrels`` and ``run`` are paths (``-`` reads the run from stdin; gzip is detected)
    or DataFrames (qrels: qid, docno, rel; run: qid, docno, score[, runid]).
    ``measures`` are trec_eval names (``map``, ``P.5,10``, ``ndcg_cut_10``, ``all_trec``).
    The keyword options are trec_eval's ``-c -l -M -J -N -D -R -Z``; ``compat="9.0.8"``
    reproduces trec_eval 9.0.8 (the version inside pytrec_eval) instead of 10.0.
    ``stream``: evaluate a run file topic block by topic block in bounded memory
    (default: automatically for files of 32 MiB or more and gzip/bzip2/xz files); a file that is not
    grouped by topic is then read whole. The results are identical either way.
    ``hash_inputs``: record each input file's SHA-256 (``Evaluation.qrels.sha256`` and
    ``.run.sha256``; empty when False, which saves reading time on large runs).
    ``subtopics``: subtopic judgements (``qid subtopic docno rel``; a path or a DataFrame with
    those columns) for alpha_ndcg_cut and err_ia_cut.
    Raises :class:`irevalcli.errors.IrevalError` subclasses with user-facing messages.
    """
    if max_docs is not None and max_docs < 0:
        raise UsageError(f"-M {max_docs}: the number of documents to keep cannot be negative")
    if rel_format not in REL_FORMATS:
        raise UsageError(f"-R {rel_format}: unknown judgement format (known: {', '.join(REL_FORMATS)})")
    if compat not in COMPAT_MODES:
        raise UsageError(f"--compat {compat}: unknown version (known: {', '.join(COMPAT_MODES)})")
    requests = resolve(list(measures), rel_format=rel_format, compat=compat)
    need = [r.labels[0] for r in requests if r.measure.extra.get("needs_subtopics")]
    if need and subtopics is None:
        raise UsageError(f"measure '{need[0]}' needs subtopic judgements: give --subtopics FILE")
    if rel_format != "qrels":
        from .relformats import evaluate_rel_format

        return evaluate_rel_format(
            rel_format, qrels, run, requests, complete=complete, max_docs=max_docs, only_query=only_query, stdin=stdin,
            rel_level=rel_level, judged_only=judged_only,
        )
    q = load_qrels(qrels)
    sub = load_subtopics(subtopics) if subtopics is not None else None
    z = read_zscores(zscores) if zscores is not None else None
    import numpy as np

    nqrels_topics = len(np.unique(_codes(q.qid)))
    num_rel_complete = int(np.count_nonzero(q.rel > 0))
    if only_query is None and should_stream(run, stream) and streamable(run):
        from .stream import CHUNK_BYTES, NotGrouped, evaluate_stream

        opts = EvalOptions(rel_level=rel_level, max_docs=max_docs, judged_only=judged_only, complete=complete,
                           num_docs=num_docs, compat=compat)
        try:
            results, sha = evaluate_stream(
                q, os.fspath(run), requests, opts, num_qrels_topics=nqrels_topics,
                num_rel_complete=num_rel_complete, zscores=z, chunk_bytes=chunk_bytes or CHUNK_BYTES, subtopics=sub,
            )
            info = Run.empty(os.fspath(run), results.runid)
            info.sha256 = sha
            return Evaluation(results=results, qrels=q, run=info)
        except NotGrouped:
            results = None  # not grouped by topic: read it whole below
    r = load_run(run, stdin=stdin)
    opts = EvalOptions(
        rel_level=rel_level,
        max_docs=max_docs,
        judged_only=judged_only,
        complete=complete,
        num_docs=num_docs,
        only_query=only_query,
        compat=compat,
    )
    table = build_table(q, r, opts, doc_dict=sub is not None)
    table.subtopics = sub
    results = evaluate_table(
        table,
        requests,
        num_qrels_topics=nqrels_topics,
        num_rel_complete=num_rel_complete,
        zscores=z,
    )
    return Evaluation(results=results, qrels=q, run=r)


def _codes(arr: Any) -> Any:
    from .arrowbridge import to_numpy

    return to_numpy(arr.dictionary_encode().indices)
