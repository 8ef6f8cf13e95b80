"""The grader audits of the shipped families (issue 13 acceptance; part of `make test`).

`make test` audits a stratified sample (the first item of each stratum, every policy) of
arith@1.0.0 and arith@2.0.0: quick, and every check runs. The samples of support@1.0.0 (through
the CLI), support@2.0.0 (failing issue 29's cheap policies), repair@1.0.0 (failing the tamper
library), repair@2.0.0, records@1.0.0 (failing the blind policies) and records@2.0.0 (30 to 45 s
of CPU each) and the full dev audits, which reproduce the results stored with each version,
are `@pytest.mark.slow` (``make slow``; docs/design/test-speed.md names the fast tests that
keep each property).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite.audit import AuditOptions, GraderAudit, audit_graders
from evalsuite.audit._record import pinned_disagreements, pinned_part
from evalsuite.audit._report import UNHASHED
from evalsuite.manifest import KeySpec, audit_status, load_manifest
from tests.e2e.conftest import copy_project
from tests.helpers import REPO, Project, json_out


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return copy_project(tmp_path_factory.mktemp("shipped") / "project")


def _audit(project: Project, ref: str, per_stratum: int | None) -> GraderAudit:
    suite, _, version = ref.partition("@")
    return audit_graders(
        Layout(project.root),
        suite,
        version,
        keys=KeySpec(key_dir=project.key_dir),
        options=AuditOptions(per_stratum=per_stratum, repeat=1),
    )


def _failed(audit: GraderAudit) -> dict[str, Any]:
    return {c.label: c for f in audit.families for c in f.checks if c.status == "failed"}


@pytest.mark.parametrize(
    ("ref", "per_stratum"),
    [
        # the support, repair and records samples run 30 to 45 s of inspect episodes each:
        # `make slow`, beside the full audits below
        ("arith@2.0.0", 1),  # the first item of each stratum, as the module's docstring says
        pytest.param("repair@2.0.0", 1, marks=pytest.mark.slow),
    ],
)
def test_the_latest_shipped_versions_pass_their_grader_audit(
    shipped: Project, ref: str, per_stratum: int
) -> None:
    audit = _audit(shipped, ref, per_stratum)
    assert audit.ok, audit.failures()
    (family,) = audit.families
    statuses = {c.label: c.status for c in family.checks}
    assert statuses["isolation"] == statuses["determinism"] == "passed"
    assert statuses["action_space"] == "passed"  # frozen with its tools recorded
    # one item per stratum: no other passing oracle episode to learn a red-team template from
    skipped = {label for label, status in statuses.items() if status == "skipped"}
    # arith declares every stratum prompt-only (the question is the whole task)
    assert skipped <= {"redteam", "shortcut"}, skipped
    assert {s for s in statuses.values()} <= {"passed", "skipped"}


@pytest.mark.slow  # 29 s of CPU: support episodes for every policy (docs/design/test-speed.md)
def test_support_1_0_0_audit_names_the_decline_everything_weakness(shipped: Project) -> None:
    result = shipped.invoke("audit", "support@1.0.0", "--graders", "--per-stratum", "1", "--json")
    assert result.exit_code == 3
    graders = json_out(result)["graders"]
    assert graders["sample"]["per_stratum"] == 1 and graders["stored"] is None
    checks = {
        c["check"] + (f"/{c['policy']}" if c["policy"] else ""): c
        for c in graders["families"][0]["checks"]
    }
    decline = checks["trivial/decline_everything"]
    assert decline["status"] == "failed"
    failing = {s for s, v in decline["strata"].items() if v["failed"]}
    assert failing == {
        "support_desk/refund_outside_window/clean",
        "support_desk/refund_outside_window/messy",
    }
    made_up = checks["trivial/ask_postcode_then_decline"]
    assert {s for s, v in made_up["strata"].items() if v["failed"]} >= {
        "support_desk/unverified_change/clean",
        "support_desk/unverified_change/messy",
    }
    assert checks["limits"]["status"] == "failed"
    assert "the task sets no time_limit" in checks["limits"]["summary"]
    assert checks["action_space"]["status"] == "not_recorded"
    assert checks["oracle"]["status"] == "passed"
    message = " ".join(result.stderr.split())
    assert "support_desk: trivial/decline_everything in support_desk/refund_outside_window" in (
        message
    )


@pytest.mark.slow  # 12 items x every policy of support_desk (about 40 s)
def test_support_2_0_0_now_fails_issue_29s_cheap_policies(shipped: Project) -> None:
    """Issue 29: support@2.0.0 passed its audit at freeze; with the kit's new trivial policies
    (played through the runner) a fresh audit fails it on the decline strata (its stored
    results, pinned by its stamp, stay). Version 3 gives the same policies nothing
    (tests/tasks/test_support_v3.py)."""
    audit = _audit(shipped, "support@2.0.0", 1)
    failed = {
        c.policy: {s for s, v in c.strata.items() if v["failed"]}
        for f in audit.families
        for c in f.checks
        if c.status == "failed"
    }
    declines = {
        f"support_desk/{intent}/{condition}"
        for intent in ("refund_outside_window", "unverified_change")
        for condition in ("clean", "messy")
    }
    for policy in ("decline_both_reasons", "reply_every_resolution", "verify_guessing"):
        assert failed[policy] == declines, policy
    assert failed["fetch_wrong_order"] == {
        "support_desk/refund_outside_window/clean",
        "support_desk/refund_outside_window/messy",
    }
    assert len(failed["act_then_decline"]) == 12
    labels = {c.label.split("/")[0] for c in _failed(audit).values()}
    assert labels == {"trivial"}, labels


@pytest.mark.slow  # 10 items x every policy of code_repair (about 40 s)
def test_repair_1_0_0_now_fails_the_tamper_library(shipped: Project) -> None:
    """Issue 29: repair@1.0.0 passed its audit at freeze, before the tamper library; a fresh
    audit fails it on the four attacks (its stored results, pinned by its stamp, stay)."""
    audit = _audit(shipped, "repair@1.0.0", 1)
    failed = {c.policy for f in audit.families for c in f.checks if c.status == "failed"}
    assert {
        "tamper_patch_test_framework",
        "tamper_forge_report",
        "tamper_frame_expected",
        "tamper_read_by_path",
    } <= failed
    labels = {c.label.split("/")[0] for c in _failed(audit).values()}
    assert labels <= {"tamper"}, labels


@pytest.mark.slow  # 5 items x every policy of records_desk (about 30 s)
def test_records_1_0_0_now_fails_the_blind_policies(shipped: Project) -> None:
    """Issue 29: records@1.0.0 passed its audit at freeze, before the blind policies; a fresh
    audit fails it: its requests name a merge's survivor first, and the record to change with
    the value to write (its stored results, pinned by its stamp, stay)."""
    audit = _audit(shipped, "records@1.0.0", 1)
    failed = {c.policy: c for f in audit.families for c in f.checks if c.status == "failed"}
    assert {"merge_second_into_first", "write_stated_values"} <= set(failed), set(failed)
    assert set(failed) <= {"merge_second_into_first", "write_stated_values", "close_named_case"}
    merge = failed["merge_second_into_first"]
    assert merge.label == "trivial/merge_second_into_first"
    failing = {s for s, v in merge.strata.items() if v["failed"]}
    assert failing == {
        "records_desk/merge_duplicates/clean",
        "records_desk/merge_duplicates/stale_cache",
    }


def test_arith_1_0_0_relies_on_default_limits(shipped: Project) -> None:
    audit = _audit(shipped, "arith@1.0.0", 1)
    assert set(_failed(audit)) == {"limits"}
    assert "the task sets no token_limit" in _failed(audit)["limits"].summary


@pytest.mark.parametrize(
    ("ref", "state"),
    [
        # passed at freeze; the later audit stored beside the pinned results (issue 29's
        # cheap policies, red team and tamper library) fails them: the truth about them
        ("support@2.0.0", "failed"),
        ("support@3.0.0", "passed"),
        ("arith@2.0.0", "passed"),
        ("repair@1.0.0", "failed"),
        ("repair@2.0.0", "passed"),
        ("records@1.0.0", "failed"),
        ("records@2.0.0", "passed"),
        ("records@2.1.0", "passed"),
        ("support@1.0.0", "failed"),
        ("arith@1.0.0", "failed"),
    ],
)
def test_every_shipped_version_carries_its_audit(ref: str, state: str) -> None:
    suite, _, version = ref.partition("@")
    layout = Layout(REPO)
    status = audit_status(layout, load_manifest(layout, suite, version))
    assert status.state == state, status.detail
    assert status.problems == []
    stored = json.loads((REPO / "manifests" / suite / f"{version}.audit.json").read_text())
    assert stored["sample"]["items"] == stored["sample"]["of"]  # complete dev audits
    if ref in {"support@2.0.0", "repair@1.0.0", "records@1.0.0"}:
        assert "passed the grader audit at freeze; a later audit" in status.detail
        assert status.results is not None and status.results["added_checks"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "ref",
    [
        "arith@2.0.0",
        "support@1.0.0",
        "arith@1.0.0",
        "repair@2.0.0",
        "records@1.0.0",
        "records@2.0.0",
        "records@2.1.0",
        "support@2.0.0",
        "support@3.0.0",
    ],
)
def test_a_full_dev_audit_reproduces_the_stored_results(shipped: Project, ref: str) -> None:
    suite, _, version = ref.partition("@")
    audit = audit_graders(
        Layout(shipped.root), suite, version, keys=KeySpec(key_dir=Path("/nonexistent"))
    )
    stored = json.loads((REPO / "manifests" / suite / f"{version}.audit.json").read_text())
    # the part the frozen results record (checks added since, e.g. the red team, left out);
    # where the kit gained policies since (support, records: issue 29), the checks over every
    # episode count more episodes and are compared by status, the policy checks exactly
    fresh = {k: v for k, v in audit.to_dict().items() if k not in UNHASHED}
    if content_hash(pinned_part(fresh, stored)) != stored["content_hash"]:
        assert pinned_disagreements(stored, audit) == []


def test_every_shipped_version_is_screened_in_the_current_fingerprint_format(
    shipped: Project,
) -> None:
    """Versions frozen in an older fingerprint format (the 2.0.0 versions too) carry a
    derived current-format file that matches their frozen items, so `guard` screens them
    with the current spec."""
    result = shipped.invoke("fingerprints", "--check", "--json")
    assert result.exit_code == 0, result.stderr
    checked = {e["manifest"]: e["status"] for e in json_out(result)["fingerprints"]}
    assert checked == {
        ref: "checked" for ref in ("arith@1.0.0", "arith@2.0.0", "support@1.0.0", "support@2.0.0")
    }
