"""Declaring a measure's friendly spellings: ir_measures', ranx's, ireval's own, TF-Ranking's and
Elasticsearch's names for it.

A family module declares each spelling next to the measure it maps to, with
:func:`spelling`: its names, its library (``style``), the arguments and cutoff it takes,
what it computes, and ``build``, which turns the parsed arguments into a :class:`Target`
(the registered measure, its parameters, options and table views). The helpers below
(:func:`simple`, :func:`ranx`, :func:`rel_view`, ...) are the argument grammar shared by
many spellings; a spelling's own rules are a function in its module.

Declaring a spelling only records it (this module is imported with the measures, and is
cheap); reading ``-m`` arguments in these spellings is :func:`.names.parse_friendly`, the
one ``-m`` grammar, and describing them is :mod:`.reference`.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, Literal

from ..errors import MeasureParamError
from ..records import FrozenRecord
from .registry import LONG_MAX

BIG = 2**62  # "no cutoff" for measures whose definition clips k to the ranking

# the library whose spelling it is: it decides the grammar (ranx: name[@k][-lN]; the others:
# Name[(key=value,...)][@k]) and, where the libraries differ, the definition
Style = Literal["ir_measures", "ranx", "ireval", "tf-ranking", "elasticsearch"]
Cutoff = Literal["optional", "required", "none"]


class Library(FrozenRecord):
    """A library whose spellings ireval reads (a spelling's ``style``)."""

    __slots__ = ("name", "ranx_grammar", "syntax")

    name: str
    syntax: str  # what 'ireval measures NAME' calls a spelling of it
    ranx_grammar: bool  # name[@k][-lN] (ranx's); else Name[(key=value,...)][@k]

    def __init__(self, name: str, syntax: str, ranx_grammar: bool = False) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "syntax", syntax)
        object.__setattr__(self, "ranx_grammar", ranx_grammar)


# every style, in the order the reference lists them (after trec_eval's own) and a -m error
# offers them; a new library is one line here and one name in Style
LIBRARIES: dict[str, Library] = {
    lib.name: lib
    for lib in (
        Library("ir_measures", "ir_measures' syntax"),
        Library("ranx", "ranx's syntax", ranx_grammar=True),
        Library("ireval", "ireval's friendly syntax"),
        Library("tf-ranking", "TF-Ranking's spelling"),
        Library("elasticsearch", "Elasticsearch's spelling"),
    )
}


class Target(FrozenRecord):
    """What a friendly spelling means."""

    __slots__ = ("opts", "root", "values", "view", "views")

    root: str  # canonical registered measure
    values: tuple[Any, ...]  # its trec_eval parameters
    opts: tuple[tuple[str, Any], ...]  # options the measure reads (definition choices)
    view: tuple[str, Any] | None  # ("level"|"binary"|"drop"|"judged"|"top"|"908"|"gains", n): table seen
    views: tuple[tuple[str, Any], ...]  # further views, applied after ``view``

    def __init__(
        self,
        root: str,
        values: tuple[Any, ...] = (),
        opts: tuple[tuple[str, Any], ...] = (),
        view: tuple[str, Any] | None = None,
        views: tuple[tuple[str, Any], ...] = (),
    ) -> None:
        object.__setattr__(self, "root", root)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "opts", opts)
        object.__setattr__(self, "view", view)
        object.__setattr__(self, "views", views)


Build = Callable[[dict[str, Any], str | None, str], Target]


