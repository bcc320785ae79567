"""io/lightcompute.py: the ireval process's pyarrow.compute gives the real module's results
(same kernels, same options) for every name it serves, and the real module for the others."""

from __future__ import annotations

import subprocess
import sys

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from irevalcli.io import lightcompute as lc

IDS = pa.array([b"b", b"a", b"", b"b", "é".encode(), b"a"], type=pa.large_binary())
NUMS = pa.array([3, 1, 2, 3, 3, 0], type=pa.int64())
FLAGS = pa.array([True, False, True, False, False, True])
TEXT = pa.array(["12", "x1", "0x1", "1e3", "", "007"], type=pa.large_string())

# (name, args, kwargs): the way the evaluation's path calls them, and options both ways
CALLS = [
    ("any", (FLAGS,), {}),
    ("any", (FLAGS,), {"skip_nulls": False, "min_count": 0}),
    ("binary_join_element_wise", (IDS, IDS, pa.scalar(b" ", pa.large_binary())), {}),
    ("binary_join_element_wise", (IDS, IDS, pa.scalar(b"-", pa.large_binary())), {"null_handling": "skip"}),
    ("binary_length", (IDS,), {}),
    ("count_distinct", (IDS,), {}),
    ("count_distinct", (IDS,), {"mode": "all"}),
    ("equal", (IDS, IDS), {}),
    ("equal", (NUMS, pa.scalar(3)), {}),
    ("filter", (IDS, FLAGS), {}),
    ("index_in", (IDS,), {"value_set": pa.array([b"a", b"b"], type=pa.large_binary())}),
    ("invert", (FLAGS,), {}),
    ("is_in", (NUMS,), {"value_set": pa.array([3, 0])}),
    ("is_in", (NUMS, pa.array([1])), {}),  # the options' argument given positionally
    ("is_valid", (NUMS,), {}),
    ("match_substring", (TEXT, "x"), {"ignore_case": True}),
    ("match_substring_regex", (TEXT, r"^(0|[1-9][0-9]{0,14})$"), {}),
    ("max", (NUMS,), {}),
    ("min", (IDS,), {}),
    ("not_equal", (NUMS.slice(1), NUMS.slice(0, 5)), {}),
    ("replace_with_mask", (NUMS, FLAGS, pa.array([7, 8, 9])), {}),
    ("sort_indices", (IDS,), {}),
    ("sort_indices", (pa.table({"t": NUMS, "s": IDS}),), {"sort_keys": [("t", "ascending"), ("s", "descending")]}),
    ("unique", (IDS,), {}),
    ("take", (IDS, pa.array([5, 0, 0])), {}),
    ("take", (pa.chunked_array([IDS, IDS]), pa.array([7, 1])), {"boundscheck": False}),
    ("cast", (NUMS, pa.float64()), {}),
    ("cast", (TEXT.slice(0, 1), pa.int64()), {}),
    ("cast", (pa.array([1.5, -2.0]), pa.int64()), {"safe": False}),
    ("cast", (NUMS,), {"options": pc.CastOptions.safe(pa.int32())}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), CALLS, ids=[c[0] for c in CALLS])
def test_light_kernel_gives_the_real_modules_result(name, args, kwargs):
    fn = lc.light(name)
    assert fn is not None
    got, want = fn(*args, **kwargs), getattr(pc, name)(*args, **kwargs)
    assert type(got) is type(want) and got.type == want.type
    assert got.equals(want)


def test_light_set_is_what_it_says():
    assert {c[0] for c in CALLS} == set(lc.LIGHT) | {"cast", "take"}
    assert lc.light("fill_null") is None and lc.light("field") is None  # Python-defined there
    assert lc.light("SortOptions") is pc.SortOptions and lc.light("call_function") is pc.call_function


