"""Scan the installed distributions once per process, not once per `eval()`.

Every inspect ``eval()`` looks up which installed distribution ships each task's module
(to record it in the log). For a task that no distribution names, which is every task file
of a suite (evalsuite imports it from the suite's directory under a module name of its
own), inspect falls back to ``importlib.metadata.packages_distributions()``: a read of
every installed distribution's file list, a second or more in a full environment, paid
again by each run. The result only changes when packages are installed, so the runner
keeps the first scan for the life of the process (docs/design/run-speed.md).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping

__all__ = ["scan_distributions_once"]

_SCAN = "packages_distributions"


def scan_distributions_once() -> None:
    """Make inspect's distribution scan run once in this process (later calls reuse it).

    A no-op when inspect no longer has the scan where this looks for it, or when it is
    cached already.
    """
    from inspect_ai._util import package

    scan: Callable[[], Mapping[str, list[str]]] | None = getattr(package, _SCAN, None)
    if scan is None or hasattr(scan, "cache_info"):
        return
    setattr(package, _SCAN, functools.cache(scan))
