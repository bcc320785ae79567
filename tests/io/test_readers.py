"""Readers: exact path:line errors, comments, whitespace, compression, ids kept as bytes."""

from __future__ import annotations

import bz2
import gzip
import lzma

import pytest

from irevalcli.errors import InputError
from irevalcli.io.trec import Source, parse_qrels, parse_run, read_run


def src(text: str | bytes, name: str = "f") -> Source:
    data = text.encode() if isinstance(text, str) else text
    return Source(name=name, data=data, sha256="")


def test_run_fields_and_runid_from_last_line():
    run = parse_run(src("1 Q0 a 1 2.5 first\n  \n# comment\n\t2\tQ0  b 9 -1e3 last extra fields\n"))
    assert run.qid.to_pylist() == [b"1", b"2"]
    assert run.docno.to_pylist() == [b"a", b"b"]
    assert run.score.tolist() == [2.5, -1000.0]
    assert run.lineno.tolist() == [1, 4]
    assert run.runid == "last"


def test_empty_trailing_field_is_whitespace():
    """A trailing delimiter on one line makes an empty field in a column that is not
    kept: the line is read as trec_eval reads it (6 fields), not refused."""
    run = parse_run(src("1 Q0 a 1 2 r x\n1 Q0 b 2 1 r \n"))
    assert run.docno.to_pylist() == [b"a", b"b"] and run.runid == "r"


def test_crlf_and_tabs():
    run = parse_run(src("1\tQ0\ta\t1\t  2.129133\tR\r\n1 Q0 b 2 1 R\r\n"))
    assert run.score.tolist() == [2.129133, 1.0]
    assert run.runid == "R"
    q = parse_qrels(src("1 0 a 1\r\n1\t0\tb\t0\r\n"))
    assert q.rel.tolist() == [1, 0]


def test_hash_inside_ids_is_data():
    run = parse_run(src("1 Q0 doc#1 1 2 r\n#1 Q0 x 1 2 r\n"))
    assert run.docno.to_pylist() == [b"doc#1"]


def test_non_utf8_ids_kept_exactly():
    run = parse_run(src(b"1 Q0 d\xff\xfe 1 2 r\n"))
    assert run.docno.to_pylist() == [b"d\xff\xfe"]


@pytest.mark.parametrize(
    "text,message",
    [
        ("1 Q0 a 1 2\n", "f:1: expected at least 6 fields (qid iter docno rank score runid), got 5"),
        ("1 Q0 a 1 2 r\n1 Q0 b 2 abc r\n", "f:2: score 'abc' is not a number"),
        ("1 Q0 a 1 2.5x r\n", "f:1: score '2.5x' is not a number"),
        ("1 Q0 a 1 nan r\n", "f:1: score 'nan' cannot be ranked"),
        ("", "f: the run file is empty"),
        ("# only a comment\n\n", "f: the run file has no results (only comments or blank lines)"),
        ("1 Q0 a 1 2 r\x00\n", "f:1: contains a NUL byte"),
        # an empty field shifts trec_eval's whitespace-split fields, even where the
        # number of delimiters matches the first line (columns ireval does not keep)
        ("1 Q0 a 1 2 r x\n1  b 2 1 r x\n", "f:2: score 'r' is not a number"),
        ("1 Q0 a 1 2 r x\n1 Q0 b  1 r x\n", "f:2: score 'r' is not a number"),
    ],
)
def test_run_errors(text, message):
    with pytest.raises(InputError) as e:
        parse_run(src(text))
    assert str(e.value) == message


@pytest.mark.parametrize(
    "text,message",
    [
        ("1 0 a\n", "f:1: expected 4 fields (qid iter docno rel), got 3"),
        ("1 0 a 1 x\n", "f:1: expected 4 fields (qid iter docno rel), got 5"),
        ("1 0 a 1\n\n1 0 b 1\n", "f:2: blank line (a qrels line needs 4 fields: qid iter docno rel)"),
        ("1 0 a 1\n1 0 b high\n", "f:2: relevance label 'high' is not a number"),
        ("1 0 a 1.5\n", "f:1: relevance label '1.5' is not an integer (trec_eval would truncate it; ireval refuses)"),
        ("# nothing\n", "f: the qrels file has no judgements (only comments)"),
    ],
)
def test_qrels_errors(text, message):
    with pytest.raises(InputError) as e:
        parse_qrels(src(text))
    assert str(e.value) == message


def test_label_that_is_not_utf8_is_one_line_error():
    """A label token with invalid UTF-8 (found by the fuzzer) is 'not a number', not an Arrow error."""
    from irevalcli.io.trec import Source

    with pytest.raises(InputError) as e:
        parse_qrels(Source("f", b"1 0 a 1\n1 0 b \xff\n", ""))
    assert str(e.value) == "f:2: relevance label '\ufffd' is not a number"


