"""The one ``-m`` grammar: arguments in every spelling -> the measures to compute.

A spec is read once, by :func:`read_spec` (trec_eval's syntax: a nickname, ``NAME[.PARAMS]``
or an output label) and else by :func:`parse_friendly` (the spellings other libraries give
a measure, declared with it in its family module, :mod:`.spellings`): ir_measures'
``Name[(key=value,...)][@cutoff]`` (``nDCG@10``, ``P(rel=2)@5``, ``AP``, ``RR@10``), which
ireval's own, TF-Ranking's and Elasticsearch's spellings share, and ranx's
``name[@k][-lN]`` (``ndcg@10``, ``map@100-l2``, ``rbp.95``). Where the library defines the
measure differently from trec_eval, the spelling decides; its output label is the spelling
as typed. :func:`resolve` turns specs into requests, ``ireval measures NAME`` describes
what :func:`read_spec` reads, and :func:`repeated_parameters` is the one rule for a
measure given parameters twice. Parameters are read by the measure's shape
(:class:`~.registry.ParamShape`).

trec_eval's rules, restated:

* ``NAME[.PARAMS]`` splits at the first dot; ``NAME.`` (a dot and nothing after
  it) is an error.
* ``NAME`` may be a nickname (``official``, ``all_trec``, ``set``, ...) that marks
  a list of measures; parameters on a nickname are ignored.
* Only the first parameter string given for a measure is used, and it also
  applies when the measure is marked through a nickname (trec text keeps this rule and
  says so; the other outputs compute every cutoff asked, :func:`repeated_parameters`).
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

import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Literal

from ..errors import MeasureParamError, UnknownMeasureError
from ..records import FrozenRecord
from .catalog import load
from .registry import FORMAT_NICKNAMES, LONG_MAX, NICKNAMES, Measure, Params, shown
from .spellings import FAMILIES, LIBRARIES, Family, Target, dotted_pattern


class Request(FrozenRecord):
    """One measure to compute, with its parameters and output labels."""

    __slots__ = ("label", "measure", "params")

    measure: Measure
    params: Params
    label: str | None  # a friendly name's output label: the spelling as typed

    def __init__(self, measure: Measure, params: Params, label: str | None = None) -> None:
        object.__setattr__(self, "measure", measure)
        object.__setattr__(self, "params", params)
        object.__setattr__(self, "label", label)

    @property
    def labels(self) -> list[str]:
        if self.label is not None:
            return [self.label]
        return self.measure.labels(self.params)


def parse_params(meas: Measure, text: str, spec: str) -> Params:
    """Parse a parameter string the way the measure's shape does in trec_eval."""
    if not meas.params.takes_values:
        # trec_eval ignores parameters on a measure that takes none (recip_rank.10 is plain MRR);
        # ireval refuses them and names the measure the user probably meant
        raise MeasureParamError(f"{spec}: {meas.name} takes no parameters{_meant_instead(meas.name, text)}")
    return meas.params.parse(meas, text, spec)


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
    if cut in registry and _parses(registry[cut], text):
        offers.append(f"{cut}.{text}")
    for style in LIBRARIES:  # one friendly spelling, from the library listed first
        for fam in FAMILIES.values():
            if fam.style != style or not {name, cut} & set(fam.roots):
                continue
            spelled = f"{fam.name}@{text}"
            try:
                f = parse_friendly(spelled)
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


def _parses(meas: Measure, text: str) -> bool:
    try:
        parse_params(meas, text, text)
    except MeasureParamError:
        return False
    return True


# ranx's rbp.95 (rbp.NN-lN): the spellings declared ``dotted``, which trec_eval's syntax would read
# as a measure and its parameters
RANX_RBP = dotted_pattern()


# ---- the friendly grammar: other libraries' spellings ---------------------------------------
#
# ir_measures (and ireval, TF-Ranking, Elasticsearch): Name[(key=value,...)][@cutoff];
# ranx: name[@k][-lN]. Each spelling is declared with its measure (spellings.spelling).
# (Patterns compiled by re at their first use, not at every start-up: a trec_eval name needs
# neither.)

