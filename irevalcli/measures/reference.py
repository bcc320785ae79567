"""The measures reference: every measure, spelling family and nickname as text (``ireval
measures``, ``ireval measures NAME``), markdown (docs/measures.md, ``make docs``) or JSON.

Built from the registry and the spelling tables alone: no click, nothing printed here (the
``measures`` command echoes what these functions return). The registry is loaded inside
the functions, so importing this module costs nothing.
"""

from __future__ import annotations

from typing import Any

from ..errors import UnknownMeasureError

PARAM_KINDS = {
    "none": "no parameters",
    "long_cutoffs": "integer cutoffs",
    "double_cutoffs": "real cutoffs",
    "double_params": "real parameters",
    "pairs": "key=value pairs (ndcg family: level=gain; rbp: p=; ireval's: as described above)",
}
SUMMARIES = {
    "mean": "mean over topics",
    "sum": "sum over topics",
    "gmean": "geometric mean over topics",
    "nanmean": "mean over the topics that have a value",
    "wmean": "weighted mean over the topics that have a value",
    "judged_sum": "sum over topics",
    "topic_count": "count",
    "run_name": "text",
    "none": "per topic only",
}
# libraries whose spellings ireval accepts, in the order the reference lists them
LIBRARIES = ("trec_eval", "ir_measures", "ranx", "ireval", "tf-ranking", "elasticsearch")


def params_text(meas: Any) -> str:
    params = PARAM_KINDS[meas.params]
    if meas.default:
        shown = ",".join(f"{v:g}" if isinstance(v, float) else str(v) for v in meas.default)
        params += f", default {shown}"
    return params


def trec_spellings(meas: Any) -> list[str]:
    """How -m reaches the measure in trec_eval's syntax: NAME, NAME.PARAMS and the label form."""
    if meas.params == "none":
        return [meas.name]
    many, one = {
        "long_cutoffs": ("k1,k2", "k"),
        "double_cutoffs": ("x1,x2", "x"),
        "double_params": ("a,b", "a,b"),
        "pairs": ("key=value,...", "key=value"),
    }[meas.params]
    return [meas.name, f"{meas.name}.{many}", f"{meas.name}_{one}"]


def measure_spellings(meas: Any) -> dict[str, list[str]]:
    """Every spelling -m accepts for the measure, by library (from the registry and alias tables)."""
    from .aliases import FAMILIES

    out: dict[str, list[str]] = {"trec_eval": trec_spellings(meas)}
    for fam in FAMILIES.values():
        if meas.name in fam.roots:
            out.setdefault(fam.style, []).append(family_form(fam))
    return {
        lib: out[lib] for lib in sorted(out, key=lambda s: LIBRARIES.index(s) if s in LIBRARIES else len(LIBRARIES))
    }


def family_form(fam: Any) -> str:
    """A family's spelling with its argument and cutoff syntax: ``P(rel,judged_only)@k``."""
    if fam.style == "ranx":
        return f"{fam.name}.NN-lN" if fam.dotted else f"{fam.name}@k-lN"
    args = f"({','.join(fam.args)})" if fam.args else ""
    cut = {"optional": "[@k]", "required": "@k", "none": ""}[fam.cutoff]
    return f"{fam.name}{args}{cut}"


def measure_info(meas: Any) -> dict[str, Any]:
    """One measure's reference entry (text, markdown and JSON are made from it)."""
    return {
        "name": meas.name,
        "definition": meas.doc,
        "parameters": params_text(meas),
        "summary": SUMMARIES[meas.agg],
        "judgements": sorted(meas.rel_formats),
        "citation": meas.citation,
        "spellings": measure_spellings(meas),
    }


def describe_measure(meas: Any) -> str:
    from .aliases import aliases_of

    info = measure_info(meas)
    lines = [f"{meas.name}: {meas.doc}", f"  parameters: {info['parameters']}", f"  summary: {info['summary']}"]
    if meas.citation:
        lines.append(f"  reference: {meas.citation}")
    also = aliases_of(meas.name)
    if also:
        lines.append(f"  also typed as: {', '.join(also)} ('ireval measures NAME' says which definition each gives)")
    fmts = ", ".join(sorted(meas.rel_formats))
    lines.append(f"  judgements: -R {fmts}")
    return "\n".join(lines)


