"""Command line: trec_eval's options -> evaluate() -> formatter.

The only module that prints or exits. Heavy libraries (numpy, pandas, pyarrow)
are imported inside the command, so ``ireval --help`` stays fast.

Exit codes (stable, documented in the README):
  0  success
  1  a quality gate failed (reserved for ``ireval gate``)
  2  usage, input or output error: bad option, unknown measure, malformed or missing
     file, --output that cannot be written
  3  internal error (a bug in ireval: please report it)
  129, 130, 143  hung up (SIGHUP), interrupted by SIGINT (Ctrl-C) or terminated by
     SIGTERM; no output file is left half-written, no temporary file is left behind
A reader that goes away (``| head``) is not an error: the output stops quietly and the
exit code is the command's own (a failed gate is still 1).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import click

from ..errors import IrevalError, OutputError, UsageError
from ..output.files import TERMINATING_SIGNALS, silence_broken_pipe, write_output
from ..version import VERSION as __version__
from .dispatch import SUBCOMMANDS, load_subcommand
from .options import Choice, CLong, engine_options, input_format_options, ties_option

if TYPE_CHECKING:
    from ..settings import EvalSettings

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


def _complete_first(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_first

    return complete_first(ctx, param, incomplete)


def _complete_path(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_path

    return complete_path(ctx, param, incomplete)


def _complete_measure(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_measure

    return complete_measure(ctx, param, incomplete)


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
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=HELP_EPILOG,
    no_args_is_help=False,
)
@click.argument("qrels", metavar="QRELS", shell_complete=_complete_first)
@click.argument("run", metavar="RUN", required=False, shell_complete=_complete_path)
@click.argument("more_runs", metavar="[RUN]...", nargs=-1, shell_complete=_complete_path)
@click.option("-q", "--query_eval_wanted", "per_query", count=True, help="Also print a value per topic.")
@click.option(
    "-m",
    "--measure",
    "measures",
    multiple=True,
    metavar="NAME[.PARAMS]",
    shell_complete=_complete_measure,
    help="Measure or nickname to compute (repeatable, or several separated by blanks; default: official).",
)
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


@dataclass(frozen=True)
class OutputSettings:
    """How the eval command writes its results (what is evaluated is :class:`EvalSettings`)."""

    fmt: str = "trec"  # --format (decided with the --output name's extension)
    per_query: bool = False  # -q
    summary: bool = True  # not -n
    places: int | None = None  # --places
    path: str | None = None  # --output (None or "-": standard output)
    progress: bool | None = None  # --progress/--no-progress (None: automatic)


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
    from ..api import evaluate
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
    if measures:
        from ..measures.names import merge_repeated_cutoffs, split_specs

        measures = tuple(split_specs(measures))  # -m 'ndcg_cut.10 map': two measures
        merged, repeated = merge_repeated_cutoffs(measures)
        if fmt == "trec":  # trec_eval's bytes: the first parameters only, and a note
            for kept, ignored, spec in repeated:
                _say(
                    f"ireval: note: -m {ignored} ignored: trec_eval keeps the first parameters given "
                    f"for a measure (-m {kept}); write -m {spec}"
                )
        else:
            measures = tuple(merged)
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
        for i, path in enumerate(run_paths):
            label = path if len(run_paths) == 1 else f"run {i + 1}/{len(run_paths)} {path}"
            ev = evaluate(judgements, path, measures, options=settings, progress=prog.naming(path, label))
            if ev.results.judged_retrieved == 0:  # every score is about nothing (issue 21)
                from ..api import nothing_judged

                _say(f"ireval: warning: {ev.run.name}: {nothing_judged(ev.qrels.name)}")
            judgements = ev.qrels
            if first is None:
                first = (ev.qrels.name, ev.qrels.sha256, ev.run.name, ev.run.sha256, ev.results)
            # trec text keeps trec_eval's measure order; the other formats follow the order asked
            shown = ev.results if fmt == "trec" else ev.in_asked_order()
            results.append(RunResults(ev.run.name, ev.results.runid, ev.run.sha256, shown))
            del ev  # the run's rows are not needed any more
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
            width=shutil.get_terminal_size((80, 24)).columns if terminal else None,
        )
    write_output(data, out.path, fmt, inputs=inputs)


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


# Characters shown escaped in messages: controls (an ESC could restyle the terminal),
# and invisible or direction-changing marks (a BOM, zero-width spaces, bidi overrides).
_INVISIBLE = frozenset(
    "\u00ad\u061c\u180e\u200b\u200c\u200d\u200e\u200f\u2028\u2029"
    "\u202a\u202b\u202c\u202d\u202e\u2060\u2066\u2067\u2068\u2069\ufeff"
)


def _printable(msg: str) -> str:
    """``msg`` as one line a terminal shows faithfully.

    Ids are bytes: an undecodable byte (kept as a surrogate escape) prints as ``\\xff``;
    control characters and invisible marks print as ``\\x1b``, ``\\n``, ``\\ufeff``.
    """
    out = []
    for ch in msg:
        o = ord(ch)
        if 0xDC80 <= o <= 0xDCFF:
            out.append(f"\\x{o - 0xDC00:02x}")
        elif ch in "\t\n\r":
            out.append({"\t": "\\t", "\n": "\\n", "\r": "\\r"}[ch])
        elif o < 0x20 or 0x7F <= o < 0xA0:
            out.append(f"\\x{o:02x}")
        elif ch in _INVISIBLE or 0xD800 <= o <= 0xDFFF:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


PARAM_KINDS = {
    "none": "no parameters",
    "long_cutoffs": "integer cutoffs",
    "double_cutoffs": "real cutoffs",
    "double_params": "real parameters",
    "pairs": "key=value pairs (ndcg family: level=gain; rbp: p=; ireval's: as described above)",
}
SUMMARIES = {
    "mean": "mean over topics",
    "sum": "sum over topics",
    "gmean": "geometric mean over topics",
    "nanmean": "mean over the topics that have a value",
    "wmean": "weighted mean over the topics that have a value",
    "judged_sum": "sum over topics",
    "topic_count": "count",
    "run_name": "text",
    "none": "per topic only",
}
# libraries whose spellings ireval accepts, in the order the reference lists them
LIBRARIES = ("trec_eval", "ir_measures", "ranx", "ireval", "tf-ranking", "elasticsearch")


def _params_text(meas: Any) -> str:
    params = PARAM_KINDS[meas.params]
    if meas.default:
        shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in meas.default)
        params += f", default {shown}"
    return params


def _trec_spellings(meas: Any) -> list[str]:
    """How -m reaches the measure in trec_eval's syntax: NAME, NAME.PARAMS and the label form."""
    if meas.params == "none":
        return [meas.name]
    many, one = {
        "long_cutoffs": ("k1,k2", "k"),
        "double_cutoffs": ("x1,x2", "x"),
        "double_params": ("a,b", "a,b"),
        "pairs": ("key=value,...", "key=value"),
    }[meas.params]
    return [meas.name, f"{meas.name}.{many}", f"{meas.name}_{one}"]


