"""The one way ireval handles SIGINT, SIGTERM and SIGHUP, for the command line and the library.

The command line (:mod:`irevalcli.commands.process`) installs :func:`on_signal` for the
whole run: the first signal becomes an exception (``KeyboardInterrupt`` for SIGINT,
:class:`Terminated` otherwise) so that every ``finally`` block runs (temporary files,
``--output``'s temporary file, the out-of-core spill directory). A burst of signals (what
``timeout``, a CI cancel or an impatient Ctrl-C send) is one exit: a signal within
:data:`REPEAT_AFTER` seconds of the one raised is only recorded, so it cannot cut a clean-up
short; one later than that is raised again (the first may have been swallowed: a signal
handler that raises inside a finaliser is ignored), so the process never stays deaf. Once
the command has ended (:func:`finish`), signals are only recorded: the exit is under way.

:func:`committing` is where a command's output files take their place (the renames), and
:func:`commit` where its standard output has been written and flushed. Once they have, the
command has done what it was asked, and the exit must not say otherwise: a
signal that arrives during the renames or after them, while the command finishes (a line
on stderr, its exit status), is not raised and does not decide the exit (:func:`deciding`).
A replaced output under "ireval: interrupted" and exit 130 would tell a script to distrust a
complete file, or leave it with the new file of one output and the old of another. A signal
that came before and was never raised (swallowed in a finaliser) is raised before the
commit (:func:`raise_pending`). Only a signal :data:`REPEAT_AFTER` seconds after the first
late one is raised, so the process is never deaf (its stderr blocked on a stalled reader).

:func:`deferred` holds the signals for a short critical section (a temporary file created
and not yet named; a directory being removed) and acts on them when it ends. It works by
the same handler, not by masking: Python runs signal handlers in the main thread whichever
thread the operating system picks, so a mask on one thread holds nothing. In library use,
where the caller's handlers are in place, it swaps in :func:`on_signal` for the section
and hands what arrived to the caller's handler afterwards.

This module imports nothing from ireval: every layer may use it.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


class Terminated(BaseException):
    """SIGTERM or SIGHUP, raised so that ``finally`` blocks (temporary files) run."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def terminating_signals() -> list[int]:
    """The signals ireval turns into a clean exit (temporary files removed, one line on
    stderr): SIGINT (Ctrl-C), SIGTERM, and SIGHUP (the terminal or the CI runner went
    away). SIGPIPE and SIGXFSZ are ignored by Python, so they arrive as write errors."""
    return [signal.SIGINT, signal.SIGTERM, *([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])]


# Every signal received since reset(), in order; the first decides the exit.
received: list[int] = []
REPEAT_AFTER = 1.0  # seconds: a signal this long after the one raised is raised again
# committed: len(received) when the outputs took their place (signals from there on are
# late); late: when the first late signal came
_state: dict[str, Any] = {
    "raised": None,
    "holding": 0,
    "finished": False,
    "unraisable": None,
    "committed": None,
    "late": None,
}
REDELIVER_AFTER = 0.05  # seconds: a signal swallowed by a finaliser is delivered again after this


def reset() -> None:
    """Forget the signals of an earlier run (one command line call in a long-lived process)."""
    received.clear()
    _state.update(raised=None, holding=0, finished=False, committed=None, late=None)


def finish() -> None:
    """The command has ended: from now on signals are only recorded (the exit is under way)."""
    _state["finished"] = True


def deciding() -> list[int]:
    """The signals that decide the exit: every one received, but those that came once the
    outputs were in place (:func:`committing`), unless one of those was raised."""
    committed = _state["committed"]
    return received if committed is None else received[:committed]


def on_signal(signum: int, frame: Any) -> None:
    """The handler: record the signal; raise it unless held by :func:`deferred`, the command
    has ended, the outputs are in place (:func:`committing`), or one was raised less than
    :data:`REPEAT_AFTER` seconds ago."""
    received.append(signum)
    if not _state["holding"]:
        _decide(signum)


def _decide(signum: int) -> None:
    """What the command line's handler does with a signal it is not holding."""
    if _state["finished"]:
        return
    if _state["committed"] is not None:
        now = time.monotonic()
        if _state["late"] is None:
            _state["late"] = now
        if now - _state["late"] < REPEAT_AFTER:
            return
        _state["committed"] = None  # insisted on: the exit is the signal's after all
    if _may_raise():
        _raise(signum)


def _may_raise() -> bool:
    raised = _state["raised"]
    return raised is None or time.monotonic() - raised >= REPEAT_AFTER


def _raise(signum: int) -> None:
    _state["raised"] = time.monotonic()
    if signum == signal.SIGINT:
        raise KeyboardInterrupt
    raise Terminated(signum)


def _swallowed(unraisable: Any) -> None:
    """``sys.unraisablehook`` while :func:`install`'s handlers are in place.

    A signal raised where Python cannot propagate an exception (a finaliser, a weakref
    callback such as importlib's module locks) is swallowed, and Python would print
    "Exception ignored in ..." with a traceback: a second stderr line, and a command that
    goes on as if nothing had arrived. Such a signal is instead delivered again a moment
    later, from a timer thread, so that it is raised in ordinary code; nothing is printed.
    Anything else goes to the hook that was in place."""
    exc = unraisable.exc_value
    if isinstance(exc, Terminated | KeyboardInterrupt) and received and not _state["finished"]:
        signum = exc.signum if isinstance(exc, Terminated) else signal.SIGINT
        _state["raised"] = None  # it never reached the command: raise it when it comes again
        timer = threading.Timer(REDELIVER_AFTER, signal.raise_signal, (signum,))
        timer.daemon = True
        timer.start()
        return
    previous = _state["unraisable"] or sys.__unraisablehook__
    previous(unraisable)


