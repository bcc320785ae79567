"""Friendly measure names: ir_measures' and ranx's spellings, and ireval's own.

A spec that is not a trec_eval name, nickname or output label is parsed here:

* ir_measures: ``Name[(key=value,...)][@cutoff]`` -- ``nDCG@10``, ``P(rel=2)@5``, ``AP``,
  ``RR@10``, ``R@100``, ``Judged@10``, ``ERR@20``, ``RBP(p=0.8)``,
  ``nDCG(dcg=exp-log2)@10``, ``alpha_nDCG@20``;
* ranx: ``name[@k][-lN]`` -- ``ndcg@10``, ``map@100``, ``mrr@10``, ``ndcg_burges@10``,
  ``map@100-l2``, ``rbp.95``;
* ireval: ``pFound[(p_break=..,gmax=..)][@k]``, ``AUC``, ``GAUC[(weight=uniform|positives)]``,
  ``CG@k``, ``R_cap@k``, ``F[(beta=b)]@k``;
* TF-Ranking (its ``tfr.keras.metrics`` class names): ``PrecisionMetric(topn=k)`` or
  ``PrecisionMetric@k``, ``BPrefMetric(use_trec_version=False)``, ``ARPMetric``, ``OPAMetric``,
  ``PrecisionIAMetric@k``, ``AlphaDCGMetric(alpha=0.5)@k``;
* Elasticsearch (``_rank_eval``'s PrecisionAtK): ``PrecisionAtK(k=10,ignore_unlabeled=true)``.

Each spelling maps to one canonical (registered) measure plus parameters; where the
library defines the measure differently from trec_eval, the spelling decides: an
ir_measures spelling gives ir_measures' number and a ranx spelling ranx's. The
output label is the spelling as typed. ``rel=N`` (ir_measures) and ``-lN`` (ranx)
override -l for that measure only.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import MeasureParamError

BIG = 2**62  # "no cutoff" for measures whose definition clips k to the ranking


@dataclass(frozen=True)
class Target:
    """What a friendly spelling means."""

    root: str  # canonical registered measure
    values: tuple[Any, ...] = ()  # its trec_eval parameters
    opts: tuple[tuple[str, Any], ...] = ()  # options the measure reads (definition choices)
    view: tuple[str, int] | None = None  # ("level"|"binary"|"drop"|"judged"|"top", n): table seen by the measure
    views: tuple[tuple[str, int], ...] = ()  # further views, applied after ``view``


@dataclass(frozen=True)
class Family:
    """One friendly name: its style, the arguments it takes and what it maps to."""

    name: str
    style: str  # ir_measures | ranx | ireval
    build: Callable[[dict[str, Any], str | None, str], Target]
    definition: str  # one line: what this spelling computes (shown by 'ireval measures NAME')
    roots: tuple[str, ...]  # canonical measures it can map to
    args: tuple[str, ...] = ()  # keyword arguments accepted (ir_measures/ireval style)
    cutoff: str = "optional"  # optional | required | none
    synonyms: tuple[str, ...] = field(default=())


# ---- argument helpers ------------------------------------------------------------


def _int_cutoff(at: str | None, spec: str) -> int | None:
    if at is None:
        return None
    if not re.fullmatch(r"[0-9]+", at) or int(at) <= 0:
        raise MeasureParamError(f"{spec}: cutoff '{at}' is not a positive integer")
    return int(at)


def _rel_view(args: dict[str, Any], spec: str, extra: tuple[tuple[str, int], ...] = ()) -> dict[str, Any]:
    views: list[tuple[str, int]] = []
    if "rel" in args:
        rel = args["rel"]
        if not isinstance(rel, int) or isinstance(rel, bool):
            raise MeasureParamError(f"{spec}: rel={rel!r} is not an integer")
        views.append(("level", rel))
    if args.get("judged_only") is True:
        views.append(("judged", 0))
    views.extend(extra)
    if not views:
        return {}
    return {"view": views[0], "views": tuple(views[1:])}


def _simple(root: str, *, cut_root: str | None = None, param: str = "cutoff", rel: bool = True) -> Callable:
    """A measure with an optional/required cutoff that becomes a trec_eval cutoff."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = _int_cutoff(at, spec)
        view = _rel_view(args, spec) if rel else {}
        if k is None:
            return Target(root, (), **view)
        return Target(cut_root or root, (k,), **view)

    return build


# ---- ir_measures ----------------------------------------------------------------


def _gains_map(value: Any, spec: str) -> tuple[tuple[int, int], ...]:
    """ir_measures' gains={label: gain, ...}: non-negative integers (pytrec_eval's qrels are ints)."""
    if not isinstance(value, dict) or not value:
        raise MeasureParamError(f"{spec}: gains must be a mapping of labels to gains, e.g. gains={{0:1,1:4}}")
    for k, v in value.items():
        for x in (k, v):
            if not isinstance(x, int) or isinstance(x, bool) or x < 0:
                raise MeasureParamError(f"{spec}: gains {k!r}:{v!r}: labels and gains must be non-negative integers")
    return tuple(sorted(value.items()))


