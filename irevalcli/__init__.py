"""ireval: a TREC-style evaluator for ranked retrieval, byte-compatible with trec_eval 10.0."""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "evaluate"]

# True while the command line runs: errors then name its options (-c, -M N, -R FMT), and
# the Python API's own names (complete=True, max_docs=N, rel_format=...) otherwise.
IN_CLI: ContextVar[bool] = ContextVar("irevalcli_in_cli", default=False)


def __getattr__(name: str) -> Any:
    # keep `import irevalcli` (and so `ireval --help`) free of numpy/pandas/pyarrow
    if name == "evaluate":
        from .api import evaluate

        return evaluate
    raise AttributeError(name)