def install() -> list[tuple[int, Any]]:
    """:func:`on_signal` for SIGINT/SIGTERM/SIGHUP where Python's defaults are in place (main
    thread only); a signal the caller ignores (``nohup``) stays ignored; a signal swallowed by
    a finaliser is delivered again (:func:`_swallowed`). Returns what to give :func:`restore`."""
    if threading.current_thread() is not threading.main_thread():
        return []
    if sys.unraisablehook is not _swallowed:
        _state["unraisable"] = sys.unraisablehook
        sys.unraisablehook = _swallowed
    saved: list[tuple[int, Any]] = []
    for sig in terminating_signals():
        default = signal.default_int_handler if sig == signal.SIGINT else signal.SIG_DFL
        try:
            if signal.getsignal(sig) is default:
                saved.append((sig, signal.signal(sig, on_signal)))
        except (ValueError, OSError):
            pass
    return saved


def hold() -> Any:
    """Block SIGINT, SIGTERM and SIGHUP in the main thread until :func:`release`: one that
    arrives while the handlers are being installed waits, and is delivered where the caller
    turns it into an exit (before, a signal sent once SIGTERM's handler was in place could
    land before SIGHUP's, or before the caller's ``try``: killed by SIGHUP, or a traceback).
    Returns what :func:`release` restores; None where signals cannot be blocked."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, terminating_signals())


def release(held: Any) -> None:
    """Undo :func:`hold` (again: nothing more); a signal held meanwhile is delivered now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def restore(saved: list[tuple[int, Any]]) -> None:
    if sys.unraisablehook is _swallowed and threading.current_thread() is threading.main_thread():
        sys.unraisablehook = _state["unraisable"] or sys.__unraisablehook__
        _state["unraisable"] = None
    for sig, handler in saved:
        try:
            signal.signal(sig, handler)
        except (ValueError, OSError):
            pass


@contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP for the duration of the block, then act on the first
    that arrived as the handler in place would have (nothing more happens if one was
    already raised: the exit is under way). Nests: the outermost block acts."""
    if threading.current_thread() is not threading.main_thread():
        yield  # handlers run in the main thread, which is not in this block
        return
    outer = _state["holding"] == 0
    swapped: list[tuple[int, Any]] = []
    if outer:
        for sig in terminating_signals():
            try:
                current = signal.getsignal(sig)
                if current is not on_signal and current is not signal.SIG_IGN:
                    swapped.append((sig, signal.signal(sig, on_signal)))
            except (ValueError, OSError):
                pass
    start = len(received)
    _state["holding"] += 1
    try:
        yield
    finally:
        if outer:
            restore(swapped)  # before the count drops, so no signal is raised in between
        _state["holding"] -= 1
        if outer:
            arrived = received[start:]
            theirs = dict(swapped)
            del received[start:]  # the caller's handlers keep their own record
            received.extend(s for s in arrived if s not in theirs)
            if arrived:
                _act(arrived[0], theirs)


@contextmanager
def committing() -> Iterator[None]:
    """Hold SIGINT, SIGTERM and SIGHUP (:func:`deferred`) while a command's outputs take
    their place; once the block has ended without an error, they have: a signal that
    arrived during it, or arrives later, no longer decides the exit (see the module's
    docstring). A block that fails (a rename refused) commits nothing."""
    raise_pending()
    mark = len(received)  # (one between here and the hold is raised: nothing is committed)
    with deferred():
        yield
        commit(mark)


def commit(mark: int | None = None) -> None:
    """The command's output is complete (written to standard output and flushed; or, with
    ``mark``, in place since that many signals had been received: :func:`committing`)."""
    if mark is None:
        raise_pending()
    if _state["committed"] is None:
        _state["committed"] = len(received) if mark is None else mark


def raise_pending() -> None:
    """Raise a signal that came before the output was complete and was never raised (it
    landed in a finaliser, and its second delivery is still to come): committed first, it
    would no longer decide the exit, and the command would end 0 as if none had come."""
    quiet = _state["raised"] is None and _state["committed"] is None
    if received and quiet and not _state["finished"] and not _state["holding"]:
        _raise(received[0])


def interrupted() -> None:
    """A ``KeyboardInterrupt`` (or click's Abort) that no handler recorded ends the command
    as SIGINT would: it is the exit's signal."""
    if not deciding():
        _state["committed"] = None
        received.insert(0, signal.SIGINT)


def _act(signum: int, theirs: dict[int, Any]) -> None:
    """What the handler in place would have done with ``signum``."""
    if signum not in theirs:  # on_signal is the handler (the command line)
        _decide(signum)
        return
    handler = theirs[signum]
    if callable(handler):
        handler(signum, None)
    elif handler == signal.SIG_DFL:
        signal.raise_signal(signum)
