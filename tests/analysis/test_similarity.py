"""``ireval similarity``: rank-biased overlap (Webber, Moffat & Zobel 2010) and Kendall's tau
over the top k (tau-b, missing documents tied at k + 1: Fagin, Kumar & Sivakumar 2003),
checked against hand-worked examples, a plain Python RBO written from the paper's
definitions (truncated infinite sums over explicit continuations of the lists), and
scipy.stats.kendalltau."""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from tests.conftest import write


def run_text(topics: dict[str, list[str]], runid: str = "r") -> str:
    """A TREC run ranking each topic's documents in the order given (scores descending)."""
    lines = []
    for qid, docs in topics.items():
        for i, d in enumerate(docs):
            lines.append(f"{qid} Q0 {d} {i + 1} {len(docs) - i} {runid}")
    return "\n".join(lines) + "\n"


def similarity_of(a: dict[str, list[str]], b: dict[str, list[str]], specs: list[str]) -> dict[str, np.ndarray]:
    """label -> per-topic values, through the analysis module (runs built in memory)."""
    import pyarrow as pa

    from irevalcli.analysis.similarity import parse_measures, rankings, similarity
    from irevalcli.io.trec import Run

    def run(topics: dict[str, list[str]], name: str) -> Run:
        qid = [q.encode() for q, docs in topics.items() for _ in docs]
        doc = [d.encode() for docs in topics.values() for d in docs]
        score = [float(len(docs) - i) for docs in topics.values() for i in range(len(docs))]
        return Run(
            name,
            "",
            pa.array(qid, pa.binary()),
            pa.array(doc, pa.binary()),
            np.array(score),
            np.arange(1, len(doc) + 1),
            name,
        )

    rk = rankings(run(a, "A"), run(b, "B"))
    return dict(similarity(rk, parse_measures(specs)))


# ---- RBO: hand-worked ----------------------------------------------------------------------


def test_rbo_hand_worked_even_lists():
    """S = a b c, T = b a d, p = 0.5 (both seen to depth k = 3).

    Overlaps X_1 = 0, X_2 = 2, X_3 = 2.
    RBO_EXT (eq. 32) = (1-p)/p sum_d X_d/d p^d + X_k/k p^k
                    = 1 * (0 + 1 * 0.25 + 2/3 * 0.125) + 2/3 * 0.125 = 5/12 = 0.416667.
    RBO_MIN (eq. 11) = (1-p)/p (sum_d (X_d - X_3)/d p^d - X_3 ln(1-p))
                    = (-2 * 0.5 + 0 + 0) - 2 ln 0.5 = 2 ln 2 - 1 = 0.386294.
    RBO_RES (eq. 13), f = 2k - X_k = 4:
      p^4 + (1-p)/p (sum_{d=4}^{4} 2(d-3)/d p^d - X_3 sum_{d>4} p^d/d)
      = 0.0625 + 0.03125 - 2 (ln 2 - 0.5 - 0.125 - 0.125/3 - 0.0625/4) = 0.072039.
    RBO_MAX = MIN + RES = 0.458333: the continuations S = a b c d ..., T = b a d c ...
    agree from depth 4 on: 0.5 (0 + 0.5 * 1 + 0.25 * 2/3 + 0.25 * 1 / (1 - 0.5) * 0.5) = 11/24.
    """
    got = similarity_of({"1": ["a", "b", "c"]}, {"1": ["b", "a", "d"]}, ["rbo.p=0.5"])
    assert got["rbo_ext_p=0.5"][0] == pytest.approx(5 / 12, abs=1e-12)
    assert got["rbo_min_p=0.5"][0] == pytest.approx(2 * math.log(2) - 1, abs=1e-12)
    res = 0.0625 + 0.03125 - 2 * (math.log(2) - 0.5 - 0.125 - 0.125 / 3 - 0.0625 / 4)
    assert got["rbo_res_p=0.5"][0] == pytest.approx(res, abs=1e-12)
    assert got["rbo_min_p=0.5"][0] + got["rbo_res_p=0.5"][0] == pytest.approx(11 / 24, abs=1e-12)


