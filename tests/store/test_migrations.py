"""A store written at schema version 1 opens, upgrades in place, and loses nothing."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from evalsuite.store import SCHEMA_VERSION, Store
from tests.helpers import Project, json_out

V1_DUMP = Path(__file__).parent / "data" / "store_v1.sql"
TABLES = ("runs", "attempts", "outcomes")


def _v1_store(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.executescript(V1_DUMP.read_text(encoding="utf-8"))
    return f"sqlite:///{path}"


def _rows(path: Path, table: str) -> list[tuple[object, ...]]:
    with sqlite3.connect(path) as conn:
        columns = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]
        keep = [c for c in columns if c != "content_hash"]
        return sorted(conn.execute(f"SELECT {', '.join(keep)} FROM {table}").fetchall(), key=str)


def test_every_version_has_a_migration() -> None:
    from evalsuite.store._store import MIGRATIONS

    assert sorted(MIGRATIONS) == list(range(1, SCHEMA_VERSION))


def test_a_v1_store_is_upgraded_without_losing_a_row(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    url = _v1_store(path)
    before = {table: _rows(path, table) for table in TABLES}
    assert [len(before[t]) for t in TABLES] == [4, 13, 2]
    store = Store(url)
    assert store.schema_version == SCHEMA_VERSION == 3
    assert {table: _rows(path, table) for table in TABLES} == before
    runs = {r.model: r for r in store.list_runs()}
    # runs ingested from CSV get the fingerprint their rows would get today
    assert all(runs[m].content_hash for m in ("model-a", "model-b", "model-c"))
    assert runs["evalsuite/improved"].content_hash is None
    assert store.runs_with_content(str(runs["model-c"].content_hash)) == [runs["model-c"].run_id]
    assert len(store.attempts(runs["model-b"].run_id)) == 4
    assert len(store.outcomes("task_success")) == 2
    Store(url)  # opening again changes nothing
    assert {table: _rows(path, table) for table in TABLES} == before


def test_a_file_ingested_before_the_upgrade_is_recognised_after_it(tmp_path: Path) -> None:
    project = Project(root=tmp_path / "p", key_dir=tmp_path / "keys")
    state = project.root / ".evalsuite"
    state.mkdir(parents=True)
    _v1_store(state / "results.sqlite")
    csv = tmp_path / "r2.csv"  # the file the v1 store's model-c run was ingested from
    csv.write_text("model,item_id,epoch,score\nmodel-c,q1,1,1\nmodel-c,q2,1,0\nmodel-c,q3,1,1\n")
    result = project.invoke("ingest", str(csv), "--format", "csv", "--json")
    assert result.exit_code == 0, result.stderr
    assert json_out(result)["runs"] == []
    assert json_out(result)["skipped"][0]["existing_run_ids"] == ["20261201-113832-f7ddd3"]


def test_processes_opening_a_v1_store_at_once_migrate_it_once(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    url = _v1_store(path)
    before = {table: _rows(path, table) for table in TABLES}
    code = "import sys; from evalsuite.store import Store; print(Store(sys.argv[1]).schema_version)"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-500:] for _, err in outs]
    assert {out.strip() for out, _ in outs} == {str(SCHEMA_VERSION)}
    assert {table: _rows(path, table) for table in TABLES} == before


def test_a_failed_migration_leaves_the_v1_store_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalsuite.store import _migrations

    path = tmp_path / "store.sqlite"
    url = _v1_store(path)
    before = {table: _rows(path, table) for table in TABLES}

    def broken(conn: object) -> None:
        original(conn)  # type: ignore[arg-type]
        raise RuntimeError("disk on fire")

    original = _migrations.MIGRATIONS[1]
    monkeypatch.setitem(_migrations.MIGRATIONS, 1, broken)  # type: ignore[arg-type]
    with pytest.raises(RuntimeError, match="disk on fire"):
        Store(url)
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT value FROM meta").fetchone() == ("1",)
        columns = [r[1] for r in conn.execute("PRAGMA table_info(runs)")]
    assert "content_hash" not in columns
    assert {table: _rows(path, table) for table in TABLES} == before
    monkeypatch.undo()
    assert Store(url).schema_version == SCHEMA_VERSION
