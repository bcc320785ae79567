"""Run ireval on trec_eval's own test cases (tests/data/trec_eval) and print a score.

    python tests/run_conformance.py [IREVAL] [FOLDER] [case-name ...]

IREVAL defaults to the ``ireval`` next to this Python (``.venv/bin/ireval``), FOLDER to the
project's copy of the cases, tests/data/trec_eval. With no case names, every case in its
CASES.tsv runs. Exit 0 when every selected case prints exactly the expected bytes, else 1.
(tests/test_conformance.py checks the same cases inside the test suite.)
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    ireval = argv[0] if argv else str(Path(sys.executable).with_name("ireval"))
    if "/" in ireval:  # a path: the cases run inside FOLDER
        ireval = str(Path(ireval).resolve())
    folder = Path(argv[1]) if len(argv) > 1 else HERE / "data" / "trec_eval"
    only = set(argv[2:])
    ok, bad = [], []
    for line in (folder / "CASES.tsv").read_text().splitlines():
        if not line.strip():
            continue
        name, args, expected = line.split("\t")
        if only and name not in only:
            continue
        want = (folder / expected).read_bytes()
        try:  # generous: only a real hang ends a case
            out = subprocess.run([ireval, *shlex.split(args)], cwd=folder, capture_output=True, timeout=600).stdout
        except subprocess.TimeoutExpired:
            out = b"<timeout>"
        (ok if out == want else bad).append(name)
    for name in bad:
        print(f"  differs: {name}")
    print(f"conformance: {len(ok)}/{len(ok) + len(bad)} trec_eval cases byte-identical")
    return 0 if not bad and ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
