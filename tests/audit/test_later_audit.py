"""An audit that grew since a version was frozen: kept beside the pinned results, and decisive.

arith@2.0.0 passed its grader audit at freeze; its manifest pins those results by hash. A
newer audit with one more check (as the tamper library and the red-team policies were added
after some versions were frozen) is kept as ``2.0.0.later-audit.json`` and gives the version
its status; an audit that disagrees with a pinned check is refused and writes nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.layout import Layout
from evalsuite.audit import GraderAudit
from evalsuite.audit._record import store_audit
from evalsuite.audit._report import Check, FamilyAudit
from evalsuite.errors import GraderAuditError
from evalsuite.manifest import audit_status, load_manifest
from tests.e2e.conftest import copy_project


def _rebuilt(results: dict[str, Any]) -> GraderAudit:
    audit = GraderAudit(
        suite=results["suite"],
        version=results["version"],
        manifest_hash=results["manifest_hash"],
        split=results["split"],
        schedule=list(results["schedule"]),
        seed=results["seed"],
        sample=dict(results["sample"]),
    )
    for family in results["families"]:
        checks = [
            Check(
                c["check"],
                c["status"],
                c["summary"],
                c["policy"],
                dict(c["counts"]),
                dict(c["strata"]),
                list(c["items"]),
            )
            for c in family["checks"]
        ]
        audit.families.append(FamilyAudit(family["family"], family["version"], checks))
    return audit


@pytest.fixture
def frozen(tmp_path: Path) -> tuple[Layout, GraderAudit]:
    project = copy_project(tmp_path / "project")
    layout = Layout(project.root)
    results = json.loads((layout.root / "manifests/arith/2.0.0.audit.json").read_text())
    return layout, _rebuilt(results)


def test_an_audit_that_only_gained_fields_keeps_the_frozen_file_and_passes(
    frozen: tuple[Layout, GraderAudit],
) -> None:
    # the audit gained fields since arith@2.0.0 was frozen (every policy's scores, the
    # red-team report): the rebuilt results hash otherwise, reproduce the pinned part
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    assert manifest.audit is not None and audit.content_hash() != manifest.audit.content_hash
    before = (layout.root / "manifests/arith/2.0.0.audit.json").read_bytes()
    path = store_audit(layout, manifest, audit)
    assert path == layout.root / "manifests/arith/2.0.0.later-audit.json"
    assert json.loads(path.read_text())["added_checks"] == []
    assert (layout.root / "manifests/arith/2.0.0.audit.json").read_bytes() == before
    assert audit_status(layout, manifest).state == "passed"


def test_an_added_failing_check_makes_the_version_audit_as_failing(
    frozen: tuple[Layout, GraderAudit],
) -> None:
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    assert audit_status(layout, manifest).state == "passed"
    audit.families[0].checks.append(
        Check("redteam", "failed", "a blind policy passes", "blind_first", {"passed": 3}, {}, ["a"])
    )
    path = store_audit(layout, manifest, audit)
    assert path == layout.root / "manifests/arith/2.0.0.later-audit.json"
    stored = json.loads(path.read_text())
    assert stored["added_checks"] == ["arith: redteam/blind_first"]
    status = audit_status(layout, manifest)
    assert status.state == "failed"
    assert "later audit" in status.detail and "redteam/blind_first" in status.detail
    assert status.to_dict()["failed_checks"] == ["arith: redteam/blind_first"]
    # the pinned freeze-time results are untouched
    assert audit_status(layout, manifest).results is not None


def test_an_added_passing_check_keeps_it_passing(frozen: tuple[Layout, GraderAudit]) -> None:
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    audit.families[0].checks.append(Check("shortcut", "passed", "no shortcut"))
    store_audit(layout, manifest, audit)
    status = audit_status(layout, manifest)
    assert status.state == "passed" and "1 check(s) added since" in status.detail


def test_a_later_audit_edited_by_hand_is_damaged(frozen: tuple[Layout, GraderAudit]) -> None:
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    audit.families[0].checks.append(Check("redteam", "failed", "x", "p"))
    path = store_audit(layout, manifest, audit)
    assert path is not None
    data = json.loads(path.read_text())
    data["ok"] = True
    path.write_text(json.dumps(data))
    assert audit_status(layout, manifest).state == "damaged"


def test_a_changed_pinned_check_is_refused_and_writes_nothing(
    frozen: tuple[Layout, GraderAudit],
) -> None:
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    oracle = audit.families[0].checks[0]
    oracle.status, oracle.items = "failed", ["arith-0001"]
    audit.families[0].checks.append(Check("redteam", "passed", "x", "p"))
    with pytest.raises(GraderAuditError, match=r"arith: oracle.*changed since"):
        store_audit(layout, manifest, audit)
    assert not (layout.root / "manifests/arith/2.0.0.later-audit.json").exists()
    assert audit_status(layout, manifest).state == "passed"


def test_more_policies_grow_the_aggregate_counts_and_still_make_a_later_audit(
    frozen: tuple[Layout, GraderAudit],
) -> None:
    # a kit that gained trivial policies plays more episodes: the harness, reward-bounds and
    # determinism checks count them, so the pinned part cannot hash as before; those checks
    # are compared by status, the policy checks exactly
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    for check in audit.families[0].checks:
        if check.check in ("harness", "reward_bounds"):
            check.counts["episodes"] = int(check.counts.get("episodes", 0)) + 60
    audit.families[0].checks.append(Check("trivial", "failed", "passes", "new_policy"))
    path = store_audit(layout, manifest, audit)
    assert path is not None and path.name == "2.0.0.later-audit.json"
    assert audit_status(layout, manifest).state == "failed"
    # an aggregate check whose status changed is a changed environment: refused
    audit.families[0].checks[
        [c.check for c in audit.families[0].checks].index("harness")
    ].status = "failed"
    with pytest.raises(GraderAuditError, match=r"arith: harness.*changed since"):
        store_audit(layout, manifest, audit)


def test_an_edited_frozen_file_is_never_the_base_of_a_later_audit(
    frozen: tuple[Layout, GraderAudit],
) -> None:
    layout, audit = frozen
    manifest = load_manifest(layout, "arith", "2.0.0")
    pinned = layout.root / "manifests/arith/2.0.0.audit.json"
    data = json.loads(pinned.read_text())
    data["seed"] = 99
    pinned.write_text(json.dumps(data))
    audit.families[0].checks.append(Check("redteam", "failed", "x", "p"))
    with pytest.raises(GraderAuditError, match="restore it"):
        store_audit(layout, manifest, audit)
    assert not (layout.root / "manifests/arith/2.0.0.later-audit.json").exists()
