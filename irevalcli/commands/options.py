"""Command-line option types and options shared by ireval's commands.

One definition each, so ``-m``, ``-l``, ``-c``, ``--output``, ``--debug`` and the
input-format options parse and read the same in ``ireval``, ``compare``, ``gate``,
``curve``, ``plot``, ``pool`` and ``similarity`` (sqlite-utils' shared decorators).
Importing this module imports only click.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import click

RUN_FORMATS = ("auto", "trec", "msmarco", "tsv", "csv", "jsonl", "parquet")
QRELS_FORMATS = ("auto", "trec", "tsv", "csv", "jsonl", "parquet")
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

F = Callable[..., Any]


class Command(click.Command):
    """A click command whose parser tries a short option (``-q``, ``-mP.5``) without first
    building the "did you mean" suggestions of an unknown long option: click reads every
    argument as a long option first, and the error it raises and then drops for a short one
    imports difflib and compares the argument with every long option. What is parsed, and
    every error (an unknown ``--name`` still gets its suggestions), is click's."""

    def make_parser(self, ctx: click.Context) -> Any:
        parser = super().make_parser(ctx)
        match_long = getattr(parser, "_match_long_opt", None)
        if match_long is None or not hasattr(parser, "_long_opt") or not hasattr(parser, "_opt_prefixes"):
            return parser  # a click whose parser is built otherwise: its own rules, suggestions and all

        def _match_long_opt(opt: str, explicit_value: str | None, state: Any) -> None:
            if opt not in parser._long_opt and opt[:2] not in parser._opt_prefixes:
                # click catches this and reads ``opt`` as short options: nothing to suggest
                raise click.NoSuchOption(opt, ctx=parser.ctx)
            match_long(opt, explicit_value, state)

        parser._match_long_opt = _match_long_opt  # type: ignore[method-assign]
        return parser


class CLong(click.ParamType):
    """An integer read like C's atol/strtol: C whitespace skipped, the leading integer
    clamped to a long; trailing text is ignored as trec_eval ignores it (``-l 2x`` is 2).

    Text with no leading integer (``-l two``, ``-l=2``, ``-l ''``) is refused: atol
    would read it as 0 and silently change what the option means."""

    name = "integer"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        m = re.match(r"[ \t\n\v\f\r]*[+-]?[0-9]+", str(value))
        if m is None:
            self.fail(f"'{value}' is not an integer", param, ctx)
        return max(LONG_MIN, min(int(m.group(0)), LONG_MAX))


class Integer(click.ParamType):
    """A whole integer and nothing else (``-l 2``, ``-l -1``): what ireval's own commands take.

    Unlike click's int, no ``1_000``, no surrounding text, no ``=2``. ``min``, ``max``: the
    least and greatest values accepted."""

    name = "integer"

    def __init__(self, min: int | None = None, max: int | None = None) -> None:
        self.min = min
        self.max = max

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        text = str(value)
        if not re.fullmatch(r"[+-]?[0-9]+", text.strip()):
            hint = ""
            if text.startswith("=") and re.fullmatch(r"[+-]?[0-9]+", text[1:].strip()) and param is not None:
                short = min(param.opts, key=len)
                hint = f" (write {short} {text[1:].strip()})"
            self.fail(f"'{value}' is not an integer{hint}", param, ctx)
        value = max(LONG_MIN, min(int(text), LONG_MAX))
        if self.min is not None and value < self.min:
            self.fail(f"{value} is not in the range x>={self.min}", param, ctx)
        if self.max is not None and value > self.max:
            low = "" if self.min is None else f"{self.min}<="
            self.fail(f"{int(text)} is not in the range {low}x<={self.max}", param, ctx)
        return value


