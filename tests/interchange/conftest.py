"""Shared set-up of the interchange tests: the frozen `desk` suite and a dev run of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Project, json_out
from tests.run.test_foreign_tasks import frozen
from tests.run.test_ingest_suite import plain_inspect_log

try:  # make install installs it; a green run must not hide its absence by skipping
    import every_eval_ever  # noqa: F401
except ImportError:  # pragma: no cover - only without make install
    pytest.fail(
        "tests/interchange need the every-eval-ever package: pip install --no-deps "
        "--ignore-requires-python every-eval-ever==0.3.0 (make install does it)",
        pytrace=False,
    )


def ingest(project: Project, path: Path, fmt: str, *args: str) -> dict[str, Any]:
    """`evalsuite ingest PATH --format FMT ARGS --json`, asserted to succeed: its one run."""
    result = project.invoke("ingest", str(path), "--format", fmt, *args, "--json")
    assert result.exit_code == 0, result.stderr
    (run,) = json_out(result)["runs"]
    return dict(run)


@pytest.fixture
def desk(tmp_path: Path) -> tuple[Project, str]:
    """The frozen desk@1.0.0 and the run of its dev items from a plain inspect log."""
    project = frozen(tmp_path)
    log = plain_inspect_log(tmp_path)
    run = ingest(project, log, "inspect", "--suite", "desk@1.0.0", "--split", "dev")
    return project, str(run["run_id"])
