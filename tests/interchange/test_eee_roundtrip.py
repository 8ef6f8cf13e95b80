"""`evalsuite export --format eee` and back (issue 34): valid records, and an export ingested
again is the same run (difference 0, same items)."""

from __future__ import annotations

import json
from pathlib import Path

from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out
from tests.interchange.conftest import ingest


def _store(project: Project) -> Store:
    return Store(default_store_url(project.root / ".evalsuite"))


def _export(project: Project, run_id: str, out: Path, *args: str) -> dict:  # type: ignore[type-arg]
    result = project.invoke("export", run_id, "--format", "eee", "--out", str(out), *args, "--json")
    assert result.exit_code == 0, result.stderr
    (entry,) = json_out(result)["runs"]
    return dict(entry)


def test_an_exported_run_ingests_back_identical(desk, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    project, run_id = desk
    entry = _export(project, run_id, tmp_path / "out")
    aggregate, sidecar = map(Path, entry["files"])
    assert entry["samples"] and aggregate.name.endswith(".json")
    assert sidecar.name == aggregate.stem + "_samples.jsonl"
    record = json.loads(aggregate.read_text(encoding="utf-8"))
    primary = record["evaluation_results"][0]
    details = primary["source_data"]["additional_details"]
    assert details["evalsuite_suite"] == "desk" and details["evalsuite_version"] == "1.0.0"
    score = json_out(project.invoke("score", run_id, "--json"))
    ci = primary["score_details"]["uncertainty"]["confidence_interval"]
    overall = score["overall"]
    assert primary["score_details"]["score"] == overall["mean"]
    assert [ci["lower"], ci["upper"]] == overall["ci"]
    assert any(r["evaluation_result_id"] == "pass@1" for r in record["evaluation_results"])
    # the package's own validator accepts both files (the export validated them too)
    from every_eval_ever.validator import validation_core

    assert validation_core.validate_aggregate(aggregate).valid
    assert validation_core.validate_instance_file(sidecar).valid
    # back in: it attaches itself to desk@1.0.0 (its manifest hash), same items and scores
    back = ingest(project, aggregate, "eee")
    assert back["suite"] == "desk@1.0.0" and back["split"] == "dev"
    again = json_out(project.invoke("score", back["run_id"], "--json"))
    for key in ("mean", "se", "ci", "n_items", "method"):
        assert again["overall"][key] == overall[key], key
    assert again["pass_k"] == score["pass_k"]
    store = _store(project)
    before, after = store.attempts(run_id), store.attempts(back["run_id"])
    columns = ["item_id", "epoch", "outcome", "score", "stratum", "item_hash", "cluster"]
    assert before[columns].equals(after[columns])
    compared = json_out(project.invoke("compare", run_id, back["run_id"], "--json"))
    assert compared["diff"] == 0.0
