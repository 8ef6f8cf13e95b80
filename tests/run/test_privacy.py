"""Private inspect directories of killed holdout runs are deleted at the next start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evalsuite.run._privacy import private_inspect_env
from tests.helpers import finish
from tests.run.conftest import make_probe_project
from tests.run.processes import spawn, store_of, wait_for_attempts

PREFIX = "evalsuite-private-"


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _left_behind(base: Path, pid: int) -> Path:
    """What a SIGKILLed holdout run leaves: its private directory with an empty trace file."""
    path = base / f"{PREFIX}{pid}-k1ll3d"
    traces = path / "data" / "inspect_ai" / "traces"
    traces.mkdir(parents=True)
    (traces / f"trace-{pid}.log").write_text("")
    (path / "owner.lock").write_text("")
    return path


def test_stale_private_directories_of_dead_processes_are_deleted(tmp_path: Path) -> None:
    from evalsuite.run._privacy import clean_stale_private_dirs

    stale = _left_behind(tmp_path, _dead_pid())
    mine = _left_behind(tmp_path, os.getpid())  # a run in this process
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        running = _left_behind(tmp_path, alive.pid)  # a run in progress elsewhere
        unrelated = tmp_path / f"{PREFIX}notapid"
        unrelated.mkdir()
        assert clean_stale_private_dirs(tmp_path) == [stale]
        assert not stale.exists()
        assert mine.exists() and running.exists() and unrelated.exists()
    finally:
        alive.kill()
        alive.wait()


def test_a_holdout_run_cleans_up_before_it_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    stale = _left_behind(tmp_path, _dead_pid())
    with private_inspect_env(holdout=True) as private:
        assert not stale.exists()
        assert private is not None
        assert private.name.startswith(f"{PREFIX}{os.getpid()}-")
        assert (private / "owner.lock").exists()
    assert not private.exists()
    assert list(tmp_path.iterdir()) == []


def test_the_run_after_a_sigkill_removes_what_the_killed_run_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real holdout run process, really SIGKILLed, leaves its private directory behind; the
    next run removes it at its start. That next run (the resume) is made in this process, with
    the same temporary directory: what is checked is what a run does when it starts, which does
    not depend on how it was started (a process of its own cost about 8 s of CPU more,
    docs/design/test-speed.md, fourth pass)."""
    project = make_probe_project(tmp_path, n_per_stratum=4)
    base = tmp_path / "tmp"
    base.mkdir()
    args = ("run", "probe@1.0.0", "--split", "holdout", "--model", "fakeagent/x")
    # held by its fake model after one attempt (two calls) until `gate` exists
    # (tests/run/fake_models.py): killed mid-run every time, with no delay to wait out
    gate = tmp_path / "gate"
    held = ("-M", "hold_after=2", "-M", f"hold_until={gate}")
    slow = (*held, "--epochs", "3", "--max-samples", "1", "--no-progress")
    victim = spawn(project, *args, *slow, env={"TMPDIR": str(base)})
    run_id = wait_for_attempts(store_of(project), at_least=1, proc=victim)
    victim.send_signal(signal.SIGKILL)
    finish(victim)
    gate.touch()
    assert victim.returncode == -signal.SIGKILL
    left = list(base.glob(f"{PREFIX}*"))
    assert len(left) == 1 and any(left[0].rglob("trace-*.log"))
    monkeypatch.setenv("TMPDIR", str(base))
    monkeypatch.setattr(tempfile, "tempdir", str(base))
    resumed = project.invoke("run", "--resume", run_id, "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    assert list(base.glob(f"{PREFIX}*")) == []
    assert store_of(project).get_run(run_id).status == "complete"
