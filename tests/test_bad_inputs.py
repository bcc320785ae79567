"""The catalogue of hostile and broken inputs, run through the command line.

Every row is one bad input with the exact line ireval prints on stderr and its exit
code (0 ok, 1 gate failed, 2 usage or input error, 3 internal error). A CI gate that
crashes with a traceback, or prints a number computed from a half-read file, is
worse than no gate: each failure mode here is explicit.

Behaviours decided here (and listed in the README's "Errors and exit codes"):

* NaN scores are refused, however they are spelt (``nan``, ``NaN``, ``-nan``): a NaN
  cannot be ranked. Infinite scores are accepted, as C's ``strtod`` reads them:
  ``inf``/``infinity`` rank first, ``-inf`` last, and a score too large for a double
  (``1e999``) is infinite. Equal infinities tie, and the tie is broken by docno
  descending like any other tie.
* Relevance labels must be integers. trec_eval truncates ``1.5`` (and reads ``1e3``
  as 1) silently; ireval refuses every non-integer spelling, ``1.0`` included, and
  says so. Labels beyond +-2^62 are refused as out of range.
* A UTF-8 byte-order mark at the start of a file is refused with a clear message.
  trec_eval would make it part of the first topic id, so stripping it silently would
  give numbers trec_eval does not give for the same file; refusing makes the user fix
  the file, after which both tools agree (on every parser path).
* Ids are bytes: invalid UTF-8 is kept and printed back byte for byte. In messages,
  undecodable bytes, control characters and invisible marks are escaped (``\\xff``,
  ``\\x1b``, ``\\ufeff``), so stderr stays one faithful line a terminal cannot be
  hijacked by.
* A topic whose judgements are all negative is evaluated with R = 0 (trec_eval
  reuses the previous topic's counts: a reference defect).

A row may carry ``xfail`` (a strict xfail with the reason) to pin a known bug until it
is fixed; the bugs found while writing this catalogue have all been fixed since.
"""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

Q0 = b"1 0 a 1\n1 0 b 0\n2 0 a 1\n"
R0 = b"1 Q0 a 1 3.0 r1\n1 Q0 b 2 2.0 r1\n2 Q0 a 1 5.0 r1\n"
MAP_1 = b"map                   \tall\t1.0000\n"
BOM = b"\xef\xbb\xbf"

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@dataclass
class Case:
    id: str
    code: int
    err: str  # exact stderr; {q} and {r} are the qrels and run file names
    qrels: bytes = Q0
    run: bytes = R0
    args: list[str] = field(default_factory=lambda: ["-m", "map"])
    out: bytes | None = b""  # exact stdout (None: not checked)
    xfail: str | None = None


def _run(cli, tmp_path: Path, case: Case):
    (tmp_path / "qrels.txt").write_bytes(case.qrels)
    (tmp_path / "run.txt").write_bytes(case.run)
    return cli([*case.args, "qrels.txt", "run.txt"], cwd=tmp_path)


Q, R = "qrels.txt", "run.txt"

