"""``pyarrow.compute`` for the ``ireval`` process, without its 35-40 ms import.

Importing ``pyarrow.compute`` builds, for each of Arrow's ~300 compute kernels, a Python
wrapper, an ``inspect`` signature and a docstring (its options class's docstring parsed by
numpydoc): 35-40 ms of CPU on the 2-core machine, about one sixth of a DL-size run (43
topics, ``-q -m all_trec``), whose kernels themselves take a few ms. The wrappers only pass
their arguments to ``pyarrow._compute.call_function`` with an options object; the docstrings
and signatures are for people reading ``help()``.

:func:`install` (the ``ireval`` command's :func:`~irevalcli.commands.main.entry` calls it;
the API never does) makes ``import pyarrow.compute``, ours and pyarrow's own (an array's
``.cast``, ``.take``, ``.filter``...), give a :class:`LightCompute` module instead. It
serves the kernels of the evaluation's path (:data:`LIGHT`, ``cast``, ``take``) as
``pyarrow.compute``'s wrappers call them: the same ``call_function``, the same options
classes, so every result is the same array. Any other name (``pc.field``, ``pc.fill_null``,
``pc.Expression``...) imports the real module then and is its own, and from then on
``import pyarrow.compute`` gives the real module: pandas, dask and the other subcommands
see a complete ``pyarrow.compute``, only later. If pyarrow's layout ever differs (no
``pyarrow._compute``), every name is the real module's.
"""

from __future__ import annotations

import _thread
import sys
import types
from collections.abc import Callable
from typing import Any

NAME = "pyarrow.compute"

# The kernels served without the real module: name -> (how many array arguments, None for
# any number; the name of its options class in pyarrow._compute, None without options).
# pyarrow.compute's generic wrapper takes the arrays first, then the options' arguments
# (positional or by keyword) or ``options=``, and ``memory_pool=``.
LIGHT: dict[str, tuple[int | None, str | None]] = {
    "any": (1, "ScalarAggregateOptions"),
    "binary_join_element_wise": (None, "JoinOptions"),
    "binary_length": (1, None),
    "count_distinct": (1, "CountOptions"),
    "equal": (2, None),
    "filter": (2, "FilterOptions"),
    "index_in": (1, "SetLookupOptions"),
    "invert": (1, None),
    "is_in": (1, "SetLookupOptions"),
    "is_valid": (1, None),
    "match_substring": (1, "MatchSubstringOptions"),
    "match_substring_regex": (1, "MatchSubstringOptions"),
    "max": (1, "ScalarAggregateOptions"),
    "min": (1, "ScalarAggregateOptions"),
    "not_equal": (2, None),
    "replace_with_mask": (3, None),
    "sort_indices": (1, "SortOptions"),
    "unique": (1, None),
}
# Names pyarrow.compute takes from pyarrow._compute unchanged.
_SHARED = ("call_function", "Expression")

_lock = _thread.RLock()  # (not threading's: nothing more to import for ireval --help)


def real() -> types.ModuleType:
    """The real ``pyarrow.compute``, imported now if it was not (and given by every later
    ``import pyarrow.compute``)."""
    with _lock:
        mod = sys.modules.get(NAME)
        if mod is None or isinstance(mod, LightCompute):
            uninstall()
            sys.modules.pop(NAME, None)
            import importlib

            mod = importlib.import_module(NAME)
        return mod


class LightCompute(types.ModuleType):
    """Stands for ``pyarrow.compute`` (see the module's text): each name is found once."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # the import system's and tools' probes: not kernels
            raise AttributeError(name)
        try:
            value = light(name)
        except (ImportError, AttributeError):  # another pyarrow's layout
            value = None
        if value is None:
            value = getattr(real(), name)
        elif callable(value) and getattr(value, "__module__", None) == __name__:
            # pickled by reference as pyarrow.compute's own (what unpickling elsewhere finds)
            value.__module__, value.__qualname__ = NAME, name
        setattr(self, name, value)
        return value


def light(name: str) -> Any:
    """``pyarrow.compute``'s ``name`` without the real module, or None when it needs it."""
    import pyarrow._compute as c

    if name.endswith("Options") or name in _SHARED:
        return getattr(c, name)
    if name == "cast":
        return _cast(c)
    if name == "take":
        return _take(c)
    if name not in LIGHT:
        return None
    arity, options_name = LIGHT[name]
    return _kernel(c, name, arity, getattr(c, options_name) if options_name else None)


