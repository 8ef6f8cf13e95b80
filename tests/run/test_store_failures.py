"""A run whose disk fills or whose database server goes away stops resumable, exit 2 (issue 28).

The failures are injected where they surface: the database driver's error at the store's
write (SQLite's "database or disk is full"; psycopg's error of a PostgreSQL server that
stopped, for every statement from then on). docs/design/run-limits.md.
"""

from __future__ import annotations

import errno
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import pytest
from sqlalchemy.exc import OperationalError

from evalsuite.store import Store
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.run.processes import store_of

RUN = ("run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "3", "--max-samples", "1")
PLANNED = 6  # 2 dev items x 3 epochs


@pytest.fixture
def probe(tmp_path: Any) -> Project:
    return make_probe_project(tmp_path, n_per_stratum=2)


def _resumes_to_completion(project: Project, run_id: str) -> None:
    resumed = project.invoke("run", "--resume", run_id, "--no-progress", "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json_out(resumed)["resumed"] is True
    store = store_of(project)
    assert store.get_run(run_id).status == "complete"
    frame = store.attempts(run_id)
    assert len(frame) == PLANNED
    assert set(frame["outcome"]) == {"scored"}  # nothing became a harness error


def test_a_full_disk_mid_run_stops_it_interrupted_and_resumable(
    probe: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    write = Store._write_attempts
    calls: list[int] = []

    def filling(self: Store, conn: Any, run_id: str, records: Any) -> None:
        calls.append(len(records))
        if len(calls) > 2:  # the disk is full from the third attempt on
            raise OperationalError(
                "INSERT INTO attempts", {}, sqlite3.OperationalError("database or disk is full")
            )
        write(self, conn, run_id, records)

    monkeypatch.setattr(Store, "_write_attempts", filling)
    result = probe.invoke(*RUN, "--no-progress", "--json")
    assert result.exit_code == 2, result.stderr  # was 1, an unexpected error
    error = json_out(result)
    assert (error["error"], error["exit_code"]) == ("RunStoppedError", 2)
    (run,) = store_of(probe).list_runs()
    assert run.status == "interrupted"  # was left "running"
    assert "database or disk is full" in result.stderr
    assert "2 finished attempt(s) are kept and it is stored as interrupted" in result.stderr
    assert f"evalsuite run --resume {run.run_id}" in result.stderr
    monkeypatch.setattr(Store, "_write_attempts", write)  # space freed
    _resumes_to_completion(probe, run.run_id)


def test_a_database_server_stopped_mid_run_stops_it_resumable(
    probe: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    tx = Store._tx
    record = Store.record_attempts
    state = {"written": 0, "down": False}

    @contextmanager
    def server(self: Store) -> Iterator[Any]:
        if state["down"]:
            raise OperationalError(
                "SELECT 1",
                {},
                psycopg.OperationalError(
                    "consuming input failed: server closed the connection unexpectedly"
                ),
            )
        with tx(self) as conn:
            yield conn

    def counting(self: Store, run_id: str, records: Any) -> int:
        written = record(self, run_id, records)
        state["written"] += 1
        state["down"] = state["written"] >= 2  # the server stops after the second attempt
        return written

    monkeypatch.setattr(Store, "_tx", server)
    monkeypatch.setattr(Store, "record_attempts", counting)
    result = probe.invoke(*RUN, "--no-progress")
    assert result.exit_code == 2, result.stderr
    assert "server closed the connection unexpectedly" in result.stderr
    assert "could not even be told the run stopped, so it still reads `running`" in result.stderr
    monkeypatch.setattr(Store, "_tx", tx)  # the server is back
    monkeypatch.setattr(Store, "record_attempts", record)
    (run,) = store_of(probe).list_runs()
    assert f"evalsuite run --resume {run.run_id}" in result.stderr
    assert len(store_of(probe).attempts(run.run_id)) == 2
    _resumes_to_completion(probe, run.run_id)


def test_a_full_disk_under_inspects_log_stops_the_run_resumable(
    probe: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The eval itself raises the full disk (inspect writing its log at the end)."""
    from evalsuite.run import _runner

    execute = _runner._execute

    def full_at_the_end(*args: Any, **kwargs: Any) -> Any:
        execute(*args, **kwargs)
        raise OSError(errno.ENOSPC, "No space left on device", str(probe.root / "log.json"))

    monkeypatch.setattr(_runner, "_execute", full_at_the_end)
    result = probe.invoke(*RUN, "--no-progress")
    assert result.exit_code == 2, result.stderr  # was 1
    (run,) = store_of(probe).list_runs()
    assert run.status == "interrupted"
    assert "No space left on device" in result.stderr
    assert f"evalsuite run --resume {run.run_id}" in result.stderr
