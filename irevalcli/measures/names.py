"""Measure-name grammar: ``-m`` arguments -> the measures to compute.

trec_eval's rules, restated:

* ``NAME[.PARAMS]`` splits at the first dot; ``NAME.`` (a dot and nothing after
  it) is an error.
* ``NAME`` may be a nickname (``official``, ``all_trec``, ``set``, ...) that marks
  a list of measures; parameters on a nickname are ignored.
* Only the first parameter string given for a measure is used, and it also
  applies when the measure is marked through a nickname.
* Output order is the registry's order, not the command line's (trec text keeps it; the
  other formats follow the order asked, :func:`asked_order`).

ireval departs from trec_eval in two places, both refusals or widenings of input trec_eval
reads wrongly: one ``-m`` argument may hold several measures separated by blanks
(``-m 'ndcg_cut.10 map'``, as ir_measures reads it; :func:`split_specs`), and parameters on
a measure or nickname that takes none (``recip_rank.10``) are an error naming the measure
probably meant, where trec_eval drops them silently (``te_init_meas_s_double`` never looks
at the parameter string).

ireval also accepts the output labels as input (``P_5``, ``ndcg_cut_10``,
``iprec_at_recall_0.10``, ``utility_2,-1,0,0``): they mean ``P.5`` and so on.
"""

from __future__ import annotations

import difflib
import itertools
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import MeasureParamError, UnknownMeasureError
from .catalog import load
from .registry import FORMAT_NICKNAMES, NICKNAMES, Measure, Params
from .spellings import dotted_pattern

if TYPE_CHECKING:  # (aliases is imported when a name is not trec_eval's)
    from .aliases import Friendly

# C's isspace, not Unicode whitespace: atol/atof skip exactly these
_LONG_PREFIX = re.compile(r"^[ \t\n\v\f\r]*[+-]?[0-9]+")
_DOUBLE_PREFIX = re.compile(r"^[ \t\n\v\f\r]*[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?")
LONG_MAX = 2**63 - 1


@dataclass(frozen=True)
class Request:
    """One measure to compute, with its parameters and output labels."""

    measure: Measure
    params: Params
    label: str | None = None  # a friendly name's output label: the spelling as typed

    @property
    def labels(self) -> list[str]:
        if self.label is not None:
            return [self.label]
        return self.measure.labels(self.params)


# C's strtod reads hexadecimal floats (0x1p3 = 8), atol stops at the x (0x5 = 0); ireval
# refuses them rather than guess which the user meant
_HEX = re.compile(r"^[ \t\n\v\f\r]*[+-]?0[xX]")


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
    m = _DOUBLE_PREFIX.match(text)
    if not m:
        raise MeasureParamError(f"{spec}: {what} '{text}' is not a number")
    value = float(m.group(0))
    if not math.isfinite(value):
        raise MeasureParamError(f"{spec}: {what} '{text}' is out of range")
    return value


def parse_params(meas: Measure, text: str, spec: str) -> Params:
    """Parse a parameter string the way the measure's kind does in trec_eval."""
    kind = meas.params
    if kind == "none":
        # trec_eval ignores parameters on a measure that takes none (recip_rank.10 is plain MRR);
        # ireval refuses them and names the measure the user probably meant
        raise MeasureParamError(f"{spec}: {meas.name} takes no parameters{_meant_instead(meas.name, text)}")
    items = text.split(",")
    if kind == "long_cutoffs":
        cut = sorted(_atol(t, spec, "cutoff") for t in items)
        if cut[0] <= 0:
            raise MeasureParamError(f"{spec}: cutoff {cut[0]} is not a positive integer")
        for a, b in itertools.pairwise(cut):
            if a == b:
                raise MeasureParamError(f"{spec}: cutoff {a} is given twice")
        return Params(tuple(cut), text)
    if kind == "double_cutoffs":
        dcut = sorted(_atof(t, spec, "cutoff") for t in items)
        for x, y in itertools.pairwise(dcut):
            if x == y:
                raise MeasureParamError(f"{spec}: cutoff {x:g} is given twice")
        return Params(tuple(dcut), text)
    if kind == "double_params":
        vals = tuple(_atof(t, spec, "parameter") for t in items)
        if meas.check_params is not None:
            problem = meas.check_params(vals)
            if problem:
                raise MeasureParamError(f"{spec}: {problem}")
        return Params(vals, text)
    if kind == "pairs":
        return Params(_parse_pairs(text, spec), text)
    raise AssertionError(kind)  # pragma: no cover