@pytest.mark.parametrize(
    ("name", "args", "kwargs", "error"),
    [
        ("cast", (NUMS, pa.int64()), {"options": pc.CastOptions.safe(pa.int32())}, ValueError),
        ("cast", (pa.array([1.5]), pa.int64()), {}, pa.ArrowInvalid),
        ("cast", (TEXT, pa.int64()), {}, pa.ArrowInvalid),
        ("take", (IDS, pa.array([6])), {}, IndexError),
        ("unique", (IDS, 1), {}, TypeError),
        ("is_in", (NUMS,), {"value_set": pa.array([1]), "options": pc.SetLookupOptions(pa.array([2]))}, TypeError),
        ("not_equal", (NUMS,), {}, TypeError),
    ],
)
def test_light_kernel_refuses_what_the_real_one_refuses(name, args, kwargs, error):
    with pytest.raises(error):
        getattr(pc, name)(*args, **kwargs)
    with pytest.raises(error):
        lc.light(name)(*args, **kwargs)


def _in_fresh_process(code: str) -> str:
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return r.stdout


def test_installed_serves_pyarrows_own_calls_then_gives_way_to_the_real_module():
    code = """
import sys
from irevalcli.io import lightcompute as lc
lc.install()
import pyarrow as pa
import pyarrow.compute as pc
light = pc
import numpy as np
from irevalcli.io.arrow import from_numpy  # (pa.array of a list imports pandas, which needs the real module)
print(type(pc).__name__, pa.compute is pc)
a = from_numpy(np.array([3, 1, 2]))
print(a.cast(pa.float64()).to_pylist(), a.take(from_numpy(np.array([2, 0]))).to_pylist(), pc.sort_indices(a).to_pylist())
print("pyarrow._compute_docstrings" in sys.modules, "pandas" in sys.modules)
# a name the light module does not serve: the real module, from now on for everybody
print(pc.fill_null(pa.array([1, None]), 5).to_pylist())
import pyarrow.compute as again
print(type(again).__name__, pa.compute is again, sys.modules["pyarrow.compute"] is again, lc._FINDER in sys.meta_path)
print(light.Expression is again.Expression, light.cast(a, pa.int8()).type, light.field("x"))
"""
    assert _in_fresh_process(code).splitlines() == [
        "LightCompute True",
        "[3.0, 1.0, 2.0] [2, 3] [1, 2, 0]",
        "False False",
        "[1, 5]",
        "module True True False",
        "True int8 x",
    ]


def test_expressions_are_built_by_the_real_module():
    code = """
from irevalcli.io import lightcompute as lc
lc.install()
import pyarrow.compute as pc
import pyarrow.dataset  # its own import of pyarrow.compute names what it needs
print(type(pc).__name__, pc.is_in(pc.field("qid"), value_set=__import__("pyarrow").array(["1"])))
"""
    out = _in_fresh_process(code).splitlines()
    assert out[0].startswith("LightCompute is_in(qid")


def test_install_is_a_no_op_once_the_real_module_is_there():
    code = """
import sys
import pyarrow.compute as pc
from irevalcli.io import lightcompute as lc
lc.install()
import pyarrow.compute as again
print(again is pc, lc._FINDER in sys.meta_path)
"""
    assert _in_fresh_process(code) == "True False\n"


def test_served_functions_pickle_as_pyarrow_computes_own():
    code = """
import pickle
from irevalcli.io import lightcompute as lc
lc.install()
import pyarrow.compute as pc
light = pickle.dumps((pc.take, pc.sort_indices, pc.SortOptions))
lc.real()  # what a process unpickling them finds
import pyarrow.compute as real
print(pickle.loads(light) == (real.take, real.sort_indices, real.SortOptions))
"""
    assert _in_fresh_process(code) == "True\n"


def test_take_rows_checks_positions_itself():
    import numpy as np
    import pyarrow as pa
    import pytest

    from irevalcli.io.arrow import take_rows

    arr = pa.array([b"a", b"bb", b"", b"ccc"], type=pa.large_binary())
    assert take_rows(arr, np.array([3, 0, 0, 2])).to_pylist() == [b"ccc", b"a", b"a", b""]
    assert take_rows(arr, np.zeros(0, dtype=np.int64)).to_pylist() == []
    batch = pa.record_batch([arr, pa.array([1.0, 2.0, 3.0, 4.0])], names=["d", "s"])
    assert take_rows(batch, np.array([1, 3], dtype=np.int32)).column("s").to_pylist() == [2.0, 4.0]
    for bad in ([4], [-1], [0, 7]):
        with pytest.raises(ValueError, match="out of range"):
            take_rows(arr, np.array(bad))
    with pytest.raises(TypeError):
        take_rows(arr, np.array([0.0]))


