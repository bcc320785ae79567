"""Command line: trec_eval's options -> evaluate() -> formatter, and the entry point.

``main`` finds the command the arguments name (the eval command here, the others through
:mod:`.dispatch`) and runs it through :func:`.process.run`, which owns the exit statuses
(:class:`.process.ExitStatus`), signals, standard streams and memory. Heavy libraries
(numpy, pandas, pyarrow) are imported inside the command, so ``ireval --help`` stays fast.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import click

from ..errors import UsageError
from ..output.files import write_output
from ..records import FrozenRecord
from ..version import VERSION as __version__
from . import process
from .dispatch import SUBCOMMANDS, load_subcommand
from .options import Choice, CLong, Command, engine_options, input_format_options, measure_option, ties_option
from .process import ExitStatus, UsageLine, isatty, one_line, printable, say

if TYPE_CHECKING:
    from ..settings import EvalSettings


def _complete_first(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_first

    return complete_first(ctx, param, incomplete)


def _complete_path(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_path

    return complete_path(ctx, param, incomplete)


HELP_EPILOG = """\b
Examples:
  ireval qrels.txt run.txt                      # trec_eval's official measures
  ireval qrels.txt run.txt -m map -m ndcg_cut.10
  ireval -q -m all_trec qrels.txt run.txt.gz    # per-topic values too
  zcat run.gz | ireval qrels.txt - --format json --output scores.json
  ireval qrels.txt bm25.txt dense.txt -m map -m P.10 --format markdown
  ireval qrels.parquet 'runs/*.jsonl' --format latex --places 3
  ireval qrels.txt dev.tsv --run-format msmarco -m recip_rank
  ireval qrels.txt s3://bucket/run/ --engine dask --scheduler tcp://host:8786
  ireval --labelled impressions/ -m auc -m gauc --engine dask   # qid docno score rel

\b
Measures: trec_eval's names and parameters (P.5,10  iprec_at_recall..10,.5
ndcg.1=3,2=9  utility.2,-1,0,0  rbp.p=0.8) and nicknames (official, all_trec,
set). Output labels are accepted too (P_5, ndcg_cut_10), and so are lists in one -m
(-m 'ndcg_cut.10 map', -m 'AP nDCG@10').

\b
Other commands:
  ireval measures [NAME]            list the measures, or describe one
  ireval compare QRELS BASE RUN...  compare runs with paired significance tests
  ireval gate QRELS RUN ...         fail (exit 1) when a run's quality drops
  ireval pool RUN... --depth N      build a judgment pool from runs
  ireval plot pr|diff QRELS RUN...  precision-recall curves, per-topic differences
  ireval curve QRELS RUN...         precision-recall curve points as CSV or JSON
  ireval similarity RUN_A RUN_B     rank-biased overlap, Kendall's tau (no qrels)

\b
Shell completion (measure names too): eval "$(_IREVAL_COMPLETE=bash_source ireval)"
in ~/.bashrc; zsh_source for ~/.zshrc; fish: _IREVAL_COMPLETE=fish_source ireval | source