def _parse_pairs(text: str, spec: str) -> tuple[tuple[str, float], ...]:
    """``k=v,k=v``: trec_eval refuses an empty item, ``==`` and an item without ``=``."""
    pairs = []
    for item in text.split(","):
        key, eq, val = item.partition("=")
        if not eq or key == "" or "=" in val:
            raise MeasureParamError(f"{spec}: malformed parameter '{item}' (expected key=value pairs, e.g. 1=3,2=9)")
        if re.fullmatch(r"[+-]?[0-9]+", key) and abs(int(key)) > LONG_MAX:
            raise MeasureParamError(f"{spec}: level '{key}' is out of range")
        pairs.append((key, _atof(val, spec, f"value of '{key}'")))
    return tuple(pairs)


def _meant_instead(name: str, text: str) -> str:
    """`` (did you mean 'recip_rank_cut.10' or 'RR@10'?)`` for ``recip_rank.10``: the measure's
    cutoff form in trec_eval's syntax and in ir_measures' (or another library's) spelling, each
    offered only if it resolves to that measure at that cutoff; else a pointer to the bare name."""
    bare = f"; write -m {name}"
    if not re.fullmatch(r"[0-9]+", text) or int(text) <= 0:
        return bare
    offers: list[str] = []
    registry = load()
    cut = f"{name}_cut"
    if cut in registry and registry[cut].params == "long_cutoffs":
        offers.append(f"{cut}.{text}")
    from .aliases import FAMILIES, parse

    styles = ("ir_measures", "ranx", "ireval", "tf-ranking", "elasticsearch")
    for style in styles:  # one friendly spelling, from the library listed first
        for fam in FAMILIES.values():
            if fam.style != style or not {name, cut} & set(fam.roots):
                continue
            spelled = f"{fam.name}@{text}"
            try:
                f = parse(spelled)
            except MeasureParamError:
                continue
            if f is not None and f.target.root in (name, cut) and f.target.view is None:
                offers.append(spelled)
                break
        if len(offers) > (cut in registry):
            break
    if not offers:
        return bare
    return " (did you mean " + " or ".join(f"'{o}'" for o in offers) + "?)"


def label_form(name: str, registry: dict[str, Measure]) -> tuple[Measure, str] | None:
    """``ndcg_cut_10`` -> (ndcg_cut, "10"): an output label typed as input."""
    best: tuple[Measure, str] | None = None
    for root, meas in registry.items():
        if meas.params == "none" or not name.startswith(root + "_"):
            continue
        rest = name[len(root) + 1 :]
        if not rest:
            continue
        try:
            parse_params(meas, rest, name)
        except MeasureParamError:
            continue
        if best is None or len(root) > len(best[0].name):
            best = (meas, rest)
    return best


def suggest(name: str, registry: dict[str, Measure]) -> str:
    """`` (did you mean 'ROOT'?)`` for a bare measure or nickname name, else ``""``."""
    pool = list(registry) + list(NICKNAMES)
    lowered = {p.lower(): p for p in pool}
    close = [lowered[name.lower()]] if name.lower() in lowered else []
    close = close or difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


