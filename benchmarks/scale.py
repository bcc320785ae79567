"""Scale benchmark (issue 17): an impression log of 50M rows, and a run out of topic order.

Sub-commands:

  gen       write the synthetic impression log as Parquet under data/implog-u<U>-i<K>/:
              flat/part-NNN.parquet       rows in logging (random) order, users spread over every file
              hive/bucket=NN/part-0.parquet  every user's rows in one bucket (hash of the user id)
              single.parquet              the flat rows as one file (what ireval reads today)
            columns qid (user, string), docno (item, string), score (float64), rel (int8, 0/1)
  baseline  per-user AUC, GAUC, nDCG@10 and MRR with pyarrow + numpy (no Python loop over users),
            the way a team without an evaluator writes it; prints the summary as JSON
  check     the baseline against ireval on a small log (TREC text and Parquet inputs), to 1e-9
  shuffle   data/big-shuffled/run.txt: benchmarks/generate.py's 10M-line `big` run, lines in
            random order (no longer grouped by topic)
  run       time the command lines of COMMANDS (below) and print / write a results table

    python benchmarks/scale.py gen                          # 500k users x 100 items, 64 files
    python benchmarks/scale.py check
    python benchmarks/scale.py shuffle
    python benchmarks/scale.py run --only shuffled --reps 3
    python benchmarks/scale.py run --only log --reps 1 --json data/scale-log.json

Each timed command is its own process, reaped with os.wait4 (wall, CPU of the process and the
children it waited for). Peak memory is read from /proc/PID/status (VmHWM, the kernel's own
peak RSS) of the process and of every descendant, polled every 0.2 s, so a Dask run reports
its client/scheduler process and each worker process separately.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
# where the logs are written and read: benchmarks/data, or $SCALE_DATA (a 50M-row log takes
# 0.7 GB on disk; keep it out of the repository, e.g. SCALE_DATA=/work/logs-data)
DATA = Path(os.environ.get("SCALE_DATA", HERE / "data"))
sys.path.insert(0, str(HERE))

SEED = 20261124
IREVAL = str(ROOT / ".venv" / "bin" / "ireval")
TREC_EVAL_10 = os.environ.get("TREC_EVAL_10", "/tmp/te10/trec_eval")
TREC_EVAL_904 = os.environ.get("TREC_EVAL_904", str(HERE / "bin" / "trec_eval"))
LOG_MEASURES = ["-m", "gauc", "-m", "auc", "-m", "ndcg_cut.10", "-m", "recip_rank"]

# --------------------------------------------------------------------------
# the command lines timed by `run`: edit here. {placeholders} are filled from paths():
#   {log_flat} {log_hive} {log_single}  the impression log's three layouts
#   {big_qrels} {big_run} {big_shuffled}  generate.py's big collection and its shuffled run
# group: which rows-count the rows/second figure uses ("log" or "big"), and the
# entries whose outputs must be byte-identical share a `same` key.
# needs: a command line whose first word is not installed / whose option is unknown is
# skipped with a note, so the table can list the engines that are still being built.

PY = sys.executable
COMMANDS: dict[str, dict[str, Any]] = {
    # --- the impression log --------------------------------------------------
    "baseline_pandas": {
        "group": "log",
        "argv": [PY, str(HERE / "scale.py"), "baseline", "{log_flat}"],
    },
    "ireval_today": {  # today's ireval: one Parquet file as both qrels (qid, docno, rel) and run;
        # --no-stream: at 711 MB the file is over the automatic streaming size, and the stream's
        # format sniffing takes a large Parquet file for TREC text ("contains a NUL byte")
        "group": "log",
        "argv": [IREVAL, "--no-stream", *LOG_MEASURES, "--format", "json", "{log_single}", "{log_single}"],
        "same": "log_json",
    },
    "ireval_local": {  # issue 17: the labelled table, local engine (in memory)
        "group": "log",
        "argv": [IREVAL, *LOG_MEASURES, "--format", "json", "--labelled", "{log_hive}"],
        "same": "log_hive_json",
        "needs": "--labelled",
    },
    "ireval_dask_hive": {  # partitioned by user bucket, one file each: declared, so no shuffle
        "group": "log",
        "argv": [
            IREVAL,
            "--engine",
            "dask",
            "--workers",
            "2",
            "--partitioned-by-topic",
            *LOG_MEASURES,
            "--format",
            "json",
            "--labelled",
            "{log_hive}",
        ],
        "same": "log_hive_json",
        "needs": "--engine",
    },
    "ireval_dask_flat": {  # rows in logging order: shuffled by user
        "group": "log",
        "argv": [
            IREVAL,
            "--engine",
            "dask",
            "--workers",
            "2",
            *LOG_MEASURES,
            "--format",
            "json",
            "--labelled",
            "{log_flat}",
        ],
        "needs": "--engine",
    },
    # --- the big run, out of topic order --------------------------------------
    "trec_eval_10_shuffled": {
        "group": "big",
        "argv": [TREC_EVAL_10, "-m", "all_trec", "-q", "{big_qrels}", "{big_shuffled}"],
        "same": "big_all_trec_q",
    },
    "trec_eval_10_grouped": {  # the same run grouped by topic: is 10.0-rc3 slow on unsorted input only?
        "group": "big",
        "argv": [TREC_EVAL_10, "-m", "all_trec", "-q", "{big_qrels}", "{big_run}"],
        "same": "big_all_trec_q",
    },
    "trec_eval_904_shuffled": {
        "group": "big",
        "argv": [TREC_EVAL_904, "-m", "all_trec", "-q", "{big_qrels}", "{big_shuffled}"],
        "same": "big_all_trec_q_904",
    },
    "ireval_shuffled": {
        "group": "big",
        "argv": [IREVAL, "-m", "all_trec", "-q", "{big_qrels}", "{big_shuffled}"],
        "same": "big_all_trec_q",
    },
    "ireval_908_shuffled": {  # for comparing with 9.0.4's float32 scores
        "group": "big",
        "argv": [IREVAL, "--compat", "9.0.8", "-m", "all_trec", "-q", "{big_qrels}", "{big_shuffled}"],
        "same": "big_all_trec_q_904",
    },
    "ireval_grouped": {  # the same run grouped by topic (streamed), for reference
        "group": "big",
        "argv": [IREVAL, "-m", "all_trec", "-q", "{big_qrels}", "{big_run}"],
        "same": "big_all_trec_q",
    },
    "ireval_memlimit_shuffled": {  # issue 17 item 1: out of core
        "group": "big",
        "argv": [IREVAL, "--memory-limit", "256MB", "-m", "all_trec", "-q", "{big_qrels}", "{big_shuffled}"],
        "same": "big_all_trec_q",
        "needs": "--memory-limit",
    },
}
SETS = {
    "log": [k for k, v in COMMANDS.items() if v["group"] == "log"],
    "shuffled": [
        "trec_eval_10_shuffled",
        "trec_eval_10_grouped",
        "trec_eval_904_shuffled",
        "ireval_shuffled",
        "ireval_908_shuffled",
        "ireval_grouped",
        "ireval_memlimit_shuffled",
    ],
}


def log_dir(users: int, items: int) -> Path:
    return DATA / f"implog-u{users}-i{items}"


def paths(users: int, items: int) -> dict[str, str]:
    d = log_dir(users, items)
    return {
        "log_flat": str(d / "flat"),
        "log_hive": str(d / "hive"),
        "log_single": str(d / "single.parquet"),
        "big_qrels": str(DATA / "big" / "qrels.txt"),
        "big_run": str(DATA / "big" / "run.txt"),
        "big_shuffled": str(DATA / "big-shuffled" / "run.txt"),
    }


# --------------------------------------------------------------------------
# the impression log


def make_log(users: int, items: int, pos_rate: float, seed: int, first_user: int = 0) -> dict[str, Any]:
    """Columns of ``users`` users x ``items`` impressions, as numpy arrays (ids as integers).

    Each user has a propensity p_u ~ Beta(0.6, 0.6 (1 - r) / r) (mean r = pos_rate), a label
    rel ~ Bernoulli(p_u) per impression, and a model score sigmoid(logit(p_u) + 1.5 rel + N(0, 1))
    rounded to 1e-4, so the score ranks positives higher (AUC about 0.85) and some neighbours tie.
    Items are distinct within a user, drawn from a catalogue of 1M ids.
    """
    import numpy as np

    rng = np.random.default_rng([seed, first_user])
    n = users * items
    user = np.repeat(np.arange(first_user, first_user + users, dtype=np.int64), items)
    a = 0.6
    p_u = rng.beta(a, a * (1 - pos_rate) / pos_rate, size=users)
    p = np.repeat(p_u, items)
    rel = (rng.random(n) < p).astype(np.int8)
    logit = np.log(np.clip(p, 1e-6, 1 - 1e-6) / np.clip(1 - p, 1e-6, 1))
    z = logit + 1.5 * rel + rng.standard_normal(n)
    score = np.round(1.0 / (1.0 + np.exp(-z)), 4)
    # distinct items per user: offset + j * 9973 (mod 1M) for j < items <= 100
    catalogue = 1_000_000
    off = rng.integers(0, catalogue, size=users)
    j = np.tile(np.arange(items, dtype=np.int64), users)
    item = (np.repeat(off, items) + j * 9973) % catalogue
    return {"user": user + 1_000_000, "item": item, "score": score, "rel": rel}


def to_table(cols: dict[str, Any], idx: Any = None) -> Any:
    import pyarrow as pa

    def take(a: Any) -> Any:
        return a if idx is None else a[idx]

    return pa.table(
        {
            "qid": pa.array(take(cols["user"])).cast(pa.string()),
            "docno": pa.array(take(cols["item"])).cast(pa.string()),
            "score": pa.array(take(cols["score"])),
            "rel": pa.array(take(cols["rel"])),
        }
    )


def bucket_of(user: Any, buckets: int) -> Any:
    """The hive bucket of each user id: a multiplicative hash, mod ``buckets``."""
    import numpy as np

    return ((user.astype(np.uint64) * np.uint64(2654435761)) % np.uint64(2**32)) % np.uint64(buckets)


def cmd_gen(args: argparse.Namespace) -> int:
    import numpy as np
    import pyarrow.parquet as pq

    out = log_dir(args.users, args.items)
    layouts = set(args.layouts.split(","))
    t0 = time.time()
    cols = make_log(args.users, args.items, args.pos_rate, args.seed)
    n = len(cols["rel"])
    print(f"scale gen: {n:,} rows generated in {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    rng = np.random.default_rng([args.seed, 1])
    if layouts & {"flat", "single"}:
        perm = rng.permutation(n)  # logging order: users interleaved
        bounds = np.linspace(0, n, args.files + 1).astype(np.int64)
        (tmp / "flat").mkdir()
        writer = (
            pq.ParquetWriter(tmp / "single.parquet", to_table(cols, perm[:1]).schema) if "single" in layouts else None
        )
        for f in range(args.files):
            t = to_table(cols, perm[bounds[f] : bounds[f + 1]])
            if "flat" in layouts:
                pq.write_table(t, tmp / "flat" / f"part-{f:03d}.parquet", row_group_size=1 << 20)
            if writer is not None:
                writer.write_table(t, row_group_size=1 << 20)
        if writer is not None:
            writer.close()
        del perm
        print(f"scale gen: flat/single written at {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    if "hive" in layouts:
        b = bucket_of(cols["user"], args.files)
        order = np.argsort(b, kind="stable")  # users stay in id order, rows of a user together
        bs = b[order]
        starts = np.searchsorted(bs, np.arange(args.files + 1))
        for f in range(args.files):
            d = tmp / "hive" / f"bucket={f:02d}"
            d.mkdir(parents=True)
            pq.write_table(
                to_table(cols, order[starts[f] : starts[f + 1]]), d / "part-0.parquet", row_group_size=1 << 20
            )
        print(f"scale gen: hive written at {time.time() - t0:.1f} s", file=sys.stderr, flush=True)
    info = {
        "users": args.users,
        "items_per_user": args.items,
        "rows": n,
        "positives": int(cols["rel"].sum()),
        "pos_rate_target": args.pos_rate,
        "users_without_positive": int((np.bincount(cols["user"] - 1_000_000, weights=cols["rel"]) == 0).sum()),
        "files": args.files,
        "seed": args.seed,
        "layouts": sorted(layouts),
    }
    (tmp / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    shutil.rmtree(out, ignore_errors=True)
    tmp.rename(out)
    sizes = {p.name: sum(f.stat().st_size for f in p.rglob("*") if f.is_file()) for p in out.iterdir() if p.is_dir()}
    if (out / "single.parquet").exists():
        sizes["single.parquet"] = (out / "single.parquet").stat().st_size
    info["bytes"] = sizes
    (out / "info.json").write_text(json.dumps(info, indent=1) + "\n")
    print(json.dumps(info))
    print(f"scale gen: {out} in {time.time() - t0:.1f} s", file=sys.stderr)
    return 0


# --------------------------------------------------------------------------
# the pandas/pyarrow baseline


def baseline(table: Any, k: int = 10) -> tuple[dict[str, float], dict[str, Any]]:
    """Per-user AUC, nDCG@k and reciprocal rank, and the summaries ireval prints.

    Definitions as ireval's (``ireval measures auc gauc ndcg_cut recip_rank``): rows are ranked
    by score descending, ties by docno descending (trec_eval's rule, as strings); a relevant
    row is rel >= 1. auc = the fraction of (relevant, non-relevant) pairs in which the relevant
    row ranks higher (no value without such a pair; summary: mean over users with a value);
    gauc = the users' auc weighted by their number of judged rows; ndcg_cut_k = sum of rel /
    log2(rank + 1) over the top k, over the same for the labels sorted; recip_rank = 1 / the
    rank of the first relevant row (0 without one). ndcg and recip_rank average over every user.
    """
    import numpy as np
    import pyarrow.compute as pc

    q = pc.dictionary_encode(table["qid"]).combine_chunks()
    d = pc.dictionary_encode(table["docno"]).combine_chunks()
    q_code = q.indices.to_numpy()
    # the docno's place in string order, so a numeric sort key breaks ties as strcmp would
    d_rank = np.empty(len(d.dictionary), dtype=np.int64)
    d_rank[pc.sort_indices(d.dictionary).to_numpy()] = np.arange(len(d.dictionary))
    d_key = d_rank[d.indices.to_numpy()]
    score = table["score"].to_numpy().astype(np.float64)
    rel = table["rel"].to_numpy().astype(np.int64)
    order = np.lexsort((-d_key, -score, q_code))
    g = q_code[order]
    r = rel[order]
    nq = len(q.dictionary)
    n_u = np.bincount(g, minlength=nq)
    starts = np.concatenate(([0], np.cumsum(n_u)[:-1]))
    rank = np.arange(len(g)) - starts[g] + 1
    pos = r >= 1
    P = np.bincount(g, weights=pos, minlength=nq)
    N = n_u - P
    # AUC: each relevant row beats the non-relevant rows ranked below it
    neg = (~pos).astype(np.int64)
    cneg = np.cumsum(neg)
    neg_above = cneg - neg - (cneg[starts] - neg[starts])[g]
    won = np.bincount(g, weights=np.where(pos, N[g] - neg_above, 0), minlength=nq)
    pairs = P * N
    auc = np.full(nq, np.nan)
    np.divide(won, pairs, out=auc, where=pairs > 0)
    # nDCG@k: gain = the label (negative labels count 0), discount log2(rank + 1)
    gain = np.maximum(r, 0).astype(np.float64)
    top = rank <= k
    dcg = np.bincount(g[top], weights=gain[top] / np.log2(rank[top] + 1), minlength=nq)
    iorder = np.lexsort((-rel, q_code))
    ig = q_code[iorder]
    igain = np.maximum(rel[iorder], 0).astype(np.float64)
    irank = np.arange(len(ig)) - starts[ig] + 1
    itop = irank <= k
    idcg = np.bincount(ig[itop], weights=igain[itop] / np.log2(irank[itop] + 1), minlength=nq)
    ndcg = np.zeros(nq)
    np.divide(dcg, idcg, out=ndcg, where=idcg > 0)
    # MRR: the first relevant row of each user
    first = np.full(nq, np.iinfo(np.int64).max)
    np.minimum.at(first, g[pos], rank[pos])
    rr = np.where(first < np.iinfo(np.int64).max, 1.0 / first, 0.0)
    has = ~np.isnan(auc)
    summary = {
        "gauc": float(np.sum(auc[has] * n_u[has]) / np.sum(n_u[has])),
        "auc": float(np.mean(auc[has])),
        f"ndcg_cut_{k}": float(np.mean(ndcg)),
        "recip_rank": float(np.mean(rr)),
    }
    per_user = {
        "qid": q.dictionary.to_pylist() if nq <= 100_000 else None,
        "auc": auc,
        f"ndcg_cut_{k}": ndcg,
        "recip_rank": rr,
    }
    return summary, per_user


def cmd_baseline(args: argparse.Namespace) -> int:
    import pyarrow.parquet as pq

    t0 = time.perf_counter()
    table = pq.read_table(args.path, columns=["qid", "docno", "score", "rel"])
    t1 = time.perf_counter()
    summary, _ = baseline(table)
    t2 = time.perf_counter()
    print(json.dumps({"summary": summary, "rows": table.num_rows, "read_s": t1 - t0, "compute_s": t2 - t1}))
    return 0


# --------------------------------------------------------------------------
# checking the baseline against ireval


def cmd_check(args: argparse.Namespace) -> int:
    import math as _m

    import numpy as np
    import pyarrow.parquet as pq

    tmp = Path(tempfile.mkdtemp(prefix="ireval-scale-check-"))
    try:
        cols = make_log(args.users, args.items, args.pos_rate, args.seed + 1)
        rng = np.random.default_rng(3)
        # harder than the big log: users with 30-100 rows (so GAUC's weights matter), half
        # of them with scores rounded to 0.01 (many ties, broken by docno as strings)
        coarse = (cols["user"] % 2 == 0) & (rng.random(len(cols["rel"])) < 0.9)
        cols["score"] = np.where(coarse, np.round(cols["score"], 2), cols["score"])
        keep = rng.random(len(cols["rel"])) < np.repeat(rng.uniform(0.3, 1.0, args.users), args.items)
        idx = np.flatnonzero(keep)
        table = to_table(cols, idx[rng.permutation(len(idx))])
        pq.write_table(table, tmp / "log.parquet")
        qid = table["qid"].to_pylist()
        docno = table["docno"].to_pylist()
        score = table["score"].to_pylist()
        rel = table["rel"].to_pylist()
        with open(tmp / "qrels.txt", "w") as fq, open(tmp / "run.txt", "w") as fr:
            for i in range(len(qid)):
                fq.write(f"{qid[i]} 0 {docno[i]} {rel[i]}\n")
                fr.write(f"{qid[i]} Q0 {docno[i]} 0 {score[i]!r} base\n")
        summary, per_user = baseline(table)
        bad = 0
        for label, q_, r_ in (
            ("TREC text", tmp / "qrels.txt", tmp / "run.txt"),
            ("Parquet", tmp / "log.parquet", tmp / "log.parquet"),
        ):
            cmd = [args.ireval, *LOG_MEASURES, "-q", "--format", "json", str(q_), str(r_)]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                print(f"scale check: {label}: ireval failed: {r.stderr.strip()}")
                bad += 1
                continue
            out = json.loads(r.stdout)
            worst = 0.0
            for m, v in summary.items():
                worst = max(worst, abs(float(out["summary"][m]) - v))
            pq_ = out["per_query"]
            idx = {q: i for i, q in enumerate(per_user["qid"])}
            n_cmp = 0
            for q, vals in pq_.items():
                i = idx[q]
                for m in ("auc", "ndcg_cut_10", "recip_rank"):
                    mine = float(per_user[m][i])
                    theirs = float(vals[m]) if vals.get(m) is not None else float("nan")
                    if _m.isnan(mine) and _m.isnan(theirs):
                        n_cmp += 1
                        continue
                    worst = max(worst, abs(mine - theirs))
                    n_cmp += 1
            ok = worst <= 1e-9 and len(pq_) == len(idx)
            bad += not ok
            print(
                f"scale check: {label}: {len(pq_)} users, {n_cmp} per-user values and 4 summaries; "
                f"largest difference {worst:.2e} -> {'agree' if ok else 'DISAGREE'} (to 1e-9)"
            )
        print("scale check: baseline summary " + json.dumps(summary))
        return 1 if bad else 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# --------------------------------------------------------------------------
# the shuffled big run


def cmd_shuffle(args: argparse.Namespace) -> int:
    import numpy as np

    src = DATA / "big" / "run.txt"
    if not src.exists():
        subprocess.run([PY, str(HERE / "generate.py"), "--which", "big"], check=True)
    dst = DATA / "big-shuffled" / "run.txt"
    dst.parent.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes()
    ends = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10) + 1
    starts = np.concatenate(([0], ends[:-1]))
    perm = np.random.default_rng(args.seed).permutation(len(ends))
    tmp = dst.with_suffix(".tmp")
    with open(tmp, "wb") as fh:
        mv = memoryview(data)
        buf: list[Any] = []
        for i in perm:
            buf.append(mv[starts[i] : ends[i]])
            if len(buf) >= 100_000:
                fh.write(b"".join(buf))
                buf.clear()
        fh.write(b"".join(buf))
    tmp.rename(dst)
    shutil.copyfile(DATA / "big" / "qrels.txt", dst.parent / "qrels.txt")
    print(f"scale shuffle: {len(ends):,} lines of {src} in random order -> {dst}")
    return 0


# --------------------------------------------------------------------------
# timing


@dataclass
class Result:
    name: str
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    peak_main: list[float] = field(default_factory=list)  # MiB
    peak_children: list[dict[str, float]] = field(default_factory=list)  # label -> MiB
    rc: int = 0
    note: str = ""
    out: str = ""


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (from /proc/*/stat)."""
    kids: dict[int, list[int]] = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open(f"/proc/{p}/stat") as fh:
                s = fh.read()
        except OSError:
            continue
        ppid = int(s.rsplit(")", 1)[1].split()[1])
        kids.setdefault(ppid, []).append(int(p))
    out, todo = [], [pid]
    while todo:
        c = kids.get(todo.pop(), [])
        out += c
        todo += c
    return out


def _hwm_mib(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        return None
    return None


def _label(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return f"pid {pid}"
    for key in ("resource_tracker", "forkserver", "semaphore_tracker"):
        if key in cmd:
            return key
    return (
        "worker"
        if "multiprocessing" in cmd or "dask" in cmd or "spawn" in cmd
        else cmd.split(" ")[0].rsplit("/", 1)[-1]
    )


def timed(
    argv: list[str], stdout_path: str, timeout: float
) -> tuple[float, float, int, float, dict[int, tuple[str, float]]]:
    """Run ``argv``; return wall, CPU, exit code, the process's peak RSS and each descendant's."""
    peaks: dict[int, tuple[str, float]] = {}
    main_peak = [0.0]
    done = threading.Event()
    with open(stdout_path, "wb") as out, open(stdout_path + ".err", "wb") as err:
        t0 = time.perf_counter()
        p = subprocess.Popen(argv, stdout=out, stderr=err, stdin=subprocess.DEVNULL)

        def poll() -> None:
            while not done.is_set():
                h = _hwm_mib(p.pid)
                if h is not None:
                    main_peak[0] = max(main_peak[0], h)
                for c in _children(p.pid):
                    hc = _hwm_mib(c)
                    if hc is not None:
                        lab = peaks[c][0] if c in peaks else _label(c)
                        peaks[c] = (lab, max(hc, peaks.get(c, ("", 0.0))[1]))
                done.wait(0.2)

        th = threading.Thread(target=poll, daemon=True)
        th.start()
        timer = threading.Timer(timeout, p.kill)
        timer.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            timer.cancel()
            done.set()
            th.join()
        wall = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    # ru_maxrss is the largest of the process and its reaped children: the process's own
    # peak when it is the largest, which the poll may have missed at the very end
    main = max(main_peak[0], ru.ru_maxrss / 1024.0) if not peaks else main_peak[0]
    return wall, ru.ru_utime + ru.ru_stime, rc, main, peaks


def _supported(argv: list[str], needs: str | None) -> str | None:
    """None if the command can run here, else why not."""
    exe = argv[0]
    if not (os.path.exists(exe) or shutil.which(exe)):
        return f"{exe} not found"
    if needs:
        h = subprocess.run([exe, "--help"], capture_output=True, text=True)
        if needs not in h.stdout:
            return f"{os.path.basename(exe)} has no {needs} option yet"
    return None


def cmd_run(args: argparse.Namespace) -> int:
    names: list[str] = []
    for item in args.only.split(","):
        names += SETS.get(item, [item])
    subst = paths(args.users, args.items)
    info_path = log_dir(args.users, args.items) / "info.json"
    rows = {
        "log": json.loads(info_path.read_text())["rows"] if info_path.exists() else None,
        "big": 10_000_000,
    }
    tmp = Path(args.out_dir) if args.out_dir else Path(tempfile.mkdtemp(prefix="ireval-scale-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results: dict[str, Result] = {}
    load_before = os.getloadavg()
    for name in names:
        spec = COMMANDS[name]
        argv = [a.format(**subst) for a in spec["argv"]]
        res = results[name] = Result(name)
        why = _supported(argv, spec.get("needs"))
        if why:
            res.note = "skipped: " + why
            print(f"scale run: {name}: {res.note}", file=sys.stderr)
            continue
        res.out = str(tmp / f"{name}.out")
        for i in range(args.warmup + args.reps):
            wall, cpu, rc, main, peaks = timed(argv, res.out, args.timeout)
            if rc != 0:
                res.rc = rc
                err = Path(res.out + ".err").read_text(errors="replace").strip().splitlines()
                res.note = f"exit {rc}: {err[-1] if err else ''}"
                print(f"scale run: {name}: {res.note}", file=sys.stderr)
                break
            kids: dict[str, float] = {}
            for lab, mib in peaks.values():
                k = lab
                n = 1
                while k in kids:
                    n += 1
                    k = f"{lab} {n}"
                kids[k] = mib
            warm = i < args.warmup
            print(
                f"  {name:<26} {wall:8.2f} s  cpu {cpu:8.2f} s  peak {main:8.0f} MiB"
                + "".join(f"  {k} {v:.0f}" for k, v in kids.items())
                + ("  (warm-up)" if warm else ""),
                file=sys.stderr,
                flush=True,
            )
            if not warm:
                res.wall.append(wall)
                res.cpu.append(cpu)
                res.peak_main.append(main)
                res.peak_children.append(kids)
    load_after = os.getloadavg()
    # outputs that must be byte-identical
    same: dict[str, list[str]] = {}
    for name, res in results.items():
        key = COMMANDS[name].get("same")
        if key and res.out and not res.note:
            same.setdefault(key, []).append(name)
    identical: dict[str, str] = {}
    for group in same.values():
        ref = Path(results[group[0]].out).read_bytes()
        for other in group[1:]:
            identical[other] = (
                f"byte-identical to {group[0]}"
                if Path(results[other].out).read_bytes() == ref
                else f"DIFFERS from {group[0]}"
            )
    # the log's summaries against the pandas baseline's, to 1e-9
    base = results.get("baseline_pandas")
    if base and base.out and not base.note:
        ref = json.loads(Path(base.out).read_text())["summary"]
        for name, res in results.items():
            if name == "baseline_pandas" or COMMANDS[name]["group"] != "log" or not res.out or res.note:
                continue
            try:
                got = {k: float(v) for k, v in json.loads(Path(res.out).read_text())["summary"].items()}
                worst = max(abs(got[k] - v) for k, v in ref.items())
                verdict = f"summary agrees with baseline_pandas to {worst:.1e}" if worst <= 1e-9 else "DISAGREES"
            except (ValueError, KeyError) as exc:
                verdict = f"cannot compare with baseline_pandas ({exc})"
            identical[name] = "; ".join(x for x in (identical.get(name, ""), verdict) if x)
    report = render(results, rows, identical, load_before, load_after, args)
    print(report)
    if args.json:
        Path(args.json).write_text(
            json.dumps({n: {**r.__dict__, "identical": identical.get(n, "")} for n, r in results.items()}, indent=1)
        )
    for name, res in results.items():  # the log's summaries, small JSON
        if COMMANDS[name]["group"] == "log" and res.out and not res.note:
            try:
                summary = json.loads(Path(res.out).read_text())["summary"]
            except (ValueError, KeyError):
                continue
            print(f"{name} summary: " + json.dumps(summary))
    if not args.out_dir:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _med(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def render(
    results: dict[str, Result], rows: dict, identical: dict, lb: tuple, la: tuple, args: argparse.Namespace
) -> str:
    lines = [
        f"load average (1/5/15 min) before {lb[0]:.2f}/{lb[1]:.2f}/{lb[2]:.2f}, after {la[0]:.2f}/{la[1]:.2f}/{la[2]:.2f}; "
        f"median of {args.reps} after {args.warmup} warm-up",
        "",
        "| command | rows | wall (s) | CPU (s) | rows/s | peak RSS main (MiB) | peak RSS per child (MiB) | output |",
        "|---|---:|---:|---:|---:|---:|---|---|",
    ]
    for name, r in results.items():
        n = rows.get(COMMANDS[name]["group"])
        if r.note or not r.wall:
            lines.append(
                f"| {name} | {n or '-':,} | | | | | | {r.note} |"
                if isinstance(n, int)
                else f"| {name} | | | | | | | {r.note} |"
            )
            continue
        w = _med(r.wall)
        kids = r.peak_children[-1] if r.peak_children else {}
        kid_txt = ", ".join(f"{k} {max(pc.get(k, 0) for pc in r.peak_children):.0f}" for k in kids) or "-"
        lines.append(
            f"| {name} | {n:,} | {w:.2f} | {_med(r.cpu):.2f} | {n / w:,.0f} | {max(r.peak_main):.0f} | {kid_txt} | "
            f"{identical.get(name, '')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen", help="write the impression log")
    for p in (
        g,
        sub.add_parser("check", help="baseline vs ireval on a small log"),
        sub.add_parser("run", help="time COMMANDS"),
    ):
        p.add_argument("--users", type=int, default=500_000)
        p.add_argument("--items", type=int, default=100)
        p.add_argument("--pos-rate", type=float, default=0.03)
        p.add_argument("--seed", type=int, default=SEED)
    g.add_argument("--files", type=int, default=64)
    g.add_argument("--layouts", default="flat,hive,single", help="comma list of flat, hive, single")
    b = sub.add_parser("baseline", help="the pandas/pyarrow baseline on a Parquet file or directory")
    b.add_argument("path")
    s = sub.add_parser("shuffle", help="the big run in random line order")
    s.add_argument("--seed", type=int, default=SEED)
    for p in sub.choices.values():
        if p.prog.endswith(" check"):
            p.add_argument("--ireval", default=IREVAL)
            p.set_defaults(users=2000)
        if p.prog.endswith(" run"):
            p.add_argument("--only", default="log,shuffled", help="comma list of command names or sets (log, shuffled)")
            p.add_argument("--reps", type=int, default=3)
            p.add_argument("--warmup", type=int, default=0)
            p.add_argument("--timeout", type=float, default=3600.0)
            p.add_argument("--json", help="also write the results as JSON here")
            p.add_argument("--out-dir", help="keep every command's output here (default: a temporary directory)")
    args = ap.parse_args(argv)
    return {"gen": cmd_gen, "baseline": cmd_baseline, "check": cmd_check, "shuffle": cmd_shuffle, "run": cmd_run}[
        args.cmd
    ](args)


if __name__ == "__main__":
    sys.exit(main())
