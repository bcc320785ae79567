"""The measure registry: one declaration per measure, in trec_eval's table order.

A measure is a pure function ``f(table, params) -> values`` where ``values`` has
one row per output label and one column per evaluated topic. The declaration
says everything else: how parameters are written and parsed, how labels are
formed, how the summary is aggregated, and how a value is printed. Output
order is registry order (trec_eval prints in its measure-table order, not in
command-line order), then parameter order.

The vocabulary of a declaration is objects: a :class:`ParamShape` (``NO_PARAMS``,
``LONG_CUTOFFS``, ``DOUBLE_CUTOFFS``, ``DOUBLE_PARAMS``, ``PAIRS``) reads, labels and
describes a measure's parameters; a :class:`Summary` (``MEAN``, ``SUM``, ``GEO_MEAN``, ...)
aggregates its per-topic values (and what a judged topic the run lacks adds under ``-c``)
and describes itself. Nothing elsewhere interprets their names: a new shape or summary
kind is one class and one constant here.
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from ..errors import MeasureParamError
from ..records import FrozenRecord

if TYPE_CHECKING:
    import numpy as np

    from ..core.table import EvalTable

Kind = Literal["float", "int", "str"]
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


class Params(FrozenRecord):
    """Parsed parameters of one requested measure."""

    __slots__ = ("printable", "values")

    values: tuple[Any, ...]  # cutoffs, reals, or (key, value) pairs
    printable: str | None  # the raw text the user gave (None: defaults)

    def __init__(self, values: tuple[Any, ...], printable: str | None) -> None:
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "printable", printable)


# ---- parameter shapes ---------------------------------------------------------------------

# C's isspace, not Unicode whitespace: atol/atof skip exactly these
_LONG_PREFIX = re.compile(r"^[ \t\n\v\f\r]*[+-]?[0-9]+")
_DOUBLE_PREFIX = r"^[ \t\n\v\f\r]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?"
# C's strtod reads hexadecimal floats (0x1p3 = 8), atol stops at the x (0x5 = 0); ireval
# refuses them rather than guess which the user meant
_HEX = re.compile(r"^[ \t\n\v\f\r]*[+-]?0[xX]")
LONG_MAX = 2**63 - 1  # trec_eval's long: the largest cutoff or level


def _no_hex(text: str, spec: str, what: str) -> None:
    if _HEX.match(text):
        raise MeasureParamError(f"{spec}: {what} '{text}' is hexadecimal; write it in decimal")


def _atol(text: str, spec: str, what: str) -> int:
    _no_hex(text, spec, what)
    m = _LONG_PREFIX.match(text)
    if not m:
        raise MeasureParamError(f"{spec}: {what} '{text}' is not a positive integer")
    value = int(m.group(0))
    if abs(value) > LONG_MAX:
        raise MeasureParamError(f"{spec}: {what} '{text}' is out of range")
    return value


def _atof(text: str, spec: str, what: str) -> float:
    _no_hex(text, spec, what)
    m = re.match(_DOUBLE_PREFIX, text)  # (compiled at its first use)
    if not m:
        raise MeasureParamError(f"{spec}: {what} '{text}' is not a number")
    value = float(m.group(0))
    if not math.isfinite(value):
        raise MeasureParamError(f"{spec}: {what} '{text}' is out of range")
    return value


def shown(values: Sequence[Any]) -> str:
    """Parameter values as ``-m`` text: ``5,10``, ``0.1,0.5`` (``%g``)."""
    return ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in values)


# every parameter shape by name, in declaration order
SHAPES: dict[str, ParamShape] = {}


class ParamShape:
    """One way a measure's parameters are written: it reads ``-m`` text into values (as
    trec_eval's ``te_init_meas_*`` for that kind does), labels the values for output, and
    describes itself for ``ireval measures``. A measure names its shape in its declaration
    (``params=LONG_CUTOFFS``); a new shape is one subclass and one constant below."""

    takes_values: ClassVar[bool] = True  # NO_PARAMS: False (a parameter string is an error)
    # -m given twice for a measure of this shape (-m P.5 -m P.10): the values of both can be
    # computed together (cutoffs); otherwise the first is kept (see names.repeated_parameters)
    unites: ClassVar[bool] = False

    def __init__(self, name: str, text: str, many: str = "", one: str = "") -> None:
        self.name = name  # the name trec_eval's sources give the kind
        self.text = text  # what 'ireval measures' says it is
        self.many, self.one = many, one  # NAME.<many> and the output label NAME_<one>
        SHAPES[name] = self

    def __repr__(self) -> str:
        return f"ParamShape({self.name!r})"

    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        """``text`` (after ``NAME.``) as parameters of ``meas``; ``spec`` names it in errors."""
        raise NotImplementedError

    def labels(self, name: str, p: Params) -> list[str]:
        """The output labels of measure ``name`` with parameters ``p``: ``NAME_<text given>``,
        ``NAME`` with the defaults."""
        return [name] if p.printable is None else [f"{name}_{p.printable}"]

    def spellings(self, name: str) -> list[str]:
        """How ``-m`` reaches measure ``name`` in trec_eval's syntax (the reference)."""
        return [name, f"{name}.{self.many}", f"{name}_{self.one}"]

    def describe(self, default: Sequence[Any]) -> str:
        """``integer cutoffs, default 5,10``: the reference's parameters line."""
        return f"{self.text}, default {shown(default)}" if default else self.text


