"""Regenerate tests/data/levels/: what the real trec_eval 10.0 and 9.0.8 print under ``-l`` levels
at and below 0 (issue 21 item 9: iprec_at_recall, 11pt_avg and Rprec_mult under ``-l -1``).

    TREC_EVAL_10=/path/to/10.0/trec_eval TREC_EVAL_908=/path/to/9.0.8/trec_eval \\
        python tests/make_level_goldens.py

The binaries are built from usnistgov/trec_eval's tags ``v10.0`` and ``trec_eval-9.0.8``
(``make`` in the source tree); they are not part of this repository. The inputs are the ones
already in tests/data (the 9.0.8 set's small qrels and run, which have negative judgements and
unjudged documents between judged ones, and NIST's qrels.test, results.test and qrels_jg file qrels.123);
every case is run through each binary and its stdout is saved as ``out.<version>.<case>``.
CASES.tsv lists ``name<TAB>version<TAB>arguments<TAB>expected file``; tests/measures/test_levels.py
runs ireval (with ``--compat 9.0.8`` for 9.0.8) on every line and compares the bytes.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data" / "levels"

INPUTS = {
    "small": ["../compat_9_0_8/qrels.small", "../compat_9_0_8/run.small"],
    "nist": ["../trec_eval/qrels.test", "../trec_eval/results.test"],
}
LEVELS = ["-1", "-2", "-3", "0"]
# the small set judges topics its run lacks, which trec_eval 10.0 refuses without -c
FLAGS = {"c": ["-c"], "qc": ["-q", "-c"], "cJ": ["-c", "-J"], "cM5": ["-c", "-M", "5"]}
MEASURES = ["-m", "all_trec"]
JG = ["-R", "qrels_jg", "-m", "qrels_jg", "../trec_eval/qrels.123", "../trec_eval/results.test"]


def cases() -> list[tuple[str, list[str]]]:
    out = []
    for data, files in INPUTS.items():
        for level in LEVELS:
            for flag, extra in FLAGS.items() if data == "small" else [("plain", [])]:
                out.append((f"{data}.l{level}.{flag}", ["-l", level, *extra, *MEASURES, *files]))
    for level in LEVELS:
        out.append((f"jg.l{level}", ["-l", level, "-q", *JG]))
    return out


def main() -> int:
    binaries = {"10": os.environ.get("TREC_EVAL_10"), "908": os.environ.get("TREC_EVAL_908")}
    if not all(binaries.values()):
        sys.exit("set TREC_EVAL_10 and TREC_EVAL_908 to trec_eval 10.0 and 9.0.8 binaries")
    lines = []
    for version, binary in binaries.items():
        assert binary is not None
        for name, args in cases():
            res = subprocess.run([binary, *args], cwd=HERE, capture_output=True, check=False)
            if res.returncode != 0 or res.stderr:
                print(f"{version}.{name}: trec_eval refused it, left out: {res.stderr.decode().strip()}")
                continue
            (HERE / f"out.{version}.{name}").write_bytes(res.stdout)
            lines.append(f"{name}\t{version}\t{shlex.join(args)}\tout.{version}.{name}")
    (HERE / "CASES.tsv").write_text("\n".join(lines) + "\n")
    print(f"{len(lines)} cases written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