def test_rbo_hand_worked_uneven_lists():
    """S = a b (s = 2), L = c a d (l = 3), p = 0.5.

    X_1 = 0, X_2 = |{a,b} & {c,a}| = 1, X_3 = |{a,b} & {c,a,d}| = 1; X_s = X_2 = 1, X_l = 1.
    RBO_MIN = (1-p)/p (sum_{d<=3} (X_d - X_3)/d p^d - X_3 ln(1-p)) = -1 * 0.5 + ln 2 = 0.193147.
    RBO_EXT = (1-p)/p (sum_{d<=3} X_d/d p^d + sum_{d=3}^{3} X_s (d-s)/(s d) p^d)
              + ((X_l - X_s)/l + X_s/s) p^l
            = (0.25/2 + 0.125/3) + 1 * 1/(2*3) * 0.125 + (0 + 1/2) * 0.125
            = 0.125 + 0.041667 + 0.020833 + 0.0625 = 0.25.
    RBO_RES, f = l + s - X_l = 4: (1-p)/p (sum_{d=3}^{3} (d-s)/d p^d + sum_{d=4}^{4} (2d-s-l)/d p^d
            - X_l sum_{d>4} p^d/d) + p^4
            = 0.125/3 + 3/4 * 0.0625 - (ln 2 - 0.5 - 0.125 - 0.125/3 - 0.0625/4) + 0.0625.
    """
    got = similarity_of({"1": ["a", "b"]}, {"1": ["c", "a", "d"]}, ["rbo.p=0.5"])
    assert got["rbo_min_p=0.5"][0] == pytest.approx(math.log(2) - 0.5, abs=1e-12)
    assert got["rbo_ext_p=0.5"][0] == pytest.approx(0.25, abs=1e-12)
    res = 0.125 / 3 + 0.75 * 0.0625 - (math.log(2) - 0.5 - 0.125 - 0.125 / 3 - 0.0625 / 4) + 0.0625
    assert got["rbo_res_p=0.5"][0] == pytest.approx(res, abs=1e-12)


def test_identical_and_disjoint_rankings():
    docs = [f"d{i}" for i in range(7)]
    same = similarity_of({"1": docs}, {"1": docs}, ["rbo.p=0.8", "kendall_tau.k=5"])
    assert same["rbo_ext_p=0.8"][0] == pytest.approx(1.0, abs=1e-12)
    assert same["rbo_min_p=0.8"][0] + same["rbo_res_p=0.8"][0] == pytest.approx(1.0, abs=1e-12)
    # eq. 13 with X_k = k = 7, f = k: p^7 - (1-p)/p * 7 * sum_{d>7} p^d / d
    tail = -math.log(0.2) - sum(0.8**d / d for d in range(1, 8))
    assert same["rbo_res_p=0.8"][0] == pytest.approx(0.8**7 - 0.25 * 7 * tail, abs=1e-12)
    assert same["kendall_tau_k=5"][0] == 1.0
    other = similarity_of({"1": docs}, {"1": [d.upper() for d in docs]}, ["rbo.p=0.8", "kendall_tau.k=3"])
    assert other["rbo_min_p=0.8"][0] == 0.0 and other["rbo_ext_p=0.8"][0] == 0.0
    # every pair one in each list only: discordant; pairs from one list only: tied in the other.
    # n = 6, 9 discordant, 3 + 3 tied pairs: -9 / sqrt(12 * 12)
    assert other["kendall_tau_k=3"][0] == pytest.approx(-0.75, abs=1e-12)


# ---- RBO: an independent plain implementation ------------------------------------------------


def rbo_sum(x: list, y: list, p: float) -> float:
    """(1-p) sum_d p^(d-1) |x[:d] & y[:d]| / d over the lists' whole (long) length."""
    total, seen_x, seen_y, overlap = 0.0, set(), set(), 0
    for d in range(1, len(x) + 1):
        a, b = x[d - 1], y[d - 1]
        if a == b:
            overlap += 1
        else:
            overlap += (a in seen_y) + (b in seen_x)
        seen_x.add(a)
        seen_y.add(b)
        total += p ** (d - 1) * overlap / d
    return (1 - p) * total


