"""What an evaluation is asked to do, as one typed object: :class:`EvalSettings`.

Everything that changes what is evaluated (trec_eval's ``-c -l -M -J -N -D``, ``--compat``,
``--ties``: the table's :class:`~irevalcli.core.table.EvalOptions`) and how the inputs are
read (``-R``, ``-Z``, ``--subtopics``, run and qrels formats, column map, streaming, hashing)
travels in one frozen :class:`EvalSettings`, validated once, when it is made. The command line
builds it once from its options; :func:`irevalcli.api.evaluate` takes it (or builds it from
the same names given as keywords). A new setting is one field here, with its check in
:meth:`EvalSettings.__post_init__`.

:class:`ProgressReport` is what :func:`~irevalcli.api.evaluate` tells while it reads and
evaluates (``irevalcli.output.progress.Progress`` draws it on a terminal);
:data:`NO_PROGRESS` tells no one.

It sits beside ``core`` (it nests the table's options) so that ``api``, the engine and the
commands can all import it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field, fields, replace
from functools import cache
from typing import Any, Protocol

from .core.table import TIE_RULES, EvalOptions
from .errors import IrevalError, UsageError
from .machine import cpus

REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")  # -R (api.TABLE_BUILDERS builds each)
COMPAT_MODES = ("10.0", "9.0.8")  # --compat
ENGINES = ("local", "dask")  # --engine
WORKERS_PER_CPU = 4  # --workers: the most processes a local Dask cluster may start, per CPU


def max_local_workers() -> int:
    """The most worker processes ``--workers`` may start (each is a Python process with numpy,
    pandas and Arrow loaded): 4 per CPU this process may run on."""
    return WORKERS_PER_CPU * cpus()


TABLE_FIELDS = frozenset(EvalOptions._fields)

# Command-line spellings in messages -> the API's parameter names (when not called by the CLI);
# compiled at the first API error, not at every command line's start-up (:func:`_api_names`)
_API_NAME_SOURCES: tuple[tuple[str, Any], ...] = (
    (r"\(use -c to ", "(use complete=True to "),
    (r"^-M (-?[0-9]+):", r"max_docs=\1:"),
    (r"^-D: ", "only_query: "),
    (r"^--compat ([^:]*):", r"compat='\1':"),
    (r"^--ties ([^: ]*)", r"ties='\1'"),
    (r"\(--compat 9\.0\.8\)", "(compat='9.0.8')"),
    (r"use -m ([A-Za-z_]+)", r"use measures=['\1']"),
    (r"-R ([A-Za-z_]+)", r"rel_format='\1'"),
    (r"give --subtopics FILE", "give subtopics=PATH or a DataFrame"),
    (r"^--qrels-format and --column rel apply to", "qrels_format and columns['rel'] apply to"),
    (r"^--memory-limit ([^:]*):", r"memory_limit=\1:"),
    (r"raise --memory-limit", "raise memory_limit"),
    (
        r"did you mean '((?:-m [^ ']+ ?)+)'\? a comma separates parameters, not measures",
        lambda m: "did you mean " + repr(m.group(1).replace("-m ", "").split()) + "? one name per list item",
    ),
)


@cache
def _api_names() -> tuple[tuple[re.Pattern[str], Any], ...]:
    return tuple((re.compile(pattern), repl) for pattern, repl in _API_NAME_SOURCES)


def api_wording(exc: IrevalError) -> IrevalError:
    """``exc`` re-worded, outside the command line, to name the Python parameter to change
    (``complete=True``) instead of the command line's option (``-c``)."""
    from .errors import IN_CLI

    if IN_CLI.get():
        return exc
    msg = str(exc)
    for pattern, repl in _api_names():
        msg = pattern.sub(repl, msg)
    if msg != str(exc):
        exc.args = (msg,)
    return exc


_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_SIZE = r"\s*([0-9]+(?:\.[0-9]+)?)\s*([KMGT]?)(?:I?B)?\s*"  # (compiled by re at its first use)


