"""``ireval gate``: check a candidate run against floors and a baseline, for CI.

Exit codes: 0 every check passed; 1 a quality check failed (:class:`GateFailed`,
raised after the report is written); 2 usage or input errors, as everywhere.

What the gate decides (the checks, their verdicts) is :mod:`irevalcli.analysis.gate`;
this module reads the options and the TOML config into a
:class:`~irevalcli.analysis.gate.GateSpec`, and renders the report as a table
(plain or rich), JSON, Markdown or JUnit XML.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import click

from ..analysis.compare import comparable_labels
from ..analysis.gate import KINDS, OPTION_OF, Check, GateReport, GateSpec, labels_in, make_check, run_gate
from ..analysis.stats import INTERVAL_NAMES, INTERVALS, MAX_RESAMPLES, TESTS
from ..errors import GateFailed, InputError, UsageError
from ..output.cells import markdown_cell
from ..output.files import no_short_output_option
from ..output.tables import (
    Table,
    dump_json,
    fmt_p,
    fmt_value,
    input_notes,
    paired_test_text,
    render_markdown,
    render_plain,
    render_rich,
    short,
    stdout_is_terminal,
)
from .options import (
    REL_LEVEL_HELP,
    Decimal,
    Integer,
    debug_option,
    engine_options,
    measure_option,
    output_option,
    probability,
    rel_level_option,
    remote_config_option,
    ties_option,
)

GATE_FORMATS = ("table", "json", "markdown", "junit")
CONFIG_KEYS = (
    "qrels",
    "run",
    "baseline",
    "measures",
    "min",
    "max_drop",
    "max_drop_rel",
    "alpha",
    "test",
    "seed",
    "permutations",
    "level_for_rel",
    "ties",
    "non_inferior",
    "max_losers",
    "interval",
    "confidence",
    "bootstrap",
    "min_judged",
)


def parse_cli_check(kind: str, text: str) -> Check:
    spec, eq, value = text.rpartition("=")
    option = OPTION_OF[kind]
    if not eq or not spec or not value:
        example = {
            "min": "map=0.25",
            "max_drop": "map=0.01",
            "max_drop_rel": "ndcg_cut.10=0.02",
            "non_inferior": "ndcg_cut.10=0.02",
            "max_losers": "map=3@0.05",
            "min_judged": "10=0.9",
        }[kind]
        raise UsageError(f"{option} {text}: expected MEASURE=VALUE, e.g. {option} {example}")
    return make_check(kind, spec, value, f"{option} {text}")


def _flatten(table: dict[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    """TOML reads the bare key ``ndcg_cut.10 = 0.5`` as a table ``ndcg_cut`` holding ``10``:
    join nested keys back into the dotted measure name."""
    out: list[tuple[str, Any]] = []
    for key, value in table.items():
        name = f"{prefix}.{key}" if prefix else key
        if isinstance(value, dict):
            out.extend(_flatten(value, name))
        else:
            out.append((name, value))
    return out


SHARED_KEYS = (
    "alpha",
    "test",
    "seed",
    "permutations",
    "level_for_rel",
    "ties",
    "interval",
    "confidence",
    "bootstrap",
)
BLOCK_KEYS = ("name", "qrels", "run", "candidate", "baseline", "measures", *KINDS)


def apply_config(spec: GateSpec, path: str, *, allow_remote: bool = False) -> None:  # noqa: C901  debt: one branch per TOML key
    """Fill ``spec`` from a config file; the paths in it resolved by :func:`resolve_config_path`.
    With ``[[collection]]`` blocks (a suite), each block fills a spec of its own in
    ``spec.collections``; the shared options stay at the top."""
    from ..io.config import read_config

    doc, sha = read_config(path)
    spec.config = {"path": path, "sha256": sha}
    unknown = [k for k in doc if k not in (*CONFIG_KEYS, "collection")]
    if unknown:
        raise InputError(path, f"unknown key '{unknown[0]}' (known: {', '.join(CONFIG_KEYS)}, collection)")
    if "collection" not in doc:
        _fill(spec, doc, path, allow_remote)
        return
    blocks = doc["collection"]
    if not isinstance(blocks, list) or not blocks or not all(isinstance(b, dict) for b in blocks):
        raise InputError(path, "'collection' must be [[collection]] blocks (name, qrels, run, baseline, checks)")
    inside = [k for k in doc if k not in (*SHARED_KEYS, "collection")]
    if inside:
        raise InputError(
            path, f"'{inside[0]}' belongs inside each [[collection]] block (at the top: {', '.join(SHARED_KEYS)})"
        )
    _fill(spec, doc, path, allow_remote)
    names: list[str] = []
    for i, block in enumerate(blocks, start=1):
        name = block.get("name")
        if not isinstance(name, str) or not name.strip():
            raise InputError(path, f"[[collection]] block {i} needs a name (a non-empty string)")
        if name in names:
            raise InputError(path, f"[[collection]] '{name}' is named twice; give each block its own name")
        names.append(name)
        where = f"[[collection]] '{name}': "
        bad = [k for k in block if k not in BLOCK_KEYS]
        if bad:
            raise InputError(path, f"{where}unknown key '{bad[0]}' (known: {', '.join(BLOCK_KEYS)})")
        if "run" in block and "candidate" in block:
            raise InputError(path, f"{where}give the run as 'run' or 'candidate', not both")
        sub = dict(block)
        sub.pop("name")
        if "candidate" in sub:
            sub["run"] = sub.pop("candidate")
        b = GateSpec(config=spec.config)
        _fill(b, sub, path, allow_remote, where=where, source=f"{path} [[collection]] '{name}' ")
        for key in ("qrels", "run"):
            if getattr(b, key) is None:
                raise InputError(path, f"{where}no '{key}'")
        if not b.checks:
            raise InputError(path, f"{where}nothing to check: give [collection.min], [collection.max_drop], ...")
        relative = [c for c in b.ordered_checks() if c.kind not in ("min", "min_judged")]
        if relative and b.baseline is None:
            raise InputError(path, f"{where}{relative[0].source}: {_needs(relative[0])} needs a 'baseline'")
        spec.collections.append((name, b))
    ks = {c.spec for _, b in spec.collections for c in b.checks.values() if c.kind == "min_judged"}
    if len(ks) > 1:
        shown = ", ".join(sorted(k.partition(".")[2] for k in ks))
        raise InputError(path, f"[min_judged] gives {len(ks)} depths across the collections ({shown}); give one K")


def _fill(  # noqa: C901  debt: one branch per TOML key
    spec: GateSpec, doc: dict[str, Any], path: str, allow_remote: bool, *, where: str = "", source: str | None = None
) -> None:
    """The keys of one table of a config file (the top, or a [[collection]] block) into ``spec``."""
    from ..io.config import resolve_config_path

    source = f"{path} " if source is None else source

    def string(key: str) -> str:
        v = doc[key]
        if not isinstance(v, str) or not v:
            raise InputError(path, f"{where}'{key}' must be a non-empty string, got {v!r}")
        return v

    for key in ("qrels", "run", "baseline"):
        if key in doc:
            p = string(key)
            near = resolve_config_path(p, path, key, allow_remote=allow_remote)
            if key == "qrels" and not os.path.exists(near):
                from ..io.irds import is_dataset_id

                if is_dataset_id(p):  # an ir_datasets id, not a file beside the config
                    near = p
            setattr(spec, key, near)
    if "test" in doc:
        t = string("test")
        if t not in TESTS:
            raise InputError(path, f"'test' must be one of {', '.join(TESTS)}, got '{t}'")
        spec.test = t
    if "ties" in doc:
        t = string("ties")
        from ..core.table import TIE_RULES

        if t not in TIE_RULES:
            raise InputError(path, f"'ties' must be one of {', '.join(TIE_RULES)}, got '{t}'")
        spec.ties = t
    if "interval" in doc:
        t = string("interval")
        if t not in INTERVALS:
            raise InputError(path, f"'interval' must be one of {', '.join(INTERVALS)}, got '{t}'")
        spec.interval = t
    if "confidence" in doc:
        a = doc["confidence"]
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 < a < 1:
            raise InputError(path, f"'confidence' must be a number between 0 and 1, got {a!r}")
        spec.confidence = float(a)
    if "alpha" in doc:
        a = doc["alpha"]
        if isinstance(a, bool) or not isinstance(a, (int, float)) or not 0 < a < 1:
            raise InputError(path, f"'alpha' must be a number between 0 and 1, got {a!r}")
        spec.alpha = float(a)
    for key, low, high in (
        ("seed", 0, None),
        ("permutations", 1, MAX_RESAMPLES),
        ("bootstrap", 1, MAX_RESAMPLES),
        ("level_for_rel", None, None),
    ):
        if key in doc:
            v = doc[key]
            if (
                isinstance(v, bool)
                or not isinstance(v, int)
                or (low is not None and v < low)
                or (high is not None and v > high)
            ):
                need = "an integer" if low is None else f"an integer >= {low}"
                if high is not None:
                    need = f"an integer from {low} to {high}"
                raise InputError(path, f"'{key}' must be {need}, got {v!r}")
            setattr(spec, "rel_level" if key == "level_for_rel" else key, v)
    if "measures" in doc:
        m = doc["measures"]
        if isinstance(m, str):
            m = [m]
        if not isinstance(m, list) or not all(isinstance(x, str) and x for x in m):
            raise InputError(path, f"{where}'measures' must be a list of measure names, got {doc['measures']!r}")
        from ..measures.names import split_specs

        m = split_specs(m)  # "map P.10": two measures, as on the command line
        for name in m:
            labels_in(name, f"'measures' {name}", path)
        spec.measures = list(m)
    for kind in KINDS:
        if kind not in doc:
            continue
        table = doc[kind]
        if not isinstance(table, dict):
            raise InputError(path, f"{where}'{kind}' must be a table of MEASURE = VALUE, e.g. [{kind}] map = 0.2")
        for measure, value in _flatten(table):
            check = make_check(kind, measure, value, f"{source}[{kind}] {measure}", file=path)
            if (kind, check.label) in spec.checks:
                raise InputError(
                    path,
                    f"{where}[{kind}] names {check.label} twice ({spec.checks[(kind, check.label)].spec} and {measure})",
                )
            spec.checks[(kind, check.label)] = check
    ks = [c.spec.partition(".")[2] for c in spec.checks.values() if c.kind == "min_judged"]
    if len(ks) > 1:
        raise InputError(path, f"{where}[min_judged] gives {len(ks)} depths ({', '.join(ks)}); give one K = FRACTION")


def build_spec(  # noqa: C901  debt: one branch per option kind
    files: Sequence[str],
    *,
    baseline: str | None,
    floors: Sequence[str],
    max_drop: Sequence[str],
    max_drop_rel: Sequence[str],
    measures: Sequence[str],
    alpha: float | None,
    non_inferior: Sequence[str] = (),
    max_losers: Sequence[str] = (),
    min_judged: Sequence[str] = (),
    interval: str | None = None,
    confidence: float | None = None,
    bootstrap: int | None = None,
    test: str | None,
    seed: int | None,
    permutations: int | None,
    rel_level: int | None,
    config: str | None,
    ties: str | None = None,
    allow_remote_config_paths: bool = False,
) -> GateSpec:
    """Config file first, then the command line on top (a check on the same measure replaces it)."""
    spec = GateSpec()
    if config is not None:
        apply_config(spec, config, allow_remote=allow_remote_config_paths)
    shared = (
        (alpha, "alpha"),
        (test, "test"),
        (seed, "seed"),
        (permutations, "permutations"),
        (rel_level, "rel_level"),
        (ties, "ties"),
        (interval, "interval"),
        (confidence, "confidence"),
        (bootstrap, "bootstrap"),
    )
    if spec.collections:
        named = [
            what
            for what, v in (
                ("[QRELS] RUN", files),
                ("--baseline", baseline),
                ("--min", floors),
                ("--max-drop", max_drop),
                ("--max-drop-rel", max_drop_rel),
                ("--non-inferior", non_inferior),
                ("--max-losers", max_losers),
                ("--min-judged", min_judged),
                ("-m", measures),
            )
            if v
        ]
        if named:
            raise UsageError(
                f"{named[0]}: {config} has [[collection]] blocks, which name every input and check; "
                "give them inside its blocks"
            )
        for v, attr in shared:
            if v is not None:
                setattr(spec, attr, v)
        for _, block in spec.collections:  # the shared options, the same in every block
            for _, attr in shared:
                setattr(block, attr, getattr(spec, attr))
        return spec
    if len(files) > 2:
        raise UsageError(f"expected [QRELS] RUN, got {len(files)} arguments; usage: ireval gate [OPTIONS] [QRELS] RUN")
    if len(files) == 2:
        spec.qrels, spec.run = files
    elif len(files) == 1:
        spec.run = files[0]
    if spec.run is None:
        raise UsageError("no run to check; usage: ireval gate [OPTIONS] [QRELS] RUN (or 'run' in --config)")
    if spec.qrels is None:
        raise UsageError("no qrels: give QRELS before RUN or 'qrels' in the --config file")
    if baseline is not None:
        spec.baseline = baseline
    for v, attr in shared:
        if v is not None:
            setattr(spec, attr, v)
    if measures:
        from ..measures.names import split_specs

        spec.measures = split_specs(measures)  # -m 'map P.10': two measures
    cli_checks: dict[tuple[str, str], Check] = {}
    given = (
        ("min", floors),
        ("max_drop", max_drop),
        ("max_drop_rel", max_drop_rel),
        ("non_inferior", non_inferior),
        ("max_losers", max_losers),
        ("min_judged", min_judged),
    )
    if len(min_judged) > 1:
        raise UsageError(
            f"--min-judged {min_judged[1]}: --min-judged is given twice (also --min-judged {min_judged[0]}); "
            "give one K=FRACTION"
        )
    for kind, texts in given:
        for text in texts:
            check = parse_cli_check(kind, text)
            key = (kind, check.label)
            if key in cli_checks:
                raise UsageError(
                    f"{check.source}: {OPTION_OF[kind]} is given twice for {check.label} "
                    f"(also {cli_checks[key].source})"
                )
            cli_checks[key] = check
    if min_judged:  # the command line's K replaces the config file's
        spec.checks = {key: c for key, c in spec.checks.items() if c.kind != "min_judged"}
    spec.checks.update(cli_checks)
    if not spec.checks:
        raise UsageError(
            "nothing to check: give --min, --max-drop, --max-drop-rel, --non-inferior, --max-losers or "
            "--min-judged (or [min], [max_drop], [max_drop_rel], [non_inferior], [max_losers], [min_judged] "
            "tables in a --config file)"
        )
    if spec.baseline is None:
        relative = [c for c in spec.ordered_checks() if c.kind not in ("min", "min_judged")]
        if relative:
            raise UsageError(
                f"{relative[0].source}: {_needs(relative[0])} needs a baseline: give --baseline RUN "
                "(or 'baseline' in the --config file)"
            )
    for m in spec.measures:  # report-only measures: check the names before reading any file
        comparable_labels(m)
    return spec


def _same(a: str, b: str) -> bool:
    """Whether two output paths name the same file (before either exists)."""
    return os.path.realpath(a) == os.path.realpath(b)


def _needs(check: Check) -> str:
    return "non-inferiority" if check.kind == "non_inferior" else "a drop"


# ---------------------------------------------------------------- formats

HEADERS = ("Check", "Value", "Baseline", "Diff", "p", "Verdict", "Why")
ALIGN = "lrrrrll"


def _judged_k(report: dict[str, Any]) -> int | None:
    """The K of judged@K shown beside every check (with a min_judged check), else None."""
    k = report["options"].get("judged_k")
    return None if k is None else int(k)


def _table(report: dict[str, Any], verdicts: dict[str, str] | None = None) -> Table:
    """The checks, a row each (failed ones red on a terminal); with min_judged, the
    candidate's judged@K after Value. Check names and reasons wrap on a narrow page."""
    k = _judged_k(report)
    headers, align = (HEADERS, ALIGN) if k is None else ((*HEADERS[:2], f"Judged@{k}", *HEADERS[2:]), "lrr" + ALIGN[2:])
    return Table(
        headers,
        _rows(report, verdicts),
        align,
        title=f"ireval gate: {_headline(report)}",
        notes=_notes(report),
        styles=["red" if c["verdict"] == "fail" else None for c in report["checks"]],
        fold=(0, len(headers) - 1),
    )


