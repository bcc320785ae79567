"""Shared command line and output for the reference-tool drivers.

Each driver is what a user of that library would write: load the two files with
the library's own readers, evaluate, print. Output lines are
``label<TAB>qid<TAB>value`` (per-topic lines with -q, then the ``all`` lines),
values printed with full precision so the benchmark can check them.
"""

from __future__ import annotations

import argparse
import sys


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser()
    ap.add_argument("-q", action="store_true", help="print per-topic values too")
    ap.add_argument("-m", action="append", default=[], help="trec_eval measure or all_trec")
    ap.add_argument("qrels")
    ap.add_argument("run")
    return ap.parse_args(argv)


def emit(per_query: dict[str, dict[str, float]] | None, summary: dict[str, float]) -> None:
    """per_query: label -> {qid: value}; summary: label -> value."""
    out = []
    if per_query is not None:
        for label in sorted(per_query):
            for qid, v in per_query[label].items():
                out.append(f"{label}\t{qid}\t{v!r}\n")
    for label, v in summary.items():
        out.append(f"{label}\tall\t{v!r}\n")
    sys.stdout.write("".join(out))
