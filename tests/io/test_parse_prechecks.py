"""The byte checks of the CSV fast path (io/trec.py ``fast_table``), made cheaper for the
streamed 7M-line run: the comment check searches for a line starting with # only when the
chunk holds a # byte at all, and the empty-field check marks every byte up to 32 as a
separator (a control byte next to a separator sends the data to the general path, which
reads it as trec_eval does)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from irevalcli.core.table import _numeric_ids
from irevalcli.io.trec import Source, _separators, fast_table, parse_run, tokenize

RUN_TYPES = {0: pa.large_binary(), 2: pa.large_binary(), 4: pa.float64()}


def _fast(data: bytes):
    return fast_table(data, None, 6, RUN_TYPES, only_wanted=True)


def _run(text: bytes):
    return parse_run(Source(name="run.txt", data=text, sha256=""))


def _same(a, b):
    assert a.qid.to_pylist() == b.qid.to_pylist()
    assert a.docno.to_pylist() == b.docno.to_pylist()
    assert a.score.tolist() == b.score.tolist()
    assert a.lineno.tolist() == b.lineno.tolist()
    assert (a.runid, a.lines) == (b.runid, b.lines)


def test_a_hash_inside_a_field_keeps_the_fast_path():
    table = _fast(b"1 Q0 d#1 1 2.5 r#\n1 Q0 d2 2 1.5 r#\n")
    assert table is not None
    assert table.column("f2").to_pylist() == [b"d#1", b"d2"]


@pytest.mark.parametrize("data", [b"# c\n1 Q0 d1 1 2.5 r\n", b"1 Q0 d1 1 2.5 r\n#c Q0 d2 2 1.5 r\n"])
def test_a_comment_line_leaves_the_fast_path(data):
    assert _fast(data) is None
    assert _run(data).docno.to_pylist() == [b"d1"]


@pytest.mark.parametrize(
    "data",
    [
        b"1 Q0 d\x01 1 2.5 r\n1 Q0 d2 2 1.5 r\n",  # a control byte before a separator
        b"1 Q0 \x1fd 1 2.5 r\n1 Q0 d2 2 1.5 r\n",  # after one
        b"1 Q0 d\x01\x02 1 2.5 r\n",  # two side by side
        b"1 Q0 d1 1 2.5 r\x1b\n",  # before a line end
    ],
)
def test_a_control_byte_next_to_a_separator_reads_as_the_tokenizer_reads_it(data):
    assert (_separators(data, b" ") is None) is True  # conservative: the general path reads it
    assert _fast(data) is None
    run = _run(data)
    lines = tokenize(data, "run.txt", blank_lines_ok=True, what="run")
    assert len(run.lineno) == len(lines.ntok)
    _same(run, _run(data.replace(b"\n", b"\t\n", 1).replace(b"\t\n", b"\n", 1)))


@pytest.mark.parametrize("data", [b"a\tb\tc\n", b"a\tb\tc\na\tb\tc\n"])
def test_tab_separated_fields_are_not_empty(data):
    assert (_separators(data, b"\t") is None) is False


@pytest.mark.parametrize("data", [b"a\t\tb\tc\n", b"a\tb\tc\t\n", b"a\tb\tc\n\na\tb\tc\n", b"\ta\tb\n"])
def test_tab_separated_empty_fields_are_found(data):
    assert (_separators(data, b"\t") is None) is True


def test_numeric_ids_read_canonical_decimals():
    arr = pa.array([b"7", b"0", b"123456789012345"], pa.large_binary())
    assert _numeric_ids(arr).tolist() == [7, 0, 123456789012345]


@pytest.mark.parametrize("bad", [b"1\xff", b"12\x00", b"1\xc3\xa9", b"1e5", b"1.0", b"1x1", b"1-", b"1 ", b"1\n"])
def test_numeric_ids_refuse_any_byte_that_is_not_a_digit_even_if_not_utf8(bad):
    arr = pa.array([b"7", bad], pa.large_binary())
    assert _numeric_ids(arr) is None
    assert _numeric_ids(arr.slice(1)) is None


def test_numeric_ids_of_a_slice():
    arr = pa.array([b"x", b"12", b"3"], pa.large_binary()).slice(1)
    assert np.asarray(_numeric_ids(arr)).tolist() == [12, 3]


@pytest.mark.parametrize("block", [1 << 18, 1 << 20])  # (1 MiB: the blocks it checks; 256 KiB: their former size)
def test_has_empty_field_across_the_blocks_it_checks(block):
    line = b"q Q0 doc 1 1.0 r\n"
    data = line * (block // len(line) + 5)
    assert (_separators(data, b" ") is None) is False
    for at in (len(line) * 100, block - 1, block, block + 1, len(data) - 3):
        bad = data[:at] + b" " + data[at + 1 :] if data[at : at + 1] != b" " else data[:at] + b"  " + data[at + 1 :]
        seps = np.frombuffer(bad, dtype=np.uint8) <= 32
        assert (_separators(bad, b" ") is None) is bool((seps[1:] & seps[:-1]).any())
    for short in (b"a", b"a\n", b"a b", b"a  b"):
        assert (_separators(short, b" ") is None) is (short == b"a  b")
