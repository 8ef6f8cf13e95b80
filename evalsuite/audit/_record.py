"""Keep a grader audit's results with the suite version (`store_audit`, `audit_text`).

Reading them back, and a version's audit status, is `evalsuite.manifest.audit_status` (every
stage shows it; see that module). Design: docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.hashing import content_hash
from evalsuite._core.layout import Layout
from evalsuite.audit._report import UNHASHED, GraderAudit
from evalsuite.errors import GraderAuditError
from evalsuite.manifest import Manifest, audit_results_path, read_audit_file

__all__ = ["audit_text", "store_audit"]


def audit_text(audit: GraderAudit) -> str:
    """The results file's text: the results and their content hash."""
    data = audit.to_dict() | {"content_hash": audit.content_hash()}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def _labelled(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Every check of a results file by ``family: check/policy``, without its wording."""
    found = {}
    for family in results.get("families", []):
        for check in family.get("checks", []):
            label = check["check"] + (f"/{check['policy']}" if check.get("policy") else "")
            found[f"{family['family']}: {label}"] = {
                k: v for k, v in check.items() if k not in ("summary",)
            }
    return found


def _later_audit(frozen: dict[str, Any], audit: GraderAudit) -> list[str]:
    """The checks `audit` adds to the pinned `frozen` results.

    Raises:
        GraderAuditError: the two disagree on a check the frozen results hold.
    """
    pinned, now = _labelled(frozen), _labelled(audit.to_dict())
    changed = sorted(label for label, check in pinned.items() if now.get(label) != check)
    if changed:
        shown = ", ".join(changed[:6]) + (
            f" and {len(changed) - 6} more" if len(changed) > 6 else ""
        )
        raise GraderAuditError(
            f"the grader audit of {audit.suite}@{audit.version} now gives other results than at "
            f"freeze on checks the frozen results hold ({shown}): the family code, tools or "
            "grader changed since; the frozen results are kept as they are"
        )
    return sorted(set(now) - set(pinned))


def store_audit(layout: Layout, manifest: Manifest, audit: GraderAudit) -> Path | None:
    """Keep a complete audit's results with the version (None: nothing written).

    Partial audits (a sample of items) are never stored. A dev audit is written unless the
    manifest pins other results (the freeze-time audit). Then, when the two agree on every
    check the pinned results hold and the new audit adds checks (the audit grew since the
    freeze), the new results are kept beside the pinned ones as the version's later audit
    (``<version>.later-audit.json``, with ``added_checks``), which decides its status
    (`evalsuite.manifest.audit_status`).

    Raises:
        GraderAuditError: the results differ from those recorded at freeze on a check they
            hold (exit 3; the family code, tools or grader changed since).
    """
    if not audit.complete:
        return None
    path = audit_results_path(layout, manifest.suite, manifest.version, audit.split)
    stamp = manifest.audit
    if audit.split == "dev" and stamp is not None and stamp.status == "passed":
        if stamp.content_hash == audit.content_hash():
            if path.is_file():
                return path  # identical results: the frozen file stays byte for byte
            atomic_write_text(path, audit_text(audit))
            return path
        frozen, problems = read_audit_file(layout, manifest.suite, manifest.version)
        if frozen is None or problems or frozen.get("content_hash") != stamp.content_hash:
            raise GraderAuditError(
                f"the grader audit of {manifest.ref} now gives other results "
                f"({audit.content_hash()}) than at freeze ({stamp.content_hash}), and the "
                f"frozen results in {stamp.file} cannot be compared check by check "
                f"({'; '.join(problems) or 'missing or of other content'}); restore them"
            )
        added = _later_audit(frozen, audit)
        later = audit_results_path(layout, manifest.suite, manifest.version, "later")
        data = audit.to_dict() | {"added_checks": added}
        hashed = {k: v for k, v in data.items() if k not in UNHASHED}
        data["content_hash"] = content_hash(hashed)
        atomic_write_text(
            later, json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        )
        return later
    atomic_write_text(path, audit_text(audit))
    return path