CATALOGUE = [
    # ---- field counts -------------------------------------------------------------
    Case(
        "run-5-fields",
        2,
        f"ireval: {R}:2: expected at least 6 fields (qid iter docno rank score runid), got 5\n",
        run=b"1 Q0 a 1 3 r\n1 Q0 b 2 2\n",
    ),
    Case(
        "run-1-field",
        2,
        f"ireval: {R}:1: expected at least 6 fields (qid iter docno rank score runid), got 1\n",
        run=b"1\n",
    ),
    Case(
        "run-empty-field-is-no-field",
        2,
        f"ireval: {R}:1: expected at least 6 fields (qid iter docno rank score runid), got 5\n",
        run=b"1\tQ0\ta\t1\t\tr\n",
    ),
    Case(
        "run-line-number-is-physical",
        2,
        f"ireval: {R}:5: expected at least 6 fields (qid iter docno rank score runid), got 3; "
        "for an MS MARCO run (qid docno rank) use --run-format msmarco\n",
        run=b"# c\n\n1 Q0 a 1 2 r\n\n1 Q0 b\n",
    ),
    Case("qrels-3-fields", 2, f"ireval: {Q}:1: expected 4 fields (qid iter docno rel), got 3\n", qrels=b"1 0 a\n"),
    Case(
        "qrels-5-fields",
        2,
        f"ireval: {Q}:2: expected 4 fields (qid iter docno rel), got 5\n",
        qrels=b"1 0 a 1\n1 0 b 1 extra\n",
    ),
    Case(
        "qrels-blank-line",
        2,
        f"ireval: {Q}:2: blank line (a qrels line needs 4 fields: qid iter docno rel)\n",
        qrels=b"1 0 a 1\n\n2 0 a 1\n",
    ),
    # ---- numbers --------------------------------------------------------------------
    Case(
        "score-not-a-number", 2, f"ireval: {R}:2: score 'abc' is not a number\n", run=b"1 Q0 a 1 3 r\n1 Q0 b 2 abc r\n"
    ),
    Case("score-trailing-garbage", 2, f"ireval: {R}:1: score '2.5x' is not a number\n", run=b"1 Q0 a 1 2.5x r\n"),
    Case("score-decimal-comma", 2, f"ireval: {R}:1: score '2,5' is not a number\n", run=b"1 Q0 a 1 2,5 r\n"),
    # hexadecimal: C's strtod reads 0x10 as 16 and atol reads 0x1 as 0; ireval refuses both
    Case(
        "score-hex-refused",
        2,
        f"ireval: {R}:1: score '0x10' is hexadecimal; write it in decimal\n",
        run=b"1 Q0 a 1 0x10 r\n",
    ),
    Case(
        "score-hex-float-refused",
        2,
        f"ireval: {R}:1: score '0x1p3' is hexadecimal; write it in decimal\n",
        run=b"1 Q0 a 1 0x1p3 r\n",
    ),
    Case(
        "label-hex-refused",
        2,
        f"ireval: {Q}:1: relevance label '0x1' is hexadecimal; write it in decimal\n",
        qrels=b"1 0 a 0x1\n1 0 b 0\n2 0 a 1\n",
    ),
    Case(
        "label-hex-refused-general-path",
        2,
        f"ireval: {Q}:2: relevance label '0X1' is hexadecimal; write it in decimal\n",
        qrels=b"1 0 a 1\n1\t0 b 0X1\n2 0 a 1\n",
    ),
    Case(
        "param-hex-gain-refused",
        2,
        "ireval: ndcg.1=0x1p1: value of '1' '0x1p1' is hexadecimal; write it in decimal\n",
        args=["-m", "ndcg.1=0x1p1"],
    ),
    Case(
        "param-hex-cutoff-refused",
        2,
        "ireval: P.0x5: cutoff '0x5' is hexadecimal; write it in decimal\n",
        args=["-m", "P.0x5"],
    ),
    # trec_eval -c scores a run of only comments as all-zero; ireval refuses it, as both refuse an empty run
    Case(
        "complete-run-only-comments",
        2,
        f"ireval: {R}: the run file has no results (only comments or blank lines)\n",
        run=b"# nothing\n# here\n",
        args=["-c", "-m", "map"],
    ),
    Case("score-nan", 2, f"ireval: {R}:1: score 'nan' cannot be ranked\n", run=b"1 Q0 a 1 nan r\n"),
    Case("score-NaN", 2, f"ireval: {R}:1: score 'nan' cannot be ranked\n", run=b"1 Q0 a 1 NaN r\n"),
    Case(
        "score-minus-nan", 2, f"ireval: {R}:2: score 'nan' cannot be ranked\n", run=b"1 Q0 a 1 1 r\n2 Q0 a 1 -nan r\n"
    ),
    Case(
        "label-not-a-number",
        2,
        f"ireval: {Q}:2: relevance label 'high' is not a number\n",
        qrels=b"1 0 a 1\n1 0 b high\n",
    ),
    Case(
        "label-float",
        2,
        f"ireval: {Q}:1: relevance label '1.5' is not an integer (trec_eval would truncate it; ireval refuses)\n",
        qrels=b"1 0 a 1.5\n",
    ),
    # a whole number is a label however it is written (1.0 and 1e0 are 1, as atol reads them);
    # an exponent that changes the value is refused, since trec_eval's atol stops at the 'e'
    Case(
        "label-exponent",
        2,
        f"ireval: {Q}:3: relevance label '1e3' is 1000, but trec_eval reads it as 1; write 1000\n",
        qrels=b"1 0 a 1\n2 0 a 1\n1 0 b 1e3\n",
    ),
    Case(
        "label-negative-fraction",
        2,
        f"ireval: {Q}:2: relevance label '-0.5' is not an integer (trec_eval would truncate it; ireval refuses)\n",
        qrels=b"1 0 a 1\n1 0 b -0.5\n",
    ),
    Case(
        "label-csv-fraction",
        2,
        f"ireval: {Q}:3: relevance label '0.5' is not an integer (trec_eval would truncate it; ireval refuses)\n",
        qrels=b"qid,docno,rel\n1,a,1\n1,b,0.5\n",
    ),
    # --ties rank reads the rank field (no other rule does), as a whole number
    Case(
        "rank-not-a-number-under-ties-rank",
        2,
        f"ireval: {R}:2: rank 'x' is not a number\n",
        run=b"1 Q0 a 1 3 r\n1 Q0 b x 2 r\n",
        args=["--ties", "rank", "-m", "map"],
    ),
    Case(
        "rank-fraction-under-ties-rank",
        2,
        f"ireval: {R}:1: rank '1.5' is not an integer (trec_eval would truncate it; ireval refuses)\n",
        run=b"1 Q0 a 1.5 3 r\n",
        args=["--ties", "rank", "-m", "map"],
    ),
    Case(
        "rank-missing-column-under-ties-rank",
        2,
        f"ireval: {R}: no 'rank' column for the run (columns: qid, docno, score); --ties rank orders by it: "
        "name one with --column rank=NAME, or use --ties docno or --ties input\n",
        run=b"qid,docno,score\n1,a,3\n",
        args=["--ties", "rank", "-m", "map"],
    ),
    Case(
        "label-out-of-range",
        2,
        f"ireval: {Q}:1: relevance label '99999999999999999999' is out of range\n",
        qrels=b"1 0 a 99999999999999999999\n",
    ),
    # ---- infinities: accepted, ranked as strtod reads them ---------------------------
    Case(
        "scores-infinite",
        0,
        "",
        args=["-q", "-m", "map", "-m", "relstring"],
        qrels=b"1 0 a 1\n1 0 b 2\n1 0 c 3\n1 0 d 4\n1 0 e 5\n1 0 f 6\n",
        # a, b, d tie at +inf (1e999 overflows to inf): docno descending d, b, a; then
        # f (0); c and e tie at -inf: e, c
        run=b"1 Q0 a 1 inf r\n1 Q0 b 2 Infinity r\n1 Q0 c 3 -inf r\n1 Q0 d 4 1e999 r\n"
        b"1 Q0 e 5 -1e999 r\n1 Q0 f 6 0 r\n",
        out=b"map                   \t1\t1.0000\nrelstring             \t1\t'421653'\n"
        b"map                   \tall\t1.0000\n",
    ),
    # ---- duplicates --------------------------------------------------------------------
    Case(
        "run-duplicate-doc",
        2,
        f"ireval: {R}:3: document 'a' is retrieved twice for topic '1' (first at line 1)\n",
        run=b"1 Q0 a 1 3 r\n2 Q0 a 1 3 r\n1 Q0 a 2 2 r\n",
    ),
    Case(
        "qrels-duplicate-same-label",
        2,
        f"ireval: {Q}:3: document 'a' is judged twice for topic '1' (first at line 1)\n",
        qrels=b"1 0 a 1\n2 0 a 1\n1 0 a 1\n",
    ),
    Case(
        "qrels-duplicate-different-labels",
        2,
        f"ireval: {Q}:3: document 'a' is judged twice for topic '1' (first at line 1)\n",
        qrels=b"1 0 a 1\n2 0 a 1\n1 0 a 0\n",
    ),
    # ---- empty and comment-only files ------------------------------------------------------
    Case("qrels-empty", 2, f"ireval: {Q}: the qrels file is empty\n", qrels=b""),
    Case("run-empty", 2, f"ireval: {R}: the run file is empty\n", run=b""),
    Case(
        "qrels-only-comments",
        2,
        f"ireval: {Q}: the qrels file has no judgements (only comments)\n",
        qrels=b"# judged by nobody\n# yet\n",
    ),
    Case(
        "qrels-tsv-header-only",
        2,
        f"ireval: {Q}: the qrels file has no judgements (only a header)\n",
        qrels=b"qid\tdocno\trel\n",
    ),
    Case("run-tsv-header-only", 2, f"ireval: {R}: the run file has no results\n", run=b"qid\tdocno\tscore\n"),
    Case(
        "run-only-comments-and-blanks",
        2,
        f"ireval: {R}: the run file has no results (only comments or blank lines)\n",
        run=b"# a\n\n   \n",
    ),
    # trec_eval 10.0 segfaults on a qrels file that ends in a comment line
    Case("qrels-ends-in-comment", 0, "", qrels=Q0 + b"# the end\n", out=MAP_1),
    # ---- bytes that do not belong in a text file -----------------------------------------------
    Case("qrels-nul", 2, f"ireval: {Q}:2: contains a NUL byte\n", qrels=b"1 0 a 1\n1 0 b\x00 1\n"),
    Case("run-nul", 2, f"ireval: {R}:1: contains a NUL byte\n", run=b"1 Q0 a 1 3 r\x00\n"),
    Case(
        "invalid-utf8-id-in-message",
        2,
        f"ireval: {R}: topic '\\xff' is judged in {Q} but has no results in the run "
        "(use -c to score missing topics as 0)\n",
        qrels=b"1 0 a 1\n\xff 0 d 1\n",
    ),
    Case(
        "escape-sequence-in-id-is-escaped",
        2,
        f"ireval: {R}:2: document '\\x1b[2J' is retrieved twice for topic '1' (first at line 1)\n",
        run=b"1 Q0 \x1b[2J 1 3 r\n1 Q0 \x1b[2J 2 3 r\n2 Q0 a 1 1 r\n",
    ),
    Case("crlf-line-ends", 0, "", qrels=Q0.replace(b"\n", b"\r\n"), run=R0.replace(b"\n", b"\r\n"), out=MAP_1),
    # ---- compressed data ---------------------------------------------------------------------------
    Case(
        "run-truncated-gzip",
        2,
        f"ireval: {R}: cannot read run file: corrupt or truncated compressed data "
        "(Compressed file ended before the end-of-stream marker was reached)\n",
        run=gzip.compress(R0 * 50)[:-9],
    ),
    Case(
        "qrels-truncated-gzip",
        2,
        f"ireval: {Q}: cannot read qrels file: corrupt or truncated compressed data "
        "(Compressed file ended before the end-of-stream marker was reached)\n",
        qrels=gzip.compress(Q0 * 50)[:-9],
    ),
    Case(
        "run-corrupt-deflate",
        2,
        f"ireval: {R}: cannot read run file: corrupt or truncated compressed data "
        "(Error -3 while decompressing data: invalid stored block lengths)\n",
        run=b"\x1f\x8b\x08\x00" + b"\x00" * 11,
    ),
    Case("run-gzip-of-nothing", 2, f"ireval: {R}: the run file is empty\n", run=gzip.compress(b"")),
    Case(
        "run-gzip-then-garbage",
        2,
        f"ireval: {R}: cannot read run file: corrupt or truncated compressed data (Not a gzipped file (b'ga'))\n",
        run=gzip.compress(R0) + b"garbage",
    ),
    # ---- topics ------------------------------------------------------------------------------------
    # issue 21: nothing in common is an error with or without -c (trec_eval 9 exits 7), and the
    # hint to use -c, which would print a clean map 0.0000, is not offered
    Case(
        "no-shared-topic",
        2,
        f"ireval: {R}: the run shares no topic with {Q}: nothing to evaluate\n",
        qrels=b"9 0 a 1\n",
    ),
    Case(
        "no-shared-topic-with-c",
        2,
        f"ireval: {R}: the run shares no topic with {Q}: nothing to evaluate\n",
        args=["-c", "-m", "num_q", "-m", "num_ret", "-m", "map"],
        qrels=b"9 0 a 1\n",
    ),
    Case(
        "no-shared-topic-9.0.8",
        2,
        f"ireval: {R}: the run shares no topic with {Q}: nothing to evaluate\n",
        args=["--compat", "9.0.8", "-m", "map"],
        qrels=b"9 0 a 1\n",
    ),
    Case(
        "all-judgements-negative-is-R-0",
        0,
        "",
        args=[
            "-q",
            "-m",
            "num_q",
            "-m",
            "num_rel",
            "-m",
            "num_rel_ret",
            "-m",
            "map",
            "-m",
            "bpref",
            "-m",
            "ndcg",
            "-m",
            "relstring",
        ],
        # topic 2 follows a topic with R = 1: trec_eval would reuse those counts
        qrels=b"1 0 a 1\n1 0 b 0\n2 0 a -1\n2 0 b -2\n",
        run=b"1 Q0 a 1 3 r1\n1 Q0 b 2 2 r1\n2 Q0 a 1 3 r1\n2 Q0 b 2 2 r1\n2 Q0 c 3 1 r1\n",
        out=b"num_rel               \t1\t1\nnum_rel_ret           \t1\t1\nmap                   \t1\t1.0000\n"
        b"bpref                 \t1\t1.0000\nrelstring             \t1\t'10'\nndcg                  \t1\t1.0000\n"
        b"num_rel               \t2\t0\nnum_rel_ret           \t2\t0\nmap                   \t2\t0.0000\n"
        b"bpref                 \t2\t0.0000\nrelstring             \t2\t'..-'\nndcg                  \t2\t0.0000\n"
        b"num_q                 \tall\t2\nnum_rel               \tall\t1\nnum_rel_ret           \tall\t1\n"
        b"map                   \tall\t0.5000\nbpref                 \tall\t0.5000\n"
        b"ndcg                  \tall\t0.5000\n",
    ),
    # ---- a lone CR ends a line (old Mac files), in every text format; never one long line ------
    *[
        Case(
            f"bare-cr-{name}{'-streamed' if stream else ''}",
            0,
            "",
            args=[*stream, "-m", "map"],
            qrels=Q0.replace(b"\n", b"\r") if "qrels" in name else Q0,
            run=run,
            out=MAP_1,
        )
        for name, run in (
            ("qrels", R0),
            ("run", R0.replace(b"\n", b"\r")),
            ("run-mixed-with-lf", b"1 Q0 a 1 3.0 r1\r1 Q0 b 2 2.0 r1\n2 Q0 a 1 5.0 r1\r\n"),
            ("csv-run", b"qid,docno,score\r1,a,3\r1,b,2\r2,a,5\r"),
            (
                "jsonl-run",
                b'{"qid": "1", "docno": "a", "score": 3}\r{"qid": "1", "docno": "b", "score": 2}\r'
                b'{"qid": "2", "docno": "a", "score": 5}\r',
            ),
        )
        for stream in ([], ["--stream"])
    ],
    # ---- CSV/TSV: blanks around values are padding, as around header names ----------------------
    Case("csv-padded-values-run", 0, "", run=b"qid , docno, score\n1, a, 3\n1 ,b,2\n2,\ta ,5\n", out=MAP_1),
    Case("csv-padded-values-qrels", 0, "", qrels=b"qid, docno ,rel\n1, a ,1\n1,b, 0\n2 ,a,1\n", out=MAP_1),
    Case("tsv-padded-values-run", 0, "", run=b"qid\t docno\tscore\n1\t a\t 3\n1 \tb\t2\n2\ta \t5 \n", out=MAP_1),
    # ---- hints for everyday slips: swapped files, a CSV run without its header ------------------------
    Case(
        "qrels-and-run-swapped",
        2,
        f"ireval: {Q}:1: expected 4 fields (qid iter docno rel), got 6; it looks like a run "
        "(qid iter docno rank score runid): are QRELS and RUN swapped? QRELS comes first\n",
        qrels=R0,
        run=Q0,
    ),
    Case(
        "run-is-a-qrels-file",
        2,
        f"ireval: {R}:1: expected at least 6 fields (qid iter docno rank score runid), got 4; "
        "it looks like a qrels file (qid iter docno rel), not a run: judgements go before the runs (pool: --qrels FILE)\n",
        run=Q0,
    ),
    *[
        Case(
            f"csv-run-without-header-{n}",
            2,
            f"ireval: {R}:1: expected at least 6 fields (qid iter docno rank score runid), got 1; the line looks "
            "comma-separated: give the file a header line naming its columns (e.g. qid,docno,score) to read it as CSV\n",
            run=run,
        )
        for n, run in (("3-columns", b"1,a,3\n1,b,2\n"), ("6-columns", b"1,Q0,a,1,3,r\n"))
    ],
    # ---- common header spellings: BEIR's qrels TSV, topic/doc/label --------------------------------------
    Case("beir-qrels-tsv", 0, "", qrels=b"query-id\tcorpus-id\tscore\n1\ta\t1\n1\tb\t0\n2\ta\t1\n", out=MAP_1),
    Case("qrels-topic-doc-label-csv", 0, "", qrels=b"topic,doc,label\n1,a,1\n1,b,0\n2,a,1\n", out=MAP_1),
    Case("run-topic-doc-score-csv", 0, "", run=b"topic,doc,score\n1,a,3\n1,b,2\n2,a,5\n", out=MAP_1),
    Case(
        "qrels-with-score-is-not-beir",
        2,
        f"ireval: {Q}: no 'rel' column for the qrels (columns: qid, docno, score); name one with --column rel=NAME\n",
        qrels=b"qid,docno,score\n1,a,1\n",
    ),
    Case(
        "trec-run-with-header-line",
        2,
        f"ireval: {R}:1: score 'score' is not a number; line 1 looks like a header, which TREC text does not have: "
        "delete it\n",
        run=b"qid Q0 docno rank score runid\n" + R0,
    ),
    # ---- a CSV run with a rank column and no score: rank it by rank (score = -rank), never backwards --
    Case(
        "csv-run-rank-without-score",
        2,
        f"ireval: {R}: no 'score' column for the run (columns: qid, docno, rank); to rank by its 'rank' column "
        "(rank 1 first: score = -rank) give --column rank=rank, or name a score column with --column score=NAME\n",
        run=b"qid,docno,rank\n1,b,2\n1,a,1\n2,a,1\n",
    ),
    Case(
        "csv-run-ranked-by-rank",
        0,
        "",
        args=["--column", "rank=rank", "-m", "map"],
        run=b"qid,docno,rank\n1,b,2\n1,a,1\n2,a,1\n",
        out=MAP_1,
    ),
    # ---- a topic id starting with PAR1 is TREC text (Parquet has PAR1 at both ends) -------------
    Case(
        "par1-topic-id-is-trec-text",
        0,
        "",
        qrels=b"PAR1x 0 a 1\nPAR1x 0 b 0\n",
        run=b"PAR1x Q0 a 1 3 r\nPAR1x Q0 b 2 2 r\n",
        out=MAP_1,
    ),
    # ---- a spreadsheet's CSV/TSV starts with a byte-order mark: dropped before the header ------------
    Case("bom-csv-run-header-accepted", 0, "", run=BOM + b"qid,docno,score\n1,a,3\n1,b,2\n2,a,5\n", out=MAP_1),
    Case(
        "bom-tsv-qrels-header-accepted", 0, "", qrels=BOM + b"qid\tdocno\trel\n1\ta\t1\n1\tb\t0\n2\ta\t1\n", out=MAP_1
    ),
    # ---- byte-order marks: refused (see the module docstring) ---------------------------------------
    *[
        Case(
            f"bom-{what}-{path}",
            2,
            f"ireval: {name}:1: the file starts with a UTF-8 byte order mark; save it without one "
            "(trec_eval would read the mark as part of the first topic id)\n",
            qrels=BOM + Q0 + tail if what == "qrels" else Q0,
            run=BOM + R0 + tail if what == "run" else R0,
        )
        for what, name in (("qrels", Q), ("run", R))
        for path, tail in (("fast-path", b""), ("tokenizer-path", b"# a trailing comment\n"))
    ],
    # ---- measure parameters the parser lets through ----------------------------------------------
    Case(
        "cutoff-beyond-long",
        2,
        "ireval: P.99999999999999999999999: cutoff '99999999999999999999999' is out of range\n",
        args=["-m", "P.99999999999999999999999"],
    ),
    Case(
        "real-parameter-infinite",
        2,
        "ireval: relstring.1e400: parameter '1e400' is out of range\n",
        args=["-m", "relstring.1e400"],
    ),
    Case(
        "pair-level-huge",
        2,
        "ireval: ndcg.99999999999999999999=1: level '99999999999999999999' is out of range\n",
        args=["-m", "ndcg.99999999999999999999=1"],
    ),
    Case(
        "cutoff-after-unicode-space",
        2,
        "ireval: P.\\x1c5: cutoff '\\x1c5' is not a positive integer\n",
        args=["-m", "P." + chr(0x1C) + "5"],
    ),  # not one constant: test_registry resolves every string constant
    # ---- ir_measures' spellings added for issue 16: parameters out of their domain ----------------------------
    Case(
        "gains-negative",
        2,
        "ireval: nDCG(gains={0:-1})@5: gains 0:-1: labels and gains must be non-negative integers\n",
        args=["-m", "nDCG(gains={0:-1})@5"],
    ),
    Case(
        "gains-not-a-mapping",
        2,
        "ireval: nDCG(gains={0})@5: cannot read the value '{0}'\n",
        args=["-m", "nDCG(gains={0})@5"],
    ),
    Case("insq-T-zero", 2, "ireval: insq: T=0 must be positive\n", args=["-m", "INSQ(T=0,max_rel=1)"]),
    Case("nerr10-p-above-one", 2, "ireval: nerr10: p=2 is not in [0, 1]\n", args=["-m", "nerr10.p=2"]),
    Case(
        "compat-normalize-not-bool",
        2,
        "ireval: Compat(normalize=3): normalize=3 is not True or False\n",
        args=["-m", "Compat(normalize=3)"],
    ),
    Case(
        "diversity-without-subtopics",
        2,
        "ireval: measure 'AP_IA' needs subtopic judgements: give --subtopics FILE\n",
        args=["-m", "AP_IA"],
    ),
    # ---- options ---------------------------------------------------------------------------------------
    Case(
        "collection-size-beyond-long",
        0,
        "",
        args=["-N", "99999999999999999999999", "-m", "utility"],
        out=b"utility               \tall\t0.5000\n",
    ),
    # atol would read these as 0: text where a number belongs is refused (trailing text, -l 2x, is
    # accepted as trec_eval accepts it)
    Case(
        "level-after-unicode-space",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': ' 2' is not an integer (see 'ireval --help')\n",
        args=["-l", chr(0x1C) + "2", "-m", "num_rel"],
    ),
    Case(
        "level-is-text",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': 'two' is not an integer (see 'ireval --help')\n",
        args=["-l", "two", "-m", "num_rel"],
    ),
    Case(
        "max-retrieved-is-text",
        2,
        "ireval: Invalid value for '-M' / '--Max_retrieved_per_topic': 'ten' is not an integer (see 'ireval --help')\n",
        args=["-M", "ten", "-m", "map"],
    ),
    Case(
        "collection-size-is-text",
        2,
        "ireval: Invalid value for '-N' / '--Number_docs_in_coll': 'all' is not an integer (see 'ireval --help')\n",
        args=["-N", "all", "-m", "utility"],
    ),
    Case("level-with-trailing-text-is-atol", 0, "", args=["-l", "1x", "-m", "map"], out=MAP_1),
    Case(
        "ties-unknown-rule",
        2,
        "ireval: Invalid value for '--ties': 'score' is not one of 'docno', 'input', 'rank'. (see 'ireval --help')\n",
        args=["--ties", "score", "-m", "map"],
    ),
    Case(
        "ties-input-with-prefs",
        2,
        "ireval: --ties input applies to -R qrels judgements, not -R prefs\n",
        args=["-R", "prefs", "--ties", "input", "-m", "prefs_simp"],
    ),
    # options are checked when the settings are made, before any input is read: a broken
    # qrels file does not hide them (nor they it, once they are fixed)
    Case(
        "max-retrieved-negative-before-reading",
        2,
        "ireval: -M -1: the number of documents to keep cannot be negative\n",
        qrels=b"1 0 a\n",
        args=["-M", "-1", "-m", "map"],
    ),
    Case(
        "unknown-judgement-format-before-reading",
        2,
        "ireval: -R trec: unknown judgement format (known: qrels, qrels_jg, prefs, qrels_prefs)\n",
        qrels=b"1 0 a\n",
        args=["-R", "trec", "-m", "map"],
    ),
    Case(
        "qrels-format-with-prefs-before-reading",
        2,
        "ireval: --qrels-format and --column rel apply to -R qrels judgements, not -R prefs\n",
        qrels=b"1 0 a\n",
        args=["-R", "prefs", "--qrels-format", "tsv", "-m", "prefs_simp"],
    ),
    Case(
        "peer-spelling-cutoffs-disagree",
        2,
        "ireval: PrecisionMetric(topn=3)@5: topn=3 and @5 disagree\n",
        args=["-m", "PrecisionMetric(topn=3)@5"],
    ),
    # ---- out of core (issue 17): --memory-limit, and an unsorted run partitioned on disk ----------------
    Case(
        "memory-limit-is-text",
        2,
        "ireval: --memory-limit lots: expected a size such as 512M, 2G or a number of bytes\n",
        args=["--memory-limit", "lots", "-m", "map"],
    ),
    Case(
        "memory-limit-unknown-unit",
        2,
        "ireval: --memory-limit 2P: expected a size such as 512M, 2G or a number of bytes\n",
        args=["--memory-limit", "2P", "-m", "map"],
    ),
    Case(
        "memory-limit-zero",
        2,
        "ireval: --memory-limit 0M: the limit must be more than 0 bytes\n",
        args=["--memory-limit", "0M", "-m", "map"],
    ),
    Case(
        "unsorted-out-of-core",
        0,
        "",
        run=b"1 Q0 a 1 3.0 r1\n2 Q0 a 1 5.0 r1\n1 Q0 b 2 2.0 r1\n",
        args=["--stream", "--memory-limit", "1K", "-m", "map"],
        out=MAP_1,
    ),
    Case(
        "unsorted-out-of-core-duplicate",
        2,
        f"ireval: {R}:4: document 'a' is retrieved twice for topic '2' (first at line 2)\n",
        run=b"1 Q0 a 1 3 r\n2 Q0 a 1 5 r\n1 Q0 b 2 2 r\n2 Q0 a 2 4 r\n1 Q0 b 3 1 r\n",
        args=["--stream", "--memory-limit", "1K", "-m", "map"],
    ),
    Case(
        "unsorted-out-of-core-missing-topic",
        2,
        f"ireval: {R}: topic '2' is judged in {Q} but has no results in the run (use -c to score missing topics as 0)\n",
        run=b"1 Q0 a 1 3 r\n3 Q0 a 1 5 r\n1 Q0 b 2 2 r\n3 Q0 b 2 4 r\n",
        args=["--stream", "--memory-limit", "1K", "-m", "map"],
    ),
    Case(
        "unsorted-out-of-core-bad-score",
        2,
        f"ireval: {R}:4: score 'x' is not a number\n",
        run=b"1 Q0 a 1 3 r\n2 Q0 a 1 5 r\n1 Q0 b 2 2 r\n2 Q0 b 2 x r\n",
        args=["--stream", "--memory-limit", "1K", "-m", "map"],
    ),
    # ---- --engine dask options (issue 17): refused before anything is read or started --------------
    Case(
        "scheduler-needs-dask-engine",
        2,
        "ireval: --scheduler applies to --engine dask\n",
        args=["--scheduler", "tcp://x:1"],
    ),
    Case("workers-need-dask-engine", 2, "ireval: --workers applies to --engine dask\n", args=["--workers", "2"]),
    Case(
        "partitioned-needs-dask-engine",
        2,
        "ireval: --partitioned-by-topic applies to --engine dask\n",
        args=["--partitioned-by-topic"],
    ),
    Case(
        "workers-and-scheduler",
        2,
        "ireval: --workers sizes the local cluster ireval starts; a --scheduler's cluster has its own\n",
        args=["--engine", "dask", "--scheduler", "tcp://x:1", "--workers", "2"],
    ),
    Case(
        "labelled-with-a-run",
        2,
        "ireval: --labelled reads one table (qid, docno, score, rel) and no separate RUN: give only the table\n",
        args=["--labelled", "-m", "map"],
    ),
    # ---- formats auto-detection takes TREC text for something else ----------------------------------
    Case("qid-starting-with-brace", 0, "", qrels=b"{1} 0 a 1\n", run=b"{1} Q0 a 1 3 r\n", out=MAP_1),
    Case("qid-looking-like-bzip2", 0, "", qrels=b"BZh91 0 a 1\n", run=b"BZh91 Q0 a 1 3 r\n", out=MAP_1),
]


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.id, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail else [])
        for c in CATALOGUE
    ],
)
def test_catalogue(cli, tmp_path, case):
    res = _run(cli, tmp_path, case)
    assert (res.code, res.err) == (case.code, case.err)
    if case.out is not None:
        assert res.out == case.out