def measure_spellings(meas: Any) -> dict[str, list[str]]:
    """Every spelling -m accepts for the measure, by library (from the registry and alias tables)."""
    from ..measures.aliases import FAMILIES

    out: dict[str, list[str]] = {"trec_eval": _trec_spellings(meas)}
    for fam in FAMILIES.values():
        if meas.name in fam.roots:
            out.setdefault(fam.style, []).append(_family_form(fam))
    return {
        lib: out[lib] for lib in sorted(out, key=lambda s: LIBRARIES.index(s) if s in LIBRARIES else len(LIBRARIES))
    }


def _family_form(fam: Any) -> str:
    """A family's spelling with its argument and cutoff syntax: ``P(rel,judged_only)@k``."""
    if fam.style == "ranx":
        return f"{fam.name}.NN-lN" if fam.dotted else f"{fam.name}@k-lN"
    args = f"({','.join(fam.args)})" if fam.args else ""
    cut = {"optional": "[@k]", "required": "@k", "none": ""}[fam.cutoff]
    return f"{fam.name}{args}{cut}"


def measure_info(meas: Any) -> dict[str, Any]:
    """One measure's reference entry (text, markdown and JSON are made from it)."""
    return {
        "name": meas.name,
        "definition": meas.doc,
        "parameters": _params_text(meas),
        "summary": SUMMARIES[meas.agg],
        "judgements": sorted(meas.rel_formats),
        "citation": meas.citation,
        "spellings": measure_spellings(meas),
    }


