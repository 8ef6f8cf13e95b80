"""`service.store_info`: the store's schema and contents as a typed result with one view."""

from __future__ import annotations

from pathlib import Path

from evalsuite.service import fmt_bytes, fmt_time, store_info, store_info_view
from evalsuite.store import SCHEMA_VERSION, StoreInfo
from tests.helpers import json_out, make_project
from tests.service.renderers import assert_same_rows


def test_store_info_is_typed_and_rendered_once(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("store", "upgrade").exit_code == 0  # creates the default store
    url = f"sqlite:///{project.root / '.evalsuite' / 'results.sqlite'}"
    info = store_info(url)
    assert isinstance(info, StoreInfo) and info.schema_version == SCHEMA_VERSION
    assert info.state == "current" and info.runs == 0
    view = store_info_view(info)
    assert view.kind == "store_info" and "schema current" in view.headline
    assert f"size {fmt_bytes(info.size_bytes)}" in view.facts
    assert_same_rows(view)
    payload = json_out(project.invoke("store", "info", "--json"))
    assert set(info.to_dict()) <= set(payload) and payload["state"] == "current"
    text = project.invoke("store", "info")
    assert text.exit_code == 0 and "holds 0 runs, 0 attempts, 0 outcomes" in text.stdout


def test_byte_and_time_formats() -> None:
    assert [fmt_bytes(n) for n in (None, 512, 1536, 5 * 1024**2, 3 * 1024**3)] == [
        "n/a",
        "512 B",
        "1.5 KiB",
        "5.0 MiB",
        "3.0 GiB",
    ]
    assert fmt_bytes(True) == "n/a"
    assert fmt_time("2026-01-02T03:04:05.123456+00:00") == "2026-01-02 03:04 UTC"
    assert fmt_time(None) == "n/a" and fmt_time("soon") == "soon"


def test_upgrade_store_is_typed_and_the_command_prints_its_lines(tmp_path: Path) -> None:
    from evalsuite._core.layout import Layout
    from evalsuite.service import StoreUpgrade, upgrade_store

    project = make_project(tmp_path)
    layout = Layout(project.root)
    url = f"sqlite:///{tmp_path / 'fresh.sqlite'}"
    created = upgrade_store(url, layout)
    assert isinstance(created, StoreUpgrade)
    assert created.from_version is None and created.to_version == SCHEMA_VERSION
    assert created.lines == (f"created the store {created.url} at schema version {SCHEMA_VERSION}",)
    again = upgrade_store(url, layout)
    assert again.from_version == again.to_version == SCHEMA_VERSION
    assert again.lines[0].endswith(": nothing to do")
    assert again.to_dict() == {
        "url": again.url,
        "from_version": SCHEMA_VERSION,
        "to_version": SCHEMA_VERSION,
        "gates_imported": 0,
        "gate_files_not_imported": [],
    }
    (layout.state / "gates").mkdir(parents=True)
    (layout.state / "gates" / "broken.json").write_text("{", encoding="utf-8")
    out = project.invoke("store", "upgrade")
    assert out.exit_code == 0
    assert "created the store" in out.stdout and "not imported (not a valid gate record)" in (
        out.stdout
    )
