"""Run the CLI in real subprocesses (signals, races), with the fake model providers loaded.

The processes are forked by the tests' fork server (tests/zygote.py), which has made the
imports already: real, separate processes that receive real signals, without a fresh
interpreter's start-up. ``fresh=True`` starts a new interpreter instead (the start-up is
then part of what is tested)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests import zygote
from tests.entry_points import PRELUDE
from tests.helpers import REPO, Project, wait_until

_LAUNCH = (
    "import os, sys, time; sys.path.insert(0, {repo!r}); "
    + PRELUDE
    + "import tests.run.fake_models; "
    "from evalsuite.cli import main; import evalsuite.run; "
    "go = {go!r}; ready = {ready!r}\n"
    "if ready: open(ready, 'w').close()\n"
    "while go and not os.path.exists(go): time.sleep(0.005)\n"
    "sys.argv = ['evalsuite'] + sys.argv[1:]; main()"
)


def spawn(
    project: Project,
    *args: str,
    env: dict[str, str] | None = None,
    go: Path | None = None,
    ready: Path | None = None,
    fresh: bool = False,
) -> subprocess.Popen[str]:
    """Start `evalsuite --root <project> ARGS...` in a new process.

    With `go`, the process imports everything, touches `ready`, and waits for `go` to exist
    before it runs the command: several processes then start the command within
    milliseconds of each other. The process is forked by the zygote unless `fresh`.
    """
    code = _LAUNCH.format(repo=str(REPO), go=str(go or ""), ready=str(ready or ""))
    start = subprocess.Popen if fresh else zygote.popen
    return start(
        [sys.executable, "-c", code, "--root", str(project.root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=dict(os.environ, EVALSUITE_KEY_DIR=str(project.key_dir), **(env or {})),
    )


def store_of(project: Project) -> Store:
    """The project's default results store."""
    return Store(default_store_url(Layout(project.root).state))


def wait_for_attempts(
    store: Store,
    at_least: int,
    proc: subprocess.Popen[str] | None = None,
    timeout_s: float | None = None,
) -> str:
    """Poll the store until its first run has `at_least` attempts; return the run id.

    With `proc` (the process doing the run), its early end fails the wait at once; the
    overall limit is `tests.helpers.WAIT_S` unless `timeout_s` is given.
    """

    def reached() -> str | None:
        runs = store.list_runs()
        if runs and len(store.attempt_keys(runs[0].run_id)) >= at_least:
            return runs[0].run_id
        return None

    return wait_until(reached, f"a run has {at_least} attempts", proc=proc, timeout_s=timeout_s)
