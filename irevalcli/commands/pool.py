"""``ireval pool``: a judgment pool from runs, the TREC way.

For every run and topic, the top ``depth`` documents (ranked as trec_eval ranks
them: score descending, ties by docno descending, or by the --ties rule; only
--ties rank reads the rank column)
go into the pool; the pool is their union, each (topic, docno) once. With
``--qrels`` the pairs already judged are left out. The pool is written as a
qrels-shaped file for assessors, ``qid 0 docno LABEL``, sorted by topic and
then docno (bytewise), so no run's ranking shows through the order.

For each run it reports how many of its documents went into the pool and how
many of those no other run contributed (its unique contribution).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import click

from ..errors import OutputError, UsageError
from ..output.files import no_short_output_option
from .completion import complete_path
from .options import Integer, debug_option, input_format_options, ties_option

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Qrels, Run


@dataclass
class Contribution:
    """What one run put into the pool."""

    path: str
    runid: str
    topics: int  # topics the run has results for
    pooled: int  # its top-depth documents in the pool (judged ones excluded)
    unique: int  # of those, the ones no other run contributed
    judged: int  # its top-depth documents left out because they are judged already


@dataclass
class Pool:
    qid: pa.Array  # large_binary, sorted by (qid, docno)
    docno: pa.Array
    runs: list[Contribution]
    judged: int  # distinct (qid, docno) pairs left out because they are judged

    def __len__(self) -> int:
        return len(self.qid)

    @property
    def topics(self) -> int:
        import pyarrow.compute as pc

        return len(pc.unique(self.qid))


def build_pool(runs: Sequence[Run], depth: int, qrels: Qrels | None = None, ties: str = "docno") -> Pool:
    """The union of every run's top ``depth`` per topic, minus what ``qrels`` judges: sets of
    (topic, docno) keys (:mod:`irevalcli.core.pairs`), which sort as the pool is written."""
    import numpy as np

    from ..core.pairs import PairCodes, member, top_of_each_topic
    from ..core.table import distinct, refuse_repeated_documents

    if depth < 1:
        raise UsageError(f"--depth {depth}: must be at least 1")
    codes = PairCodes([*runs, *([qrels] if qrels is not None else [])])
    keys, owner, ntopics = [], [], []
    for i, run in enumerate(runs):
        refuse_repeated_documents(run, codes.key[i])  # a document twice would take two places
        top = codes.key[i][top_of_each_topic(codes.topic[i], run, depth, ties)]
        keys.append(top)
        owner.append(np.full(len(top), i, dtype=np.int64))
        ntopics.append(len(distinct(codes.topic[i])))
    key = np.concatenate(keys) if keys else np.zeros(0, dtype=np.int64)
    run_of = np.concatenate(owner) if owner else np.zeros(0, dtype=np.int64)
    judged_rows = member(key, codes.key[-1]) if qrels is not None else np.zeros(len(key), dtype=bool)
    # the fresh rows by (key, run): each run lists a key once, so a key's rows are its runs
    fresh_key, fresh_run = key[~judged_rows], run_of[~judged_rows]
    order = np.lexsort((fresh_run, fresh_key))
    fresh_key, fresh_run = fresh_key[order], fresh_run[order]
    starts = np.flatnonzero(np.concatenate(([True], fresh_key[1:] != fresh_key[:-1]))) if len(fresh_key) else order
    runs_per_key = np.diff(np.concatenate((starts, [len(fresh_key)])))
    pooled = np.bincount(fresh_run, minlength=len(runs))
    unique = np.bincount(fresh_run[starts[runs_per_key == 1]], minlength=len(runs))
    skipped = np.bincount(run_of[judged_rows], minlength=len(runs))
    contributions = [
        Contribution(run.name, run.runid, ntopics[i], int(pooled[i]), int(unique[i]), int(skipped[i]))
        for i, run in enumerate(runs)
    ]
    qid, docno = codes.ids(fresh_key[starts])
    return Pool(qid, docno, contributions, len(distinct(key[judged_rows])))


def pool_bytes(pool: Pool, label: str = "-1") -> bytes:
    """``qid 0 docno LABEL`` lines, built with Arrow (no Python loop over lines)."""
    import numpy as np
    import pyarrow.compute as pc

    if not len(pool):
        return b""
    from ..io.arrow import repeated_bytes
    from ..io.trec import space_lut

    for what, arr in (("topic", pool.qid), ("document", pool.docno)):
        offsets = np.frombuffer(arr.buffers()[1], dtype=np.int64)[arr.offset : arr.offset + len(arr) + 1]
        values = np.frombuffer(arr.buffers()[2], dtype=np.uint8)[int(offsets[0]) : int(offsets[-1])]
        ws = np.flatnonzero(np.take(space_lut(), values))
        if len(ws):
            i = int(np.searchsorted(offsets - offsets[0], ws[0], side="right")) - 1
            bad = arr[i].as_py().decode("utf-8", "surrogateescape")
            raise OutputError(
                f"cannot write the pool: {what} id '{bad}' contains whitespace, which a qrels file cannot hold"
            )
    n = len(pool)
    lines = pc.binary_join_element_wise(
        pool.qid,
        repeated_bytes(b"0", n),
        pool.docno,
        repeated_bytes(label.encode() + b"\n", n),
        repeated_bytes(b" ", n),
    )
    offsets = np.frombuffer(lines.buffers()[1], dtype=np.int64)[lines.offset : lines.offset + n + 1]
    data = lines.buffers()[2]
    return data.to_pybytes()[int(offsets[0]) : int(offsets[-1])]


def counts_text(pool: Pool, depth: int) -> str:
    """The per-run contribution report (stderr), as aligned plain text."""
    head = ("run", "runid", "topics", "pooled", "unique", "judged")
    from ..output.cells import one_line_cell

    # names are data: a control character in a path or runid is spelt out, never sent to the terminal
    rows = [
        (one_line_cell(c.path), one_line_cell(c.runid), str(c.topics), str(c.pooled), str(c.unique), str(c.judged))
        for c in pool.runs
    ]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(r: Sequence[str]) -> str:
        cells = [r[0].ljust(widths[0]), r[1].ljust(widths[1])] + [r[i].rjust(widths[i]) for i in range(2, len(r))]
        return "  ".join(cells).rstrip()

    judged = f", {pool.judged} already judged" if pool.judged else ""
    title = (
        f"pool: {len(pool)} documents to judge over {pool.topics} topics from {len(pool.runs)} "
        f"run{'s' if len(pool.runs) != 1 else ''} at depth {depth}{judged}"
    )
    return "\n".join([title, line(head), *(line(r) for r in rows)]) + "\n"


def counts_csv(pool: Pool) -> bytes:
    """The per-run counts as CSV; text cells a spreadsheet would run as a formula get a leading ``'``."""
    import csv
    import io

    from ..output.cells import csv_text_cell

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["run", "runid", "topics", "pooled", "unique", "judged"])
    for c in pool.runs:
        w.writerow([csv_text_cell(c.path), csv_text_cell(c.runid), c.topics, c.pooled, c.unique, c.judged])
    return buf.getvalue().encode("utf-8", "surrogateescape")


