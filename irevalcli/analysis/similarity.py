"""Rank similarity between two runs, without judgements: rank-biased overlap and Kendall's
tau over the top k, per topic.

**Rankings.** Each run's documents for a topic are ranked as ireval ranks them for evaluation
(score descending, ties by docno descending, or the ``--ties`` rule): :func:`core.table.rank_order`.

**Rank-biased overlap** (Webber, Moffat & Zobel, "A similarity measure for indefinite
rankings", ACM TOIS 28(4), 2010). With ``X_d`` the number of documents the two rankings share
in their top ``d`` (the overlap, ``A_d = X_d / d`` the agreement) and persistence ``p``,
``RBO = (1 - p) sum_{d >= 1} p^(d-1) A_d``. A run is a prefix of an indefinite ranking: the
shorter list has ``s`` documents, the longer ``l`` (``s <= l``; beyond ``s`` the shorter
list's top ``d`` is all of it), and ``depth=K`` cuts both at ``K`` first.

* ``rbo_min`` (the paper's eq. 11, uneven lists as in its section 4.3): the score if the
  unseen tails share nothing more, ``X_d = X_l`` for ``d > l``:
  ``(1-p)/p * (sum_{d=1}^{l} (X_d - X_l) p^d / d - X_l ln(1 - p))``.
* ``rbo_res``: the residual, how much the unseen tails could still add (RBO_MAX - RBO_MIN,
  eqs. 12-13 and their uneven form): each unseen document may match one seen and unmatched,
  so the overlap could grow by one a depth for ``s < d <= l`` and by two beyond ``l``, up to
  ``d`` at ``f = l + s - X_l``:
  ``(1-p)/p * (sum_{d=s+1}^{l} (d-s) p^d / d + sum_{d=l+1}^{f} (2d-s-l) p^d / d
  - X_l sum_{d>f} p^d / d) + p^f``.
* ``rbo_ext`` (eq. 32): the point estimate that extrapolates the agreement seen at the end
  of each list:
  ``(1-p)/p * (sum_{d=1}^{l} X_d p^d / d + sum_{d=s+1}^{l} X_s (d-s) p^d / (s d))
  + ((X_l - X_s) / l + X_s / s) p^l``.

``rbo_min <= rbo_ext <= rbo_min + rbo_res`` and identical rankings give rbo_min + rbo_res =
rbo_ext = 1.

**Kendall's tau over the top k** (tau-b, Kendall 1945), over the union of the two top-k
lists, a document missing from a list's top k placed after it, at rank k + 1, tied with the
other missing ones: Fagin, Kumar & Sivakumar's "k + 1 placement" ("Comparing top k lists",
SIAM J. Discrete Math. 17(1), 2003). A pair in both top k counts by its ranks; a pair of
which one is in only one list counts as that list orders it (the present one first); a pair
one in each list only is discordant; a pair missing from the same list is tied there and
counts only in tau-b's denominator. ``tau = (concordant - discordant) /
sqrt((n0 - n1)(n0 - n2))``, ``n0 = n(n-1)/2`` over the ``n`` documents of the union, ``n1``
and ``n2`` the pairs tied in each list. It is ``scipy.stats.kendalltau`` (variant b) of the
two rank vectors over the union. A union of one document has no pair: NaN (``-nan`` in trec
text, null in JSON), left out of the mean.

Everything is vectorised over topics and documents: overlaps are cumulative counts of the
depth at which each shared document has been seen by both lists; discordant pairs among
the shared documents are counted bit by bit of their rank (a radix-style inversion count).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import MeasureParamError, UnknownMeasureError, UsageError

if TYPE_CHECKING:
    import numpy as np

    from ..io.trec import Run

RBO_FIELDS = ("rbo_min", "rbo_res", "rbo_ext")
DEFAULT_P = 0.9
DEFAULT_K = 10
DEFAULT_MEASURES = ("rbo", "kendall_tau")


@dataclass(frozen=True)
class SimilarityMeasure:
    """One ``-m`` of ``ireval similarity``: a measure and its parameters."""

    spec: str  # as typed
    name: str  # rbo | rbo_min | rbo_res | rbo_ext | kendall_tau
    p: float = DEFAULT_P  # rbo: persistence
    depth: int | None = None  # rbo: evaluation depth (None: each list whole)
    k: int = DEFAULT_K  # kendall_tau: the top k

    @property
    def fields(self) -> tuple[str, ...]:
        return RBO_FIELDS if self.name == "rbo" else (self.name,)

    @property
    def params(self) -> str:
        if self.name == "kendall_tau":
            return f"k={self.k}"
        return f"p={self.p:g}" + ("" if self.depth is None else f",depth={self.depth}")

    @property
    def labels(self) -> list[str]:
        """Output labels, each with its parameters: ``rbo_ext_p=0.9``, ``kendall_tau_k=10``."""
        return [f"{f}_{self.params}" for f in self.fields]


_NAMES = ("rbo", *RBO_FIELDS, "kendall_tau")


def parse_measure(spec: str) -> SimilarityMeasure:
    """``rbo``, ``rbo.p=0.9``, ``rbo.p=0.95,depth=100``, ``rbo_ext.p=0.8``, ``kendall_tau``,
    ``kendall_tau.k=10`` (or ``kendall_tau.10``)."""
    name, dot, text = spec.partition(".")
    if name not in _NAMES:
        import difflib

        close = difflib.get_close_matches(name, _NAMES, n=1, cutoff=0.6)
        hint = f" (did you mean '{close[0]}'?)" if close else ""
        raise UnknownMeasureError(
            f"unknown similarity measure '{spec}'{hint}; similarity measures: rbo, rbo_min, rbo_res, "
            "rbo_ext (rbo.p=0.9,depth=K), kendall_tau (kendall_tau.k=10)"
        )
    if dot and not text:
        raise MeasureParamError(f"{spec}: a '.' must be followed by parameters (e.g. rbo.p=0.9)")
    args: dict[str, str] = {}
    if text:
        for item in text.split(","):
            key, eq, val = item.partition("=")
            if not eq and name == "kendall_tau" and not args:
                key, val = "k", item  # kendall_tau.10
            elif not eq or not key:
                raise MeasureParamError(f"{spec}: malformed parameter '{item}' (expected key=value, e.g. p=0.9)")
            if key in args:
                raise MeasureParamError(f"{spec}: {key} is given twice")
            args[key.strip()] = val.strip()
    allowed = ("k",) if name == "kendall_tau" else ("p", "depth")
    for key in args:
        if key not in allowed:
            raise MeasureParamError(f"{spec}: {name} takes no parameter '{key}' (it takes: {', '.join(allowed)})")
    if name == "kendall_tau":
        return SimilarityMeasure(spec, name, k=_positive(args.get("k"), DEFAULT_K, spec, "k"))
    p = DEFAULT_P
    if "p" in args:
        if not re.fullmatch(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?", args["p"]):
            raise MeasureParamError(f"{spec}: p '{args['p']}' is not a number")
        p = float(args["p"])
        if not 0 < p < 1:
            raise MeasureParamError(f"{spec}: p = {args['p']} is outside (0, 1): the persistence is a probability")
    depth = _positive(args["depth"], None, spec, "depth") if "depth" in args else None
    return SimilarityMeasure(spec, name, p=p, depth=depth)


def _positive(text: str | None, default: Any, spec: str, what: str) -> Any:
    if text is None:
        return default
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise MeasureParamError(f"{spec}: {what} '{text}' is not a whole number")
    value = int(text)
    if value < 1:
        raise MeasureParamError(f"{spec}: {what} = {value} must be at least 1")
    return value


def parse_measures(specs: list[str]) -> list[SimilarityMeasure]:
    """Every ``-m`` (blank-separated lists split as for evaluation), each label once."""
    from ..measures.names import split_specs

    out: list[SimilarityMeasure] = []
    seen: set[str] = set()
    for spec in split_specs(specs) or list(DEFAULT_MEASURES):
        m = parse_measure(spec)
        if any(label in seen for label in m.labels):
            continue
        seen.update(m.labels)
        out.append(m)
    return out


# ---- the two rankings, topic by topic ------------------------------------------------------


@dataclass
class Rankings:
    """Both runs ranked, with the topics they share.

    ``qids``: the topics compared, bytewise order. For each run, per row in ranked order:
    ``topic`` (index into ``qids``), ``rank`` (1-based) and ``doc`` (a document code shared by
    both runs); ``length`` per topic."""

    qids: list[str]
    topic_a: np.ndarray
    rank_a: np.ndarray
    doc_a: np.ndarray
    length_a: np.ndarray
    topic_b: np.ndarray
    rank_b: np.ndarray
    doc_b: np.ndarray
    length_b: np.ndarray
    only: tuple[list[str], list[str]]  # topics left out: in run A only, in run B only


def _decode(b: bytes) -> str:
    return b.decode("utf-8", "surrogateescape")


def rankings(run_a: Run, run_b: Run, ties: str = "docno", *, shared_only: bool = False) -> Rankings:
    """Rank both runs and code their topics and documents alike. A topic in one run only is
    an error naming it, unless ``shared_only`` (then it is left out and reported in ``only``)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..core.table import rank_order, refuse_repeated_documents
    from ..io.arrow import to_numpy

    qid = pa.concat_arrays([run_a.qid.cast(pa.large_binary()), run_b.qid.cast(pa.large_binary())])
    doc = pa.concat_arrays([run_a.docno.cast(pa.large_binary()), run_b.docno.cast(pa.large_binary())])
    qenc = qid.dictionary_encode()
    denc = doc.dictionary_encode()
    names = qenc.dictionary.to_pylist()
    # topic codes in bytewise order of the ids, so rows sort by topic as the output lists them
    by_name = to_numpy(pc.sort_indices(qenc.dictionary)).astype(np.int64)
    recode = np.empty(len(names), dtype=np.int64)
    recode[by_name] = np.arange(len(names))
    tq = recode[to_numpy(qenc.indices).astype(np.int64)]
    td = to_numpy(denc.indices).astype(np.int64)
    na = len(run_a)
    ndoc = max(len(denc.dictionary), 1)
    sides = []
    for run, t, d in ((run_a, tq[:na], td[:na]), (run_b, tq[na:], td[na:])):
        refuse_repeated_documents(run, t * ndoc + d)
        order = rank_order(t, run.score, run.docno, ties, run.lineno, run.rank)
        if len(order) and (np.diff(t[order]) < 0).any():  # topics in output order, each ranked
            order = order[np.argsort(t[order], kind="stable")]
        t, d = t[order], d[order]
        starts = np.flatnonzero(np.concatenate(([True], t[1:] != t[:-1]))) if len(t) else np.zeros(0, np.int64)
        lengths = np.diff(np.concatenate((starts, [len(t)])))
        rank = np.arange(len(t), dtype=np.int64) - np.repeat(starts, lengths) + 1
        present = np.zeros(len(names), dtype=bool)
        present[t] = True
        sides.append((t, rank, d, present))
    (ta, ra, da, pa_), (tb, rb, db, pb_) = sides
    both = pa_ & pb_
    only_a = [_decode(names[by_name[i]]) for i in np.flatnonzero(pa_ & ~pb_)]
    only_b = [_decode(names[by_name[i]]) for i in np.flatnonzero(pb_ & ~pa_)]
    if (only_a or only_b) and not shared_only:
        which, topic = ("A", only_a[0]) if only_a else ("B", only_b[0])
        run = run_a if which == "A" else run_b
        other = run_b if which == "A" else run_a
        more = len(only_a) + len(only_b) - 1
        also = f" (and {more} more topic{'s' if more != 1 else ''} in one run only)" if more else ""
        raise UsageError(
            f"topic '{topic}' is in {run.name} but not in {other.name}{also}: rankings are compared "
            "topic by topic; --shared-topics compares the topics both runs have"
        )
    keep = np.cumsum(both) - 1  # new topic index, for the topics both runs have
    nt = int(both.sum())
    out = []
    for t, r, d in ((ta, ra, da), (tb, rb, db)):
        m = both[t]
        t2 = keep[t[m]]
        out.append((t2, r[m], d[m], np.bincount(t2, minlength=nt).astype(np.int64)))
    qids = [_decode(names[by_name[i]]) for i in np.flatnonzero(both)]
    (ta, ra, da, la), (tb, rb, db, lb) = out
    return Rankings(qids, ta, ra, da, la, tb, rb, db, lb, (only_a, only_b))


