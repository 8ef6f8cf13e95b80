"""The `freeze` use case (issue 30): `freeze_suite` takes a typed `FreezeRequest`, checks the
tasks, runs (or skips, with a reason) the grader audit and freezes; a failing audit refuses
with `FreezeRefused`, which carries the audit for the caller to show."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import GraderAuditError, UsageError
from evalsuite.manifest import KeySpec
from evalsuite.service import FreezeRefused, FreezeRequest, freeze_suite
from tests.audit.toy import toy_project
from tests.helpers import make_project

NOW = datetime(2026, 12, 5, 12, 0, tzinfo=UTC)


def _keys(tmp_path: Path, root: Path) -> KeySpec:
    return KeySpec(key_dir=tmp_path / "keys", key_file=None, project=root)


def test_a_skipped_audit_freezes_and_is_recorded(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    told: list[str] = []
    request = FreezeRequest("demo", "1.0.0", note="first", skip_audit=True, reason="toy")
    outcome = freeze_suite(
        request,
        layout=Layout(project.root),
        keys=_keys(tmp_path, project.root),
        now=NOW,
        notify=told.append,
    )
    assert told == []  # no audit ran
    payload = outcome.to_dict()
    assert (payload["suite"], payload["version"], payload["status"]) == ("demo", "1.0.0", "frozen")
    assert payload["manifest"] == "manifests/demo/1.0.0.json"
    assert payload["retired_flagged"] == [] and payload["note"] == "first"
    assert payload["audit"] == outcome.audit_dict()
    assert outcome.audit_dict()["status"] == "skipped" and outcome.audit is None
    manifest = json.loads((project.root / "manifests/demo/1.0.0.json").read_text())
    assert manifest["frozen_at"].startswith("2026-12-05T12:00")
    assert json.dumps(payload)  # the --json payload is plain JSON


@pytest.mark.parametrize(
    ("request_", "words"),
    [
        (FreezeRequest("demo", "1.0.0", flags=("dead",)), "--retire-flagged FILE and --flag"),
        (FreezeRequest("demo", "1.0.0", retire_flagged=Path("x.json")), "go together"),
        (FreezeRequest("demo", "1.0.0", skip_audit=True), "--skip-audit needs --reason"),
        (FreezeRequest("demo", "1.0.0", reason="why"), "--reason goes with --skip-audit"),
    ],
)
def test_options_that_do_not_go_together_write_nothing(
    tmp_path: Path, request_: FreezeRequest, words: str
) -> None:
    project = make_project(tmp_path)
    with pytest.raises(UsageError) as caught:
        freeze_suite(request_, layout=Layout(project.root), keys=_keys(tmp_path, project.root))
    assert words in str(caught.value)
    assert not (project.root / "manifests").exists()


def test_a_failing_audit_refuses_with_the_audit(tmp_path: Path) -> None:
    project = toy_project(tmp_path, [("fam", "text_claim")], suite="solo")
    told: list[str] = []
    with pytest.raises(FreezeRefused) as caught:
        freeze_suite(
            FreezeRequest("solo", "1.0.0"),
            layout=Layout(project.root),
            keys=_keys(tmp_path, project.root),
            notify=told.append,
        )
    refused = caught.value
    assert isinstance(refused, GraderAuditError) and refused.exit_code == 3
    assert type(refused.error) is GraderAuditError  # `--json` names it as before
    assert "not frozen (nothing was written)" in str(refused)
    assert refused.audit is not None and not refused.audit.ok
    assert "fam: exploit/claim_success" in " ".join(refused.audit.failures())
    assert told == ["running the grader audit of solo (dev split) before freezing ..."]
    assert not list(project.root.glob("manifests/**/*.json"))
    # the command renders the refusal as before: the audit's results, `GraderAuditError`, exit 3
    project.audit = True
    result = project.invoke("freeze", "solo", "--version", "1.0.0", "--json")
    assert result.exit_code == 3
    payload = json.loads(result.stdout)
    assert (payload["error"], payload["exit_code"]) == ("GraderAuditError", 3)
    assert payload["audit"]["ok"] is False
