"""A locked baseline for ``ireval gate``: the baseline's per-topic values, recorded once
(``ireval gate accept``) with everything that changes them, and checked before use.

The record is one JSON object whose first key is ``"ireval_baseline": 1`` (that key, not
the file's name, makes a file a record). It holds the qrels' SHA-256, the ireval version,
the evaluation settings that change numbers (``-c -l -M -J -N --compat --ties``, as the
gate evaluates), the measures asked for, and for every label its per-topic values (null:
no value), its summary (the one the gate checks), how it summarises, its direction and,
where the run could not score a topic it lacks, why.

A gate against a record refuses it (:class:`~irevalcli.errors.InputError`, exit 2, one
line naming what changed) when the qrels, a setting or the ireval version differ or a
checked measure is not in it, unless ``allow_rebaseline``: then the run it records is
scored again, as a baseline given as a run is. Nothing here imports click.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, UsageError
from .compare import Scored

MARKER = "ireval_baseline"
RECORD_VERSION = 1
# the evaluation settings recorded, with the option that sets each (for the messages)
SETTINGS = {
    "complete": "-c",
    "rel_level": "-l",
    "max_docs": "-M",
    "judged_only": "-J",
    "num_docs": "-N",
    "compat": "--compat",
    "ties": "--ties",
}
REBASELINE = "; accept a new baseline (ireval gate accept) or give --allow-rebaseline to score its run again"


@dataclass(frozen=True)
class BaselineRecord:
    """A record read from ``path`` (``sha256``: of the file)."""

    path: str
    sha256: str
    doc: dict[str, Any]

    @property
    def version(self) -> str:
        return str(self.doc["ireval"])

    def scored(self) -> Scored:
        """The baseline as the gate compares with it: the recorded values, not recomputed."""
        import numpy as np

        values = self.doc["values"]
        run = self.doc["run"]
        return Scored(
            name=self.path,
            sha256=self.sha256,
            runid=run["runid"],
            qids=list(self.doc["topics"]),
            values={k: np.array([math.nan if x is None else x for x in v["per_topic"]]) for k, v in values.items()},
            missing=list(run["missing_topics"]),
            unjudged=run["unjudged_topics"],
            summaries={k: math.nan if v["summary"] is None else v["summary"] for k, v in values.items()},
            aggs={k: v["agg"] for k, v in values.items()},
            directions={k: v["direction"] for k, v in values.items()},
            unscorable={k: v["unscorable"] for k, v in values.items() if v["unscorable"] is not None},
        )


def settings_of(options: Any) -> dict[str, Any]:
    """The recorded settings of an :class:`~irevalcli.settings.EvalSettings`."""
    table = options.table.as_dict()
    return {key: table[key] for key in SETTINGS}


def make_record(
    sc: Scored, qrels_name: str, qrels_sha256: str, measures: Sequence[str], options: Any
) -> dict[str, Any]:
    """The record of a scored baseline run (JSON-ready but for NaN, which is written as null)."""
    from ..version import VERSION

    values = {}
    for label, v in sc.values.items():
        values[label] = {
            "summary": sc.mean(label),
            "agg": sc.aggs[label],
            "direction": sc.directions[label],
            "unscorable": sc.unscorable.get(label),
            "per_topic": [float(x) for x in v],
        }
    return {
        MARKER: RECORD_VERSION,
        "ireval": VERSION,
        "command": "gate accept",
        "qrels": {"path": qrels_name, "sha256": qrels_sha256},
        "run": sc.source(),
        "settings": settings_of(options),
        "measures": list(measures),
        "topics": list(sc.qids),
        "values": values,
    }


def accept(
    qrels: Any, run: Any, measures: Sequence[str], *, rel_level: int = 1, ties: str = "docno", engine: str = "local"
) -> dict[str, Any]:
    """Score ``run`` on every judged topic of ``qrels`` as the gate scores a baseline, and
    return its record."""
    from .compare import load_inputs, measure_batches, score_run, scoring_settings

    if isinstance(measures, str):
        measures = [measures]
    if not measures:
        raise UsageError("no measure to record: give -m MEASURE (repeatable)")
    from ..measures.names import split_specs

    specs = split_specs(list(measures))
    batches, labels = measure_batches(specs)
    options = scoring_settings(rel_level, ties, engine)
    q, runs = load_inputs(qrels, [run], options)
    sc = score_run(q, runs[0], batches, labels, options=options)
    return make_record(sc, q.name, q.sha256, specs, options)


def accept_baseline(
    qrels: Any,
    run: Any,
    measures: Sequence[str],
    *,
    output: str | os.PathLike[str] | None = None,
    rel_level: int = 1,
    ties: str = "docno",
) -> dict[str, Any]:
    """``ireval gate accept`` as a library: the record of ``run`` as a baseline (a dict, as
    its JSON), written atomically to ``output`` when given; pass that path as
    ``irevalcli.gate(..., baseline=path)``."""
    record = accept(qrels, run, measures, rel_level=rel_level, ties=ties)
    if output is not None:
        from ..output.files import write_atomic
        from ..output.tables import dump_json

        write_atomic(os.fspath(output), dump_json(record), inputs=[q for q in (qrels, run) if isinstance(q, str)])
    return record


# ---------------------------------------------------------------- reading


def _refuse(path: str, what: str) -> InputError:
    return InputError(path, f"not an ireval baseline record: {what} (make one with ireval gate accept)")


def read_record(baseline: Any) -> BaselineRecord | None:
    """The record in the file ``baseline``, or None when it is not one (a run: scored as a run).

    Detected by content: a JSON object whose key ``ireval_baseline`` is present. A file
    that mentions that key but is not valid JSON, another ireval JSON output, or a ``.json``
    file that is not a JSON Lines run is refused here, in one line.
    """
    if not isinstance(baseline, (str, os.PathLike)):
        return None
    path = os.fspath(baseline)
    if path == "-" or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        head = f.read(1)
        while head in (b" ", b"\t", b"\r", b"\n"):
            head = f.read(1)
        if head != b"{":
            return None
        f.seek(0)
        data = f.read()
    from ..io.source import digest

    sha = digest(data)
    try:
        doc = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        if MARKER.encode() in data[:4096]:
            raise _refuse(path, f"invalid JSON, {_json_error(exc)}") from None
        if not path.lower().endswith(".json") or _first_line_is_object(data):
            return None  # a JSON Lines run
        raise _refuse(path, f"invalid JSON, {_json_error(exc)}") from None
    if not isinstance(doc, dict):
        return None
    if MARKER not in doc:
        if "ireval" in doc and "command" in doc:
            raise _refuse(path, f"it is the JSON output of 'ireval {doc['command']}'")
        if path.lower().endswith(".json"):
            raise _refuse(path, f"a JSON object without the key '{MARKER}'")
        return None  # a one-line JSON Lines run
    _validate(path, doc)
    return BaselineRecord(path, sha, doc)


def _json_error(exc: Exception) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    return "not UTF-8"


def _first_line_is_object(data: bytes) -> bool:
    try:
        return isinstance(json.loads(data.split(b"\n", 1)[0]), dict)
    except (ValueError, UnicodeDecodeError):
        return False


def _validate(path: str, doc: dict[str, Any]) -> None:
    """Every field the gate uses, of the right type; else one line naming the first wrong one."""
    if doc[MARKER] != RECORD_VERSION:
        raise _refuse(path, f"record format {doc[MARKER]!r}, this ireval reads format {RECORD_VERSION}")

    def need(cond: bool, what: str) -> None:
        if not cond:
            raise _refuse(path, what)

    for key in ("ireval", "qrels", "run", "settings", "measures", "topics", "values"):
        need(key in doc, f"no '{key}'")
    need(isinstance(doc["ireval"], str), "'ireval' is not a version string")
    need(isinstance(doc["qrels"], dict) and isinstance(doc["qrels"].get("sha256"), str), "no 'qrels' SHA-256")
    run = doc["run"]
    need(
        isinstance(run, dict)
        and isinstance(run.get("path"), str)
        and isinstance(run.get("sha256"), str)
        and isinstance(run.get("runid"), str)
        and isinstance(run.get("missing_topics"), list)
        and isinstance(run.get("unjudged_topics"), int),
        "'run' lacks its path, sha256, runid, missing_topics or unjudged_topics",
    )
    settings = doc["settings"]
    need(isinstance(settings, dict) and all(k in settings for k in SETTINGS), "'settings' lacks a setting")
    topics = doc["topics"]
    need(isinstance(topics, list) and all(isinstance(q, str) for q in topics), "'topics' is not a list of ids")
    values = doc["values"]
    need(isinstance(values, dict), "'values' is not an object")
    for label, v in values.items():
        ok = (
            isinstance(v, dict)
            and isinstance(v.get("per_topic"), list)
            and len(v["per_topic"]) == len(topics)
            and all(x is None or (isinstance(x, (int, float)) and not isinstance(x, bool)) for x in v["per_topic"])
            and (v.get("summary") is None or isinstance(v.get("summary"), (int, float)))
            and isinstance(v.get("agg"), str)
            and v.get("direction") in ("higher", "lower", "none")
            and (v.get("unscorable") is None or isinstance(v.get("unscorable"), str))
        )
        need(ok, f"the values of {label} are malformed (one per topic, with summary, agg, direction)")


def changed(record: BaselineRecord, qrels_sha256: str | None, options: Any, labels: Sequence[str]) -> str | None:
    """What differs between ``record`` and this gate, as the end of one line; None if nothing.

    ``qrels_sha256`` None: not checked yet (the settings, version and measures are checked
    before any input is read)."""
    from ..version import VERSION

    doc = record.doc
    if doc["ireval"] != VERSION:
        return f"recorded by ireval {doc['ireval']}, this is ireval {VERSION}"
    now = settings_of(options)
    for key, option in SETTINGS.items():
        if doc["settings"][key] != now[key]:
            return f"recorded with {option} {_shown(doc['settings'][key])}, this gate uses {option} {_shown(now[key])}"
    for label in labels:
        if label not in doc["values"]:
            have = ", ".join(doc["values"]) or "none"
            return f"has no {label} (recorded: {have})"
    if qrels_sha256 is not None and doc["qrels"]["sha256"] != qrels_sha256:
        return (
            f"recorded against qrels with SHA-256 {doc['qrels']['sha256'][:12]}..., "
            f"these qrels have {qrels_sha256[:12]}..."
        )
    return None


def _shown(v: Any) -> str:
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "on" if v else "off"
    return str(v)


def refusal(record: BaselineRecord, what: str) -> InputError:
    return InputError(record.path, what + REBASELINE)
