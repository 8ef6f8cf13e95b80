"""The grader audit on toy families: every planted failure caught and named (issue 13)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.audit.toy import change_write_schema, copy_of_frozen_solo, frozen_solo, toy_project
from tests.helpers import Project, json_out
from tests.shared_build import build_once

PLANTS = {
    "fam_clean": "none",
    "fam_claim": "text_claim",
    "fam_leak": "leak",
    "fam_unbounded": "unbounded",
    "fam_clipped": "clipped",
}


def _checks(result: dict[str, Any], family: str) -> dict[str, dict[str, Any]]:
    (found,) = [f for f in result["families"] if f["family"] == family]
    return {c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c for c in found["checks"]}


def _failed(result: dict[str, Any], family: str) -> set[str]:
    return {name for name, c in _checks(result, family).items() if c["status"] == "failed"}


def _audit_planted(root: Path) -> dict[str, Any]:
    project = toy_project(root, list(PLANTS.items()))
    assert project.invoke("freeze", "toy", "--version", "1.0.0").exit_code == 0
    result = project.invoke("audit", "toy@1.0.0", "--graders", "--json")
    return {"code": result.exit_code, "graders": json_out(result)["graders"], "err": result.stderr}


@pytest.fixture(scope="module")
def planted(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    """The audit of the planted families, run once per session (tests/shared_build.py)."""
    _root, audit = build_once(tmp_path_factory, "planted-audit", _audit_planted)
    return audit["code"], audit["graders"], audit["err"]


def test_a_sound_family_passes_every_check(planted: tuple[int, dict[str, Any], str]) -> None:
    _code, result, _err = planted
    checks = _checks(result, "fam_clean")
    assert _failed(result, "fam_clean") == set()
    assert {
        "oracle",
        "null",
        "trivial/empty_answer",
        "trivial/every_answer",
        "trivial/claim_done",
        "exploit/claim_success",
        "harness",
        "reward_bounds",
        "limits",
        "action_space",
        "determinism",
        "isolation",
    } <= set(checks)
    # frozen with --skip-audit, but its tools were recorded: the action space is compared
    assert checks["action_space"]["status"] == "passed"
    assert checks["oracle"]["counts"] == {"items": 2, "unsolved": 0, "unstable": 0}


def test_the_audit_exits_3_naming_family_check_and_items(
    planted: tuple[int, dict[str, Any], str],
) -> None:
    code, result, err = planted
    assert code == 3
    assert result["ok"] is False
    message = " ".join(err.split())
    for family in ("fam_claim", "fam_leak", "fam_unbounded", "fam_clipped"):
        assert f"{family}: " in message
    assert "fam_clean" not in message


def test_a_grader_accepting_a_text_claim_is_caught(
    planted: tuple[int, dict[str, Any], str],
) -> None:
    _code, result, _err = planted
    check = _checks(result, "fam_claim")["exploit/claim_success"]
    assert check["status"] == "failed"
    assert len(check["items"]) == 2  # every dev item of the family, by id
    assert all(i.startswith("fam_claim-") for i in check["items"])
    assert "claiming success in text" in check["summary"]
    assert check["strata"]["fam_claim/add"]["failed"] is True


def test_state_leaking_between_episodes_is_caught(
    planted: tuple[int, dict[str, Any], str],
) -> None:
    _code, result, _err = planted
    check = _checks(result, "fam_leak")["isolation"]
    assert check["status"] == "failed"
    assert "state leaks between episodes" in check["summary"]
    assert check["items"]
    assert _checks(result, "fam_clean")["isolation"]["status"] == "passed"


def test_an_unbounded_tool_call_is_caught(planted: tuple[int, dict[str, Any], str]) -> None:
    _code, result, _err = planted
    check = _checks(result, "fam_unbounded")["limits"]
    assert check["status"] == "failed"
    assert "unbounded tool call: 'write'" in check["summary"]
    assert _failed(result, "fam_unbounded") == {"limits"}


def test_a_reward_clipped_to_half_and_one_is_caught(
    planted: tuple[int, dict[str, Any], str],
) -> None:
    _code, result, _err = planted
    check = _checks(result, "fam_clipped")["reward_bounds"]
    assert check["status"] == "failed"
    assert "clipped (or offset) to [0.5, 1]" in check["summary"]
    assert check["counts"]["raw_min"] == 0.5
    assert _checks(result, "fam_clipped")["null"]["status"] == "failed"


def _frozen_solo(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    """``solo`` (one sound toy family) frozen with its audit: a copy of the session's one
    freeze (tests/audit/toy.py::frozen_solo), the test's own to change."""
    return copy_of_frozen_solo(tmp_path_factory, tmp_path)