class Suggester:
    """What an unknown ``-m`` spelling most likely meant, as a whole spelling that resolves.

    Each rule repairs one kind of slip; a candidate is offered only if it resolves:

    * several measures in one argument (``map,ndcg``): ``-m map -m ndcg``;
    * the dot before the parameters missing or mistyped (``ndcg_cut10``, ``P10``,
      ``ndcg_cut,10``, ``ndcg_cut:10``, ``ndcg_cut@10``): ``ndcg_cut.10``;
    * the wrong case (``MAP``, ``p.10``, ``NDCG_CUT.10``) or ``-`` for ``_`` (``ndcg-cut.10``);
    * an ir_measures or ranx name in the wrong case (``p@10``, ``ap@100``);
    * a misspelt name with its parameters kept (``ndgc_cut.10``).
    """

    _SEP = re.compile(r"^(?P<root>[A-Za-z][A-Za-z_-]*?)_?[:,@=;/ ]?(?P<rest>[0-9][0-9.,=+-]*)$")

    def __init__(self, registry: dict[str, Measure], *, rel_format: str, compat: str) -> None:
        self.registry = registry
        self.rel_format = rel_format
        self.compat = compat
        self.roots = list(registry) + list(NICKNAMES)
        self.lowered = {p.lower(): p for p in self.roots}

    def hint(self, spec: str) -> str:
        """`` (did you mean '...'?)`` or ``""``."""
        if "," in spec.partition(".")[0]:
            parts = [p.strip() for p in spec.split(",")]
            if len(parts) > 1 and all(p and self._resolves(p) for p in parts):
                meant = " ".join(f"-m {p}" for p in parts)
                return f" (did you mean '{meant}'? a comma separates parameters, not measures)"
        for cand in self.candidates(spec):
            if cand != spec and self._resolves(cand):
                return f" (did you mean '{cand}'?)"
        name = spec.partition(".")[0]
        return suggest(name, self.registry)

    def candidates(self, spec: str) -> Iterable[str]:
        name, dot, rest = spec.partition(".")
        bases = [spec] if "-" not in name else [spec, name.replace("-", "_") + dot + rest]
        for base in bases:
            yield base
            yield from self._recase(base)
            sep = self._sep(base)
            if sep:
                yield sep
                yield from self._recase(sep)
            yield from self._friendly_case(base)
            yield from self._misspelt(base)
            if sep:
                yield from self._misspelt(sep)

    def _sep(self, spec: str) -> str | None:
        """``ndcg_cut10`` / ``ndcg_cut:10`` -> ``ndcg_cut.10`` (the root must be a measure)."""
        m = self._SEP.match(spec)
        if not m:
            return None
        root = m.group("root").rstrip("_")
        root = root if root in self.registry else self.lowered.get(root.lower())
        if root is None:
            return None
        return f"{root}.{m.group('rest')}"

    def _recase(self, spec: str) -> Iterable[str]:
        name, dot, rest = spec.partition(".")
        if name.lower() in self.lowered:
            yield self.lowered[name.lower()] + dot + rest

    def _friendly_case(self, spec: str) -> Iterable[str]:
        """``p@10`` -> ``P@10``: an ir_measures or ranx family name in the wrong case."""
        m = re.match(r"^([A-Za-z_]+)(.*)$", spec)
        if not m or m.group(2)[:1] not in ("@", "(", ""):
            return
        from .aliases import FAMILIES

        lowered: dict[str, str] = {}
        for fam in FAMILIES:
            lowered.setdefault(fam.lower(), fam)
        family = lowered.get(m.group(1).lower())
        if family is not None:
            yield family + m.group(2)

    def _misspelt(self, spec: str) -> Iterable[str]:
        name, dot, rest = spec.partition(".")
        for close in difflib.get_close_matches(name, self.roots, n=2, cutoff=0.75):
            yield close + dot + rest

    def _resolves(self, spec: str) -> bool:
        try:
            resolve([spec], rel_format=self.rel_format, compat=self.compat, hints=False)
        except (UnknownMeasureError, MeasureParamError):
            return False
        return True