def rbo_reference(s: list, t: list, p: float, depth: int = 3000) -> tuple[float, float, float]:
    """(min, res, ext) from the paper's definitions, independently of the closed forms:
    min = RBO of continuations sharing nothing more; max = RBO of the best continuations
    (each list continues with the other's unmatched documents in the other's order, then the
    same fresh documents); ext = eq. 32 summed plainly."""
    if len(s) > len(t):
        s, t = t, s
    ss, tt = set(s), set(t)
    lo_s = s + [("s", i) for i in range(depth - len(s))]
    lo_t = t + [("t", i) for i in range(depth - len(t))]
    rmin = rbo_sum(lo_s, lo_t, p)
    fresh = [("z", i) for i in range(depth)]
    hi_s = (s + [d for d in t if d not in ss] + fresh)[:depth]
    hi_t = (t + [d for d in s if d not in tt] + fresh)[:depth]
    rmax = rbo_sum(hi_s, hi_t, p)
    sl, ll = len(s), len(t)

    def x(d: int) -> int:
        return len(set(s[:d]) & set(t[:d]))

    ext = sum(x(d) / d * p**d for d in range(1, ll + 1))
    ext += sum(x(sl) * (d - sl) / (sl * d) * p**d for d in range(sl + 1, ll + 1))
    ext = (1 - p) / p * ext + ((x(ll) - x(sl)) / ll + x(sl) / sl) * p**ll
    return rmin, rmax - rmin, ext


def test_rbo_matches_a_plain_implementation_on_random_rankings():
    rng = random.Random(7)
    a: dict[str, list[str]] = {}
    b: dict[str, list[str]] = {}
    for q in range(40):
        pool = [f"d{i}" for i in range(rng.randint(2, 30))]
        a[f"q{q:02d}"] = rng.sample(pool, rng.randint(1, len(pool)))
        b[f"q{q:02d}"] = rng.sample(pool, rng.randint(1, len(pool)))
    for p in (0.5, 0.9, 0.95):
        got = similarity_of(a, b, [f"rbo.p={p}"])
        for i, q in enumerate(sorted(a)):
            rmin, res, ext = rbo_reference(a[q], b[q], p)
            assert got[f"rbo_min_p={p}"][i] == pytest.approx(rmin, abs=1e-9), q
            assert got[f"rbo_res_p={p}"][i] == pytest.approx(res, abs=1e-9), q
            assert got[f"rbo_ext_p={p}"][i] == pytest.approx(ext, abs=1e-9), q
            assert got[f"rbo_min_p={p}"][i] <= got[f"rbo_ext_p={p}"][i] + 1e-12


def test_rbo_depth_cuts_both_lists():
    a = {"1": list("abcdefgh")}
    b = {"1": list("bcaxyzhg")}
    got = similarity_of(a, b, ["rbo.p=0.9,depth=4"])
    rmin, res, ext = rbo_reference(list("abcd"), list("bcax"), 0.9)
    assert got["rbo_min_p=0.9,depth=4"][0] == pytest.approx(rmin, abs=1e-9)
    assert got["rbo_res_p=0.9,depth=4"][0] == pytest.approx(res, abs=1e-9)
    assert got["rbo_ext_p=0.9,depth=4"][0] == pytest.approx(ext, abs=1e-9)


# ---- Kendall's tau over the top k ------------------------------------------------------------


