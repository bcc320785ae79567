"""Cost of the building blocks an evaluator needs, on one run file (for planning, not a benchmark).

    .venv/bin/python benchmarks/primitives.py benchmarks/data/msmarco/run.txt benchmarks/data/msmarco/qrels.txt

Each line: wall and CPU (process, all threads) seconds, and the RSS after the step.
"""

from __future__ import annotations

import os
import sys
import time


def rss_mib() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


class Step:
    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> Step:
        self.w, self.c = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        w, c = time.perf_counter() - self.w, time.process_time() - self.c
        print(f"{self.name:<58} wall {w:7.3f}  cpu {c:7.3f}  rss {rss_mib():7.0f} MiB", flush=True)


def main() -> int:
    run_path, qrels_path = sys.argv[1], sys.argv[2]
    with Step("import numpy, pyarrow, pyarrow.csv, pyarrow.compute"):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyarrow import csv
    with Step("read file into bytes"), open(run_path, "rb") as fh:
        data = fh.read()
    with Step("hashlib.sha256 of the bytes"):
        import hashlib

        hashlib.sha256(data).hexdigest()
    with Step("5x bytes.find (whitespace / CR / NUL checks)"):
        for b in (b"\t", b"\r", b"\v", b"\f", b"\x00"):
            data.find(b)
    names = ["qid", "it", "docno", "rank", "score", "tag"]

    def read(threads: bool, cols: list[str], types: dict) -> pa.Table:
        return csv.read_csv(
            pa.BufferReader(data),
            csv.ReadOptions(column_names=names, use_threads=threads, block_size=1 << 24),
            csv.ParseOptions(delimiter=" ", quote_char=False, escape_char=False),
            csv.ConvertOptions(column_types=types, include_columns=cols, strings_can_be_null=False),
        )

    with Step("pyarrow read_csv qid,docno,score (1 thread)"):
        read(
            False,
            ["qid", "docno", "score"],
            {"qid": pa.large_binary(), "docno": pa.large_binary(), "score": pa.float64()},
        )
    with Step("pyarrow read_csv qid,docno,score (threads)"):
        t = read(
            True,
            ["qid", "docno", "score"],
            {"qid": pa.large_binary(), "docno": pa.large_binary(), "score": pa.float64()},
        )
    with Step("pyarrow read_csv all 6 columns as binary (threads)"):
        read(True, names, {n: pa.large_binary() for n in names})
    with Step("pyarrow read_csv qid,docno,score as dictionary (threads)"):
        read(
            True,
            ["qid", "docno", "score"],
            {"qid": pa.dictionary(pa.int32(), pa.binary()), "docno": pa.large_binary(), "score": pa.float64()},
        )
    qid = t.column("qid").combine_chunks()
    docno = t.column("docno").combine_chunks()
    score = t.column("score").to_numpy()
    n = len(qid)
    with Step("qid.dictionary_encode (few distinct)"):
        qenc = qid.dictionary_encode()
    with Step("docno.dictionary_encode (mostly distinct)"):
        docno.dictionary_encode()
    with Step("qid run-length: block starts by comparing offsets+bytes"):
        # equal neighbours in a binary column, without hashing
        off = np.frombuffer(qid.buffers()[1], dtype=np.int64)
        ln = np.diff(off)
        same_len = ln[1:] == ln[:-1]
        # compare up to 8 bytes of each qid via a padded gather (qids are short)
        buf = np.frombuffer(qid.buffers()[2], dtype=np.uint8)
        w = int(ln.max())
        idx = off[:-1, None] + np.arange(w)[None, :]
        mat = np.where(np.arange(w)[None, :] < ln[:, None], buf[np.minimum(idx, len(buf) - 1)], 0)
        same = same_len & (mat[1:] == mat[:-1]).all(axis=1)
        starts = np.flatnonzero(~same) + 1
    print(f"    ({len(starts) + 1} topic blocks)")
    del mat, idx
    with Step("docno: cast to int64 (numeric docnos)"):
        try:
            dint = pc.cast(docno.cast(pa.large_string()), pa.int64()).to_numpy()
        except pa.ArrowInvalid:
            dint = None
    with Step("docno: pack into big-endian uint64 words (<=16 bytes)"):
        off = np.frombuffer(docno.buffers()[2 - 1], dtype=np.int64)
        buf = np.frombuffer(docno.buffers()[2], dtype=np.uint8)
        ln = np.diff(off)
        w = int(ln.max())
        words = (w + 7) // 8
        packed = np.zeros((n, words * 8), dtype=np.uint8)
        lim = len(buf) - 1
        for j in range(w):
            packed[:, j] = np.where(ln > j, buf[np.minimum(off[:-1] + j, lim)], 0)
        keys = packed.view(">u8").astype(np.uint64)
    print(f"    (max docno length {w}: {words} word(s))")
    codes = qenc.indices.to_numpy().astype(np.int64)
    with Step("np.lexsort((-score, topic))"):
        np.lexsort((-score, codes))
    with Step("np.argsort(topic, stable)"):
        np.argsort(codes, kind="stable")
    with Step("check grouped & sorted: diff-based, one pass"):
        same = codes[1:] == codes[:-1]
        bad = (same & (score[1:] > score[:-1])).any()
    print(f"    (already in order: {not bad})")
    if dint is not None:
        with Step("duplicate check: sort (topic<<40 | docint) uint64"):
            k = (codes.astype(np.uint64) << np.uint64(40)) | dint.astype(np.uint64)
            ks = np.sort(k)
            (ks[1:] == ks[:-1]).any()
    with Step("duplicate check: pandas hashtable on (topic, word0..)"):
        import pandas as pd

        h = keys[:, 0] * np.uint64(0x9E3779B97F4A7C15)
        for j in range(1, words):
            h = (h ^ keys[:, j]) * np.uint64(0x9E3779B97F4A7C15)
        h ^= codes.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)
        pd.Series(h).duplicated().any()
    with open(qrels_path, "rb") as fh:
        qdata = fh.read()
    qt = csv.read_csv(
        pa.BufferReader(qdata),
        csv.ReadOptions(column_names=["qid", "it", "docno", "rel"]),
        csv.ParseOptions(delimiter=" "),
        csv.ConvertOptions(column_types={"qid": pa.large_binary(), "docno": pa.large_binary(), "rel": pa.int64()}),
    )
    qdoc = qt.column("docno").combine_chunks()
    with Step("label join: pc.index_in(run docno, qrels docnos)"):
        hit = pc.index_in(docno, value_set=pc.unique(qdoc)).to_numpy(zero_copy_only=False)
    print(f"    ({int(np.sum(~np.isnan(hit.astype(float))))} run rows share a docno with the qrels)")
    with Step("np.bincount(topic, weights) x10"):
        for _ in range(10):
            np.bincount(codes, weights=score)
    with Step("np.cumsum float64 x10"):
        for _ in range(10):
            np.cumsum(score)
    with Step("format 700k trec lines (-q all_trec on 7k topics) via %"):
        lab = "P_10"
        values = np.zeros(700_000).tolist()
        "".join("%-22s\t%s\t%6.4f\n" % (lab, q, v) for q, v in enumerate(values))
    return 0


if __name__ == "__main__":
    sys.exit(main())
