"""Evaluation of a run split into disjoint sets of topics.

Topics are independent: a run can be cut into parts that each hold every line of
their topics (the blocks of a streamed file, the hash partitions of an unsorted
one, the partitions of a distributed dataset), each part ranked, labelled and
scored on its own by the core engine, and only the per-topic values kept. The
summary is then computed once over all topics in bytewise order, exactly as for
the whole run in memory, so every path gives the same bytes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.memo import once
from ..core.table import EvalOptions, EvalTable, build_table, missing_topic_error
from ..errors import NoQueriesError
from ..io.arrow import to_numpy
from ..io.trec import Qrels, Run
from .evaluate import Results, TopicColumn, compute_topics, concat_topics, summarize
from .job import Job

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

Part = tuple[list[str], list[TopicColumn]]  # a part's topics (any order) and their values


def part_options(opts: EvalOptions) -> EvalOptions:
    """The options a part is scored with: ``-c``'s missing topics are added once, by :func:`finish`."""
    return opts.replaced(complete=False)


def score_part(
    job: Job,
    run: Run,
    *,
    qrels: Qrels | None = None,
    run_blocks: tuple[np.ndarray, pa.Array] | None = None,
    topics: pa.Array | None = None,
) -> Part | None:
    """Score one part: ``run`` holds every line of its topics (``topics``: their ids,
    when known), scored with :func:`part_options`. ``qrels``: the part's own judgements
    (a labelled table's rows on a Dask worker) instead of the job's whole qrels. None when
    no topic of the part is judged or evaluated.
    """
    import pyarrow.compute as pc

    if qrels is None:
        qrels = job.qrels
    if topics is None:
        topics = pc.unique(run.qid)
    judged = to_numpy(pc.is_in(qrels.qid, value_set=topics))
    if not judged.any():
        return None
    table = build_table(
        qrels.take(judged),
        run,
        part_options(job.opts),
        doc_dict=job.subtopics is not None,
        run_blocks=run_blocks,
        run_order=run_blocks is not None,  # concat_topics puts the topics in order
    )
    table = whole_file_facts(table, job)
    if not table.nq:
        return None
    return table.qids, compute_topics(table, job.requests)


def finish(job: Job, parts: list[Part], seen: pa.Array, *, path: str, runid: str) -> Results:
    """The summary over every part; ``seen``: the ids of every topic the run has.

    Judged topics absent from the run are refused (trec_eval 10.0), or scored as
    placeholders under ``-c``; with ``--compat 9.0.8`` they are skipped.
    """
    import pyarrow.compute as pc

    absent = absent_topics(job, seen, path=path)
    if len(absent):
        qrels = job.qrels
        judged = to_numpy(pc.is_in(qrels.qid, value_set=absent))
        table = whole_file_facts(
            build_table(qrels.take(judged), Run.empty(path, runid), job.opts, doc_dict=job.subtopics is not None),
            job,
        )
        parts = [*parts, (table.qids, compute_topics(table, job.requests))]
    if not parts:
        raise NoQueriesError(f"{path}: the run shares no topic with {job.qrels.name}: nothing to evaluate")
    qids, columns = concat_topics(parts)
    return summarize(job, qids, columns, runid=runid)


def absent_topics(job: Job, seen: pa.Array, *, path: str) -> pa.Array:
    """The judged topics that have no results in the run (``seen``: the run's topic ids),
    in bytewise order, to be scored as placeholders under ``-c``; refused without it
    (trec_eval 10.0: the first of them is named); none with ``--compat 9.0.8``, which
    skips them. Callers that check duplicates before :func:`finish` call this first, as
    the whole run's table refuses a missing topic before a duplicate."""
    import pyarrow as pa
    import pyarrow.compute as pc

    qrels, opts = job.qrels, job.opts
    # (the same for every run of the judgements, and asked twice of each: see whole_run_checks)
    qtopics = once(qrels.qid, "unique_topics", lambda: pc.unique(qrels.qid.cast(pa.large_binary())))
    absent = qtopics.filter(pc.invert(pc.is_in(qtopics, value_set=seen.cast(pa.large_binary()))))
    if len(absent) and len(absent) == len(qtopics) and opts.only_query is None:  # with or without -c
        raise NoQueriesError(f"{path}: the run shares no topic with {qrels.name}: nothing to evaluate")
    if not len(absent) or opts.compat != "10.0":
        return absent.slice(0, 0)
    absent = absent.take(pc.sort_indices(absent))
    if not opts.complete:
        raise missing_topic_error(path, absent[0].as_py().decode("utf-8", "surrogateescape"), qrels.name)
    return absent


def whole_run_checks(job: Job, seen: pa.Array, *, path: str, duplicate: Exception | None = None) -> None:
    """The errors the whole run's table raises, in its order, for a run scored in parts
    (``seen``: the run's topic ids): a judged topic without results (:func:`absent_topics`),
    then a document judged twice among the evaluated topics' judgements (with ``--compat
    9.0.8`` only the topics with results are evaluated), then ``duplicate``: the part's
    error naming the earliest document retrieved twice, which the caller kept."""
    import pyarrow.compute as pc

    from ..core.table import check_qrels_duplicates

    absent_topics(job, seen, path=path)
    qrels = job.qrels
    check_qrels_duplicates(
        qrels if job.opts.compat == "10.0" else qrels.take(to_numpy(pc.is_in(qrels.qid, value_set=seen)))
    )
    if duplicate is not None:
        raise duplicate


def whole_file_facts(table: EvalTable, job: Job) -> EvalTable:
    """What a part's table cannot see: the highest label of the whole qrels, the subtopic judgements."""
    table.max_label = job.max_label
    table.subtopics = job.subtopics
    return table
