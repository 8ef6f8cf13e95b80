"""Gates asked for in `compare` live in the store (schema version 6), so a shared store
carries them to every checkout; gates of older checkouts (``.evalsuite/gates/``) are still
read, and `store upgrade` imports them once (docs/store.md, docs/design/result-model.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import create_engine, inspect, text, update

from evalsuite._core.layout import Layout
from evalsuite.cli import cli
from evalsuite.report import AnalysisOptions, build_report
from evalsuite.service import import_local_gates, last_gate, record_gate, recorded_gate
from evalsuite.store import SCHEMA_VERSION, Store
from evalsuite.store._schema import meta
from evalsuite.store._store import engine_url
from tests.service.test_views import _store


def _legacy(layout: Layout, baseline: str, candidate: str, **fields: object) -> Path:
    """A gate file as `compare` wrote it before store schema version 6."""
    folder = layout.state / "gates"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{baseline}__{candidate}.json"
    record: dict[str, object] = {"baseline": baseline, "candidate": candidate}
    record |= {"kind": "noninferior"}
    record |= {"margin": 0.03, "alpha": 0.05, "asked_at": "2026-11-30T10:00:00+00:00"}
    path.write_text(json.dumps(record | fields), encoding="utf-8")
    return path


def test_a_v4_store_gains_the_gates_table_and_keeps_its_runs(store_url: str) -> None:
    store = Store(store_url)
    engine = create_engine(engine_url(store_url))
    with engine.begin() as conn:  # the store as version 4 wrote it: no gates
        conn.execute(text("DROP TABLE gates"))
        conn.execute(update(meta).where(meta.c.key == "schema_version").values(value="4"))
    assert Store(store_url, upgrade=False).info().schema_version == 4
    upgraded = Store(store_url)
    assert upgraded.schema_version == SCHEMA_VERSION == 8
    with engine.connect() as conn:
        assert "gates" in inspect(conn).get_table_names()
    engine.dispose()
    record_gate(store, "a", "b", kind="noninferior", margin=0.02, alpha=0.05)  # usable at once
    assert (recorded_gate(store, "a", "b") or {})["margin"] == 0.02


def test_a_later_gate_of_a_pair_replaces_the_earlier_one(store_url: str) -> None:
    store = Store(store_url)
    record_gate(store, "a/b", "c", kind="noninferior", margin=0.02, alpha=0.05)
    record_gate(store, "a/b", "c", kind="noninferior", margin=0.04, alpha=0.10)
    found = recorded_gate(store, "a/b", "c")
    assert found is not None and (found["margin"], found["alpha"]) == (0.04, 0.10)
    assert recorded_gate(store, "c", "a/b") is None  # the pair is ordered
    gate = last_gate(store, "a/b", "c")  # the same record, typed
    assert gate is not None and (gate.kind, gate.margin, gate.alpha) == ("noninferior", 0.04, 0.1)
    assert gate.asked_at and last_gate(store, "c", "a/b") is None


def test_a_report_in_another_checkout_sharing_the_store_shows_the_gate(tmp_path: Path) -> None:
    (tmp_path / "one" / ".evalsuite").mkdir(parents=True)
    store = _store(tmp_path / "one", weights=None)
    asked = ["--gate", "noninferior", "--margin", "0.05", "--json"]
    result = CliRunner().invoke(
        cli,
        ["--root", str(tmp_path / "one"), "compare", "run-a", "run-b", "--allow-invalid", *asked],
    )
    assert result.exit_code in (0, 6), result.output
    assert not (tmp_path / "one" / ".evalsuite" / "gates").exists()  # in the store, not a file
    other = Layout(tmp_path / "two")  # another checkout: no local state at all
    report = build_report(store, other, ["run-a", "run-b"], AnalysisOptions(seed=1), validity=[])
    gate = report.payload["comparisons"][0]["gate"]
    assert gate["margin"] == 0.05 and gate["source"].startswith("asked in compare")


def test_an_old_local_gate_file_is_still_read_and_a_damaged_one_ignored(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
    layout = Layout(tmp_path)
    path = _legacy(layout, "run-a", "run-b")
    assert (recorded_gate(store, "run-a", "run-b", layout=layout) or {})["margin"] == 0.03
    assert recorded_gate(store, "run-a", "run-b") is None  # no layout: the store only
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.01, alpha=0.05)
    assert (recorded_gate(store, "run-a", "run-b", layout=layout) or {})["margin"] == 0.01
    path.write_text("{not json", encoding="utf-8")
    assert recorded_gate(store, "x", "y", layout=layout) is None
    _legacy(layout, "x", "y", margin=-1)  # not a gate: ignored
    assert recorded_gate(store, "x", "y", layout=layout) is None


def test_store_upgrade_imports_the_local_gates_once(tmp_path: Path) -> None:
    layout = Layout(tmp_path)
    _legacy(layout, "run-a", "run-b")
    _legacy(layout, "run-c", "run-d", margin=0.07)
    runner = CliRunner()
    first = runner.invoke(cli, ["--root", str(tmp_path), "store", "upgrade", "--json"])
    assert first.exit_code == 0, first.output
    payload = json.loads(first.stdout)
    assert (payload["gates_imported"], payload["gate_files_not_imported"]) == (2, [])
    assert {"url", "from_version", "to_version"} <= set(payload)
    assert not (layout.state / "gates").exists()
    assert (layout.state / "gates.imported" / "run-a__run-b.json").is_file()  # nothing lost
    store = Store(f"sqlite:///{layout.state / 'results.sqlite'}")
    found = store.gate("run-a", "run-b")
    assert found is not None and found["asked_at"] == "2026-11-30T10:00:00+00:00"
    assert (store.gate("run-c", "run-d") or {})["margin"] == 0.07
    again = runner.invoke(cli, ["--root", str(tmp_path), "store", "upgrade", "--json"])
    assert json.loads(again.stdout)["gates_imported"] == 0


def test_a_gate_the_store_holds_is_not_overwritten_by_an_old_file(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'store.sqlite'}")
    layout = Layout(tmp_path)
    record_gate(store, "run-a", "run-b", kind="noninferior", margin=0.01, alpha=0.05)
    _legacy(layout, "run-a", "run-b")
    (layout.state / "gates" / "junk.json").write_text("[]", encoding="utf-8")
    imported, bad = import_local_gates(store, layout)
    assert (imported, bad) == (0, ["junk.json"])
    assert (store.gate("run-a", "run-b") or {})["margin"] == 0.01
    assert (layout.state / "gates").is_dir()  # a file it could not read stays where it was