def test_qrels_comments_anywhere_and_signed_labels():
    q = parse_qrels(src("# head\n# two comment lines in a row\n1 0 a +1\n  # indented\n1 0 b -1\n"))
    assert q.rel.tolist() == [1, -1]
    assert q.lineno.tolist() == [3, 5]


def test_line_numbers_are_physical():
    with pytest.raises(InputError) as e:
        parse_run(src("# c\n\n1 Q0 a 1 2 r\n\n1 Q0 b\n"))
    assert e.value.line == 5


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_compressed_by_content(tmp_path, compress):
    p = tmp_path / "run"
    p.write_bytes(compress(b"1 Q0 a 1 2 r\n"))
    assert read_run(p).docno.to_pylist() == [b"a"]


def test_truncated_gzip(tmp_path):
    p = tmp_path / "run.gz"
    p.write_bytes(gzip.compress(b"1 Q0 a 1 2 r\n" * 100)[:-12])
    with pytest.raises(InputError) as e:
        read_run(p)
    assert str(e.value).startswith(f"{p}: cannot read run file: corrupt or truncated compressed data")


def test_directory_and_missing(tmp_path):
    with pytest.raises(InputError) as e:
        read_run(tmp_path)
    assert str(e.value) == f"{tmp_path}: cannot read run file: it is a directory"
    with pytest.raises(InputError) as e:
        read_run(tmp_path / "nope")
    assert str(e.value) == f"{tmp_path / 'nope'}: cannot read run file: no such file"


def test_large_file_is_vectorised_and_exact():
    n = 20000
    lines = "".join(f"{i % 97} Q0 d{i} {i} {i / 7!r} run\n" for i in range(n))
    run = parse_run(src(lines))
    assert len(run.score) == n
    assert run.score[123] == 123 / 7


def test_subtopic_qrels_share_the_judgement_reader(tmp_path):
    from irevalcli.io.subtopics import read_subtopics

    p = tmp_path / "sub"
    p.write_bytes(b"\xef\xbb\xbf1 1 a 1\n")
    with pytest.raises(InputError) as e:
        read_subtopics(p)
    assert str(e.value) == (
        f"{p}:1: the file starts with a UTF-8 byte order mark; save it without one "
        "(trec_eval would read the mark as part of the first topic id)"
    )
    p.write_bytes(b"1 1 a\n")
    with pytest.raises(InputError) as e:
        read_subtopics(p)
    assert str(e.value) == f"{p}:1: expected 4 fields (qid subtopic docno rel), got 3"


# ---- inputs that never end or never break a line (issue 13 items 20, 21) --------------------


@pytest.mark.parametrize("how", ["file", "stdin"])
def test_dev_zero_fails_on_the_first_block(tmp_path, how):
    """/dev/zero is refused at its first NUL byte instead of being read until memory runs out
    (the timeout only catches a hang)."""
    import subprocess
    import sys

    q = tmp_path / "q"
    q.write_bytes(b"1 0 a 1\n")
    args = [
        sys.executable,
        "-c",
        "from irevalcli.commands.main import entry; entry()",
        "q",
        "/dev/zero" if how == "file" else "-",
    ]
    with open("/dev/zero", "rb") as zero:
        p = subprocess.run(
            args, cwd=tmp_path, capture_output=True, timeout=300, stdin=zero if how == "stdin" else subprocess.DEVNULL
        )
    name = "/dev/zero" if how == "file" else "<stdin>"
    assert (p.returncode, p.stdout, p.stderr) == (2, b"", f"ireval: {name}:1: contains a NUL byte\n".encode())


@pytest.mark.parametrize("stream", [[], ["--stream"]])
def test_line_longer_than_the_limit_is_an_error_naming_it(cli, tmp_path, monkeypatch, stream):
    import irevalcli.io.trec as readers

    monkeypatch.setattr(readers, "MAX_LINE", 1000)
    (tmp_path / "q").write_bytes(b"1 0 a 1\n")
    (tmp_path / "r").write_bytes(b"1 Q0 a 1 2 r\n1 Q0 b 2 1 r\n" + b"x " * 3000 + b"\n1 Q0 c 3 0 r\n")
    res = cli([*stream, "-m", "map", "q", "r"], cwd=tmp_path)
    assert (res.code, res.out, res.err) == (
        2,
        b"",
        "ireval: r:3: line longer than 1000 bytes (the limit for one line)\n",
    )