@pytest.mark.parametrize(
    "texts",
    [[], [""], ["301", "10", "", "9"], ["b", "é", "a\udcff", "a"], ["q" * 300, "q"]],
)
def test_text_keys_are_the_bytes_of_each_id(texts):
    from irevalcli.io.arrow import text_keys

    keys = text_keys(texts)
    assert keys.type == pa.large_binary()
    assert keys.to_pylist() == [t.encode("utf-8", "surrogateescape") for t in texts]


def test_to_numpy_widens_half_floats_and_refuses_what_is_not_a_number():
    import numpy as np

    from irevalcli.io.arrow import to_numpy

    half = pa.array(np.array([0.5, 1.25, -2.0], dtype=np.float16))
    got = to_numpy(half)
    assert got.dtype == np.float64 and got.tolist() == [0.5, 1.25, -2.0]
    with pytest.raises(TypeError, match="not a numeric"):
        to_numpy(pa.array(["a"]))


def test_own_type_array_keeps_the_dtype():
    import numpy as np

    from irevalcli.io.arrow import own_type_array

    for dtype, arrow in ((np.uint64, pa.uint64()), (np.int32, pa.int32()), (np.float64, pa.float64())):
        got = own_type_array(np.array([3, 1, 2], dtype=dtype)[::-1])
        assert got.type == arrow and got.to_pylist() == [2, 1, 3]


def test_zeros_for_nulls_is_fill_null_zero_of_the_same_type():
    from irevalcli.io.arrow import zeros_for_nulls

    for typ in (pa.int64(), pa.int8(), pa.uint16(), pa.float32(), pa.float64()):
        arr = pa.array([1, None, 3, None], typ)
        got = zeros_for_nulls(arr)
        assert got.type == typ and got.null_count == 0
        assert got.equals(arr.fill_null(pa.scalar(0).cast(typ)))
        sliced = pa.chunked_array([arr.slice(1), pa.array([None, 7], typ)])
        assert zeros_for_nulls(sliced).to_pylist() == [0, 3, 0, 0, 7]
    plain = pa.array([4, 5], pa.int32())
    assert zeros_for_nulls(plain).equals(plain)


def test_repeated_text_is_the_list_built_array():
    from irevalcli.io.arrow import repeated_text

    for value, n in (("q7", 5), ("", 3), ("é", 2), ("x", 0)):
        got = repeated_text(value, n)
        got.validate(full=True)
        assert got.type == pa.string() and got.to_pylist() == [value] * n
    assert repeated_text("topic", 3).equals(pa.array(["topic"] * 3, pa.string()))


def test_repeated_bytes_is_the_repeated_scalar():
    from irevalcli.io.arrow import repeated_bytes

    for value, n in ((b"0", 4), (b"-1\n", 2), (b"", 3), (b" ", 0)):
        got = repeated_bytes(value, n)
        got.validate(full=True)
        assert got.equals(pa.repeat(pa.scalar(value, pa.large_binary()), n))


def test_string_and_float_arrays_are_the_list_built_arrays():
    from irevalcli.io.arrow import float_array, string_array

    for values in (["q1", None, "", "é t", "all"], [], [None], ["a" * 300, "b"]):
        got = string_array(values)
        got.validate(full=True)
        assert got.equals(pa.array(values, pa.string()))
    with pytest.raises(UnicodeEncodeError):
        string_array(["ok", "\udcff"])
    for floats in ([0.5, None, 1e300, -0.0], [], [None, None], [float("inf")]):
        got = float_array(floats)
        got.validate(full=True)
        assert got.equals(pa.array(floats, pa.float64()))
