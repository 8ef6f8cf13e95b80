"""`evalsuite store info` / `store upgrade`, and how a store of another schema is met (issue 12)."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import update

from evalsuite.store import SCHEMA_VERSION, Store
from evalsuite.store._schema import meta
from tests.helpers import Project, json_out
from tests.store.test_migrations import V1_DUMP, _load


def _project(tmp_path: Path, store_url: str) -> Project:
    (tmp_path / "p").mkdir(exist_ok=True)
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys", store_url=store_url)


def test_info_shows_version_counts_and_size_without_changing_an_older_store(
    tmp_path: Path, store_url: str
) -> None:
    project = _project(tmp_path, _load(store_url, V1_DUMP))
    result = project.invoke("store", "info", "--json")
    assert result.exit_code == 0, result.stderr
    info = json_out(result)
    assert (info["schema_version"], info["supported_version"], info["state"]) == (
        1,
        SCHEMA_VERSION,
        "older",
    )
    assert (info["runs"], info["attempts"], info["outcomes"]) == (4, 13, 2)
    assert info["size_bytes"] > 0
    text = project.invoke("store", "info")
    assert "run `evalsuite store upgrade`" in text.stdout
    assert Store(store_url, upgrade=False).info().schema_version == 1  # left as it was
    upgraded = project.invoke("store", "upgrade", "--json")
    assert upgraded.exit_code == 0, upgraded.stderr
    assert json_out(upgraded) | {"url": None} == {
        "url": None,
        "from_version": 1,
        "to_version": SCHEMA_VERSION,
        "gates_imported": 0,  # no .evalsuite/gates/ of an older evalsuite here
        "gate_files_not_imported": [],
    }
    again = project.invoke("store", "upgrade")
    assert "nothing to do" in again.stdout
    assert json_out(project.invoke("store", "info", "--json"))["state"] == "current"


def test_a_store_of_a_newer_schema_is_refused_and_left_alone(
    tmp_path: Path, store_url: str
) -> None:
    store = Store(store_url)
    with store.engine.begin() as conn:
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="99"))
        conn.execute(update(meta).where(meta.c.key == "written_by").values(value="9.9.0"))
    project = _project(tmp_path, store_url)
    for command in (("runs",), ("store", "upgrade")):
        result = project.invoke(*command)
        assert result.exit_code == 1, command
        assert "schema version 99, written by evalsuite 9.9.0, newer than this" in result.stderr
        assert "Upgrade evalsuite" in result.stderr
    info = project.invoke("store", "info", "--json")
    assert info.exit_code == 0
    assert json_out(info)["state"] == "newer"
    assert Store(store_url, upgrade=False, refuse_newer=False).info().schema_version == 99


def test_an_upgrade_that_cannot_alter_the_database_says_what_to_run(tmp_path: Path) -> None:
    import os
    import stat

    path = tmp_path / "ro" / "store.sqlite"
    path.parent.mkdir()
    url = _load(f"sqlite:///{path}", V1_DUMP)
    path.chmod(stat.S_IRUSR)
    path.parent.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        if os.geteuid() == 0:  # root writes anyway: make the migration itself fail instead
            from sqlalchemy.exc import OperationalError

            from evalsuite.store import _migrations

            original = _migrations.MIGRATIONS[1]

            def refused(conn: object) -> None:
                raise OperationalError(
                    "ALTER TABLE", {}, Exception("attempt to write a readonly database")
                )

            _migrations.MIGRATIONS[1] = refused  # type: ignore[index]
        result = _project(tmp_path, url).invoke("runs")
    finally:
        if os.geteuid() == 0:
            _migrations.MIGRATIONS[1] = original  # type: ignore[index]
        path.parent.chmod(stat.S_IRWXU)
        path.chmod(stat.S_IRUSR | stat.S_IWUSR)
    assert result.exit_code == 1
    assert "schema version 1; this evalsuite uses version" in result.stderr
    assert "Run `evalsuite store upgrade` as a user who may alter the database" in result.stderr
    assert Store(url, upgrade=False).info().schema_version == 1
