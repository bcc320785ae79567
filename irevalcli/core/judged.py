"""Ranked tables for trec_eval's other judgement formats (``-R``): qrels_jg, prefs, qrels_prefs.

:mod:`irevalcli.io.judgements` reads the files; this module ranks a run against them and
builds the tables their measures read (``measures/jg.py``, ``measures/prefs.py``):

* ``qrels_jg``: :func:`build_jg_table` ranks each topic once (ties: docno descending, as
  for qrels) and labels it once per judgement group (JG); the result wraps an ordinary
  :class:`~irevalcli.core.table.EvalTable` whose "topics" are the (topic, JG) pairs.
* ``prefs`` and ``qrels_prefs``: :func:`build_prefs_table` ranks by score descending with
  ties broken by docno **ascending** (trec_eval's ``form_prefs_counts``) and counts every
  JG's fulfilled and possible preferences. ``-M``, ``-c`` and ``-D`` apply; ``-l``, ``-J``
  and ``-N`` do not.

Both builders take the :class:`~irevalcli.core.table.EvalOptions` of the command line and
use the options their format honours; ``api.evaluate`` picks the builder by ``-R`` format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DuplicateDocError, InputError, NoQueriesError
from ..io.arrow import binary_array, decode_id, from_numpy
from ..io.judgements import Judgements
from .table import (
    PLACEHOLDER_DOCNO,
    EvalOptions,
    EvalTable,
    factorize_sorted,
    missing_topic_error,
    only_query_topics,
    top_rows,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.trec import Run

# Square Boolean matrices per batched closure step (bounds memory, not results).
_CLOSURE_CELLS = 1 << 24


# --------------------------------------------------------------------------
# Shared steps: topics, ranking


@dataclass
class _Ranked:
    """The evaluated topics and each one's ranked, -M-truncated results."""

    qids: list[str]
    missing: np.ndarray  # bool per topic: placeholder ranking (-c)
    j_topic: np.ndarray  # topic of each judgement line, -1 if not evaluated
    j_dcode: np.ndarray  # docno code of each judgement line (codes in strcmp order)
    doc_dict: pa.Array  # docno of each code
    rg: np.ndarray  # topic of each ranked row
    r_dcode: np.ndarray  # its docno code
    starts: np.ndarray  # row offset of each topic (len nq + 1)

    @property
    def nq(self) -> int:
        return len(self.qids)

    def docno(self, code: int) -> str:
        return decode_id(self.doc_dict[int(code)].as_py())