def resolve(  # noqa: C901  debt: one branch per spelling form
    specs: Sequence[str],
    *,
    rel_format: str = "qrels",
    default: Iterable[str] = ("official",),
    compat: str = "10.0",
    hints: bool = True,
) -> list[Request]:
    """The measures selected by ``-m`` arguments, in output order."""
    everything = load()
    registry = {k: v for k, v in everything.items() if compat in v.versions}
    absent = {k for k in everything if k not in registry}  # measures this trec_eval version lacks
    specs = split_specs(specs) or list(default)
    marked: set[str] = set()
    param_text: dict[str, tuple[str, str]] = {}  # root -> (params, the spec that gave them)
    friendly: dict[str, Friendly] = {}  # label -> friendly name (ir_measures, ranx, ireval syntax)
    for spec in specs:
        if RANX_RBP.match(spec):  # ranx's rbp.95: an error in trec_eval's syntax
            f = parse_friendly(spec)
            if f is not None:
                friendly.setdefault(spec, f)
                continue
        name, dot, text = spec.partition(".")
        if dot and text == "":
            raise MeasureParamError(f"{spec}: a '.' must be followed by parameters (e.g. P.5,10)")
        if name in NICKNAMES:
            if dot:  # trec_eval drops them; they would silently mean nothing
                raise MeasureParamError(f"{spec}: '{name}' is a nickname and takes no parameters; write -m {name}")
            marked.update(m for m in NICKNAMES[name] if m in registry)
            continue
        if name in registry:
            marked.add(name)
            if dot:
                param_text.setdefault(name, (text, spec))
            continue
        label = label_form(spec, registry)
        if label is not None:
            meas, text = label
            marked.add(meas.name)
            param_text.setdefault(meas.name, (text, spec))
            continue
        if name in absent or name.split("_")[0] in absent:
            raise UnknownMeasureError(f"measure '{spec}' does not exist in trec_eval {compat} (--compat {compat})")
        f = parse_friendly(spec)
        if f is not None:
            friendly.setdefault(spec, f)
            continue
        hint = Suggester(registry, rel_format=rel_format, compat=compat).hint(spec) if hints else ""
        raise UnknownMeasureError(f"unknown measure '{spec}'{hint}; 'ireval measures' lists them")

    requests = []
    for root, meas in registry.items():
        if root not in marked:
            continue
        if rel_format not in meas.rel_formats:
            needs = " or ".join(f"-R {f}" for f in sorted(meas.rel_formats))
            nick = FORMAT_NICKNAMES.get(rel_format)
            extra = f"; with -R {rel_format} use -m {nick}" if nick else ""
            raise MeasureParamError(
                f"measure '{root}' cannot be computed from -R {rel_format} judgements (it needs {needs}){extra}"
            )
        if root in param_text:
            text, spec = param_text[root]
            params = parse_params(meas, text, spec)
        else:
            params = Params(meas.default, None)
        requests.append(Request(meas, params))
    if friendly:
        requests = _with_friendly(requests, friendly, registry, rel_format, compat)
    return requests


_OPEN, _CLOSE = "({[", ")}]"
_BLANKS = " \t\n\v\f\r"  # C's isspace (str.isspace would also split at \x1c..\x1f and Unicode spaces)


def split_specs(specs: Iterable[str]) -> list[str]:
    """Every ``-m`` argument split into its measures: ``'ndcg_cut.10 map'`` is ``ndcg_cut.10``
    and ``map``, as ir_measures reads a measure list (so a script's ``-m "$MEASURES"`` keeps
    them all), in every spelling.

    Blanks separate measures except inside parentheses, braces, brackets or quotes
    (``nDCG(gains={0:1, 1:4})@10``) and next to a comma: trec_eval reads ``P.5, 10`` as
    ``P.5,10`` (``atol`` skips the blank), so that argument is kept whole, byte for byte. An
    argument that is all blanks is kept as it is (an unknown measure, as before)."""
    out: list[str] = []
    for spec in specs:
        if not spec.strip(_BLANKS):
            out.append(spec)
            continue
        parts: list[str] = []
        cur: list[str] = []
        depth, quote = 0, ""
        i, n = 0, len(spec)
        while i < n:
            ch = spec[i]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "'\"":
                quote = ch
            elif ch in _OPEN:
                depth += 1
            elif ch in _CLOSE:
                depth = max(depth - 1, 0)
            elif ch in _BLANKS and depth == 0:
                j = i
                while j < n and spec[j] in _BLANKS:
                    j += 1
                before = "".join(cur).rstrip(_BLANKS)
                if before.endswith(",") or (j < n and spec[j] == ","):
                    cur.append(spec[i:j])  # "P.5, 10": one measure, as trec_eval reads it
                elif cur:
                    parts.append("".join(cur))
                    cur = []
                i = j
                continue
            cur.append(ch)
            i += 1
        if cur:
            parts.append("".join(cur))
        out.extend(parts)
    return out


def asked_order(specs: Sequence[str], *, rel_format: str = "qrels", compat: str = "10.0") -> dict[str, int]:
    """Output label -> the place the user asked for it: the index of the first measure (after
    :func:`split_specs`) that gives the label. The formats other than trec text list measures
    in this order (``-m ndcg_cut.10 -m map``: ndcg_cut_10, then map); a measure's own labels
    (its cutoffs, a nickname's members) keep their order. Labels of the measures' roots are
    keyed too (``root:NAME``), for output labels a request does not list in advance."""
    order: dict[str, int] = {}
    for i, spec in enumerate(split_specs(specs)):
        for r in resolve([spec], rel_format=rel_format, compat=compat, hints=False):
            for label in r.labels:
                order.setdefault(label, i)
            order.setdefault(f"root:{r.measure.name}", i)
    return order


