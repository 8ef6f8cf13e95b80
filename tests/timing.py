"""Per-test CPU and wall timing, opt-in: ``-p tests.timing`` with ``EVALSUITE_TEST_TIMING=DIR``.

Each worker appends one JSON line per test to ``DIR/<worker>.jsonl``: the node id, outcome,
wall seconds (setup, call and teardown), the CPU seconds of the worker process itself and of the
child processes it waited for (CLI subprocesses, inspect's helpers). CPU sums stay comparable on
a shared machine where wall clock does not (docs/design/test-speed.md, ``scripts/timing_table.py``).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Generator
from pathlib import Path

import pytest

_OUTCOMES: dict[str, str] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Keep the test's worst outcome over setup, call and teardown (failed > skipped > passed)."""
    rank = {"passed": 0, "skipped": 1, "failed": 2}
    previous = _OUTCOMES.get(report.nodeid, "passed")
    if rank[report.outcome] >= rank[previous]:
        _OUTCOMES[report.nodeid] = report.outcome


_FORKED_CPU = [0.0]
"""CPU seconds of child processes this process did not wait for itself: the children of the
tests' fork server (tests/zygote.py), which the zygote reaps and reports."""


def add_child_cpu(seconds: float) -> None:
    """Count `seconds` of CPU as spent by a child of this process (tests/zygote.py)."""
    _FORKED_CPU[0] += seconds


def _cpu() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system + _FORKED_CPU[0]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None]:
    out = os.environ.get("EVALSUITE_TEST_TIMING")
    if not out:
        yield
        return
    wall0 = time.perf_counter()
    own0, kids0 = _cpu()
    yield
    own1, kids1 = _cpu()
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    record = {
        "test": item.nodeid,
        "wall": round(time.perf_counter() - wall0, 4),
        "cpu": round(own1 - own0, 4),
        "child_cpu": round(kids1 - kids0, 4),
        "outcome": _OUTCOMES.pop(item.nodeid, "passed"),
    }
    path = Path(out) / f"{worker}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(record) + "\n")
