"""Every measure family, the nicknames and the output order.

Importing this module registers every measure and every friendly spelling (each family
module declares its measures and their spellings); :func:`load` returns the registry in
output order. The order does not depend on the order of the imports below: trec_eval's
measures follow its measure table (``registry.TREC_ORDER``) and ireval's own follow
:data:`FAMILY_MODULES`, family module by family module, each in declaration order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from . import ap, compat, counts, cwl, diversity, extra, gain, graded, jg, peers, precision, prefs, sets
from .registry import REGISTRY, TREC_ORDER, Measure, nickname
from .spellings import FAMILIES, LISTING_ORDER

# the families of trec_eval's measures (registry.TREC_ORDER), and of ireval's own
TREC_FAMILIES = (ap, counts, gain, jg, precision, prefs, sets)
OWN_FAMILIES = (graded, extra, diversity, cwl, compat, peers)
# ireval's own measures print after trec_eval's, family module by family module in this
# order (and friendly spellings added since issue 15 list in it too): a measure added to
# any of these modules, trec_eval's included, needs no other change; a module missing here
# cannot declare a measure or a spelling (put_everything_in_order refuses it)
FAMILY_MODULES = (*OWN_FAMILIES, *TREC_FAMILIES)

nickname(
    "official",
    [
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
    ],
)
nickname(
    "set",
    [
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ],
)
nickname(
    "all_trec",
    [
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
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ],
)

# trec_eval's measures.c nicknames for the other judgement formats (-R)
_PREFS = [
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
]
nickname("all_prefs", ["runid", "num_q", *_PREFS], suggested_for=("prefs", "qrels_prefs"))
nickname("prefs", ["runid", "num_q", *_PREFS[:6]])
nickname("qrels_jg", ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"], suggested_for=("qrels_jg",))


def put_everything_in_order() -> None:
    """Put the registry in output order and the spellings in listing order (done on import;
    again after a declaration made later, as a test's)."""
    modules = [m.__name__ for m in FAMILY_MODULES]
    _in_order(REGISTRY, TREC_ORDER, lambda m: m.func.__module__, modules, "measure", "output order")
    _in_order(FAMILIES, LISTING_ORDER, lambda f: f.module, modules, "spelling", "listing order")


def _in_order(
    table: dict[str, Any], first: Sequence[str], module_of: Callable[[Any], str], modules: Sequence[str], *what: str
) -> None:
    """The one ordering rule, for the measures (output order) and the spellings (listing
    order): the names ``first`` lists (trec_eval's measure table; the spellings as listed
    before issue 15) in that order, then the others family module by family module in the
    order of ``modules``, each in declaration order."""
    listed = {name: i for i, name in enumerate(first)}
    place = {mod: i for i, mod in enumerate(modules)}
    declared = {name: i for i, name in enumerate(table)}

    def key(name: str) -> tuple[int, int, int]:
        if name in listed:
            return (0, listed[name], 0)
        mod = module_of(table[name])
        if mod not in place:
            raise RuntimeError(f"{what[0]} {name}: its module {mod} has no place in the {what[1]}")
        return (1, place[mod], declared[name])

    items = [(name, table[name]) for name in sorted(table, key=key)]
    table.clear()
    table.update(items)


put_everything_in_order()


def load() -> dict[str, Measure]:
    """The registry, every measure declared, in output order."""
    return REGISTRY
