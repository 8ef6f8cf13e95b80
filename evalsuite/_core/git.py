"""Running git for the governance checks: one environment, one timeout.

The manifest-history check (`evalsuite.manifest`) and the ledger-tracking check
(`evalsuite.holdout`) both read the project's git history. They run git with every ``GIT_*``
variable of the caller removed (a ``GIT_DIR`` or ``GIT_WORK_TREE`` set for another repository
must not decide what this project's history says), with terminal prompts off and with a
timeout, so a hung git never hangs a command (docs/design/holdout-governance.md).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

__all__ = ["GIT_TIMEOUT_S", "run_git"]

GIT_TIMEOUT_S = 30
"""Seconds one git command may take."""


def run_git(
    cwd: Path, *args: str, timeout: float = GIT_TIMEOUT_S
) -> subprocess.CompletedProcess[str]:
    """Run ``git *args`` in `cwd` and capture its text output (never raises on its exit code).

    Raises:
        OSError: git is missing or could not start.
        subprocess.TimeoutExpired: git ran past `timeout` seconds.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
