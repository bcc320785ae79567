"""The exception tree.

Library code raises these; ``str(e)`` is the complete user-facing message.
``commands/main.py`` turns them into one line on stderr and an exit code, in one place.
"""

from __future__ import annotations

from contextvars import ContextVar

# True while the command line runs: errors then name its options (-c, -M N, -R FMT), and
# the Python API's own names (complete=True, max_docs=N, rel_format=...) otherwise.
IN_CLI: ContextVar[bool] = ContextVar("irevalcli_in_cli", default=False)


class IrevalError(Exception):
    """Base class: anything the user can fix. Exit code 2 unless overridden."""

    exit_code = 2


class UsageError(IrevalError):
    """A bad option, option value or argument combination."""


class InputError(IrevalError):
    """A malformed or unreadable input file.

    The message names the file and, where one applies, the physical line number:
    ``run.txt:17: expected at least 6 fields, got 3``.
    """

    def __init__(self, path: str, message: str, line: int | None = None) -> None:
        self.path = path
        self.line = line
        self.detail = message
        where = f"{path}:{line}" if line is not None else path
        super().__init__(f"{where}: {message}")

    def __reduce__(self) -> tuple[type, tuple[str, str, int | None]]:
        # raised on a Dask worker, re-raised on the client: rebuilt from its parts
        return (type(self), (self.path, self.detail, self.line))


class DuplicateDocError(InputError):
    """The same document twice in one topic (run) or judged twice (qrels)."""


class MissingTopicError(InputError):
    """A judged topic has no results and ``-c`` was not given."""


class NoQueriesError(IrevalError):
    """Nothing was evaluated (for example ``-D`` named a topic that is not judged)."""


class UnknownMeasureError(UsageError):
    """A measure name that is not in the registry."""


class MeasureParamError(UsageError):
    """A known measure with parameters it cannot take."""


class ClusterError(IrevalError):
    """``--engine dask``: the cluster cannot be reached, or gave up on a task."""


class OutputError(IrevalError):
    """The result could not be written where the user asked."""


class TemporaryFilesError(IrevalError):
    """Temporary files (an unsorted run's out-of-core partitions) could not be written."""


class GateFailed(IrevalError):
    """``ireval gate``: a quality check failed. Raised after the report is written; exit code 1."""

    exit_code = 1
