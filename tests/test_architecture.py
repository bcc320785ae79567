"""The package's layering, checked on the source with ``ast``.

Imports point one way (README, "Architecture"):

    commands -> analysis, output -> api -> engine -> measures -> core -> io -> errors

Every import counts, lazy ones (inside functions) and ``TYPE_CHECKING`` ones included.
No cycles, no module importing another module's ``_private`` name, and no layer
importing a layer above it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "irevalcli"

# Layer of each top-level piece; a module may import its own layer and those below it.
LAYERS = {
    "errors": 0,
    "version": 0,
    "signals": 0,  # the one SIGINT/SIGTERM/SIGHUP handler: used by output, engine and commands
    "records": 0,  # value classes without a dataclass's creation cost: used by every layer
    "machine": 0,  # facts about the machine (its CPUs), asked in one place
    "io": 1,
    "core": 2,
    "settings": 2,  # the options object: nests core's table options, read by engine, api and commands
    "measures": 3,
    "engine": 4,
    "api": 5,
    "options": 5,
    "analysis": 6,
    "output": 6,
    "commands": 7,
    "__main__": 8,
    "": 8,  # the package __init__: the public API, re-exported lazily
}
# Third-party packages a layer must not import (the core stays usable without a terminal).
FORBIDDEN_THIRD_PARTY = {
    "signals": {"click", "rich"},
    "records": {"click", "rich"},
    "io": {"click", "rich"},
    "measures": {"click", "rich"},
    "core": {"click", "rich"},
    "settings": {"click", "rich"},
    "engine": {"click", "rich"},
    "api": {"click", "rich"},
    "analysis": {"click", "rich"},
}


def _modules() -> dict[str, tuple[Path, bool]]:
    mods = {}
    for path in sorted(PKG.rglob("*.py")):
        parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        mods[".".join(parts)] = (path, is_pkg)
    return mods


MODULES = _modules()


def _imports(mod: str) -> list[tuple[str, str | None, int]]:
    """(imported module, imported name or None, line) for every import in ``mod``."""
    path, is_pkg = MODULES[mod]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out += [(a.name, None, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = mod.split(".") if is_pkg else mod.split(".")[:-1]
                pkg = pkg[: len(pkg) - (node.level - 1)]
                base = ".".join(pkg + ([base] if base else []))
            for a in node.names:
                full = f"{base}.{a.name}"
                out.append((full, None, node.lineno) if full in MODULES else (base, a.name, node.lineno))
    return out


def _internal(target: str) -> str | None:
    while target not in MODULES and "." in target:
        target = target.rsplit(".", 1)[0]
    return target if target in MODULES and target.startswith("irevalcli") else None


def _graph() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {m: set() for m in MODULES}
    for mod in MODULES:
        for target, _, _ in _imports(mod):
            t = _internal(target)
            if t and t != mod:
                graph[mod].add(t)
    return graph


def _layer(mod: str) -> str:
    parts = mod.split(".")
    return parts[1] if len(parts) > 1 else ""


def test_every_module_has_a_layer():
    assert sorted({_layer(m) for m in MODULES} - set(LAYERS)) == []


def test_no_import_cycles():
    graph = _graph()
    cycles = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert cycles == []


def test_no_private_names_across_modules():
    bad = [
        f"{mod}:{line} imports {target}.{name}"
        for mod in MODULES
        for target, name, line in _imports(mod)
        if name and name.startswith("_") and not name.startswith("__") and _internal(target) not in (None, mod)
    ]
    assert bad == []


def test_imports_point_down_the_layers():
    bad = []
    for mod in MODULES:
        here = _layer(mod)
        for target, _, line in _imports(mod):
            t = _internal(target)
            if t is None or t == mod:
                continue
            there = _layer(t)
            if there == "" and t == "irevalcli":
                bad.append(f"{mod}:{line} imports the package itself")
            elif LAYERS[there] > LAYERS[here]:
                bad.append(f"{mod}:{line} ({here}) imports {t} ({there})")
    assert bad == []


@pytest.mark.parametrize("layer", sorted(FORBIDDEN_THIRD_PARTY))
def test_lower_layers_do_not_import_the_terminal_libraries(layer):
    bad = [
        f"{mod}:{line} imports {target}"
        for mod in MODULES
        if _layer(mod) == layer
        for target, _, line in _imports(mod)
        if target.split(".")[0] in FORBIDDEN_THIRD_PARTY[layer]
    ]
    assert bad == []


def test_nothing_outside_measures_names_a_measure_rule():
    """Measure-specific rules live in the declarations (issue 15): the engine and the
    readers must not special-case a measure by name."""
    pattern_hits = []
    for mod, (path, _) in MODULES.items():
        if _layer(mod) in ("measures",):
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ('startswith("unj")', "ZEROED_WHEN_MISSING", "NOT_IN_9_0_8", '== "num_ret"', '== "relstring"'):
            if needle in text:
                pattern_hits.append(f"{mod}: {needle}")
    assert pattern_hits == []


# A comparison with a measure's name outside measures/ is a rule about that measure
# kept away from its declaration. The exceptions, each not a rule about the measure:
NAMED_ON_PURPOSE = {
    # grid formats (csv, markdown, ...) give the run's name a column of its own
    ("irevalcli.output.formatters", "runid"),
    # a run file's runid column (the input's, not the measure)
    ("irevalcli.io.tabular", "runid"),
    # plot requests the interpolated precision curve (a request, as a user's -m is)
    ("irevalcli.commands.plot", "iprec_at_recall"),
}


def test_no_comparison_with_a_measure_name_outside_measures():
    """No ``x == "num_q"``, ``agg in ("runid", ...)`` or the like outside ``measures/``:
    what is specific to a measure is a typed field of its declaration (issue 15)."""
    from irevalcli.measures import catalog, spellings
    from irevalcli.measures.registry import REGISTRY

    catalog.load()
    names = set(REGISTRY) | {f.name for f in spellings.FAMILIES.values()}
    hits = set()
    for mod, (path, _) in MODULES.items():
        if _layer(mod) == "measures":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            for side in (node.left, *node.comparators):
                elts = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
                for e in elts:
                    if isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value in names:
                        hits.add((mod, e.value))
    assert hits - NAMED_ON_PURPOSE == set()
    assert hits >= NAMED_ON_PURPOSE  # an exception that is gone is taken off the list


def test_measures_use_only_the_tables_public_api():
    """Measures share columns through ``EvalTable.memo`` and views through ``EvalTable.derive``,
    never by reaching into a table's private fields (``t._cache`` was read 66 times)."""
    bad = []
    for mod, (path, _) in MODULES.items():
        if not mod.startswith("irevalcli.measures"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.keyword) and node.arg and node.arg.startswith("_"):
                bad.append(f"{mod}:{node.value.lineno} passes {node.arg}=")
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls", "sys"))
            ):
                bad.append(f"{mod}:{node.lineno} reads .{node.attr}")
    assert bad == []


