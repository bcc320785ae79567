"""Facts about the machine ireval runs on, asked in one place.

This module imports nothing from ireval: every layer may use it.
"""

from __future__ import annotations

import os


def cpus() -> int:
    """The CPUs this process may run on (its affinity mask where the system has one, as a
    container's CPU set or ``taskset`` restricts it), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover  (not Linux)
        return max(1, os.cpu_count() or 1)
