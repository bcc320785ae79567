"""Seeded generator of realistic TREC collections for benchmarking ireval.

Writes ``benchmarks/data/<name>/qrels.txt`` and ``run.txt`` (TREC text format):

  msmarco   6,980 queries x 1,000 docs (7.0M run lines); ~1.07 judgements per
            query, all label 1; numeric passage ids 0..8,841,822; float scores
            quantised to 1e-3, so a few percent of rows tie with a neighbour.
  dl        43 queries x 1,000 docs; ~215 graded judgements (0-3) per query,
            most of them non-relevant; passage ids as in msmarco.
  robust04  249 queries (301-450, 601-700 without 672) x 1,000 docs; binary
            labels, ~70 relevant and ~1,250 judged per query; docnos such as
            ``FBIS3-12345``, ``FT921-4321``, ``LA010189-0001``, ``FR940104-0-00001``.
  big       100,000 queries x 100 docs (10M run lines); ~1.5 relevant per query.

The run is grouped by topic, in a shuffled (not sorted) topic order, and each
topic is listed best first. Scores are non-increasing down a topic; tied
documents are listed in random order, so an evaluator must re-sort the ties
(trec_eval breaks them by docno descending) instead of trusting the file.
Relevant documents are placed in the run with a bias towards the top ranks,
unjudged filler documents make up the rest.

The output is a function of (collection, scale, seed) only: the same
arguments give byte-identical files.

    python benchmarks/generate.py                       # every collection, full size
    python benchmarks/generate.py --which msmarco --scale 0.1 --seed 7
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
DEFAULT_SEED = 20240607


@dataclass(frozen=True)
class Spec:
    """How one collection looks."""

    name: str
    index: int  # mixed into the seed so collections are independent
    n_queries: int
    depth: int  # docs per query in the run
    docspace: int  # size of the document id space
    docnos: str  # "passage" (numeric) or "trec" (TREC disk 4/5 style)
    rel_mean: float  # relevant judgements per query (mean)
    nonrel_mean: float  # judged non-relevant per query (mean)
    grades: tuple[float, ...]  # probabilities of labels 1..G among relevant docs
    p_rel_in_run: float  # chance that a relevant doc is retrieved
    rel_bias: float  # rank key = U**bias (larger: nearer the top)
    p_nonrel_in_run: float
    nonrel_bias: float
    score_top: tuple[float, float]  # mean, sd of a topic's best score
    score_spread: float  # best minus worst score, roughly
    quantum: float  # scores are rounded to a multiple of this
    runid: str
    qids: str  # "msmarco" (random 6-7 digit ids), "robust04", "dl", "seq"


SPECS: dict[str, Spec] = {
    s.name: s
    for s in (
        Spec(
            "msmarco",
            1,
            6980,
            1000,
            8_841_823,
            "passage",
            1.065,
            0.0,
            (1.0,),
            0.86,
            4.5,
            0.0,
            1.0,
            (27.0, 3.0),
            12.0,
            1e-3,
            "bm25-msmarco",
            "msmarco",
        ),
        Spec(
            "dl",
            2,
            43,
            1000,
            8_841_823,
            "passage",
            95.0,
            120.0,
            (0.45, 0.35, 0.20),
            0.75,
            2.0,
            0.55,
            1.5,
            (28.0, 3.0),
            12.0,
            1e-4,
            "dl-bm25",
            "dl",
        ),
        Spec(
            "robust04",
            3,
            249,
            1000,
            528_155,
            "trec",
            70.0,
            1180.0,
            (1.0,),
            0.70,
            3.3,
            0.45,
            1.6,
            (14.0, 3.0),
            8.0,
            1e-4,
            "robust04-bm25",
            "robust04",
        ),
        Spec(
            "big",
            4,
            100_000,
            100,
            138_364_198,
            "passage",
            1.5,
            0.0,
            (1.0,),
            0.70,
            2.5,
            0.0,
            1.0,
            (80.0, 4.0),
            6.0,
            1e-3,
            "dense-big",
            "seq",
        ),
    )
}


def data_dir(which: str, scale: float = 1.0, seed: int = DEFAULT_SEED) -> Path:
    """Where a collection lives: ``data/<name>`` at full size, ``data/<name>-s<scale>-<seed>`` otherwise."""
    if scale == 1.0 and seed == DEFAULT_SEED:
        return DATA / which
    return DATA / f"{which}-s{scale:g}-{seed}"


# --------------------------------------------------------------------------
# ids


def _qids(spec: Spec, n: int, rng: np.random.Generator) -> np.ndarray:
    import numpy as np

    if spec.qids == "robust04":
        pool = np.array([q for q in list(range(301, 451)) + list(range(601, 701)) if q != 672])
        if n <= len(pool):
            return np.sort(rng.choice(pool, n, replace=False)) if n < len(pool) else pool
        return np.arange(301, 301 + n)
    if spec.qids == "seq":
        return np.sort(rng.choice(10 * n, n, replace=False)) + 1
    # msmarco / dl: ids drawn from 2..1,102,400 (MS MARCO's query id range)
    return np.sort(rng.choice(1_102_400, n, replace=False)) + 2


_TREC_SOURCES = ("FBIS3", "FBIS4", "FT9", "LA", "FR94")


def _trec_docnos(ids: np.ndarray) -> np.ndarray:
    """Map integers to TREC disk 4/5-like docnos, one-to-one."""
    import numpy as np

    ids = np.asarray(ids, dtype=np.int64)
    src = ids % 5
    k = ids // 5
    out = np.empty(len(ids), dtype=object)
    for s, name in enumerate(_TREC_SOURCES):
        m = src == s
        v = k[m]
        if name.startswith("FBIS"):
            txt = [f"{name}-{x + 1}" for x in v.tolist()]
        elif name == "FT9":
            txt = [f"FT9{11 + x % 14}-{x // 14 + 1}" for x in v.tolist()]
        elif name == "LA":
            txt = [
                f"LA{1 + x % 12:02d}{1 + (x // 12) % 28:02d}{89 + (x // 336) % 2}-{x // 672 + 1:04d}"
                for x in v.tolist()
            ]
        else:
            txt = [
                f"FR94{1 + x % 12:02d}{1 + (x // 12) % 28:02d}-{(x // 336) % 3}-{x // 1008 + 1:05d}" for x in v.tolist()
            ]
        out[m] = txt
    return out


def _docno_strings(spec: Spec, ids: np.ndarray) -> np.ndarray:
    if spec.docnos == "trec":
        return _trec_docnos(ids)
    return ids  # numeric passage ids are written as integers


# --------------------------------------------------------------------------
# sampling


def _unique_per_group(
    groups: np.ndarray, ids: np.ndarray, space: int, rng: np.random.Generator, fixed: np.ndarray | None = None
) -> np.ndarray:
    """Redraw ``ids`` until no (group, id) pair repeats; ``fixed`` rows are never redrawn."""
    import numpy as np

    ids = ids.copy()
    for _ in range(100):
        key = groups.astype(np.int64) * space + ids
        order = np.argsort(key, kind="stable")
        ks = key[order]
        dup_sorted = np.flatnonzero(ks[1:] == ks[:-1]) + 1
        if len(dup_sorted) == 0:
            return ids
        dup = order[dup_sorted]
        if fixed is not None:
            # redraw the non-fixed member of each duplicate pair
            other = order[dup_sorted - 1]
            dup = np.where(fixed[dup], other, dup)
            if fixed[dup].any():
                raise RuntimeError("two fixed rows collide")
        ids[dup] = rng.integers(0, space, len(dup))
    raise RuntimeError("could not draw unique ids")


def generate(which: str, scale: float = 1.0, seed: int = DEFAULT_SEED) -> dict:
    """Build one collection in memory: returns columns for qrels and run."""
    import numpy as np

    spec = SPECS[which]
    rng = np.random.default_rng([seed, spec.index])
    nq = max(1, round(spec.n_queries * scale))
    qids = _qids(spec, nq, rng)

    # ---- judgements per query
    if spec.rel_mean < 5:  # sparse (MS MARCO style): 1 + Poisson extra
        n_rel = 1 + rng.poisson(spec.rel_mean - 1.0, nq)
    else:
        n_rel = np.maximum(1, rng.negative_binomial(3, 3 / (3 + spec.rel_mean), nq))
    n_nonrel = rng.poisson(spec.nonrel_mean, nq) if spec.nonrel_mean > 0 else np.zeros(nq, dtype=np.int64)
    n_judged = n_rel + n_nonrel
    jq = np.repeat(np.arange(nq), n_judged)
    is_rel_j = _rel_mask(n_rel, n_nonrel)
    grades = np.asarray(spec.grades)
    label = np.zeros(len(jq), dtype=np.int64)
    label[is_rel_j] = 1 + rng.choice(len(grades), int(is_rel_j.sum()), p=grades / grades.sum())
    jdoc = _unique_per_group(jq, rng.integers(0, spec.docspace, len(jq)), spec.docspace, rng)

    # ---- which judged docs are retrieved, and how high (key: lower = better)
    p_in = np.where(is_rel_j, spec.p_rel_in_run, spec.p_nonrel_in_run)
    if len(grades) > 1:  # higher grades are retrieved more often and higher
        p_in = np.where(is_rel_j, np.minimum(0.98, p_in * (0.8 + 0.15 * label)), p_in)
    in_run = rng.random(len(jq)) < p_in
    bias = np.where(is_rel_j, spec.rel_bias * (1 + 0.3 * (label - 1)), spec.nonrel_bias)
    jkey = rng.random(len(jq)) ** bias
    per_q_in = np.bincount(jq[in_run], minlength=nq)
    # keep at most depth judged docs per query (the best keys)
    rq, rdoc, rkey = jq[in_run], jdoc[in_run], jkey[in_run]
    if (per_q_in > spec.depth).any():
        o = np.lexsort((rkey, rq))
        rq, rdoc, rkey = rq[o], rdoc[o], rkey[o]
        starts = np.r_[0, np.cumsum(per_q_in)[:-1]]
        pos = np.arange(len(rq)) - starts[rq]
        keep = pos < spec.depth
        rq, rdoc, rkey = rq[keep], rdoc[keep], rkey[keep]
        per_q_in = np.bincount(rq, minlength=nq)

    # ---- unjudged filler docs up to depth
    n_fill = spec.depth - per_q_in
    fq = np.repeat(np.arange(nq), n_fill)
    fdoc = rng.integers(0, spec.docspace, len(fq))
    fkey = rng.random(len(fq))
    run_q = np.concatenate((rq, fq))
    run_doc = np.concatenate((rdoc, fdoc))
    run_key = np.concatenate((rkey, fkey))
    fixed = np.r_[np.ones(len(rq), bool), np.zeros(len(fq), bool)]
    # a filler doc must be neither a judged doc of its topic nor a repeat
    allq = np.concatenate((jq, run_q[~fixed]))
    alld = np.concatenate((jdoc, run_doc[~fixed]))
    allfixed = np.r_[np.ones(len(jq), bool), np.zeros(len(fq), bool)]
    alld = _unique_per_group(allq, alld, spec.docspace, rng, fixed=allfixed)
    run_doc[~fixed] = alld[len(jq) :]

    # ---- rank by key, then scores: non-increasing, quantised (ties)
    order = np.lexsort((run_key, run_q))
    run_q, run_doc, run_key = run_q[order], run_doc[order], run_key[order]
    counts = np.bincount(run_q, minlength=nq)
    starts = np.r_[0, np.cumsum(counts)[:-1]]
    rank = np.arange(len(run_q)) - starts[run_q] + 1
    top = rng.normal(*spec.score_top, nq)
    spread = spec.score_spread * rng.uniform(0.7, 1.3, nq)
    # sorted uniforms, not rank/depth: random gaps between neighbours, as real scores have
    u = rng.random(len(run_q))
    u = u[np.lexsort((u, run_q))]
    raw = top[run_q] - spread[run_q] * u**0.35
    score = np.round(raw / spec.quantum) * spec.quantum
    score = np.round(score, 6)  # clean decimal representation
    # tied docs are listed in random order (a retrieval system's order is arbitrary)
    shuffle = rng.random(len(run_q))
    o2 = np.lexsort((shuffle, -score, run_q))
    run_q, run_doc, score = run_q[o2], run_doc[o2], score[o2]

    # ---- topic order in the run file: shuffled, grouped
    topic_pos = rng.permutation(nq)
    o3 = np.argsort(topic_pos[run_q], kind="stable")
    run_q, run_doc, score = run_q[o3], run_doc[o3], score[o3]

    # qrels: sorted by qid, docs in random order within a topic
    o4 = np.lexsort((rng.random(len(jq)), jq))
    return {
        "spec": spec,
        "nq": nq,
        "qrels": (qids[jq[o4]], jdoc[o4], label[o4]),
        "run": (qids[run_q], run_doc, rank, score),
    }


def _rel_mask(n_rel: np.ndarray, n_nonrel: np.ndarray) -> np.ndarray:
    import numpy as np

    tot = n_rel + n_nonrel
    starts = np.r_[0, np.cumsum(tot)[:-1]]
    pos = np.arange(int(tot.sum())) - np.repeat(starts, tot)
    return pos < np.repeat(n_rel, tot)


# --------------------------------------------------------------------------
# writing


def _write_table(path: Path, columns: list, names: list[str]) -> None:
    import pyarrow as pa
    import pyarrow.csv as pcsv

    arrays = [pa.array(c) for c in columns]
    table = pa.table(arrays, names=names)
    tmp = path.with_suffix(path.suffix + ".tmp")
    opts = pcsv.WriteOptions(include_header=False, delimiter=" ", quoting_style="none", batch_size=1 << 16)
    pcsv.write_csv(table, tmp, opts)
    os.replace(tmp, path)


def write(which: str, scale: float = 1.0, seed: int = DEFAULT_SEED, *, quiet: bool = False) -> Path:
    """Generate and write one collection; returns its directory."""
    import numpy as np

    t0 = time.perf_counter()
    g = generate(which, scale, seed)
    spec: Spec = g["spec"]
    out = data_dir(which, scale, seed)
    out.mkdir(parents=True, exist_ok=True)
    qq, qd, ql = g["qrels"]
    _write_table(
        out / "qrels.txt",
        [qq, np.zeros(len(qq), np.int64), _docno_strings(spec, qd), ql],
        ["qid", "iter", "docno", "rel"],
    )
    rq, rd, rr, rs = g["run"]
    _write_table(
        out / "run.txt",
        [rq, np.full(len(rq), "Q0"), _docno_strings(spec, rd), rr, rs, np.full(len(rq), spec.runid)],
        ["qid", "iter", "docno", "rank", "score", "runid"],
    )
    ties = _tie_fraction(rq, rs)
    info = {
        "collection": which,
        "scale": scale,
        "seed": seed,
        "queries": g["nq"],
        "run_lines": len(rq),
        "qrels_lines": len(qq),
        "relevant_per_query": round(float((ql > 0).sum()) / g["nq"], 3),
        "judged_per_query": round(len(qq) / g["nq"], 3),
        "labels": {int(k): int(v) for k, v in zip(*np.unique(ql, return_counts=True), strict=True)},
        "run_bytes": (out / "run.txt").stat().st_size,
        "qrels_bytes": (out / "qrels.txt").stat().st_size,
        "rows_tied_with_next": round(ties, 4),
        "generator": "benchmarks/generate.py",
    }
    (out / "info.json").write_text(json.dumps(info, indent=2) + "\n")
    if not quiet:
        print(
            f"{out.relative_to(HERE.parent)}: {info['queries']} queries, {info['run_lines']:,} run lines "
            f"({info['run_bytes'] / 2**20:.0f} MiB), {info['qrels_lines']:,} qrels lines, "
            f"{ties:.1%} rows tied ({time.perf_counter() - t0:.1f} s)",
            file=sys.stderr,
        )
    return out


def _tie_fraction(q: np.ndarray, s: np.ndarray) -> float:

    if len(q) < 2:
        return 0.0
    same = (q[1:] == q[:-1]) & (s[1:] == s[:-1])
    return float(same.mean())


def ensure(which: str, scale: float = 1.0, seed: int = DEFAULT_SEED, *, quiet: bool = False) -> Path:
    """The collection's directory, generating it first if it is missing."""
    d = data_dir(which, scale, seed)
    if (d / "info.json").exists() and (d / "run.txt").exists() and (d / "qrels.txt").exists():
        return d
    return write(which, scale, seed, quiet=quiet)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--which", action="append", choices=[*SPECS, "all"], help="collection(s) to write (repeatable; default: all)"
    )
    ap.add_argument("--scale", type=float, default=1.0, help="fraction of the queries to generate (default 1)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"random seed (default {DEFAULT_SEED})")
    args = ap.parse_args(argv)
    if not 0 < args.scale <= 10:
        ap.error("--scale must be in (0, 10]")
    which = args.which or ["all"]
    names = list(SPECS) if "all" in which else list(dict.fromkeys(which))
    for w in names:
        write(w, args.scale, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