class Family(FrozenRecord):
    """One friendly name: its style, the arguments it takes and what it maps to."""

    __slots__ = ("args", "build", "cutoff", "definition", "dotted", "module", "name", "roots", "style", "synonyms")

    name: str
    style: Style
    build: Build  # (arguments, the text after @ or None, the spelling as typed) -> Target
    definition: str  # one line: what this spelling computes (shown by 'ireval measures NAME')
    roots: tuple[str, ...]  # canonical measures it can map to; the first is declared in ``module``
    args: tuple[str, ...]  # keyword arguments accepted (ir_measures/ireval style)
    cutoff: Cutoff
    synonyms: tuple[str, ...]
    dotted: bool  # ranx: the cutoff may follow a '.' (rbp.95), which trec_eval's syntax would read
    module: str  # the family module that declares it

    def __init__(  # noqa: PLR0913  the fields of a declaration
        self,
        name: str,
        style: Style,
        build: Build,
        definition: str,
        roots: tuple[str, ...],
        args: tuple[str, ...] = (),
        cutoff: Cutoff = "optional",
        synonyms: tuple[str, ...] = (),
        dotted: bool = False,
        module: str = "",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "style", style)
        object.__setattr__(self, "build", build)
        object.__setattr__(self, "definition", definition)
        object.__setattr__(self, "roots", roots)
        object.__setattr__(self, "args", args)
        object.__setattr__(self, "cutoff", cutoff)
        object.__setattr__(self, "synonyms", synonyms)
        object.__setattr__(self, "dotted", dotted)
        object.__setattr__(self, "module", module)

    @property
    def library(self) -> Library:
        return LIBRARIES[self.style]


# Every spelling by name, in listing order (``ireval measures``, docs/measures.md).
FAMILIES: dict[str, Family] = {}

# The order the spellings were listed in when they were one table (before issue 15): kept so that
# ``ireval measures`` and docs/measures.md read as before. It is an order only; a spelling not
# named here lists after these, family module by family module (the measures' order), each
# in declaration order.
LISTING_ORDER: tuple[str, ...] = (
    *("P", "Precision", "R", "Recall", "AP", "MAP", "RR", "MRR", "nDCG", "NDCG", "Rprec", "RPrec"),
    *("Success", "Judged", "ERR", "RBP", "INST", "BPM", "SDCG", "INSQ", "NERR8", "NERR9", "NERR10"),
    *("NERR11", "alpha_nDCG", "α_nDCG", "ERR_IA", "nERR_IA", "alpha_DCG", "α_DCG", "NRBP", "nNRBP"),
    *("AP_IA", "MAP_IA", "P_IA", "StRecall", "Compat", "Accuracy", "SetP", "SetRelP", "SetR", "SetF"),
    *("SetAP", "IPrec", "NumRet", "NumRelRet", "NumRel", "NumQ", "Bpref", "BPref", "infAP", "pFound"),
    *("AUC", "GAUC", "CG", "R_cap", "F", "hits", "hit_rate", "precision", "recall", "f1", "r-precision"),
    *("mrr", "map", "dcg", "dcg_burges", "ndcg", "ndcg_burges", "bpref", "rbp", "PrecisionMetric"),
    *("BPrefMetric", "ARPMetric", "OPAMetric", "PrecisionIAMetric", "AlphaDCGMetric", "PrecisionAtK"),
)


def spelling(
    *names: str,
    style: Style,
    build: Build,
    definition: str,
    roots: Sequence[str],
    args: Sequence[str] = (),
    cutoff: Cutoff = "optional",
    dotted: bool = False,
) -> None:
    """Declare a friendly spelling (and its synonyms, ``names[1:]``) in the module that declares
    the measure it maps to (``roots[0]``)."""
    module = sys._getframe(1).f_globals.get("__name__", "")
    if style not in LIBRARIES:
        raise RuntimeError(f"spelling {names[0]}: no library '{style}' (spellings.LIBRARIES)")
    for n in names:
        if n in FAMILIES:
            raise RuntimeError(f"spelling {n} declared twice")
        synonyms = tuple(x for x in names if x != n)
        FAMILIES[n] = Family(n, style, build, definition, tuple(roots), tuple(args), cutoff, synonyms, dotted, module)


