"""Issue 22 shape 4: the Python API on DataFrames, and pytrec_eval from the same DataFrames.

    python drivers/frames.py TOOL QRELS RUN [--dtype arrow|object|category]

TOOL is ``ireval`` (``evaluate(qrels_df, run_df)``), ``ireval_path`` (``evaluate(qrels_path,
run_path)``, no DataFrames) or ``pytrec_eval`` (the dict of dicts built from the DataFrames,
then ``RelevanceEvaluator``). The two files are read into DataFrames first by the same code
(``pandas.read_csv``, ids as ``str``: pandas 3's default string columns, Arrow-backed where
pyarrow is installed; ``--dtype object`` or ``category`` converts them); that reading
is not timed. What is timed, in the process (``time.perf_counter`` and ``process_time``), is
what the tool does from the DataFrames (or paths) to the summary values. Prints one JSON line:
``{"eval_wall": s, "eval_cpu": s, "rss_before_mib": m, "eval_peak_mib": m, "summary": {...}}``:
``rss_before_mib`` is the process's resident memory when the clock starts (interpreter, the
libraries, the DataFrames), ``eval_peak_mib`` the peak of the evaluation alone above it (Linux:
the high-water mark is reset through ``/proc/self/clear_refs`` when the clock starts; null
elsewhere); ``frames``, the DataFrames' column types (null for paths). The process's peak
(``wait4``) also counts the DataFrame reading: pandas keeps str columns in Arrow only where
pyarrow is installed, so the reference environment installs pyarrow too
(requirements-ref.txt), and shapes.py checks that both sides read DataFrames of the same types.
"""

from __future__ import annotations

import importlib
import json
import sys
import time

MEASURES = ("map", "ndcg_cut.10")


def frames(qrels: str, run: str, dtype: str):
    import pandas as pd

    def read(path: str, names: list[str], keep: list[str]) -> pd.DataFrame:
        df = pd.read_csv(path, sep=" ", header=None, names=names, usecols=keep, dtype={"qid": str, "docno": str})
        for c in ("qid", "docno"):
            if dtype == "object":
                df[c] = df[c].astype(object)
            elif dtype == "category":
                df[c] = df[c].astype("category")
        return df

    q = read(qrels, ["qid", "iter", "docno", "rel"], ["qid", "docno", "rel"])
    r = read(run, ["qid", "q0", "docno", "rank", "score", "runid"], ["qid", "docno", "score"])
    return q, r


def run_ireval(q, r) -> dict[str, float]:
    from irevalcli.api import evaluate

    ev = evaluate(q, r, list(MEASURES))
    return {m: float(v) for m, v in zip(ev.summary["measure"], ev.summary["value"])}


def run_pytrec_eval(q, r) -> dict[str, float]:
    from collections import defaultdict

    import pytrec_eval

    qrel: dict[str, dict[str, int]] = defaultdict(dict)
    for a, b, c in zip(q["qid"].tolist(), q["docno"].tolist(), q["rel"].tolist()):
        qrel[a][b] = int(c)
    run: dict[str, dict[str, float]] = defaultdict(dict)
    for a, b, c in zip(r["qid"].tolist(), r["docno"].tolist(), r["score"].tolist()):
        run[a][b] = c
    res = pytrec_eval.RelevanceEvaluator(qrel, set(MEASURES)).evaluate(run)
    labels = sorted({k for v in res.values() for k in v})
    return {lab: pytrec_eval.compute_aggregated_measure(lab, [v[lab] for v in res.values()]) for lab in labels}


def _rss_mib(field: str) -> float | None:
    """``VmRSS`` or ``VmHWM`` of this process in MiB (None where /proc is not Linux's)."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def _reset_peak() -> bool:
    """Reset the process's high-water mark of resident memory to what it holds now (Linux)."""
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


def main(argv: list[str]) -> int:
    tool, qrels, run = argv[:3]
    dtype = argv[argv.index("--dtype") + 1] if "--dtype" in argv else "arrow"
    # the tool's modules are imported before the clock starts (the DataFrame reading imports pandas)
    importlib.import_module("pytrec_eval" if tool == "pytrec_eval" else "irevalcli.api")
    if tool == "ireval_path":
        args = (qrels, run)
        fn = run_ireval
    else:
        args = frames(qrels, run, dtype)
        fn = run_ireval if tool == "ireval" else run_pytrec_eval
    kinds = None if tool == "ireval_path" else [{c: str(t) for c, t in df.dtypes.items()} for df in args]
    before = _rss_mib("VmRSS")
    reset = _reset_peak()
    w, c = time.perf_counter(), time.process_time()
    summary = fn(*args)
    wall, cpu = time.perf_counter() - w, time.process_time() - c
    peak = _rss_mib("VmHWM") if reset else None
    print(
        json.dumps(
            {
                "eval_wall": wall,
                "eval_cpu": cpu,
                "rss_before_mib": before,
                "eval_peak_mib": None if peak is None or before is None else peak - before,
                "frames": kinds,
                "summary": summary,
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
