"""The measurement benchmarks/SCALING.md rests on: a synthetic impression log scored by
``--engine dask`` on a LocalCluster of 2 workers, with the bytes Dask's P2P shuffle moved.

    python benchmarks/dask_scaling.py --users 50000 --items 100 --files 10 --dir /tmp/implog

Labels 0/1 with a few percent positives; users written in random order over ``--files``
Parquet files (so rows must be shuffled by user). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time


def generate(path: str, users: int, items: int, files: int, seed: int = 0) -> int:
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    os.makedirs(path, exist_ok=True)
    rng = np.random.default_rng(seed)
    per = np.array_split(rng.permutation(users), files)
    n = 0
    for i, us in enumerate(per):
        qid = np.repeat(us, items)
        doc = rng.integers(0, 1_000_000, size=len(qid))
        # distinct items per user: offset by position
        doc = doc - doc % items + np.tile(np.arange(items), len(us))
        score = rng.random(len(qid))
        rel = (rng.random(len(qid)) < 0.03 + 0.1 * score).astype(np.int8)
        order = rng.permutation(len(qid))
        t = pa.table(
            {
                "qid": pa.array([f"u{u}" for u in qid[order]]),
                "docno": pa.array([f"i{d}" for d in doc[order]]),
                "score": score[order],
                "rel": rel[order],
            }
        )
        pq.write_table(t, os.path.join(path, f"part-{i:03d}.parquet"))
        n += t.num_rows
    return n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--users", type=int, default=50_000)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--files", type=int, default=10)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--dir", default="/tmp/ireval-implog")
    ap.add_argument("--local", action="store_true", help="also time the local engine")
    args = ap.parse_args()
    rows = args.users * args.items
    if not os.path.isdir(args.dir):
        generate(args.dir, args.users, args.items, args.files)
    from distributed import Client, LocalCluster

    from irevalcli.api import evaluate
    from irevalcli.engine.dask_engine import session

    measures = ["auc", "gauc", "ndcg_cut.10", "recip_rank"]
    out: dict = {"rows": rows, "files": args.files, "workers": args.workers, "measures": measures}
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            silence_logs=logging.CRITICAL,
            dashboard_address=":0",
        ) as lc,
        Client(lc) as client,
        session("dask", scheduler=lc.scheduler_address),
    ):
        from distributed import get_task_stream

        t0 = time.perf_counter()
        with get_task_stream(client) as ts:
            ev = evaluate(None, args.dir, measures, labelled=True, engine="dask", hash_inputs=False)
        wall = time.perf_counter() - t0
        busy: dict[str, float] = {}
        for task in ts.data:
            prefix = str(task["key"][0] if isinstance(task["key"], tuple) else task["key"]).rsplit("-", 1)[0]
            for span in task["startstops"]:
                if span["action"] == "compute":
                    busy[prefix] = busy.get(prefix, 0.0) + span["stop"] - span["start"]
        metrics = client.run_on_scheduler(lambda dask_scheduler: dict(dask_scheduler.cumulative_worker_metrics))
        peaks = client.run(lambda dask_worker: dask_worker.monitor.range_query(start=0)["memory"])
    # bytes the P2P shuffle sent between workers (its comms), and wrote to its disk buffers
    shuffled = sum(
        v for k, v in metrics.items() if k[:3] == ("p2p", "background-comms", "process") and k[-1] == "bytes"
    )
    spilled = sum(
        v for k, v in metrics.items() if k[:3] == ("p2p", "background-disk", "disk-write") and k[-1] == "bytes"
    )
    out.update(
        dask_wall_s=round(wall, 2),
        dask_rows_per_s=round(rows / wall),
        dask_rows_per_s_per_worker=round(rows / wall / args.workers),
        shuffle_bytes=shuffled,
        shuffle_bytes_per_row=round(shuffled / rows, 1) if shuffled else None,
        shuffle_disk_bytes_per_row=round(spilled / rows, 1) if spilled else None,
        task_compute_s={k: round(v, 2) for k, v in sorted(busy.items(), key=lambda kv: -kv[1])[:8]},
        rows_per_task_second=round(rows / sum(busy.values())) if busy else None,
        p2p_metrics={" ".join(map(str, k)): v for k, v in metrics.items() if isinstance(k, tuple) and "p2p" in k},
        worker_peak_rss_mib={w: round(max(m) / 2**20) for w, m in peaks.items() if m},
        summary={c.label: c.summary for c in ev.results.columns},
    )
    if args.local:
        t0 = time.perf_counter()
        local = evaluate(None, args.dir, measures, labelled=True, hash_inputs=False)
        out["local_wall_s"] = round(time.perf_counter() - t0, 2)
        out["identical"] = local.summary.equals(ev.summary) and local.per_query.equals(ev.per_query)
    print(json.dumps(out, indent=1, default=str))


if __name__ == "__main__":
    main()