def _im_ndcg(args: dict[str, Any], at: str | None, spec: str) -> Target:
    dcg = args.get("dcg", "log2")
    k = _int_cutoff(at, spec)
    view = _rel_view({"judged_only": args.get("judged_only")}, spec)
    if "gains" in args:
        # ir_measures relabels the qrels (label -> gains.get(label, label)) before pytrec_eval's ndcg
        if dcg != "log2":
            raise MeasureParamError(f"{spec}: gains apply to dcg=log2 only (ir_measures has no exp-log2 with gains)")
        gview = ("gains", _gains_map(args["gains"], spec))
        views = [gview] + ([view["view"], *list(view["views"])] if view else [])
        view = {"view": views[0], "views": tuple(views[1:])}
    if dcg == "log2":
        return Target("ndcg", (), **view) if k is None else Target("ndcg_cut", (k,), **view)
    if dcg == "exp-log2":
        return Target("ndcg_exp", (), **view) if k is None else Target("ndcg_exp_cut", (k,), **view)
    raise MeasureParamError(f"{spec}: dcg={dcg!r} is not one of 'log2', 'exp-log2'")


def _im_judged(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    return Target("judged", (k or BIG,), (("judged", "in_qrels"),))


def _im_err(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    if k is None:
        return Target("err", (("gmax", 4.0),))
    return Target("err_cut", (k,), (("gmax", 4),))


def _im_rbp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    p = float(args.get("p", 0.8))
    k = _int_cutoff(at, spec)
    top = (("top", k),) if k is not None else ()
    if "rel" in args:
        rel = args["rel"]
        if not isinstance(rel, int) or isinstance(rel, bool):
            raise MeasureParamError(f"{spec}: rel={rel!r} is not an integer")
        views = (("binary", rel), *top)
    else:
        views = top
    return Target("rbp", (("p", p),), view=views[0] if views else None, views=views[1:])


def _im_inst(args: dict[str, Any], at: str | None, spec: str) -> Target:
    pairs = [("T", float(args.get("T", 1.0))), ("min_rel", float(args.get("min_rel", 0)))]
    if "max_rel" in args:
        pairs.append(("max_rel", float(args["max_rel"])))
    return Target("inst", tuple(pairs))


def _cwl_opts(args: dict[str, Any], spec: str, *names: str) -> tuple[tuple[str, float], ...]:
    out = []
    for key in names:
        if key in args:
            v = args[key]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise MeasureParamError(f"{spec}: {key}={v!r} is not a number")
            out.append((key, float(v)))
    return tuple(out)


def _im_cwl_cut(root: str, *names: str) -> Callable:
    """cwl_eval's measures with a required cutoff: BPM, SDCG, NERR8, NERR9."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        if args.get("dcg", "log2") != "log2":
            raise MeasureParamError(f"{spec}: dcg={args['dcg']!r} is not 'log2' (the only SDCG form)")
        k = _int_cutoff(at, spec)
        return Target(root, (k,), _cwl_opts(args, spec, *names, "min_rel", "max_rel"))

    return build


def _im_cwl(root: str, *names: str) -> Callable:
    """cwl_eval's measures without a cutoff (depth 1000): INSQ, NERR10, NERR11."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, _cwl_opts(args, spec, *names, "min_rel", "max_rel"))

    return build


def _im_diversity(root: str) -> Callable:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = _int_cutoff(at, spec)
        if k is None:
            raise MeasureParamError(f"{spec}: a cutoff is required (e.g. {spec}@20)")
        opts = (("alpha", float(args["alpha"])),) if "alpha" in args else ()
        return Target(root, (k,), opts, **_rel_view(args, spec))

    return build


def _im_nrbp(root: str) -> Callable:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, _cwl_opts(args, spec, "alpha", "beta"), **_rel_view(args, spec))

    return build


def _im_ap_ia(args: dict[str, Any], at: str | None, spec: str) -> Target:
    return Target("map_ia", (), **_rel_view(args, spec))


def _im_compat(args: dict[str, Any], at: str | None, spec: str) -> Target:
    pairs = list(_cwl_opts(args, spec, "p"))
    if "normalize" in args:
        norm = args["normalize"]
        if not isinstance(norm, bool):
            raise MeasureParamError(f"{spec}: normalize={norm!r} is not True or False")
        pairs.append(("normalize", float(norm)))
    return Target("compat", tuple(pairs))


def _im_accuracy(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    opts: tuple[tuple[str, Any], ...] = (("retrieved_only", True),)
    if k is not None:
        opts += (("cutoff", k),)
    return Target("auc", (), opts, **_rel_view(args, spec))


def _set_view(args: dict[str, Any], at: str | None, spec: str) -> dict[str, Any]:
    """The set measures' views: ``@k`` first evaluates the top k only (as -M k), then rel/judged_only."""
    k = _int_cutoff(at, spec)
    rest = _rel_view(args, spec)
    views = ([("top", k)] if k is not None else []) + ([rest["view"], *rest["views"]] if rest else [])
    return {"view": views[0], "views": tuple(views[1:])} if views else {}


def _im_set(root: str) -> Callable:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        return Target(root, (), **_set_view(args, at, spec))

    return build


def _im_setp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    root = "set_relative_P" if args.get("relative") is True else "set_P"
    return Target(root, (), **_set_view({k: v for k, v in args.items() if k != "relative"}, at, spec))


def _im_setf(args: dict[str, Any], at: str | None, spec: str) -> Target:
    beta = float(args.get("beta", 1.0))
    return Target("set_F", (beta,), **_set_view({k: v for k, v in args.items() if k != "beta"}, at, spec))


def _im_iprec(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if at is None:
        raise MeasureParamError(f"{spec}: a recall level is required (e.g. IPrec@0.5)")
    try:
        x = float(at)
    except ValueError:
        raise MeasureParamError(f"{spec}: recall level '{at}' is not a number") from None
    # pytrec_eval embeds trec_eval 9.0.8, whose K for recall x is trunc(x*R + 0.9)
    return Target("iprec_at_recall", (x,), **_rel_view(args, spec, (("908", 0),)))


def _im_numret(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if "rel" in args:
        return Target("num_rel_ret", (), **_rel_view(args, spec))
    return Target("num_ret")


# ---- ireval's own ----------------------------------------------------------------


def _ir_pfound(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    opts = tuple((key, float(args[key])) for key in ("p_break", "gmax") if key in args)
    if k is None:
        return Target("pfound", opts)
    return Target("pfound_cut", (k,), opts)


def _ir_gauc(args: dict[str, Any], at: str | None, spec: str) -> Target:
    weight = args.get("weight", "judged")
    if weight not in ("judged", "uniform", "positives"):
        raise MeasureParamError(f"{spec}: weight={weight!r} is not one of 'judged', 'uniform', 'positives'")
    view = _rel_view({k: v for k, v in args.items() if k == "rel"}, spec)
    if weight == "positives":  # RecBole's GAUC
        return Target("gauc_pos", (), **view)
    return Target("gauc", (), (("weight", weight),), **view)


def _ir_f(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    beta = float(args.get("beta", 1.0))
    view = _rel_view({k2: v for k2, v in args.items() if k2 == "rel"}, spec)
    return Target("F", (k,), (("beta", beta),), **view)


# ---- TF-Ranking and Elasticsearch -------------------------------------------------


def _bool_arg(args: dict[str, Any], key: str, default: bool, spec: str) -> bool:
    v = args.get(key, default)
    if not isinstance(v, bool):
        raise MeasureParamError(f"{spec}: {key}={v!r} is not true or false")
    return v


def _positive_arg(args: dict[str, Any], key: str, spec: str) -> int | None:
    v = args.get(key)
    if v is not None and (not isinstance(v, int) or isinstance(v, bool) or v <= 0):
        raise MeasureParamError(f"{spec}: {key}={v!r} is not a positive integer")
    return v


def _tfr_cut(root: str) -> Callable:
    """TF-Ranking's topn, given as topn=k or @k; none: the whole list."""

    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = _int_cutoff(at, spec)
        topn = _positive_arg(args, "topn", spec)
        if k is not None and topn is not None and k != topn:
            raise MeasureParamError(f"{spec}: topn={topn} and @{k} disagree")
        opts: tuple[tuple[str, Any], ...] = ()
        if "alpha" in args:
            a = args["alpha"]
            if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 <= a <= 1:
                raise MeasureParamError(f"{spec}: alpha={a!r} is not a number between 0 and 1")
            opts = (("alpha", float(a)),)
        return Target(root, (k or topn or BIG,), opts)

    return build


def _tfr_bpref(args: dict[str, Any], at: str | None, spec: str) -> Target:
    return Target("bpref" if _bool_arg(args, "use_trec_version", True, spec) else "bpref_R")


def _es_precision(args: dict[str, Any], at: str | None, spec: str) -> Target:
    k = _int_cutoff(at, spec)
    kk = _positive_arg(args, "k", spec)
    if k is not None and kk is not None and k != kk:
        raise MeasureParamError(f"{spec}: k={kk} and @{k} disagree")
    opts = (("ignore_unlabeled", True),) if _bool_arg(args, "ignore_unlabeled", False, spec) else ()
    level = args.get("relevant_rating_threshold")
    view = _rel_view({"rel": level}, spec) if level is not None else {}
    return Target("P_ret", (k or kk or 10,), opts, **view)


# ---- ranx -------------------------------------------------------------------------


def _ranx(root: str, cut_root: str | None, *, big: bool = False) -> Callable:
    def build(args: dict[str, Any], at: str | None, spec: str) -> Target:
        k = _int_cutoff(at, spec)
        view: dict[str, Any] = {"view": ("drop", args["level"])} if "level" in args else {}
        if k is None:
            return Target(cut_root or root, (BIG,), **view) if big else Target(root, (), **view)
        return Target(cut_root or root, (k,), **view)

    return build


def _ranx_rbp(args: dict[str, Any], at: str | None, spec: str) -> Target:
    if at is None or not re.fullmatch(r"[0-9]+", at):
        raise MeasureParamError(f"{spec}: ranx's rbp needs its persistence as digits, e.g. rbp.95 (p = 0.95)")
    view: dict[str, Any] = {"view": ("drop", args["level"])} if "level" in args else {}
    return Target("rbp_label", (("p", float(f"0.{at}")),), **view)


IM_DIFF = "ir_measures' definition"

FAMILIES: dict[str, Family] = {}


def _add(
    *names: str,
    style: str,
    build: Callable,
    definition: str,
    roots: tuple[str, ...],
    args: tuple[str, ...] = (),
    cutoff: str = "optional",
) -> None:
    for n in names:
        FAMILIES[n] = Family(n, style, build, definition, roots, args, cutoff, tuple(x for x in names if x != n))


_REL = ("rel", "judged_only")
# ir_measures
_add(
    "P",
    "Precision",
    style="ir_measures",
    build=_simple("P", cut_root="P"),
    roots=("P",),
    args=_REL,
    cutoff="required",
    definition="precision at k (pytrec_eval: trec_eval's P)",
)
_add(
    "R",
    "Recall",
    style="ir_measures",
    build=_simple("recall", cut_root="recall"),
    roots=("recall",),
    args=_REL,
    cutoff="required",
    definition="recall at k: relevant in the top k over R (trec_eval's recall)",
)
_add(
    "AP",
    "MAP",
    style="ir_measures",
    build=_simple("map", cut_root="map_cut"),
    roots=("map", "map_cut"),
    args=_REL,
    definition="average precision; AP@k divides by R (trec_eval's map_cut), not by min(R, k); MAP is ir_measures' "
    "alias of AP (lower-case map is trec_eval's)",
)
_add(
    "RR",
    "MRR",
    style="ir_measures",
    build=_simple("recip_rank", cut_root="recip_rank_cut"),
    roots=("recip_rank", "recip_rank_cut"),
    args=_REL,
    definition="reciprocal rank; RR@k is 0 when the first relevant document is below k (MS MARCO's MRR@10)",
)
_add(
    "nDCG",
    "NDCG",
    style="ir_measures",
    build=_im_ndcg,
    roots=("ndcg", "ndcg_cut", "ndcg_exp", "ndcg_exp_cut"),
    args=("dcg", "gains", "judged_only"),
    definition="nDCG; dcg=log2 (default) is trec_eval's ndcg/ndcg_cut (gain = label), dcg=exp-log2 is gdeval's "
    "(gain 2^label - 1); gains={0:1,1:4} relabels the judgements first (label -> gain, others kept), "
    "as ir_measures does before pytrec_eval's ndcg",
)
_add(
    "Rprec",
    "RPrec",
    style="ir_measures",
    build=_simple("Rprec"),
    roots=("Rprec",),
    args=_REL,
    cutoff="none",
    definition="precision at R (trec_eval's Rprec)",
)
_add(
    "Success",
    style="ir_measures",
    build=_simple("success", cut_root="success"),
    roots=("success",),
    args=_REL,
    cutoff="required",
    definition="1 if a relevant document is in the top k (trec_eval's success)",
)
_add(
    "Judged",
    style="ir_measures",
    build=_im_judged,
    roots=("judged",),
    definition="judged at k as ir_measures counts it: documents in the top k that have a qrels line (any label, "
    "negative ones too) over min(k, num_ret); ireval's judged.k counts labels >= 0 over k",
)
_add(
    "ERR",
    style="ir_measures",
    build=_im_err,
    roots=("err", "err_cut"),
    definition="ERR as gdeval computes it for ir_measures: g_max fixed at 4, R = (2^label - 1) / 16; "
    "ireval's err_cut.k takes g_max from the qrels",
)
_add(
    "RBP",
    style="ir_measures",
    build=_im_rbp,
    roots=("rbp",),
    args=("p", "rel"),
    definition="rank-biased precision with p = 0.8 by default (trec_eval's rbp defaults to 0.9); with rel=N the "
    "gains are binary at level N (cwl_eval), without it graded as trec_eval's rbp",
)
_add(
    "INST",
    style="ir_measures",
    build=_im_inst,
    roots=("inst",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="INST as cwl_eval computes it: gain (label - min_rel) / (max_rel - min_rel), depth 1000",
)
_CWL_GAIN = (
    "cwl_eval's gain (label - min_rel) / (max_rel - min_rel) clipped to [0, 1], min_rel=0, max_rel "
    "the highest label unless given; ranking cut and padded to depth 1000"
)
_add(
    "BPM",
    style="ir_measures",
    build=_im_cwl_cut("bpm_cut", "T"),
    roots=("bpm_cut",),
    args=("T", "min_rel", "max_rel"),
    cutoff="required",
    definition="static Bejeweled Player Model as cwl_eval computes it: stop at the first rank "
    "whose gain so far reaches T (1) or at k; the mean gain down to there; " + _CWL_GAIN,
)
_add(
    "SDCG",
    style="ir_measures",
    build=_im_cwl_cut("sdcg_cut"),
    roots=("sdcg_cut",),
    args=("dcg", "min_rel", "max_rel"),
    cutoff="required",
    definition="scaled DCG at k as cwl_eval computes it: DCG@k over sum_{i<=k} 1/log2(i+1) "
    "(nDCG as if k top-grade documents existed); " + _CWL_GAIN,
)
_add(
    "INSQ",
    style="ir_measures",
    build=_im_cwl("insq", "T"),
    roots=("insq",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="INSQ as cwl_eval computes it: weights (2T / (i - 1 + 2T))^2, T = 1; " + _CWL_GAIN,
)
_add(
    "NERR8",
    style="ir_measures",
    build=_im_cwl_cut("nerr8_cut"),
    roots=("nerr8_cut",),
    args=("min_rel", "max_rel"),
    cutoff="required",
    definition="NERR eq. 8 (Azzopardi et al. 2021) as cwl_eval computes it: C_i = 1 - g_i truncated at k; " + _CWL_GAIN,
)
_add(
    "NERR9",
    style="ir_measures",
    build=_im_cwl_cut("nerr9_cut"),
    roots=("nerr9_cut",),
    args=("min_rel", "max_rel"),
    cutoff="required",
    definition="NERR eq. 9 as cwl_eval computes it: C_i = i / (i + 1) (1 - g_i) truncated at k; " + _CWL_GAIN,
)
_add(
    "NERR10",
    style="ir_measures",
    build=_im_cwl("nerr10", "p"),
    roots=("nerr10",),
    args=("p", "min_rel", "max_rel"),
    cutoff="none",
    definition="NERR eq. 10 as cwl_eval computes it: C_i = p (1 - g_i), p = 0.9; " + _CWL_GAIN,
)
_add(
    "NERR11",
    style="ir_measures",
    build=_im_cwl("nerr11", "T"),
    roots=("nerr11",),
    args=("T", "min_rel", "max_rel"),
    cutoff="none",
    definition="NERR eq. 11 as cwl_eval computes it: C_i = ((i + 2T - 1) / (i + 2T))^2 (1 - g_i), T = 1; " + _CWL_GAIN,
)
_add(
    "alpha_nDCG",
    "α_nDCG",
    style="ir_measures",
    build=_im_diversity("alpha_ndcg_cut"),
    roots=("alpha_ndcg_cut",),
    args=("alpha", "rel", "judged_only"),
    cutoff="required",
    definition="alpha-nDCG at k over subtopic judgements, as ndeval (pyndeval) computes it; needs --subtopics",
)
_add(
    "ERR_IA",
    style="ir_measures",
    build=_im_diversity("err_ia_cut"),
    roots=("err_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware ERR at k with ndeval's collection-independent normalisation; needs --subtopics",
)
_NDEVAL = "as ndeval (pyndeval) computes it; needs --subtopics"
_add(
    "nERR_IA",
    style="ir_measures",
    build=_im_diversity("nerr_ia_cut"),
    roots=("nerr_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware ERR at k over the same for ndeval's greedy ideal ranking (collection-dependent "
    "normalisation), " + _NDEVAL,
)
_add(
    "alpha_DCG",
    "α_DCG",
    style="ir_measures",
    build=_im_diversity("alpha_dcg_cut"),
    roots=("alpha_dcg_cut",),
    args=("alpha", "rel", "judged_only"),
    cutoff="required",
    definition="alpha-DCG at k over S * sum_{i<=k} (1 - alpha)^(i-1) / log2(i + 1) (collection-independent "
    "normalisation), " + _NDEVAL + "; ndeval leaves @1 undivided, ireval divides every k",
)
_add(
    "NRBP",
    style="ir_measures",
    build=_im_nrbp("nrbp"),
    roots=("nrbp",),
    args=("alpha", "beta", "rel"),
    cutoff="none",
    definition="novelty- and rank-biased precision, (1 - (1 - alpha) beta) / S * sum of novelty "
    "gain * beta^(i-1), alpha = beta = 0.5, " + _NDEVAL,
)
_add(
    "nNRBP",
    style="ir_measures",
    build=_im_nrbp("nnrbp"),
    roots=("nnrbp",),
    args=("alpha", "beta", "rel"),
    cutoff="none",
    definition="NRBP over the NRBP of ndeval's greedy ideal ranking, " + _NDEVAL,
)
_add(
    "AP_IA",
    "MAP_IA",
    style="ir_measures",
    build=_im_ap_ia,
    roots=("map_ia",),
    args=("rel", "judged_only"),
    cutoff="none",
    definition="intent-aware AP: the mean over the subtopics of each subtopic's AP, " + _NDEVAL,
)
_add(
    "P_IA",
    style="ir_measures",
    build=_im_diversity("p_ia_cut"),
    roots=("p_ia_cut",),
    args=("rel", "judged_only"),
    cutoff="required",
    definition="intent-aware precision at k: relevant (document, subtopic) pairs in the top k over k * S, " + _NDEVAL,
)
_add(
    "StRecall",
    style="ir_measures",
    build=_im_diversity("strec_cut"),
    roots=("strec_cut",),
    args=("rel",),
    cutoff="required",
    definition="subtopic recall at k: subtopics covered by the top k over S, " + _NDEVAL,
)
_add(
    "Compat",
    style="ir_measures",
    build=_im_compat,
    roots=("compat",),
    args=("p", "normalize"),
    cutoff="none",
    definition="compatibility (Clarke et al. 2021) as ir_measures' compat provider computes it: rank-biased overlap "
    "(p = 0.95) with the ideal ranking to depth max(n, K), over the ideal's overlap with itself",
)
_add(
    "Accuracy",
    style="ir_measures",
    build=_im_accuracy,
    roots=("auc",),
    args=("rel",),
    definition="ir_measures' Accuracy: among the retrieved documents (top k) only, the fraction of (relevant, "
    "non-relevant) pairs in the right order, unjudged counting as non-relevant; no value for a topic "
    "without both (ir_measures fails when every retrieved document is relevant)",
)
_SET_AT = " @k evaluates the top k only (as trec_eval's -M k); ir_measures parses SetP@k but no provider computes it"
_add(
    "SetP",
    style="ir_measures",
    build=_im_setp,
    roots=("set_P", "set_relative_P"),
    args=("rel", "relative", "judged_only"),
    definition="precision of the retrieved set (trec_eval's set_P);" + _SET_AT,
)
_add(
    "SetRelP",
    style="ir_measures",
    build=_im_set("set_relative_P"),
    roots=("set_relative_P",),
    args=_REL,
    definition="trec_eval's set_relative_P;" + _SET_AT,
)
_add(
    "SetR",
    style="ir_measures",
    build=_im_set("set_recall"),
    roots=("set_recall",),
    args=("rel",),
    definition="recall of the retrieved set (trec_eval's set_recall);" + _SET_AT,
)
_add(
    "SetF",
    style="ir_measures",
    build=_im_setf,
    roots=("set_F",),
    args=("rel", "beta", "judged_only"),
    definition="F of the retrieved set (trec_eval's set_F; its parameter is beta as given);" + _SET_AT,
)
_add(
    "SetAP",
    style="ir_measures",
    build=_im_set("set_map"),
    roots=("set_map",),
    args=_REL,
    definition="set_P * set_recall (trec_eval's set_map);" + _SET_AT,
)
_add(
    "IPrec",
    style="ir_measures",
    build=_im_iprec,
    roots=("iprec_at_recall",),
    args=_REL,
    cutoff="required",
    definition="interpolated precision at recall level x, IPrec@x, as pytrec_eval (trec_eval 9.0.8) computes "
    "it: the K-th relevant document with K = trunc(x*R + 0.9) (10.0's iprec_at_recall uses lround(x*R))",
)
_add(
    "NumRet",
    style="ir_measures",
    build=_im_numret,
    roots=("num_ret", "num_rel_ret"),
    args=("rel",),
    cutoff="none",
    definition="documents retrieved; NumRet(rel=N): relevant ones retrieved",
)
_add(
    "NumRelRet",
    style="ir_measures",
    build=_simple("num_rel_ret"),
    roots=("num_rel_ret",),
    args=("rel",),
    cutoff="none",
    definition="relevant documents retrieved (trec_eval's num_rel_ret)",
)
_add(
    "NumRel",
    style="ir_measures",
    build=_simple("num_rel"),
    roots=("num_rel",),
    args=("rel",),
    cutoff="none",
    definition="relevant documents judged (trec_eval's num_rel)",
)
_add(
    "NumQ",
    style="ir_measures",
    build=_simple("num_q", rel=False),
    roots=("num_q",),
    cutoff="none",
    definition="topics evaluated",
)
_add(
    "Bpref",
    "BPref",
    style="ir_measures",
    build=_simple("bpref"),
    roots=("bpref",),
    args=("rel",),
    cutoff="none",
    definition="trec_eval's bpref",
)
_add(
    "infAP",
    style="ir_measures",
    build=_simple("infAP"),
    roots=("infAP",),
    args=("rel",),
    cutoff="none",
    definition="trec_eval's infAP",
)
# ireval's own friendly names
_add(
    "pFound",
    style="ireval",
    build=_ir_pfound,
    roots=("pfound", "pfound_cut"),
    args=("p_break", "gmax"),
    definition="pFound (Yandex): p_break 0.15, pRel = (2^label - 1) / 2^g_max, g_max the highest label in the qrels",
)
_add(
    "AUC",
    style="ireval",
    build=_simple("auc"),
    roots=("auc",),
    args=("rel",),
    cutoff="none",
    definition="ranking AUC over (relevant, judged non-relevant) pairs, unretrieved judged documents tied last",
)
_add(
    "GAUC",
    style="ireval",
    build=_ir_gauc,
    roots=("gauc", "gauc_pos"),
    args=("weight", "rel"),
    cutoff="none",
    definition="AUC averaged over topics weighted by judged documents (weight=uniform: plain mean; "
    "weight=positives: by relevant documents, RecBole's GAUC)",
)
_add(
    "CG",
    style="ireval",
    build=_simple("cg_cut", cut_root="cg_cut", rel=False),
    roots=("cg_cut",),
    cutoff="required",
    definition="cumulative gain at k: the sum of the labels of the top k",
)
_add(
    "R_cap",
    style="ireval",
    build=_simple("relative_P", cut_root="relative_P"),
    roots=("relative_P",),
    args=_REL,
    cutoff="required",
    definition="capped recall r / min(R, k) (trec_eval's relative_P)",
)
_add(
    "F",
    style="ireval",
    build=_ir_f,
    roots=("F",),
    args=("beta", "rel"),
    cutoff="required",
    definition="F-beta at k from P@k = r/k and R@k = r/R, F(beta=b)@k (bare F is trec-style: F.5,10,...)",
)
# ranx (lower case; trec_eval's own names -- map, ndcg, dcg, recall, bpref -- keep trec_eval's meaning
# when typed bare, ranx's with @k or -lN)
_RANX = "ranx's definition"
_add(
    "hits",
    style="ranx",
    build=_ranx("num_rel_ret", "num_rel_ret_cut"),
    roots=("num_rel_ret", "num_rel_ret_cut"),
    definition="relevant documents in the top k (all retrieved without @k)",
)
_add(
    "hit_rate",
    style="ranx",
    build=_ranx("success", "success", big=True),
    roots=("success",),
    definition="1 if a relevant document is in the top k (trec_eval's success)",
)
_add(
    "precision",
    style="ranx",
    build=_ranx("set_P", "P"),
    roots=("P", "set_P"),
    definition="precision at k (P); without @k, of the retrieved set (set_P)",
)
_add(
    "recall",
    style="ranx",
    build=_ranx("set_recall", "recall"),
    roots=("recall", "set_recall"),
    definition="recall at k; without @k (and with -lN), of the retrieved set",
)
_add(
    "f1",
    style="ranx",
    build=_ranx("set_F", "F"),
    roots=("F", "set_F"),
    definition="F1 at k from P@k = r/k and R@k = r/R; without @k, of the retrieved set",
)
_add("r-precision", style="ranx", build=_ranx("Rprec", None), roots=("Rprec",), definition="precision at R")
_add(
    "mrr",
    style="ranx",
    build=_ranx("recip_rank", "recip_rank_cut"),
    roots=("recip_rank", "recip_rank_cut"),
    definition="reciprocal rank of the first relevant document in the top k",
)
_add(
    "map",
    style="ranx",
    build=_ranx("map", "map_cut"),
    roots=("map", "map_cut"),
    definition="average precision over the top k, divided by R (trec_eval's map_cut)",
)
_add(
    "dcg",
    style="ranx",
    build=_ranx("dcg", "dcg_cut"),
    roots=("dcg", "dcg_cut"),
    definition="DCG at k, gain = label, discount log2(i + 1)",
)
_add(
    "dcg_burges",
    style="ranx",
    build=_ranx("dcg_exp", "dcg_exp_cut"),
    roots=("dcg_exp", "dcg_exp_cut"),
    definition="DCG at k, gain 2^label - 1",
)
_add(
    "ndcg",
    style="ranx",
    build=_ranx("ndcg", "ndcg_cut"),
    roots=("ndcg", "ndcg_cut"),
    definition="nDCG at k, gain = label (trec_eval's ndcg_cut)",
)
_add(
    "ndcg_burges",
    style="ranx",
    build=_ranx("ndcg_exp", "ndcg_exp_cut"),
    roots=("ndcg_exp", "ndcg_exp_cut"),
    definition="nDCG at k, gain 2^label - 1",
)
_add("bpref", style="ranx", build=_ranx("bpref", None), roots=("bpref",), definition="trec_eval's bpref")
_add(
    "rbp",
    style="ranx",
    build=_ranx_rbp,
    roots=("rbp_label",),
    definition="RBP with persistence 0.NN from rbp.NN and the raw label as gain (no rescaling)",
)
# TF-Ranking (tfr.keras.metrics class names) and Elasticsearch (_rank_eval's PrecisionAtK)
_add(
    "PrecisionMetric",
    style="tf-ranking",
    build=_tfr_cut("P_ret"),
    roots=("P_ret",),
    args=("topn",),
    definition="TF-Ranking's P@k: relevant in the top k over min(k, list length); without topn, over the whole list",
)
_add(
    "BPrefMetric",
    style="tf-ranking",
    build=_tfr_bpref,
    roots=("bpref", "bpref_R"),
    args=("use_trec_version",),
    cutoff="none",
    definition="bpref; use_trec_version=False divides the penalty by R instead of min(R, N) (bpref_R)",
)
_add(
    "ARPMetric",
    style="tf-ranking",
    build=_simple("arp", rel=False),
    roots=("arp",),
    cutoff="none",
    definition="TF-Ranking's average relevance position: sum label*rank / sum label, weighted summary",
)
_add(
    "OPAMetric",
    style="tf-ranking",
    build=_simple("opa", rel=False),
    roots=("opa",),
    cutoff="none",
    definition="TF-Ranking's ordered pair accuracy over pairs of retrieved documents with different labels",
)
_add(
    "PrecisionIAMetric",
    style="tf-ranking",
    build=_tfr_cut("P_IA_ret"),
    roots=("P_IA_ret",),
    args=("topn",),
    definition="TF-Ranking's intent-aware precision: relevant (document, subtopic) pairs in the top k over "
    "S * min(k, list length); needs --subtopics",
)
_add(
    "AlphaDCGMetric",
    style="tf-ranking",
    build=_tfr_cut("alpha_dcg_label_cut"),
    roots=("alpha_dcg_label_cut",),
    args=("topn", "alpha"),
    definition="TF-Ranking's alpha-DCG: not normalised, graded subtopic labels as gains, alpha = 0.5; "
    "needs --subtopics",
)
_add(
    "PrecisionAtK",
    style="elasticsearch",
    build=_es_precision,
    roots=("P_ret",),
    args=("k", "ignore_unlabeled", "relevant_rating_threshold"),
    definition="Elasticsearch's rank-evaluation precision: relevant over retrieved in the top k (k = 10 by "
    "default); ignore_unlabeled=true leaves unjudged documents out of the count",
)

_IM_RE = re.compile(r"^(?P<name>[A-Za-zα_][A-Za-z0-9_α]*)(?:\((?P<args>[^()]*)\))?(?:@(?P<at>[^@()]+))?$")
_RANX_RE = re.compile(r"^(?P<name>[a-z][a-z0-9_\-]*?)(?:[@.](?P<at>[0-9]+))?(?:-l(?P<level>-?[0-9]+))?$")


def _value(text: str, spec: str) -> Any:
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"":
        return t[1:-1]
    if len(t) >= 2 and t[0] == "{" and t[-1] == "}":
        return _dict_value(t, spec)
    if t in ("True", "true"):
        return True
    if t in ("False", "false"):
        return False
    if re.fullmatch(r"[+-]?[0-9]+", t):
        return int(t)
    try:
        return float(t)
    except ValueError:
        pass
    if re.fullmatch(r"[A-Za-z0-9_\-]+", t):
        return t  # a bare word such as exp-log2 or uniform
    raise MeasureParamError(f"{spec}: cannot read the value '{text}'")


def _split_top(text: str, sep: str = ",") -> list[str]:
    """Split at ``sep`` outside braces and quotes (``gains={0:1,1:4},judged_only=True``)."""
    parts: list[str] = []
    cur: list[str] = []
    depth, quote = 0, ""
    for ch in text:
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _dict_value(t: str, spec: str) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    body = t[1:-1].strip()
    if not body:
        return out
    for item in _split_top(body):
        key, colon, val = item.partition(":")
        if not colon or not key.strip():
            raise MeasureParamError(f"{spec}: cannot read the value '{t}'")
        out[_value(key, spec)] = _value(val, spec)
    return out


def _args(text: str | None, spec: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if text is None or not text.strip():
        return out
    for item in _split_top(text):
        key, eq, val = item.partition("=")
        key = key.strip()
        if not eq or not key:
            raise MeasureParamError(f"{spec}: expected key=value inside the parentheses, got '{item.strip()}'")
        out[key] = _value(val, spec)
    return out


@dataclass(frozen=True)
class Friendly:
    """A parsed friendly spec."""

    spec: str
    family: Family
    target: Target


def parse(spec: str) -> Friendly | None:
    """The meaning of a friendly spelling, None if it is not one; errors for known names misused."""
    m = _IM_RE.match(spec)
    if m and m.group("name") in FAMILIES and FAMILIES[m.group("name")].style != "ranx":
        fam = FAMILIES[m.group("name")]
        args = _args(m.group("args"), spec)
        unknown = [k for k in args if k not in fam.args]
        if unknown:
            known = ", ".join(fam.args) if fam.args else "none"
            raise MeasureParamError(f"{spec}: {fam.name} takes no parameter '{unknown[0]}' (it takes: {known})")
        at = m.group("at")
        if fam.cutoff == "required" and at is None:
            raise MeasureParamError(f"{spec}: {fam.name} needs a cutoff, e.g. {fam.name}@10")
        if fam.cutoff == "none" and at is not None:
            raise MeasureParamError(f"{spec}: {fam.name} takes no cutoff")
        return Friendly(spec, fam, fam.build(args, at, spec))
    r = _RANX_RE.match(spec)
    if r and r.group("name") in FAMILIES and FAMILIES[r.group("name")].style == "ranx":
        fam = FAMILIES[r.group("name")]
        ranx_args: dict[str, Any] = {}
        if r.group("level") is not None:
            ranx_args["level"] = int(r.group("level"))
        at = r.group("at")
        if fam.name != "rbp" and at is not None and spec[len(fam.name)] == ".":
            return None  # name.N is trec_eval's syntax, not ranx's
        return Friendly(spec, fam, fam.build(ranx_args, at, spec))
    return None


def wrap(meas: Any, target: Target) -> Any:
    """The measure as the friendly spelling sees it: on a table view when it needs one."""
    views = ([target.view] if target.view else []) + list(target.views)
    if meas.placeholder == "zero_named" and not target.values:
        # the friendly label is not the measure's name, but it is the unparameterised slot
        meas = dataclasses.replace(meas, placeholder="zero")
    if not views:
        return meas
    from . import _util

    makers: dict[str, Callable[[Any, Any], Any]] = {
        "level": _util.at_level,
        "binary": _util.binary,
        "drop": _util.drop_below,
        "judged": _util.judged_only,
        "top": _util.top_k,
        "908": _util.as_908,
        "gains": _relabel,
    }
    func = meas.func

    def on_view(t: Any, p: Any) -> Any:
        for kind, n in views:
            t = makers[kind](t, n)
        return func(t, p)

    return dataclasses.replace(meas, func=on_view)


def _relabel(t: Any, mapping: tuple[tuple[int, int], ...]) -> Any:
    """The table with judged labels replaced by ``mapping`` (label -> gain; others kept), as
    ir_measures relabels the qrels for nDCG(gains=...)."""
    import numpy as np

    key = ("view_gains", mapping)
    if key not in t._cache:
        src = np.array([k for k, _ in mapping], dtype=np.int64)
        dst = np.array([v for _, v in mapping], dtype=np.int64)

        def relabel(a: np.ndarray) -> np.ndarray:
            at = np.minimum(np.searchsorted(src, a), len(src) - 1)
            hit = (a >= 0) & (src[at] == a)
            return np.where(hit, dst[at], a).astype(a.dtype)

        t._cache[key] = dataclasses.replace(t, label=relabel(t.label), qrel=relabel(t.qrel), max_label=None, _cache={})
    return t._cache[key]


def describe(spec: str) -> str | None:
    """'ireval measures NAME' for a friendly spelling: which definition applies, and aliases."""
    base = spec
    if spec in FAMILIES:
        fam = FAMILIES[spec]
    else:
        try:
            f = parse(spec)
        except MeasureParamError:
            f = None
        if f is None:
            return None
        fam = f.family
        base = f"{spec} -> {f.target.root}"
        if f.target.values:
            shown = (
                ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in f.target.values)
                if isinstance(f.target.values[0], tuple)
                else ",".join(str(v) if v != BIG else "all" for v in f.target.values)
            )
            base += f".{shown}"
    style = {
        "ir_measures": "ir_measures' syntax",
        "ranx": "ranx's syntax",
        "ireval": "ireval's friendly syntax",
        "tf-ranking": "TF-Ranking's spelling",
        "elasticsearch": "Elasticsearch's spelling",
    }
    lines = [f"{base}: {style[fam.style]}", f"  definition: {fam.definition}"]
    lines.append(f"  maps to: {', '.join(fam.roots)}")
    if fam.args:
        lines.append(f"  parameters: {', '.join(fam.args)}")
    lines.append(
        {"optional": "  cutoff: @k optional", "required": "  cutoff: @k required", "none": "  cutoff: none"}[fam.cutoff]
        if fam.style != "ranx"
        else "  cutoff: @k optional; -lN sets the relevance level"
    )
    if fam.synonyms:
        lines.append(f"  also spelled: {', '.join(fam.synonyms)}")
    return "\n".join(lines)


def aliases_of(root: str) -> list[str]:
    """Friendly spellings that can map to the canonical measure ``root``."""
    out = []
    for name, fam in FAMILIES.items():
        if root in fam.roots:
            out.append(f"{name} ({fam.style})")
    return out
