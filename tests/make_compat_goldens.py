"""Regenerate tests/data/compat_9_0_8/: golden outputs of the real trec_eval 9.0.8.

    TREC_EVAL_908=/path/to/trec_eval python tests/make_compat_goldens.py

The binary must be trec_eval 9.0.8 built from usnistgov/trec_eval's tag ``trec_eval-9.0.8``
(``trec_eval -v`` prints ``trec_eval version 9.0.8``); it is not part of this repository.
The small inputs are written from a fixed seed (so they are the same every time), each case
in CASES is run through the binary, and its stdout is saved as ``out.<case>``; CASES.tsv
lists ``name<TAB>arguments<TAB>expected file``, and tests/test_compat_908.py runs ireval
``--compat 9.0.8`` on every line and compares the bytes.
"""

from __future__ import annotations

import os
import random
import shlex
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent / "data" / "compat_9_0_8"

MEASURES = {
    "all": ["-m", "all_trec"],
    "official": [],
    "cuts": [
        "-m",
        "P.1,3,7",
        "-m",
        "ndcg_cut.3,7",
        "-m",
        "map_cut.2,5",
        "-m",
        "recall.4",
        "-m",
        "success.1,2,9",
        "-m",
        "Rprec_mult.0.5,1.5",
        "-m",
        "relative_P.3",
    ],
    "iprec": ["-m", "iprec_at_recall.0.15,0.33,0.5,0.66,0.95", "-m", "11pt_avg", "-m", "Rprec", "-m", "recip_rank"],
    "gains": ["-m", "ndcg.0=0,1=1,2=3", "-m", "ndcg_rel", "-m", "Rndcg", "-m", "G", "-m", "binG"],
    "sets": [
        "-m",
        "set_F.0.5",
        "-m",
        "set_P",
        "-m",
        "set_recall",
        "-m",
        "set_map",
        "-m",
        "set_relative_P",
        "-m",
        "utility.2,-1,0,0",
        "-m",
        "num_nonrel_judged_ret",
    ],
    "avg": [
        "-m",
        "gm_map",
        "-m",
        "gm_bpref",
        "-m",
        "bpref",
        "-m",
        "infAP",
        "-m",
        "num_rel",
        "-m",
        "num_rel_ret",
        "-m",
        "num_ret",
        "-m",
        "num_q",
    ],
}

FLAGS = {
    "plain": [],
    "q": ["-q"],
    "c": ["-c"],
    "qc": ["-q", "-c"],
    "l2": ["-l", "2"],
    "M5": ["-M", "5"],
    "J": ["-J"],
    "N40": ["-N", "40"],
    "qcl2M5": ["-q", "-c", "-l", "2", "-M", "5"],
    "cJ": ["-c", "-J"],
    "qcN": ["-q", "-c", "-N", "40"],
}

# (measures, flags) pairs per input set; every flag set runs with every measure group on
# the small set, the larger sets (summaries only) with a few
MATRIX = {
    "small": [(m, f) for m in MEASURES for f in FLAGS],
    "nist": [(m, f) for m in ("all", "official") for f in ("plain", "c", "l2", "M5", "J", "cJ")],
}


def write_inputs() -> None:
    rng = random.Random(908)
    qrels, run = [], []
    docs = [f"d{i:02d}" for i in range(40)]
    for t in range(1, 9):
        qid = str(100 + t)
        judged = rng.sample(docs, 18)
        for i, d in enumerate(judged):
            if t == 3:
                rel = 0  # judged, nothing relevant (R = 0)
            elif t == 5 and i < 2:
                rel = -1  # negative judgement
            else:
                rel = rng.choice([0, 0, 0, 1, 1, 2, 3])
            qrels.append(f"{qid} 0 {d} {rel}")
        if t in (7, 8):  # judged but absent from the run (-c scores them)
            continue
        ranked = rng.sample(docs, 12 + 2 * t)
        for r, d in enumerate(ranked):
            score = round(10 - r * 0.5, 1) if r % 4 else round(10 - (r + 1) * 0.5, 1)  # ties
            run.append(f"{qid} Q0 {d} {r + 1} {score} sys908")
    for r in range(5):  # a topic in the run that is not judged
        run.append(f"999 Q0 x{r} {r + 1} {5 - r} sys908")
    (HERE / "qrels.small").write_text("\n".join(qrels) + "\n")
    (HERE / "run.small").write_text("\n".join(run) + "\n")


INPUTS = {"small": ["qrels.small", "run.small"], "nist": ["../trec_eval/qrels.test", "../trec_eval/results.trunc"]}


def main() -> int:
    binary = os.environ.get("TREC_EVAL_908")
    if not binary:
        sys.exit("set TREC_EVAL_908 to a trec_eval 9.0.8 binary")
    version = (
        subprocess.run([binary, "-v"], capture_output=True, text=True).stderr
        + subprocess.run([binary, "-v"], capture_output=True, text=True).stdout
    )
    if "9.0.8" not in version:
        sys.exit(f"{binary} is not trec_eval 9.0.8: {version.strip()}")
    HERE.mkdir(parents=True, exist_ok=True)
    write_inputs()
    cases = []
    for data, pairs in MATRIX.items():
        for m, f in pairs:
            name = f"{data}.{m}.{f}"
            args = [*FLAGS[f], *MEASURES[m], *INPUTS[data]]
            res = subprocess.run([binary, *args], cwd=HERE, capture_output=True, check=False)
            if res.returncode != 0 or res.stderr:
                sys.exit(f"{name}: trec_eval failed: {res.stderr.decode()}")
            (HERE / f"out.{name}").write_bytes(res.stdout)
            cases.append(f"{name}\t{shlex.join(args)}\tout.{name}")
    (HERE / "CASES.tsv").write_text("\n".join(cases) + "\n")
    print(f"{len(cases)} cases written to {HERE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
