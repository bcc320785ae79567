"""ireval: a TREC-style evaluator for ranked retrieval, byte-compatible with trec_eval 10.0."""

from __future__ import annotations

from typing import Any

from .version import VERSION as __version__

__all__ = ["__version__", "accept_baseline", "compare", "compare_all_pairs", "evaluate", "gate"]


def __getattr__(name: str) -> Any:
    # keep `import irevalcli` (and so `ireval --help`) free of numpy/pandas/pyarrow
    if name == "evaluate":
        from .api import evaluate

        return evaluate
    if name == "compare":
        from .analysis.compare import compare

        return compare
    if name == "compare_all_pairs":
        from .analysis.compare import compare_all_pairs

        return compare_all_pairs
    if name == "gate":
        from .analysis.gate import gate

        return gate
    if name == "accept_baseline":
        from .analysis.baseline import accept_baseline

        return accept_baseline
    raise AttributeError(name)


def __dir__() -> list[str]:
    # the lazily imported public names are listed too (dir(), tab completion in a REPL)
    return sorted(set(globals()) | set(__all__))
