"""Build an expensive test fixture once per test session, shared by every xdist worker.

A module- or session-scoped fixture runs once per pytest process; under ``pytest -n 2`` a
module whose tests are split between the two workers pays its fixture twice (for the report
tests' four runs, about 25 s of CPU each time). `build_once` builds the fixture's files once
per session, in the session's common temporary directory, under a file lock: the first worker
to get there builds, the others wait for it and reuse the result (the pattern pytest-xdist
documents for "making session-scoped fixtures execute only once"). See
docs/design/test-speed.md.

Tests then share the built files: they must only read them, or write to paths no other test
uses (a report into its own directory, an ingest of content no other test ingests).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from evalsuite._core.atomic import atomic_write_text


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The temporary directory every process of this test session shares."""
    base = tmp_path_factory.getbasetemp()
    # under xdist each worker's base is <session>/popen-gwN; alone, it is the session's
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def build_once(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    build: Callable[[Path], dict[str, Any]],
) -> tuple[Path, dict[str, Any]]:
    """`build(root)` fills an empty directory and returns a JSON-able summary, once a session.

    Returns the directory and the summary; a process that finds them built reuses both. A build
    that failed part-way leaves no ``built.json``: the next process to ask starts it again
    from an empty directory (and fails the same way, with its own traceback).
    """
    shared = session_dir(tmp_path_factory)
    root = shared / f"shared-{name}"
    done = root / "built.json"
    with FileLock(str(shared / f"shared-{name}.lock")):
        if not done.exists():
            if root.exists():
                shutil.rmtree(root)
            root.mkdir()
            summary = build(root)
            atomic_write_text(done, json.dumps(summary))
        loaded: dict[str, Any] = json.loads(done.read_text(encoding="utf-8"))
    return root, loaded