def dotted_pattern() -> re.Pattern[str]:
    """``rbp.95`` and ``rbp.95-l2``: the spellings whose cutoff follows a dot, which trec_eval's
    syntax would otherwise read as a measure and its parameters."""
    names = "|".join(re.escape(f.name) for f in FAMILIES.values() if f.dotted) or "(?!)"
    return re.compile(rf"^(?:{names})\.[0-9]+(-l-?[0-9]+)?$")


# ---- the argument grammar shared by many spellings ----------------------------------

REL = ("rel", "judged_only")  # the ir_measures arguments that change the table the measure sees


def int_cutoff(at: str | None, spec: str) -> int | None:
    """The cutoff after ``@``, or None."""
    if at is None:
        return None
    if not re.fullmatch(r"[0-9]+", at) or int(at) <= 0:
        raise MeasureParamError(f"{spec}: cutoff '{at}' is not a positive integer")
    if int(at) > LONG_MAX:
        raise MeasureParamError(f"{spec}: cutoff '{at}' is out of range")
    return int(at)


def rel_view(args: dict[str, Any], spec: str, extra: tuple[tuple[str, Any], ...] = ()) -> dict[str, Any]:
    """``rel=N`` (relevant means label >= N) and ``judged_only=True`` as :class:`Target` views."""
    views: list[tuple[str, Any]] = []
    if "rel" in args:
        rel = args["rel"]
        if not isinstance(rel, int) or isinstance(rel, bool):
            raise MeasureParamError(f"{spec}: rel={rel!r} is not an integer")
        if abs(rel) > LONG_MAX:
            raise MeasureParamError(f"{spec}: rel={rel} is out of range")
        views.append(("level", rel))
    if args.get("judged_only") is True:
        views.append(("judged", 0))
    views.extend(extra)
    if not views:
        return {}
    return {"view": views[0], "views": tuple(views[1:])}


def number_opts(args: dict[str, Any], spec: str, *names: str) -> tuple[tuple[str, float], ...]:
    """The numeric arguments ``names`` that were given, as measure options."""
    out = []
    for key in names:
        if key in args:
            v = args[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MeasureParamError(f"{spec}: {key}={v!r} is not a number")
            try:
                value = float(v)
            except OverflowError:  # an integer beyond any float
                value = math.inf
            if math.isinf(value):  # 1e400, inf, 10**400: no measure takes an infinite parameter
                raise MeasureParamError(f"{spec}: {key}={v!r} is out of range")
            if math.isnan(value):
                raise MeasureParamError(f"{spec}: {key}={v!r} is not a number")
            out.append((key, value))
    return tuple(out)


def number_arg(args: dict[str, Any], key: str, default: float, spec: str) -> float:
    """The numeric argument ``key``, checked as :func:`number_opts` checks it (a number,
    finite), or ``default`` when it is not given. Every builder reads a real argument so."""
    given = number_opts(args, spec, key)
    return given[0][1] if given else float(default)


def bool_arg(args: dict[str, Any], key: str, default: bool, spec: str) -> bool:
    v = args.get(key, default)
    if not isinstance(v, bool):
        raise MeasureParamError(f"{spec}: {key}={v!r} is not true or false")
    return v


def simple(root: str, *, cut_root: str | None = None, rel: bool = True) -> Build:
    """A measure with an optional/required cutoff that becomes a trec_eval cutoff."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = int_cutoff(at, spec)
        view = rel_view(args, spec) if rel else {}
        if k is None:
            return Target(root, (), **view)
        return Target(cut_root or root, (k,), **view)

    return build


def ranx(root: str, cut_root: str | None, *, big: bool = False) -> Build:
    """A ranx spelling: ``name`` is ``root``, ``name@k`` is ``cut_root`` at k (``big``: ``name``
    is ``cut_root`` at every depth), ``-lN`` drops the labels below N."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = int_cutoff(at, spec)
        view: dict[str, Any] = {"view": ("drop", args["level"])} if "level" in args else {}
        if k is None:
            return Target(cut_root or root, (BIG,), **view) if big else Target(root, (), **view)
        return Target(cut_root or root, (k,), **view)

    return build
