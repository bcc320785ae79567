"""What ``ireval gate`` decides, as a library: checks of a candidate run against
floors and a baseline, and the verdict.

Checks:

* ``min``: the candidate's mean must be at least VALUE (no baseline needed);
* ``max_drop``: the candidate may fall at most DELTA below the baseline;
* ``max_drop_rel``: at most FRACTION of the baseline's mean.

The value checked is the measure's own summary under ``-c`` (``auc`` averages over
the topics that have a value). A drop fails only when it is larger than the
tolerance; with ``alpha`` it must also be significant under a one-sided paired
test (candidate worse than baseline), and a drop whose p-value cannot be computed
fails. A value or baseline that does not exist (NaN) fails. An improvement never
fails. Every run is scored on all judged topics (trec_eval's ``-c``): a topic
without results scores 0, so a candidate cannot pass by dropping hard topics.

:func:`gate` is the public entry point (``irevalcli.gate``); it returns a
:class:`GateReport` (``report.passed``; :meth:`~GateReport.to_dict` is the
command's JSON) and never raises for a failed check. Nothing here imports click.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..errors import InputError, UsageError
from ..output.tables import distinct, fmt_value, short
from .baseline import BaselineRecord, changed, read_record, refusal
from .compare import (
    SUMMED,
    Scored,
    TopicLoss,
    comparable_labels,
    load_inputs,
    measure_batches,
    score_run,
    scoring_settings,
    unanswered_text,
)
from .stats import INTERVALS, TEST_NAMES, TESTS, ratio

KINDS = ("min", "max_drop", "max_drop_rel", "non_inferior", "max_losers", "min_judged")
OPTION_OF = {
    "min": "--min",
    "min_judged": "--min-judged",
    "max_drop": "--max-drop",
    "max_drop_rel": "--max-drop-rel",
    "non_inferior": "--non-inferior",
    "max_losers": "--max-losers",
}
# Absolute slack when comparing a value with a threshold, so that a drop of
# exactly the tolerance (0.30 - 0.28 = 0.020000000000000018) is within it.
EPS = 1e-12


@dataclass
class Check:
    kind: str  # min | max_drop | max_drop_rel
    spec: str  # the measure as given
    label: str  # the one output label it names
    threshold: float
    source: str  # where it came from: "--min map=0.2" or "gate.toml [min] map"
    direction: str = "higher"  # the measure's: a drop is a fall (higher) or a rise (lower is better)
    epsilon: float = 0.0  # max_losers: a topic is lost when it gets worse by more than this

    @property
    def worse(self) -> str:
        """What getting worse is called for this measure: "drop", or "rise" where lower is better."""
        return "rise" if self.direction == "lower" else "drop"

    @property
    def name(self) -> str:
        if self.kind == "min":
            return f"{self.label} >= {short(self.threshold)}"
        if self.kind == "min_judged":
            return f"judged@{self.spec.partition('.')[2]} >= {short(self.threshold)}"
        if self.kind == "max_drop":
            return f"{self.label} {self.worse} <= {short(self.threshold)}"
        if self.kind == "non_inferior":
            return f"{self.label} non-inferior, margin {short(self.threshold)}"
        if self.kind == "max_losers":
            return f"{self.label} losers <= {int(self.threshold)} (by > {short(self.epsilon)})"
        return f"{self.label} {self.worse} <= {short(self.threshold * 100)}%"


@dataclass
class GateSpec:
    """Everything the gate checks, merged from the config file and the command line."""

    qrels: Any = None  # a path, or (from the API) a DataFrame
    run: Any = None
    baseline: Any = None
    measures: list[str] = field(default_factory=list)
    checks: dict[tuple[str, str], Check] = field(default_factory=dict)
    alpha: float | None = None
    test: str = "t"
    seed: int = 0
    permutations: int = 10000
    rel_level: int = 1
    ties: str = "docno"
    config: dict[str, str] | None = None  # path and sha256 of the config file
    # a suite (a config file's [[collection]] blocks): (name, its spec) each, checked together
    collections: list[tuple[str, GateSpec]] = field(default_factory=list)
    interval: str = "bootstrap"  # non-inferiority: bootstrap | t
    confidence: float = 0.95
    bootstrap: int = 10000
    allow_rebaseline: bool = False  # a recorded baseline that no longer matches: score its run again

    @property
    def judged_check(self) -> Check | None:
        """The min_judged check (at most one: its K is the depth of the judged@K column)."""
        return next((c for c in self.checks.values() if c.kind == "min_judged"), None)

    def ordered_checks(self) -> list[Check]:
        return sorted(self.checks.values(), key=lambda c: KINDS.index(c.kind))


# ---------------------------------------------------------------- parsing


_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_number(text: str, where: str, *, percent: bool = False) -> float:
    """A decimal number (``0.25``, ``1e-3``; ``2%`` where ``percent``); nothing else."""
    t = text.strip()
    scale = 1.0
    if percent and t.endswith("%"):
        t, scale = t[:-1].strip(), 0.01
    if not _DECIMAL.fullmatch(t):
        raise UsageError(f"{where}: '{text}' is not a number")
    v = float(t) * scale
    if not math.isfinite(v):
        raise UsageError(f"{where}: '{text}' is not a finite number")
    return v


def make_check(kind: str, spec: str, value: Any, source: str, *, file: str | None = None) -> Check:
    """One check; the measure must name exactly one per-topic value.

    ``file``: the config file it comes from, named in an unknown-measure message.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise UsageError(f"{source}: the threshold must be a number, got {value!r}")
    text = str(value)
    epsilon = 0.0
    if kind == "min_judged":
        return judged_check(spec, text, source)
    if kind == "max_losers":
        threshold, epsilon = parse_losers(text, source)
    else:
        threshold = parse_number(text, source, percent=kind == "max_drop_rel")
    if kind != "min" and threshold < 0:
        what = "a margin" if kind == "non_inferior" else "a tolerance"
        raise UsageError(f"{source}: {what} cannot be negative (an improvement never fails)")
    if kind == "max_drop_rel" and threshold > 1 and not text.strip().endswith("%"):
        raise UsageError(
            f"{source}: a relative tolerance is a fraction of the baseline, and {text.strip()} is "
            f"{short(threshold * 100)}%; write {text.strip()}% for {text.strip()} percent "
            "(or a fraction of at most 1)"
        )
    requests, labels = labels_in(spec, source, file)
    if len(labels) != 1:
        shown = ", ".join(labels[:4]) + (", ..." if len(labels) > 4 else "")
        raise UsageError(f"{source}: '{spec}' names {len(labels)} values ({shown}); name one, e.g. {labels[0]}")
    direction = requests[0].measure.direction
    if kind == "min" and direction == "lower":
        raise UsageError(
            f"{source}: lower {labels[0]} is better, so a floor would pass every worse run; "
            "ireval refuses it (check its rise against a baseline instead)"
        )
    if kind != "min" and direction == "none":
        raise UsageError(
            f"{source}: {labels[0]} has no direction (neither a higher nor a lower value is better), "
            "so it cannot be gated on a drop; a floor (min) can check it"
        )
    if kind == "non_inferior" and requests[0].measure.agg.over_topics is None:
        raise UsageError(
            f"{source}: {labels[0]}'s summary is weighted ({requests[0].measure.agg.name}), not a mean over topics, "
            "so the interval of the per-topic differences does not bound it; check it with max_drop"
        )
    return Check(kind, spec, labels[0], threshold, source, direction, epsilon)