def test_every_message_is_one_line_starting_with_ireval(cli, tmp_path):
    for case in CATALOGUE:
        if case.xfail:
            continue
        res = _run(cli, tmp_path, case)
        if res.code:
            assert res.err.count("\n") == 1 and res.err.startswith("ireval: "), case.id
            assert res.out == b"", case.id


# ---- files that cannot be read ---------------------------------------------------------------------


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_directory_given_as_input(cli, tmp_path, which):
    # a directory is a dataset (one input in many files); an empty one has nothing to read
    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "_SUCCESS").write_bytes(b"")  # not data
    args = ["d", "run.txt"] if which == "qrels" else ["qrels.txt", "d"]
    res = cli(["-m", "map", *args], cwd=tmp_path)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: d: cannot read {which} dataset: it holds no files\n")


@pytest.mark.parametrize("which", ["qrels", "run"])
def test_missing_input(cli, tmp_path, which):
    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    args = ["nope", "run.txt"] if which == "qrels" else ["qrels.txt", "nope"]
    res = cli(["-m", "map", *args], cwd=tmp_path)
    assert (res.code, res.out, res.err) == (2, b"", f"ireval: nope: cannot read {which} file: no such file\n")


@pytest.mark.skipif(IS_ROOT, reason="running as root: permission bits do not stop root from reading")
@pytest.mark.parametrize("which", ["qrels", "run"])
def test_unreadable_input(cli, tmp_path, which):
    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    target = tmp_path / f"{which}.txt"
    target.chmod(0)
    try:
        res = cli(["-m", "map", "qrels.txt", "run.txt"], cwd=tmp_path)
    finally:
        target.chmod(0o644)
    assert (res.code, res.out) == (2, b"")
    assert res.err == f"ireval: {which}.txt: cannot read {which} file: permission denied\n"


