"""`evalsuite runs` on a store of many runs: the newest 50 by default, said so, `--all` and
`--limit N`; one line per run; `--json` lists every run (docs/cli.md, "runs")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalsuite.store import RunReader, RunRecord, Store
from tests.helpers import Project, json_out

LONG_MODEL = "acme/" + "m" * 150


def _project(tmp_path: Path, url: str, runs: int) -> Project:
    store = Store(url)
    for k in range(runs):
        store.create_run(
            RunRecord(
                run_id=f"run-{k:03d}",
                model=LONG_MODEL if k == runs - 1 else f"acme/model-{k}",
                epochs=1,
                planned=10,
                status="complete",
                source="csv",
                started_at=f"2026-01-01T00:{k // 60:02d}:{k % 60:02d}+00:00",
                suite="other" if k % 5 == 0 else None,
                valid=True,
                error_rate=0.0,
            )
        )
    (tmp_path / "p").mkdir()
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys", store_url=url)


def _listed(stdout: str) -> list[str]:
    return [line.split()[0] for line in stdout.splitlines() if line.startswith("run-")]


def test_runs_shows_the_newest_fifty_and_says_how_many_there_are(
    tmp_path: Path, store_url: str
) -> None:
    project = _project(tmp_path, store_url, 55)
    result = project.invoke("runs")
    assert result.exit_code == 0, result.stderr
    assert _listed(result.stdout) == [f"run-{k:03d}" for k in range(5, 55)]  # oldest first
    assert "50 of 55 runs shown (the newest); --all shows every run" in result.stdout
    assert result.stdout.splitlines()[0].split()[:2] == ["run", "suite"]
    # one line per run, however long a cell: the long model name is not wrapped
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("run-054")]
    assert LONG_MODEL in line and line.rstrip().endswith("2026-01-01T00:00:54")

    every = project.invoke("runs", "--all")
    assert _listed(every.stdout) == [f"run-{k:03d}" for k in range(55)]
    assert "shown" not in every.stdout

    newest = project.invoke("runs", "--limit", "3")
    assert _listed(newest.stdout) == ["run-052", "run-053", "run-054"]
    assert "3 of 55 runs shown" in newest.stdout

    suite = project.invoke("runs", "--suite", "other", "--limit", "2")
    assert _listed(suite.stdout) == ["run-045", "run-050"]
    assert "2 of 11 runs of suite other shown" in suite.stdout


def test_runs_json_lists_every_run_unless_limited(tmp_path: Path, store_url: str) -> None:
    project = _project(tmp_path, store_url, 55)
    listed = json_out(project.invoke("runs", "--json"))
    assert [r["run_id"] for r in listed] == [f"run-{k:03d}" for k in range(55)]
    limited = json_out(project.invoke("runs", "--json", "--limit", "2"))
    assert [r["run_id"] for r in limited] == ["run-053", "run-054"]
    assert set(limited[0]) >= {"run_id", "suite", "version", "split", "model", "valid"}


def test_all_and_limit_together_are_a_usage_error(tmp_path: Path, store_url: str) -> None:
    project = _project(tmp_path, store_url, 1)
    result = project.invoke("runs", "--all", "--limit", "2")
    assert result.exit_code == 2
    assert "--all and --limit N exclude each other" in result.stderr


def test_the_reader_reads_sqlite_itself_and_every_other_store_through_store(
    tmp_path: Path, store_url: str
) -> None:
    _project(tmp_path, store_url, 3)
    reader = RunReader(store_url)
    assert [r.run_id for r in reader.runs(newest=2)] == ["run-001", "run-002"]
    assert reader.runs() == Store(store_url).list_runs()
    assert reader.fast is store_url.startswith("sqlite:///")


def test_a_file_that_is_not_a_store_is_reported_as_store_reports_it(tmp_path: Path) -> None:
    path = tmp_path / "not-a-store.sqlite"
    path.write_bytes(b"this is not an SQLite database, and not a store" * 100)
    (tmp_path / "p").mkdir()
    project = Project(root=tmp_path / "p", key_dir=tmp_path / "k", store_url=f"sqlite:///{path}")
    result = project.invoke("runs")
    assert result.exit_code != 0
    assert f"results store sqlite:///{path}" in result.stderr


def test_each_suite_versions_audit_status_is_read_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import evalsuite.manifest

    project = _project(tmp_path, f"sqlite:///{tmp_path / 's.sqlite'}", 12)
    real = evalsuite.manifest.suite_audit_status
    calls: list[tuple[str | None, str | None]] = []

    def counted(layout: Any, suite: str | None, version: str | None) -> Any:
        calls.append((suite, version))
        return real(layout, suite, version)

    monkeypatch.setattr(evalsuite.manifest, "suite_audit_status", counted)
    assert project.invoke("runs", "--all").exit_code == 0
    assert len(calls) == 2 and set(calls) == {(None, None), ("other", None)}  # not 12
