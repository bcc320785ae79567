"""The docno codes by sorted hashes (``_sort_split_codes``) are exactly Arrow's dictionary
encoding: the same codes (first-seen order) and dictionary, for every kind of id, and when
hashes collide (forced here by keeping few hash bits)."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from irevalcli.core import table as T
from irevalcli.core.table import EvalOptions, build_table
from irevalcli.engine.evaluate import evaluate_table
from irevalcli.engine.job import Job
from irevalcli.errors import DuplicateDocError
from irevalcli.io.trec import Source, parse_qrels, parse_run
from irevalcli.measures.names import resolve
from irevalcli.output.formatters import format_trec

ALL_BITS = 0xFFFF_FFFF_FFFF_FFFF


def arrow_codes(arrays):
    enc = pa.chunked_array([a.cast(pa.large_binary()) for a in arrays], type=pa.large_binary()).dictionary_encode()
    idx = np.concatenate([c.indices.to_numpy() for c in enc.chunks]).astype(np.int64)
    return list(np.split(idx, np.cumsum([len(a) for a in arrays])[:-1])), enc.chunks[-1].dictionary


def random_arrays(rng):
    alphabet = rng.choice([b"ab", b"\x00a", "\u00e9\u20acx".encode(), bytes(range(1, 256)), b"0123456789-FBIS"])
    lengths = [0, 1, 2, 7, 8, 9, 15, 16, 17, 30, 64, 65][: rng.randint(1, 12)]
    pool = [bytes(rng.choice(alphabet) for _ in range(rng.choice(lengths))) for _ in range(rng.randint(1, 40))]
    arrays = []
    for _ in range(rng.randint(1, 3)):
        t = rng.choice([pa.binary(), pa.large_binary()])
        a = pa.array([rng.choice(pool) for _ in range(rng.randint(0, 60))], t)
        if rng.random() < 0.3 and len(a) > 2:
            a = a.slice(1, len(a) - 2)  # an offset into the buffers
        if rng.random() < 0.3:
            a = pa.chunked_array([a.slice(0, len(a) // 2), a.slice(len(a) // 2)], t)
        arrays.append(a)
    return arrays


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("keep", [ALL_BITS, 0, 1 << 63, 0xF000_0000_0000_0000])
def test_same_codes_and_dictionary_as_arrow(monkeypatch, seed, keep):
    monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    monkeypatch.setattr(T, "_HASH_KEEP", keep)  # 0: every id collides with every other
    rng = random.Random(seed * 7919 + keep % 101)
    done = 0
    for _ in range(40):
        arrays = random_arrays(rng)
        if not sum(len(a) for a in arrays):
            continue
        got = T._sort_split_codes(tuple(arrays))
        if got is None:  # ids over 64 bytes
            assert max(len(v) for a in arrays for v in a.to_pylist()) > T._SORT_ENCODE_MAX_BYTES
            continue
        want = arrow_codes(arrays)
        assert got[1].equals(want[1])
        assert [c.tolist() for c in got[0]] == [c.tolist() for c in want[0]]
        assert all(c.dtype == np.int64 for c in got[0])
        # without the dictionary: the number of distinct ids, and codes that are Arrow's
        # renumbered (one code per id, each in 0 .. count - 1)
        codes, count = T._sort_split_codes(tuple(arrays), with_dictionary=False)
        assert count == len(want[1])
        pairs = {(a, b) for c, w in zip(codes, want[0]) for a, b in zip(c.tolist(), w.tolist())}
        assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(pairs)
        assert all(0 <= a < count for a, _ in pairs)
        done += 1
    assert done > 10


def test_too_many_collisions_are_left_to_arrow(monkeypatch):
    monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    monkeypatch.setattr(T, "_HASH_KEEP", 0)
    monkeypatch.setattr(T, "_SORT_ENCODE_MAX_SPLIT", 3)
    arrays = (pa.array([b"a", b"b", b"c", b"d", b"a"], pa.large_binary()),)
    assert T._sort_split_codes(arrays) is None
    codes, dictionary = T._split_codes(arrays)  # Arrow's, the same
    assert codes[0].tolist() == [0, 1, 2, 3, 0] and dictionary.to_pylist() == [b"a", b"b", b"c", b"d"]


def test_nul_bytes_are_part_of_the_id(monkeypatch):
    monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    monkeypatch.setattr(T, "_HASH_KEEP", 0)  # every hash equal: only the bytes tell them apart
    ids = [b"a", b"a\x00", b"a\x00\x00", b"", b"\x00", b"a", b"a\x00"]
    codes, dictionary = T._sort_split_codes((pa.array(ids, pa.large_binary()),))
    assert codes[0].tolist() == [0, 1, 2, 3, 4, 0, 1]
    assert dictionary.to_pylist() == ids[:5]


def src(text):
    return Source("f", text.encode(), "")


@pytest.mark.parametrize("keep", [ALL_BITS, 0])
def test_tables_agree_with_arrow_codes(monkeypatch, keep):
    """Every measure (and -M, -c, -l) the same whichever encoder numbered the docnos, with unicode,
    numeric-looking and 8- and 16-byte docnos, ties and a missing topic."""
    rng = random.Random(5)
    docs = ["FBIS3-1", "FBIS3-10", "12345678", "1234567812345678", "\u00e9t\u00e9", "d\u20ac", "0", "007", "a" * 17]
    docs += [f"LA0101{i:02d}-00{i}" for i in range(30)]
    qrels, run = [], []
    for t in range(1, 6):
        for d in rng.sample(docs, 12):
            qrels.append(f"{t} 0 {d} {rng.choice([-1, 0, 1, 2])}")
        if t != 4:
            for rank, d in enumerate(rng.sample(docs, 15)):
                run.append(f"{t} Q0 {d} {rank} {rng.choice([1.0, 2.0, 3.5])} r")
    q, r = parse_qrels(src("\n".join(qrels) + "\n")), parse_run(src("\n".join(run) + "\n"))
    reqs = resolve(["all_trec"])

    def output(**opts):
        t = build_table(q, r, EvalOptions(complete=True, **opts), doc_dict=False)
        return format_trec(evaluate_table(Job.of(q, reqs, t.opts), t), per_query=True)

    cases = [{}, {"max_docs": 5}, {"rel_level": 2}, {"judged_only": True}]
    arrow = [output(**c) for c in cases]
    monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    monkeypatch.setattr(T, "_HASH_KEEP", keep)
    assert [output(**c) for c in cases] == arrow


@pytest.mark.parametrize("keep", [ALL_BITS, 0])
def test_duplicates_named_as_with_arrow_codes(monkeypatch, keep):
    qrels = "1 0 a 1\n1 0 b 0\n2 0 a 1\n"
    run = "1 Q0 b 1 3 r\n1 Q0 a 2 2 r\n2 Q0 \u00e9 1 1 r\n1 Q0 c 3 1 r\n1 Q0 a 4 0 r\n1 Q0 b 5 0 r\n"
    dup_qrels = "1 0 a 1\n1 0 b 0\n2 0 a 1\n1 0 b 2\n"

    def errors():
        out = []
        for qt, rt in ((qrels, run), (dup_qrels, "1 Q0 a 1 1 r\n")):
            with pytest.raises(DuplicateDocError) as e:
                build_table(parse_qrels(src(qt)), parse_run(src(rt)), EvalOptions(complete=True), doc_dict=False)
            out.append(str(e.value))
        return out

    want = errors()
    assert "'a' is retrieved twice for topic '1' (first at line 2)" in want[0] and want[0].startswith("f:5:")
    assert want[1] == "f:4: document 'b' is judged twice for topic '1' (first at line 2)"
    monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    monkeypatch.setattr(T, "_HASH_KEEP", keep)
    assert errors() == want


@pytest.mark.parametrize("seed", range(5))
def test_labels_through_owners_and_by_search_agree(seed):
    """Docnos judged for several topics, negative labels, rows judged nowhere: the table by
    docno code (dense codes) and the binary search (sparse codes) give every row its label."""
    rng = np.random.default_rng(seed)
    nq, ndoc = 7, 50
    pairs = np.unique(rng.integers(0, nq * ndoc, size=120))
    rel = rng.integers(-2, 4, size=len(pairs))
    judged = dict(zip(pairs.tolist(), rel.tolist()))
    g = rng.integers(0, nq, size=400)
    d = rng.integers(0, ndoc, size=400)
    rkey = g * ndoc + d
    want = [-1 if k not in judged else (-2 if judged[k] < 0 else judged[k]) for k in rkey.tolist()]
    dense = T._lookup_labels(rkey, d, ndoc, pairs, rel)
    assert dense.tolist() == want
    big = 1 << 40  # codes too sparse for a table by code: the binary search
    sparse = T._lookup_labels(g * big + d, d, big, (pairs // ndoc) * big + pairs % ndoc, rel)
    assert sparse.tolist() == want


def test_stable_sort_is_a_stable_argsort():
    rng = np.random.default_rng(3)
    for key in (rng.integers(0, 5, 1000), rng.integers(0, 1 << 40, 1000), np.array([-1, 3, -1, 2]), np.zeros(0, int)):
        order, ks = T._stable_sort(key)
        assert order.tolist() == np.argsort(key, kind="stable").tolist()
        assert ks.tolist() == key[np.argsort(key, kind="stable")].tolist()


@pytest.mark.parametrize("sort_path", [True, False])
@pytest.mark.parametrize(
    "opts",
    [EvalOptions(), EvalOptions(complete=True), EvalOptions(max_docs=4), EvalOptions(judged_only=True, max_docs=4)],
)
def test_tables_without_docno_dictionary_are_the_same(monkeypatch, sort_path, opts):
    """A table whose measures never read a docno (``doc_dict=False``) builds no dictionary of
    docnos: its labels and order are those of a table with one, and a document retrieved twice
    is named by the same docno text (unicode, numeric-looking and word docnos, under -M and -c)."""
    if sort_path:
        monkeypatch.setattr(T, "_SORT_ENCODE_MIN", 1)
    qrels = "1 0 a 1\n1 0 b 0\n2 0 \u00e9 1\n2 0 10 2\n"
    good = "1 Q0 b 1 3 r\n1 Q0 a 2 3 r\n1 Q0 c 3 1 r\n2 Q0 10 1 2 r\n2 Q0 \u00e9 2 2 r\n2 Q0 a 3 2 r\n2 Q0 z 4 0.1 r\n"
    q = parse_qrels(src(qrels))
    with_dict = build_table(q, parse_run(src(good)), opts, doc_dict=True)
    without = build_table(q, parse_run(src(good)), opts, doc_dict=False)
    assert without.doc is None and without.doc_dict is None
    for name in ("g", "label", "starts", "qg", "qrel", "missing"):
        assert np.array_equal(getattr(with_dict, name), getattr(without, name)), name
    for dup in ("\u00e9", "10", "a"):
        bad = good + f"2 Q0 {dup} 4 2.5 r\n"
        messages = []
        for want_dict in (True, False):
            with pytest.raises(DuplicateDocError) as e:
                build_table(parse_qrels(src(qrels)), parse_run(src(bad)), opts, doc_dict=want_dict)
            messages.append(str(e.value))
        assert messages[0] == messages[1]
        assert f"'{dup}' is retrieved twice for topic '2'" in messages[0]
