"""Command line: trec_eval's options -> evaluate() -> formatter.

The only module that prints or exits. Heavy libraries (numpy, pandas, pyarrow)
are imported inside the command, so ``ireval --help`` stays fast.

Exit codes (stable, documented in the README):
  0  success
  1  a quality gate failed (reserved for ``ireval gate``)
  2  usage or input error: bad option, unknown measure, malformed or missing file
  3  internal error (a bug in ireval: please report it)
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

import click

from . import __version__
from .errors import IrevalError, OutputError, UsageError

EXIT_OK = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERNAL = 3


class CLong(click.ParamType):
    """An integer read like C's atol: the leading integer, 0 if there is none."""

    name = "integer"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        import re

        m = re.match(r"\s*[+-]?[0-9]+", str(value))
        return int(m.group(0)) if m else 0


HELP_EPILOG = """\b
Examples:
  ireval qrels.txt run.txt                      # trec_eval's official measures
  ireval qrels.txt run.txt -m map -m ndcg_cut.10
  ireval -q -m all_trec qrels.txt run.txt.gz    # per-topic values too
  zcat run.gz | ireval qrels.txt - --format json --output scores.json

\b
Measures: trec_eval's names and parameters (P.5,10  iprec_at_recall..10,.5
ndcg.1=3,2=9  utility.2,-1,0,0  rbp.p=0.8) and nicknames (official, all_trec,
set). Output labels are accepted too (P_5, ndcg_cut_10).

\b
Other commands:
  ireval measures [NAME]            list the measures, or describe one
  ireval compare QRELS BASE RUN...  compare runs with paired significance tests
  ireval gate QRELS RUN ...         fail (exit 1) when a run's quality drops

\b
Exit codes: 0 success; 2 usage or input error (one line on stderr naming the
file and line); 1 is reserved for a failed quality gate; 3 internal error.
"""


def _write_output(data: bytes, output: str | None, fmt: str) -> None:
    if output is None or output == "-":
        if fmt == "parquet" and sys.stdout.isatty():
            raise UsageError("--format parquet writes binary data: give --output PATH or redirect stdout")
        sys.stdout.buffer.write(data)
        sys.stdout.buffer.flush()
        return
    write_atomic(output, data)


def write_atomic(path: str, data: bytes) -> None:
    """Write to a temporary file beside ``path``, then rename: all or nothing."""
    directory = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise OutputError(f"--output {path}: is a directory")
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=".ireval-", suffix=".tmp", dir=directory)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        tmp = None
    except FileNotFoundError:
        raise OutputError(f"--output {path}: the directory {directory} does not exist") from None
    except PermissionError:
        raise OutputError(f"--output {path}: permission denied") from None
    except OSError as exc:
        raise OutputError(f"--output {path}: cannot write ({exc.strerror or exc})") from None
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


@click.command(
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=HELP_EPILOG,
    no_args_is_help=False,
)
@click.argument("qrels", metavar="QRELS")
@click.argument("run", metavar="RUN")
@click.option("-q", "--query_eval_wanted", "per_query", count=True, help="Also print a value per topic.")
@click.option("-m", "--measure", "measures", multiple=True, metavar="NAME[.PARAMS]",
              help="Measure or nickname to compute (repeatable; default: official).")
@click.option("-c", "--complete_rel_info_wanted", "complete", count=True,
              help="Score every judged topic; a topic with no results scores 0 and counts in the averages.")
@click.option("-l", "--level_for_rel", "rel_level", type=CLong(), default=1, metavar="N",
              help="Relevant means a judgement >= N (default 1).")
@click.option("-n", "--nosummary", "nosummary", count=True, help="Print no summary (all) lines.")
@click.option("-D", "--Debug_level", "debug_level", metavar="N[.QID]",
              help="Evaluate only topic QID (the debug level N is ignored).")
@click.option("-J", "--Judged_docs_only", "judged_only", count=True,
              help="Drop unjudged documents from the ranking before scoring.")
@click.option("-N", "--Number_docs_in_coll", "num_docs", type=CLong(), default=0, metavar="N",
              help="Collection size, used by utility (default 0).")
@click.option("-M", "--Max_retrieved_per_topic", "max_docs", type=CLong(), default=None, metavar="N",
              help="Keep only the top N documents of each topic.")
@click.option("-R", "--Rel_info_format", "rel_format", default="qrels", metavar="FORMAT",
              help="Judgement file format: qrels (default), qrels_jg, prefs, qrels_prefs.")
@click.option("-T", "--Results_format", "results_format", default="trec_results", metavar="FORMAT",
              help="Run file format (trec_results).")