def parse_friendly(spec: str) -> Friendly | None:
    """An ir_measures, ranx or ireval spelling (irevalcli.measures.aliases, imported when needed)."""
    from .aliases import parse

    return parse(spec)


# ranx's rbp.95 (rbp.NN-lN): the spellings declared ``dotted``, which trec_eval's syntax would read
# as a measure and its parameters
RANX_RBP = dotted_pattern()


def _with_friendly(
    requests: list[Request], friendly: dict[str, Friendly], registry: dict[str, Measure], rel_format: str, compat: str
) -> list[Request]:
    """Add the friendly names' requests; each sorts after its measure's trec_eval request."""
    from ._util import OptParams
    from .aliases import wrap

    order = {root: i for i, root in enumerate(registry)}
    keyed = [((order[r.measure.name], 0, 0), r) for r in requests]
    for n, (label, f) in enumerate(friendly.items()):
        root = f.target.root
        if root not in registry:
            if compat != "10.0":
                raise UnknownMeasureError(
                    f"measure '{label}' ({root}) does not exist in trec_eval {compat} (--compat {compat})"
                )
            raise UnknownMeasureError(f"measure '{label}' maps to '{root}', which is not available")  # pragma: no cover
        meas = registry[root]
        if rel_format not in meas.rel_formats:
            needs = " or ".join(f"-R {fmt}" for fmt in sorted(meas.rel_formats))
            raise MeasureParamError(
                f"measure '{label}' cannot be computed from -R {rel_format} judgements (it needs {needs})"
            )
        params = OptParams(f.target.values or meas.default, label, f.target.opts)
        keyed.append(((order[root], 1, n), Request(wrap(meas, f.target), params, label)))
    keyed.sort(key=lambda kr: kr[0])
    return [r for _, r in keyed]


def first_parameters(specs: Sequence[str]) -> list[str]:
    """trec_eval's rule for ``-m P.5 -m P.10``: each cutoff measure keeps the first parameters
    given, the later specs are dropped (see :func:`merge_repeated_cutoffs` for the note)."""
    merged, notes = merge_repeated_cutoffs(specs)
    kept = {m: first for first, _ignored, m in notes}
    return [kept.get(spec, spec) for spec in merged]


def merge_repeated_cutoffs(specs: Sequence[str]) -> tuple[list[str], list[tuple[str, str, str]]]:
    """``-m P.5 -m P.10``: trec_eval keeps the first parameters given for a measure and
    ignores the later ones. Returns (``specs`` with each cutoff measure's later parameters
    merged into its first spec, e.g. ``["P.5,10"]``; and for each measure whose later
    parameters add cutoffs, (the first spec, the specs ignored, the merged spec)), for the
    output formats free to compute them all and for the note that says so."""
    registry = load()
    out: list[str] = []
    first: dict[str, int] = {}  # root -> index in out
    values: dict[str, list[float]] = {}
    ignored: dict[str, list[str]] = {}
    for spec in specs:
        name, _dot, text = spec.partition(".")
        meas = registry.get(name)
        if meas is None:
            label = label_form(spec, registry)
            if label is not None:
                meas, text = label
        if meas is None or not text or RANX_RBP.match(spec) or meas.params not in ("long_cutoffs", "double_cutoffs"):
            out.append(spec)
            continue
        try:
            cuts = list(parse_params(meas, text, spec).values)
        except MeasureParamError:
            out.append(spec)  # resolve() reports it
            continue
        root = meas.name
        if root not in first:
            first[root] = len(out)
            values[root] = cuts
            out.append(spec)
            continue
        new = [c for c in cuts if c not in values[root]]
        values[root] += new
        if new:
            ignored.setdefault(root, []).append(spec)
    notes = []
    for root, later in ignored.items():
        shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in sorted(values[root]))
        merged = f"{root}.{shown}"
        notes.append((out[first[root]], " ".join(later), merged))
        out[first[root]] = merged
    return out, notes