def _describe(meas: Any) -> str:
    from ..measures.aliases import aliases_of

    info = measure_info(meas)
    lines = [f"{meas.name}: {meas.doc}", f"  parameters: {info['parameters']}", f"  summary: {info['summary']}"]
    if meas.citation:
        lines.append(f"  reference: {meas.citation}")
    also = aliases_of(meas.name)
    if also:
        lines.append(f"  also typed as: {', '.join(also)} ('ireval measures NAME' says which definition each gives)")
    fmts = ", ".join(sorted(meas.rel_formats))
    lines.append(f"  judgements: -R {fmts}")
    return "\n".join(lines)


def measures_reference(fmt: str) -> str:
    """Every measure, spelling family and nickname as markdown or JSON (docs/measures.md is the markdown)."""
    import json

    from ..measures.aliases import FAMILIES
    from ..measures.catalog import load
    from ..measures.registry import NICKNAMES

    registry = load()
    measures = [measure_info(m) for m in registry.values()]
    families: list[dict[str, Any]] = [
        {
            "spelling": _family_form(f),
            "name": f.name,
            "library": f.style,
            "also_spelled": list(f.synonyms),
            "maps_to": list(f.roots),
            "arguments": list(f.args),
            "cutoff": f.cutoff if f.style != "ranx" else "optional",
            "definition": f.definition,
        }
        for f in FAMILIES.values()
    ]
    if fmt == "json":
        doc = {"measures": measures, "spellings": families, "nicknames": {k: list(v) for k, v in NICKNAMES.items()}}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def code(items: list[str]) -> str:
        return ", ".join(f"`{x}`" for x in items)

    out = [
        "# Measures reference",
        "",
        "<!-- Generated by `ireval measures --format markdown` (make docs); do not edit by hand. -->",
        "",
        "Every measure ireval computes, with every spelling `-m` accepts for it, by library: trec_eval's",
        "(`NAME`, `NAME.PARAMS`, the output label `NAME_PARAM`), ir_measures', ranx's, ireval's own, TF-Ranking's",
        "and Elasticsearch's. The spelling decides the definition where the libraries differ (see",
        "[Friendly spellings](#friendly-spellings)); `ireval measures NAME` explains one spelling.",
        "",
        "## Measures",
        "",
    ]
    for info in measures:
        out += [f"### {info['name']}", "", info["definition"], ""]
        for lib, forms in info["spellings"].items():
            out.append(f"- {lib}: {code(forms)}")
        out.append(f"- parameters: {info['parameters']}")
        out.append(f"- summary: {info['summary']}")
        out.append(f"- judgements: {', '.join('-R ' + j for j in info['judgements'])}")
        if info["citation"]:
            out.append(f"- reference: {info['citation']}")
        out.append("")
    out += [
        "## Friendly spellings",
        "",
        "ranx spellings take `@k` (optional) and `-lN` (relevance level N); `rbp.NN` is persistence 0.NN.",
        "",
        "| Spelling | Library | Also spelled | Maps to | Definition |",
        "|---|---|---|---|---|",
    ]
    for f in families:
        out.append(
            f"| `{cell(f['spelling'])}` | {f['library']} | {code(f['also_spelled'])} | "
            f"{code(f['maps_to'])} | {cell(f['definition'])} |"
        )
    out += ["", "## Nicknames", "", "| Nickname | Measures |", "|---|---|"]
    for nick, members in NICKNAMES.items():
        out.append(f"| `{nick}` | {' '.join(members)} |")
    return "\n".join(out) + "\n"


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
    from ..measures.aliases import FAMILIES
    from ..measures.catalog import load
    from ..measures.registry import NICKNAMES

    if fmt != "text":
        if names:
            raise UsageError(f"--format {fmt} writes the whole reference; give no NAME (or drop --format)")
        click.echo(measures_reference(fmt), nl=False)
        return
    registry = load()
    # on a terminal, lines wrap at its width (continuations indented); piped, one line each
    width = shutil.get_terminal_size((80, 24)).columns if _isatty(sys.stdout) else None
    if not names:
        for meas in registry.values():
            click.echo(_entry(meas.name, meas.doc.split(". ")[0].rstrip("."), width))
        click.echo("")
        for nick, members in NICKNAMES.items():
            click.echo(_entry(nick, f"nickname: {' '.join(members)}", width))
        click.echo("")
        for fam in FAMILIES.values():
            click.echo(_entry(fam.name, f"{fam.style} syntax: {', '.join(fam.roots)}", width))
        return
    texts = [_describe_name(name, registry) for name in names]  # every name known before any is printed
    click.echo("\n\n".join(_wrap_lines(t, width) for t in texts))