def parse_memory_limit(text: str | int | None) -> int | None:
    """``--memory-limit``: bytes (``1000000``) or a size with a binary unit (``512M``,
    ``2G``, ``1.5GiB``, ``64k``); None for the default. Refuses anything else, and zero."""
    if text is None:
        return None
    if isinstance(text, bool) or not isinstance(text, (int, str)):
        raise UsageError(f"--memory-limit {text!r}: expected a size such as 512M, 2G or a number of bytes")
    if isinstance(text, int):
        value = text
    else:
        m = re.fullmatch(_SIZE, text, re.IGNORECASE)
        if m is None:
            raise UsageError(f"--memory-limit {text}: expected a size such as 512M, 2G or a number of bytes")
        value = int(float(m.group(1)) * _UNITS[m.group(2).upper()])
    if value <= 0:
        raise UsageError(f"--memory-limit {text}: the limit must be more than 0 bytes")
    return value


@dataclass(frozen=True)
class EvalSettings:
    """How to read the inputs and what to evaluate: one evaluation's options.

    ``table``: trec_eval's ``-c -l -M -J -N -D``, ``compat`` and ``ties`` (what the ranked
    table is built with). ``rel_format``: ``-R`` (qrels, qrels_jg, prefs, qrels_prefs).
    ``zscores``: ``-Z`` file. ``subtopics``: subtopic judgements (a path or a DataFrame).
    ``run_format``/``qrels_format``: input formats (auto detects all but msmarco);
    ``columns``: role -> column name in tabular inputs. ``stream``: evaluate a run file
    topic block by topic block (None: automatically for large, compressed or piped runs);
    ``chunk_bytes``: bytes parsed at a time when streaming (None: the engine's default).
    ``hash_inputs``: record each input file's SHA-256. ``memory_limit``: the memory a run that
    is not grouped by topic may take before it is partitioned on disk (``--memory-limit``:
    bytes or ``"512M"``; None: the engine's default). ``engine``: ``local`` or ``dask`` (the
    cluster is the current :func:`irevalcli.engine.dask_engine.session`'s, else a local one
    for the call; ``scheduler``: a running cluster's address, ``workers``: the size of the local
    cluster ireval starts). ``labelled``: the run is one table carrying the label with each row (no
    separate qrels). ``partitioned``: no topic spans two files of the run dataset (no shuffle).

    Made with the fields, or with :meth:`of` from flat names (``EvalSettings.of(complete=True,
    max_docs=100)``). Invalid values raise :class:`~irevalcli.errors.UsageError` here, once.
    """

    table: EvalOptions = field(default_factory=EvalOptions)
    rel_format: str = "qrels"
    zscores: str | os.PathLike[str] | None = None
    subtopics: Any = None
    run_format: str = "auto"
    qrels_format: str = "auto"
    columns: Mapping[str, str] | None = None
    stream: bool | None = None
    chunk_bytes: int | None = None
    hash_inputs: bool = True
    memory_limit: int | str | None = None
    engine: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    labelled: bool = False
    partitioned: bool = False

    def __post_init__(self) -> None:
        try:
            self._validate()
        except IrevalError as exc:
            raise api_wording(exc) from None

    def _validate(self) -> None:
        t = self.table
        if t.max_docs is not None and t.max_docs < 0:
            raise UsageError(f"-M {t.max_docs}: the number of documents to keep cannot be negative")
        if self.rel_format not in REL_FORMATS:
            raise UsageError(f"-R {self.rel_format}: unknown judgement format (known: {', '.join(REL_FORMATS)})")
        if t.compat not in COMPAT_MODES:
            raise UsageError(f"--compat {t.compat}: unknown version (known: {', '.join(COMPAT_MODES)})")
        if t.ties not in TIE_RULES:
            raise UsageError(f"--ties {t.ties}: unknown tie rule (known: {', '.join(TIE_RULES)})")
        if t.ties != "docno" and self.rel_format != "qrels":
            raise UsageError(f"--ties {t.ties} applies to -R qrels judgements, not -R {self.rel_format}")
        parse_memory_limit(self.memory_limit)
        if self.engine not in ENGINES:
            raise UsageError(f"--engine {self.engine}: unknown engine (known: {', '.join(ENGINES)})")
        if self.engine == "local" and self.scheduler is not None:
            raise UsageError("--scheduler applies to --engine dask")
        if self.engine == "local" and self.workers is not None:
            raise UsageError("--workers applies to --engine dask")
        if self.scheduler is not None and self.workers is not None:
            raise UsageError("--workers sizes the local cluster ireval starts; a --scheduler's cluster has its own")
        if self.workers is not None and self.workers < 1:
            raise UsageError(f"--workers {self.workers}: needs at least 1 worker")
        if self.workers is not None and self.workers > max_local_workers():
            raise UsageError(
                f"--workers {self.workers}: a local cluster has at most {max_local_workers()} workers "
                f"({WORKERS_PER_CPU} per CPU, {cpus()} CPUs here)"
            )
        if self.partitioned and self.engine != "dask":
            raise UsageError("--partitioned-by-topic applies to --engine dask")
        if self.labelled and self.rel_format != "qrels":
            raise UsageError(f"--labelled tables carry -R qrels labels, not -R {self.rel_format}")
        if self.rel_format != "qrels" and (self.qrels_format != "auto" or "rel" in (self.columns or {})):
            raise UsageError(f"--qrels-format and --column rel apply to -R qrels judgements, not -R {self.rel_format}")

    @classmethod
    def of(cls, **names: Any) -> EvalSettings:
        """EvalSettings from flat names: :class:`EvalSettings`' fields and the table's
        (``complete``, ``rel_level``, ``max_docs``, ``judged_only``, ``num_docs``,
        ``only_query``, ``compat``, ``ties``). An unknown name is a TypeError."""
        return cls().updated(**names)

    @classmethod
    def given(cls, options: EvalSettings | None, names: Mapping[str, Any], where: str) -> EvalSettings:
        """For a call that takes ``options=`` or the settings' names as keywords (not both):
        the settings it was given. ``where`` names the call in the TypeError for both."""
        if options is not None and names:
            raise TypeError(
                f"{where} takes options=EvalSettings(...) or settings as keywords, not both "
                f"(got options= and {'=, '.join(sorted(names))}=)"
            )
        return options if options is not None else cls.of(**names)

    def updated(self, **names: Any) -> EvalSettings:
        """A copy with the named settings (flat names, as :meth:`of`) changed."""
        own = {f.name for f in fields(self)} - {"table"}
        unknown = sorted(set(names) - own - TABLE_FIELDS)
        if unknown:
            raise TypeError(f"unknown setting '{unknown[0]}' (known: {', '.join(sorted(own | TABLE_FIELDS))})")
        table = {k: v for k, v in names.items() if k in TABLE_FIELDS}
        rest = {k: v for k, v in names.items() if k in own}
        return replace(self, table=self.table.replaced(**table), **rest)

    # the table's options, read as flat names too
    @property
    def compat(self) -> str:
        return self.table.compat

    @property
    def ties(self) -> str:
        return self.table.ties

    @property
    def only_query(self) -> str | None:
        return self.table.only_query

    @property
    def read_ranks(self) -> bool:
        """Whether a run's rank column is read (``--ties rank`` orders by it; otherwise it is
        not parsed, nor checked): the readers' ``ranks=`` argument, as ``hash_inputs`` is
        their ``hash=``, wherever the settings' inputs are read."""
        return self.table.ties == "rank"


Advance = Callable[[int], None]  # called with the number of bytes just read (as stored)


class ProgressReport(Protocol):
    """What :func:`irevalcli.api.evaluate` reports while it works. ``label`` is what is being
    done ("reading", "evaluating"), ``path`` the input it is done to (``-``: standard input)."""

    def reading(self, label: str, path: str) -> AbstractContextManager[Advance | None]:
        """Around the reading of ``path`` (whole or streamed): yields the callback to report
        bytes read to, or None when no one is watching."""
        ...

    def step(self, label: str, path: str | None = None) -> AbstractContextManager[None]:
        """Around work without a byte count (evaluating a run read whole, reading judgements
        in a ``-R`` format)."""
        ...


class NoProgress:
    """A :class:`ProgressReport` that tells no one (the default of the Python API)."""

    watching = False  # (a report without this attribute, or true, may show what is read)

    @contextmanager
    def reading(self, label: str, path: str) -> Iterator[Advance | None]:
        yield None

    @contextmanager
    def step(self, label: str, path: str | None = None) -> Iterator[None]:
        yield


NO_PROGRESS: ProgressReport = NoProgress()
