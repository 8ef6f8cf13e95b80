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
from evalsuite.manifest import Manifest, audit_results_path

__all__ = ["audit_text", "pinned_part", "store_audit"]


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


def _reproduces(audit: GraderAudit, frozen_path: Path, pinned: str) -> bool:
    """True when the fresh audit's part that the frozen results hold hashes as pinned."""
    try:
        frozen = json.loads(frozen_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    if not isinstance(frozen, dict):
        return False
    fresh = {k: v for k, v in audit.to_dict().items() if k not in UNHASHED}
    return content_hash(pinned_part(fresh, frozen)) == pinned


def store_audit(layout: Layout, manifest: Manifest, audit: GraderAudit) -> Path | None:
    """Keep a complete audit's results with the version (None: nothing written).

    Partial audits (a sample of items) are never stored. A dev audit is written unless the
    manifest pins other results (the freeze-time audit): then the two differ and the
    environment changed since the freeze, unless the fresh results differ only by what the
    audit gained since (`pinned_part`): then the frozen file is kept as it is.

    Raises:
        GraderAuditError: the results differ from those recorded at freeze (exit 3).
    """
    if not audit.complete:
        return None
    path = audit_results_path(layout, manifest.suite, manifest.version, audit.split)
    stamp = manifest.audit
    if audit.split == "dev" and stamp is not None and stamp.status == "passed":
        if stamp.content_hash != audit.content_hash() and not (
            stamp.content_hash is not None
            and path.is_file()
            and _reproduces(audit, path, stamp.content_hash)
        ):
            raise GraderAuditError(
                f"the grader audit of {manifest.ref} now gives other results "
                f"({audit.content_hash()}) than at freeze ({stamp.content_hash}): the family "
                f"code, tools or grader changed since; {stamp.file} is kept as frozen"
            )
        if path.is_file():
            return path  # identical results: the frozen file stays byte for byte
    atomic_write_text(path, audit_text(audit))
    return path