def test_kendall_tau_hand_worked():
    """A = a b c, B = b a d, k = 3. Union a b c d; A's ranks 1 2 3 4 (d missing: k + 1),
    B's 2 1 4 3 (c missing). Pairs: ab discordant, ac ad bc bd concordant, cd discordant (A puts
    c first, B puts d first): (4 - 2) / 6 = 1/3, no ties.

    k = 2, A = a b, B = c d: union a b c d, A's ranks 1 2 3 3, B's 3 3 1 2. ab tied in B, cd
    tied in A, the four cross pairs discordant: tau-b = -4 / sqrt((6 - 1)(6 - 1)) = -0.8."""
    got = similarity_of({"1": list("abc"), "2": list("ab")}, {"1": list("bad"), "2": list("cd")}, ["kendall_tau.3"])
    assert got["kendall_tau_k=3"][0] == pytest.approx(1 / 3, abs=1e-12)
    got = similarity_of({"2": list("ab")}, {"2": list("cd")}, ["kendall_tau.k=2"])
    assert got["kendall_tau_k=2"][0] == pytest.approx(-0.8, abs=1e-12)


def test_kendall_tau_of_one_document_is_nan():
    got = similarity_of({"1": ["a"], "2": list("ab")}, {"1": ["a"], "2": list("ba")}, ["kendall_tau"])
    assert math.isnan(got["kendall_tau_k=10"][0]) and got["kendall_tau_k=10"][1] == -1.0


def test_kendall_tau_matches_scipy_on_the_union():
    from scipy.stats import kendalltau

    rng = random.Random(11)
    a: dict[str, list[str]] = {}
    b: dict[str, list[str]] = {}
    for q in range(60):
        pool = [f"d{i}" for i in range(rng.randint(2, 40))]
        a[f"q{q:02d}"] = rng.sample(pool, rng.randint(1, len(pool)))
        b[f"q{q:02d}"] = rng.sample(pool, rng.randint(1, len(pool)))
    for k in (1, 3, 10, 25):
        got = similarity_of(a, b, [f"kendall_tau.k={k}"])[f"kendall_tau_k={k}"]
        for i, q in enumerate(sorted(a)):
            top_a, top_b = a[q][:k], b[q][:k]
            union = list(dict.fromkeys(top_a + top_b))
            ra = [top_a.index(d) + 1 if d in top_a else k + 1 for d in union]
            rb = [top_b.index(d) + 1 if d in top_b else k + 1 for d in union]
            if len(union) < 2:
                assert math.isnan(got[i])
                continue
            want = kendalltau(ra, rb).statistic  # tau-b
            assert got[i] == pytest.approx(want, abs=1e-12), (q, k)
            # and on the intersection only, where both rank every document: the classic tau
            both = [d for d in top_a if d in top_b]
            if len(both) > 1 and len(union) == len(both):
                assert got[i] == pytest.approx(
                    kendalltau([top_a.index(d) for d in both], [top_b.index(d) for d in both]).statistic
                )


# ---- the command ------------------------------------------------------------------------------


@pytest.fixture
def runs(tmp_path):
    write(tmp_path / "a.txt", run_text({"1": list("abc"), "2": list("ab")}, "ra"))
    write(tmp_path / "b.txt", run_text({"1": list("bad"), "2": list("cd")}, "rb"))
    return tmp_path


def test_trec_text_per_topic_and_mean(cli, runs):
    tmp = runs
    res = cli(["similarity", "a.txt", "b.txt", "-m", "rbo.p=0.5", "-m", "kendall_tau.k=3", "-q"], cwd=tmp)
    assert res.code == 0, res.err
    # topic 1: the hand-worked lists above; topic 2: disjoint (rbo 0; tau -0.8 as k = 3 > 2)
    lines = res.out.decode().splitlines()
    assert lines[0] == "rbo_min_p=0.5         \t1\t0.3863"
    assert lines[2] == "rbo_ext_p=0.5         \t1\t0.4167"
    assert lines[3] == "kendall_tau_k=3       \t1\t0.3333"
    assert lines[4] == "rbo_min_p=0.5         \t2\t0.0000"
    assert lines[7] == "kendall_tau_k=3       \t2\t-0.8000"
    assert lines[8] == "rbo_min_p=0.5         \tall\t0.1931"  # (0.386294 + 0) / 2
    assert lines[11] == "kendall_tau_k=3       \tall\t-0.2333"  # (1/3 - 0.8) / 2
    assert len(lines) == 12


