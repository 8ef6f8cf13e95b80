"""The tests' waits on subprocesses (tests/helpers.py): generous under load, quick on a death,
bounded on a hang (docs/design/test-speed.md, "Waits")."""

from __future__ import annotations

import subprocess
import sys
import time
import types
from pathlib import Path

import pytest

from evalsuite.store import Store
from tests import helpers
from tests.helpers import finish, wait_until
from tests.run.processes import wait_for_attempts


def _python(code: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def test_a_process_that_dies_fails_the_wait_at_once_with_its_stderr(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
    dead = _python("import sys; sys.exit('crashed before any attempt')")
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        wait_for_attempts(store, at_least=1, proc=dead, timeout_s=600)
    assert time.monotonic() - started < 60  # not the 600 s limit
    assert "exit code 1 before a run has 1 attempts" in str(failed.value)
    assert "crashed before any attempt" in str(failed.value)


def test_a_hang_is_killed_and_fails_after_the_limit() -> None:
    hanging = _python(
        "import sys, time; print('started', file=sys.stderr, flush=True); time.sleep(600)"
    )
    with pytest.raises(AssertionError) as failed:
        finish(hanging, timeout_s=2)
    assert "still running after 2 s (a hang?)" in str(failed.value)
    assert "started" in str(failed.value)
    assert hanging.poll() is not None  # killed, not left running


def test_a_condition_that_takes_minutes_under_load_is_still_waited_for(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The default limit outlasts the fixed 120 s that failed healthy runs on a loaded machine."""
    clock = {"now": 0.0}

    def sleep(seconds: float) -> None:
        clock["now"] += seconds

    fake = types.SimpleNamespace(monotonic=lambda: clock["now"], sleep=sleep)
    monkeypatch.setattr(helpers, "time", fake)
    assert helpers.WAIT_S >= 600
    got = wait_until(lambda: clock["now"] >= 300 and "reached", "the slow condition holds")
    assert got == "reached"
    with pytest.raises(AssertionError, match="waited 10 s and still not the condition holds"):
        wait_until(lambda: None, "the condition holds", timeout_s=10)


def test_a_process_that_ends_right_after_meeting_the_condition_is_not_a_failure() -> None:
    quick = _python("pass")
    quick.wait()
    assert wait_until(lambda: 7, "seven", proc=quick) == 7
    done = iter([None, "late"])  # reached between the last poll and the process's end
    assert wait_until(lambda: next(done), "late", proc=quick) == "late"
