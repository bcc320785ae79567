"""docs/measures.md is `ireval measures --format markdown`, generated from the registry and the
declared spellings: it must be up to date, and it must list every measure with every spelling."""

from __future__ import annotations

import json
from pathlib import Path

from irevalcli.measures.reference import measures_reference

DOC = Path(__file__).resolve().parents[2] / "docs" / "measures.md"


def test_docs_measures_md_is_up_to_date():
    # regenerate with: make docs (or ireval measures --format markdown > docs/measures.md)
    assert DOC.read_text(encoding="utf-8") == measures_reference("markdown")


def test_cli_prints_the_reference(cli):
    res = cli(["measures", "--format", "markdown"])
    assert res.code == 0 and res.out.decode() == DOC.read_text(encoding="utf-8")
    res = cli(["measures", "--format", "json"])
    assert res.code == 0 and json.loads(res.out) == json.loads(measures_reference("json"))
    res = cli(["measures", "--format", "json", "map"])
    assert (res.code, res.out) == (2, b"")
    assert res.err == "ireval: --format json writes the whole reference; give no NAME (or drop --format)\n"


def test_every_measure_and_every_spelling_is_listed():
    from irevalcli.measures.catalog import load
    from irevalcli.measures.registry import NICKNAMES
    from irevalcli.measures.spellings import FAMILIES

    doc = json.loads(measures_reference("json"))
    by_name = {m["name"]: m for m in doc["measures"]}
    assert list(by_name) == list(load())
    for fam in FAMILIES.values():
        for root in fam.roots:
            forms = [f for forms in by_name[root]["spellings"].values() for f in forms]
            assert any(
                f == fam.name
                or f.startswith((fam.name + "(", fam.name + "@", fam.name + "["))
                or (fam.style == "ranx" and f.startswith(fam.name))
                for f in forms
            ), (fam.name, root)
    assert {s["name"] for s in doc["spellings"]} == set(FAMILIES)
    assert doc["nicknames"] == {k: list(v) for k, v in NICKNAMES.items()}
    text = DOC.read_text(encoding="utf-8")
    for name in load():
        assert f"\n### {name}\n" in text


def test_the_peer_spellings_of_issue_16_are_shown():
    doc = json.loads(measures_reference("json"))
    sp = {m["name"]: m["spellings"] for m in doc["measures"]}
    assert sp["P_ret"] == {
        "trec_eval": ["P_ret", "P_ret.k1,k2", "P_ret_k"],
        "tf-ranking": ["PrecisionMetric(topn)[@k]"],
        "elasticsearch": ["PrecisionAtK(k,ignore_unlabeled,relevant_rating_threshold)[@k]"],
    }
    assert sp["bpref_R"]["tf-ranking"] == ["BPrefMetric(use_trec_version)"]
    assert sp["gauc_pos"]["ireval"] == ["GAUC(weight,rel)"]
    assert sp["P"]["ir_measures"] == ["P(rel,judged_only)@k", "Precision(rel,judged_only)@k"]
    assert sp["P"]["ranx"] == ["precision@k-lN"]


def test_a_spelling_added_to_the_tables_appears_without_editing_the_generator(monkeypatch):
    """Measures and spellings added elsewhere (another module's spelling(...)) show up by themselves."""
    from irevalcli.measures import registry, spellings

    fam = spellings.FAMILIES["AP"].replaced(name="MAP_new", synonyms=())
    monkeypatch.setitem(spellings.FAMILIES, "MAP_new", fam)
    meas = registry.REGISTRY["map"].replaced(name="map_new", doc="A new one.", citation="Someone 2099")
    monkeypatch.setitem(registry.REGISTRY, "map_new", meas)
    text = measures_reference("markdown")
    assert "### map_new\n\nA new one.\n\n- trec_eval: `map_new`\n" in text and "- reference: Someone 2099\n" in text
    assert (
        "- ir_measures: `AP(rel,judged_only)[@k]`, `MAP(rel,judged_only)[@k]`, `MAP_new(rel,judged_only)[@k]`\n" in text
    )
