"""`evalsuite items`: the --json contract, CSV, flags end to end and clear errors."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from evalsuite._core.layout import Layout
from evalsuite.cli._items_cmd import CSV_COLUMNS
from evalsuite.manifest import load_manifest
from evalsuite.store import AttemptRecord, RunRecord
from tests.helpers import Project, json_out, make_items, make_project
from tests.items.conftest import StoreRun, ability_scores

FLAG_NAMES = {"dead", "flaky", "harness-suspect", "negatively-discriminating", "leaky"}


def _nine_models(
    store_run: StoreRun, item_ids: list[str]
) -> dict[str, dict[str, list[float | None]]]:
    """Nine models of spread ability, two epochs, with one planted fault of each kind."""
    data = ability_scores(item_ids, 9, 2, np.random.default_rng(3))
    dead, reversed_, errors = item_ids[0], item_ids[1], item_ids[2]
    for m, (name, scores) in enumerate(sorted(data.items())):
        scores[dead] = [1.0, 1.0]  # everyone solves it
        scores[reversed_] = [1.0, 1.0] if m < 4 else [0.0, 0.0]  # the weak models solve it
        scores[errors] = [None, None] if m % 3 else [0.0, 1.0]  # the harness fails on it
        store_run(name, scores)
    return data


def test_json_contract_and_planted_flags(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    _nine_models(store_run, item_ids)
    result = project.invoke("items", "demo@1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert out["suite"] == "demo" and out["version"] == "1.0.0"
    assert [m["model"] for m in out["models"]] == [f"model-{m:02d}" for m in range(9)]
    assert {s["stratum"] for s in out["strata"]} == {"fam/add", "fam/mul"}
    assert len(out["items"]) == 12
    for item in out["items"]:
        assert {"item_id", "stratum", "flags", "flag_reasons"} <= set(item)
        assert set(item["flags"]) <= FLAG_NAMES
        assert set(item["flag_reasons"]) == set(item["flags"])
        assert all(isinstance(r, str) and r for r in item["flag_reasons"].values())
    by_id = {i["item_id"]: i for i in out["items"]}
    assert "dead" in by_id[item_ids[0]]["flags"]
    assert by_id[item_ids[0]]["solve_rate"] == 1.0
    assert "negatively-discriminating" in by_id[item_ids[1]]["flags"]
    assert by_id[item_ids[1]]["item_rest_r"] < -0.5
    assert "harness-suspect" in by_id[item_ids[2]]["flags"]
    assert by_id[item_ids[2]]["harness_error_rate"] == 12 / 18
    # nine models: the 2PL model is fitted, converged, abilities ordered like the raw scores
    assert out["irt"]["fitted"] and out["irt"]["converged"]
    assert out["irt"]["ability_vs_raw_score"]["spearman"] > 0.8
    assert by_id[item_ids[1]]["irt_a"] < 0 < by_id[item_ids[5]]["irt_a"]
    assert out["leak_audit"]["status"] == "not stored"
    assert any("leak audit" in n for n in out["notes"])


def test_too_few_models_for_irt_is_said_not_failed(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    data = ability_scores(item_ids, 3, 1, np.random.default_rng(0))
    for name, scores in data.items():
        store_run(name, scores)
    result = project.invoke("items", "demo@1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    irt = json_out(result)["irt"]
    assert irt["fitted"] is False
    assert "3 model(s)" in irt["reason"] and "8" in irt["reason"]
    assert all(i["irt_a"] is None for i in json_out(result)["items"])
    text = project.invoke("items", "demo@1.0.0")
    assert text.exit_code == 0
    assert "2PL IRT: not fitted: 3 model(s) ran this version" in text.stdout


def test_csv_has_one_row_per_item(
    project: Project, store_run: StoreRun, item_ids: list[str], tmp_path: Path
) -> None:
    _nine_models(store_run, item_ids)
    path = tmp_path / "out" / "items.csv"
    path.parent.mkdir()
    result = project.invoke("items", "demo@1.0.0", "--csv", str(path), "--json")
    assert result.exit_code == 0, result.stderr
    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [r["item_id"] for r in rows] == item_ids
    items = {i["item_id"]: i for i in json_out(result)["items"]}
    for row in rows:
        assert row["flags"].split(";") == (items[row["item_id"]]["flags"] or [""])
        if row["flags"]:
            assert json.loads(row["flag_reasons"]) == items[row["item_id"]]["flag_reasons"]
        assert float(row["solve_rate"]) == items[row["item_id"]]["solve_rate"]


def test_unknown_suite_version_and_no_runs_are_clear_errors(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    unknown = project.invoke("items", "nosuch@1.0.0", "--json")
    assert unknown.exit_code == 2
    assert "nosuch" in json_out(unknown)["message"]
    version = project.invoke("items", "demo@9.9.9")
    assert version.exit_code == 2
    assert "9.9.9" in version.stderr and "1.0.0" in version.stderr  # names what exists
    no_runs = project.invoke("items", "demo@1.0.0", "--json")
    assert no_runs.exit_code == 2
    message = json_out(no_runs)["message"]
    assert "no stored run of demo@1.0.0" in message
    assert "`evalsuite run demo@1.0.0 --model MODEL`" in message
    bare = project.invoke("items", "demo")
    assert bare.exit_code == 2 and "demo@X.Y.Z" in bare.stderr


def test_saturation_watch_names_the_stratum(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    for m in range(3):
        store_run(f"m{m}", {i: [1.0, 1.0] if i.startswith("add") else [0.0, float(m > 0)]
                            for i in item_ids})  # fmt: skip
    out = json_out(project.invoke("items", "demo@1.0.0", "--json"))
    strata = {s["stratum"]: s for s in out["strata"]}
    assert strata["fam/add"]["saturated"] and strata["fam/add"]["best_score"] == 1.0
    assert out["saturation"]["watched"][0] == "fam/add"
    assert all(i["stratum_watched"] for i in out["items"] if i["stratum"] == "fam/add")
    assert any("fam/add" in n and "0.9" in n for n in out["notes"])
    higher = json_out(project.invoke("items", "demo@1.0.0", "--json", "--saturation", "1.0"))
    assert not {s["stratum"]: s for s in higher["strata"]}["fam/add"]["saturated"]
    text = project.invoke("items", "demo@1.0.0")
    assert "fam/add: best m0 1.000" in text.stdout and "WATCH" in text.stdout


def test_leaky_from_the_stored_leak_audit(tmp_path: Path) -> None:
    items = make_items()
    leaked = items[0]["id"]
    items[0]["input"] += f" (hint: the answer is {items[0]['target']})"
    project = make_project(tmp_path / "leaky", records=items)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    audit = project.invoke("audit", "demo@1.0.0", "--leaks", "--json")
    assert audit.exit_code == 3
    stored = project.root / ".evalsuite" / "audits" / "demo" / "1.0.0.leaks.json"
    assert items[0]["target"] not in stored.read_text(encoding="utf-8")  # ids, never text
    manifest = load_manifest(Layout(project.root), "demo", "1.0.0")
    store = project.store()
    for m in range(2):
        run_id = f"20260102-000000-00000{m}"
        store.create_run(RunRecord(run_id=run_id, model=f"m{m}", epochs=1, planned=12,
                                   status="complete", source="evalsuite",
                                   started_at="2026-01-02T00:00:00+00:00", suite="demo",
                                   version="1.0.0", manifest_hash=manifest.manifest_hash,
                                   split="dev", valid=True))  # fmt: skip
        store.record_attempts(
            run_id,
            [AttemptRecord(i.id, 1, i.stratum, "scored", float(m)) for i in manifest.items],
        )
    out = json_out(project.invoke("items", "demo@1.0.0", "--json"))
    flagged = {i["item_id"]: i for i in out["items"] if "leaky" in i["flags"]}
    assert list(flagged) == [leaked]
    assert "input" in flagged[leaked]["flag_reasons"]["leaky"]
    assert out["leak_audit"]["status"] == "stored" and out["leak_audit"]["findings"] == 1
    assert out["leak_audit"]["holdout_checked"] is True


def test_only_complete_valid_runs_are_analysed(
    project: Project, store_run: StoreRun, item_ids: list[str]
) -> None:
    """Issue 28, point 4: a SIGKILLed run's few attempts were pooled (its unrun attempts as
    harness errors), and an invalid run's model could be named a stratum's best."""
    data = ability_scores(item_ids, 3, 2, np.random.default_rng(5))
    for name, scores in data.items():
        store_run(name, scores)
    killed = store_run("killed", {item_ids[0]: [None, None], item_ids[1]: [1.0, 1.0]},
                       status="running", valid=False, planned=2 * len(item_ids))  # fmt: skip
    broken = store_run("broken", {i: [1.0, 1.0] for i in item_ids}, valid=False)
    result = project.invoke("items", "demo@1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert sorted(m["model"] for m in out["models"]) == sorted(data)
    assert {r["run_id"] for r in out["runs"]}.isdisjoint({killed, broken})
    assert {s["best_model"] for s in out["strata"]} <= set(data)
    assert all(i["harness_errors"] == 0 for i in out["items"])
    left = {r["run_id"]: r for r in out["left_out"]}
    assert set(left) == {killed, broken}
    assert left[killed]["model"] == "killed" and "not complete" in left[killed]["reason"]
    assert "running" in left[killed]["reason"] and "--resume" in left[killed]["reason"]
    assert "invalid" in left[broken]["reason"] and "--allow-invalid" in left[broken]["reason"]
    assert any("2 run(s) left out" in n for n in out["notes"])
    text = project.invoke("items", "demo@1.0.0")
    assert "2 run(s) left out" in text.stdout and killed in text.stdout
    # --allow-invalid reads the invalid run (its harness errors are what a rate is about);
    # a run not complete is still left out
    allowed = json_out(project.invoke("items", "demo@1.0.0", "--json", "--allow-invalid"))
    assert "broken" in {m["model"] for m in allowed["models"]}
    assert [r["run_id"] for r in allowed["left_out"]] == [killed]
    assert any("--allow-invalid" in n and broken in n for n in allowed["notes"])


def test_no_complete_valid_run_is_a_clear_error(project: Project, store_run: StoreRun,
                                                item_ids: list[str]) -> None:  # fmt: skip
    run = store_run("killed", {item_ids[0]: [1.0]}, status="interrupted", valid=False,
                    planned=len(item_ids))  # fmt: skip
    result = project.invoke("items", "demo@1.0.0", "--json")
    assert result.exit_code == 2
    message = json_out(result)["message"]
    assert "no complete, valid run of demo@1.0.0" in message and run in message
    assert "interrupted" in message