def _offsets(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _rank(j: Judgements, run: Run, opts: EvalOptions, *, docno_ascending: bool) -> _Ranked:
    """Topics (the judged ones, strcmp order) and their rankings, with -c, -D and -M applied."""
    (j_qcode, r_qcode), qid_dict = factorize_sorted(j.qid, run.qid)
    judged = only_query_topics(np.unique(j_qcode), qid_dict, opts, j.name)
    topic_of_code = np.full(len(qid_dict), -1, dtype=np.int64)
    topic_of_code[judged] = np.arange(len(judged))
    nq = len(judged)
    qids = [decode_id(qid_dict[int(c)].as_py()) for c in judged]

    r_topic = topic_of_code[r_qcode]
    keep_run = r_topic >= 0
    missing = np.bincount(r_topic[keep_run], minlength=nq) == 0
    # with or without -c, never a clean 0 (an empty run is -c's placeholders for the parts' engines)
    if nq and missing.all() and opts.only_query is None and len(run.qid):
        raise NoQueriesError(f"{run.name}: the run shares no topic with {j.name}: nothing to evaluate")
    if missing.any() and not opts.complete:
        raise missing_topic_error(run.name, qids[int(np.argmax(missing))], j.name)
    run_docno = run.docno.filter(from_numpy(keep_run)) if not keep_run.all() else run.docno
    extra = [binary_array([PLACEHOLDER_DOCNO])] if missing.any() else []
    codes, doc_dict = factorize_sorted(j.docno, run_docno, *extra)

    rg = r_topic[keep_run]
    r_dcode = codes[1]
    score = run.score[keep_run]
    rline = run.lineno[keep_run]
    if missing.any():
        mt = np.flatnonzero(missing)
        rg = np.concatenate((rg, mt))
        r_dcode = np.concatenate((r_dcode, np.full(len(mt), codes[2][0], dtype=np.int64)))
        score = np.concatenate((score, np.ones(len(mt))))
        rline = np.concatenate((rline, np.zeros(len(mt), dtype=np.int64)))
    tie = r_dcode if docno_ascending else -r_dcode
    order = np.lexsort((tie, -score, rg))
    rg, r_dcode, rline = rg[order], r_dcode[order], rline[order]
    starts = _offsets(np.bincount(rg, minlength=nq))
    if opts.max_docs is not None:
        keep = top_rows(rg, starts, opts.max_docs)
        rg, r_dcode, rline = rg[keep], r_dcode[keep], rline[keep]
        starts = _offsets(np.bincount(rg, minlength=nq))

    ranked = _Ranked(qids, missing, topic_of_code[j_qcode], codes[0], doc_dict, rg, r_dcode, starts)
    ndoc = max(len(doc_dict), 1)
    key = rg * ndoc + r_dcode
    korder = np.argsort(key, kind="stable")
    ks = key[korder]
    dup = np.flatnonzero(ks[1:] == ks[:-1])
    if len(dup):
        a, b = korder[dup], korder[dup + 1]
        la, lb = np.minimum(rline[a], rline[b]), np.maximum(rline[a], rline[b])
        i = int(np.argmin(lb))
        raise DuplicateDocError(
            run.name,
            f"document '{ranked.docno(r_dcode[a[i]])}' is retrieved twice for topic "
            f"'{qids[int(rg[a[i]])]}' (first at line {int(la[i])})",
            int(lb[i]),
        )
    return ranked


def _group_codes(*arrays: pa.Array) -> np.ndarray:
    """Codes of the first array's values in bytewise order (JG and JSG names)."""
    return factorize_sorted(*arrays)[0][0]


# --------------------------------------------------------------------------
# qrels_jg


@dataclass
class JgTable:
    """A qrels_jg evaluation: one ranked, labelled segment per (topic, JG).

    ``segments`` is an ordinary :class:`EvalTable` whose "topics" are the
    (topic, JG) pairs in (topic, JG strcmp) order, so every qrels measure works
    on it unchanged; the ``*_avgjg`` measures average its values over each
    topic's JGs.
    """

    qids: list[str]
    missing: np.ndarray
    opts: EvalOptions
    runid: str
    segments: EvalTable
    seg_topic: np.ndarray  # topic of each segment

    @property
    def nq(self) -> int:
        return len(self.qids)

    def average_over_jgs(self, seg_values: np.ndarray) -> np.ndarray:
        """(labels x segments) -> (labels x topics): the sum over JGs in JG order, / JGs."""
        njg = np.bincount(self.seg_topic, minlength=self.nq).astype(np.float64)
        vals = np.atleast_2d(np.asarray(seg_values, dtype=np.float64))
        sums = np.stack([np.bincount(self.seg_topic, weights=v, minlength=self.nq) for v in vals])
        return sums / np.maximum(njg, 1.0)


def _check_jg_duplicates(j: Judgements) -> None:
    """A (qid, jg, docno) judged twice is an error anywhere in the file (trec_eval finds it on reading)."""
    (qc,), _ = factorize_sorted(j.qid)
    (dc,), _ = factorize_sorted(j.docno)
    jgc = _group_codes(j.jg)
    order = np.lexsort((dc, jgc, qc))
    same = (qc[order][1:] == qc[order][:-1]) & (jgc[order][1:] == jgc[order][:-1]) & (dc[order][1:] == dc[order][:-1])
    if not same.any():
        return
    at = np.flatnonzero(same)
    a, b = j.lineno[order[at]], j.lineno[order[at + 1]]
    i = int(np.argmin(np.maximum(a, b)))
    row = int(order[at[i]])
    raise DuplicateDocError(
        j.name,
        f"document '{decode_id(j.docno[row].as_py())}' is judged twice in judgement group "
        f"'{decode_id(j.jg[row].as_py())}' of topic '{decode_id(j.qid[row].as_py())}' "
        f"(first at line {int(min(a[i], b[i]))})",
        int(max(a[i], b[i])),
    )


def build_jg_table(j: Judgements, run: Run, opts: EvalOptions) -> JgTable:
    """Rank each topic once (ties: docno descending, as for qrels), then label it once per JG.

    ``-l``, ``-M``, ``-J``, ``-c`` and ``-D`` apply; ``-N``, ``--compat`` and ``--ties`` do not.
    """
    opts = EvalOptions(
        rel_level=opts.rel_level,
        max_docs=opts.max_docs,
        judged_only=opts.judged_only,
        complete=opts.complete,
        only_query=opts.only_query,
    )
    _check_jg_duplicates(j)
    ranked = _rank(j, run, opts, docno_ascending=False)
    ndoc = max(len(ranked.doc_dict), 1)
    jgc = _group_codes(j.jg)
    keep = ranked.j_topic >= 0
    jt, jd, jg, rel = ranked.j_topic[keep], ranked.j_dcode[keep], jgc[keep], j.level[keep]
    njg_codes = int(jgc.max()) + 1 if len(jgc) else 1
    seg_keys, j_seg = np.unique(jt * njg_codes + jg, return_inverse=True)
    seg_topic = seg_keys // njg_codes
    nseg = len(seg_keys)

    # every segment holds its topic's whole ranking
    n_t = np.diff(ranked.starts)
    lens = n_t[seg_topic]
    seg_of_row = np.repeat(np.arange(nseg), lens)
    src = (
        np.arange(int(lens.sum()))
        - np.repeat(_offsets(lens)[:-1], lens)
        + np.repeat(ranked.starts[:-1][seg_topic], lens)
    )
    qkey = j_seg * ndoc + jd
    qorder = np.argsort(qkey, kind="stable")
    qsorted = qkey[qorder]
    rkey = seg_of_row * ndoc + ranked.r_dcode[src]
    pos = np.minimum(np.searchsorted(qsorted, rkey), max(len(qsorted) - 1, 0))
    found = qsorted[pos] == rkey if len(qsorted) else np.zeros(len(rkey), dtype=bool)
    value = rel[qorder][pos]
    label = np.where(found, np.where(value < 0, -2, value), -1).astype(np.int64)
    if opts.judged_only:
        kept = label >= 0
        seg_of_row, label = seg_of_row[kept], label[kept]
    segments = EvalTable(
        qids=[f"{ranked.qids[int(t)]}/{k}" for k, t in enumerate(seg_topic.tolist())],
        g=seg_of_row,
        label=label,
        starts=_offsets(np.bincount(seg_of_row, minlength=nseg)),
        qg=j_seg,
        qrel=rel,
        missing=np.zeros(nseg, dtype=bool),
        opts=opts,
        runid=run.runid,
    )
    return JgTable(ranked.qids, ranked.missing, opts, run.runid, segments, seg_topic)


# --------------------------------------------------------------------------
# prefs and qrels_prefs


@dataclass
class PrefsTable:
    """Preference counts of every judgement group (JG) of every evaluated topic.

    Per JG (JGs in (topic, JG strcmp) order), for the preferences ``a > b`` it
    holds (a, b: internal ids; "retrieved" means id < NJR):

    * ``fr``: both retrieved, a above b; ``pr``: both retrieved (fulfilled or not);
    * ``fi``: a retrieved, b not; ``pi``: ``fi`` + b retrieved and a not;
    * ``pn``: neither retrieved;
    * ``num_rel``/``num_nonrel`` (level > 0 / level <= 0) and their retrieved parts;
    * ``rc_*``: the fulfilled/possible counts of ``prefs_avgjg_Rnonrel`` (``_ret``:
      retrieved only) when there are fewer relevant than non-relevant documents.

    Per topic, the document-pair statistics of ``prefs_pair``: the number of
    unordered pairs with some preference among retrieved (``pairs_rr``),
    retrieved/unretrieved (``pairs_ru``) and unretrieved (``pairs_uu``) documents,
    and the sums of ``CA[i][j] / (CA[i][j] + CA[j][i])`` (CA: preference counts
    over all JGs; i the higher-ranked document) over the RR pairs and over RR
    then RU pairs, added in trec_eval's loop order.
    """

    qids: list[str]
    missing: np.ndarray
    opts: EvalOptions
    runid: str
    jg_topic: np.ndarray
    fr: np.ndarray
    pr: np.ndarray
    fi: np.ndarray
    pi: np.ndarray
    pn: np.ndarray
    num_rel: np.ndarray
    num_rel_ret: np.ndarray
    num_nonrel: np.ndarray
    num_nonrel_ret: np.ndarray
    rc_ful: np.ndarray
    rc_poss: np.ndarray
    rc_ful_ret: np.ndarray
    rc_poss_ret: np.ndarray
    pairs_rr: np.ndarray
    pairs_ru: np.ndarray
    pairs_uu: np.ndarray
    pair_sum_rr: np.ndarray
    pair_sum_all: np.ndarray

    @property
    def nq(self) -> int:
        return len(self.qids)

    @property
    def num_jgs(self) -> np.ndarray:
        return np.bincount(self.jg_topic, minlength=self.nq)

    def topic_sum(self, per_jg: np.ndarray) -> np.ndarray:
        """Per-topic sum over JGs, added in JG order as trec_eval's loops add."""
        return np.bincount(self.jg_topic, weights=np.asarray(per_jg, dtype=np.float64), minlength=self.nq)


def _segment_starts(*keys: np.ndarray) -> np.ndarray:
    """Bool: row i starts a new run of equal keys (rows sorted by the keys)."""
    n = len(keys[0])
    new = np.ones(n, dtype=bool)
    for k in keys:
        new[1:] &= k[1:] == k[:-1]
    new = ~new
    if n:
        new[0] = True
    return new


def _run_first(new: np.ndarray) -> np.ndarray:
    """Index of the first row of each row's run."""
    idx = np.arange(len(new))
    return np.maximum.accumulate(np.where(new, idx, 0))


def _run_stop(new: np.ndarray) -> np.ndarray:
    """One past the last row of each row's run."""
    n = len(new)
    firsts = np.flatnonzero(new)
    stops = np.append(firsts[1:], n)
    return stops[np.cumsum(new) - 1] if n else np.zeros(0, dtype=np.int64)


def _expand(first: np.ndarray, stop: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every (i, j) with ``first[i] <= j < stop[i]``, i ascending then j ascending."""
    cnt = np.maximum(stop - first, 0)
    i = np.repeat(np.arange(len(first)), cnt)
    j = np.arange(int(cnt.sum())) - np.repeat(_offsets(cnt)[:-1], cnt) + np.repeat(first, cnt)
    return i, j


def _count_earlier_greater(seg: np.ndarray, val: np.ndarray) -> np.ndarray:
    """``out[k]`` = #{i < k : seg[i] == seg[k] and val[i] > val[k]} (rows ordered by seg).

    A bottom-up merge count, vectorised across all segments: at each of the
    log2(n) levels every row in a right-hand block counts the rows of its left
    sibling block in a sorted key array with one ``searchsorted``.
    """
    n = len(val)
    out = np.zeros(n, dtype=np.int64)
    if n < 2:
        return out
    # dense rank of (seg, val); rows with the same seg and a greater val have ranks in (r, hi)
    order = np.lexsort((val, seg))
    new_pair = _segment_starts(seg[order], val[order])
    r = np.empty(n, dtype=np.int64)
    r[order] = np.cumsum(new_pair) - 1
    nrank = int(r.max()) + 1
    new_seg = _segment_starts(seg[order])
    hi_sorted = r[order][_run_stop(new_seg) - 1] + 1
    hi = np.empty(n, dtype=np.int64)
    hi[order] = hi_sorted
    pos = np.arange(n, dtype=np.int64)
    width = 1
    while width < n:
        block = pos // width
        keys = np.sort(block * nrank + r)
        right = np.flatnonzero(block & 1)
        base = (block[right] - 1) * nrank
        out[right] += np.searchsorted(keys, base + hi[right], "left") - np.searchsorted(keys, base + r[right], "right")
        width *= 2
    return out


@dataclass
class _EcCounts:
    """Per-entry preference counts of one-JSG groups (entries sorted by group, level desc, id)."""

    up_ret: np.ndarray  # retrieved entries of the group at a higher level
    up_all: np.ndarray  # all entries of the group at a higher level
    fr: np.ndarray  # retrieved entries above (smaller id) at a higher level (retrieved rows only)
    run_first: np.ndarray
    group_first: np.ndarray

    def group_sums(self, grp: np.ndarray, ret: np.ndarray, ngroups: int, mask: np.ndarray | None = None) -> dict:
        """fr, pr_raw, fi, pi_raw, pn per group, over the entries b of ``mask``."""
        up_unret = self.up_all - self.up_ret
        m = np.ones(len(grp), dtype=bool) if mask is None else mask
        rb, ub = m & ret, m & ~ret

        def s(where: np.ndarray, w: np.ndarray) -> np.ndarray:
            return np.rint(np.bincount(grp[where], weights=w[where], minlength=ngroups)).astype(np.int64)

        return {
            "fr": s(rb, self.fr),
            "pr_raw": s(rb, self.up_ret - self.fr),
            "pi_raw": s(rb, up_unret),
            "fi": s(ub, self.up_ret),
            "pn": s(ub, up_unret),
        }


def _ec_counts(grp: np.ndarray, lc: np.ndarray, did: np.ndarray, ret: np.ndarray) -> _EcCounts:
    """Counts for entries sorted by (group, level code descending, id): a > b iff level a > level b."""
    new_grp = _segment_starts(grp)
    new_run = new_grp | _segment_starts(lc)
    gfirst = _run_first(new_grp)
    rfirst = _run_first(new_run)
    ret_before = np.concatenate(([0], np.cumsum(ret)))
    up_ret = ret_before[rfirst] - ret_before[gfirst]
    up_all = rfirst - gfirst
    fr = np.zeros(len(grp), dtype=np.int64)
    rows = np.flatnonzero(ret)
    if len(rows):
        rows = rows[np.lexsort((did[rows], grp[rows]))]
        fr[rows] = _count_earlier_greater(grp[rows], lc[rows])
    return _EcCounts(up_ret, up_all, fr, rfirst, gfirst)


def _closure(sizes: np.ndarray, eg: np.ndarray, ei: np.ndarray, ej: np.ndarray) -> tuple[np.ndarray, ...]:
    """Transitive closure of many small directed graphs; returns the edges (g, i, j), i != j.

    trec_eval sets the diagonal, closes, then clears the diagonal. Graphs are
    stacked by size class (powers of two, in chunks that bound memory) and closed
    by repeated Boolean squaring with batched matmul: the loop runs over size
    classes and log2(size) squarings, never over graphs or documents.
    """
    outs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    size_class = np.ceil(np.log2(np.maximum(sizes, 1))).astype(np.int64)
    for c in np.unique(size_class[sizes > 0]):
        members = np.flatnonzero((size_class == c) & (sizes > 0))
        m = int(sizes[members].max())
        chunk = max(1, _CLOSURE_CELLS // (m * m))
        for lo in range(0, len(members), chunk):
            gs = members[lo : lo + chunk]
            slot = np.full(len(sizes), -1, dtype=np.int64)
            slot[gs] = np.arange(len(gs))
            sel = slot[eg] >= 0
            a = np.zeros((len(gs), m, m), dtype=bool)
            a[slot[eg[sel]], ei[sel], ej[sel]] = True
            diag = np.arange(m)
            a[:, diag, diag] = True
            while True:
                f = a.astype(np.float32)  # counts <= m < 2**24: exact
                b = np.matmul(f, f) > 0.5
                if np.array_equal(a, b):
                    break
                a = b
            a[:, diag, diag] = False
            k, i, j = np.nonzero(a)
            outs.append((gs[k], i, j))
    if not outs:
        z = np.zeros(0, dtype=np.int64)
        return z, z, z
    g = np.concatenate([o[0] for o in outs])
    i = np.concatenate([o[1] for o in outs])
    j = np.concatenate([o[2] for o in outs])
    order = np.lexsort((j, i, g))
    return g[order], i[order], j[order]


@dataclass
class _PrefLines:
    """The judgement lines of the evaluated topics, sorted by (group, JSG, level desc, internal id)."""

    name: str  # the judgement file, for messages
    grp: np.ndarray  # judgement group (JGs numbered in (topic, jg strcmp) order)
    jsg: np.ndarray  # JSG code
    lc: np.ndarray  # level code: rank of the rel_level among all levels
    lev: np.ndarray  # rel_level
    did: np.ndarray  # internal id of the document
    ret: np.ndarray  # id < NJR: retrieved
    line: np.ndarray  # physical line number
    dcode: np.ndarray  # docno code
    g_topic: np.ndarray  # topic of each group
    g_njr: np.ndarray  # NJR of each group's topic
    g_line: np.ndarray  # index (in the file) of a line of each group
    bound: int  # every internal id is < bound
    ranked: _Ranked
    jg_names: pa.Array

    @property
    def ngroups(self) -> int:
        return len(self.g_topic)

    def sub(self, mask: np.ndarray) -> dict[str, np.ndarray]:
        return {k: getattr(self, k)[mask] for k in ("grp", "jsg", "lc", "lev", "did", "ret", "line", "dcode")}

    def group(self, g: int) -> str:
        """A judgement group, for messages."""
        jg = decode_id(self.jg_names[int(self.g_line[g])].as_py())
        return f"judgement group '{jg}' of topic '{self.ranked.qids[int(self.g_topic[g])]}'"

    def clash(
        self, rows_a: np.ndarray, rows_b: np.ndarray, grp: np.ndarray, dcode: np.ndarray, line: np.ndarray, what: str
    ) -> InputError:
        """The error for the offending pair of lines that ends earliest in the file."""
        la, lb = line[rows_a], line[rows_b]
        k = int(np.argmin(np.maximum(la, lb)))
        first, second = int(min(la[k], lb[k])), int(max(la[k], lb[k]))
        doc = self.ranked.docno(dcode[rows_a[k]])
        return InputError(
            self.name,
            f"document '{doc}' has {what} in {self.group(int(grp[rows_a[k]]))} (lines {first} and {second})",
            second,
        )


def _pref_lines(j: Judgements, ranked: _Ranked) -> tuple[_PrefLines, np.ndarray, np.ndarray]:
    """Internal ids and groups of the lines; also NJR and NJ per topic.

    Retrieved judged documents get ids 0..NJR-1 in rank order, the other judged
    documents NJR..NJ-1 in docno order.
    """
    nq = ranked.nq
    ndoc = max(len(ranked.doc_dict), 1)
    keep = np.flatnonzero(ranked.j_topic >= 0)
    jt, jd = ranked.j_topic[keep], ranked.j_dcode[keep]
    jkey = jt * ndoc + jd
    ukey = np.unique(jkey)  # the judged documents of each topic, by docno
    u_topic = ukey // ndoc
    rkey = ranked.rg * ndoc + ranked.r_dcode
    upos = np.minimum(np.searchsorted(ukey, rkey), len(ukey) - 1)
    hit = np.flatnonzero(ukey[upos] == rkey)  # ranked rows that are judged, in rank order
    njr = np.bincount(ranked.rg[hit], minlength=nq)
    nj = np.bincount(u_topic, minlength=nq)
    u_did = np.empty(len(ukey), dtype=np.int64)
    u_did[upos[hit]] = np.arange(len(hit)) - _offsets(njr)[:-1][ranked.rg[hit]]
    unret = np.ones(len(ukey), dtype=bool)
    unret[upos[hit]] = False
    ur = np.flatnonzero(unret)
    ut = u_topic[ur]
    u_did[ur] = njr[ut] + np.arange(len(ur)) - _offsets(np.bincount(ut, minlength=nq))[:-1][ut]
    did = u_did[np.searchsorted(ukey, jkey)]

    jgc = _group_codes(j.jg)[keep]
    jsgc = _group_codes(j.jsg)[keep] if j.jsg is not None else np.zeros(len(keep), dtype=np.int64)
    njgc = int(jgc.max()) + 1
    gkeys, grp = np.unique(jt * njgc + jgc, return_inverse=True)
    grp = grp.astype(np.int64).reshape(-1)
    g_topic = gkeys // njgc
    lev = j.level[keep].astype(np.float64)
    lc = np.unique(lev, return_inverse=True)[1].astype(np.int64).reshape(-1)
    order = np.lexsort((did, -lc, jsgc, grp))
    lines = _PrefLines(
        name=j.name,
        grp=grp[order],
        jsg=jsgc[order],
        lc=lc[order],
        lev=lev[order],
        did=did[order],
        ret=(did < njr[jt])[order],
        line=j.lineno[keep][order],
        dcode=jd[order],
        g_topic=g_topic,
        g_njr=njr[g_topic],
        g_line=keep[order][_offsets(np.bincount(grp, minlength=len(gkeys)))[:-1]],
        bound=int(nj.max()) + 1,
        ranked=ranked,
        jg_names=j.jg,
    )
    return lines, njr, nj


_KINDS = ("fr", "pr_raw", "fi", "pi_raw", "pn")


class _Acc:
    """Per-group quantities, filled in by the EC and PA passes."""

    def __init__(self, ngroups: int) -> None:
        def z() -> np.ndarray:
            return np.zeros(ngroups, dtype=np.int64)

        self.counts = {k: z() for k in _KINDS}  # preferences, with multiplicity
        self.distinct = {k: z() for k in _KINDS}  # distinct document pairs
        self.num_rel, self.num_rel_ret, self.num_nonrel, self.num_nonrel_ret = z(), z(), z(), z()
        self.rc = {k: z() for k in ("ful", "poss", "ful_ret", "poss_ret")}
        self.pairs: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # (group, a, b), multi-JG topics

    def add_rel(self, grp: np.ndarray, rel: np.ndarray, nonrel: np.ndarray, ret: np.ndarray, n: int) -> None:
        self.num_rel += np.bincount(grp[rel], minlength=n)
        self.num_rel_ret += np.bincount(grp[rel & ret], minlength=n)
        self.num_nonrel += np.bincount(grp[nonrel], minlength=n)
        self.num_nonrel_ret += np.bincount(grp[nonrel & ret], minlength=n)


def _ec_pass(lines: _PrefLines, rows: np.ndarray, multi_topic: np.ndarray, acc: _Acc) -> None:
    """Groups with one JSG: every line is preferred to every line of a lower level."""
    n = lines.ngroups
    r = lines.sub(rows)
    g, lc, did, ret, lev = r["grp"], r["lc"], r["did"], r["ret"], r["lev"]
    o = np.lexsort((lc, did, g))
    two = np.flatnonzero((g[o][1:] == g[o][:-1]) & (did[o][1:] == did[o][:-1]) & (lc[o][1:] != lc[o][:-1]))
    if len(two):
        raise lines.clash(o[two], o[two + 1], g, r["dcode"], r["line"], "two different rel_levels")

    cnt = _ec_counts(g, lc, did, ret)
    for k, v in cnt.group_sums(g, ret, n).items():
        acc.counts[k] += v
    acc.add_rel(g, lev > 0, lev <= 0, ret, n)
    uniq = _segment_starts(g, lc, did)  # repeated lines add preferences, not document pairs
    dcnt = cnt if uniq.all() else _ec_counts(g[uniq], lc[uniq], did[uniq], ret[uniq])
    for k, v in dcnt.group_sums(g[uniq], ret[uniq], n).items():
        acc.distinct[k] += v

    # prefs_avgjg_Rnonrel's recount, trec_eval's loops in closed form: the preferences
    # among all classes but the last (lowest), plus every entry paired with NEW = the
    # first num_rel (_ret: num_rel_ret) entries of the last class; "fulfilled" when
    # the first id is smaller (and, counting all docs, retrieved).
    gstop = _run_stop(_segment_starts(g))
    in_last = cnt.run_first == cnt.run_first[gstop - 1]
    above = cnt.group_sums(g, ret, n, mask=~in_last)
    pos_last = np.arange(len(g)) - cnt.run_first
    by_id = np.sort(g * lines.bound + did)

    def below(x: np.ndarray, grp: np.ndarray) -> np.ndarray:
        """Entries of group ``grp`` with an id below ``x``."""
        base = grp * lines.bound
        return np.searchsorted(by_id, base + x, "left") - np.searchsorted(by_id, base, "left")

    def count(mask: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
        return np.rint(np.bincount(g[mask], weights=weights, minlength=n)).astype(np.int64)

    new = in_last & (pos_last < acc.num_rel[g])
    acc.rc["ful"] += above["fr"] + above["fi"] + count(new, below(np.minimum(did[new], lines.g_njr[g[new]]), g[new]))
    acc.rc["poss"] += sum(above[k] for k in _KINDS) + np.bincount(g, minlength=n) * count(new)
    new_r = in_last & (pos_last < acc.num_rel_ret[g]) & ret
    acc.rc["ful_ret"] += above["fr"] + count(new_r, below(did[new_r], g[new_r]))
    acc.rc["poss_ret"] += above["fr"] + above["pr_raw"] + count(ret) * count(new_r)

    mt = multi_topic[lines.g_topic[g]]
    if mt.any():  # explicit preferences for prefs_pair, which sums them over JGs
        at = np.flatnonzero(mt)
        ia, ib = _expand(_run_stop(_segment_starts(g, lc))[at], gstop[at])
        acc.pairs.append((g[at[ia]], did[at[ia]], did[ib]))


def _pa_pass(lines: _PrefLines, rows: np.ndarray, multi_topic: np.ndarray, acc: _Acc) -> None:
    """Groups with several JSGs: preferences within each JSG, closed transitively over the group."""
    n = lines.ngroups
    r = lines.sub(rows)
    g, lc, did, lev, jsg = r["grp"], r["lc"], r["did"], r["lev"], r["jsg"]
    bound = lines.bound
    dkeys, doc = np.unique(g * bound + did, return_inverse=True)  # the group's documents, by id
    doc = doc.reshape(-1)
    d_grp, d_did = dkeys // bound, dkeys % bound
    d_first = _offsets(np.bincount(d_grp, minlength=n))
    # trec_eval walks the lines in sorted order keeping each document's latest level;
    # a level 0 after a level > 0 (or the reverse) is an error
    walk = np.lexsort((np.arange(len(g)), doc))
    same = doc[walk][1:] == doc[walk][:-1]
    prev, cur = lev[walk][:-1], lev[walk][1:]
    bad = np.flatnonzero(same & (((prev > 0) & (cur == 0)) | ((prev == 0) & (cur > 0))))
    if len(bad):
        raise lines.clash(walk[bad], walk[bad + 1], g, r["dcode"], r["line"], "both a zero and a non-zero rel_level")
    last = np.append(~same, True)
    d_rel = np.empty(len(dkeys), dtype=np.float64)
    d_rel[doc[walk][last]] = lev[walk][last]

    # in each JSG every line is preferred to every later line of a strictly lower level
    seg = _segment_starts(g, jsg)
    ia, ib = _expand(_run_stop(seg | _segment_starts(lc)), _run_stop(seg))
    local = doc - d_first[g]
    cg, ci, cj = _closure(np.diff(d_first), g[ia], local[ia], local[ib])
    a_doc, b_doc = d_first[cg] + ci, d_first[cg] + cj
    if len(cg):
        both = np.flatnonzero(np.isin(b_doc * len(dkeys) + a_doc, a_doc * len(dkeys) + b_doc))
        if len(both):
            k = both[0]
            at = [np.flatnonzero(doc == d) for d in (a_doc[k], b_doc[k])]
            names = [lines.ranked.docno(r["dcode"][x[0]]) for x in at]
            ln = [int(r["line"][x].min()) for x in at]
            raise InputError(
                lines.name,
                f"inconsistent preferences in {lines.group(int(cg[k]))}: documents '{names[0]}' (line {ln[0]}) "
                f"and '{names[1]}' (line {ln[1]}) are each preferred to the other",
                max(ln),
            )
    a, b = d_did[a_doc], d_did[b_doc]
    njr = lines.g_njr[cg]
    ra, rb = a < njr, b < njr
    kinds = {"fr": ra & rb & (a < b), "pr_raw": ra & rb & (a > b), "fi": ra & ~rb, "pi_raw": ~ra & rb, "pn": ~ra & ~rb}

    def count(mask: np.ndarray) -> np.ndarray:
        return np.bincount(cg[mask], minlength=n)

    for k, m in kinds.items():
        acc.counts[k] += count(m)
        acc.distinct[k] += count(m)
    acc.add_rel(d_grp, d_rel > 0, d_rel == 0, d_did < lines.g_njr[d_grp], n)

    # prefs_avgjg_Rnonrel's recount: leave out the level-0 documents after the first
    # num_rel of them (by id), then count over the remaining preferences
    zero = d_rel == 0
    zeros_so_far = np.cumsum(zero) - np.concatenate(([0], np.cumsum(zero)))[d_first[d_grp]]
    skip = zero & (zeros_so_far > acc.num_rel[d_grp])
    live = ~skip[a_doc] & ~skip[b_doc]
    acc.rc["ful"] += count(live & ra & (a < b))
    acc.rc["poss"] += count(live)
    acc.rc["ful_ret"] += count(live & rb & (a < b))
    acc.rc["poss_ret"] += count(live & ra & rb)

    mt = multi_topic[lines.g_topic[cg]]
    if mt.any():
        acc.pairs.append((cg[mt], a[mt], b[mt]))


def _pair_stats(acc: _Acc, g_topic: np.ndarray, njr: np.ndarray, multi_topic: np.ndarray) -> dict[str, np.ndarray]:
    """prefs_pair's pair counts and ratio sums per topic.

    In a topic with one JG, a pair of documents has preferences in one direction
    only, so every ratio is 0 or 1 and the sums are counts of distinct pairs.
    Topics with several JGs sum the preferences per pair explicitly (CA).
    """
    nq = len(njr)
    t = {k: np.bincount(g_topic, weights=acc.distinct[k], minlength=nq) for k in _KINDS}
    out = {
        "pairs_rr": t["fr"] + t["pr_raw"],
        "pairs_ru": t["fi"] + t["pi_raw"],
        "pairs_uu": t["pn"],
        "pair_sum_rr": t["fr"],
        "pair_sum_all": t["fr"] + t["fi"],
    }
    if acc.pairs:
        pt = g_topic[np.concatenate([p[0] for p in acc.pairs])]
        a = np.concatenate([p[1] for p in acc.pairs])
        b = np.concatenate([p[2] for p in acc.pairs])
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        o = np.lexsort((hi, lo, pt))
        pt, lo, hi, forward = pt[o], lo[o], hi[o], (a < b)[o]
        first = _segment_starts(pt, lo, hi)
        pair = np.cumsum(first) - 1
        ca_lo_hi = np.bincount(pair, weights=forward)  # CA[lo][hi]
        ca_hi_lo = np.bincount(pair, weights=~forward)
        pt, lo, hi = pt[first], lo[first], hi[first]
        block = np.where(hi < njr[pt], 0, np.where(lo < njr[pt], 1, 2))  # RR, RU, UU
        o = np.lexsort((hi, lo, block, pt))  # trec_eval's loops: RR by (i, j), then RU by (i, j)
        pt, block, ratio = pt[o], block[o], (ca_lo_hi / (ca_lo_hi + ca_hi_lo))[o]
        rr, rru = block == 0, block <= 1
        explicit = {
            "pairs_rr": np.bincount(pt[rr], minlength=nq),
            "pairs_ru": np.bincount(pt[block == 1], minlength=nq),
            "pairs_uu": np.bincount(pt[block == 2], minlength=nq),
            "pair_sum_rr": np.bincount(pt[rr], weights=ratio[rr], minlength=nq),
            "pair_sum_all": np.bincount(pt[rru], weights=ratio[rru], minlength=nq),
        }
        out = {k: np.where(multi_topic, explicit[k], v) for k, v in out.items()}
    return {k: np.asarray(v, dtype=np.float64 if k.startswith("pair_sum") else np.int64) for k, v in out.items()}


def build_prefs_table(j: Judgements, run: Run, opts: EvalOptions) -> PrefsTable:
    """trec_eval's form_prefs_counts for every topic at once, plus what its measures need.

    ``-M``, ``-c`` and ``-D`` apply; ``-l``, ``-J``, ``-N``, ``--compat`` and ``--ties`` do not.
    """
    opts = EvalOptions(max_docs=opts.max_docs, complete=opts.complete, only_query=opts.only_query)
    ranked = _rank(j, run, opts, docno_ascending=True)
    lines, njr, _ = _pref_lines(j, ranked)
    n = lines.ngroups
    multi_topic = np.bincount(lines.g_topic, minlength=ranked.nq) > 1
    jsgs = np.unique(lines.grp * (int(lines.jsg.max()) + 1) + lines.jsg) // (int(lines.jsg.max()) + 1)
    is_pa = np.bincount(jsgs, minlength=n) > 1
    acc = _Acc(n)
    ec_rows = ~is_pa[lines.grp]
    if ec_rows.any():
        _ec_pass(lines, ec_rows, multi_topic, acc)
    if (~ec_rows).any():
        _pa_pass(lines, ~ec_rows, multi_topic, acc)
    c = acc.counts
    return PrefsTable(
        qids=ranked.qids,
        missing=ranked.missing,
        opts=opts,
        runid=run.runid,
        jg_topic=lines.g_topic,
        fr=c["fr"],
        pr=c["pr_raw"] + c["fr"],
        fi=c["fi"],
        pi=c["pi_raw"] + c["fi"],
        pn=c["pn"],
        num_rel=acc.num_rel,
        num_rel_ret=acc.num_rel_ret,
        num_nonrel=acc.num_nonrel,
        num_nonrel_ret=acc.num_nonrel_ret,
        rc_ful=acc.rc["ful"],
        rc_poss=acc.rc["poss"],
        rc_ful_ret=acc.rc["ful_ret"],
        rc_poss_ret=acc.rc["poss_ret"],
        **_pair_stats(acc, lines.g_topic, njr, multi_topic),
    )