def judged_check(k_text: str, text: str, source: str) -> Check:
    """``K=FRACTION`` for min_judged: the candidate's judged@K (ireval's ``judged.K``: documents
    in the top K with a judgement >= 0, over K; the mean over the judged topics, a topic without
    results counting 0) must be at least FRACTION (a decimal from 0 to 1)."""
    k = k_text.strip()
    if not re.fullmatch(r"[0-9]+", k) or int(k) < 1:
        raise UsageError(f"{source}: K must be a whole number of documents >= 1, got '{k_text}'")
    fraction = parse_number(text, source)
    if not 0 <= fraction <= 1:
        raise UsageError(f"{source}: FRACTION must be from 0 to 1 (a share of the top K), got {text.strip()}")
    spec = f"judged.{int(k)}"
    _, labels = labels_in(spec, source, None)
    return Check("min_judged", spec, labels[0], fraction, source)


def parse_losers(text: str, where: str) -> tuple[float, float]:
    """``N@EPSILON`` for max_losers: at most N topics (an integer >= 0) worse by more than
    EPSILON (a decimal >= 0)."""
    n, at, eps = text.strip().partition("@")
    if not at or not re.fullmatch(r"[0-9]+", n.strip()):
        raise UsageError(f"{where}: expected N@EPSILON (at most N topics worse by more than EPSILON), e.g. 3@0.05")
    epsilon = parse_number(eps, where)
    if epsilon < 0:
        raise UsageError(f"{where}: EPSILON cannot be negative")
    return float(int(n)), epsilon