@click.option("-Z", "--Zscore", "zscore_file", metavar="FILE",
              help="Print z-scores (v - mean) / stddev using FILE's 'qid measure mean stddev' lines.")
@click.option("-o", "--Output_old_results_format", "old_format", count=True, hidden=True)
@click.option("--subtopics", "subtopics", metavar="FILE",
              help="Subtopic judgements 'qid subtopic docno rel' (as ndeval reads them) for alpha_ndcg_cut, err_ia_cut.")
@click.option("--compat", type=click.Choice(["10.0", "9.0.8"]), default="10.0", show_default=True,
              help="trec_eval version to reproduce; 9.0.8 is the one inside pytrec_eval and Anserini.")
@click.option("-v", "--version", "show_version", is_flag=True, help="Print the version and exit.")
@click.option("--stream/--no-stream", "stream", default=None,
              help="Evaluate the run topic by topic in bounded memory (default: for run files of 1 GiB or more; "
                   "a run not grouped by topic is then read whole).")
@click.option("--format", "fmt", type=click.Choice(["trec", "json", "parquet"]), default="trec",
              show_default=True, help="Output format.")
@click.option("--output", metavar="PATH", help="Write the output to PATH atomically (default: stdout).")
@click.option("--debug", is_flag=True, help="Show a traceback for errors.")
def eval_command(**kw: Any) -> None:
    """Evaluate a TREC run against relevance judgements, as trec_eval 10.0 does.

    QRELS is a judgement file (qid iter docno rel); RUN is a TREC run (qid iter
    docno rank score runid), or - to read it from standard input. Either may be
    gzip-compressed. Output is byte-identical to trec_eval's.
    """
    run_eval(**kw)


def run_eval(
    *,
    qrels: str,
    run: str,
    per_query: int,
    measures: tuple[str, ...],
    complete: int,
    rel_level: int,
    nosummary: int,
    debug_level: str | None,
    judged_only: int,
    num_docs: int,
    max_docs: int | None,
    rel_format: str,
    results_format: str,
    old_format: int,
    zscore_file: str | None,
    compat: str,
    stream: bool | None,
    show_version: bool,
    fmt: str,
    output: str | None,
    debug: bool,
    subtopics: str | None = None,
) -> None:
    from .api import evaluate

    if results_format != "trec_results":
        raise UsageError(f"-T {results_format}: unknown run format (known: trec_results)")
    only_query = None
    if debug_level is not None and "." in debug_level:
        only_query = debug_level.split(".", 1)[1]
    if qrels == "-":
        raise UsageError("QRELS cannot be read from standard input; only RUN can be '-'")

    ev = evaluate(
        qrels,
        run,
        measures or ("official",),
        complete=bool(complete),
        rel_level=rel_level,
        max_docs=max_docs,
        judged_only=bool(judged_only),
        num_docs=num_docs,
        only_query=only_query,
        rel_format=rel_format,
        compat=compat,
        zscores=zscore_file,
        stream=stream,
        subtopics=subtopics,
    )
    from .formatters import FORMATTERS

    meta = {
        "ireval": __version__,
        "compat": f"trec_eval {compat}",
        "options": {
            "measures": list(measures or ("official",)),
            "per_query": bool(per_query),
            "complete": bool(complete),
            "rel_level": rel_level,
            "max_docs": max_docs,
            "judged_only": bool(judged_only),
            "num_docs": num_docs,
            "only_query": only_query,
            "summary": not nosummary,
            "rel_format": rel_format,
            "zscores": zscore_file,
            "subtopics": subtopics,
        },
        "inputs": {
            "qrels": {"path": ev.qrels.name, "sha256": ev.qrels.sha256},
            "run": {"path": ev.run.name, "sha256": ev.run.sha256},
        },
        "runid": ev.results.runid,
        "num_q": ev.results.num_q,
    }
    data = FORMATTERS[fmt](ev.results, per_query=bool(per_query), summary=not nosummary, meta=meta)
    _write_output(data, output, fmt)


def _one_line(msg: str) -> str:
    return " ".join(str(msg).split())