class _NoParams(ParamShape):
    takes_values = False

    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        raise MeasureParamError(f"{spec}: {meas.name} takes no parameters")

    def labels(self, name: str, p: Params) -> list[str]:
        return [name]

    def spellings(self, name: str) -> list[str]:
        return [name]


class _LongCutoffs(ParamShape):
    unites = True

    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        cut = sorted(_atol(t, spec, "cutoff") for t in text.split(","))
        if cut[0] <= 0:
            raise MeasureParamError(f"{spec}: cutoff {cut[0]} is not a positive integer")
        for a, b in itertools.pairwise(cut):
            if a == b:
                raise MeasureParamError(f"{spec}: cutoff {a} is given twice")
        return Params(tuple(cut), text)

    def labels(self, name: str, p: Params) -> list[str]:
        return [f"{name}_{c}" for c in p.values]


class _DoubleCutoffs(ParamShape):
    unites = True

    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        dcut = sorted(_atof(t, spec, "cutoff") for t in text.split(","))
        for x, y in itertools.pairwise(dcut):
            if x == y:
                raise MeasureParamError(f"{spec}: cutoff {x:g} is given twice")
        return Params(tuple(dcut), text)

    def labels(self, name: str, p: Params) -> list[str]:
        return [f"{name}_{c:3.2f}" for c in p.values]


class _DoubleParams(ParamShape):
    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        vals = tuple(_atof(t, spec, "parameter") for t in text.split(","))
        if meas.check_params is not None:
            problem = meas.check_params(vals)
            if problem:
                raise MeasureParamError(f"{spec}: {problem}")
        return Params(vals, text)


class _Pairs(ParamShape):
    def parse(self, meas: Measure, text: str, spec: str) -> Params:
        """``k=v,k=v``: trec_eval refuses an empty item, ``==`` and an item without ``=``."""
        pairs = []
        for item in text.split(","):
            key, eq, val = item.partition("=")
            if not eq or key == "" or "=" in val:
                raise MeasureParamError(
                    f"{spec}: malformed parameter '{item}' (expected key=value pairs, e.g. 1=3,2=9)"
                )
            if re.fullmatch(r"[+-]?[0-9]+", key) and abs(int(key)) > LONG_MAX:
                raise MeasureParamError(f"{spec}: level '{key}' is out of range")
            pairs.append((key, _atof(val, spec, f"value of '{key}'")))
        return Params(tuple(pairs), text)


NO_PARAMS = _NoParams("none", "no parameters")
LONG_CUTOFFS = _LongCutoffs("long_cutoffs", "integer cutoffs", "k1,k2", "k")
DOUBLE_CUTOFFS = _DoubleCutoffs("double_cutoffs", "real cutoffs", "x1,x2", "x")
DOUBLE_PARAMS = _DoubleParams("double_params", "real parameters", "a,b", "a,b")
PAIRS = _Pairs(
    "pairs",
    "key=value pairs (ndcg family: level=gain; rbp: p=; ireval's: as described above)",
    "key=value,...",
    "key=value",
)


# ---- summaries ----------------------------------------------------------------------------

MIN_GEO_MEAN = 1e-5  # trec_eval's floor of a value in a geometric mean


def seq_sum(values: np.ndarray) -> float:
    """Left-to-right double sum (trec_eval's accumulator), not numpy's pairwise sum."""
    import numpy as np

    if len(values) == 0:
        return 0.0
    return float(np.cumsum(values, dtype=np.float64)[-1])