def labels_in(spec: str, source: str | None, file: str | None) -> tuple[Any, list[str]]:
    """comparable_labels, with the config file named when the measure comes from one."""
    try:
        return comparable_labels(spec, where=source)
    except UsageError as exc:
        if file is None or str(exc).startswith(file):
            raise
        raise InputError(file, str(exc)) from None


# ---------------------------------------------------------------- judging


def judge(check: Check, cand: Scored, base: Scored | None, spec: GateSpec, p_cache: dict[str, Any]) -> CheckResult:  # noqa: C901  debt: one branch per check kind
    """One check's values, p-value and verdict.

    The value checked is the measure's own summary (``auc`` averages over the topics
    that have a value). A value or baseline that does not exist (NaN) fails the
    check, as does a drop beyond its tolerance whose significance cannot be computed.
    """

    value = cand.mean(check.label)
    row: dict[str, Any] = {
        "name": check.name,
        "kind": check.kind,
        "measure": check.label,
        "threshold": check.threshold,
        "value": value,
        "baseline": None,
        "diff": None,
        "rel_diff": None,
        "test": None,
        "p_value": None,
        "alpha": None,
        "verdict": "pass",
        "reason": "",
        "source": check.source,
        "direction": check.direction,
    }
    b = math.nan
    if base is not None and check.label in base.values:  # (a record keeps no judged@K: the candidate's alone)
        b = base.mean(check.label)
        row["baseline"] = b
        row["diff"] = value - b
        row["rel_diff"] = ratio(value - b, b)
    floor = check.kind in ("min", "min_judged")
    for sc in (cand,) if floor else (cand, base):
        if sc is not None and check.label in sc.unscorable:
            n = len(sc.qids)
            row.update(verdict="fail", reason=f"{sc.name} {unanswered_text(sc, n)}: {sc.unscorable[check.label]}")
            return CheckResult(**row)
    if math.isnan(value):
        row.update(verdict="fail", reason=f"no value: {check.label} is undefined on every topic of the run")
        return CheckResult(**row)
    if floor:
        shown, least = distinct(value, check.threshold)
        if value < check.threshold - EPS:
            row.update(verdict="fail", reason=f"below the floor: {shown} < {least}")
        else:
            row["reason"] = f"at or above the floor: {shown} >= {least}"
        return CheckResult(**row)
    if base is None:  # build_spec refuses this already
        raise UsageError(f"{check.source}: a drop needs a baseline: give --baseline RUN")
    if math.isnan(b):
        row.update(
            verdict="fail", reason=f"no baseline value: {check.label} is undefined on every topic of the baseline"
        )
        return CheckResult(**row)
    if check.kind == "non_inferior":
        return _non_inferior(check, cand, base, spec, row, value, b)
    if check.kind == "max_losers":
        return _max_losers(check, cand, base, row)
    lower = check.direction == "lower"
    res, paired = drop_p(check, cand, base, spec, p_cache)
    row.update(test=spec.test, p_value=res.p_value, alpha=spec.alpha)
    drop = value - b if lower else b - value  # how much worse the candidate is
    word = check.worse
    if check.kind == "max_drop":
        over = drop > check.threshold + EPS
        d_text, limit = distinct(drop, check.threshold)
        shown = f"{word} {d_text}"
    else:
        rel = drop / b if b > 0 else (0.0 if drop <= 0 else math.inf)
        over = rel > check.threshold + EPS
        if math.isinf(rel):
            shown, limit = f"{word} from a baseline of 0", short(check.threshold * 100) + "%"
        else:
            r_text, limit = distinct(rel * 100, check.threshold * 100, places=2)
            shown, limit = f"{word} {r_text}%", limit + "%"
    if drop <= 0:
        row["reason"] = f"no {word}" if drop == 0 else f"improved by {fmt_value(-drop)}"
    elif not over:
        row["reason"] = f"{shown} within the tolerance {limit}"
    elif spec.alpha is None:
        row.update(verdict="fail", reason=f"{shown} > {limit}")
    elif res.p_value is None:
        if paired < 2:
            why = f"only {paired} topic{'s' if paired != 1 else ''} with a value"
        else:
            why = f"the {TEST_NAMES[spec.test]} gives none"
        row.update(
            verdict="fail", reason=f"{shown} > {limit}, and its significance cannot be computed (no p-value: {why})"
        )
    elif res.p_value < spec.alpha:
        row.update(verdict="fail", reason=f"{shown} > {limit}, significant ({_p_text(res.p_value)} < {spec.alpha:g})")
    else:
        row["reason"] = f"{shown} > {limit} but not significant ({_p_text(res.p_value)} >= {spec.alpha:g})"
    return CheckResult(**row)