def test_default_measures_and_json(cli, runs):
    tmp = runs
    res = cli(["similarity", "a.txt", "b.txt", "--format", "json", "-q"], cwd=tmp)
    assert res.code == 0, res.err
    doc = json.loads(res.out)
    assert list(doc["summary"]) == ["rbo_min_p=0.9", "rbo_res_p=0.9", "rbo_ext_p=0.9", "kendall_tau_k=10"]
    assert doc["per_query"]["2"]["rbo_ext_p=0.9"] == 0.0
    assert doc["command"] == "similarity" and doc["num_q"] == 2
    assert doc["runid"] == {"run_a": "ra", "run_b": "rb"}
    assert doc["inputs"]["run_a"]["path"] == "a.txt" and len(doc["inputs"]["run_b"]["sha256"]) == 64
    assert doc["options"]["measures"] == ["rbo", "kendall_tau"] and doc["options"]["ties"] == "docno"


def test_nan_is_null_in_json_and_left_out_of_the_mean(cli, tmp_path):
    write(tmp_path / "a.txt", run_text({"1": ["x"], "2": list("ab")}))
    write(tmp_path / "b.txt", run_text({"1": ["x"], "2": list("ba")}))
    res = cli(["similarity", "a.txt", "b.txt", "-m", "kendall_tau", "--format", "json", "-q"], cwd=tmp_path)
    doc = json.loads(res.out)
    assert doc["per_query"]["1"]["kendall_tau_k=10"] is None
    assert doc["summary"]["kendall_tau_k=10"] == -1.0
    text = cli(["similarity", "a.txt", "b.txt", "-m", "kendall_tau", "-q"], cwd=tmp_path).out.decode()
    assert text.splitlines()[0] == "kendall_tau_k=10      \t1\t  -nan"


def test_tables_and_parquet(cli, runs):
    import pyarrow.parquet as pq

    tmp = runs
    md = cli(["similarity", "a.txt", "b.txt", "-m", "rbo_ext.p=0.5 kendall_tau.3", "--format", "markdown"], cwd=tmp)
    assert md.out.decode().splitlines() == [
        "| run | runid | rbo_ext_p=0.5 | kendall_tau_k=3 |",
        "| --- | --- | ---: | ---: |",
        "| a.txt vs b.txt | ra vs rb | 0.2083 | -0.2333 |",  # (5/12 + 0) / 2, (1/3 - 0.8) / 2
    ]
    assert cli(["similarity", "a.txt", "b.txt", "--output", "s.parquet", "-m", "rbo_min.p=0.5"], cwd=tmp).code == 0
    t = pq.read_table(tmp / "s.parquet")
    assert t.column("measure").to_pylist() == ["rbo_min_p=0.5"]
    assert t.column("value").to_pylist()[0] == pytest.approx(math.log(2) - 0.5)  # the mean of 2 ln 2 - 1 and 0
    csv = cli(["similarity", "a.txt", "b.txt", "-m", "rbo_ext.p=0.5", "--format", "csv", "-q"], cwd=tmp).out.decode()
    assert csv.splitlines()[0] == "run,runid,qid,rbo_ext_p=0.5"