class Totals(FrozenRecord):
    """What a summary reads besides one label's per-topic values (the engine fills it in)."""

    __slots__ = ("complete", "convert", "denom", "judged_relevant", "runid", "topics")

    topics: int  # the topics evaluated
    denom: int  # the topics a mean divides by: -c's judged topics, else ``topics``
    complete: bool  # -c: judged topics the run lacks count (as zeros)
    runid: str
    judged_relevant: int  # judged relevant documents over every topic (num_rel under -c)
    convert: Callable[[str, np.ndarray], np.ndarray] | None  # -Z: (label, values) -> z-scores

    def __init__(
        self,
        topics: int,
        denom: int,
        complete: bool,
        runid: str,
        judged_relevant: int,
        convert: Callable[[str, np.ndarray], np.ndarray] | None = None,
    ) -> None:
        object.__setattr__(self, "topics", topics)
        object.__setattr__(self, "denom", denom)
        object.__setattr__(self, "complete", complete)
        object.__setattr__(self, "runid", runid)
        object.__setattr__(self, "judged_relevant", judged_relevant)
        object.__setattr__(self, "convert", convert)


# every summary by name (the name a baseline record keeps), in declaration order
SUMMARIES: dict[str, Summary] = {}


class Summary:
    """How one measure's per-topic values become its summary line: trec_eval's
    accumulate-then-average for that kind, what a judged topic the run lacks adds under
    ``-c``, and its line in ``ireval measures``. A measure names its summary in its
    declaration (``agg=SUM``); a new kind is one subclass and one constant below."""

    per_topic: ClassVar[bool] = True  # False: the measure has no per-topic values (num_q, runid)
    weighted: ClassVar[bool] = False  # the measure returns one more row: each topic's weight
    plain: ClassVar[bool] = False  # True: a function of the values' plain sum (_PlainSummary)

    def __init__(self, name: str, text: str, over_topics: Literal["mean", "sum"] | None = None) -> None:
        self.name = name
        self.text = text  # what 'ireval measures' says it is
        # a mean or a sum of the per-topic values (compare scales a sum's interval, the gate
        # bounds either by the per-topic differences); None: neither
        self.over_topics = over_topics
        SUMMARIES[name] = self

    def __repr__(self) -> str:
        return f"Summary({self.name!r})"

    def summarize(self, label: str, values: np.ndarray, weights: np.ndarray | None, at: Totals) -> tuple[Any, Any]:
        """(the per-topic values as reported, the summary): under -Z the values become
        z-scores first."""
        if at.convert is not None:
            values = at.convert(label, values)
        return values, self.aggregate(values, weights, at)

    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        raise NotImplementedError

    def from_sum(self, total: float, at: Totals) -> Any:
        """The summary from the values' plain sum, for a ``plain`` summary only."""
        raise TypeError(f"{self!r} is not a function of the plain sum")


class _PlainSummary(Summary):
    """A summary of the plain sum of the values, added left to right (:func:`seq_sum`): the
    engine may add many such columns in one pass and hand each its sum (:meth:`from_sum`)."""

    plain: ClassVar[bool] = True

    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        return self.from_sum(seq_sum(values), at)


class _Mean(_PlainSummary):
    def from_sum(self, total: float, at: Totals) -> Any:
        return total / at.denom if at.denom != 0 else total


class _Sum(_PlainSummary):
    def from_sum(self, total: float, at: Totals) -> Any:
        return total


class _JudgedSum(_PlainSummary):
    def from_sum(self, total: float, at: Totals) -> Any:
        # -c: every judged relevant document, topics without results included (trec_eval
        # 9.0.4 to 10.0 alike, so --compat 9.0.8 too)
        return at.judged_relevant if at.complete else total


class _GeoMean(Summary):
    def summarize(self, label: str, values: np.ndarray, weights: np.ndarray | None, at: Totals) -> tuple[Any, Any]:
        import numpy as np

        logs = np.log(np.maximum(values, MIN_GEO_MEAN))
        if at.convert is not None:  # -Z: the logs become z-scores, the values are kept
            logs = at.convert(label, logs)
        s = seq_sum(logs)
        if at.complete:  # a judged topic the run lacks scores the floor
            s += (at.denom - at.topics) * math.log(MIN_GEO_MEAN)
        return values, math.exp(s / at.denom) if at.denom > 0 else 0.0


class _NanMean(Summary):
    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        import numpy as np

        has = ~np.isnan(values)  # topics without a value (NaN) are left out
        return seq_sum(values[has]) / int(has.sum()) if has.any() else math.nan


class _WeightedMean(Summary):
    weighted = True

    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        import numpy as np

        w = weights if weights is not None else np.ones(len(values))
        has = ~np.isnan(values) & (w > 0)  # the topics with a value
        return seq_sum(w[has] * values[has]) / seq_sum(w[has]) if has.any() else math.nan


class _TopicCount(Summary):
    per_topic = False

    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        return int(at.denom)


class _RunName(Summary):
    per_topic = False

    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        return at.runid


