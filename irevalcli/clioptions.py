"""Command-line option types and options shared by ireval's commands.

One definition each, so ``-l``, ``-c`` and the input-format options parse and
read the same in ``ireval``, ``compare``, ``gate``, ``curve``, ``plot`` and
``pool``. Importing this module imports only click.
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


class CLong(click.ParamType):
    """An integer read like C's atol/strtol: C whitespace skipped, the leading integer
    clamped to a long, 0 if there is none."""

    name = "integer"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int):
            return value
        m = re.match(r"[ \t\n\v\f\r]*[+-]?[0-9]+", str(value))
        return max(LONG_MIN, min(int(m.group(0)), LONG_MAX)) if m else 0


class Choice(click.Choice):
    """click.Choice that suggests the closest choice: "'mardown' ... (did you mean 'markdown'?)"."""

    def convert(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            return super().convert(value, param, ctx)
        except click.BadParameter as exc:
            import difflib

            close = difflib.get_close_matches(str(value), [str(c) for c in self.choices], n=1, cutoff=0.6)
            if close:
                exc.message = f"{exc.message.rstrip('.')} (did you mean '{close[0]}'?)"
            raise


def rel_level_option(default: int | None = 1, help: str = "Relevant means a judgement >= N (default 1).") -> F:
    """trec_eval's -l N, read with atol semantics."""
    return click.option("-l", "--level_for_rel", "rel_level", type=CLong(), default=default, metavar="N", help=help)


def complete_option(
    help: str = "Score every judged topic; a topic with no results scores 0 and counts in the averages.",
) -> F:
    """trec_eval's -c."""
    return click.option("-c", "--complete_rel_info_wanted", "complete", is_flag=True, help=help)


def input_format_options(f: F) -> F:
    """--run-format, --qrels-format and --column (tabular inputs)."""
    for opt in reversed(
        [
            click.option("--run-format", "run_format", type=Choice(RUN_FORMATS), default="auto", show_default=True,
                         help="Run file format; auto detects all but msmarco ('qid docno rank', scored by rank)."),
            click.option("--qrels-format", "qrels_format", type=Choice(QRELS_FORMATS), default="auto",
                         show_default=True, help="Judgement file format (auto detects it)."),
            click.option("--column", "columns", multiple=True, metavar="ROLE=NAME",
                         help="Column holding qid, docno, score, rel or runid in TSV/CSV/JSON Lines/Parquet input "
                              "(repeatable, e.g. --column qid=query_id); rank=NAME ranks a run without "
                              "scores by that column (score = -rank)."),
        ]
    ):
        f = opt(f)
    return f
