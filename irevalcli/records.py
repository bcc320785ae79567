"""Value classes without a dataclass's creation cost.

``@dataclass`` writes the source of a class's ``__init__``, ``__repr__``, ``__eq__`` (and,
frozen, ``__hash__``, ``__setattr__``, ``__delattr__``) and compiles it every time the module
is imported: about 0.5 ms a class, and a command line imports a few dozen of them. A
:class:`Record` or :class:`FrozenRecord` subclass writes its ``__init__`` (compiled once,
into the ``.pyc``) and inherits the rest, which behave as the dataclass's do: fields compared
as a tuple (only with the same class), ``Name(field=value, ...)`` as its repr; a
:class:`Record` (a plain ``@dataclass``) is unhashable, a :class:`FrozenRecord` (a
``@dataclass(frozen=True)``) is hashed by its fields and raises
:class:`dataclasses.FrozenInstanceError` for an assignment or deletion.

The parameters of a subclass's ``__init__`` are its fields, in order (a subclass's: its
base's first, as a dataclass orders them). A :class:`FrozenRecord` subclass lists its own
fields in ``__slots__`` and sets each with ``object.__setattr__``. The classes that
:func:`dataclasses.replace`, :func:`dataclasses.fields` or :func:`dataclasses.asdict` are
used on stay dataclasses; :meth:`Record.replaced` is ``dataclasses.replace``, :meth:`Record.as_dict`
``dataclasses.asdict`` of plain values and ``_fields`` the names ``dataclasses.fields`` gives.
"""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from typing import Any, ClassVar


class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()  # the fields in order (its __init__'s parameters)
    __hash__ = None  # type: ignore[assignment]  # as a dataclass with eq and not frozen

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        if cls.__init__ is object.__init__:  # FrozenRecord itself: no fields
            return
        code = cls.__init__.__code__
        cls._fields = code.co_varnames[1 : code.co_argcount + code.co_kwonlyargcount]

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, name) for name in self._fields])

    def as_dict(self) -> dict[str, Any]:
        """The fields by name, in order (what :func:`dataclasses.asdict` gives a dataclass of
        plain values; a field's own value is not copied or converted)."""
        return dict(zip(self._fields, self._values(), strict=True))

    def replaced(self, **changes: Any) -> Any:
        """A copy with ``changes`` (what :func:`dataclasses.replace` gives a dataclass)."""
        return self.__class__(**{**self.as_dict(), **changes})

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__ and isinstance(other, Record):
            return self._values() == other._values()
        return NotImplemented

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({fields})"


class FrozenRecord(Record):
    __slots__ = ()

    def __init_subclass__(cls) -> None:
        super().__init_subclass__()
        slots = {name for klass in cls.__mro__ for name in klass.__dict__.get("__slots__", ())}
        if set(cls._fields) != slots:
            raise TypeError(f"{cls.__qualname__}: __init__ takes {cls._fields}, __slots__ are {sorted(slots)}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:  # type: ignore[override]  # a frozen dataclass is hashable
        return hash(self._values())

    def __reduce__(self) -> tuple[Any, ...]:  # pickled by its fields (Dask ships settings)
        return (self.__class__, self._values())