def _describe(meas: Any) -> str:
    kinds = {
        "none": "no parameters",
        "long_cutoffs": "integer cutoffs",
        "double_cutoffs": "real cutoffs",
        "double_params": "real parameters",
        "pairs": "key=value pairs (ndcg family: level=gain; rbp: p=; ireval's: as described above)",
    }
    params = kinds[meas.params]
    if meas.default:
        shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in meas.default)
        params += f", default {shown}"
    agg = {
        "mean": "mean over topics",
        "sum": "sum over topics",
        "gmean": "geometric mean over topics",
        "nanmean": "mean over the topics that have a value",
        "wmean": "weighted mean over the topics that have a value",
        "num_rel": "sum over topics",
        "num_q": "count",
        "runid": "text",
        "none": "per topic only",
    }[meas.agg]
    from .aliases import aliases_of

    lines = [f"{meas.name}: {meas.doc}", f"  parameters: {params}", f"  summary: {agg}"]
    if meas.citation:
        lines.append(f"  reference: {meas.citation}")
    also = aliases_of(meas.name)
    if also:
        lines.append(f"  also typed as: {', '.join(also)} ('ireval measures NAME' says which definition each gives)")
    fmts = ", ".join(sorted(meas.rel_formats))
    lines.append(f"  judgements: -R {fmts}")
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("name", required=False)
def measures_command(name: str | None) -> None:
    """List every measure (or describe NAME): parameters, defaults, definition, reference."""
    from .names import suggest
    from .registry import NICKNAMES, load

    from .aliases import FAMILIES, describe
    from .names import _RANX_RBP, _label_form

    registry = load()
    if name is None:
        for meas in registry.values():
            click.echo(f"{meas.name:<24}{meas.doc.split('. ')[0].rstrip('.')}")
        click.echo("")
        for nick, members in NICKNAMES.items():
            click.echo(f"{nick:<24}nickname: {' '.join(members)}")
        click.echo("")
        for fam in FAMILIES.values():
            click.echo(f"{fam.name:<24}{fam.style} syntax: {', '.join(fam.roots)}")
        return
    root = name.split(".", 1)[0]
    if root in NICKNAMES:
        click.echo(f"{root}: nickname for {' '.join(NICKNAMES[root])}")
        return
    if root in registry and not _RANX_RBP.match(name):
        click.echo(_describe(registry[root]))
        return
    label = _label_form(name, registry)
    if label is not None:
        click.echo(_describe(label[0]))
        return
    text = describe(name)
    if text is None:
        from .errors import UnknownMeasureError

        raise UnknownMeasureError(f"unknown measure '{name}'{suggest(root, registry)}")
    click.echo(text)


# Subcommands: name -> "module:attribute" of a click command, imported only when used.
SUBCOMMANDS: dict[str, str] = {
    "measures": "irevalcli.cli:measures_command",
    "compare": "irevalcli.compare:compare_command",
    "gate": "irevalcli.gate:gate_command",
}


def _subcommand(name: str) -> click.Command:
    import importlib

    module, attr = SUBCOMMANDS[name].split(":")
    return getattr(importlib.import_module(module), attr)


def main(argv: list[str] | None = None) -> int:
    """Entry point: parse, run, and turn every error into one line and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in args
    if any(a in ("-v", "--version") for a in args if not a.startswith("--") or a == "--version"):
        if "-v" in args or "--version" in args:
            click.echo(f"ireval {__version__} (trec_eval 10.0 semantics)")
            return EXIT_OK
    try:
        if args and args[0] in SUBCOMMANDS:
            _subcommand(args[0]).main(args=args[1:], prog_name=f"ireval {args[0]}", standalone_mode=False)
            return EXIT_OK
        eval_command.main(args=args, prog_name="ireval", standalone_mode=False)
        return EXIT_OK
    except click.exceptions.Exit as exc:  # --help
        return int(exc.exit_code or 0)
    except click.UsageError as exc:
        msg = exc.format_message()
        if ("Missing argument" in msg or "Got unexpected extra argument" in msg) and not (
            args and args[0] in SUBCOMMANDS
        ):
            msg = f"{_one_line(msg).rstrip('.')}; usage: ireval [OPTIONS] QRELS RUN"
        click.echo(f"ireval: {_one_line(msg)} (see 'ireval --help')", err=True)
        return EXIT_USAGE
    except click.Abort:
        click.echo("ireval: interrupted", err=True)
        return 130
    except IrevalError as exc:
        if debug:
            import traceback

            traceback.print_exc()
        click.echo(f"ireval: {_one_line(str(exc))}", err=True)
        return exc.exit_code
    except BrokenPipeError:
        _silence_broken_pipe()
        return EXIT_OK
    except KeyboardInterrupt:
        click.echo("ireval: interrupted", err=True)
        return 130
    except MemoryError:
        click.echo("ireval: out of memory", err=True)
        return EXIT_USAGE
    except Exception as exc:  # a bug: one line, traceback only with --debug
        if debug:
            import traceback

            traceback.print_exc()
        click.echo(f"ireval: internal error: {type(exc).__name__}: {_one_line(str(exc))} "
                   "(please report it; --debug shows the traceback)", err=True)
        return EXIT_INTERNAL


def _silence_broken_pipe() -> None:
    """stdout's reader went away (``| head``): exit quietly."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError:
        pass


def entry() -> None:
    sys.exit(main())