def _shared(rk: Rankings, depth_a: np.ndarray, depth_b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The documents both runs rank within the given depths (per topic): their topic and their
    rank in each run."""
    import numpy as np

    ma = rk.rank_a <= depth_a[rk.topic_a]
    mb = rk.rank_b <= depth_b[rk.topic_b]
    ndoc = int(max(rk.doc_a.max(initial=0), rk.doc_b.max(initial=0))) + 1
    ka = rk.topic_a[ma] * ndoc + rk.doc_a[ma]
    kb = rk.topic_b[mb] * ndoc + rk.doc_b[mb]
    _, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    return rk.topic_a[ma][ia], rk.rank_a[ma][ia], rk.rank_b[mb][ib]


# ---- rank-biased overlap -------------------------------------------------------------------


def rbo(rk: Rankings, p: float, depth: int | None = None) -> dict[str, np.ndarray]:
    """``rbo_min``, ``rbo_res`` and ``rbo_ext`` per topic (see the module's docstring)."""
    import numpy as np

    nt = len(rk.qids)
    la, lb = rk.length_a, rk.length_b
    if depth is not None:
        la, lb = np.minimum(la, depth), np.minimum(lb, depth)
    s = np.minimum(la, lb)
    long_ = np.maximum(la, lb)
    topic, ra, rb = _shared(rk, la, lb)
    seen = np.maximum(ra, rb)  # the depth from which a shared document is in both tops
    x_l = np.bincount(topic, minlength=nt).astype(np.int64)  # X_l: shared in the whole lists
    x_s = np.bincount(topic[seen <= s[topic]], minlength=nt).astype(np.int64)  # X_s
    f = long_ + s - x_l  # the depth at which the overlap could reach the depth
    # one row per depth d = 1..f of each topic: X_d as a cumulative count
    start = np.concatenate(([0], np.cumsum(f)[:-1])) if nt else np.zeros(0, np.int64)
    total = int(f.sum())
    tid = np.repeat(np.arange(nt, dtype=np.int64), f)
    d = np.arange(total, dtype=np.int64) - start[tid] + 1
    hits = np.bincount(start[topic] + seen - 1, minlength=total)
    cum = np.cumsum(hits)
    x = cum - np.concatenate(([0], cum))[start][tid]  # X_d within the topic
    df = d.astype(np.float64)
    w = np.exp(df * math.log(p)) / df  # p^d / d
    sd, ld = s[tid], long_[tid]
    upto_l = d <= ld
    between = (d > sd) & upto_l
    beyond = d > ld

    def per_topic(values: np.ndarray) -> np.ndarray:
        return np.bincount(tid, weights=values, minlength=nt)

    c = (1 - p) / p
    ln1p = math.log1p(-p)
    xl, xs = x_l.astype(np.float64), x_s.astype(np.float64)
    sf, lf = s.astype(np.float64), long_.astype(np.float64)
    rbo_min = c * (per_topic(np.where(upto_l, (x - x_l[tid]) * w, 0.0)) - xl * ln1p)
    tail = -ln1p - per_topic(w)  # sum_{d > f} p^d / d
    rbo_res = c * (
        per_topic(np.where(between, (d - sd) * w, 0.0))
        + per_topic(np.where(beyond, (2 * d - sd - ld) * w, 0.0))
        - xl * tail
    ) + np.exp(f * math.log(p))
    rbo_ext = c * (
        per_topic(np.where(upto_l, x * w, 0.0)) + per_topic(np.where(between, xs[tid] * (d - sd) / sd * w, 0.0))
    ) + ((xl - xs) / lf + xs / sf) * np.exp(lf * math.log(p))
    return {"rbo_min": rbo_min, "rbo_res": np.maximum(rbo_res, 0.0), "rbo_ext": rbo_ext}


# ---- Kendall's tau over the top k ----------------------------------------------------------


def count_inversions(group: np.ndarray, key: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the pairs (i, j) with i before j (array order) and ``key[i] > key[j]``;
    ``group`` is non-decreasing and ``key`` holds distinct non-negative integers within a group.

    Counted bit by bit from the highest, as a radix sort that keeps array order: at each bit,
    within a block of elements sharing the group and the higher bits, every 1 before a 0 is an
    inversion (counted with a cumulative sum); then each block is split stably into its 0s and
    its 1s for the next bit. O(n) a bit, no Python loop over elements or groups."""
    import numpy as np

    out = np.zeros(n_groups, dtype=np.int64)
    n = len(key)
    if not n:
        return out
    idx = np.arange(n, dtype=np.int64)
    g, k = group.astype(np.int64), key.astype(np.int64)
    new = np.concatenate(([True], g[1:] != g[:-1]))  # block starts
    for b in range(int(k.max()).bit_length() - 1, -1, -1):
        bit = (k >> b) & 1
        block = np.cumsum(new) - 1
        start = idx[new][block]
        ones = np.cumsum(bit)
        ones_before = ones - bit - (ones - bit)[new][block]  # 1s earlier in the block
        out += np.bincount(g, weights=np.where(bit == 0, ones_before, 0), minlength=n_groups).astype(np.int64)
        zero = 1 - bit
        zeros = np.cumsum(zero)
        zeros_before = zeros - zero - (zeros - zero)[new][block]
        nzero = np.bincount(block, weights=zero).astype(np.int64)[block]
        pos = start + np.where(bit == 0, zeros_before, nzero + ones_before)
        g2, k2 = np.empty_like(g), np.empty_like(k)
        g2[pos], k2[pos] = g, k
        # the blocks after the split: each block's start, and where its 1s begin if it has both
        first, z = idx[new], nzero[new]
        both = (z > 0) & (z < np.bincount(block))
        new2 = np.zeros(n, dtype=bool)
        new2[first] = True
        new2[(first + z)[both]] = True
        g, k, new = g2, k2, new2
    return out


def kendall_tau(rk: Rankings, k: int) -> np.ndarray:
    """Kendall's tau-b over the union of the two top-k lists, missing documents tied at k + 1
    (see the module's docstring), per topic; NaN for a union of fewer than two documents."""
    import numpy as np

    nt = len(rk.qids)
    ka = np.minimum(rk.length_a, k)
    kb = np.minimum(rk.length_b, k)
    topic, ra, rb = _shared(rk, ka, kb)
    common = np.bincount(topic, minlength=nt).astype(np.int64)
    only_a, only_b = ka - common, kb - common
    n = common + only_a + only_b
    # shared x shared: concordant unless inverted (ranks are distinct within each list)
    order = np.lexsort((ra, topic))
    inv = count_inversions(topic[order], rb[order], nt)
    cc = common * (common - 1) // 2
    score = (cc - inv) - inv
    # shared x in A only: the list without the second (B) puts the shared one first; A agrees
    # when it ranks the shared one higher too. Counted along A's top k: for each document of A
    # only, the shared documents above it.
    for topic_x, rank_x, depth in ((rk.topic_a, rk.rank_a, ka), (rk.topic_b, rk.rank_b, kb)):
        in_top = rank_x <= depth[topic_x]
        tx, rx = topic_x[in_top], rank_x[in_top]
        shared_rank = ra if topic_x is rk.topic_a else rb
        ndoc = int(rx.max(initial=0)) + 1
        is_shared = np.zeros(len(tx), dtype=bool)
        is_shared[np.searchsorted(tx * ndoc + rx, topic * ndoc + shared_rank)] = True
        # rows are in ranked order per topic: shared documents above each row
        cum = np.cumsum(is_shared)
        starts = np.concatenate(([True], tx[1:] != tx[:-1])) if len(tx) else np.zeros(0, bool)
        base = np.maximum.accumulate(np.where(starts, cum - is_shared, 0)) if len(tx) else cum
        above = cum - is_shared - base
        conc = np.bincount(tx[~is_shared], weights=above[~is_shared], minlength=nt).astype(np.int64)
        only = only_a if topic_x is rk.topic_a else only_b
        score += conc - (common * only - conc)
    score -= only_a * only_b  # one in each list only: discordant
    n0 = n * (n - 1) // 2
    tied_a = only_b * (only_b - 1) // 2  # missing from A's top k: tied at k + 1 in A
    tied_b = only_a * (only_a - 1) // 2
    denom = np.sqrt((n0 - tied_a).astype(np.float64) * (n0 - tied_b).astype(np.float64))
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(denom > 0, score / np.where(denom > 0, denom, 1.0), np.nan)
    return np.clip(tau, -1.0, 1.0)


# ---- all measures --------------------------------------------------------------------------


def similarity(rk: Rankings, measures: list[SimilarityMeasure]) -> list[tuple[str, np.ndarray]]:
    """(label, per-topic values) for every measure, in the order asked."""
    out: list[tuple[str, np.ndarray]] = []
    done: dict[tuple[float, int | None], dict[str, np.ndarray]] = {}
    for m in measures:
        if m.name == "kendall_tau":
            out.append((m.labels[0], kendall_tau(rk, m.k)))
            continue
        key = (m.p, m.depth)
        if key not in done:
            done[key] = rbo(rk, m.p, m.depth)
        out.extend((label, done[key][f]) for label, f in zip(m.labels, m.fields, strict=True))
    return out


def mean(values: np.ndarray) -> float:
    """The mean over the topics that have a value (NaN: none has)."""
    import numpy as np

    ok = ~np.isnan(values)
    if not ok.any():
        return math.nan
    return float(np.cumsum(values[ok], dtype=np.float64)[-1]) / int(ok.sum())
