"""A stand-in for `evalsuite.cli:cli` in the demo's worker processes (tests/test_demo.py).

A step's arguments after ``--root WORKSPACE`` are Python source and its own argv; the source
runs in the worker process, as a command of the real command line would.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

CALLS: list[str] = []
"""Every step this worker process ran (a worker runs many steps in one process)."""


def fake_cli(args: Sequence[str], prog_name: str) -> None:
    """Run ``args[2]`` as Python with ``sys.argv = [prog_name, *args[3:]]``."""
    assert list(args[:1]) == ["--root"], args
    source = args[2]
    CALLS.append(source)
    saved = sys.argv
    sys.argv = [prog_name, *args[3:]]
    try:
        exec(compile(source, "<demo step>", "exec"), {"__name__": "__demo_step__", "CALLS": CALLS})
    finally:
        sys.argv = saved
