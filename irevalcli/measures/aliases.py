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

The spellings themselves are declared with their measures, in the family modules
(:func:`.spellings.spelling`); this module is the grammar that reads them, imported
when a ``-m`` argument is not a trec_eval name. :data:`FAMILIES` holds every declared
spelling in listing order.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..errors import MeasureParamError
from . import catalog  # noqa: F401  (importing it declares every measure and spelling)
from .spellings import BIG, FAMILIES, LONG_MAX, Family, Target

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
        if abs(int(t)) > LONG_MAX:  # no cutoff, level or count is beyond trec_eval's long
            raise MeasureParamError(f"{spec}: the value '{t}' is out of range")
        return int(t)
    try:
        number = float(t)
    except ValueError:
        pass
    else:
        if math.isinf(number) and not re.fullmatch(r"[+-]?inf(inity)?", t, re.IGNORECASE):
            raise MeasureParamError(f"{spec}: the value '{t}' is out of range")  # 1e400
        return number
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
            if abs(ranx_args["level"]) > LONG_MAX:
                raise MeasureParamError(f"{spec}: level '{r.group('level')}' is out of range")
        at = r.group("at")
        if not fam.dotted and at is not None and spec[len(fam.name)] == ".":
            return None  # name.N is trec_eval's syntax, not ranx's (rbp.95 is)
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

    def view() -> Any:
        src = np.array([k for k, _ in mapping], dtype=np.int64)
        dst = np.array([v for _, v in mapping], dtype=np.int64)

        def relabel(a: np.ndarray) -> np.ndarray:
            at = np.minimum(np.searchsorted(src, a), len(src) - 1)
            hit = (a >= 0) & (src[at] == a)
            return np.where(hit, dst[at], a).astype(a.dtype)

        return t.derive(label=relabel(t.label), qrel=relabel(t.qrel), max_label=None)

    return t.memo(("view_gains", mapping), view)


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