def test_qrels_from_stdin_is_refused(cli, tmp_path):
    (tmp_path / "run.txt").write_bytes(R0)
    res = cli(["-m", "map", "-", "run.txt"], cwd=tmp_path, stdin=Q0)
    assert (res.code, res.out) == (2, b"")
    assert (
        res.err == "ireval: QRELS cannot be read from standard input; only RUN can be '-' (see 'ireval --help')\n"
        or res.err == "ireval: QRELS cannot be read from standard input; only RUN can be '-'\n"
    )


def test_empty_stdin_run(cli, tmp_path):
    (tmp_path / "qrels.txt").write_bytes(Q0)
    res = cli(["-m", "map", "qrels.txt", "-"], cwd=tmp_path, stdin=b"")
    assert (res.code, res.out, res.err) == (2, b"", "ireval: <stdin>: the run file is empty\n")


# ---- ids are bytes ------------------------------------------------------------------------------------


def test_invalid_utf8_ids_are_printed_back_byte_exact(cli, tmp_path):
    qrels = b"q\xff 0 d\xfe 1\nq\xff 0 e 0\n"
    run = b"q\xff Q0 d\xfe 1 2 run\xc3\n" + b"q\xff Q0 e 2 1 run\xc3\n"
    case = Case("utf8", 0, "", qrels=qrels, run=run, args=["-q", "-m", "runid", "-m", "num_rel_ret", "-m", "map"])
    res = _run(cli, tmp_path, case)
    assert (res.code, res.err) == (0, "")
    assert res.out == (
        b"num_rel_ret           \tq\xff\t1\nmap                   \tq\xff\t1.0000\n"
        b"runid                 \tall\trun\xc3\nnum_rel_ret           \tall\t1\nmap                   \tall\t1.0000\n"
    )
    # the same bytes in JSON cannot be valid UTF-8; they are written as the same raw bytes
    res = cli(["-q", "-m", "map", "--format", "json", "qrels.txt", "run.txt"], cwd=tmp_path)
    assert res.code == 0 and b'"q\xff"' in res.out


