"""Shared test options: opt-in markers, offline inspect settings."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.entry_points import load_all_but_inspect_evals
from tests.pg import PgServer, find_pg_bin, pg_server

# never let a test reach a model API or a hub, and keep inspect's traces quiet
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_TRACE_LEVEL", "CRITICAL")
os.environ.setdefault("INSPECT_EVAL_CTL_SERVER", "false")
# a signalled run waits this long for inspect to stop before it stops hard (default 5 s):
# the tests of interrupted runs check what inspect writes as it stops (its log, a private
# directory removed), which a busy machine took more than 5 s to do; the hard stop's own
# test sets 1 s (tests/run/test_run_bounds.py, docs/design/run-limits.md)
os.environ.setdefault("EVALSUITE_STOP_WITHIN", "120")


def write_bytecode_again() -> bool:
    """Undo ``PYTHONDONTWRITEBYTECODE`` for the test processes and their children.

    With it set, every pytest process (each xdist worker) compiles every test module again and
    pytest rewrites its asserts again (bytecode is never cached), and every CLI child compiles
    evalsuite again: about a third of a worker's collection CPU (docs/design/test-speed.md,
    fourth pass). Without it Python caches bytecode in ``__pycache__`` as usual: ignored by git,
    by the repository scans and by the hashes of ``tasks/``. Returns whether it was set.
    """
    if not os.environ.pop("PYTHONDONTWRITEBYTECODE", None):
        return False
    sys.dont_write_bytecode = False
    return True


write_bytecode_again()


@pytest.fixture(scope="session", autouse=True)
def _inspect_entry_points_without_inspect_evals() -> None:
    """Load inspect's entry points once, all but inspect_evals' task registry (about 4 s of CPU
    per pytest process, tests/entry_points.py); tests/run/test_published_task.py, the only
    module running inspect_evals tasks, loads it itself."""
    load_all_but_inspect_evals()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="run tests marked slow")
    parser.addoption("--runbrowser", action="store_true", help="run tests needing Chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--runslow"):
        skip = pytest.mark.skip(reason="slow: run with --runslow (make slow)")
        for item in items:
            if "slow" in item.keywords:
                item.add_marker(skip)


# PostgreSQL ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def pg() -> Iterator[PgServer]:
    """A throwaway PostgreSQL server for the whole session (tests/pg.py).

    Skips when no PostgreSQL binaries exist; with ``EVALSUITE_REQUIRE_POSTGRES=1`` (CI) it
    fails instead, so the PostgreSQL tests can never silently not run there.
    """
    required = os.environ.get("EVALSUITE_REQUIRE_POSTGRES") == "1"
    bin_dir = find_pg_bin()
    if bin_dir is None:
        message = "no PostgreSQL binaries (initdb, pg_ctl) on PATH or in /usr/lib/postgresql"
        if required:
            pytest.fail(f"EVALSUITE_REQUIRE_POSTGRES=1 but {message}", pytrace=False)
        pytest.skip(message)
    try:
        import psycopg  # noqa: F401
    except ImportError:
        message = "psycopg is not installed (pip install -e '.[dev]' installs it)"
        if required:
            pytest.fail(f"EVALSUITE_REQUIRE_POSTGRES=1 but {message}", pytrace=False)
        pytest.skip(message)
    with pg_server(bin_dir) as server:
        yield server


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A new, empty store: an SQLite file, and (second parameter) a PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'store.sqlite'}"
    server: PgServer = request.getfixturevalue("pg")
    return server.new_database()