# pyarrow calls that go through its pandas shim and import pandas (a quarter of a second and
# 30-40 MB) even when nothing else needs it: pa.array and pa.scalar of Python or numpy values,
# Array.to_numpy(zero_copy_only=...), fill_null. io.arrow builds the same arrays from their
# buffers (from_numpy, own_type_array, binary_array, string_array, float_array, repeated_text,
# repeated_bytes, zeros_for_nulls, to_numpy). Allowed only where pandas is the input already.
PANDAS_SHIM_ALLOWED = {
    "irevalcli.io.frames": "DataFrame columns",
    "irevalcli.engine.dask_engine": "Dask partitions are pandas",
    "irevalcli.io.dataset": "a dictionary-typed label column's fill (pa.scalar(0) of its value type)",
}


def _pandas_shim_calls(mod: str) -> list[tuple[int, str]]:
    path, _ = MODULES[mod]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        f = node.func
        named = isinstance(f.value, ast.Name) and f.value.id == "pa" and f.attr in ("array", "scalar")
        to_numpy = f.attr == "to_numpy" and any(k.arg == "zero_copy_only" for k in node.keywords)
        if named or to_numpy or f.attr == "fill_null":
            found.append((node.lineno, ast.unparse(node)[:60]))
    return found


@pytest.mark.parametrize("mod", sorted(m for m in MODULES if m not in PANDAS_SHIM_ALLOWED))
def test_no_pyarrow_call_through_its_pandas_shim(mod):
    assert _pandas_shim_calls(mod) == []


def test_the_pandas_shim_allowances_are_used():
    assert [m for m in PANDAS_SHIM_ALLOWED if not _pandas_shim_calls(m)] == []
