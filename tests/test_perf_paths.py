"""The fast paths stay fast without changing results: no pandas import on the
evaluation path, the prefetching thread keeps order and errors, and the
Arrow/numpy bridge converts exactly."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from irevalcli.engine.stream import prefetch
from irevalcli.errors import InputError
from irevalcli.io.arrow import binary_array, from_numpy, to_numpy, valid_mask

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

PROBE = """
import sys
from irevalcli.commands.main import main
sys.argv = ["ireval", *sys.argv[1:]]
try:
    main()
except SystemExit as exc:
    assert not exc.code, exc.code
print("pandas imported" if "pandas" in sys.modules else "pandas not imported", file=sys.stderr)
"""


@pytest.mark.parametrize(
    "args",
    [
        ["-m", "map", "-m", "ndcg_cut.10"],
        ["-m", "all_trec", "-q"],
        ["-m", "all_trec", "-q", "-c", "-M", "50", "-J"],
        ["-m", "all_trec", "--stream"],
    ],
)
def test_trec_evaluation_does_not_import_pandas(args):
    """pyarrow's to_numpy/pa.array import pandas (~0.3 s); the trec path avoids them."""
    r = subprocess.run(
        [sys.executable, "-c", PROBE, *args, str(EXAMPLES / "qrels.txt"), str(EXAMPLES / "run.txt")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert r.stdout.startswith(("map", "num_ret", "runid"))
    assert r.stderr.strip().splitlines()[-1] == "pandas not imported"


def test_prefetch_keeps_order():
    with prefetch(iter(range(1000)), depth=2) as it:
        assert list(it) == list(range(1000))


def test_prefetch_raises_in_order():
    def items():
        yield 1
        yield 2
        raise InputError("run.txt", "bad line", 7)

    got = []
    with pytest.raises(InputError) as exc, prefetch(items()) as it:  # the items before the error arrive first
        got.extend(it)
    assert got == [1, 2]
    assert exc.value.line == 7


def test_prefetch_stops_worker_when_consumer_stops():
    before = threading.active_count()
    produced = []

    def items():
        for i in range(10**6):
            produced.append(i)
            yield i

    with prefetch(items()) as gen:
        assert next(gen) == 0
    assert threading.active_count() == before  # joined on leaving the block
    assert len(produced) < 10


def test_prefetch_keeps_context_variables():
    from irevalcli.io.trec import HASH_INPUTS, hashing

    def items():
        yield HASH_INPUTS.get()

    for enabled in (True, False):
        with hashing(enabled), prefetch(items()) as it:
            assert list(it) == [enabled]


@pytest.mark.parametrize(
    "values",
    [
        np.array([3, -1, 2**40], dtype=np.int64),
        np.array([0.5, -0.0, np.inf], dtype=np.float64),
        np.array([1, 2], dtype=np.int32),
        np.array([True, False, True, True, False, False, True, False, True]),
        np.zeros(0, dtype=np.int64),
    ],
)
def test_bridge_round_trip(values):
    arr = from_numpy(values)
    assert arr.to_pylist() == values.tolist()
    back = to_numpy(arr)
    assert back.dtype == values.dtype
    assert np.array_equal(back, values)
    # sliced arrays keep their offset (bit offsets for booleans)
    if len(values) > 2:
        assert np.array_equal(to_numpy(arr.slice(1, len(values) - 2)), values[1:-1])


def test_bridge_nulls_and_binary():
    arr = pa.array([1, None, 3], pa.int64())
    with pytest.raises(ValueError):
        to_numpy(arr)
    assert valid_mask(arr).tolist() == [True, False, True]
    vals = to_numpy(arr, nulls_ok=True)
    assert vals[0] == 1 and vals[2] == 3
    b = binary_array([b"a", b"", b"xyz"])
    assert b.type == pa.large_binary() and b.to_pylist() == [b"a", b"", b"xyz"]
    assert binary_array([]).to_pylist() == []
    assert to_numpy(pa.chunked_array([[1, 2], [3]], pa.int64())).tolist() == [1, 2, 3]


def test_bridge_widens_other_dtypes_without_truncating():
    assert from_numpy(np.array([1.5, -2.25], dtype=np.float32)).to_pylist() == [1.5, -2.25]
    assert from_numpy(np.array([7, 255], dtype=np.uint8)).to_pylist() == [7, 255]