def test_hash_and_odd_bytes_inside_ids_are_data(cli, tmp_path):
    qrels = b"1 0 doc#1 1\n1 0 \xe2\x80\x8bzw 1\n"
    run = b"1 Q0 doc#1 1 2 r\n#1 Q0 x 1 2 r\n1 Q0 \xe2\x80\x8bzw 2 1 r\n"
    res = _run(cli, tmp_path, Case("ids", 0, "", qrels=qrels, run=run, args=["-m", "num_rel_ret"]))
    assert (res.code, res.err, res.out) == (0, "", b"num_rel_ret           \tall\t2\n")


def test_megabyte_line(cli, tmp_path):
    """A 1 MB docno is an id like any other; a 1 MB line of junk is one clear error."""
    big = b"d" * (1 << 20)
    ok = Case(
        "big-doc",
        0,
        "",
        qrels=b"1 0 " + big + b" 1\n",
        run=b"1 Q0 " + big + b" 1 2 r\n",
        args=["-m", "num_rel_ret"],
        out=b"num_rel_ret           \tall\t1\n",
    )
    res = _run(cli, tmp_path, ok)
    assert (res.code, res.err, res.out) == (0, "", ok.out)
    junk = Case(
        "big-junk",
        2,
        f"ireval: {R}:2: expected at least 6 fields (qid iter docno rank score runid), got 1\n",
        run=b"1 Q0 a 1 3 r\n" + b"x" * (1 << 20) + b"\n",
    )
    res = _run(cli, tmp_path, junk)
    assert (res.code, res.err) == (2, junk.err)


def test_megabyte_token_in_a_message_is_shortened(cli, tmp_path):
    case = Case("big-score", 2, "", run=b"1 Q0 a 1 " + b"x" * (1 << 20) + b" r\n")
    res = _run(cli, tmp_path, case)
    assert res.code == 2 and res.err.startswith(f"ireval: {R}:1: score '")
    assert len(res.err) < 300


# Inputs that must not hang ireval, each run in its own process. They are started together
# (a module fixture). No timing is asserted: the timeout is generous enough to catch only a
# real hang (an endless or quadratic loop over 64K digits or a 10^7-long ideal ranking),
# never a slow or busy machine.
HANG_TIMEOUT = 120.0
_DIGITS = b"9" * (1 << 16) + b"x"
HANG_INPUTS = {
    "score-digits": (Q0, b"1 Q0 a 1 " + _DIGITS + b" r\n", ["-m", "map"]),
    "label-digits": (b"1 0 a " + _DIGITS + b"\n", R0, ["-m", "map"]),
    "label-1e7-ndcg": (b"1 0 a 10000000\n1 0 b 0\n", b"1 Q0 a 1 1 r\n1 Q0 b 2 0 r\n", ["-m", "ndcg"]),
}


@pytest.fixture(scope="module")
def hang_runs(tmp_path_factory):
    code = "import sys; from irevalcli.commands.main import main; sys.exit(main(sys.argv[1:]))"
    procs = {}
    for name, (q, r, args) in HANG_INPUTS.items():
        d = tmp_path_factory.mktemp(name)
        (d / "q").write_bytes(q)
        (d / "r").write_bytes(r)
        procs[name] = subprocess.Popen(
            [sys.executable, "-c", code, *args, "q", "r"], cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )

    def wait(name: str) -> tuple[int, bytes, bytes]:
        proc = procs[name]
        try:
            out, err = proc.communicate(timeout=HANG_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate()
            pytest.fail(f"{name}: ireval hangs (still running after {HANG_TIMEOUT:.0f} s)")
        return proc.returncode, out, err

    yield wait
    for proc in procs.values():
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


@pytest.mark.parametrize("name", ["score-digits", "label-digits"])
def test_long_digit_junk_does_not_hang(hang_runs, name):
    code, out, err = hang_runs(name)
    assert (code, out) == (2, b"") and err.startswith(b"ireval: ") and err.count(b"\n") == 1


def test_huge_label_does_not_hang_ndcg(hang_runs):
    code, out, err = hang_runs("label-1e7-ndcg")
    assert (code, out, err) == (0, b"ndcg                  \tall\t1.0000\n", b"")


# ---- safety: names are parsed, never run; ireval writes nowhere but --output; no network -------------


def test_measure_names_are_never_evaluated(cli, tmp_path):
    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    hostile = "__import__('os').system('touch pwned')"
    res = cli(["-m", hostile, "qrels.txt", "run.txt"], cwd=tmp_path)
    assert res.code == 2 and res.err.startswith(f"ireval: unknown measure '{hostile}'")
    res = cli(["-m", "P.__import__('os')", "qrels.txt", "run.txt"], cwd=tmp_path)
    assert res.code == 2 and res.err == (
        "ireval: P.__import__('os'): cutoff '__import__('os')' is not a positive integer\n"
    )
    assert not (tmp_path / "pwned").exists()


AUDIT = r"""
import json, os, sys
events = []
WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
def hook(event, args):
    if event == "open":
        path, mode, flags = args
        writing = (mode is not None and any(c in str(mode) for c in "wax+")) or (
            mode is None and isinstance(flags, int) and flags & WRITE)
        if writing and not isinstance(path, int):  # an int is a descriptor opened (and audited) already
            events.append(["write", str(path)])
    elif event.split(".")[0] in ("socket", "subprocess", "ftplib", "http", "urllib", "smtplib") or event in (
            "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "webbrowser.open"):
        events.append([event, repr(args)[:100]])
sys.addaudithook(hook)
from irevalcli.commands.main import main
code = main(sys.argv[1:])
sys.stdout.flush()
os.write(int(os.environ["AUDIT_FD"]), json.dumps({"code": code, "events": events}).encode())
"""


def test_writes_nowhere_but_output_and_opens_no_socket(tmp_path):
    import json

    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    r, w = os.pipe()
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", AUDIT_FD=str(w))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            AUDIT,
            "-q",
            "-m",
            "all_trec",
            "--format",
            "json",
            "--output",
            "out.json",
            "qrels.txt",
            "run.txt",
        ],
        cwd=tmp_path,
        env=env,
        pass_fds=(w,),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(w)
    _, err = proc.communicate(timeout=60)
    report = json.loads(os.read(r, 1 << 20))
    os.close(r)
    assert report["code"] == 0, err
    written = [Path(p) for kind, p in report["events"] if kind == "write"]
    others = [e for e in report["events"] if e[0] != "write"]
    assert others == []
    assert any(p.name.startswith(".ireval-") for p in written)  # the hook sees writes
    for p in written:
        p = (tmp_path / p) if not p.is_absolute() else p
        assert p.parent.resolve() == tmp_path.resolve() and p.name.startswith((".ireval-", "out.json")), p
    assert json.loads((tmp_path / "out.json").read_text())["summary"]["map"] == 1.0


# ---- -v is read as getopt reads it ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args,version",
    [
        (["-v"], True),
        (["--version"], True),
        (["-qv", "-m", "map", "qrels.txt", "run.txt"], True),  # bundled, as trec_eval -qv
        (["-m", "map", "qrels.txt", "run.txt", "-v"], True),
        (["-m", "-v", "qrels.txt", "run.txt"], False),  # the value of -m
        (["-mv", "qrels.txt", "run.txt"], False),  # -m with the attached value 'v'
        (["--measure", "-v", "qrels.txt", "run.txt"], False),
        (["-m", "map", "--", "qrels.txt", "-v"], False),  # after --: a file name
    ],
)
def test_version_flag(cli, tmp_path, args, version):
    (tmp_path / "qrels.txt").write_bytes(Q0)
    (tmp_path / "run.txt").write_bytes(R0)
    res = cli(args, cwd=tmp_path)
    assert res.out.startswith(b"ireval ") == version
    if not version:
        assert res.code == 2 and res.err.startswith("ireval: ") and res.err.count("\n") == 1