_IM_RE = r"^(?P<name>[A-Za-zα_][A-Za-z0-9_α]*)(?:\((?P<args>[^()]*)\))?(?:@(?P<at>[^@()]+))?$"
_RANX_RE = r"^(?P<name>[a-z][a-z0-9_\-]*?)(?:[@.](?P<at>[0-9]+))?(?:-l(?P<level>-?[0-9]+))?$"


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


class Friendly(FrozenRecord):
    """A parsed friendly spec."""

    __slots__ = ("family", "spec", "target")

    spec: str
    family: Family
    target: Target

    def __init__(self, spec: str, family: Family, target: Target) -> None:
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "family", family)
        object.__setattr__(self, "target", target)


def parse_friendly(spec: str) -> Friendly | None:
    """The meaning of an ir_measures, ranx, ireval, TF-Ranking or Elasticsearch spelling, None if
    it is not one; errors for known names misused."""
    m = re.match(_IM_RE, spec)
    if m and m.group("name") in FAMILIES and not FAMILIES[m.group("name")].library.ranx_grammar:
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
    r = re.match(_RANX_RE, spec)
    if r and r.group("name") in FAMILIES and FAMILIES[r.group("name")].library.ranx_grammar:
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
        meas = meas.replaced(placeholder="zero")
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

    return meas.replaced(func=on_view)


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


# ---- trec_eval's grammar -----------------------------------------------------------------


class TrecSpelling(FrozenRecord):
    """A ``-m`` spec read in trec_eval's syntax (:func:`read_spec`): a nickname, or a measure
    with the parameter text given (``P.5``, the label ``P_5``; None: none given)."""

    __slots__ = ("measure", "nickname", "text")

    nickname: str | None
    measure: Measure | None
    text: str | None

    def __init__(self, nickname: str | None, measure: Measure | None, text: str | None) -> None:
        object.__setattr__(self, "nickname", nickname)
        object.__setattr__(self, "measure", measure)
        object.__setattr__(self, "text", text)


def read_spec(spec: str, registry: dict[str, Measure]) -> TrecSpelling | None:
    """trec_eval's grammar: ``NAME[.PARAMS]`` for a nickname or a measure of ``registry``, or
    an output label typed as input; None for anything else (another library's spelling, ranx's
    ``rbp.95`` among them, or an unknown name). The one reading of a spec that
    :func:`resolve`, :func:`repeated_parameters` and ``ireval measures NAME`` share."""
    if RANX_RBP.match(spec):  # ranx's rbp.95: not a measure and its parameters
        return None
    name, dot, text = spec.partition(".")
    given = text if dot else None
    if name in NICKNAMES:
        return TrecSpelling(name, None, given)
    if name in registry:
        return TrecSpelling(None, registry[name], given)
    label = label_form(spec, registry)
    if label is not None:
        return TrecSpelling(None, label[0], label[1])
    return None


def label_form(name: str, registry: dict[str, Measure]) -> tuple[Measure, str] | None:
    """``ndcg_cut_10`` -> (ndcg_cut, "10"): an output label typed as input."""
    best: tuple[Measure, str] | None = None
    for root, meas in registry.items():
        if not meas.params.takes_values or not name.startswith(root + "_"):
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
    import difflib  # (only when a name is not known: not on every run's start-up)

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

    _SEP = r"^(?P<root>[A-Za-z][A-Za-z_-]*?)_?[:,@=;/ ]?(?P<rest>[0-9][0-9.,=+-]*)$"

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
        m = re.match(self._SEP, spec)
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
        lowered: dict[str, str] = {}
        for fam in FAMILIES:
            lowered.setdefault(fam.lower(), fam)
        family = lowered.get(m.group(1).lower())
        if family is not None:
            yield family + m.group(2)

    def _misspelt(self, spec: str) -> Iterable[str]:
        import difflib

        name, dot, rest = spec.partition(".")
        for close in difflib.get_close_matches(name, self.roots, n=2, cutoff=0.75):
            yield close + dot + rest

    def _resolves(self, spec: str) -> bool:
        try:
            resolve([spec], rel_format=self.rel_format, compat=self.compat, hints=False)
        except (UnknownMeasureError, MeasureParamError):
            return False
        return True