def test_ties_rule_orders_the_rankings(cli, tmp_path):
    """Equal scores: docno descending (trec_eval's rule) unless --ties input."""
    write(tmp_path / "a.txt", "1 Q0 a 1 1 r\n1 Q0 b 2 1 r\n1 Q0 c 3 1 r\n")  # all tied: c b a
    write(tmp_path / "b.txt", "1 Q0 c 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")  # c b a
    same = cli(["similarity", "a.txt", "b.txt", "-m", "kendall_tau"], cwd=tmp_path)
    assert same.out == b"kendall_tau_k=10      \tall\t1.0000\n"
    as_read = cli(["similarity", "a.txt", "b.txt", "-m", "kendall_tau", "--ties", "input"], cwd=tmp_path)
    assert as_read.out == b"kendall_tau_k=10      \tall\t-1.0000\n"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-m", "rbo.p=1"], "ireval: rbo.p=1: p = 1 is outside (0, 1): the persistence is a probability\n"),
        (["-m", "rbo.p=0"], "ireval: rbo.p=0: p = 0 is outside (0, 1): the persistence is a probability\n"),
        (["-m", "rbo.p=x"], "ireval: rbo.p=x: p 'x' is not a number\n"),
        (["-m", "kendall_tau.k=0"], "ireval: kendall_tau.k=0: k = 0 must be at least 1\n"),
        (["-m", "rbo.depth=0"], "ireval: rbo.depth=0: depth = 0 must be at least 1\n"),
        (["-m", "rbo.k=3"], "ireval: rbo.k=3: rbo takes no parameter 'k' (it takes: p, depth)\n"),
        (
            ["-m", "rbp"],
            "ireval: unknown similarity measure 'rbp' (did you mean 'rbo'?); similarity measures: rbo, "
            "rbo_min, rbo_res, rbo_ext (rbo.p=0.9,depth=K), kendall_tau (kendall_tau.k=10)\n",
        ),
    ],
)
def test_bad_parameters_exit_2_before_reading(cli, tmp_path, args, message):
    res = cli(["similarity", "missing_a.txt", "missing_b.txt", *args], cwd=tmp_path)
    assert (res.code, res.out, res.err) == (2, b"", message)


def test_topics_in_one_run_only(cli, tmp_path):
    write(tmp_path / "a.txt", run_text({"1": list("ab"), "2": list("ab"), "3": ["a"]}))
    write(tmp_path / "b.txt", run_text({"1": list("ab"), "4": ["a"]}))
    res = cli(["similarity", "a.txt", "b.txt"], cwd=tmp_path)
    assert (res.code, res.out) == (2, b"")
    assert res.err == (
        "ireval: topic '2' is in a.txt but not in b.txt (and 2 more topics in one run only): rankings are "
        "compared topic by topic; --shared-topics compares the topics both runs have\n"
    )
    ok = cli(["similarity", "a.txt", "b.txt", "--shared-topics", "-m", "rbo_ext", "-q"], cwd=tmp_path)
    assert ok.code == 0
    assert ok.err == "ireval: note: 3 topics in one run only left out (2 in a.txt, 1 in b.txt); 1 compared\n"
    assert ok.out == b"rbo_ext_p=0.9         \t1\t1.0000\nrbo_ext_p=0.9         \tall\t1.0000\n"


def test_duplicate_document_is_refused(cli, tmp_path):
    write(tmp_path / "a.txt", "1 Q0 a 1 3 r\n1 Q0 b 2 2 r\n1 Q0 a 3 1 r\n")
    write(tmp_path / "b.txt", run_text({"1": list("ab")}))
    res = cli(["similarity", "a.txt", "b.txt"], cwd=tmp_path)
    assert (res.code, res.out) == (2, b"")
    assert res.err == "ireval: a.txt:3: document 'a' is retrieved twice for topic '1' (first at line 1)\n"


def test_similarity_is_a_subcommand_in_help(cli):
    res = cli(["similarity", "--help"])
    assert res.code == 0 and b"rank-biased overlap" in res.out


def test_inversion_count_matches_counting_every_pair():
    """The bit-by-bit inversion count behind tau's discordant pairs, against a double loop."""
    from irevalcli.analysis.similarity import count_inversions

    rng = np.random.default_rng(3)
    for _ in range(100):
        sizes = rng.integers(0, 30, rng.integers(1, 6))
        group = np.repeat(np.arange(len(sizes)), sizes)
        key = np.concatenate([rng.permutation(3 * s + 2)[:s] for s in sizes]).astype(np.int64)
        want = np.zeros(len(sizes), dtype=np.int64)
        for gi in range(len(sizes)):
            k = key[group == gi]
            want[gi] = sum(int(k[i] > k[j]) for i in range(len(k)) for j in range(i + 1, len(k)))
        assert (count_inversions(group, key, len(sizes)) == want).all()
