"""Measure declarations, one module per family. Importing registers them."""

from . import ap, counts, gain, precision, sets  # noqa: F401
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
