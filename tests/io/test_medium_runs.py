"""The shared reading path of medium and large runs (issue 22): what the faster steps give
is what the general ones give.

- a run read by the CSV fast path converts only qid, docno and score, and finds empty
  fields on the bytes (:func:`irevalcli.io.trec._separators`);
- a regular file is read in one call (:func:`irevalcli.io.source._read_regular`).
"""

from __future__ import annotations

import hashlib

import pytest

from irevalcli.errors import InputError
from irevalcli.io import source
from irevalcli.io.trec import Source, _separators, parse_run, read_run, tokenize


def _run(text: bytes) -> Source:
    return Source(name="run.txt", data=text, sha256="")


def _general(text: bytes):
    """The run as the tokenizing parser reads it (the fast path refuses a tab in the data)."""
    return parse_run(_run(text.replace(b"\n", b"\t\n", 1).replace(b"\t\n", b"\n", 1)))


RUN = b"1 Q0 d1 1 2.5 runA\n1 Q0 d2 2 1.5 runA\n2 Q0 d3 1 0.5 runB\n"


def test_fast_run_reads_the_columns_and_the_last_runid():
    run = parse_run(_run(RUN))
    assert run.qid.to_pylist() == [b"1", b"1", b"2"]
    assert run.docno.to_pylist() == [b"d1", b"d2", b"d3"]
    assert run.score.tolist() == [2.5, 1.5, 0.5]
    assert run.lineno.tolist() == [1, 2, 3]
    assert run.runid == "runB"
    assert run.lines == 3


def test_fast_run_runid_of_a_last_line_without_line_end_and_with_extra_fields():
    run = parse_run(_run(b"1 Q0 d1 1 2.5 runA x\n1 Q0 d2 2 1.5 r\xc3\xa9n y"))
    assert run.runid == "r\u00e9n"
    assert run.docno.to_pylist() == [b"d1", b"d2"]


@pytest.mark.parametrize(
    "data, empty",
    [
        (b"a b c\n", False),
        (b"a b c", False),
        (b"a  b c\n", True),  # doubled delimiter
        (b" a b c\n", True),  # leading
        (b"a b c \n", True),  # trailing
        (b"a b c ", True),  # trailing, no line end
        (b"a b c\n\na b c\n", True),  # blank line
        (b"\na b c\n", True),  # blank first line
        (b"", True),
    ],
)
def test_has_empty_field(data, empty):
    assert (_separators(data, b" ") is None) is empty


@pytest.mark.parametrize(
    "line",
    [
        b"1 Q0  d9 3 0.5 runA\n",  # empty field before the docno: 7 fields to Arrow, 6 tokens
        b"1  d9 3 0.5 runA x\n",  # empty Q0 field: Arrow sees 6 fields, trec_eval 5 tokens
        b"1 Q0 d9  0.5 runA\n",  # empty rank field
        b"1 Q0 d9 3 0.5 runA \n",  # trailing delimiter: an empty 7th field
    ],
)
def test_an_empty_field_in_a_column_not_converted_reads_as_the_tokenizer_reads_it(line):
    text = RUN + line
    lines = tokenize(text, "run.txt", blank_lines_ok=True, what="run")
    try:
        got = parse_run(_run(text))
    except InputError as exc:
        with pytest.raises(InputError) as general:
            _general(text)
        assert str(exc) == str(general.value)
        return
    want = _general(text)
    assert got.qid.to_pylist() == want.qid.to_pylist()
    assert got.docno.to_pylist() == want.docno.to_pylist()
    assert got.score.tolist() == want.score.tolist()
    assert got.runid == want.runid
    assert len(lines.ntok) == 4


def test_an_empty_field_where_arrow_sees_as_many_fields_as_on_every_line():
    # 7 fields on every line to Arrow, but the last line has an empty Q0 field: 6 tokens,
    # so its docno is d9 (Arrow's column would hold "" and shift the rest)
    text = b"1 Q0 d1 1 2.5 runA x\n1 Q0 d2 2 1.5 runA x\n1  Q0 d9 3 0.5 runA\n"
    got = parse_run(_run(text))
    assert got.docno.to_pylist() == [b"d1", b"d2", b"d9"]
    assert got.score.tolist() == [2.5, 1.5, 0.5]
    assert got.runid == "runA"


def test_a_line_with_too_few_tokens_is_named_as_before():
    with pytest.raises(InputError) as exc:
        parse_run(_run(RUN + b"1  d9 3 0.5 runA\n"))
    assert str(exc.value) == ("run.txt:4: expected at least 6 fields (qid iter docno rank score runid), got 5")


def test_a_regular_file_is_read_in_one_call_with_its_hash(tmp_path):
    path = tmp_path / "run.txt"
    data = RUN * 70_000  # more than one first block
    path.write_bytes(data)
    raw = source.read_whole(path, what="run", hash=True)
    assert raw.data == data and raw.sha256 == hashlib.sha256(data).hexdigest()
    assert source.read_whole(path, what="run", hash=False).sha256 == ""
    assert read_run(path, hash=False).runid == "runB"


def test_a_nul_byte_in_the_first_block_of_a_regular_file_is_named(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN + b"1 Q0 d\x009 3 0.5 runA\n")
    with pytest.raises(InputError) as exc:
        source.read_whole(path, what="run")
    assert str(exc.value) == f"{path}:4: contains a NUL byte"


def test_progress_is_told_every_byte_of_a_regular_file(tmp_path):
    path = tmp_path / "run.txt"
    path.write_bytes(RUN * 100_000)
    told: list[int] = []
    raw = source.read_whole(path, what="run", hash=False, progress=told.append)
    assert sum(told) == len(raw.data) == len(RUN) * 100_000
