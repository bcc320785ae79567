"""``ireval similarity RUN_A RUN_B``: how alike two runs rank, topic by topic, without
judgements: rank-biased overlap and Kendall's tau over the top k
(:mod:`irevalcli.analysis.similarity` defines them)."""

from __future__ import annotations

from typing import Any

import click

from ..errors import UsageError
from ..output.files import no_short_output_option
from .completion import complete_path
from .options import Integer, debug_option, input_format_options, measure_option, output_option, ties_option

SIMILARITY_EPILOG = """\b
Examples:
  ireval similarity bm25.txt reranked.txt
  ireval similarity a.txt b.txt -m rbo.p=0.9 -m kendall_tau.k=10 -q
  ireval similarity a.txt b.txt -m 'rbo.p=0.98,depth=100 rbo_ext.p=0.8' --format json

\b
Measures (default: rbo kendall_tau):
  rbo[.p=P,depth=K]   rank-biased overlap (Webber, Moffat & Zobel 2010), persistence P in
                      (0, 1) (default 0.9), each list cut at K (default: whole): rbo_min (no
                      more overlap in the unseen tails), rbo_res (what the tails could add),
                      rbo_ext (the extrapolated point estimate). rbo_min, rbo_res, rbo_ext
                      alone give one of the three.
  kendall_tau[.k=K]   Kendall's tau-b over the union of the two top K (default 10), a
                      document missing from a list's top K tied after it, at K + 1 (Fagin,
                      Kumar & Sivakumar 2003); -nan for a union of one document.
Each run ranks its documents as ireval ranks them for evaluation (--ties). A topic in
only one run is an error unless --shared-topics; the summary is the mean over topics.
"""


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}, epilog=SIMILARITY_EPILOG
)
@click.argument("run_a", metavar="RUN_A", shell_complete=complete_path)
@click.argument("run_b", metavar="RUN_B", shell_complete=complete_path)
@measure_option(
    "rbo[.p=P,depth=K], rbo_min, rbo_res, rbo_ext, kendall_tau[.k=K] (repeatable, or several "
    "separated by blanks; default: rbo kendall_tau).",
    complete=False,
)
@click.option("-q", "per_query", is_flag=True, help="Also print a value per topic.")
@click.option(
    "--shared-topics",
    "shared",
    is_flag=True,
    help="Compare only the topics both runs have (a topic in one run only is otherwise an error); "
    "the ones left out are counted on stderr.",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["trec", "json", "parquet", "csv", "markdown", "latex", "table"]),
    default=None,
    help="Output format (default trec; without it, the --output name's extension decides).",
)
@output_option("Write to PATH atomically (default: stdout); never over an input.")
@click.option(
    "--places",
    type=Integer(min=0),
    default=None,
    metavar="N",
    help="Decimal places in csv, markdown, latex and table output (default: 4; csv: full precision).",
)
@input_format_options
@ties_option()
@no_short_output_option("ireval similarity")
@debug_option
def similarity_command(
    run_a: str,
    run_b: str,
    measures: tuple[str, ...],
    per_query: bool,
    shared: bool,
    fmt: str | None,
    output: str | None,
    places: int | None,
    run_format: str,
    qrels_format: str,
    columns: tuple[str, ...],
    debug: bool,
    ties: str = "docno",
) -> None:
    """How alike two runs rank, per topic and on average, without judgements: rank-biased
    overlap (with its residual and extrapolation) and Kendall's tau over the top k."""
    import sys

    from ..analysis.similarity import mean, parse_measures, rankings, similarity
    from ..engine.evaluate import Column, Results
    from ..io.tabular import parse_column_map, read_run_file
    from ..output.files import check_not_input, check_output_path, format_for, is_stdout, write_output
    from ..output.formatters import OUTPUT_FORMATS, TABLE_FORMATS, RunResults, format_runs
    from ..settings import EvalSettings
    from ..version import VERSION

    out_fmt = format_for(output, fmt, OUTPUT_FORMATS, "trec", command="ireval similarity")
    assert out_fmt is not None
    if places is not None and out_fmt not in TABLE_FORMATS:
        raise UsageError(f"--places applies to csv, markdown, latex and table output, not {out_fmt}")
    wanted = parse_measures(list(measures))  # checked before any file is read
    settings = EvalSettings.of(ties=ties, run_format=run_format, columns=parse_column_map(columns))
    inputs = [run_a, run_b]
    if not is_stdout(output):
        check_output_path(output)  # type: ignore[arg-type]
        check_not_input(output, inputs)
    if run_a == "-" and run_b == "-":
        raise UsageError("RUN_A and RUN_B cannot both be standard input")
    hashed, ranks = settings.hash_inputs, settings.read_ranks
    a = read_run_file(run_a, fmt=run_format, columns=settings.columns, hash=hashed, ranks=ranks)
    b = read_run_file(run_b, fmt=run_format, columns=settings.columns, hash=hashed, ranks=ranks)
    rk = rankings(a, b, settings.ties, shared_only=shared)
    only_a, only_b = rk.only
    if only_a or only_b:
        sys.stderr.write(
            f"ireval: note: {len(only_a) + len(only_b)} topic{'s' if len(only_a) + len(only_b) != 1 else ''} "
            f"in one run only left out ({len(only_a)} in {a.name}, {len(only_b)} in {b.name}); "
            f"{len(rk.qids)} compared\n"
        )
    if not rk.qids:
        raise UsageError(f"{a.name} and {b.name} have no topic in common: nothing to compare")
    cols = [
        Column(label, label.split("_p=")[0].split("_k=")[0], "float", values, mean(values))
        for label, values in similarity(rk, wanted)
    ]
    results = Results(rk.qids, cols, len(rk.qids), f"{a.runid} vs {b.runid}")
    meta: dict[str, Any] = {
        "ireval": VERSION,
        "command": "similarity",
        "options": {
            "measures": [m.spec for m in wanted],
            "ties": settings.ties,
            "shared_topics": shared,
            "per_query": per_query,
        },
        "inputs": {"run_a": {"path": a.name, "sha256": a.sha256}, "run_b": {"path": b.name, "sha256": b.sha256}},
        "runid": {"run_a": a.runid, "run_b": b.runid},
        "num_q": len(rk.qids),
        "left_out": {"run_a_only": only_a, "run_b_only": only_b},
    }
    pair = RunResults(f"{a.name} vs {b.name}", results.runid, "", results)
    try:  # the table format fits a terminal's width, and is plain text in a pipe
        terminal = out_fmt == "table" and is_stdout(output) and bool(sys.stdout.isatty())
    except (AttributeError, ValueError):
        terminal = False
    data = format_runs(out_fmt, [pair], per_query=per_query, summary=True, meta=meta, places=places, terminal=terminal)
    write_output(data, output, out_fmt, inputs=inputs)