def resolve(
    specs: Sequence[str],
    *,
    rel_format: str = "qrels",
    default: Iterable[str] = ("official",),
    compat: str = "10.0",
    hints: bool = True,
) -> list[Request]:
    """The measures selected by ``-m`` arguments, in output order."""
    everything = load()
    # the same arguments resolve to the same requests (asked once per run of a call with many
    # runs, and again for its judged counts and the asked order): kept while the registry's
    # measures are the same objects (a test may replace one)
    default = tuple(default)
    key = (tuple(specs), rel_format, default, compat, hints, tuple(map(id, everything.values())))
    done = _RESOLVED.get(key)
    if done is None:
        if len(_RESOLVED) >= 64:
            _RESOLVED.clear()
        done = _RESOLVED[key] = _resolve(everything, specs, rel_format, default, compat, hints)
    return list(done)


_RESOLVED: dict[tuple, list[Request]] = {}


def _resolve(  # noqa: C901  debt: one branch per spelling form
    everything: dict[str, Measure],
    specs: Sequence[str],
    rel_format: str,
    default: Iterable[str],
    compat: str,
    hints: bool,
) -> list[Request]:
    """:func:`resolve`, every time."""
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
        read = read_spec(spec, registry)
        if read is not None and read.nickname is not None:
            if read.text is not None:  # trec_eval drops them; they would silently mean nothing
                raise MeasureParamError(f"{spec}: '{name}' is a nickname and takes no parameters; write -m {name}")
            marked.update(m for m in NICKNAMES[name] if m in registry)
            continue
        if read is not None and read.measure is not None:
            marked.add(read.measure.name)
            if read.text is not None:  # trec_eval's rule: the first parameters given are kept
                param_text.setdefault(read.measure.name, (read.text, spec))
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


def _with_friendly(
    requests: list[Request], friendly: dict[str, Friendly], registry: dict[str, Measure], rel_format: str, compat: str
) -> list[Request]:
    """Add the friendly names' requests; each sorts after its measure's trec_eval request."""
    from ._util import OptParams

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


def repeated_parameters(specs: Sequence[str], *, keep: Literal["first", "all"]) -> tuple[list[str], list[Repeat]]:
    """The one rule for a measure given parameters more than once (``-m P.5 -m P.10``).

    trec_eval keeps the first parameters given for a measure and ignores the later ones.
    ``keep="first"`` (trec text, trec_eval's bytes) does the same; ``keep="all"`` (every other
    output, and the API, which never drops a measure asked silently) computes them all where
    the measure's shape unites them (cutoffs: ``["P.5,10"]``). Either way the later specs of
    such a measure are taken out, and each measure whose later parameters add values gives a
    :class:`Repeat` (the note trec text prints). A measure whose shape does not unite values
    (utility's coefficients, ndcg's gains) keeps the first parameters given, as trec_eval
    (:func:`resolve`); a spec that does not parse is kept for :func:`resolve` to report."""
    registry = load()
    out: list[str] = []
    first: dict[str, int] = {}  # root -> index in out
    values: dict[str, list[Any]] = {}
    ignored: dict[str, list[str]] = {}
    for spec in specs:
        read = read_spec(spec, registry)
        meas = read.measure if read is not None else None
        if read is None or meas is None or not read.text or not meas.params.unites:
            out.append(spec)
            continue
        try:
            cuts = list(parse_params(meas, read.text, spec).values)
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
        merged = f"{root}.{shown(sorted(values[root]))}"
        notes.append(Repeat(out[first[root]], " ".join(later), merged))
        if keep == "all":
            out[first[root]] = merged
    return out, notes


class Repeat(FrozenRecord):
    """A measure given parameters again (:func:`repeated_parameters`): the first spec, the
    later specs whose values it adds, and the one spec that asks for all of them."""

    __slots__ = ("first", "ignored", "merged")

    first: str
    ignored: str
    merged: str

    def __init__(self, first: str, ignored: str, merged: str) -> None:
        object.__setattr__(self, "first", first)
        object.__setattr__(self, "ignored", ignored)
        object.__setattr__(self, "merged", merged)
