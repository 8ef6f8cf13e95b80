"""Keep a grader audit's results with the suite version (`store_audit`, `audit_text`).

Reading them back, and a version's audit status, is `evalsuite.manifest.audit_status` (every
stage shows it; see that module). Design: docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite.audit._report import UNHASHED, GraderAudit
from evalsuite.errors import GraderAuditError
from evalsuite.manifest import Manifest, audit_results_path, read_audit_file

__all__ = ["AGGREGATE_CHECKS", "audit_text", "pinned_disagreements", "pinned_part", "store_audit"]


def audit_text(audit: GraderAudit) -> str:
    """The results file's text: the results and their content hash."""
    data = audit.to_dict() | {"content_hash": audit.content_hash()}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _label(check: Mapping[str, Any]) -> tuple[Any, Any]:
    return check.get("check"), check.get("policy")


def pinned_part(fresh: Mapping[str, Any], frozen: Mapping[str, Any]) -> dict[str, Any]:
    """The fresh results restricted to what the frozen results recorded.

    Checks, policies and fields the audit gained after the version was frozen (issue 29's
    red-team policies, shortcut detector, policy listing and red-team report) are left out,
    and ``ok`` is recomputed over the checks kept: the part a freeze-time stamp pins. A fresh
    audit reproduces the frozen one when this part hashes as the stamp says; what it adds is
    judged (and fails the audit when it fails) but does not change the frozen record.
    """
    kept: dict[str, Any] = {k: v for k, v in fresh.items() if k in frozen}
    families = []
    old = {f.get("family"): f for f in frozen.get("families", [])}
    for family in fresh.get("families", []):
        before = old.get(family.get("family"))
        if before is None:
            families.append(family)
            continue
        labels = {_label(c) for c in before.get("checks", [])}
        checks = [c for c in family.get("checks", []) if _label(c) in labels]
        entry = {k: v for k, v in family.items() if k in before}
        entry["checks"] = checks
        if "ok" in before:
            entry["ok"] = not any(c.get("status") == "failed" for c in checks)
        families.append(entry)
    if "families" in kept:
        kept["families"] = families
        if "ok" in frozen:
            kept["ok"] = all(f.get("ok", True) for f in families)
    return kept


def _reproduces(audit: GraderAudit, frozen: Mapping[str, Any], pinned: str) -> bool:
    """True when the fresh audit's part that the frozen results hold hashes as pinned."""
    fresh = {k: v for k, v in audit.to_dict().items() if k not in UNHASHED}
    return content_hash(pinned_part(fresh, frozen)) == pinned


def _labelled(results: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Every check of a results file by ``family: check/policy``, without its wording."""
    found = {}
    for family in results.get("families", []):
        for check in family.get("checks", []):
            label = check["check"] + (f"/{check['policy']}" if check.get("policy") else "")
            found[f"{family['family']}: {label}"] = {
                k: v for k, v in check.items() if k != "summary"
            }
    return found


AGGREGATE_CHECKS = frozenset(
    {"harness", "reward_bounds", "limits", "action_space", "determinism", "isolation"}
)
"""Checks over every episode of the audit: their counts grow with the policies played, so a
later audit that plays more policies is compared with the pinned results on their status."""


def pinned_disagreements(frozen: Mapping[str, Any], audit: GraderAudit) -> list[str]:
    """The pinned checks a later audit disagrees on.

    Policy checks must be equal but for their wording; aggregate checks, equal in status.
    """
    pinned, now = _labelled(frozen), _labelled(audit.to_dict())
    changed = []
    for label, check in pinned.items():
        fresh = now.get(label)
        if fresh is None:
            changed.append(label)
        elif check.get("check") in AGGREGATE_CHECKS:
            if fresh.get("status") != check.get("status"):
                changed.append(label)
        elif fresh != check:
            changed.append(label)
    return sorted(changed)


def store_audit(layout: Layout, manifest: Manifest, audit: GraderAudit) -> Path | None:
    """Keep a complete audit's results with the version (None: nothing written).

    Partial audits (a sample of items) are never stored. A dev audit is written unless the
    manifest pins other results (the freeze-time audit). Then the fresh results must reproduce
    the pinned ones in the part those hold (`pinned_part`); what the audit gained since the
    freeze (checks, policies, fields) is kept beside them as the version's later audit
    (``<version>.later-audit.json``, with ``added_checks``), which decides the version's
    status (`evalsuite.manifest.audit_status`): an old version that a newer probe breaks
    audits as failing. The frozen file stays byte for byte.

    Raises:
        GraderAuditError: the results differ from those recorded at freeze in the part they
            hold (exit 3; the family code, tools or grader changed since).
    """
    if not audit.complete:
        return None
    path = audit_results_path(layout, manifest.suite, manifest.version, audit.split)
    stamp = manifest.audit
    if audit.split == "dev" and stamp is not None and stamp.status == "passed":
        if stamp.content_hash == audit.content_hash():
            if not path.is_file():
                atomic_write_text(path, audit_text(audit))
            return path  # identical results: the frozen file stays byte for byte
        frozen, problems = read_audit_file(layout, manifest.suite, manifest.version)
        if frozen is not None and (problems or frozen.get("content_hash") != stamp.content_hash):
            frozen = None  # edited, or other results than the stamp pins: nothing to compare
        reproduced = (
            frozen is not None
            and stamp.content_hash is not None
            and _reproduces(audit, frozen, stamp.content_hash)
        )
        changed = (
            [f"{stamp.file} cannot be read or was edited: restore it"] if frozen is None else []
        )
        if frozen is not None and not reproduced:
            changed = pinned_disagreements(frozen, audit)
        if frozen is None or changed:
            more = f" and {len(changed) - 6} more" if len(changed) > 6 else ""
            raise GraderAuditError(
                f"the grader audit of {manifest.ref} now gives other results than at freeze "
                f"({', '.join(changed[:6])}{more} changed since): the family code, tools or "
                f"grader changed since; {stamp.file} is kept as frozen"
            )
        added = sorted(set(_labelled(audit.to_dict())) - set(_labelled(frozen)))
        later = audit_results_path(layout, manifest.suite, manifest.version, "later")
        data = audit.to_dict() | {"added_checks": added}
        data["content_hash"] = content_hash({k: v for k, v in data.items() if k not in UNHASHED})
        text = json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        atomic_write_text(later, text)
        return later
    atomic_write_text(path, audit_text(audit))
    return path