def measures_reference(fmt: str) -> str:
    """Every measure, spelling family and nickname as markdown or JSON (docs/measures.md is the markdown)."""
    import json

    from .aliases import FAMILIES
    from .catalog import load
    from .registry import NICKNAMES

    registry = load()
    measures = [measure_info(m) for m in registry.values()]
    families: list[dict[str, Any]] = [
        {
            "spelling": family_form(f),
            "name": f.name,
            "library": f.style,
            "also_spelled": list(f.synonyms),
            "maps_to": list(f.roots),
            "arguments": list(f.args),
            "cutoff": f.cutoff if f.style != "ranx" else "optional",
            "definition": f.definition,
        }
        for f in FAMILIES.values()
    ]
    if fmt == "json":
        doc = {"measures": measures, "spellings": families, "nicknames": {k: list(v) for k, v in NICKNAMES.items()}}
        return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    def code(items: list[str]) -> str:
        return ", ".join(f"`{x}`" for x in items)

    out = [
        "# Measures reference",
        "",
        "<!-- Generated by `ireval measures --format markdown` (make docs); do not edit by hand. -->",
        "",
        "Every measure ireval computes, with every spelling `-m` accepts for it, by library: trec_eval's",
        "(`NAME`, `NAME.PARAMS`, the output label `NAME_PARAM`), ir_measures', ranx's, ireval's own, TF-Ranking's",
        "and Elasticsearch's. The spelling decides the definition where the libraries differ (see",
        "[Friendly spellings](#friendly-spellings)); `ireval measures NAME` explains one spelling.",
        "",
        "## Measures",
        "",
    ]
    for info in measures:
        out += [f"### {info['name']}", "", info["definition"], ""]
        for lib, forms in info["spellings"].items():
            out.append(f"- {lib}: {code(forms)}")
        out.append(f"- parameters: {info['parameters']}")
        out.append(f"- summary: {info['summary']}")
        out.append(f"- judgements: {', '.join('-R ' + j for j in info['judgements'])}")
        if info["citation"]:
            out.append(f"- reference: {info['citation']}")
        out.append("")
    out += [
        "## Friendly spellings",
        "",
        "ranx spellings take `@k` (optional) and `-lN` (relevance level N); `rbp.NN` is persistence 0.NN.",
        "",
        "| Spelling | Library | Also spelled | Maps to | Definition |",
        "|---|---|---|---|---|",
    ]
    for f in families:
        out.append(
            f"| `{cell(f['spelling'])}` | {f['library']} | {code(f['also_spelled'])} | "
            f"{code(f['maps_to'])} | {cell(f['definition'])} |"
        )
    out += ["", "## Nicknames", "", "| Nickname | Measures |", "|---|---|"]
    for nick, members in NICKNAMES.items():
        out.append(f"| `{nick}` | {' '.join(members)} |")
    return "\n".join(out) + "\n"


def listing(width: int | None = None) -> str:
    """``ireval measures`` without a name: every measure, nickname and spelling family, a line
    each (``width``: wrapped at a terminal's width, continuations under the text)."""
    from .aliases import FAMILIES
    from .catalog import load
    from .registry import NICKNAMES

    lines = [_entry(meas.name, meas.doc.split(". ")[0].rstrip("."), width) for meas in load().values()]
    lines.append("")
    lines += [_entry(nick, f"nickname: {' '.join(members)}", width) for nick, members in NICKNAMES.items()]
    lines.append("")
    lines += [_entry(fam.name, f"{fam.style} syntax: {', '.join(fam.roots)}", width) for fam in FAMILIES.values()]
    return "\n".join(lines) + "\n"


def describe_names(names: tuple[str, ...] | list[str], width: int | None = None) -> str:
    """What ``ireval measures NAME...`` prints: each name described, every one known before any
    is returned (an unknown one is an UnknownMeasureError); ``width`` as for :func:`listing`."""
    from .catalog import load

    registry = load()
    texts = [describe_name(name, registry) for name in names]
    return "\n\n".join(_wrap_lines(text, width) for text in texts) + "\n"


def _entry(name: str, text: str, width: int | None) -> str:
    """One line of the measures listing: the name in 24 columns, then its text."""
    if width is None:
        return f"{name:<24}{text}"
    import textwrap

    return textwrap.fill(
        text,
        width=max(width, 40),
        initial_indent=f"{name:<24}",
        subsequent_indent=" " * 24,
        break_long_words=False,
        break_on_hyphens=False,
    )


def _wrap_lines(text: str, width: int | None) -> str:
    """Each line wrapped at ``width``, its continuations indented two more than it."""
    if width is None:
        return text
    import textwrap

    out = []
    for line in text.split("\n"):
        lead = " " * (len(line) - len(line.lstrip(" ")))
        out.append(
            textwrap.fill(
                line.strip(" "),
                width=max(width, 40),
                initial_indent=lead,
                subsequent_indent=lead + "  ",
                break_long_words=False,
                break_on_hyphens=False,
            )
            or line
        )
    return "\n".join(out)


def describe_name(name: str, registry: Any) -> str:
    """What ``ireval measures NAME`` prints for one name (a measure, nickname or spelling)."""
    from .aliases import describe
    from .names import RANX_RBP, label_form, suggest
    from .registry import NICKNAMES

    root = name.split(".", 1)[0]
    if root in NICKNAMES:
        return f"{root}: nickname for {' '.join(NICKNAMES[root])}"
    if root in registry and not RANX_RBP.match(name):
        return describe_measure(registry[root])
    label = label_form(name, registry)
    if label is not None:
        return describe_measure(label[0])
    text = describe(name)
    if text is None:
        raise UnknownMeasureError(f"unknown measure '{name}'{suggest(root, registry)}")
    return text
