"""`evalsuite export` (issue 34): tables that ingest reads back, and holdout runs whose
per-item results leave only when asked, recorded in the holdout ledger."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out
from tests.interchange.conftest import ingest


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_table_export_ingests_back_identical(desk, tmp_path: Path, fmt: str) -> None:  # type: ignore[no-untyped-def]
    project, run_id = desk
    result = project.invoke(
        "export", run_id, "--format", fmt, "--out", str(tmp_path / "t"), "--json"
    )
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    (path,) = entry["files"]
    assert path.endswith(f"{run_id}.{fmt}")
    back = ingest(project, Path(path), fmt, "--suite", "desk@1.0.0")
    before = json_out(project.invoke("score", run_id, "--json"))["overall"]
    after = json_out(project.invoke("score", back["run_id"], "--json"))["overall"]
    assert (after["mean"], after["ci"], after["n_items"]) == (
        before["mean"], before["ci"], before["n_items"]
    )  # fmt: skip
    store = Store(default_store_url(project.root / ".evalsuite"))
    columns = ["item_id", "epoch", "outcome", "score"]
    assert store.attempts(run_id)[columns].equals(store.attempts(back["run_id"])[columns])


def _holdout_run(project: Project) -> str:
    result = project.invoke(
        "run", "desk@1.0.0", "--model", "fakeecho/x", "--split", "holdout", "--no-progress",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return str(json_out(result)["run_id"])


def _ledger_kinds(project: Project) -> list[str]:
    path = project.root / "holdout" / "desk" / "ACCESS.jsonl"
    return [json.loads(line).get("kind", "access") for line in path.read_text().splitlines()]


def test_a_holdout_run_exports_its_aggregate_only_unless_asked(desk, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project, _ = desk
    run_id = _holdout_run(project)
    kinds = _ledger_kinds(project)
    out = tmp_path / "h"
    result = project.invoke("export", run_id, "--format", "eee", "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    (aggregate,) = entry["files"]
    assert entry["samples"] is False and entry["ledgered"] is False
    record = json.loads(Path(aggregate).read_text(encoding="utf-8"))
    assert "detailed_evaluation_results" not in record
    assert not list(out.rglob("*.jsonl")) and _ledger_kinds(project) == kinds
    # a table of a holdout run is its per-item results: refused without the flag
    refused = project.invoke("export", run_id, "--format", "csv", "--out", str(tmp_path / "c"))
    assert refused.exit_code == 2 and "--include-holdout-samples" in refused.stderr
    assert not (tmp_path / "c").exists()
    # with the flag: ids and scores, recorded in the ledger first, never item text
    result = project.invoke(
        "export", run_id, "--format", "eee", "--out", str(out), "--include-holdout-samples",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    assert entry["samples"] and entry["ledgered"]
    assert _ledger_kinds(project) == [*kinds, "export"]
    sidecar = Path(entry["files"][1]).read_text(encoding="utf-8")
    for line in sidecar.splitlines():
        assert json.loads(line)["input"] == {"raw": "", "reference": []}
    # an exported holdout record does not come back into the store: only `run` looks at it
    runs = len(json_out(project.invoke("runs", "--json")))
    back = project.invoke("ingest", entry["files"][0], "--format", "eee")
    assert back.exit_code == 7 and "holdout items of desk@1.0.0" in " ".join(back.stderr.split())
    assert len(json_out(project.invoke("runs", "--json"))) == runs
    # the ledger's chain still holds, and the export spent no budget (it is no model's look)
    status = project.invoke("holdout", "status", "desk@1.0.0", "--json")
    assert status.exit_code == 0, status.stdout + status.stderr


def test_the_python_api_exports_as_the_command_does(desk, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import evalsuite as es

    project, run_id = desk
    (run,) = es.export([run_id], out=tmp_path / "api", format="eee", root=project.root)
    assert run.run_id == run_id and run.samples and len(run.files) == 2
    cli = project.invoke("export", run_id, "--format", "eee", "--out", str(tmp_path / "cli"))
    assert cli.exit_code == 0, cli.stderr
    # the same paths under each folder (a run's file names are its own)
    names = sorted(p.relative_to(tmp_path / "api") for p in (tmp_path / "api").rglob("*.*"))
    assert names == sorted(p.relative_to(tmp_path / "cli") for p in (tmp_path / "cli").rglob("*.*"))


def test_a_run_without_a_usable_attempt_is_not_exported_as_a_record(tmp_path: Path) -> None:
    from tests.helpers import make_project

    project = make_project(tmp_path)
    table = tmp_path / "errors.csv"
    table.write_text("model,item_id,epoch,score,outcome\nm,a,1,,harness_error\n", encoding="utf-8")
    run = ingest(project, table, "csv", "--error-threshold", "1")
    out = tmp_path / "out"
    result = project.invoke("export", run["run_id"], "--format", "eee", "--out", str(out))
    assert result.exit_code == 2 and "no usable attempt" in result.stderr
    assert not out.exists()