def drop_p(check: Check, cand: Scored, base: Scored, spec: GateSpec, p_cache: dict[str, Any]) -> tuple[Any, int]:
    """The one-sided paired test of a drop check (candidate worse than baseline) and the
    number of topics with both values, computed once per measure into ``p_cache``."""
    from ..analysis.stats import paired_count, paired_test

    if check.label not in p_cache:
        x, y = cand.values[check.label], base.values[check.label]
        worse = "greater" if check.direction == "lower" else "less"
        p_cache[check.label] = (
            paired_test(x, y, spec.test, alternative=worse, permutations=spec.permutations, seed=spec.seed),
            paired_count(x, y),
        )
    res, paired = p_cache[check.label]
    return res, paired


def _max_losers(check: Check, cand: Scored, base: Scored, row: dict[str, Any]) -> CheckResult:
    """At most N topics worse than the baseline by more than epsilon (in the measure's
    direction); a topic where the candidate has no value and the baseline has one is lost."""
    import numpy as np

    sign = -1.0 if check.direction == "lower" else 1.0
    x = np.asarray(cand.values[check.label], dtype=np.float64)
    y = np.asarray(base.values[check.label], dtype=np.float64)
    d = sign * (x - y)
    with np.errstate(invalid="ignore"):
        lost = (d < -check.epsilon - EPS) | (np.isnan(x) & ~np.isnan(y))
    qids = cand.qids
    order = sorted(np.flatnonzero(lost).tolist(), key=lambda i: (-math.inf if math.isnan(d[i]) else d[i], qids[i]))
    losers = tuple(TopicLoss(qids[i], float(x[i]), float(y[i]), float(x[i] - y[i])) for i in order)
    allowed = int(check.threshold)
    shown = " ".join(t.qid for t in losers[:5]) + (" ..." if len(losers) > 5 else "")
    row.update(epsilon=check.epsilon, losers=losers)
    k = len(losers)
    if k > allowed:
        row.update(verdict="fail", reason=f"{k} topics lost > {allowed}: {shown}")
    elif k:
        row["reason"] = f"{k} topic{'s' if k != 1 else ''} lost, at most {allowed}: {shown}"
    else:
        row["reason"] = f"no topic lost more than {short(check.epsilon)}"
    return CheckResult(**row)


def _non_inferior(
    check: Check, cand: Scored, base: Scored, spec: GateSpec, row: dict[str, Any], value: float, b: float
) -> CheckResult:
    """Non-inferiority: the lower bound of the interval of the paired difference (per topic,
    oriented so that better is positive) must be above -margin, and so must the difference of
    the summaries (a check that passes only when the candidate is not worse by the margin)."""
    from .stats import INTERVAL_NAMES, bootstrap_ci, paired_count, t_interval

    sign = -1.0 if check.direction == "lower" else 1.0
    x, y = cand.values[check.label], base.values[check.label]
    d = sign * (x - y)
    paired = paired_count(x, y)
    if spec.interval == "t":
        low, high = t_interval(d, confidence=spec.confidence)
    else:
        low, high = bootstrap_ci(d, confidence=spec.confidence, resamples=spec.bootstrap, seed=spec.seed)
    if base.aggs.get(check.label) in SUMMED and low is not None and high is not None:
        low, high = low * paired, high * paired  # the summary is a sum over topics: so is its difference
    row.update(interval=spec.interval, confidence=spec.confidence, ci_low=low, ci_high=high)
    margin = check.threshold
    how = f"{spec.confidence * 100:g}% {INTERVAL_NAMES[spec.interval]} interval"
    if low is None or high is None:
        row.update(verdict="fail", reason=f"no {how}: only {paired} topic{'s' if paired != 1 else ''} with a value")
        return CheckResult(**row)
    shown = f"[{fmt_value(low, '+.4f')}, {fmt_value(high, '+.4f')}]"
    point = sign * (value - b)
    if low <= -margin:
        row.update(verdict="fail", reason=f"CI {shown} reaches -{short(margin)}: may be worse by more")
    elif point <= -margin:  # (a percentile interval above its own mean: never a pass)
        row.update(verdict="fail", reason=f"CI {shown}, but the mean is worse by {fmt_value(-point)}")
    else:
        row["reason"] = f"CI {shown} above -{short(margin)}"
    return CheckResult(**row)