def _entry(name: str, text: str, width: int | None) -> str:
    """One line of the measures listing: the name in 24 columns, then its text."""
    if width is None:
        return f"{name:<24}{text}"
    import textwrap

    return textwrap.fill(
        text,
        width=max(width, 40),
        initial_indent=f"{name:<24}",
        subsequent_indent=" " * 24,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _wrap_lines(text: str, width: int | None) -> str:
    """Each line wrapped at ``width``, its continuations indented two more than it."""
    if width is None:
        return text
    import textwrap

    out = []
    for line in text.split("\n"):
        lead = " " * (len(line) - len(line.lstrip(" ")))
        out.append(
            textwrap.fill(
                line.strip(" "),
                width=max(width, 40),
                initial_indent=lead,
                subsequent_indent=lead + "  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
            or line
        )
    return "\n".join(out)


def _describe_name(name: str, registry: Any) -> str:
    """What ``ireval measures NAME`` prints for one name (a measure, nickname or spelling)."""
    from ..measures.aliases import describe
    from ..measures.names import RANX_RBP, label_form, suggest
    from ..measures.registry import NICKNAMES

    root = name.split(".", 1)[0]
    if root in NICKNAMES:
        return f"{root}: nickname for {' '.join(NICKNAMES[root])}"
    if root in registry and not RANX_RBP.match(name):
        return _describe(registry[root])
    label = label_form(name, registry)
    if label is not None:
        return _describe(label[0])
    text = describe(name)
    if text is None:
        from ..errors import UnknownMeasureError

        raise UnknownMeasureError(f"unknown measure '{name}'{suggest(root, registry)}")
    return text


class _Terminated(BaseException):
    """SIGTERM or SIGHUP, raised so that ``finally`` blocks (temporary files) run."""


# Signals received during this main() call. An exception raised on the way out of an
# interrupted import (pandas, loaded lazily by pyarrow, turns KeyboardInterrupt into an
# AttributeError) is then reported as the interruption, not as an internal error.
_SIGNALLED: list[int] = []


def _on_signal(signum: int, frame: Any) -> None:
    import signal

    _SIGNALLED.append(signum)
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise _Terminated()


def _signal_outcome() -> int | None:
    """Exit code (after printing the line) if a signal arrived, else None."""
    import signal

    if not _SIGNALLED:
        return None
    if _SIGNALLED[0] == signal.SIGINT:
        _say(("\n" if _isatty(sys.stderr) else "") + "ireval: interrupted")
        return 130
    if _SIGNALLED[0] == getattr(signal, "SIGHUP", None):
        _say("ireval: hung up (SIGHUP)")
        return 129
    _say("ireval: terminated")
    return 143


def _install_signal_handlers() -> list[tuple[int, Any]]:
    """Our SIGINT/SIGTERM/SIGHUP handlers, where Python's defaults are in place (main thread only);
    a signal the caller ignores (``nohup``) stays ignored."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return []
    saved: list[tuple[int, Any]] = []
    for sig in TERMINATING_SIGNALS():
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        try:
            if signal.getsignal(sig) is default:
                saved.append((sig, signal.signal(sig, _on_signal)))
        except (ValueError, OSError):
            pass
    return saved


def _say(line: str) -> None:
    """One line on stderr; if stderr itself is gone there is no one to tell."""
    try:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass


class _ClosedStream:
    """Standard input or output that was closed when ireval started (``>&-``, ``<&-``): every
    use is the error a closed descriptor gives, so the command reports it and exits 2."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def buffer(self) -> _ClosedStream:
        return self

    def isatty(self) -> bool:
        return False

    def fileno(self) -> int:
        raise ValueError(f"standard {self.name} is closed")

    def flush(self) -> None:
        pass  # nothing was written (writing raised), and the interpreter flushes at exit

    def write(self, data: Any) -> int:
        raise OSError(errno.EBADF, "it is closed")

    def __getattr__(self, attr: str) -> Any:
        if self.name == "input":
            from ..errors import InputError

            raise InputError(
                "<stdin>", "cannot read standard input: it is closed (give the run as a file or pipe it in)"
            )
        raise OSError(errno.EBADF, "it is closed")


def _guard_standard_streams() -> None:
    """Give closed standard descriptors (0, 1, 2) a meaning that cannot change an exit code.

    Each closed one is pointed at /dev/null first, so no file ireval opens later (an
    output's temporary file) can take its number and receive what was meant for it.
    Then: a closed stdin or stdout is an error when used ('cannot read standard input',
    'cannot write to standard output': exit 2), a closed stderr silently takes the
    messages (there is no one to tell; the exit code still says what happened)."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "stderr")):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            devnull = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
            if devnull != fd:
                os.dup2(devnull, fd)
                os.close(devnull)
        except OSError:
            continue
        if getattr(sys, name) is None:
            if fd == 2:
                sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115  lives as long as the process
            else:
                setattr(sys, name, _ClosedStream("input" if fd == 0 else "output"))


def _invoke(cmd: click.Command, args: list[str], prog_name: str) -> None:
    # Not cmd.main(): click's own handler turns a broken pipe into exit 1 (the
    # failed-gate code) and prints a blank line on Ctrl-C. Shell completion is
    # answered in entry(), only when a shell asks (completion.requested).
    from ..errors import IN_CLI
    from ..io.source import reading_session
    from ..output.files import COMMAND_INPUTS, command_inputs

    token = IN_CLI.set(True)  # errors name the command line's options, not the API's
    try:
        with cmd.make_context(prog_name, args) as ctx:
            if _reads_stdin(cmd, ctx) and _isatty(sys.stdin):
                # otherwise a forgotten pipe looks like a hang
                _say("ireval: reading the run from standard input (end with Ctrl-D)")
            # every write refuses these as outputs (plot, a group, passes its inputs itself)
            inputs = COMMAND_INPUTS.set(command_inputs(ctx.params))
            try:
                # every input that is not a regular file is read from its source once, and every
                # file read is known to the writers, which refuse to replace it
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


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn every error into one line and an exit code."""
    import signal
    import warnings

    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    _guard_standard_streams()
    _SIGNALLED.clear()
    saved = _install_signal_handlers()
    try:
        with warnings.catch_warnings():
            if not debug:
                # numpy's floating-point warnings (inf - inf in a measure, say) would print
                # two lines of Python internals; trec_eval's C arithmetic is silent too.
                warnings.simplefilter("ignore")
            return _main(args, debug)
    finally:
        for sig, handler in saved:
            signal.signal(sig, handler)


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


def _main(args: list[str], debug: bool) -> int:
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
        _flush_stdout()
        return EXIT_OK
    except click.exceptions.Exit as exc:  # --help
        _flush_stdout()
        return int(exc.exit_code or 0)
    except click.UsageError as exc:
        msg = exc.format_message()
        if ("Missing argument" in msg or "Got unexpected extra argument" in msg) and not (
            args and args[0] in SUBCOMMANDS
        ):
            msg = f"{_one_line(msg).rstrip('.')}; usage: ireval [OPTIONS] QRELS RUN"
        help_cmd = f"ireval {args[0]} --help" if args and args[0] in SUBCOMMANDS else "ireval --help"
        _say(f"ireval: {_printable(_one_line(msg))} (see '{help_cmd}')")
        return EXIT_USAGE
    except (click.Abort, KeyboardInterrupt):
        if not _SIGNALLED:
            import signal

            _SIGNALLED.append(signal.SIGINT)
        return _signal_outcome() or 130
    except _Terminated:
        return _signal_outcome() or 143
    except IrevalError as exc:
        if _SIGNALLED:
            return _signal_outcome() or EXIT_INTERNAL
        if debug:
            import traceback

            traceback.print_exc()
        _say(f"ireval: {_printable(str(exc))}")
        return exc.exit_code
    except BrokenPipeError:
        silence_broken_pipe()
        return _signal_outcome() or EXIT_OK
    except MemoryError:
        _say("ireval: out of memory")
        return EXIT_USAGE
    except OSError as exc:
        if _SIGNALLED:
            return _signal_outcome() or EXIT_INTERNAL
        if exc.errno in _WRITE_ERRNOS:  # click.echo to a full stdout (--help, 'ireval measures')
            silence_broken_pipe()
            _say(f"ireval: cannot write to standard output: {exc.strerror}")
            return EXIT_USAGE
        if exc.errno == errno.EBADF and isinstance(sys.stdout, _ClosedStream):  # click.echo, stdout closed
            _say("ireval: cannot write to standard output: it is closed")
            return EXIT_USAGE
        return _internal(exc, debug)
    except Exception as exc:
        return _signal_outcome() or _internal(exc, debug)


_WRITE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO})