\b
Exit codes: 0 success; 2 usage or input error (one line on stderr naming the
file and line); 1 is reserved for a failed quality gate; 3 internal error.
"""


@click.command(
    cls=Command,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=HELP_EPILOG,
    no_args_is_help=False,
)
@click.argument("qrels", metavar="QRELS", shell_complete=_complete_first)
@click.argument("run", metavar="RUN", required=False, shell_complete=_complete_path)
@click.argument("more_runs", metavar="[RUN]...", nargs=-1, shell_complete=_complete_path)
@click.option("-q", "--query_eval_wanted", "per_query", count=True, help="Also print a value per topic.")
@measure_option("Measure or nickname to compute (repeatable, or several separated by blanks; default: official).")
@click.option(
    "-c",
    "--complete_rel_info_wanted",
    "complete",
    count=True,
    help="Score every judged topic; a topic with no results scores 0 and counts in the averages.",
)
@click.option(
    "-l",
    "--level_for_rel",
    "rel_level",
    type=CLong(),
    default=1,
    metavar="N",
    help="Relevant means a judgement >= N (default 1).",
)
@click.option("-n", "--nosummary", "nosummary", count=True, help="Print no summary (all) lines.")
@click.option(
    "-D",
    "--Debug_level",
    "debug_level",
    metavar="N[.QID]",
    help="Evaluate only topic QID (the debug level N is ignored).",
)
@click.option(
    "-J",
    "--Judged_docs_only",
    "judged_only",
    count=True,
    help="Drop unjudged documents from the ranking before scoring.",
)
@click.option(
    "-N",
    "--Number_docs_in_coll",
    "num_docs",
    type=CLong(),
    default=0,
    metavar="N",
    help="Collection size, used by utility (default 0).",
)
@click.option(
    "-M",
    "--Max_retrieved_per_topic",
    "max_docs",
    type=CLong(),
    default=None,
    metavar="N",
    help="Keep only the top N documents of each topic.",
)
@click.option(
    "-R",
    "--Rel_info_format",
    "rel_format",
    default="qrels",
    metavar="FORMAT",
    help="Judgement file format: qrels (default), qrels_jg, prefs, qrels_prefs.",
)
@click.option(
    "-T",
    "--Results_format",
    "results_format",
    default="trec_results",
    metavar="FORMAT",
    help="Run file format (trec_results).",
)
@click.option(
    "-Z",
    "--Zscore",
    "zscore_file",
    metavar="FILE",
    help="Print z-scores (v - mean) / stddev using FILE's 'qid measure mean stddev' lines.",
)
@click.option("-o", "--Output_old_results_format", "old_format", count=True, hidden=True)
@click.option(
    "--subtopics",
    "subtopics",
    metavar="FILE",
    help="Subtopic judgements 'qid subtopic docno rel' (as ndeval reads them) for the diversity "
    "measures (alpha_ndcg_cut, err_ia_cut, nrbp, map_ia, ...).",
)
@click.option(
    "--compat",
    type=click.Choice(["10.0", "9.0.8"]),
    default="10.0",
    show_default=True,
    help="trec_eval version to reproduce; 9.0.8 is the one inside pytrec_eval and Anserini.",
)
@ties_option()
@click.option("-v", "--version", "show_version", is_flag=True, help="Print the version and exit.")
@click.option(
    "--stream/--no-stream",
    "stream",
    default=None,
    help="Evaluate the run topic by topic in bounded memory (default: for run files of 32 MiB or more, compressed runs "
    "and standard input; a run not grouped by topic is then read whole).",
)
@click.option(
    "--memory-limit",
    "memory_limit",
    metavar="SIZE",
    default=None,
    help="Memory for a run that is not grouped by topic (512M, 2G, or bytes; default: a quarter of the "
    "machine's memory, between 64M and 256M): a larger one is partitioned by topic into temporary files "
    "under TMPDIR and evaluated part by part, with the same output.",
)
@click.option(
    "--format",
    "fmt",
    type=Choice(["trec", "json", "parquet", "csv", "markdown", "latex", "table"]),
    default=None,
    help="Output format: trec_eval's text (default), json, parquet, or a results table (runs as rows, "
    "measures as columns): csv, markdown, latex (best value in bold), table (for people). "
    "Without --format, the --output name's extension decides (.json .parquet .csv .md .tex).",
)
@click.option(
    "--places",
    type=click.IntRange(0, 17),
    default=None,
    metavar="N",
    help="Decimal places in csv, markdown, latex and table output (default: 4; csv: full precision).",
)
@input_format_options
@click.option(
    "--progress/--no-progress",
    "progress",
    default=None,
    help="Progress display on stderr (only ever on a terminal; default: for inputs of 64 MiB or more).",
)
@click.option(
    "--output", metavar="PATH", help="Write the output to PATH atomically (default: stdout); never over an input file."
)
@engine_options
@click.option(
    "--labelled",
    "labelled",
    is_flag=True,
    help="QRELS is one Parquet table (or dataset) carrying the label with each row: qid, docno, score, rel "
    "(an impression log); give no RUN. A row without a label is unjudged.",
)
@click.option(
    "--partitioned-by-topic",
    "partitioned",
    is_flag=True,
    help="--engine dask: no topic spans two files of the run dataset, so rows need no shuffle (a hive "
    "layout by the topic column, qid=.../, is detected without it).",
)
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
def eval_command(**kw: Any) -> None:
    """Evaluate TREC runs against relevance judgements, as trec_eval 10.0 does.

    QRELS is a judgement file (qid iter docno rel); RUN is a TREC run (qid iter
    docno rank score runid), or - to read it from standard input. Either may be
    gzip, bzip2, xz or zstd compressed, or TSV/CSV with a header, JSON Lines or
    Parquet (detected by content). With one run the output is byte-identical to
    trec_eval's; several runs (or a quoted glob such as 'runs/*.txt') are
    evaluated against one reading of QRELS, one block per run. A directory or a
    URL (file://, s3://, ...; a glob allowed) is one run (or qrels) in many
    Parquet or TREC files, hive partitioning understood (qid=301/...). QRELS may
    be an ir_datasets id (msmarco-passage/trec-dl-2019/judged; needs ir_datasets).
    """
    settings, out = eval_settings(**kw)
    qrels, runs = kw["qrels"], [kw["run"], *kw["more_runs"]]
    if settings.labelled:  # one table, its own judgements: QRELS names it
        if kw["run"] is not None:
            raise UsageError(
                "--labelled reads one table (qid, docno, score, rel) and no separate RUN: give only the table"
            )
        qrels, runs = None, [kw["qrels"]]
    elif kw["run"] is None:
        raise click.UsageError("Missing argument 'RUN'.")
    run_eval(qrels, runs, tuple(kw["measures"]), settings, out)


class OutputSettings(FrozenRecord):
    """How the eval command writes its results (what is evaluated is :class:`EvalSettings`)."""

    __slots__ = ("fmt", "path", "per_query", "places", "progress", "summary")

    fmt: str  # --format (decided with the --output name's extension)
    per_query: bool  # -q
    summary: bool  # not -n
    places: int | None  # --places
    path: str | None  # --output (None or "-": standard output)
    progress: bool | None  # --progress/--no-progress (None: automatic)

    def __init__(
        self,
        fmt: str = "trec",
        per_query: bool = False,
        summary: bool = True,
        places: int | None = None,
        path: str | None = None,
        progress: bool | None = None,
    ) -> None:
        object.__setattr__(self, "fmt", fmt)
        object.__setattr__(self, "per_query", per_query)
        object.__setattr__(self, "summary", summary)
        object.__setattr__(self, "places", places)
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "progress", progress)


def eval_settings(
    *,
    qrels: str,
    per_query: int,
    complete: int,
    rel_level: int,
    nosummary: int,
    debug_level: str | None,
    judged_only: int,
    num_docs: int,
    max_docs: int | None,
    rel_format: str,
    results_format: str,
    zscore_file: str | None,
    compat: str,
    stream: bool | None,
    fmt: str | None,
    output: str | None,
    subtopics: str | None = None,
    places: int | None = None,
    run_format: str = "auto",
    qrels_format: str = "auto",
    columns: tuple[str, ...] = (),
    progress: bool | None = None,
    ties: str = "docno",
    memory_limit: str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    labelled: bool = False,
    partitioned: bool = False,
    **_: Any,  # arguments, and options read before the command runs (-v, --debug, -o)
) -> tuple[EvalSettings, OutputSettings]:
    """The eval command's options as the settings of the evaluation and of its output,
    checked before any input is read."""
    from ..io.tabular import parse_column_map
    from ..output.files import format_for
    from ..output.formatters import OUTPUT_FORMATS, TABLE_FORMATS
    from ..settings import EvalSettings

    fmt = format_for(output, fmt, OUTPUT_FORMATS, "trec")
    assert fmt is not None
    if results_format != "trec_results":
        raise UsageError(f"-T {results_format}: unknown run format (known: trec_results)")
    only_query = None
    if debug_level is not None and "." in debug_level:
        only_query = debug_level.split(".", 1)[1]
    if qrels == "-":
        raise UsageError("QRELS cannot be read from standard input; only RUN can be '-'")
    if places is not None and fmt not in TABLE_FORMATS:
        raise UsageError(
            f"--places applies to csv, markdown, latex and table output, not {fmt} "
            "(trec prints trec_eval's 4 places; json and parquet keep full precision)"
        )
    settings = EvalSettings.of(
        complete=bool(complete),
        rel_level=rel_level,
        max_docs=max_docs,
        judged_only=bool(judged_only),
        num_docs=num_docs,
        only_query=only_query,
        compat=compat,
        ties=ties,
        rel_format=rel_format,
        zscores=zscore_file,
        subtopics=subtopics,
        run_format=run_format,
        qrels_format=qrels_format,
        columns=parse_column_map(columns),
        stream=stream,
        hash_inputs=fmt in ("json", "parquet"),  # only they record the inputs' SHA-256
        memory_limit=memory_limit,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        labelled=labelled,
        partitioned=partitioned,
    )
    out = OutputSettings(
        fmt=fmt,
        per_query=bool(per_query),
        summary=not nosummary,
        places=places,
        path=output,
        progress=progress,
    )
    return settings, out


def recorded_options(measures: Sequence[str], settings: EvalSettings, out: OutputSettings) -> dict[str, Any]:
    """The "options" JSON and Parquet output record (keys and their order are part of the output)."""
    t = settings.table
    options: dict[str, Any] = {
        "measures": list(measures),
        "per_query": out.per_query,
        "complete": t.complete,
        "rel_level": t.rel_level,
        "max_docs": t.max_docs,
        "judged_only": t.judged_only,
        "num_docs": t.num_docs,
        "only_query": t.only_query,
        "summary": out.summary,
        "rel_format": settings.rel_format,
        "zscores": settings.zscores,
        "subtopics": settings.subtopics,
        "ties": t.ties,
    }
    # recorded only when used, so the JSON of a plain run stays as it was
    formats = (("run_format", settings.run_format), ("qrels_format", settings.qrels_format))
    options.update({k: v for k, v in formats if v != "auto"})
    if settings.columns:
        options["columns"] = settings.columns
    return options


def run_eval(
    qrels: str | None, runs: Sequence[str], measures: tuple[str, ...], settings: EvalSettings, out: OutputSettings
) -> None:
    """Evaluate every run (paths; quoted globs expand) against one reading of ``qrels`` and
    write the output. Reading, streaming, hashing and progress are :func:`evaluate`'s."""
    from ..api import evaluate, read_ahead
    from ..io.tabular import expand_runs
    from ..output.files import check_not_input, check_output_path, is_stdout
    from ..output.formatters import RunResults, format_runs, format_trec_pieces
    from ..output.progress import Progress, wanted

    fmt = out.fmt
    run_paths = expand_runs(list(runs))
    inputs = [qrels, *run_paths, settings.zscores, settings.subtopics]
    if not is_stdout(out.path):  # refused before the inputs are read, not after
        check_output_path(out.path)  # type: ignore[arg-type]
        check_not_input(out.path, inputs)
    notes: list[str] = []  # said once the runs are evaluated: an error stays the only line
    if measures:
        from ..measures.names import repeated_parameters, split_specs

        # -m 'ndcg_cut.10 map': two measures; -m P.5 -m P.10: trec_eval's bytes keep the first
        # parameters only, and a note says so (the other formats compute them all)
        kept, repeated = repeated_parameters(split_specs(measures), keep="first" if fmt == "trec" else "all")
        measures = tuple(kept)
        if fmt == "trec":
            notes = [
                f"ireval: note: -m {r.ignored} ignored: trec_eval keeps the first parameters given "
                f"for a measure (-m {r.first}); write -m {r.merged}"
                for r in repeated
            ]
    measures = measures or ("official",)

    results: list[RunResults] = []
    first: Any = None
    engine_session: Any = contextlib.nullcontext()  # the local engine (settings checked it all)
    if settings.engine != "local":  # --engine dask: one cluster for every run
        from ..engine.dask_engine import session

        engine_session = session(settings.engine, settings.scheduler, settings.workers)

    with (
        Progress(wanted(out.progress, [p for p in (qrels, *run_paths) if p is not None])) as prog,
        engine_session,
    ):
        judgements: Any = qrels  # read by the first evaluation, once for every run
        # several runs: each read while the one before it is evaluated (not with progress bars,
        # which show each run being read)
        take = read_ahead(run_paths, settings) if len(run_paths) > 1 and not prog.enabled else run_paths.__getitem__
        for i, path in enumerate(run_paths):
            label = path if len(run_paths) == 1 else f"run {i + 1}/{len(run_paths)} {path}"
            ev = evaluate(judgements, take(i), measures, options=settings, progress=prog.naming(path, label))
            if ev.results.judged_retrieved == 0:  # every score is about nothing (issue 21)
                from ..api import nothing_judged

                say(f"ireval: warning: {ev.run.name}: {nothing_judged(ev.qrels.name)}")
            judgements = ev.qrels
            if first is None:
                first = (ev.qrels.name, ev.qrels.sha256, ev.run.name, ev.run.sha256, ev.results)
            # trec text keeps trec_eval's measure order; the other formats follow the order asked
            shown = ev.results if fmt == "trec" else ev.in_asked_order()
            results.append(RunResults(ev.run.name, ev.results.runid, ev.run.sha256, shown))
            del ev  # the run's rows are not needed any more
    for note in notes:
        say(note)
    qrels_name, qrels_sha, run_name, run_sha, first_results = first

    meta: dict[str, Any] = {
        "ireval": __version__,
        "compat": f"trec_eval {settings.compat}",
        "options": recorded_options(measures, settings, out),
        "inputs": {"qrels": {"path": qrels_name, "sha256": qrels_sha}},
    }
    if len(results) == 1:
        meta["inputs"]["run"] = {"path": run_name, "sha256": run_sha}
        meta["runid"] = first_results.runid
        meta["num_q"] = first_results.num_q
    terminal = fmt == "table" and out.path in (None, "-") and sys.stdout.isatty()
    data: bytes | Iterable[bytes]
    if fmt == "trec" and len(results) == 1:  # in pieces: a large -q output is never held whole
        data = format_trec_pieces(first_results, per_query=out.per_query, summary=out.summary)
    else:
        data = format_runs(
            fmt,
            results,
            per_query=out.per_query,
            summary=out.summary,
            meta=meta,
            places=out.places,
            terminal=terminal,
            width=_terminal_width() if terminal else None,
        )
    write_output(data, out.path, fmt, inputs=inputs)


def _terminal_width() -> int:
    import shutil  # (with bz2 and lzma: not on the path of a run's trec text)

    return shutil.get_terminal_size((80, 24)).columns


# message helpers, kept under their old names for the callers of this module
_one_line = one_line
_printable = printable
_isatty = isatty  # (a test stands in a terminal here)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("names", metavar="[NAME]...", nargs=-1)
@click.option(
    "--format",
    "fmt",
    type=Choice(["text", "markdown", "json"]),
    default="text",
    show_default=True,
    help="text: a listing (or each NAME described); markdown, json: the full reference (docs/measures.md).",
)
def measures_command(names: tuple[str, ...], fmt: str = "text") -> None:
    """List every measure (or describe each NAME): parameters, defaults, definition, reference."""
    from ..measures.reference import describe_names, listing, measures_reference

    if fmt != "text":
        if names:
            raise UsageError(f"--format {fmt} writes the whole reference; give no NAME (or drop --format)")
        click.echo(measures_reference(fmt), nl=False)
        return
    # on a terminal, lines wrap at its width (continuations indented); piped, one line each
    width = _terminal_width() if _isatty(sys.stdout) else None
    click.echo(describe_names(names, width) if names else listing(width), nl=False)


def _invoke(cmd: click.Command, args: list[str], prog_name: str) -> None:
    # Not cmd.main(): click's own handler turns a broken pipe into exit 1 (the
    # failed-gate code) and prints a blank line on Ctrl-C. Shell completion is
    # answered in entry(), only when a shell asks (completion.requested).
    from ..errors import IN_CLI
    from ..output.files import COMMAND_INPUTS, command_inputs

    token = IN_CLI.set(True)  # errors name the command line's options, not the API's
    try:
        with cmd.make_context(prog_name, args) as ctx:
            if _reads_stdin(cmd, ctx) and _isatty(sys.stdin):
                # otherwise a forgotten pipe looks like a hang
                say("ireval: reading the run from standard input (end with Ctrl-D)")
            # every write refuses these as outputs (plot, a group, passes its inputs itself)
            inputs = COMMAND_INPUTS.set(command_inputs(ctx.params))
            try:
                # every input that is not a regular file is read from its source once, and every
                # file read is known to the writers, which refuse to replace it (imported only
                # now: --help and a usage error end in make_context, without the byte source)
                from ..io.source import reading_session

                with reading_session():
                    cmd.invoke(ctx)
            finally:
                COMMAND_INPUTS.reset(inputs)
    finally:
        IN_CLI.reset(token)


def _reads_stdin(cmd: click.Command, ctx: click.Context) -> bool:
    """Whether a run argument (not QRELS, which cannot be read from standard input) is ``-``."""
    for p in cmd.params:
        if not isinstance(p, click.Argument) or p.name == "qrels":
            continue
        value = ctx.params.get(p.name or "")
        if isinstance(value, (tuple, list)):
            # gate's [QRELS] RUN: the last file is the run
            value = value[-1:] if p.name == "files" else value
            if "-" in value:
                return True
        elif value == "-":
            return True
    return False


def _command_suggestion(args: list[str]) -> str | None:
    """``ireval compar q r``: the first argument is no file but close to a subcommand's name."""
    if not args or args[0].startswith("-") or os.path.exists(args[0]):
        return None
    import difflib

    word = args[0]
    low = word.lower()
    hits = [name for name in SUBCOMMANDS if low == name or (len(low) >= 3 and name.startswith(low))]
    hits = hits or difflib.get_close_matches(low, list(SUBCOMMANDS), n=1, cutoff=0.7)
    if not hits:
        return None
    return f"'{word}' is neither a command nor a file; did you mean 'ireval {hits[0]}'?"


def main(argv: list[str] | None = None, *, own_process: bool = False) -> int:
    """Entry point: parse, run, and turn every error into one line and an exit code
    (:func:`.process.run`)."""
    args = list(sys.argv[1:] if argv is None else argv)
    return process.run(lambda: _main(args), args, own_process=own_process)


def _wants_version(args: list[str]) -> bool:
    """``-v``/``--version`` read as getopt reads it: bundled (``-qv``), but not as an option's
    value (``-m -v``, ``-mv``) nor after ``--``. Subcommands: only a bare ``-v``/``--version``."""
    if args and args[0] in SUBCOMMANDS:
        return any(a in ("-v", "--version") for a in args[1:])
    takes_value = {
        name
        for p in eval_command.params
        if isinstance(p, click.Option) and not p.is_flag and not p.count
        for name in p.opts
    }
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            return False
        if a.startswith("--"):
            if a == "--version":
                return True
            if "=" not in a and a in takes_value:
                i += 1  # its value
            continue
        if a.startswith("-") and len(a) > 1:
            for j, ch in enumerate(a[1:], start=1):
                if ch == "v":
                    return True
                if f"-{ch}" in takes_value:
                    if j == len(a) - 1:
                        i += 1  # the value is the next argument
                    break  # the rest of the bundle is the value
    return False


# Extensions that name an output, not a run: after -o they mean the user wanted --output.
_OUTPUT_LIKE = (".json", ".parquet", ".pq", ".csv", ".md", ".markdown", ".tex", ".png", ".svg", ".out", ".html")


def _check_o_slip(args: list[str]) -> None:
    """``ireval qrels run -o out.txt``: trec_eval's ``-o`` takes no value, so ``out.txt``
    would be read as a run (or the qrels). Refuse that when the word after ``-o`` cannot
    be meant as an input: it does not exist and is an extra file, or it is named like an
    output. ``-o`` before existing inputs (trec_eval's own usage) is left alone."""
    takes_value = {
        name
        for p in eval_command.params
        if isinstance(p, click.Option) and not p.is_flag and not p.count
        for name in p.opts
    }
    positional: list[str] = []
    after_o: list[tuple[str, int]] = []  # (word, its index among the positionals)
    previous_o = False
    i = 0
    while i < len(args):
        a = args[i]
        i += 1
        if a == "--":
            positional += args[i:]
            break
        if a.startswith("--") or (a.startswith("-") and len(a) > 1):
            previous_o = False
            if a.startswith("--"):
                if "=" not in a and a in takes_value:
                    i += 1
                continue
            for j, ch in enumerate(a[1:], start=1):
                if f"-{ch}" in takes_value:
                    if j == len(a) - 1:
                        i += 1
                    break
                if ch == "o" and j == len(a) - 1:
                    previous_o = True
            continue
        if previous_o:
            after_o.append((a, len(positional)))
        previous_o = False
        positional.append(a)
    for word, index in after_o:
        named_like_output = os.path.splitext(word)[1].lower() in _OUTPUT_LIKE
        missing = word != "-" and not os.path.lexists(word)
        if (missing and (len(positional) >= 3 or named_like_output)) or (named_like_output and index >= 2):
            raise UsageError(
                f"-o {word}: -o is trec_eval's ignored flag (old output format) and takes no value, "
                f"so {word} would be read as an input; to write the output to a file use --output {word}"
            )


def _main(args: list[str]) -> int:
    """The command the arguments name, run; click's own endings made ours."""
    try:
        if _wants_version(args):
            click.echo(f"ireval {__version__} (trec_eval 10.0 semantics)")
        elif args and args[0] in SUBCOMMANDS:
            _invoke(load_subcommand(args[0]), args[1:], f"ireval {args[0]}")
        else:
            slip = _command_suggestion(args)
            if slip is not None:
                raise click.UsageError(slip)
            _check_o_slip(args)
            _invoke(eval_command, args, "ireval")
        return ExitStatus.OK
    except click.exceptions.Exit as exc:  # --help
        return int(exc.exit_code or 0)
    except click.UsageError as exc:
        msg = exc.format_message()
        if ("Missing argument" in msg or "Got unexpected extra argument" in msg) and not (
            args and args[0] in SUBCOMMANDS
        ):
            msg = f"{one_line(msg).rstrip('.')}; usage: ireval [OPTIONS] QRELS RUN"
        help_cmd = f"ireval {args[0]} --help" if args and args[0] in SUBCOMMANDS else "ireval --help"
        raise UsageLine(f"{printable(one_line(msg))} (see '{help_cmd}')") from None


# Arrow's allocator for the ireval process (set before pyarrow is imported; a value the
# user sets wins): the C library's malloc. Arrow's default (mimalloc) kept 288 MiB resident
# for a Robust04-size run where malloc keeps 211 MiB (101 against 140 on a DL-size run), at
# 10% less CPU time (page faults of memory it gives back and takes again); a 7M-line run
# streams in the same time and memory with either. The API leaves the caller's choice alone.
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")
COMPLETE_VAR = "_IREVAL_COMPLETE"  # completion.COMPLETE_VAR: a shell asking for completions sets it

# The cyclic garbage collector's first generation for the ireval process: collected after
# 100,000 net new container objects instead of Python's 700. Start-up creates ~100k objects
# (modules, functions, classes) and next to no cyclic garbage, and the default threshold
# traversed them over and over: 3-6% of a small run's CPU time. Objects freed by reference
# counting do not count, so only live objects or real cycles can reach the threshold. The
# API leaves the caller's collector alone.
GC_THRESHOLD = (100_000, 10, 10)
# OpenBLAS (numpy's and scipy's BLAS) for the ireval process: one thread, set before numpy is
# imported (a value the user sets wins). Its worker threads spin waiting for work ireval never
# gives them (nothing on its paths is a large matrix product): `import numpy, pyarrow.csv,
# pyarrow.compute` took 0.20-0.24 s of CPU with them and 0.13-0.15 s without, same wall time,
# on the 2-core machine; on a busy machine the spinning competes with the evaluation.
BLAS_THREADS = ("OPENBLAS_NUM_THREADS", "1")


HELP_OR_VERSION = {"-h", "--help", "-v", "--version"}  # a first argument that needs no tuned malloc


def own_process(*, malloc: bool = True) -> None:
    """Set up a process that is ireval's own, before numpy and pyarrow are imported: the
    collector's threshold, Arrow's allocator, one BLAS thread, the C library's malloc tuned
    (``malloc``) and the light ``pyarrow.compute``. The ``ireval`` command, and the benchmark
    driver that times its parse alone (benchmarks/drivers/parse_alone.py)."""
    import gc

    gc.set_threshold(*GC_THRESHOLD)
    os.environ.setdefault(*ARROW_POOL)
    os.environ.setdefault(*BLAS_THREADS)
    from ..io import lightcompute

    if malloc:  # (ctypes: 3 ms, before the signal handlers)
        process.tune_malloc()
    lightcompute.install()  # the kernels without pyarrow.compute's 35 ms import (see there)


def entry() -> None:
    own_process(malloc=not set(sys.argv[1:2]) & HELP_OR_VERSION)
    if os.environ.get(COMPLETE_VAR):  # (completion.py and click's completion imported only then)
        from .completion import complete, requested

        instruction = requested(sys.argv[1:])
        if instruction is not None:  # a shell asks for completions (see completion.py)
            sys.exit(complete(instruction))
    process.exit_now(main(own_process=True))
