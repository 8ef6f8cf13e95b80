"""`service.audit_suite`: the audit use case returns typed results; the command only renders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.manifest import KeySpec
from evalsuite.service import (
    AuditOutcome,
    AuditRequest,
    AuditResult,
    CanaryProbeResult,
    LeakAuditResult,
    audit_suite,
    audit_view,
)
from tests.helpers import Project
from tests.run.conftest import make_probe_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_probe_project(tmp_path_factory.mktemp("audit"), n_per_stratum=4)


def _keys(project: Project) -> KeySpec:
    return KeySpec(key_dir=project.key_dir, key_file=None, project=project.root)


def test_the_leak_audit_is_the_default_and_typed(project: Project) -> None:
    layout = Layout(project.root)
    outcome = audit_suite(
        layout, AuditRequest("probe", "1.0.0", skip_holdout=True), keys=_keys(project)
    )
    assert isinstance(outcome, AuditOutcome) and outcome.failure is None
    leaks = outcome.result.leaks
    assert isinstance(leaks, LeakAuditResult) and leaks.ok and leaks.findings == ()
    assert (leaks.suite, leaks.version) == ("probe", "1.0.0") and set(leaks.checked) == {"dev"}
    assert outcome.result.graders is None and outcome.result.canary_probe is None
    # the command prints the view of the same result; its JSON parses back to it
    out = project.invoke("audit", "probe@1.0.0", "--skip-holdout", "--json")
    assert out.exit_code == 0, out.stderr
    printed = json.loads(out.stdout)
    assert AuditResult.from_dict(printed) == outcome.result
    assert printed["headline"] == audit_view(outcome.result).headline


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (AuditRequest("probe", canary_probe=True), "--canary-probe needs --model"),
        (AuditRequest("probe", policies=Path("team.py")), "--policies goes with --graders"),
        (AuditRequest("probe", graders=True, split="holdout"), "give --purpose"),
    ],
)
def test_inconsistent_requests_are_refused_before_anything_runs(
    project: Project, request_: AuditRequest, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        audit_suite(Layout(project.root), request_, keys=_keys(project))


def test_the_parts_round_trip_through_their_json() -> None:
    probe = CanaryProbeResult("s", "m", 5, 32, 32, 1, True, (1, 2))
    result = AuditResult(canary_probe=probe)
    assert result.memorised is True and result.graders_ok is None
    assert AuditResult.from_dict(result.to_dict()) == result
    assert result.to_dict()["canary_probe"] == {
        "suite": "s", "model": "m", "tries": 5, "hidden_chars": 32, "best_match": 32,
        "completions_matching": 1, "memorised": True, "seeds": [1, 2],
    }  # fmt: skip
    assert AuditRequest("s").do_leaks and not AuditRequest("s", graders=True).do_leaks


def test_the_python_api_returns_the_same_outcome(project: Project) -> None:
    import evalsuite as es

    outcome = es.audit_suite("probe@1.0.0", root=project.root, skip_holdout=True)
    assert isinstance(outcome, AuditOutcome) and outcome.failure is None
    direct = audit_suite(
        Layout(project.root), AuditRequest("probe", "1.0.0", skip_holdout=True), keys=_keys(project)
    )
    assert outcome.result == direct.result
    with pytest.raises(UsageError, match="--canary-probe needs --model"):
        es.audit_suite("probe", root=project.root, canary_probe=True)