def _rows(report: dict[str, Any], verdicts: dict[str, str] | None = None) -> list[list[str]]:
    verdicts = verdicts or {"pass": "pass", "fail": "FAIL"}
    judged = _judged_k(report) is not None
    return [
        [
            c["name"],
            fmt_value(c["value"]),
            *([fmt_value(c["judged"])] if judged else []),
            fmt_value(c["baseline"]),
            fmt_value(c["diff"], "+.4f"),
            fmt_p(c["p_value"]),
            verdicts[c["verdict"]],
            c["reason"],
        ]
        for c in report["checks"]
    ]


def _headline(report: dict[str, Any]) -> str:
    n, k = report["checks_total"], report["checks_failed"]
    if k:
        return f"FAILED: {k} of {n} check{'s' if n != 1 else ''} failed"
    return f"passed: {n} check{'s' if n != 1 else ''}"


def _blocks(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The collections checked: a suite's [[collection]] blocks, or the one run (name None)."""
    inp = report["inputs"]
    if "collections" in inp:
        return list(inp["collections"])
    return [{"name": None, "qrels": inp["qrels"], "run": inp["run"], "baseline": inp["baseline"], "topics": None}]


def _notes(report: dict[str, Any]) -> list[str]:
    o = report["options"]
    blocks = _blocks(report)
    notes = []
    for b in blocks:
        n = report["topics"] if b["name"] is None else b["topics"]
        against = f" against {b['baseline']['path']}" if b["baseline"] else ""
        named = "" if b["name"] is None else f"{b['name']}: "
        notes.append(
            f"{named}{b['run']['path']}{against}, on the {n} topics judged in {b['qrels']['path']} "
            "(a topic without results scores 0)."
        )
    kinds = {c["kind"] for c in report["checks"]}
    if any(b["baseline"] for b in blocks) and (kinds & {"max_drop", "max_drop_rel"} or kinds <= {"min", "min_judged"}):
        test = paired_test_text(o)
        rule = (
            f"a drop beyond its tolerance fails only if p < {o['alpha']:g}"
            if o["alpha"] is not None
            else "a drop beyond its tolerance fails (no --alpha)"
        )
        if o.get("correction"):
            m = o["tests_corrected"]
            rule += f"; p Holm-corrected over the {m} drop test{'s' if m != 1 else ''} of every collection"
        notes.append(f"p: one-sided {test}, candidate worse than baseline; {rule}.")
    if any(c["kind"] == "non_inferior" for c in report["checks"]):
        how = f"{o['confidence'] * 100:g}% {INTERVAL_NAMES[o['interval']]} interval"
        if o["interval"] == "bootstrap":
            how += f" ({o['bootstrap']} resamples, seed {o['seed']})"
        notes.append(f"non-inferior: the {how} of the paired difference (better is +) must lie above -margin.")
    k = _judged_k(report)
    if k is not None:
        over = f"over {report['topics']} topics" if len(blocks) == 1 else "per collection"
        notes.append(f"Judged@{k}: the share of the run's top {k} judged (judged.{k}), the mean {over}.")
        if "unjudged_pairs" in report:
            notes.append(f"Unjudged top-{k} (qid, docno) pairs written: {report['unjudged_pairs']}.")
    for c in report["checks"]:
        if c["kind"] == "max_losers" and c["losers"]:
            lost = ", ".join(f"{t['qid']} {fmt_value(t['diff'], '+.4f')}" for t in c["losers"][:10])
            more = f" (and {len(c['losers']) - 10} more)" if len(c["losers"]) > 10 else ""
            named = "" if c.get("collection") is None else f"{c['collection']}: "
            notes.append(f"{named}Losers ({c['measure']}, by > {short(c['epsilon'])}): {lost}{more}")
    checked = {(c.get("collection"), c["measure"]) for c in report["checks"]}
    for m in report["measures"]:
        if (m.get("collection"), m["measure"]) not in checked:
            base = (
                f" (baseline {fmt_value(m['baseline'])}, {fmt_value(m['diff'], '+.4f')})"
                if m["baseline"] is not None
                else ""
            )
            named = "" if m.get("collection") is None else f"{m['collection']}: "
            notes.append(f"{named}{m['measure']}: {fmt_value(m['value'])}{base}")
    for b in blocks:
        n = report["topics"] if b["name"] is None else b["topics"]
        named = "" if b["name"] is None else f"{b['name']}: "
        notes += input_notes((b["run"], b["baseline"]), n, b["qrels"]["path"], named)
    base_src = report["inputs"].get("baseline")
    rec = base_src.get("record") if base_src else None
    if rec and rec["rebaselined"]:
        notes.append(f"{rec['path']}: its run {rec['run']} scored again (--allow-rebaseline): {rec['rebaselined']}")
    elif rec:
        notes.append(f"{rec['path']}: the baseline values recorded by ireval {rec['ireval']} (run {rec['run']})")
    return notes


def _sources(report: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Every input file with its SHA-256, named (in a suite, ``NAME run``, ...)."""
    out = []
    for b in _blocks(report):
        named = "" if b["name"] is None else f"{b['name']} "
        out += [(f"{named}{what}", b[what]) for what in ("qrels", "run", "baseline") if b[what]]
    if report["inputs"]["config"]:
        out.append(("config", report["inputs"]["config"]))
    return out


def format_table(report: dict[str, Any]) -> bytes:
    """The report as plain text (piped, in a CI log) within 80 columns: check names, reasons,
    the headline and the notes wrap at spaces (continuations of a note indented by two)."""
    import textwrap

    table = render_plain(_table(report), width=REPORT_WIDTH)
    head = textwrap.fill(f"ireval gate: {_headline(report)}", REPORT_WIDTH, subsequent_indent="  ")
    notes = [textwrap.fill(n, REPORT_WIDTH, subsequent_indent="  ", break_on_hyphens=False) for n in _notes(report)]
    return (head + "\n\n" + table + "\n" + "\n".join(notes) + "\n").encode("utf-8", "surrogateescape")


REPORT_WIDTH = 80  # the plain report's width, a terminal's


def format_rich(report: dict[str, Any], width: int | None = None) -> bytes:
    """The table for a terminal: the check names and reasons wrap at spaces to fit its width."""
    return render_rich(_table(report), width)


def format_markdown(report: dict[str, Any]) -> bytes:
    """For a pull-request comment or ``$GITHUB_STEP_SUMMARY``."""
    mark = "❌" if report["checks_failed"] else "✅"
    table = _table(report, {"pass": "✅ pass", "fail": "❌ **fail**"})
    out = [f"### {mark} ireval gate: {_headline(report)}\n\n", render_markdown(table), "\n"]
    out += [f"- {markdown_cell(n)}\n" for n in _notes(report)]
    out.append("\n<details><summary>inputs (SHA-256)</summary>\n\n")
    for what, src in _sources(report):
        out.append(f"- {markdown_cell(what)}: `{markdown_cell(src['path'])}` `{src['sha256']}`\n")
    out.append("\n</details>\n")
    return "".join(out).encode("utf-8", "surrogateescape")


_XML_INVALID = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with what XML 1.0 cannot hold written out: an undecodable byte of an id
    as ``\\xff``, a control character as ``\\x1b``; everything else unchanged."""

    def esc(m: re.Match[str]) -> str:
        o = ord(m.group(0))
        return f"\\x{o - 0xDC00:02x}" if 0xDC80 <= o <= 0xDCFF else (f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}")

    return _XML_INVALID.sub(esc, text)


def format_junit(report: dict[str, Any]) -> bytes:
    """JUnit XML: one test case per check, a failure element for each failed one.

    Ids and paths are data: characters XML 1.0 cannot hold are escaped (:func:`xml_text`),
    so the file always parses."""
    import xml.etree.ElementTree as ET

    n, k = str(report["checks_total"]), str(report["checks_failed"])
    root = ET.Element("testsuites", name="ireval gate", tests=n, failures=k, errors="0")
    suite = ET.SubElement(root, "testsuite", name="ireval gate", tests=n, failures=k, errors="0", skipped="0")
    props = ET.SubElement(suite, "properties")
    for what, src in _sources(report):
        if src:
            ET.SubElement(props, "property", name=xml_text(what), value=xml_text(src["path"]))
            ET.SubElement(props, "property", name=xml_text(f"{what}.sha256"), value=src["sha256"])
    for c in report["checks"]:
        case = ET.SubElement(suite, "testcase", classname=f"ireval.gate.{c['kind']}", name=xml_text(c["name"]))
        judged = f", judged@{c['judged_k']} {fmt_value(c['judged'])}" if c.get("judged_k") is not None else ""
        detail = (
            f"value {fmt_value(c['value'])}{judged}, baseline {fmt_value(c['baseline'])}, "
            f"diff {fmt_value(c['diff'], '+.4f')}, p {fmt_p(c['p_value'])}: {c['reason']}"
        )
        if c["verdict"] == "fail":
            failure = ET.SubElement(case, "failure", message=xml_text(c["reason"]), type="GateCheckFailed")
            failure.text = xml_text(detail)
        else:
            ET.SubElement(case, "system-out").text = xml_text(detail)
    ET.SubElement(suite, "system-out").text = xml_text("\n".join(_notes(report)))
    ET.indent(root)
    xml = ET.tostring(root, encoding="unicode")
    return ('<?xml version="1.0" encoding="UTF-8"?>\n' + xml + "\n").encode("utf-8", "surrogateescape")


def format_gate(report: GateReport | dict[str, Any], fmt: str, *, terminal: bool = False) -> bytes:
    if isinstance(report, GateReport):
        report = report.to_dict()
    if fmt == "table":
        return format_rich(report) if terminal else format_table(report)
    if fmt == "json":
        return dump_json(report)
    return {"markdown": format_markdown, "junit": format_junit}[fmt](report)


# ---------------------------------------------------------------- command


GATE_EPILOG = """\b
Examples:
  ireval gate qrels.txt new.txt --min map=0.25 --min ndcg_cut.10=0.4
  ireval gate qrels.txt new.txt --baseline prod.txt --max-drop map=0.01 --alpha 0.05
  ireval gate --config gate.toml new.txt --format markdown >> "$GITHUB_STEP_SUMMARY"
  ireval gate accept qrels.txt prod.txt -m map --output baseline.json
  ireval gate calibrate qrels.txt seed1.txt seed2.txt seed3.txt -m map

\b
Exit codes: 0 every check passed; 1 a quality check failed (a value that does
not exist fails too); 2 usage or input error (bad file, unknown measure, a run
or baseline sharing no topic with QRELS).
"""


GATE_SUBCOMMANDS = {
    "accept": "irevalcli.commands.gate_more:accept_command",
    "calibrate": "irevalcli.commands.gate_more:calibrate_command",
}


class GateCommand(click.Command):
    """``ireval gate``, which is ``ireval gate accept``/``calibrate`` when its first argument
    is one of those words (a QRELS file so named is given as ``./accept``); any other first
    argument is the check, parsed as always."""

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        if args and args[0] in GATE_SUBCOMMANDS:
            import importlib

            module, attr = GATE_SUBCOMMANDS[args[0]].split(":")
            sub: click.Command = getattr(importlib.import_module(module), attr)
            return sub.make_context(f"{info_name} {args[0]}", args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent=parent, **extra)

    def invoke(self, ctx: click.Context) -> Any:
        if ctx.command is not self:  # a subcommand's context, made above
            return ctx.command.invoke(ctx)
        return super().invoke(ctx)


@click.command(
    cls=GateCommand,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
    epilog=GATE_EPILOG,
)
@click.argument("files", metavar="[QRELS] RUN", nargs=-1)
@click.option(
    "--baseline",
    metavar="RUN",
    help="Run to compare with (needed by --max-drop and --max-drop-rel), or a record made by "
    "'ireval gate accept' (its values are used as recorded).",
)
@click.option(
    "--allow-rebaseline",
    "allow_rebaseline",
    is_flag=True,
    help="A --baseline record made with other qrels, settings or ireval version: score its run again "
    "instead of refusing it (exit 2).",
)
@click.option(
    "--min",
    "floors",
    multiple=True,
    metavar="MEASURE=VALUE",
    help="Fail if the run's mean is below VALUE (repeatable).",
)
@click.option(
    "--max-drop",
    "max_drop",
    multiple=True,
    metavar="MEASURE=DELTA",
    help="Fail if the run falls more than DELTA below the baseline (repeatable).",
)
@click.option(
    "--max-drop-rel",
    "max_drop_rel",
    multiple=True,
    metavar="MEASURE=FRACTION",
    help="Fail if the run falls more than FRACTION (0.02 or 2%; above 1 only with %) of the baseline's mean below it.",
)
@click.option(
    "--non-inferior",
    "non_inferior",
    multiple=True,
    metavar="MEASURE=MARGIN",
    help="Fail unless the lower bound of the interval of the paired difference (run - baseline, per topic) "
    "is above -MARGIN: the run is shown not worse by MARGIN or more (repeatable; recommended).",
)
@click.option(
    "--max-losers",
    "max_losers",
    multiple=True,
    metavar="MEASURE=N@EPSILON",
    help="Fail if more than N topics are worse than the baseline by more than EPSILON; the losers are "
    "listed (repeatable).",
)
@click.option(
    "--min-judged",
    "min_judged",
    multiple=True,
    metavar="K=FRACTION",
    help="Fail if less than FRACTION of the run's top K is judged (judged.K, the mean over the topics); "
    "judged@K is shown beside every check.",
)
@click.option(
    "--unjudged-out",
    "unjudged_out",
    metavar="FILE",
    help="Write the run's unjudged top-K pairs (K of --min-judged) to FILE as 'qid 0 docno -1' lines, "
    "as ireval pool writes them, atomically.",
)
@click.option(
    "--interval",
    type=click.Choice(INTERVALS),
    default=None,
    help="Interval for --non-inferior: paired bootstrap percentile or paired t [default: bootstrap].",
)
@click.option(
    "--confidence",
    type=Decimal(),
    default=None,
    callback=probability,
    metavar="LEVEL",
    help="Two-sided confidence level of the --non-inferior interval [default: 0.95].",
)
@click.option(
    "--bootstrap",
    type=Integer(min=1, max=MAX_RESAMPLES),
    default=None,
    metavar="N",
    help="Bootstrap resamples for --non-inferior [default: 10000; seeded by --seed].",
)
@measure_option("Also report this measure, without a check (repeatable).")
@click.option(
    "--alpha",
    type=Decimal(),
    default=None,
    callback=probability,
    help="A drop beyond its tolerance must also be significant at this level (one-sided paired test); "
    "one whose p-value cannot be computed fails.",
)
@click.option("--test", type=click.Choice(TESTS), default=None, help="Paired test for --alpha [default: t].")
@click.option(
    "--permutations",
    type=Integer(min=1, max=MAX_RESAMPLES),
    default=None,
    metavar="N",
    help="Random sign flips for --test randomization [default: 10000].",
)
@click.option(
    "--seed", type=Integer(min=0), default=None, metavar="N", help="Seed of the randomization test [default: 0]."
)
@rel_level_option(None, help=REL_LEVEL_HELP)
@ties_option(None, "; default docno, or 'ties' in --config")
@click.option(
    "--config",
    metavar="FILE",
    help="TOML file with qrels, run, baseline, measures, [min], [max_drop], [max_drop_rel], [non_inferior], "
    "[max_losers], [min_judged], test, alpha, or [[collection]] blocks (several collections, one verdict); "
    "command-line options override it.",
)
@remote_config_option
@click.option(
    "--format",
    "fmt",
    type=click.Choice(GATE_FORMATS),
    default=None,
    help="Report format (table: rich on a terminal, plain text otherwise) [default: table, or the one "
    "the --output name says].",
)
@output_option("Write the report to PATH atomically (default: stdout).")
@no_short_output_option("ireval gate")
@engine_options
@debug_option
def gate_command(
    files: tuple[str, ...],
    baseline: str | None,
    allow_rebaseline: bool,
    floors: tuple[str, ...],
    max_drop: tuple[str, ...],
    max_drop_rel: tuple[str, ...],
    non_inferior: tuple[str, ...],
    max_losers: tuple[str, ...],
    min_judged: tuple[str, ...],
    unjudged_out: str | None,
    interval: str | None,
    confidence: float | None,
    bootstrap: int | None,
    measures: tuple[str, ...],
    alpha: float | None,
    test: str | None,
    permutations: int | None,
    seed: int | None,
    rel_level: int | None,
    config: str | None,
    fmt: str | None,
    output: str | None,
    debug: bool,
    ties: str | None = None,
    engine: str = "local",
    scheduler: str | None = None,
    workers: int | None = None,
    allow_remote_config_paths: bool = False,
) -> None:
    """Check RUN against quality floors and a baseline; exit 1 if a check fails.

    Every judged topic of QRELS counts: a topic the run has no results for scores 0.
    """
    from ..output.files import check_not_input, check_output_path, format_for, is_stdout, write_output

    fmt = format_for(output, fmt, GATE_FORMATS, "table", command="ireval gate") or "table"
    if not is_stdout(output):  # refused before any work, not after it
        check_output_path(output)  # type: ignore[arg-type]
        check_not_input(output, [*files, baseline, config])
    if unjudged_out is not None:
        if unjudged_out == "-" or (output is not None and not is_stdout(output) and _same(unjudged_out, output)):
            what = "standard output" if unjudged_out == "-" else "--output"
            raise UsageError(f"--unjudged-out {unjudged_out}: cannot be {what}; give a file of its own")
        check_output_path(unjudged_out, option="--unjudged-out")
        check_not_input(unjudged_out, [*files, baseline, config], option="--unjudged-out")
    spec = build_spec(
        files,
        baseline=baseline,
        floors=floors,
        max_drop=max_drop,
        max_drop_rel=max_drop_rel,
        non_inferior=non_inferior,
        max_losers=max_losers,
        min_judged=min_judged,
        interval=interval,
        confidence=confidence,
        bootstrap=bootstrap,
        measures=measures,
        alpha=alpha,
        test=test,
        seed=seed,
        permutations=permutations,
        rel_level=rel_level,
        config=config,
        ties=ties,
        allow_remote_config_paths=allow_remote_config_paths,
    )
    spec.allow_rebaseline = allow_rebaseline
    for _, block in spec.collections:
        block.allow_rebaseline = allow_rebaseline
    named = [spec.qrels, spec.run, spec.baseline] + [
        p for _, b in spec.collections for p in (b.qrels, b.run, b.baseline)
    ]
    if not is_stdout(output):  # the inputs the config file names, before any work
        check_not_input(output, named)
    if unjudged_out is not None and spec.collections:
        raise UsageError(f"--unjudged-out {unjudged_out}: applies to one run, not a suite of [[collection]] blocks")
    if unjudged_out is not None:
        if spec.judged_check is None:
            raise UsageError(
                f"--unjudged-out {unjudged_out}: needs --min-judged K=FRACTION (or [min_judged] in the --config "
                "file) for the depth K"
            )
        check_not_input(unjudged_out, named, option="--unjudged-out")
    from ..engine.dask_engine import session

    with session(engine, scheduler, workers):  # --engine dask: one cluster for both runs
        report = run_gate(spec, engine, unjudged=unjudged_out is not None)
    terminal = output in (None, "-") and stdout_is_terminal()
    data = format_gate(report, fmt, terminal=terminal)
    if unjudged_out is not None:
        from ..output.files import write_files
        from .pool import Pool, pool_bytes

        pairs = pool_bytes(Pool(report.unjudged[0], report.unjudged[1], [], 0))
        if is_stdout(output):  # the file, and the report on standard output: one last output
            write_files([(unjudged_out, pairs, "--unjudged-out")], stdout=(data, fmt or ""))
        else:  # both files, all or nothing
            write_files([(output, data, "--output"), (unjudged_out, pairs, "--unjudged-out")])  # type: ignore[list-item]
    else:
        write_output(data, output, fmt)
    if not report.passed:
        names = ", ".join(c.name for c in report.failed())
        n = len(report.checks)
        raise GateFailed(f"gate failed: {report.checks_failed} of {n} check{'s' if n != 1 else ''} failed ({names})")
