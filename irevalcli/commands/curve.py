"""``ireval curve``: the precision-recall curve as data (CSV or JSON).

- ``--points interpolated`` (default): each run's interpolated precision at recall
  levels (default trec_eval's 11, 0.0 to 1.0), exactly trec_eval's
  ``iprec_at_recall``, averaged over topics as trec_eval averages it (with ``-c``
  a judged topic without results counts 0); with ``-q`` each topic's curve too.
- ``--points all``: the uninterpolated curve: for every topic, one point per
  retrieved relevant document (rank, recall = relevant so far / R, precision =
  relevant so far / rank). Topics with R = 0 have no points.

Rows come in run order (as given), then topic id (bytewise, the summary ``all``
after the topics), then recall level or rank ascending. Values are full doubles
(Python's float repr); nothing is rounded. Text cells a spreadsheet would run as a
formula get a leading ``'``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..errors import UsageError
from ..output.cells import csv_text_cell
from ..output.files import format_for, no_short_output_option
from .completion import complete_path
from .options import complete_option, debug_option, rel_level_option, ties_option

if TYPE_CHECKING:
    import numpy as np

    from ..core.table import EvalTable
    from ..settings import EvalSettings

POINTS = ("interpolated", "all")
FORMATS = ("csv", "json")
DEFAULT_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
SUMMARY_QID = "all"


# ---------------------------------------------------------------- options


def parse_levels(text: str) -> tuple[float, ...]:
    """``".0,.1,...,1"`` -> ascending recall levels, each a number in [0, 1], none twice."""
    levels = []
    for item in text.split(","):
        try:
            x = float(item)
        except ValueError:
            raise UsageError(f"--recall-levels {text}: '{item}' is not a number") from None
        if not (0.0 <= x <= 1.0):  # also refuses nan
            raise UsageError(f"--recall-levels {text}: {item.strip()} is not between 0 and 1")
        levels.append(x)
    levels.sort()
    for a, b in itertools.pairwise(levels):
        if a == b:
            raise UsageError(f"--recall-levels {text}: level {a!r} is given twice")
    return tuple(levels)


# ---------------------------------------------------------------- curves


@dataclass
class InterpolatedCurve:
    """Interpolated precision at ``levels``: the mean over topics and each topic's values."""

    levels: tuple[float, ...]
    qids: list[str]
    per_topic: np.ndarray  # [level, topic]
    mean: np.ndarray  # [level]


@dataclass
class AllPoints:
    """The uninterpolated curve: one point per retrieved relevant document, in topic then rank order."""

    qids: list[str]
    topic: np.ndarray  # index into qids
    rank: np.ndarray
    recall: np.ndarray
    precision: np.ndarray


def interpolated_curve(t: EvalTable, levels: Sequence[float] = DEFAULT_LEVELS) -> InterpolatedCurve:
    """trec_eval's ``iprec_at_recall`` at ``levels`` (ascending) for every topic of ``t``, and
    its summary: the per-topic values added left to right in topic order, over the topic count."""
    import numpy as np

    from ..measures.precision import interpolated_points

    xs = tuple(float(x) for x in levels)
    values, _ = interpolated_points(t, xs)
    nq = t.nq
    if nq:
        total = np.cumsum(values, axis=1)[:, -1]  # sequential, as trec_eval's accumulator adds
        mean = total / nq
    else:
        mean = np.zeros(len(xs), dtype=np.float64)
    return InterpolatedCurve(levels=xs, qids=list(t.qids), per_topic=values, mean=mean)


def all_points(t: EvalTable) -> AllPoints:
    """(rank, rel_so_far / R, rel_so_far / rank) at each retrieved relevant document."""
    import numpy as np

    rows = np.flatnonzero(t.is_rel & (t.label >= 0) & (t.R[t.g] > 0))
    g = t.g[rows]
    rank = t.rank[rows]
    so_far = t.cum_rel[rows].astype(np.float64)
    return AllPoints(
        qids=list(t.qids),
        topic=g,
        rank=rank,
        recall=so_far / t.R[g].astype(np.float64),
        precision=so_far / rank.astype(np.float64),
    )