# ---- gate and compare ------------------------------------------------------------------------------------
#
# Decided here (and in the README's promises about gates): a checked value or baseline that does
# not exist (NaN: auc with positives-only qrels) fails its check (exit 1); a drop beyond the tolerance
# whose p-value cannot be computed fails under --alpha (exit 1); a run or baseline that shares no
# topic with the qrels is an input error (exit 2); -l takes an integer and nothing else; a relative
# tolerance above 1 must be written with %.

POS = b"1 0 a 1\n2 0 c 1\n"  # no non-relevant judgement: auc has no value on any topic
NONE = b"9 Q0 a 1 3 x\n"  # shares no topic with Q0
ONE_Q = b"1 0 a 1\n1 0 b 0\n"
ONE_BASE = b"1 Q0 a 1 3 b\n"  # map 1
ONE_CAND = b"1 Q0 b 1 3 c\n1 Q0 a 2 2 c\n"  # map 0.5


@dataclass
class SubCase:
    id: str
    code: int
    err: str
    args: list[str]  # after the subcommand; files: qrels.txt run.txt base.txt gate.toml
    qrels: bytes = Q0
    run: bytes = R0
    base: bytes = R0
    config: str = ""
    out_empty: bool = True  # exit 1 writes its report first


SUB_CATALOGUE = [
    SubCase(
        "gate-level-text",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': 'two' is not an integer (see 'ireval gate --help')\n",
        ["gate", "-l", "two", Q, R, "--min", "map=0.1"],
    ),
    SubCase(
        "gate-level-high",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': 'high' is not an integer (see 'ireval gate --help')\n",
        ["gate", "--level_for_rel", "high", Q, R, "--min", "map=0.1"],
    ),
    SubCase(
        "gate-level-equals",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': '=2' is not an integer (write -l 2) "
        "(see 'ireval gate --help')\n",
        ["gate", "-l=2", Q, R, "--min", "map=0.1"],
    ),
    SubCase(
        "gate-level-trailing-text",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': '2x' is not an integer (see 'ireval gate --help')\n",
        ["gate", "-l", "2x", Q, R, "--min", "map=0.1"],
    ),
    SubCase(
        "compare-level-text",
        2,
        "ireval: Invalid value for '-l' / '--level_for_rel': 'two' is not an integer (see 'ireval compare --help')\n",
        ["compare", "-l", "two", Q, "base.txt", R],
    ),
    SubCase(
        "compare-bootstrap-text",
        2,
        "ireval: Invalid value for '--bootstrap': '1e3' is not an integer (see 'ireval compare --help')\n",
        ["compare", "--bootstrap", "1e3", Q, "base.txt", R],
    ),
    SubCase(
        "gate-seed-underscore",
        2,
        "ireval: Invalid value for '--seed': '1_0' is not an integer (see 'ireval gate --help')\n",
        ["gate", Q, R, "--min", "map=0.1", "--seed", "1_0"],
    ),
    SubCase(
        "gate-permutations-zero",
        2,
        "ireval: Invalid value for '--permutations': 0 is not in the range x>=1 (see 'ireval gate --help')\n",
        ["gate", Q, R, "--min", "map=0.1", "--permutations", "0"],
    ),
    SubCase(
        "compare-worst-negative",
        2,
        "ireval: Invalid value for '--worst': -1 is not in the range x>=0 (see 'ireval compare --help')\n",
        ["compare", "--worst", "-1", Q, "base.txt", R],
    ),
    SubCase(
        "compare-alpha-underscore",
        2,
        "ireval: Invalid value for '--alpha': '1_0e-2' is not a decimal number (see 'ireval compare --help')\n",
        ["compare", "--alpha", "1_0e-2", Q, "base.txt", R],
    ),
    SubCase(
        "compare-confidence-nan",
        2,
        "ireval: Invalid value for '--confidence': 'nan' is not a decimal number (see 'ireval compare --help')\n",
        ["compare", "--confidence", "nan", Q, "base.txt", R],
    ),
    SubCase(
        "gate-alpha-inf",
        2,
        "ireval: Invalid value for '--alpha': 'inf' is not a decimal number (see 'ireval gate --help')\n",
        ["gate", Q, R, "--min", "map=0.1", "--alpha", "inf"],
    ),
    SubCase(
        "pool-depth-underscore",
        2,
        "ireval: Invalid value for '--depth' / '-k': '1_0' is not an integer (see 'ireval pool --help')\n",
        ["pool", R, "--depth", "1_0"],
    ),
    SubCase(
        "gate-rel-tolerance-above-1",
        2,
        "ireval: --max-drop-rel map=5: a relative tolerance is a fraction of the baseline, and 5 is 500%; "
        "write 5% for 5 percent (or a fraction of at most 1)\n",
        ["gate", Q, R, "--baseline", "base.txt", "--max-drop-rel", "map=5"],
    ),
    SubCase(
        "gate-rel-tolerance-above-1-in-config",
        2,
        "ireval: gate.toml [max_drop_rel] map: a relative tolerance is a fraction of the baseline, and 1.5 is "
        "150%; write 1.5% for 1.5 percent (or a fraction of at most 1)\n",
        ["gate", "--config", "gate.toml", Q, R],
        config='baseline = "base.txt"\n[max_drop_rel]\nmap = 1.5\n',
    ),
    SubCase(
        "gate-threshold-not-decimal",
        2,
        "ireval: --min map=1_0: '1_0' is not a number\n",
        ["gate", Q, R, "--min", "map=1_0"],
    ),
    SubCase(
        "gate-threshold-nan", 2, "ireval: --min map=nan: 'nan' is not a number\n", ["gate", Q, R, "--min", "map=nan"]
    ),
    SubCase(
        "gate-unknown-measure-in-config",
        2,
        "ireval: gate.toml: unknown measure 'mapp' (did you mean 'map'?); 'ireval measures' lists them\n",
        ["gate", "--config", "gate.toml", Q, R],
        config="[min]\nmapp = 0.1\n",
    ),
    SubCase(
        "gate-unknown-report-measure-in-config",
        2,
        "ireval: gate.toml: unknown measure 'ndgc' (did you mean 'ndcg'?); 'ireval measures' lists them\n",
        ["gate", "--config", "gate.toml", Q, R],
        config='measures = ["ndgc"]\n[min]\nmap = 0.1\n',
    ),
    SubCase(
        "gate-same-check-twice-in-config",
        2,
        "ireval: gate.toml: [min] names P_5 twice (P_5 and P.5)\n",
        ["gate", "--config", "gate.toml", Q, R],
        config="[min]\nP_5 = 0.1\nP.5 = 0.2\n",
    ),
    SubCase(
        "gate-run-shares-no-topic",
        2,
        f"ireval: {R}: none of its 1 topics is judged in {Q}: the topics do not line up (wrong qrels file?)\n",
        ["gate", Q, R, "--min", "map=0"],
        run=NONE,
    ),
    SubCase(
        "gate-baseline-shares-no-topic",
        2,
        f"ireval: base.txt: none of its 1 topics is judged in {Q}: the topics do not line up (wrong qrels file?)\n",
        ["gate", Q, R, "--baseline", "base.txt", "--max-drop", "map=1"],
        base=NONE,
    ),
    SubCase(
        "gate-nan-floor-fails",
        1,
        "ireval: gate failed: 1 of 1 check failed (auc >= 0)\n",
        ["gate", Q, R, "--min", "auc=0"],
        qrels=POS,
        out_empty=False,
    ),
    SubCase(
        "gate-nan-drop-fails",
        1,
        "ireval: gate failed: 1 of 1 check failed (auc drop <= 1)\n",
        ["gate", Q, R, "--baseline", "base.txt", "--max-drop", "auc=1", "--alpha", "0.5"],
        qrels=POS,
        out_empty=False,
    ),
    SubCase(
        "gate-nan-json-fails",
        1,
        "ireval: gate failed: 1 of 1 check failed (auc >= 0.5)\n",
        ["gate", Q, R, "--min", "auc=0.5", "--format", "json"],
        qrels=POS,
        out_empty=False,
    ),
    SubCase(
        "gate-no-p-value-fails",
        1,
        "ireval: gate failed: 1 of 1 check failed (map drop <= 0.01)\n",
        ["gate", Q, R, "--baseline", "base.txt", "--max-drop", "map=0.01", "--alpha", "0.05"],
        qrels=ONE_Q,
        run=ONE_CAND,
        base=ONE_BASE,
        out_empty=False,
    ),
    SubCase(
        "compare-nan-json",
        0,
        "",
        ["compare", "-m", "auc", "--format", "json", Q, "base.txt", R],
        qrels=POS,
        out_empty=False,
    ),
]


def _sub_run(cli, tmp_path: Path, case: SubCase):
    (tmp_path / Q).write_bytes(case.qrels)
    (tmp_path / R).write_bytes(case.run)
    (tmp_path / "base.txt").write_bytes(case.base)
    if case.config:
        (tmp_path / "gate.toml").write_text(case.config)
    return cli(case.args, cwd=tmp_path)