def _cast(c: Any) -> Callable[..., Any]:
    import pyarrow as pa

    call, options_class = c.call_function, c.CastOptions

    def cast(
        arr: Any, target_type: Any = None, safe: bool | None = None, options: Any = None, memory_pool: Any = None
    ) -> Any:
        """``pyarrow.compute.cast``."""
        if (safe is not None or target_type is not None) and options is not None:
            raise ValueError("Must either pass values for 'target_type' and 'safe' or pass a value for 'options'")
        if options is None:
            target = pa.types.lib.ensure_type(target_type)
            options = options_class.unsafe(target) if safe is False else options_class.safe(target)
        return call("cast", [arr], options, memory_pool)

    return cast


def _take(c: Any) -> Callable[..., Any]:
    call, options_class = c.call_function, c.TakeOptions

    def take(data: Any, indices: Any, *, boundscheck: bool = True, memory_pool: Any = None) -> Any:
        """``pyarrow.compute.take``."""
        return call("take", [data, indices], options_class(boundscheck=boundscheck), memory_pool)

    return take


def _kernel(c: Any, name: str, arity: int | None, options_class: Any) -> Callable[..., Any]:
    call, expression = c.call_function, c.Expression

    def kernel(*args: Any, memory_pool: Any = None, options: Any = None, **kwargs: Any) -> Any:
        if args and isinstance(args[0], expression):  # a dataset filter: built by the real module
            return getattr(real(), name)(*args, memory_pool=memory_pool, options=options, **kwargs)
        option_args: tuple[Any, ...] = ()
        if arity is not None:
            if len(args) < arity:
                raise TypeError(f"{name} takes {arity} positional argument(s), but {len(args)} were given")
            args, option_args = args[:arity], args[arity:]
        if option_args or kwargs:
            if options is not None:
                raise TypeError(f"Function {name!r} called with both an 'options' argument and additional arguments")
            if options_class is None:
                raise TypeError(f"{name}() takes no options")
            options = options_class(*option_args, **kwargs)
        elif isinstance(options, dict):
            options = options_class(**options)
        return call(name, list(args), options, memory_pool)

    kernel.__name__ = kernel.__qualname__ = name
    kernel.__doc__ = f"``pyarrow.compute.{name}``."
    return kernel


class _Finder:
    """On ``sys.meta_path``: the module ``import pyarrow.compute`` gives in the ``ireval``
    process (the import system sets it as ``pyarrow``'s attribute too, as for the real one)."""

    @staticmethod
    def find_spec(name: str, path: Any = None, target: Any = None) -> Any:
        if name != NAME:
            return None
        from importlib.machinery import ModuleSpec

        return ModuleSpec(name, _FINDER)  # type: ignore[arg-type]  # a loader by its two methods

    @staticmethod
    def create_module(spec: Any) -> types.ModuleType:
        return LightCompute(spec.name)

    @staticmethod
    def exec_module(module: types.ModuleType) -> None:
        return None


_FINDER = _Finder()


def install() -> None:
    """From now on, until a name needs the real module, ``import pyarrow.compute`` gives a
    :class:`LightCompute` (unless the real one is imported already)."""
    if NAME not in sys.modules and _FINDER not in sys.meta_path:
        sys.meta_path.insert(0, _FINDER)


def uninstall() -> None:
    if _FINDER in sys.meta_path:
        sys.meta_path.remove(_FINDER)