def test_freeze_runs_the_audit_and_records_it(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    # the session's one `freeze solo --version 1.0.0 --json` with the audit (it must exit 0)
    _shared, built = frozen_solo(tmp_path_factory)
    project = _frozen_solo(tmp_path_factory, tmp_path)
    audit = built["freeze"]["audit"]
    assert audit["status"] == "passed"
    assert audit["file"] == "manifests/solo/1.0.0.audit.json"
    manifest = json.loads((project.root / "manifests/solo/1.0.0.json").read_text())
    assert manifest["audit"]["content_hash"] == audit["content_hash"]
    assert set(manifest["families"][0]["tools"]) == {"read", "write"}
    stored = json.loads((project.root / audit["file"]).read_text())
    assert stored["content_hash"] == audit["content_hash"] and stored["ok"] is True
    changelog = (project.root / "manifests/solo/CHANGELOG.md").read_text()
    assert f"grader audit passed (`{audit['content_hash']}`)" in changelog
    verified = json_out(project.invoke("verify", "solo@1.0.0", "--json"))
    assert verified["ok"] is True
    assert verified["suites"][0]["audit"]["status"] == "passed"
    # the same audit again gives the same results: the frozen file is kept as it is
    again = project.invoke("audit", "solo@1.0.0", "--graders", "--json")
    assert again.exit_code == 0, again.stderr
    assert json_out(again)["graders"]["content_hash"] == audit["content_hash"]


def test_a_tool_whose_schema_changes_after_freeze_is_caught(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    project = _frozen_solo(tmp_path_factory, tmp_path)
    change_write_schema(project, "fam")
    audit = project.invoke("audit", "solo@1.0.0", "--graders", "--json")
    assert audit.exit_code == 3
    check = _checks(json_out(audit)["graders"], "fam")["action_space"]
    assert check["status"] == "failed"
    assert "tool 'write' has another schema" in check["summary"]
    run = project.invoke("run", "solo@1.0.0", "--model", "mockllm/model", "--no-progress")
    assert run.exit_code == 3
    assert "tool 'write' has another schema" in " ".join(run.stderr.split())
    verify = project.invoke("verify", "solo@1.0.0", "--json")
    assert verify.exit_code == 3
    suite = json_out(verify)["suites"][0]
    assert suite["audit"]["action_space"] == "DRIFTED"
    assert any("tool 'write' has another schema" in p for p in suite["problems"])


def test_freeze_refuses_a_failing_audit_and_writes_nothing(tmp_path: Path) -> None:
    project = toy_project(tmp_path, [("fam", "text_claim")], suite="solo")
    project.audit = True
    before = (project.root / "tasks" / "fam" / "items.jsonl").read_text()
    result = project.invoke("freeze", "solo", "--version", "1.0.0")
    assert result.exit_code == 3
    message = " ".join(result.stderr.split())
    assert "not frozen (nothing was written)" in message
    assert "fam: exploit/claim_success" in message
    assert "exploit/claim_success" in result.stdout  # the audit's table is shown
    assert not list(project.root.glob("manifests/**/*.json"))
    assert not [p for p in project.root.glob("holdout/**/*") if p.is_file()]  # nor staged
    assert (project.root / "tasks" / "fam" / "items.jsonl").read_text() == before


def test_skipping_the_audit_needs_a_reason_and_is_recorded(tmp_path: Path) -> None:
    project = toy_project(tmp_path, [("fam", "text_claim")], suite="solo")
    project.audit = True
    assert project.invoke("freeze", "solo", "--version", "1.0.0", "--skip-audit").exit_code == 2
    result = project.invoke(
        "freeze", "solo", "--version", "1.0.0", "--skip-audit", "--reason", "known weak grader"
    )
    assert result.exit_code == 0, result.stderr
    manifest = json.loads((project.root / "manifests/solo/1.0.0.json").read_text())
    assert manifest["audit"] == {
        "status": "skipped",
        "file": None,
        "content_hash": None,
        "reason": "known weak grader",
    }
    changelog = (project.root / "manifests/solo/CHANGELOG.md").read_text()
    assert "grader audit SKIPPED: known weak grader" in changelog
    verified = json_out(project.invoke("verify", "solo@1.0.0", "--json"))
    assert verified["suites"][0]["audit"]["status"] == "skipped"


def test_a_holdout_audit_is_one_budgeted_ledgered_look(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    project = _frozen_solo(tmp_path_factory, tmp_path)
    refused = project.invoke("audit", "solo@1.0.0", "--graders", "--split", "holdout")
    assert refused.exit_code == 2 and "--purpose" in refused.stderr
    result = project.invoke(
        "audit",
        "solo@1.0.0",
        "--graders",
        "--split",
        "holdout",
        "--purpose",
        "audit check",
        "--json",
    )
    assert result.exit_code == 0, result.stderr
    graders = json_out(result)["graders"]
    assert graders["split"] == "holdout" and len(graders["runs"]) == 1
    checks = _checks(graders, "fam")
    assert checks["isolation"]["status"] == checks["determinism"]["status"] == "skipped"
    assert checks["oracle"]["status"] == "passed"
    # the red team learns from dev episodes, and another run would be another look
    assert checks["redteam"]["status"] == checks["shortcut"]["status"] == "skipped"
    assert graders["redteam_schedule"] == [] and graders["references"] == []
    listed = {p["policy"] for p in graders["families"][0]["policies"]}
    assert set(graders["schedule"]) <= listed  # numbers only, per stratum
    assert graders["stored"] == "manifests/solo/1.0.0.holdout-audit.json"
    ledger = [
        json.loads(line)
        for line in (project.root / "holdout/solo/ACCESS.jsonl").read_text().splitlines()
    ]
    (access,) = [e for e in ledger if e.get("kind", "access") == "access"]
    assert (access["model_family"], access["purpose"]) == ("evalsuite-audit", "audit check")
    assert access["run_id"] == graders["runs"][0]


def test_an_edited_audit_record_fails_verify(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    project = _frozen_solo(tmp_path_factory, tmp_path)
    path = project.root / "manifests/solo/1.0.0.audit.json"
    data = json.loads(path.read_text())
    data["families"][0]["checks"][0]["status"] = "passed "
    path.write_text(json.dumps(data))
    result = project.invoke("verify", "solo@1.0.0", "--json")
    assert result.exit_code == 3
    (suite,) = json_out(result)["suites"]
    assert suite["audit"]["status"] == "damaged"
    assert any("was edited after the audit" in p for p in suite["problems"])
    run = project.invoke("run", "solo@1.0.0", "--model", "mockllm/model", "--no-progress")
    assert run.exit_code == 0  # the manifest still verifies; its numbers are marked
    assert "GRADER AUDIT RECORD DAMAGED" in run.stdout
