"""Coverage-guided fuzzing (atheris/libFuzzer) of ireval's readers.

Run it (atheris has wheels for CPython 3.8-3.11 on x86-64 Linux):

    .venv/bin/pip install atheris
    mkdir -p fuzz/corpus/readers
    .venv/bin/python fuzz/fuzz_readers.py -max_len=4096 -timeout=10 fuzz/corpus/readers fuzz/seeds/fuzz_readers

(add ``-atheris_runs=N`` or ``-max_total_time=SECONDS`` to stop; ``tests/test_fuzz.py::test_atheris_targets``
runs it under ``pytest -m fuzz``). The first byte of an input picks the reader, the rest is the file:

* the TREC readers (run, qrels) and the format-detecting readers (trec, tsv, csv, jsonl, parquet),
* decompression (gzip, bzip2, xz, zstd by magic bytes),
* the -Z file reader.

A crash is any exception other than ``IrevalError``, an ``IrevalError`` whose message has a line
break, a parse that differs between pyarrow's CSV fast path and the tokenizer, or a libFuzzer
timeout (a hang). Known bugs, pinned as strict xfails in ``tests/test_bad_inputs.py``, are skipped
so that the fuzzer keeps looking for new ones; set ``IREVAL_FUZZ_KNOWN=1`` to include them.
"""

from __future__ import annotations

import os
import sys
import tempfile
import zlib

import atheris

with atheris.instrument_imports(include=["irevalcli"]):
    from irevalcli.errors import IrevalError
    from irevalcli.io.tabular import parse_qrels_source, parse_run_source
    from irevalcli.io.trec import Source, _decompress, parse_qrels, parse_run, read_zscores

INCLUDE_KNOWN = os.environ.get("IREVAL_FUZZ_KNOWN") == "1"
BOM = b"\xef\xbb\xbf"
ZFILE = os.path.join(tempfile.mkdtemp(prefix="ireval-fuzz-"), "z")


def _one_line(e: BaseException) -> None:
    msg = str(e)
    if not msg or "\n" in msg or "\r" in msg:
        raise AssertionError(f"not a one-line message: {msg!r}")


def _parse(parse, data: bytes):
    try:
        got = parse(Source("f", data, ""))
    except IrevalError as e:
        _one_line(e)
        return ("error", str(e))
    values = got.score if hasattr(got, "score") else got.rel
    n = len(got.qid)
    if len(got.docno) != n or len(values) != n or len(got.lineno) != n:
        raise AssertionError("columns of different lengths")
    return (got.qid.to_pylist(), got.docno.to_pylist(), values.tobytes(), list(got.lineno))


def TestOneInput(data: bytes) -> None:
    if not data:
        return
    mode, body = data[0] % 6, data[1:]
    if not INCLUDE_KNOWN and body.startswith(BOM):
        return  # bom-*: kept or stripped depending on the parser path
    if mode == 0:  # the TREC readers, and the fast path must agree with the tokenizer
        for parse in (parse_run, parse_qrels):
            a = _parse(parse, body)
            if a[0] != "error":
                b = _parse(parse, body + (b"" if body.endswith(b"\n") else b"\n") + b"# c\n")
                if a[:3] != b[:3]:
                    raise AssertionError(f"fast path and tokenizer disagree: {a[:3]!r} != {b[:3]!r}")
    elif mode == 1:  # format detection: trec, tsv, csv, jsonl, parquet
        for parse in (parse_run_source, parse_qrels_source):
            got = _parse(parse, body)
            if got[0] != "error" and not got[0] and parse is parse_run_source:
                raise AssertionError("a run with no results was accepted")
    elif mode in (2, 3):  # decompression, then the readers
        magic = [b"\x1f\x8b\x08", b"BZh9", b"\xfd7zXZ\x00", b"\x28\xb5\x2f\xfd"][body[:1][0] % 4 if body else 0]
        try:
            out = _decompress(magic + body[1:], "f", "run")
        except IrevalError as e:
            _one_line(e)
            return
        except zlib.error:
            if INCLUDE_KNOWN:
                raise
            return  # run-corrupt-deflate
        _parse(parse_run, out)
    else:  # -Z files
        with open(ZFILE, "wb") as fh:
            fh.write(body)
        try:
            read_zscores(ZFILE)
        except IrevalError as e:
            _one_line(e)


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
