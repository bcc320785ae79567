"""FrozenRecord behaves as the frozen dataclass it replaces (== and hash by fields and class,
repr, refusing assignment, pickling, replaced as dataclasses.replace)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from irevalcli.measures import names  # noqa: F401  declares every measure (the catalog)
from irevalcli.measures.registry import REGISTRY, Params
from irevalcli.measures.spellings import FAMILIES, Target
from irevalcli.records import FrozenRecord, Record


@dataclasses.dataclass(frozen=True)
class _AsDataclass:
    name: str
    values: tuple[int, ...] = ()
    label: str | None = None


class _AsRecord(FrozenRecord):
    __slots__ = ("label", "name", "values")

    name: str
    values: tuple[int, ...]
    label: str | None

    def __init__(self, name: str, values: tuple[int, ...] = (), label: str | None = None) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "values", values)
        object.__setattr__(self, "label", label)


class _Sub(_AsRecord):
    __slots__ = ("extra",)

    extra: int

    def __init__(self, name: str, values: tuple[int, ...] = (), label: str | None = None, extra: int = 0) -> None:
        super().__init__(name, values, label)
        object.__setattr__(self, "extra", extra)


@pytest.mark.parametrize("args", [("a",), ("a", (1, 2)), ("é", (), "x"), ("a", (1,), None)])
def test_a_record_compares_hashes_and_prints_as_the_dataclass(args):
    dc, rec = _AsDataclass(*args), _AsRecord(*args)
    assert repr(rec) == repr(dc).replace("_AsDataclass", "_AsRecord")
    assert rec == _AsRecord(*args) and hash(rec) == hash(_AsRecord(*args)) == hash(dataclasses.astuple(dc))
    assert rec != _AsRecord("other") and rec != dc
    assert _Sub(*args) != rec  # another class is never equal, as with dataclasses
    assert pickle.loads(pickle.dumps(rec)) == rec
    assert rec.replaced(label="y") == _AsRecord(*(args + ((),) * (2 - len(args)))[:2], "y")
    assert rec.as_dict() == dataclasses.asdict(dc)
    assert rec._fields == tuple(f.name for f in dataclasses.fields(dc))
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.name = "b"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del rec.name  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rec.new = 1  # type: ignore[attr-defined]


def test_a_subclass_adds_its_fields_after_its_bases():
    sub = _Sub("a", (1,), None, 3)
    assert repr(sub) == "_Sub(name='a', values=(1,), label=None, extra=3)"
    assert pickle.loads(pickle.dumps(sub)) == sub and sub.replaced(extra=4).extra == 4


def test_the_registry_records_survive_pickling_and_compare_by_value():
    meas = REGISTRY["map"]
    # its summary and parameter shape are objects compared by identity: a copy reads the same
    # (field by field: a frozenset's repr may list its items in another order once rebuilt)
    copy = pickle.loads(pickle.dumps(meas))
    for name, value in meas.as_dict().items():
        again = getattr(copy, name)
        assert again == value if isinstance(value, frozenset) else repr(again) == repr(value), name
    assert meas.replaced(doc="x") != meas and meas.replaced(doc="x").replaced(doc=meas.doc) == meas
    assert Params((5,), "5") == Params((5,), "5") and {Params((5,), "5"): 1}[Params((5,), "5")] == 1
    assert Target("P", (5,)) == Target("P", (5,), (), None, ())
    fam = FAMILIES["AP"]
    assert fam.replaced(synonyms=()).synonyms == () and fam.library.name == fam.style


@dataclasses.dataclass
class _MutableDataclass:
    path: str
    runid: str = "r"


class _MutableRecord(Record):
    path: str
    runid: str

    def __init__(self, path: str, runid: str = "r") -> None:
        self.path = path
        self.runid = runid


def test_a_mutable_record_compares_prints_and_refuses_hashing_as_the_dataclass():
    dc, rec = _MutableDataclass("a.txt"), _MutableRecord("a.txt")
    assert repr(rec) == repr(dc).replace("_MutableDataclass", "_MutableRecord")
    assert rec == _MutableRecord("a.txt", "r") and rec != _MutableRecord("a.txt", "s") and rec != dc
    with pytest.raises(TypeError):
        hash(rec)
    rec.runid = "t"
    assert rec.runid == "t" and rec.replaced(path="b") == _MutableRecord("b", "t")
    assert pickle.loads(pickle.dumps(rec)) == rec


def test_the_table_options_behave_as_the_frozen_dataclass_they_were():
    from irevalcli.core.table import EvalOptions
    from irevalcli.settings import TABLE_FIELDS, EvalSettings

    opts = EvalOptions()
    assert opts.as_dict() == {
        "rel_level": 1,
        "max_docs": None,
        "judged_only": False,
        "complete": False,
        "num_docs": 0,
        "only_query": None,
        "compat": "10.0",
        "ties": "docno",
    }
    assert set(opts.as_dict()) == TABLE_FIELDS
    changed = opts.replaced(rel_level=2, complete=True)
    assert (changed.rel_level, changed.complete, opts.rel_level) == (2, True, 1)
    assert changed == EvalOptions(rel_level=2, complete=True) and hash(changed) == hash(
        EvalOptions(2, None, False, True)
    )
    assert changed != opts and pickle.loads(pickle.dumps(changed)) == changed
    with pytest.raises(dataclasses.FrozenInstanceError):
        opts.rel_level = 3  # type: ignore[misc]
    assert EvalSettings.of(rel_level=3, compat="9.0.8").updated(complete=True).table == EvalOptions(
        rel_level=3, complete=True, compat="9.0.8"
    )