@pytest.mark.parametrize("case", SUB_CATALOGUE, ids=[c.id for c in SUB_CATALOGUE])
def test_gate_and_compare_catalogue(cli, tmp_path, case):
    import json

    res = _sub_run(cli, tmp_path, case)
    assert (res.code, res.err) == (case.code, case.err)
    if case.out_empty:
        assert res.out == b""
    elif "json" in case.args:
        json.loads(res.out)  # valid JSON: a value that does not exist is null, never NaN
        assert b"NaN" not in res.out


def test_gate_no_value_and_no_p_value_reasons(cli, tmp_path):
    import json

    by_id = {c.id: c for c in SUB_CATALOGUE}
    res = _sub_run(cli, tmp_path, by_id["gate-nan-json-fails"])
    (check,) = json.loads(res.out)["checks"]
    assert (check["value"], check["verdict"]) == (None, "fail")
    assert check["reason"] == "no value: auc is undefined on every topic of the run"
    case = by_id["gate-no-p-value-fails"]
    res = _sub_run(cli, tmp_path, SubCase(**{**case.__dict__, "args": [*case.args, "--format", "json"]}))
    (check,) = json.loads(res.out)["checks"]
    assert (check["p_value"], check["verdict"]) == (None, "fail")
    assert check["reason"] == (
        "drop 0.5000 > 0.01, and its significance cannot be computed (no p-value: only 1 topic with a value)"
    )


def test_completion_variable_does_not_hijack_a_gate(cli, tmp_path, monkeypatch):
    """_IREVAL_COMPLETE leaking into a CI job's environment: the gate still evaluates."""
    for value in ("bash_source", "bash_complete", "zsh_complete", "junk"):
        monkeypatch.setenv("_IREVAL_COMPLETE", value)
        res = _sub_run(cli, tmp_path, SubCase("x", 1, "", ["gate", Q, R, "--min", "map=1.5"]))
        assert (res.code, res.err) == (1, "ireval: gate failed: 1 of 1 check failed (map >= 1.5)\n")
        assert res.out.startswith(b"ireval gate: FAILED")
        res = _sub_run(cli, tmp_path, SubCase("x", 0, "", ["-m", "map", Q, R]))
        assert (res.code, res.out) == (0, MAP_1)


# ---- outputs: where a command may write ------------------------------------------------------------------
#
# Every row runs in a directory holding qrels.txt, run.txt and old.txt ("previous\n"); after it,
# those files are byte-for-byte as they were, no temporary file is left, and the only new files
# are the row's ``created``. Outputs that are inputs are refused for every command that writes.


@dataclass
class OutCase:
    id: str
    args: list[str]
    code: int
    err: str
    out: bytes | None = b""
    setup: list[tuple[str, str]] = field(default_factory=list)  # (symlink name, its target)
    created: dict[str, bytes | None] = field(default_factory=dict)  # new file -> exact bytes (None: not checked)


def _same_file(opt: str, out: str, inp: str) -> str:
    return (
        f"ireval: {opt} {out}: is the input file {inp}; writing it would destroy the input (give another output file)\n"
    )


def _no_o(cmd: str, value: str) -> str:
    return (
        f"ireval: -o is not an option of ireval {cmd}: write --output {value} "
        "(-o is trec_eval's ignored flag, so no ireval command takes it for --output)\n"
    )


OUT_CATALOGUE = [
    # ---- an output that is an input ---------------------------------------------------------------------
    OutCase("eval-output-is-the-run", ["-m", "map", "--output", R, Q, R], 2, _same_file("--output", R, R)),
    OutCase(
        "eval-output-is-the-qrels-via-symlink",
        ["-m", "map", "--output", "link", Q, R],
        2,
        _same_file("--output", "link", Q),
        setup=[("link", Q)],
    ),
    OutCase(
        "eval-output-is-a-run-of-a-glob", ["-m", "map", "--output", R, Q, "r*.txt"], 2, _same_file("--output", R, R)
    ),
    OutCase(
        "eval-output-is-the-zscore-file",
        ["-m", "map", "-Z", "old.txt", "--output", "old.txt", Q, R],
        2,
        _same_file("--output", "old.txt", "old.txt"),
    ),
    OutCase(
        "eval-output-is-the-subtopics-file",
        ["-m", "map", "--subtopics", "old.txt", "--output", "old.txt", Q, R],
        2,
        _same_file("--output", "old.txt", "old.txt"),
    ),
    OutCase("pool-output-is-its-qrels", ["pool", R, "--qrels", Q, "--output", Q], 2, _same_file("--output", Q, Q)),
    OutCase("pool-counts-is-a-run", ["pool", R, "--counts", R], 2, _same_file("--counts", R, R)),
    OutCase(
        "pool-output-and-counts-one-file",
        ["pool", R, "--output", "p.txt", "--counts", "p.txt"],
        2,
        "ireval: --counts p.txt: is the same file as --output p.txt; give each output its own file\n",
    ),
    OutCase("curve-output-is-the-qrels", ["curve", Q, R, "--output", Q], 2, _same_file("--output", Q, Q)),
    OutCase(
        "plot-output-is-the-run",
        ["plot", "pr", Q, R, "--format", "svg", "--output", R],
        2,
        _same_file("--output", R, R),
    ),
    # ---- pool writes both files or neither ----------------------------------------------------------------
    OutCase(
        "pool-counts-not-written-when-the-pool-cannot-be",
        ["pool", R, "--counts", "c.csv", "--output", "no/p.txt"],
        2,
        "ireval: --output no/p.txt: the directory {cwd}/no does not exist\n",
    ),
    OutCase(
        "pool-counts-not-written-when-the-run-is-bad",
        ["pool", Q, "--counts", "c.csv", "--output", "p.txt"],
        2,
        f"ireval: {Q}:1: expected at least 6 fields (qid iter docno rank score runid), got 4; it looks like "
        "a qrels file (qid iter docno rel), not a run: judgements go before the runs (pool: --qrels FILE)\n",
    ),
    # ---- names that cannot be a file ----------------------------------------------------------------------
    OutCase(
        "output-trailing-slash",
        ["-m", "map", "--output", "newdir/", Q, R],
        2,
        "ireval: --output newdir/: ends in '/', so it names a directory, not a file; give a file name\n",
    ),
    OutCase(
        "output-dangling-symlink-to-a-missing-directory",
        ["-m", "map", "--output", "dangling", Q, R],
        2,
        "ireval: --output dangling: is a symlink to nowhere/x.txt, whose directory {cwd}/nowhere does not exist\n",
        setup=[("dangling", "nowhere/x.txt")],
    ),
    OutCase(
        "output-dangling-symlink-is-written-through",
        ["-m", "map", "--output", "dangling", Q, R],
        0,
        "",
        setup=[("dangling", "target.txt")],
        created={"target.txt": MAP_1},
    ),
    OutCase(
        "plot-output-dash-needs-a-format",
        ["plot", "pr", Q, R, "--output", "-"],
        2,
        "ireval: --output -: standard output has no name to tell the image format from; give --format png|svg|pdf\n",
    ),
    # ---- formats from the --output name -------------------------------------------------------------------
    OutCase(
        "format-contradicts-the-extension",
        ["-m", "map", "--format", "json", "--output", "x.parquet", Q, R],
        2,
        "ireval: --format json contradicts --output x.parquet, whose name says parquet; drop --format or give "
        "a name that matches it\n",
    ),
    OutCase(
        "extension-names-a-format-eval-does-not-write",
        ["-m", "map", "--output", "x.png", Q, R],
        2,
        "ireval: --output x.png: the name says png, which ireval does not write (formats: trec, json, parquet, "
        "csv, markdown, latex, table); give a name that matches the format\n",
    ),
    OutCase(
        "curve-extension-names-parquet",
        ["curve", Q, R, "--output", "c.parquet"],
        2,
        "ireval: --output c.parquet: the name says parquet, which ireval curve does not write (formats: csv, "
        "json); give a name that matches the format\n",
    ),
    OutCase(
        "format-from-the-extension-csv",
        ["-m", "map", "--output", "s.csv", Q, R],
        0,
        "",
        created={"s.csv": b"run,runid,qid,map\nrun.txt,r1,all,1.0\n"},
    ),
    OutCase("txt-extension-stays-trec", ["-m", "map", "--output", "s.txt", Q, R], 0, "", created={"s.txt": MAP_1}),
    # ---- -o is trec_eval's ignored flag, never --output -----------------------------------------------------
    OutCase(
        "eval-o-with-a-file-name",
        ["-m", "map", Q, R, "-o", "out.txt"],
        2,
        "ireval: -o out.txt: -o is trec_eval's ignored flag (old output format) and takes no value, so out.txt "
        "would be read as an input; to write the output to a file use --output out.txt\n",
    ),
    OutCase(
        "eval-o-with-an-output-name",
        ["-m", "map", "-o", "scores.json", Q, R],
        2,
        "ireval: -o scores.json: -o is trec_eval's ignored flag (old output format) and takes no value, so "
        "scores.json would be read as an input; to write the output to a file use --output scores.json\n",
    ),
    OutCase("eval-o-as-trec_eval-takes-it", ["-o", "-m", "map", Q, R], 0, "", out=MAP_1),
    OutCase("eval-o-before-the-inputs", ["-m", "map", "-o", Q, R], 0, "", out=MAP_1),
    OutCase("eval-o-bundled", ["-qo", "-m", "map", Q, R], 0, "", out=None),
    OutCase("curve-o", ["curve", Q, R, "-o", "c.csv"], 2, _no_o("curve", "c.csv")),
    OutCase("plot-o", ["plot", "pr", Q, R, "-o", "p.png"], 2, _no_o("plot", "p.png")),
    OutCase("pool-o", ["pool", R, "-o", "p.txt"], 2, _no_o("pool", "p.txt")),
    OutCase("compare-o", ["compare", Q, R, R, "-o", "c.txt"], 2, _no_o("compare", "c.txt")),
    OutCase("gate-o", ["gate", Q, R, "--min", "map=0.1", "-o", "g.txt"], 2, _no_o("gate", "g.txt")),
    OutCase(
        "compare-format-from-the-extension", ["compare", Q, R, R, "--output", "c.json"], 0, "", created={"c.json": None}
    ),
    OutCase(
        "compare-format-contradicts-the-extension",
        ["compare", Q, R, R, "--format", "csv", "--output", "c.json"],
        2,
        "ireval: --format csv contradicts --output c.json, whose name says json; drop --format or give "
        "a name that matches it\n",
    ),
    OutCase(
        "gate-junit-from-the-extension",
        ["gate", Q, R, "--min", "map=0.1", "--output", "g.xml"],
        0,
        "",
        created={"g.xml": None},
    ),
    OutCase(
        "gate-extension-names-a-format-gate-does-not-write",
        ["gate", Q, R, "--min", "map=0.1", "--output", "g.parquet"],
        2,
        "ireval: --output g.parquet: the name says parquet, which ireval gate does not write "
        "(formats: table, json, markdown, junit); give a name that matches the format\n",
    ),
    # ---- repeated cutoffs: trec_eval's bytes, and a note ------------------------------------------------------
    OutCase(
        "repeated-cutoffs-note",
        ["-m", "P.5", "-m", "P.10", Q, R],
        0,
        "ireval: note: -m P.10 ignored: trec_eval keeps the first parameters given for a measure (-m P.5); "
        "write -m P.5,10\n",
        out=b"P_5                   \tall\t0.2000\n",
    ),
    OutCase(
        "repeated-cutoffs-all-computed-in-csv",
        ["-m", "P.5", "-m", "P_10", "--format", "csv", Q, R],
        0,
        "",
        out=b"run,runid,qid,P_5,P_10\nrun.txt,r1,all,0.2,0.1\n",
    ),
    OutCase(
        "repeated-same-cutoff-no-note",
        ["-m", "P.5", "-m", "P.5", Q, R],
        0,
        "",
        out=b"P_5                   \tall\t0.2000\n",
    ),
]


