"""`make test` runs every check (side by side: docs/design/run-speed.md)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from tests.helpers import REPO


def test_make_test_runs_every_check_in_one_parallel_make() -> None:
    make = shutil.which("make")
    if make is None:
        pytest.fail("GNU make is needed to check the Makefile (apt-get install make)")
    dry = subprocess.run(
        [make, "-n", "test"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout
    for check in (
        "ruff check evalsuite tasks tests benchmarks scripts",
        "ruff format --check evalsuite tasks tests benchmarks scripts",
        "lint-imports",
        "mypy",
        "pytest -q -n 2 --dist worksteal",
    ):
        assert check in dry, f"`make test` no longer runs {check!r}"
    # lint, typecheck and the tests are jobs of one make, so that they overlap
    first = dry.splitlines()[0]
    assert "--jobs=3" in first and "lint typecheck unit" in first
