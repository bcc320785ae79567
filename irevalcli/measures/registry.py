"""The measure registry: one declaration per measure, in trec_eval's table order.

A measure is a pure function ``f(table, params) -> values`` where ``values`` has
one row per output label and one column per evaluated topic. The declaration
says everything else: how parameters are written and parsed, how labels are
formed, how the summary is aggregated, and how a value is printed. Output
order is registry order (trec_eval prints in its measure-table order, not in
command-line order), then parameter order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    import numpy as np

    from ..core.table import EvalTable

ParamKind = Literal["none", "long_cutoffs", "double_cutoffs", "double_params", "pairs"]
Kind = Literal["float", "int", "str"]
# mean: sum of per-topic values / number of topics; sum: sum; gmean: exp(mean)
# of per-topic logs; nanmean: mean over the topics with a value (not NaN); wmean: the same,
# weighted by one more row the measure returns after its labels' rows; none: summary only
# (runid, num_q) or per topic only
Agg = Literal["mean", "sum", "gmean", "nanmean", "wmean", "judged_sum", "topic_count", "run_name", "none"]
# What a ``-c`` placeholder topic (judged, but absent from the run) gets in this measure's slots:
#   value: whatever the function computes on the empty ranking (the default)
#   zero: 0 in every slot (trec_eval zeroes every unj_* slot)
#   zero_named: 0 only in the slot labelled with the bare measure name; trec_eval finds the slot by
#     label, so a parameterised variant (utility_2,-1,0,0) keeps its computed value; a string
#     measure's slot is left empty instead (relstring)
Placeholder = Literal["value", "zero", "zero_named"]
# Which way a measure gets better: compare's wins and losses, and the gate's drops, follow it.
# "none": neither (a count such as num_ret, a property of the qrels such as num_rel); such a
# measure can be reported and floored (gate --min) but not compared as better or worse.
Direction = Literal["higher", "lower", "none"]
# What a judged topic the run has no results for scores in compare and gate, which count every
# judged topic: "value" (the default), what the measure computes on the empty ranking (0 for
# most); a number, that value (the measure's worst, where the empty ranking would score best);
# "refuse", nothing can stand for it (a measure undefined on an empty ranking, weighted by what
# the run retrieved): a gate check on it fails and compare refuses, naming the topics.
Unanswered = float | Literal["value", "refuse"]
# trec_eval versions that have a measure (--compat)
VERSIONS = frozenset({"10.0", "9.0.8"})


@dataclass(frozen=True)
class Params:
    """Parsed parameters of one requested measure."""

    values: tuple[Any, ...]  # cutoffs, reals, or (key, value) pairs
    printable: str | None  # the raw text the user gave (None: defaults)


@dataclass(frozen=True)
class Measure:
    name: str
    func: Callable[[EvalTable, Params], Any]
    doc: str
    params: ParamKind = "none"
    default: tuple[Any, ...] = ()
    kind: Kind = "float"
    agg: Agg = "mean"
    per_query: bool = True
    summary: bool = True
    rel_formats: frozenset[str] = frozenset({"qrels"})
    placeholder: Placeholder = "value"
    versions: frozenset[str] = VERSIONS
    citation: str = ""
    # parameter grammar beyond ``params``: a problem with the parsed values (utility's four
    # coefficients), or None when they are fine
    check_params: Callable[[tuple[Any, ...]], str | None] | None = None
    needs_subtopics: bool = False  # computed from --subtopics judgements (diversity measures)
    direction: Direction = "higher"
    unanswered: Unanswered = "value"

    def placeholder_slot(self, label: str) -> bool:
        """Whether a ``-c`` placeholder topic's value in slot ``label`` is overridden."""
        return self.placeholder == "zero" or (self.placeholder == "zero_named" and label == self.name)

    def labels(self, p: Params) -> list[str]:
        if self.params == "long_cutoffs":
            return [f"{self.name}_{c}" for c in p.values]
        if self.params == "double_cutoffs":
            return [f"{self.name}_{c:3.2f}" for c in p.values]
        if self.params in ("double_params", "pairs") and p.printable is not None:
            return [f"{self.name}_{p.printable}"]
        return [self.name]


REGISTRY: dict[str, Measure] = {}

NICKNAMES: dict[str, tuple[str, ...]] = {}
# -R format -> the nickname an error suggests for it (the one whose measures it can compute)
FORMAT_NICKNAMES: dict[str, str] = {}


