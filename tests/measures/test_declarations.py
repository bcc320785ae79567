"""A measure is one declaration (issue 15): everything particular to a measure -- its
parameters, summary, placeholder value, versions, output order and the names other
libraries give it -- is stated in the family module that declares it, and a measure added
to one module needs no change anywhere else."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from irevalcli import evaluate
from irevalcli.commands.main import measures_command
from irevalcli.errors import MeasureParamError
from irevalcli.measures import ap, catalog, names, spellings
from irevalcli.measures.reference import measures_reference
from irevalcli.measures.registry import FORMAT_NICKNAMES, NICKNAMES, REGISTRY, measure

ROOT = Path(__file__).resolve().parents[2]
MEASURES = ROOT / "irevalcli" / "measures"
FAMILY_MODULES = {m.__name__ for m in catalog.FAMILY_MODULES}


def test_every_spelling_is_declared_in_the_module_of_its_measure():
    wrong = [
        f"{name}: declared in {fam.module}, {fam.roots[0]} in {REGISTRY[fam.roots[0]].func.__module__}"
        for name, fam in spellings.FAMILIES.items()
        if fam.module != REGISTRY[fam.roots[0]].func.__module__
    ]
    assert wrong == []
    assert {fam.module for fam in spellings.FAMILIES.values()} <= FAMILY_MODULES
    assert all(root in REGISTRY for fam in spellings.FAMILIES.values() for root in fam.roots)


def test_only_family_modules_declare_measures_or_spellings():
    """The machinery modules hold no declaration: no @measure, spelling(...) or nickname
    list outside the family modules (and catalog's nicknames)."""
    machinery = {"__init__", "_util", "catalog", "dcg", "names", "reference", "registry", "spellings"}
    bad = []
    for path in sorted(MEASURES.glob("*.py")):
        if path.stem not in machinery:
            assert f"irevalcli.measures.{path.stem}" in FAMILY_MODULES, path.stem  # a family missing from catalog
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                allowed = {"nickname"} if path.stem == "catalog" else set()
                if node.func.id in {"measure", "spelling", "nickname"} - allowed:
                    bad.append(f"{path.stem}:{node.lineno} {node.func.id}(...)")
    assert bad == []


def _probes(fam: spellings.Family) -> list[str]:
    if fam.dotted:
        return [f"{fam.name}.95", f"{fam.name}.95-l2"]
    if fam.style == "ranx":
        return [fam.name, f"{fam.name}@5", f"{fam.name}-l2"]
    return [fam.name, f"{fam.name}@5", f"{fam.name}@0.5", f"{fam.name}(rel=2)@5"]


def test_each_spelling_maps_only_to_the_measures_it_declares():
    """``roots`` is what ``ireval measures`` shows and where the declaration lives: every
    spelling's build must keep to it."""
    parsed = 0
    for fam in spellings.FAMILIES.values():
        for spec in _probes(fam):
            try:
                f = names.parse_friendly(spec)
            except MeasureParamError:
                continue
            assert f is not None and f.family is fam, spec
            assert f.target.root in fam.roots, (spec, f.target.root)
            parsed += 1
    assert parsed >= len(spellings.FAMILIES)


def test_the_dotted_spellings_are_what_names_reads_as_ranx():
    assert [f.name for f in spellings.FAMILIES.values() if f.dotted] == ["rbp"]
    assert names.RANX_RBP.pattern == spellings.dotted_pattern().pattern
    assert names.RANX_RBP.match("rbp.95") and names.RANX_RBP.match("rbp.95-l2")
    assert not names.RANX_RBP.match("rbp.p=0.8") and not names.RANX_RBP.match("ndcg.95")
    # a ranx name that is not dotted reads name.N as trec_eval's syntax
    assert names.parse_friendly("ndcg.5") is None and names.parse_friendly("rbp.95").target.root == "rbp_label"


@pytest.mark.parametrize(
    ("rel_format", "nick"), [("prefs", "all_prefs"), ("qrels_prefs", "all_prefs"), ("qrels_jg", "qrels_jg")]
)
def test_the_nickname_suggested_for_a_judgement_format_is_declared_with_it(rel_format, nick):
    assert FORMAT_NICKNAMES[rel_format] == nick and nick in NICKNAMES
    with pytest.raises(MeasureParamError) as err:
        names.resolve(["map"], rel_format=rel_format)
    assert str(err.value) == (
        f"measure 'map' cannot be computed from -R {rel_format} judgements (it needs -R qrels); "
        f"with -R {rel_format} use -m {nick}"
    )
    with pytest.raises(MeasureParamError) as err:
        names.resolve(["P_avgjg"], rel_format="qrels")
    assert str(err.value) == "measure 'P_avgjg' cannot be computed from -R qrels judgements (it needs -R qrels_jg)"


# ---- README's worked example: a measure added in one module -----------------------------


def _readme_example() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("### Adding a measure") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def added_to_ap():
    """README's example run as if appended to measures/ap.py, then taken out again."""
    registry, families = dict(REGISTRY), dict(spellings.FAMILIES)
    namespace = dict(vars(ap))  # ap's globals: __name__ and __package__ included
    try:
        exec(compile(_readme_example(), ap.__file__, "exec"), namespace)
        catalog.put_everything_in_order()
        yield namespace
    finally:
        REGISTRY.clear()
        REGISTRY.update(registry)
        spellings.FAMILIES.clear()
        spellings.FAMILIES.update(families)


def _summary(specs: list[str]) -> dict[str, float]:
    # topic 1: a (rel), b (judged non-relevant), c (rel), d (judged non-relevant), retrieved in
    # that order; R = 2, N = 2. bpref: a has no non-relevant above (1), c has b (1 - 1/2), over R:
    # 0.75. Top 1: a only, 1/2. Top 2: a, b: 1/2. Top 3: a, b, c: 0.75.
    q = pd.DataFrame([("1", "a", 1), ("1", "b", 0), ("1", "c", 1), ("1", "d", 0)], columns=["qid", "docno", "rel"])
    r = pd.DataFrame([("1", d, float(9 - i)) for i, d in enumerate("abcd")], columns=["qid", "docno", "score"])
    return evaluate(q, r, specs).results.summary


def test_readme_example_adds_a_measure_with_its_spelling_order_and_docs_in_one_module(added_to_ap):
    meas = REGISTRY["bpref_cut"]
    fam = spellings.FAMILIES["BprefCut"]
    # declared in ap, as the README says, and held there
    assert meas.func.__module__ == fam.module == "irevalcli.measures.ap"
    # output order: ireval's own measures follow catalog.FAMILY_MODULES; ap's come after the others
    assert list(REGISTRY)[-1] == "bpref_cut" and list(spellings.FAMILIES)[-1] == "BprefCut"
    # values, trec_eval syntax, output labels as input, the friendly spelling (with rel=)
    s = _summary(["bpref", "bpref_cut.1,2,3", "BprefCut@3", "BprefCut(rel=2)@3"])
    assert s["bpref"] == pytest.approx(0.75)
    assert (s["bpref_cut_1"], s["bpref_cut_2"], s["bpref_cut_3"]) == pytest.approx((0.5, 0.5, 0.75))
    assert s["BprefCut@3"] == pytest.approx(0.75) and _summary(["bpref_cut_5"]) == {"bpref_cut_5": 0.75}
    assert math.isclose(s["BprefCut(rel=2)@3"], 0.0)  # no document is relevant at level 2
    assert [r.labels for r in names.resolve(["BprefCut@10", "bpref_cut"])] == [
        [f"bpref_cut_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)],
        ["BprefCut@10"],
    ]
    with pytest.raises(MeasureParamError) as err:
        names.resolve(["BprefCut"])
    assert str(err.value) == "BprefCut: BprefCut needs a cutoff, e.g. BprefCut@10"
    # documentation: the listing, the description, the spelling and the generated reference
    listing = CliRunner().invoke(measures_command, []).output
    assert "bpref_cut               bpref at k: bpref over the top k documents only (as with -M k)\n" in listing
    assert listing.endswith("BprefCut                ireval syntax: bpref_cut\n")
    described = CliRunner().invoke(measures_command, ["bpref_cut"]).output
    assert "  also typed as: BprefCut (ireval)" in described and "  reference: Buckley & Voorhees" in described
    assert (
        CliRunner()
        .invoke(measures_command, ["BprefCut@5"])
        .output.startswith("BprefCut@5 -> bpref_cut.5: ireval's friendly syntax\n  definition: bpref over the top k")
    )
    doc = measures_reference("markdown")
    assert "### bpref_cut\n\nbpref at k: bpref over the top k documents only (as with -M k).\n\n" in doc
    assert "- ireval: `BprefCut(rel,judged_only)@k`\n" in doc
    assert "| `BprefCut(rel,judged_only)@k` | ireval |  | `bpref_cut` | bpref over the top k" in doc


def test_the_example_is_taken_out_again():
    """(The fixture above leaves the registry as it found it.)"""
    assert "bpref_cut" not in REGISTRY and "BprefCut" not in spellings.FAMILIES
    assert list(REGISTRY)[-1] != "bpref_cut"


def test_a_module_without_a_place_in_the_order_cannot_declare():
    registry, families = dict(REGISTRY), dict(spellings.FAMILIES)
    namespace = {"__name__": "somewhere_else", "__package__": "irevalcli.measures"}
    code = (
        "from irevalcli.measures.registry import measure\n"
        "from irevalcli.measures.spellings import simple, spelling\n"
        "@measure('elsewhere')\n"
        "def elsewhere(t, p):\n"
        "    '''Nowhere.'''\n"
        "spelling('Elsewhere', style='ireval', build=simple('elsewhere'), roots=('elsewhere',), definition='x')\n"
    )
    try:
        exec(code, namespace)
        with pytest.raises(RuntimeError) as err:
            catalog.put_everything_in_order()
        assert str(err.value) == "measure elsewhere: its module somewhere_else has no place in the output order"
        del REGISTRY["elsewhere"]
        with pytest.raises(RuntimeError) as err:
            catalog.put_everything_in_order()
        assert str(err.value) == "spelling Elsewhere: its module somewhere_else has no place in the listing order"
    finally:
        REGISTRY.clear()
        REGISTRY.update(registry)
        spellings.FAMILIES.clear()
        spellings.FAMILIES.update(families)


def test_a_spelling_cannot_be_declared_twice():
    with pytest.raises(RuntimeError) as err:
        spellings.spelling("nDCG", style="ir_measures", build=spellings.simple("ndcg"), roots=("ndcg",), definition="x")
    assert str(err.value) == "spelling nDCG declared twice"
    assert spellings.FAMILIES["nDCG"].module == "irevalcli.measures.gain"


def test_the_listing_order_is_kept_and_holds_only_declared_spellings():
    assert set(spellings.LISTING_ORDER) <= set(spellings.FAMILIES)
    assert list(spellings.FAMILIES)[: len(spellings.LISTING_ORDER)] == list(spellings.LISTING_ORDER)


def test_a_declaration_takes_only_the_typed_fields():
    """No untyped ``**extra``: a misspelt field is an error, not a silently ignored entry."""
    with pytest.raises(TypeError):
        measure("never_registered", need_subtopics=True)  # type: ignore[call-arg]
    assert "never_registered" not in REGISTRY
    assert [m for m, d in REGISTRY.items() if d.needs_subtopics] == [
        *("alpha_ndcg_cut", "err_ia_cut", "alpha_dcg_cut", "nerr_ia_cut", "p_ia_cut", "strec_cut", "map_ia", "nrbp"),
        *("nnrbp", "P_IA_ret", "alpha_dcg_label_cut"),
    ]
    assert [m for m, d in REGISTRY.items() if d.check_params is not None] == ["utility"]
    with pytest.raises(MeasureParamError) as err:
        names.resolve(["utility.1,2"])
    assert str(err.value) == "utility.1,2: utility takes exactly 4 coefficients (a,b,c,d), got 2"