def _p_text(p: float | None) -> str:
    if p is None:
        return "no p-value"
    return "p < 0.0001" if p < 0.0001 else f"p = {p:.4f}"


# ---------------------------------------------------------------- the report


@dataclass(frozen=True)
class CheckResult:
    """One check: what was compared, and its verdict with the reason."""

    name: str  # "map drop <= 0.01"
    kind: str  # min | max_drop | max_drop_rel
    measure: str
    threshold: float
    value: float  # the candidate's summary (NaN: no value)
    baseline: float | None
    diff: float | None
    rel_diff: float | None
    test: str | None
    p_value: float | None
    alpha: float | None
    verdict: str  # pass | fail
    reason: str
    source: str  # where the check came from ("--min map=0.2", "gate.toml [min] map")
    direction: str = "higher"  # the measure's: higher or lower is better
    # non_inferior: the interval of the paired difference (candidate better: positive), how it was made
    ci_low: float | None = None
    ci_high: float | None = None
    interval: str | None = None  # bootstrap | t
    confidence: float | None = None
    # max_losers: the topics worse by more than epsilon, worst first
    epsilon: float | None = None
    losers: tuple[TopicLoss, ...] | None = None
    # with min_judged: the candidate's judged@K (K: judged_k), shown beside every check
    judged: float | None = None
    judged_k: int | None = None
    collection: str | None = None  # in a suite: the [[collection]] block's name

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


@dataclass(frozen=True)
class MeasureValue:
    """A measure's summary for the candidate (and the baseline, when there is one)."""

    measure: str
    value: float
    baseline: float | None
    diff: float | None
    collection: str | None = None  # in a suite: the [[collection]] block's name


@dataclass(frozen=True)
class GateReport:
    """Everything ``ireval gate`` decided; :meth:`to_dict` is its JSON."""

    version: str
    options: Mapping[str, Any]
    inputs: Mapping[str, Any]
    topics: int
    checks: tuple[CheckResult, ...]
    measures: tuple[MeasureValue, ...]
    # with min_judged and unjudged=True: the candidate's unjudged top-K (qid, docno) Arrow arrays
    unjudged: Any = field(default=None, repr=False, compare=False)

    @property
    def checks_failed(self) -> int:
        return sum(1 for c in self.checks if not c.passed)

    @property
    def passed(self) -> bool:
        return self.checks_failed == 0

    @property
    def verdict(self) -> str:
        return "pass" if self.passed else "fail"

    def failed(self) -> list[CheckResult]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return {
            "ireval": self.version,
            "command": "gate",
            "verdict": self.verdict,
            "checks_total": len(self.checks),
            "checks_failed": self.checks_failed,
            "options": dict(self.options),
            "inputs": dict(self.inputs),
            "topics": self.topics,
            "checks": [asdict(c) for c in self.checks],
            "measures": [asdict(m) for m in self.measures],
            **({} if self.unjudged is None else {"unjudged_pairs": len(self.unjudged[0])}),
        }


def unjudged_pairs(qrels: Any, run: Any, k: int, ties: str = "docno") -> tuple[Any, Any]:
    """The (qid, docno) pairs in ``run``'s top ``k`` of each topic judged in ``qrels`` that
    have no judgement >= 0 (what judged@k counts as unjudged), sorted by topic then docno,
    as two Arrow binary arrays."""
    import numpy as np

    from ..core.pairs import PairCodes, member, top_of_each_topic

    codes = PairCodes([run, qrels])
    top = codes.key[0][top_of_each_topic(codes.topic[0], run, k, ties)]
    judged = codes.key[1][np.asarray(qrels.rel) >= 0]
    # in the judged topics only, and not judged there
    fresh = top[member(codes.topic_of(top), codes.topic[1]) & ~member(top, judged)]
    return codes.ids(np.sort(fresh))


