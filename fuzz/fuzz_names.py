"""Coverage-guided fuzzing (atheris/libFuzzer) of the measure-name grammar and evaluation.

    .venv/bin/pip install atheris
    mkdir -p fuzz/corpus/names
    .venv/bin/python fuzz/fuzz_names.py -max_len=256 -timeout=10 fuzz/corpus/names fuzz/seeds/fuzz_names

An input is up to three ``-m`` arguments separated by NUL bytes. Each set of names must either
raise ``IrevalError`` with a one-line message, or resolve to measures that evaluate on a small
fixed ranking (with ties, unjudged and negatively judged documents, a topic with R = 0 and one
missing under -c) and format as trec and json. Any other exception, a non-finite number where
trec_eval prints one, or a libFuzzer timeout is a crash.

Known bugs (pinned as strict xfails in tests/test_bad_inputs.py) are skipped unless
``IREVAL_FUZZ_KNOWN=1``: integers of 16 digits or more, reals that overflow or have an
exponent of 16 or more, pair levels of 4 digits or more, and Unicode-only whitespace (\\x1c-\\x1f,
U+3000...) in parameters, which names.py's ``\\s`` accepts but ``int()`` then refuses.
"""

from __future__ import annotations

import os
import re
import sys

import atheris

with atheris.instrument_imports(include=["irevalcli"]):
    from irevalcli.core.table import EvalOptions, build_table
    from irevalcli.engine.evaluate import evaluate_table
    from irevalcli.engine.job import Job
    from irevalcli.errors import IrevalError
    from irevalcli.io.trec import Source, parse_qrels, parse_run
    from irevalcli.measures.names import resolve
    from irevalcli.output.formatters import FORMATTERS

INCLUDE_KNOWN = os.environ.get("IREVAL_FUZZ_KNOWN") == "1"
KNOWN = re.compile(
    r"[0-9]{16,}|[eE][+]?0*[0-9]{3,}|[eE][+]?0*(1[6-9]|[2-9][0-9])|[0-9]{4,}\s*="
    r"|[\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]",
    re.IGNORECASE,
)

QRELS = parse_qrels(Source("q", b"1 0 a 2\n1 0 b 0\n1 0 c 1\n1 0 d -1\n2 0 a -1\n3 0 x 1\n", ""))
RUN = parse_run(Source("r", b"1 Q0 a 1 3 r\n1 Q0 b 2 3 r\n1 Q0 e 3 1 r\n2 Q0 a 1 1 r\n2 Q0 z 2 0 r\n", ""))
TABLES = [
    build_table(QRELS, RUN, EvalOptions(complete=True)),
    build_table(QRELS, RUN, EvalOptions(complete=True, judged_only=True, max_docs=2, rel_level=2)),
]


def TestOneInput(data: bytes) -> None:
    specs = [s for s in data.decode("utf-8", "surrogateescape").split("\x00")[:3]]
    if not INCLUDE_KNOWN and any(KNOWN.search(s) for s in specs):
        return
    try:
        requests = resolve(specs)
    except IrevalError as e:
        msg = str(e)
        if not msg or ("\n" in msg and not any("\n" in s for s in specs)):
            raise AssertionError(f"not a one-line message: {msg!r}") from None
        return
    for table in TABLES:
        try:  # some measures need more than names (TN needs -N): their own error, one line
            results = evaluate_table(Job.of(QRELS, requests, table.opts), table)
        except IrevalError as e:
            if not str(e) or "\n" in str(e):
                raise AssertionError(f"not a one-line message: {str(e)!r}") from None
            continue
        for fmt in ("trec", "json"):
            FORMATTERS[fmt](results, per_query=True, summary=True, meta={})


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