class Choice(click.Choice):
    """click.Choice that suggests the closest choice: "'mardown' ... (did you mean 'markdown'?)"."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            import difflib

            close = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1, cutoff=0.6)
            if close:
                exc.message = f"{exc.message.rstrip('.')} (did you mean '{close[0]}'?)"  # type: ignore[misc]
            raise


def _complete_measure(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from .completion import complete_measure  # the registry loads when a shell asks, not for --help

    return complete_measure(ctx, param, incomplete)


def measure_option(help: str, *, required: bool = False, complete: bool = True, one: str | None = None) -> F:
    """-m/--measure NAME[.PARAMS], repeatable (``measures``), completed from the registry.

    ``complete``: False where the names are not the registry's (similarity's rbo, kendall_tau).
    ``one``: a single measure (``measure``) with this default, as ``plot diff`` takes."""
    shell_complete = _complete_measure if complete else None
    if one is not None:
        return click.option(
            "-m",
            "--measure",
            "measure",
            default=one,
            show_default=True,
            metavar="NAME",
            shell_complete=shell_complete,
            help=help,
        )
    return click.option(
        "-m",
        "--measure",
        "measures",
        multiple=True,
        required=required,
        metavar="NAME[.PARAMS]",
        shell_complete=shell_complete,
        help=help,
    )


def output_option(help: str = "Write the output to PATH atomically (default: stdout).") -> F:
    """--output PATH: written atomically, never over an input (output/files.py checks)."""
    return click.option("--output", metavar="PATH", help=help)


debug_option = click.option("--debug", is_flag=True, help="Show a traceback for errors.")


def probability(ctx: Any, param: Any, value: float | None) -> float | None:
    """A callback: a level strictly between 0 and 1 (--alpha, --confidence)."""
    if value is not None and not 0 < value < 1:
        raise click.BadParameter(f"must be between 0 and 1, got {value:g}")
    return value


REL_LEVEL_HELP = "Relevant means a judgement >= N, an integer [default: 1]."


def rel_level_option(default: int | None = 1, help: str = "Relevant means a judgement >= N (default 1).") -> F:
    """trec_eval's -l N for ireval's own commands: an integer, nothing else."""
    return click.option("-l", "--level_for_rel", "rel_level", type=Integer(), default=default, metavar="N", help=help)


def complete_option(
    help: str = "Score every judged topic; a topic with no results scores 0 and counts in the averages.",
) -> F:
    """trec_eval's -c."""
    return click.option("-c", "--complete_rel_info_wanted", "complete", is_flag=True, help=help)


def input_format_options(f: F) -> F:
    """--run-format, --qrels-format and --column (tabular inputs)."""
    for opt in reversed(
        [
            click.option(
                "--run-format",
                "run_format",
                type=Choice(RUN_FORMATS),
                default="auto",
                show_default=True,
                help="Run file format; auto detects all but msmarco ('qid docno rank', scored by rank).",
            ),
            click.option(
                "--qrels-format",
                "qrels_format",
                type=Choice(QRELS_FORMATS),
                default="auto",
                show_default=True,
                help="Judgement file format (auto detects it).",
            ),
            click.option(
                "--column",
                "columns",
                multiple=True,
                metavar="ROLE=NAME",
                help="Column holding qid, docno, score, rel or runid in TSV/CSV/JSON Lines/Parquet input "
                "(repeatable, e.g. --column qid=query_id); rank=NAME ranks a run without "
                "scores by that column (score = -rank).",
            ),
        ]
    ):
        f = opt(f)
    return f


TIES = ("docno", "input", "rank")


def ties_option(default: str | None = "docno", extra: str = "") -> F:
    """--ties: how documents with equal scores are ordered within a topic."""
    return click.option(
        "--ties",
        "ties",
        type=Choice(TIES),
        default=default,
        show_default=default is not None,
        help="Order of documents with equal scores: docno (descending, trec_eval's rule), input "
        "(their order in the run file, as ranx and TF-Ranking) or rank (order by the run's rank "
        f"column, ascending, instead of the score; equal ranks by score, then docno){extra}.",
    )


remote_config_option = click.option(
    "--allow-remote-config-paths",
    "allow_remote_config_paths",
    is_flag=True,
    help="Read URLs (s3://, http://, ...) named in the --config file. Without it a config file may "
    "name local files only, so a config never makes ireval connect anywhere.",
)


class Decimal(click.ParamType):
    """A finite number in decimal notation and nothing else (``0.05``, ``5e-2``): what ireval's
    own commands take for probabilities and levels. Unlike click's float, no ``1_0``, ``nan``,
    ``inf`` or hexadecimal."""

    name = "number"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, float):
            return value
        text = str(value).strip()
        if not re.fullmatch(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?", text):
            self.fail(f"'{value}' is not a decimal number", param, ctx)
        return float(text)


def engine_options(f: F) -> F:
    """--engine, --scheduler, --workers: where the runs are scored (README "Beyond one machine")."""
    for opt in reversed(
        [
            click.option(
                "--engine",
                "engine",
                type=Choice(["local", "dask"]),
                default="local",
                show_default=True,
                help="Score on this machine, or on a Dask cluster (needs Dask: pip install "
                "'dask[dataframe]' distributed); "
                "the output is the same.",
            ),
            click.option(
                "--scheduler",
                "scheduler",
                metavar="ADDRESS",
                default=None,
                help="--engine dask: the running Dask scheduler to use (tcp://host:8786); without it a local "
                "cluster is started and shut down.",
            ),
            click.option(
                "--workers",
                "workers",
                type=Integer(min=1),
                default=None,
                metavar="N",
                help="--engine dask without --scheduler: worker processes of the local cluster (default: one per core).",
            ),
        ]
    ):
        f = opt(f)
    return f
