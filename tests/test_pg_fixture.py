"""The PostgreSQL tests skip without PostgreSQL, but fail in CI (EVALSUITE_REQUIRE_POSTGRES=1)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ONE_PG_TEST = "tests/store/test_store.py::test_upsert_never_duplicates[postgresql]"


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", ONE_PG_TEST],
        cwd=REPO,
        env={**os.environ, "EVALSUITE_PG_BIN": str(tmp_path / "none"), **env},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("required", [False, True])
def test_without_postgres_binaries_the_tests_skip_unless_required(
    tmp_path: Path, required: bool
) -> None:
    result = _pytest(tmp_path, EVALSUITE_REQUIRE_POSTGRES="1" if required else "0")
    if required:
        assert result.returncode == 1, result.stdout[-2000:]
        assert "EVALSUITE_REQUIRE_POSTGRES=1 but no PostgreSQL binaries" in result.stdout
    else:
        assert result.returncode == 0, result.stdout[-2000:]
        assert "1 skipped" in result.stdout


def test_ci_requires_postgres() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "export EVALSUITE_REQUIRE_POSTGRES=1" in script