def measure(  # noqa: PLR0913  a declaration's fields, all keyword-only
    name: str,
    *,
    params: ParamKind = "none",
    default: Sequence[Any] = (),
    kind: Kind = "float",
    agg: Agg = "mean",
    per_query: bool = True,
    summary: bool = True,
    rel_formats: Sequence[str] = ("qrels",),
    placeholder: Placeholder = "value",
    versions: Sequence[str] = tuple(VERSIONS),
    citation: str = "",
    check_params: Callable[[tuple[Any, ...]], str | None] | None = None,
    needs_subtopics: bool = False,
    direction: Direction = "higher",
    unanswered: Unanswered = "value",
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``func`` as measure ``name``; its docstring is its documentation."""

    def deco(func: Callable[..., Any]) -> Callable[..., Any]:
        if name in REGISTRY:
            raise RuntimeError(f"measure {name} declared twice")
        doc = " ".join((func.__doc__ or "").split())
        REGISTRY[name] = Measure(
            name=name,
            func=func,
            doc=doc,
            params=params,
            default=tuple(default),
            kind=kind,
            agg=agg,
            per_query=per_query,
            summary=summary,
            rel_formats=frozenset(rel_formats),
            placeholder=placeholder,
            versions=frozenset(versions),
            citation=citation,
            check_params=check_params,
            needs_subtopics=needs_subtopics,
            direction=direction,
            unanswered=unanswered,
        )
        return func

    return deco


def nickname(name: str, members: Sequence[str], *, suggested_for: Sequence[str] = ()) -> None:
    """Declare nickname ``name`` for ``members``; ``suggested_for``: the -R formats whose
    judgements compute its measures, where a measure that needs another format suggests it."""
    NICKNAMES[name] = tuple(members)
    for rel_format in suggested_for:
        FORMAT_NICKNAMES[rel_format] = name


# trec_eval 10.0's measure table: output order. Measures ireval adds come after.
TREC_ORDER = [
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "gm_map",
    "Rprec",
    "bpref",
    "recip_rank",
    "iprec_at_recall",
    "P",
    "relstring",
    "recall",
    "infAP",
    "gm_bpref",
    "Rprec_mult",
    "utility",
    "11pt_avg",
    "binG",
    "G",
    "dcg",
    "ideal_dcg",
    "ndcg",
    "ndcg_rel",
    "Rndcg",
    "ndcg_cut",
    "map_cut",
    "relative_P",
    "success",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "num_nonrel_judged_ret",
    "prefs_num_prefs_poss",
    "prefs_num_prefs_ful",
    "prefs_num_prefs_ful_ret",
    "prefs_simp",
    "prefs_pair",
    "prefs_avgjg",
    "prefs_avgjg_Rnonrel",
    "prefs_simp_ret",
    "prefs_pair_ret",
    "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret",
    "prefs_simp_imp",
    "prefs_pair_imp",
    "prefs_avgjg_imp",
    "map_avgjg",
    "P_avgjg",
    "Rprec_mult_avgjg",
    "yaap",
    "rbp",
    "rbp_resid",
    "unj",
]


def sort_registry(own_families: Sequence[str]) -> None:
    """Put the registry in output order: trec_eval's measures in its table order
    (:data:`TREC_ORDER`), then ireval's own, family module by family module in the order
    ``own_families`` names them, each in declaration order."""
    trec = {name: i for i, name in enumerate(TREC_ORDER)}
    families = {mod: i for i, mod in enumerate(own_families)}
    declared = {name: i for i, name in enumerate(REGISTRY)}

    def key(name: str) -> tuple[int, int, int]:
        if name in trec:
            return (0, trec[name], 0)
        mod = REGISTRY[name].func.__module__
        if mod not in families:
            raise RuntimeError(f"measure {name}: its module {mod} has no place in the output order")
        return (1, families[mod], declared[name])

    ordered = sorted(REGISTRY, key=key)
    items = [(name, REGISTRY[name]) for name in ordered]
    REGISTRY.clear()
    REGISTRY.update(items)


def values_2d(out: Any, nq: int) -> np.ndarray | list[list[str]]:
    """Normalise a measure function's return value to (labels x topics)."""
    import numpy as np

    if isinstance(out, list) and out and isinstance(out[0], list):
        return out  # strings
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(1, nq)
    return arr
