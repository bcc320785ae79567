"""Every measure family, the nicknames and the output order.

Importing this module registers every measure; :func:`load` returns the registry in
output order. The order does not depend on the order of the imports below: trec_eval's
measures follow its measure table (``registry.TREC_ORDER``) and ireval's own follow
:data:`OWN_FAMILIES`.
"""

from __future__ import annotations

from . import ap, compat, counts, cwl, diversity, extra, gain, graded, jg, peers, precision, prefs, sets
from .registry import REGISTRY, Measure, nickname, sort_registry

# trec_eval's measures (registry.TREC_ORDER), whichever family declares them
TREC_FAMILIES = (ap, counts, gain, jg, precision, prefs, sets)
# ireval's own measures print after trec_eval's, family by family in this order; a family
# missing here cannot declare a measure of its own (sort_registry refuses it)
OWN_FAMILIES = (graded, extra, diversity, cwl, compat, peers)

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
nickname("all_prefs", ["runid", "num_q", *_PREFS])
nickname("prefs", ["runid", "num_q", *_PREFS[:6]])
nickname("qrels_jg", ["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"])

sort_registry([m.__name__ for m in OWN_FAMILIES])


def load() -> dict[str, Measure]:
    """The registry, every measure declared, in output order."""
    return REGISTRY
