"""A progress display on stderr (rich), only for people watching a terminal.

It is shown only when stderr is a terminal (never in pipes, files or CI logs)
and, unless asked for with ``--progress``, only for large inputs. It is
transient: it erases itself when the work is done, so the terminal keeps
only the results and any error message. stdout is never touched.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

LARGE_INPUT = 64 << 20  # bytes of input (as stored) from which the display is shown unasked


def stderr_is_terminal() -> bool:
    """stderr is an interactive terminal (not a pipe, a file, a dumb terminal or a CI log)."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False
    return tty and os.environ.get("TERM") != "dumb"


def input_bytes(paths: Sequence[str]) -> int:
    """Total size of the input files as stored (standard input and unreadable paths count 0)."""
    total = 0
    for p in paths:
        if p == "-":
            continue
        try:
            total += os.path.getsize(p)
        except OSError:
            pass
    return total


def wanted(mode: bool | None, paths: Sequence[str]) -> bool:
    """``mode``: True (``--progress``), False (``--no-progress``) or None (automatic)."""
    if mode is False or not stderr_is_terminal():
        return False
    if mode is True:
        return True
    if os.environ.get("CI"):
        return False
    return input_bytes(paths) >= LARGE_INPUT


class Progress:
    """Reading bars and evaluation spinners on stderr; does nothing when disabled."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self._live: Any = None

    def __enter__(self) -> Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                DownloadColumn,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )
            from rich.progress import Progress as RichProgress
            from rich.text import Text

            class Bytes(DownloadColumn):  # nothing for spinner steps, which have no size
                def render(self, task: Any) -> Text:
                    return super().render(task) if task.total is not None else Text("")

            console = Console(file=sys.stderr, stderr=True)
            self._live = RichProgress(
                SpinnerColumn(),
                TextColumn("{task.description}", markup=False),
                BarColumn(),
                Bytes(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            self._live.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def naming(self, path: str, shown: str) -> Named:
        """This display as :func:`irevalcli.api.evaluate` is told to report to, with ``shown``
        in place of ``path`` (a run's "run 2/3 runs/b.txt" among several)."""
        return Named(self, path, shown)

    @contextmanager
    def reading(self, label: str, path: str, shown: str | None = None) -> Iterator[Callable[[int], None] | None]:
        """A bar "``label`` ``shown``" while ``path`` is read (and parsed): yields the callback
        that reports bytes read, or None when there is nothing to show (a
        :class:`irevalcli.settings.ProgressReport`)."""
        if self._live is None or path == "-":
            yield None
            return
        try:
            total = os.path.getsize(path)
        except OSError:
            yield None
            return
        live = self._live
        task = live.add_task(f"{label} {path if shown is None else shown}", total=total)
        try:
            yield lambda n: live.advance(task, n)
        finally:
            live.remove_task(task)

    @contextmanager
    def step(self, label: str, path: str | None = None) -> Iterator[None]:
        """A spinner "``label`` ``path``" while the block runs."""
        if self._live is None:
            yield
            return
        task = self._live.add_task(label if path is None else f"{label} {path}", total=None)
        try:
            yield
        finally:
            self._live.remove_task(task)


class Named:
    """A :class:`Progress` that shows ``shown`` wherever ``path`` is reported."""

    def __init__(self, progress: Progress, path: str, shown: str) -> None:
        self.progress = progress
        self.path = path
        self.shown = shown

    @property
    def watching(self) -> bool:
        """Whether anything is shown (when not, a run's reading may begin before its turn)."""
        return self.progress.enabled

    def _name(self, path: str | None) -> str | None:
        return self.shown if path == self.path else path

    def reading(self, label: str, path: str) -> AbstractContextManager[Callable[[int], None] | None]:
        return self.progress.reading(label, path, self._name(path))

    def step(self, label: str, path: str | None = None) -> AbstractContextManager[None]:
        return self.progress.step(label, self._name(path))
