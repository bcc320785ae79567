"""Measure declarations, one module per family. Importing registers them."""

# Import order is output order for ireval's own measures (trec_eval's follow its table
# whatever the order): graded, then extra, then diversity. Do not let a sorter reorder it.
# ruff: noqa: I001
from . import ap, counts, gain, jg, precision, prefs, sets  # noqa: F401
from . import graded, extra, diversity  # noqa: F401  (ireval's own measures, after trec_eval's)
from . import cwl, compat  # noqa: F401  (cwl_eval's C/W/L measures and Compat, after them)
from ..registry import nickname

nickname(
    "official",
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P".split(),
)
nickname(
    "set",
    "runid num_q num_ret num_rel num_rel_ret utility set_P set_recall set_relative_P set_map set_F".split(),
)
nickname(
    "all_trec",
    (
        "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P "
        "relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult "
        "success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F "
        "num_nonrel_judged_ret"
    ).split(),
)

# trec_eval's measures.c nicknames for the other judgement formats (-R)
_PREFS = (
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg "
    "prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret prefs_avgjg_Rnonrel_ret "
    "prefs_simp_imp prefs_pair_imp prefs_avgjg_imp"
).split()
nickname("all_prefs", ["runid", "num_q", *_PREFS])
nickname("prefs", ["runid", "num_q", *_PREFS[:6]])
nickname("qrels_jg", "runid num_q map_avgjg P_avgjg Rprec_mult_avgjg".split())