class _NoSummary(Summary):
    def aggregate(self, values: Any, weights: np.ndarray | None, at: Totals) -> Any:
        return None


MEAN = _Mean("mean", "mean over topics", "mean")
SUM = _Sum("sum", "sum over topics", "sum")
GEO_MEAN = _GeoMean("gmean", "geometric mean over topics")
NAN_MEAN = _NanMean("nanmean", "mean over the topics that have a value", "mean")
WEIGHTED_MEAN = _WeightedMean("wmean", "weighted mean over the topics that have a value")
JUDGED_SUM = _JudgedSum("judged_sum", "sum over topics", "sum")
TOPIC_COUNT = _TopicCount("topic_count", "count")
RUN_NAME = _RunName("run_name", "text")
PER_TOPIC_ONLY = _NoSummary("none", "per topic only")


class Measure(FrozenRecord):
    __slots__ = (
        "agg",
        "check_params",
        "citation",
        "default",
        "direction",
        "doc",
        "func",
        "kind",
        "name",
        "needs_subtopics",
        "params",
        "per_query",
        "placeholder",
        "rel_formats",
        "summary",
        "unanswered",
        "versions",
    )

    name: str
    func: Callable[[EvalTable, Params], Any]
    doc: str
    params: ParamShape
    default: tuple[Any, ...]
    kind: Kind
    agg: Summary
    per_query: bool
    summary: bool
    rel_formats: frozenset[str]
    placeholder: Placeholder
    versions: frozenset[str]
    citation: str
    # parameter grammar beyond ``params``: a problem with the parsed values (utility's four
    # coefficients), or None when they are fine
    check_params: Callable[[tuple[Any, ...]], str | None] | None
    needs_subtopics: bool  # computed from --subtopics judgements (diversity measures)
    direction: Direction
    unanswered: Unanswered

    def __init__(  # noqa: PLR0913  the fields of a declaration
        self,
        name: str,
        func: Callable[[EvalTable, Params], Any],
        doc: str,
        params: ParamShape = NO_PARAMS,
        default: tuple[Any, ...] = (),
        kind: Kind = "float",
        agg: Summary = MEAN,
        per_query: bool = True,
        summary: bool = True,
        rel_formats: frozenset[str] = frozenset({"qrels"}),
        placeholder: Placeholder = "value",
        versions: frozenset[str] = VERSIONS,
        citation: str = "",
        check_params: Callable[[tuple[Any, ...]], str | None] | None = None,
        needs_subtopics: bool = False,
        direction: Direction = "higher",
        unanswered: Unanswered = "value",
    ) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "func", func)
        object.__setattr__(self, "doc", doc)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "default", default)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "agg", agg)
        object.__setattr__(self, "per_query", per_query)
        object.__setattr__(self, "summary", summary)
        object.__setattr__(self, "rel_formats", rel_formats)
        object.__setattr__(self, "placeholder", placeholder)
        object.__setattr__(self, "versions", versions)
        object.__setattr__(self, "citation", citation)
        object.__setattr__(self, "check_params", check_params)
        object.__setattr__(self, "needs_subtopics", needs_subtopics)
        object.__setattr__(self, "direction", direction)
        object.__setattr__(self, "unanswered", unanswered)

    def placeholder_slot(self, label: str) -> bool:
        """Whether a ``-c`` placeholder topic's value in slot ``label`` is overridden."""
        return self.placeholder == "zero" or (self.placeholder == "zero_named" and label == self.name)

    def labels(self, p: Params) -> list[str]:
        return self.params.labels(self.name, p)


REGISTRY: dict[str, Measure] = {}

NICKNAMES: dict[str, tuple[str, ...]] = {}
# -R format -> the nickname an error suggests for it (the one whose measures it can compute)
FORMAT_NICKNAMES: dict[str, str] = {}


def measure(  # noqa: PLR0913  a declaration's fields, all keyword-only
    name: str,
    *,
    params: ParamShape = NO_PARAMS,
    default: Sequence[Any] = (),
    kind: Kind = "float",
    agg: Summary = MEAN,
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
        if not isinstance(params, ParamShape) or not isinstance(agg, Summary):
            raise TypeError(f"measure {name}: params= takes a ParamShape (LONG_CUTOFFS...), agg= a Summary (MEAN...)")
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


# trec_eval 10.0's measure table: output order. Measures ireval adds come after
# (catalog.put_everything_in_order).
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


def values_2d(out: Any, nq: int) -> np.ndarray | list[list[str]]:
    """Normalise a measure function's return value to (labels x topics)."""
    import numpy as np

    if isinstance(out, list) and out and isinstance(out[0], list):
        return out  # strings
    arr = np.asarray(out, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr.reshape(1, nq)
    return arr