def build_curve_table(qrels: Any, run: Any, *, options: EvalSettings | None = None, **settings: Any) -> EvalTable:
    """The ranked table of one run (paths, DataFrames or loaded Qrels/Run), as evaluate() builds
    it with ``options`` (or settings named as keywords: ``complete``, ``rel_level``, ``ties``...)."""
    from ..api import load_qrels, load_run
    from ..core.table import build_table
    from ..settings import EvalSettings

    options = EvalSettings.given(options, settings, "build_curve_table()")
    hashed, ranks = options.hash_inputs, options.read_ranks
    q = load_qrels(qrels, fmt=options.qrels_format, columns=options.columns, hash=hashed)
    r = load_run(run, fmt=options.run_format, columns=options.columns, hash=hashed, ranks=ranks)
    return build_table(q, r, options.table, doc_dict=False)


# ---------------------------------------------------------------- output


def _floats(a: Any) -> list[str]:
    return list(map(repr, a.tolist()))


def _json_float(x: float) -> float | None:
    return x if math.isfinite(x) else None


def to_csv(curves: Sequence[tuple[str, Any]], *, per_query: bool) -> bytes:
    """``curves``: (run path, InterpolatedCurve or AllPoints) in output order."""
    import csv
    import io

    import numpy as np

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    is_all = bool(curves) and isinstance(curves[0][1], AllPoints)
    w.writerow(["run", "qid", "rank", "recall", "precision"] if is_all else ["run", "qid", "recall", "precision"])
    for name, c in curves:
        name = csv_text_cell(name)
        if isinstance(c, AllPoints):
            qid = [csv_text_cell(q) for q in np.asarray(c.qids, dtype=object)[c.topic].tolist()]
            w.writerows(zip([name] * len(qid), qid, map(str, c.rank.tolist()), _floats(c.recall), _floats(c.precision)))
            continue
        levels = [repr(x) for x in c.levels]
        if per_query and c.qids:
            nq, nl = len(c.qids), len(levels)
            qid = np.repeat(np.asarray([csv_text_cell(q) for q in c.qids], dtype=object), nl).tolist()
            w.writerows(zip([name] * (nq * nl), qid, levels * nq, _floats(c.per_topic.T.ravel())))
        w.writerows(zip([name] * len(levels), [SUMMARY_QID] * len(levels), levels, _floats(c.mean)))
    return buf.getvalue().encode("utf-8", "surrogateescape")