def _internal(exc: BaseException, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    _say(
        f"ireval: internal error: {type(exc).__name__}: {_printable(_one_line(str(exc)))} "
        "(please report it; --debug shows the traceback)"
    )
    return EXIT_INTERNAL


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def _flush_stdout() -> None:
    """Flush text written with click.echo now, so that a broken pipe or a full disk is
    handled here and not reported by the interpreter at exit."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        silence_broken_pipe()
    except OSError as exc:
        silence_broken_pipe()
        raise OutputError(f"cannot write to standard output: {exc.strerror or exc}") from None


# Arrow's allocator for the ireval process (set before pyarrow is imported; a value the
# user sets wins): the C library's malloc. Arrow's default (mimalloc) kept 288 MiB resident
# for a Robust04-size run where malloc keeps 211 MiB (101 against 140 on a DL-size run), at
# 10% less CPU time (page faults of memory it gives back and takes again); a 7M-line run
# streams in the same time and memory with either. The API leaves the caller's choice alone.
ARROW_POOL = ("ARROW_DEFAULT_MEMORY_POOL", "system")


def entry() -> None:
    os.environ.setdefault(*ARROW_POOL)
    from .completion import requested

    instruction = requested(sys.argv[1:])
    if instruction is not None:  # a shell asks for completions (see completion.py)
        from .completion import complete

        sys.exit(complete(instruction))
    _exit(main())


def _exit(code: int) -> None:
    """Flush the standard streams and end the process now, without the interpreter's teardown.

    The exit code is decided and every line is written: what is left is the teardown of
    native libraries, where a thread pool (Arrow's readers, BLAS) still winding down can
    abort the process ("terminate called without an active exception", exit 134) after the
    error line was printed, turning exit 2 into a crash. Our own files are closed and
    renamed in ``finally`` blocks before this point; nothing registered with atexit matters.
    """
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:
            silence_broken_pipe()
        except (OSError, ValueError, AttributeError):
            pass
    os._exit(code)
