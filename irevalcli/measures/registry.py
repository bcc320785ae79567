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
from dataclasses import dataclass, field
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
Agg = Literal["mean", "sum", "gmean", "nanmean", "wmean", "num_rel", "num_q", "runid", "none"]


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
    # value slots zeroed for a placeholder (-c) topic, by exact label
    zero_when_missing: bool = False
    citation: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

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


def measure(
    name: str,
    *,
    params: ParamKind = "none",
    default: Sequence[Any] = (),
    kind: Kind = "float",
    agg: Agg = "mean",
    per_query: bool = True,
    summary: bool = True,
    rel_formats: Sequence[str] = ("qrels",),
    zero_when_missing: bool = False,
    citation: str = "",
    **extra: Any,
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
            zero_when_missing=zero_when_missing,
            citation=citation,
            extra=dict(extra),
        )
        return func

    return deco


def nickname(name: str, members: Sequence[str]) -> None:
    NICKNAMES[name] = tuple(members)


# trec_eval 10.0's measure table: output order. Measures ireval adds come after.
TREC_ORDER = (
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P "
    "relstring recall infAP gm_bpref Rprec_mult utility 11pt_avg binG G dcg ideal_dcg ndcg ndcg_rel "
    "Rndcg ndcg_cut map_cut relative_P success set_P set_relative_P set_recall set_map set_F "
    "num_nonrel_judged_ret prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret "
    "prefs_simp prefs_pair prefs_avgjg prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret "
    "prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp prefs_pair_imp prefs_avgjg_imp "
    "map_avgjg P_avgjg Rprec_mult_avgjg yaap rbp rbp_resid unj"
).split()

_loaded = False


def load() -> dict[str, Measure]:
    """Import the measure modules (which register themselves) once, in output order."""
    global _loaded
    if not _loaded:
        from .. import measures  # noqa: F401

        rank = {name: i for i, name in enumerate(TREC_ORDER)}
        ordered = sorted(REGISTRY.items(), key=lambda kv: rank.get(kv[0], len(rank)))
        REGISTRY.clear()
        REGISTRY.update(ordered)
        _loaded = True
    return REGISTRY


def values_2d(out: Any, nq: int) -> np.ndarray | list[list[str]]:
    """Normalise a measure function's return value to (labels x topics)."""
    import numpy as np

    if isinstance(out, list) and out and isinstance(out[0], list):
        return out  # strings
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(1, nq)
    return arr