def test_nul_after_the_first_chunk_is_found_before_reading_on(tmp_path):
    """The reader refuses a block of NUL bytes without a line end at once (its line 1, counted
    from the chunk it begins); the batches name the file's line, in both the sequential and the
    parallel parsing."""
    from irevalcli.engine.stream import ChunkReader, ParsedChunks, topic_batches
    from irevalcli.errors import InputError

    p = tmp_path / "r"
    p.write_bytes(b"1 Q0 a 1 2 r\n" * 50 + b"\0" * 10000)
    reader = ChunkReader(str(p), chunk_bytes=256)
    seen = []
    with pytest.raises(InputError) as err:
        for data, _, _ in reader.chunks():
            seen.append(data.count(b"\n"))
    assert str(err.value) == f"{p}:1: contains a NUL byte" and sum(seen) == 50
    with pytest.raises(InputError) as err:
        for _ in topic_batches(ChunkReader(str(p), chunk_bytes=256), str(p)):
            pass
    assert str(err.value) == f"{p}:51: contains a NUL byte"
    with pytest.raises(InputError) as err, ParsedChunks(ChunkReader(str(p), chunk_bytes=256), str(p)) as batches:
        for _ in batches:
            pass
    assert str(err.value) == f"{p}:51: contains a NUL byte"


@pytest.mark.parametrize("memory_limit", [None, "1K"])  # streamed, and partitioned on disk
def test_errors_found_while_reading_name_their_line_in_a_later_chunk(tmp_path, monkeypatch, memory_limit):
    """The reader learns each chunk's line count from the parser (it no longer scans every
    chunk for line ends): a NUL byte or an overlong line in a later chunk still names its line."""
    import irevalcli.io.trec as readers
    from irevalcli.api import evaluate
    from irevalcli.errors import InputError

    monkeypatch.setattr(readers, "MAX_LINE", 600)
    q = tmp_path / "q"
    q.write_bytes(b"1 0 a 1\n")
    ok = b"".join(b"%d Q0 d%d 1 2 r\n" % (t, i) for t in (1, 2, 1) for i in range(20))  # 60 lines, unsorted
    cases = {b"1 Q0 z 1 2 r\x00\n": "61: contains a NUL byte", b"x " * 400 + b"\n": "61: line longer than 600 bytes"}
    for tail, msg in cases.items():
        r = tmp_path / "r"
        r.write_bytes(ok + tail)
        with pytest.raises(InputError) as err:
            evaluate(q, r, "map", stream=True, chunk_bytes=128, memory_limit=memory_limit)
        assert str(err.value).startswith(f"{r}:{msg}")


@pytest.mark.parametrize(
    "text",
    [
        "1 0 a 1\n1 0 b 0\n#c\n1 0 c 2\n",  # a comment line after the first: the general path
        "#c\n1 0 a 1\n1 0 b 0\n1 0 c 2\n",  # ... and as the first line
        "1 0 a 1\n1 0 b 0\n1 0 c 2\n#",  # ... and as a last line without a line end
    ],
)
def test_qrels_comment_lines_leave_the_fast_path(text):
    """The fast path checks the kept columns only: a comment line is found on the bytes, and
    the general path then reads the file exactly (the comment skipped, lines numbered)."""
    import pyarrow as pa

    from irevalcli.io.trec import fast_table

    want = {0: pa.large_binary(), 2: pa.large_binary(), 3: pa.int64()}
    assert fast_table(text.encode(), 4, 4, want, only_wanted=True) is None
    q = parse_qrels(src(text))
    assert q.docno.to_pylist() == [b"a", b"b", b"c"] and q.rel.tolist() == [1, 0, 2]


def test_qrels_fast_path_keeps_hashes_inside_ids_and_refuses_empty_fields():
    import pyarrow as pa

    from irevalcli.io.trec import fast_table

    want = {0: pa.large_binary(), 2: pa.large_binary(), 3: pa.int64()}
    text = b"1 0 a#1 1\n1# 0 #b 0\n"  # '#' inside an id, not at a line start: data
    tab = fast_table(text, 4, 4, want, only_wanted=True)
    assert tab is not None and tab.column("f2").to_pylist() == [b"a#1", b"#b"]
    assert parse_qrels(src(text)).qid.to_pylist() == [b"1", b"1#"]
    assert fast_table(b"1 0 a 1\n1  b 0\n", 4, 4, want, only_wanted=True) is None  # an empty iter field
    with pytest.raises(InputError) as e:  # (which trec_eval reads as 3 fields)
        parse_qrels(src("1 0 a 1\n1  b 0\n"))
    assert str(e.value) == "f:2: expected 4 fields (qid iter docno rel), got 3"