def run_gate(spec: GateSpec, engine: str = "local", *, unjudged: bool = False) -> GateReport:
    """Read, evaluate and judge (on ``engine``, in its session). ``unjudged``: also find the
    candidate's unjudged top-K pairs of the min_judged check (:attr:`GateReport.unjudged`)."""
    import dataclasses

    from ..version import VERSION

    if spec.collections:
        return run_suite(spec, engine)
    checks = spec.ordered_checks()
    qrels, runs, cand, base, labels, evaluation, recorded = _score(spec, engine)
    p_cache: dict[str, Any] = {}
    rows = tuple(judge(c, cand, base, spec, p_cache) for c in checks)
    jc = spec.judged_check
    pairs = None
    if jc is not None:
        k = int(jc.spec.partition(".")[2])
        shown = cand.mean(jc.label)
        rows = tuple(dataclasses.replace(r, judged=shown, judged_k=k) for r in rows)
        if unjudged:
            run = runs[0]
            if isinstance(run, str):  # --engine dask: the runs were read on the cluster
                from ..api import load_run

                run = load_run(run, hash=evaluation.hash_inputs, ranks=evaluation.read_ranks)
            pairs = unjudged_pairs(qrels, run, k, spec.ties)
    measures = []
    for label in labels:
        v = cand.mean(label)
        b = base.mean(label) if base is not None and label in base.values else None  # (a record: judged@K not kept)
        measures.append(MeasureValue(label, v, b, None if b is None else v - b))
    judged_k = int(jc.spec.partition(".")[2]) if jc is not None else None
    options = _report_options(spec, {c.kind for c in checks}, judged_k)
    inputs = {
        "qrels": {"path": qrels.name, "sha256": qrels.sha256},
        "run": cand.source(),
        "baseline": base.source() if base is not None else None,
        "config": spec.config,
    }
    if recorded is not None and base is not None:
        inputs["baseline"] = {**base.source(), "record": recorded}
    return GateReport(VERSION, options, inputs, len(cand.qids), rows, tuple(measures), pairs)


def _report_options(
    spec: GateSpec, kinds: set[str], judged_k: int | None, *, corrected: int | None = None
) -> dict[str, Any]:
    """The options a report records (JSON ``options``), in their order: one gate, or a suite
    whose drop tests were Holm-corrected together (``corrected``: how many)."""
    options: dict[str, Any] = {"alpha": spec.alpha, "test": spec.test, "alternative": "less"}
    if corrected is not None:
        options.update(correction="holm", tests_corrected=corrected)
    options.update(
        permutations=spec.permutations if spec.test == "randomization" else None,
        seed=spec.seed,
        rel_level=spec.rel_level,
        ties=spec.ties,
    )
    if "non_inferior" in kinds:
        options.update(interval=spec.interval, confidence=spec.confidence, bootstrap=spec.bootstrap)
    if judged_k is not None:
        options.update(judged_k=judged_k)
    return options


def _against_record(
    spec: GateSpec, record: BaselineRecord, batches: list[list[str]], labels: list[str], evaluation: Any
) -> tuple[Any, list[Any], Scored, Scored, dict[str, Any]]:
    """The candidate scored, and the baseline from ``record``: its recorded values, or (when
    something changed and ``spec.allow_rebaseline``) its run scored again."""
    from ..api import load_run

    # judged@K (--min-judged) is the candidate's alone: the record need not hold it
    own = {c.label for c in spec.checks.values() if c.kind == "min_judged"}
    needed = [label for label in labels if label not in own]
    why = changed(record, None, evaluation, needed)  # before any input is read
    if why and not spec.allow_rebaseline:
        raise refusal(record, why)
    qrels, runs = load_inputs(spec.qrels, [spec.run], evaluation)
    if why is None:
        why = changed(record, qrels.sha256, evaluation, needed)
        if why and not spec.allow_rebaseline:
            raise refusal(record, why)
    cand = score_run(qrels, runs[0], batches, labels, options=evaluation)
    run = record.doc["run"]
    recorded = {
        "path": record.path,
        "sha256": record.sha256,
        "ireval": record.version,
        "run": run["path"],
        "run_sha256": run["sha256"],
        "rebaselined": why,
    }
    if why is None:
        base = record.scored()
        if base.qids != cand.qids:  # the same qrels and settings judge the same topics
            raise InputError(record.path, f"its topics are not the judged topics of {qrels.name}")
        return qrels, runs, cand, base, recorded
    if not os.path.isfile(run["path"]):
        raise InputError(
            record.path,
            f"{why}; --allow-rebaseline scores its run {run['path']} again, which is not there "
            "(give that run as --baseline)",
        )
    if evaluation.engine == "dask":
        again: Any = run["path"]
    else:
        again = load_run(run["path"], hash=evaluation.hash_inputs, ranks=evaluation.read_ranks)
    base = score_run(qrels, again, batches, labels, options=evaluation)
    if base.sha256 and base.sha256 != run["sha256"]:
        raise InputError(
            record.path,
            f"{why}; --allow-rebaseline scores its run {run['path']} again, but that file has changed since "
            f"it was accepted (SHA-256 {base.sha256[:12]}..., recorded {run['sha256'][:12]}...)",
        )
    return qrels, runs, cand, base, recorded