POOL_EPILOG = """\b
Examples:
  ireval pool runs/*.txt --depth 100 --output pool.qrels
  ireval pool a.txt b.txt --depth 20 --qrels judged.txt > to_judge.qrels
  ireval pool 'runs/*.jsonl' --depth 10 --counts contributions.csv

\b
The pool is 'qid 0 docno LABEL' per line (LABEL -1 unless --label), sorted by
topic and docno. The per-run counts go to stderr (--quiet hides them):
pooled = the run's documents in the pool, unique = those only it contributed,
judged = its top documents left out because --qrels judges them.
"""


@click.command(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=POOL_EPILOG)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_path)
@click.option(
    "--depth",
    "-k",
    type=Integer(),
    default=100,
    show_default=True,
    metavar="N",
    help="Documents taken from the top of each run's ranking for each topic.",
)
@click.option(
    "--qrels",
    metavar="FILE",
    shell_complete=complete_path,
    help="Existing judgements: pairs judged there are left out of the pool.",
)
@click.option(
    "--label",
    default="-1",
    show_default=True,
    metavar="TEXT",
    help="What the fourth column holds until an assessor fills it in.",
)
@click.option(
    "--output", metavar="PATH", help="Write the pool to PATH atomically (default: stdout); never over an input."
)
@click.option(
    "--counts",
    "counts_path",
    metavar="PATH",
    help="Also write the per-run counts to PATH as CSV (written with the pool, only if all succeeds).",
)
@input_format_options
@ties_option()
@click.option("--quiet", is_flag=True, help="Do not print the per-run counts on stderr.")
@no_short_output_option("ireval pool")
@debug_option
def pool_command(
    runs: tuple[str, ...],
    depth: int,
    qrels: str | None,
    label: str,
    output: str | None,
    counts_path: str | None,
    run_format: str,
    qrels_format: str,
    columns: tuple[str, ...],
    quiet: bool,
    debug: bool,
    ties: str = "docno",
) -> None:
    """Build a judgment pool: the union of each RUN's top N documents per topic."""
    from ..api import load_qrels, load_run
    from ..io.tabular import expand_runs, parse_column_map
    from ..output.files import check_not_input, check_output_path, is_stdout, write_files
    from ..settings import EvalSettings

    if depth < 1:
        raise UsageError(f"--depth {depth}: must be at least 1")
    if not label or any(ch.isspace() for ch in label):
        raise UsageError(f"--label '{label}': must be one word")
    if counts_path is not None and is_stdout(counts_path) and is_stdout(output):
        raise UsageError(
            f"--counts {counts_path}: standard output carries the pool; give --output PATH for it "
            "or a file name for --counts"
        )
    # how the inputs are read (the rank column for --ties rank): the settings evaluate() reads with
    settings = EvalSettings.of(
        ties=ties, run_format=run_format, qrels_format=qrels_format, columns=parse_column_map(columns)
    )
    cmap = settings.columns
    paths = expand_runs(runs)
    inputs = [*paths, qrels]
    for path, option in ((output, "--output"), (counts_path, "--counts")):
        if not is_stdout(path):  # refused before the runs are read, not after
            check_output_path(path, option=option)  # type: ignore[arg-type]
            check_not_input(path, inputs, option=option)
    hashed, ranks = settings.hash_inputs, settings.read_ranks
    q = load_qrels(qrels, fmt=qrels_format, columns=cmap, hash=hashed) if qrels else None  # a file or a dataset
    loaded = [load_run(p, fmt=run_format, columns=cmap, hash=hashed, ranks=ranks) for p in paths]
    pool = build_pool(loaded, depth, q, settings.ties)
    data = pool_bytes(pool, label)
    # every file only once everything is made (a failure above writes nothing), each atomically
    files = [
        (path, content, option)
        for path, content, option in (
            (output, data, "--output"),
            (counts_path, counts_csv(pool) if counts_path else b"", "--counts"),
        )
        if path is not None and not is_stdout(path)
    ]
    to_stdout = data if is_stdout(output) else counts_csv(pool) if counts_path and is_stdout(counts_path) else None
    write_files(files, inputs=inputs, stdout=None if to_stdout is None else (to_stdout, ""))
    if not quiet:
        sys.stderr.write(counts_text(pool, depth))