@pytest.mark.parametrize("case", OUT_CATALOGUE, ids=[c.id for c in OUT_CATALOGUE])
def test_output_catalogue(cli, tmp_path, case):
    files = {Q: Q0, R: R0, "old.txt": b"previous\n"}
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
    for name, target in case.setup:
        (tmp_path / name).symlink_to(target)
    before = set(os.listdir(tmp_path))
    res = cli(case.args, cwd=tmp_path)
    assert (res.code, res.err) == (case.code, case.err.format(cwd=tmp_path))
    if case.out is not None:
        assert res.out == case.out
    for name, content in files.items():
        assert (tmp_path / name).read_bytes() == content, name
    assert set(os.listdir(tmp_path)) - before == set(case.created)
    for name, content in case.created.items():
        if content is not None:
            assert (tmp_path / name).read_bytes() == content


@pytest.mark.parametrize(
    "args,out,inp",
    [
        (["compare", Q, R, "run2.txt", "--output", "run2.txt"], "run2.txt", "run2.txt"),
        (["compare", Q, R, "run2.txt", "--format", "json", "--output", "link"], "link", Q),
        (["gate", Q, R, "--min", "map=0.1", "--output", R], R, R),
        (
            ["gate", Q, R, "--baseline", "run2.txt", "--max-drop", "map=0.1", "--output", "run2.txt"],
            "run2.txt",
            "run2.txt",
        ),
    ],
)
def test_compare_and_gate_never_write_over_an_input(cli, tmp_path, args, out, inp):
    """compare and gate write through the shared writer, which knows every command's inputs."""
    for name, content in ((Q, Q0), (R, R0), ("run2.txt", R0)):
        (tmp_path / name).write_bytes(content)
    (tmp_path / "link").symlink_to(Q)
    res = cli(args, cwd=tmp_path)
    assert (res.code, res.out, res.err) == (2, b"", _same_file("--output", out, inp))
    for name, content in ((Q, Q0), (R, R0), ("run2.txt", R0)):
        assert (tmp_path / name).read_bytes() == content


def test_compare_and_gate_outputs_by_name_and_csv_cells(cli, tmp_path):
    """--output's name picks compare's and gate's format; a run whose name a spreadsheet would
    run as a formula stays text in compare's csv (issue 13 item 24, issue 14 item 6)."""
    import json
    import xml.etree.ElementTree as ET

    for name, content in ((Q, Q0), (R, R0), ("=cmd.txt", R0)):
        (tmp_path / name).write_bytes(content)
    res = cli(["compare", Q, R, "=cmd.txt", "--output", "c.json"], cwd=tmp_path)
    assert (res.code, res.out, res.err) == (0, b"", "")
    assert json.loads((tmp_path / "c.json").read_text())["comparisons"][0]["run"] == "=cmd.txt"
    res = cli(["compare", Q, R, "=cmd.txt", "--format", "csv"], cwd=tmp_path)
    assert res.code == 0 and b"\n'=cmd.txt," in res.out and b"\n=cmd.txt," not in res.out
    res = cli(["gate", Q, R, "--min", "map=0.1", "--output", "g.xml"], cwd=tmp_path)
    assert res.code == 0 and ET.parse(tmp_path / "g.xml").getroot().tag in ("testsuites", "testsuite")
    (tmp_path / "old.txt").write_bytes(b"previous\n")
    res = cli(["compare", Q, R, R, "--output", R], cwd=tmp_path)
    assert (res.code, res.out) == (2, b"") and (tmp_path / R).read_bytes() == R0


# A small input read in the caller's own process must not start Arrow's thread pool: a pool
# torn down by the interpreter's normal exit can abort the finished process (SIGABRT,
# "terminate called without an active exception"; CI met it in the test above, 1 run in 30
# under load). The ireval command ends with os._exit; the API and main() end normally.
THREADS = r"""
import io, os, sys
import numpy, pyarrow as pa, pyarrow.csv, pyarrow.json, pyarrow.parquet, scipy.stats
# what serial reads start (Arrow's IO pool, which even a serial reader uses) and the BLAS of numpy
# and scipy: the baseline
pyarrow.csv.read_csv(io.BytesIO(b"a,b\n1,2\n"), pyarrow.csv.ReadOptions(use_threads=False))
pyarrow.json.read_json(io.BytesIO(b'{"a": 1}\n'), pyarrow.json.ReadOptions(use_threads=False))
pyarrow.parquet.ParquetFile(pa.BufferReader(open("r.parquet", "rb").read())).read(use_threads=False)
before = len(os.listdir("/proc/self/task"))
from irevalcli.commands.main import main
for args in sys.argv[1:]:
    main(args.split())
sys.stdout.flush()
# a joined thread leaves /proc/self/task a moment after join() returns (seen once on a loaded
# machine): wait for it; a pool's workers stay, and the count then stays above the baseline
import time
deadline = time.monotonic() + 5
while len(os.listdir("/proc/self/task")) > before and time.monotonic() < deadline:
    time.sleep(0.01)
print("threads", before, len(os.listdir("/proc/self/task")), file=sys.stderr)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_small_inputs_start_no_arrow_thread_pool(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "q").write_bytes(b"1 0 a 1\n1 0 b 0\n2 0 c 2\n")
    (tmp_path / "r").write_bytes(b"1 Q0 a 1 1 r\n1 Q0 b 2 0 r\n2 Q0 c 1 3 r\n")
    table = pa.table({"qid": ["1", "1", "2"], "docno": ["a", "b", "c"], "score": [1.0, 0.0, 3.0]})
    pq.write_table(table, tmp_path / "r.parquet")
    (tmp_path / "r.csv").write_text("qid,docno,score\n1,a,1\n1,b,0\n2,c,3\n")
    (tmp_path / "r.jsonl").write_text(
        "".join(
            f'{{"qid": "{q}", "docno": "{d}", "score": {s}}}\n'
            for q, d, s in [("1", "a", 1), ("1", "b", 0), ("2", "c", 3)]
        )
    )
    calls = ["-m ndcg q r", "q r.parquet", "q r.csv", "q r.jsonl", "compare q r r", "-q -m all_trec q r"]
    proc = subprocess.run([sys.executable, "-c", THREADS, *calls], cwd=tmp_path, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    before, after = proc.stderr.decode().split("threads ")[-1].split()
    assert after == before  # no Arrow worker was started