def _score(
    spec: GateSpec, engine: str
) -> tuple[Any, list[Any], Scored, Scored | None, list[str], Any, dict[str, Any] | None]:
    """Read and score the candidate (and the baseline) on every check's and report's measure;
    a baseline given as a record (``ireval gate accept``) is taken as recorded (the last item
    says which record)."""
    specs = [c.spec for c in spec.ordered_checks()] + list(spec.measures)
    batches, labels = measure_batches(specs)
    evaluation = scoring_settings(spec.rel_level, spec.ties, engine)  # (a config file's ties = "rank" too)
    record = read_record(spec.baseline)
    if record is not None:
        qrels, runs, cand, base, recorded = _against_record(spec, record, batches, labels, evaluation)
        return qrels, runs, cand, base, labels, evaluation, recorded
    paths = [spec.run] + ([spec.baseline] if spec.baseline is not None else [])
    qrels, runs = load_inputs(spec.qrels, paths, evaluation)
    scored = [score_run(qrels, r, batches, labels, options=evaluation) for r in runs]
    return qrels, runs, scored[0], (scored[1] if len(scored) > 1 else None), labels, evaluation, None


def run_suite(spec: GateSpec, engine: str = "local") -> GateReport:
    """Several collections in one gate: each block's checks on its own qrels and runs; the
    p-values of the drop checks of every collection x measure Holm-corrected together; one
    verdict. Each row names its collection."""
    import dataclasses

    from ..version import VERSION
    from .stats import adjust

    scored = []
    for name, sub in spec.collections:
        qrels, _, cand, base, labels, _, _ = _score(sub, engine)
        cache: dict[str, Any] = {}
        for c in sub.ordered_checks():
            if c.kind in ("max_drop", "max_drop_rel") and base is not None:
                drop_p(c, cand, base, sub, cache)
        scored.append((name, sub, qrels, cand, base, labels, cache))
    family = [(cache, label) for *_, cache in scored for label in cache]
    corrected = adjust([cache[label][0].p_value for cache, label in family], "holm")
    for (cache, label), p in zip(family, corrected):
        res, paired = cache[label]
        cache[label] = (dataclasses.replace(res, p_value=p), paired)
    rows: list[CheckResult] = []
    measures: list[MeasureValue] = []
    blocks: list[dict[str, Any]] = []
    for name, sub, qrels, cand, base, labels, cache in scored:
        jc = sub.judged_check
        for c in sub.ordered_checks():
            r = judge(c, cand, base, sub, cache)
            extra: dict[str, Any] = {}
            if jc is not None:
                extra = {"judged": cand.mean(jc.label), "judged_k": int(jc.spec.partition(".")[2])}
            rows.append(dataclasses.replace(r, name=f"{name}: {r.name}", collection=name, **extra))
        for label in labels:
            v = cand.mean(label)
            b = base.mean(label) if base is not None else None
            measures.append(MeasureValue(label, v, b, None if b is None else v - b, name))
        blocks.append(
            {
                "name": name,
                "qrels": {"path": qrels.name, "sha256": qrels.sha256},
                "run": cand.source(),
                "baseline": base.source() if base is not None else None,
                "topics": len(cand.qids),
            }
        )
    ks = {r.judged_k for r in rows if r.judged_k is not None}
    options = _report_options(spec, {r.kind for r in rows}, ks.pop() if ks else None, corrected=len(family))
    inputs = {"config": spec.config, "collections": blocks}
    topics = sum(len(cand.qids) for _, _, _, cand, *_ in scored)
    return GateReport(VERSION, options, inputs, topics, tuple(rows), tuple(measures))


def _api_checks(kind: str, table: Mapping[Any, Any] | None) -> list[Check]:
    if table is None:
        return []
    if not isinstance(table, Mapping):
        raise UsageError(f"{kind}={table!r}: expected a mapping of measure to value, e.g. {kind}={{'map': 0.2}}")
    return [make_check(kind, str(m), v, f"{kind}[{m!r}]") for m, v in table.items()]


