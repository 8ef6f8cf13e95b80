"""The PostgreSQL tests skip without PostgreSQL, but fail in CI (EVALSUITE_REQUIRE_POSTGRES=1).

A real pytest process runs a two-test module that uses the suite's own ``store_url`` and ``pg``
fixtures (tests/conftest.py) as the store tests do, with ``EVALSUITE_PG_BIN`` naming a directory
without PostgreSQL. The module is small and the installed pytest plugins are not loaded, on
purpose: collecting a store test module, loading inspect's entry points and the plugins cost
about 9 s of CPU per run and are not what is checked (docs/design/test-speed.md, fourth pass).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

CONFTEST = "from tests.conftest import pg, store_url  # the suite's own fixtures\n"
MODULE = '''
def test_a_store_test(store_url: str) -> None:
    """Like the store tests: an SQLite store, and (second parameter) a PostgreSQL database."""
    assert store_url.startswith(("sqlite:///", "postgresql://"))
'''


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(CONFTEST)
    (suite / "test_needs_postgres.py").write_text(MODULE)
    return subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"),
            *("-c", str(REPO / "pyproject.toml"), "--rootdir", str(REPO), str(suite)),
        ],
        cwd=REPO,
        env={
            **os.environ,
            "EVALSUITE_PG_BIN": str(tmp_path / "none"),
            # the installed pytest plugins (xdist, hypothesis, inspect's...) are not what is
            # checked: without them the process costs about 1 s of CPU instead of about 4 s
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
            **env,
        },
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
        assert "1 passed" in result.stdout  # the SQLite variant ran; only PostgreSQL failed
    else:
        assert result.returncode == 0, result.stdout[-2000:]
        assert "1 passed, 1 skipped" in result.stdout


def test_ci_requires_postgres() -> None:
    script = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert "export EVALSUITE_REQUIRE_POSTGRES=1" in script