def to_json(curves: Sequence[tuple[str, str, Any]], *, per_query: bool) -> bytes:
    """``curves``: (run path, runid, InterpolatedCurve or AllPoints) in output order."""
    import json

    import numpy as np

    runs: list[dict[str, Any]] = []
    for name, runid, c in curves:
        if isinstance(c, AllPoints):
            ends = np.cumsum(np.bincount(c.topic, minlength=len(c.qids))).tolist()
            begins = [0, *ends[:-1]]
            pts = [
                {"rank": k, "recall": _json_float(r), "precision": _json_float(p)}
                for k, r, p in zip(c.rank.tolist(), c.recall.tolist(), c.precision.tolist())
            ]
            runs.append(
                {
                    "run": name,
                    "runid": runid,
                    "curve": None,
                    "per_query": {q: pts[b:e] for q, b, e in zip(c.qids, begins, ends)},
                }
            )
            continue
        mean = [{"recall": x, "precision": _json_float(p)} for x, p in zip(c.levels, c.mean.tolist())]
        pq: dict[str, Any] = {}
        if per_query:
            pq = {
                q: [{"recall": x, "precision": _json_float(p)} for x, p in zip(c.levels, col)]
                for q, col in zip(c.qids, c.per_topic.T.tolist())
            }
        runs.append({"run": name, "runid": runid, "curve": mean, "per_query": pq})
    text = json.dumps({"runs": runs}, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8", "surrogateescape")


# ---------------------------------------------------------------- command


CURVE_EPILOG = """\b
Examples:
  ireval curve qrels.txt bm25.txt dense.txt                 # 11-point curves, CSV
  ireval curve qrels.txt run.txt -q --recall-levels 0,.25,.5,.75,1
  ireval curve qrels.txt run.txt --points all --output pr.json   # json, from the name

\b
CSV columns: run, qid (all: the mean over topics), recall, precision; with
--points all: run, qid, rank, recall, precision. Values are full doubles.
"""


@click.command(
    "curve",
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=CURVE_EPILOG,
)
@click.argument("qrels", metavar="QRELS", shell_complete=complete_path)
@click.argument("runs", metavar="RUN...", nargs=-1, required=True, shell_complete=complete_path)
@click.option(
    "--points",
    type=click.Choice(POINTS),
    default="interpolated",
    show_default=True,
    help="interpolated: trec_eval's iprec_at_recall at the recall levels; all: one point per "
    "retrieved relevant document, per topic.",
)
@click.option(
    "--recall-levels",
    "levels_text",
    default=None,
    metavar="X,Y,...",
    help="Recall levels for --points interpolated (default .0,.1,...,1).",
)
@click.option("-q", "per_query", is_flag=True, help="Each topic's interpolated curve too (--points all is per topic).")
@rel_level_option()
@complete_option(help="Average over every judged topic; a topic with no results counts 0.")
@ties_option()
@click.option(
    "--format",
    "fmt",
    type=click.Choice(FORMATS),
    default=None,
    help="Output format: csv (default) or json; taken from the --output name when not given.",
)
@click.option(
    "--output",
    metavar="PATH",
    default=None,
    shell_complete=complete_path,
    help="Write to PATH (atomically) instead of standard output; never over an input.",
)
@no_short_output_option("ireval curve")
@debug_option
def curve_command(
    qrels: str,
    runs: tuple[str, ...],
    points: str,
    levels_text: str | None,
    per_query: bool,
    rel_level: int,
    complete: bool,
    fmt: str | None,
    output: str | None,
    debug: bool,
    ties: str = "docno",
) -> None:
    """The precision-recall curve of each RUN as data: interpolated (trec_eval's iprec_at_recall,
    mean over topics) or every point."""
    from ..api import load_qrels, load_run
    from ..io.tabular import expand_runs
    from ..output.files import check_not_input, check_output_path, is_stdout, write_output
    from ..settings import EvalSettings

    fmt = format_for(output, fmt, FORMATS, "csv", command="ireval curve")
    if levels_text is not None and points != "interpolated":
        raise UsageError("--recall-levels applies to --points interpolated only")
    levels = parse_levels(levels_text) if levels_text is not None else DEFAULT_LEVELS
    paths = expand_runs(runs)
    inputs = [qrels, *paths]
    if not is_stdout(output):
        check_output_path(output)  # type: ignore[arg-type]
        check_not_input(output, inputs)
    settings = EvalSettings.of(complete=complete, rel_level=rel_level, ties=ties)
    q = load_qrels(qrels, hash=settings.hash_inputs)  # a file or a dataset, as every command reads it
    curves = []
    for path in paths:
        r = load_run(path, hash=settings.hash_inputs, ranks=settings.read_ranks)
        t = build_curve_table(q, r, options=settings)
        c = all_points(t) if points == "all" else interpolated_curve(t, levels)
        curves.append((path, r.runid, c))
    if fmt == "json":
        data = to_json(curves, per_query=per_query)
    else:
        data = to_csv([(p, c) for p, _, c in curves], per_query=per_query)
    write_output(data, output, fmt or "csv", inputs=inputs)