def gate(  # noqa: PLR0913  public API: its keywords are the command's options
    qrels: Any,
    run: Any,
    *,
    baseline: Any = None,
    min: Mapping[str, float] | None = None,
    max_drop: Mapping[str, float] | None = None,
    max_drop_rel: Mapping[str, float | str] | None = None,
    non_inferior: Mapping[str, float] | None = None,
    max_losers: Mapping[str, str] | None = None,
    min_judged: Mapping[int, float] | None = None,
    measures: Sequence[str] = (),
    alpha: float | None = None,
    test: str = "t",
    seed: int = 0,
    permutations: int = 10000,
    interval: str = "bootstrap",
    confidence: float = 0.95,
    bootstrap: int = 10000,
    rel_level: int = 1,
    ties: str = "docno",
    allow_rebaseline: bool = False,
) -> GateReport:
    """Check ``run`` as ``ireval gate`` does: ``min={"map": 0.25}`` (floors),
    ``max_drop={"map": 0.01}``, ``max_drop_rel={"ndcg_cut.10": "2%"}`` and
    ``max_losers={"map": "3@0.05"}`` (at most 3 topics worse by more than 0.05) and
    ``non_inferior={"map": 0.02}`` (against ``baseline``; the lower bound of the
    ``confidence`` interval of the paired difference, ``interval="bootstrap"`` or ``"t"``,
    must be above -margin); ``min_judged={10: 0.9}`` (the run's judged@10, the mean over the
    judged topics of ``judged.10``, at least 0.9; one K, shown beside every check). Inputs are
    paths or DataFrames; ``baseline`` may be the path of a record made by
    :func:`irevalcli.accept_baseline` (``ireval gate accept``), whose values are used as
    recorded; one that no longer matches the qrels, the settings or the ireval version is
    refused unless ``allow_rebaseline`` (its run is then scored again). Returns a :class:`GateReport`
    (``report.passed``); raises :class:`irevalcli.errors.UsageError` for a bad check
    and :class:`~irevalcli.errors.InputError` for a bad input, never for a failed check.
    """
    if test not in TESTS:
        raise UsageError(f"test={test!r}: expected one of {', '.join(TESTS)}")
    if alpha is not None and (isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1):
        raise UsageError(f"alpha={alpha!r}: expected a number between 0 and 1, or None")
    if interval not in INTERVALS:
        raise UsageError(f"interval={interval!r}: expected one of {', '.join(INTERVALS)}")
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise UsageError(f"confidence={confidence!r}: expected a number between 0 and 1")
    for name, v, low in (("seed", seed, 0), ("permutations", permutations, 1), ("bootstrap", bootstrap, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < low:
            raise UsageError(f"{name}={v!r}: expected an integer >= {low}")
    spec = GateSpec(
        qrels=qrels,
        run=run,
        baseline=baseline,
        measures=[measures] if isinstance(measures, str) else list(measures),
        alpha=None if alpha is None else float(alpha),
        test=test,
        seed=seed,
        permutations=permutations,
        rel_level=rel_level,
        ties=ties,
        interval=interval,
        confidence=float(confidence),
        bootstrap=bootstrap,
        allow_rebaseline=bool(allow_rebaseline),
    )
    checks = (
        ("min", min),
        ("max_drop", max_drop),
        ("max_drop_rel", max_drop_rel),
        ("non_inferior", non_inferior),
        ("max_losers", max_losers),
        ("min_judged", min_judged),
    )
    for kind, table in checks:
        for check in _api_checks(kind, table):
            if (kind, check.label) in spec.checks:
                raise UsageError(f"{check.source}: {kind} names {check.label} twice")
            spec.checks[(kind, check.label)] = check
    if min_judged is not None and len(min_judged) > 1:
        raise UsageError(f"min_judged={dict(min_judged)!r}: give one K (the depth of judged@K)")
    if not spec.checks:
        raise UsageError("nothing to check: give min, max_drop, max_drop_rel, non_inferior, max_losers or min_judged")
    if baseline is None:
        relative = [c for c in spec.ordered_checks() if c.kind not in ("min", "min_judged")]
        if relative:
            need = "non-inferiority" if relative[0].kind == "non_inferior" else "a drop"
            raise UsageError(f"{relative[0].source}: {need} needs a baseline: give baseline=")
    for m in spec.measures:
        comparable_labels(m, where=f"measures {m!r}")
    scoring_settings(rel_level, ties)  # checked before any file is read
    return run_gate(spec)
