"""Keep a grader audit's results with the suite version (`store_audit`, `audit_text`).

Reading them back, and a version's audit status, is `evalsuite.manifest.audit_status` (every
stage shows it; see that module). Design: docs/design/grader-audit.md.
"""

from __future__ import annotations

import json
from pathlib import Path

from evalsuite._core.atomic import atomic_write_text
from evalsuite._core.layout import Layout
from evalsuite.audit._report import GraderAudit
from evalsuite.errors import GraderAuditError
from evalsuite.manifest import Manifest, audit_results_path

__all__ = ["audit_text", "store_audit"]


def audit_text(audit: GraderAudit) -> str:
    """The results file's text: the results and their content hash."""
    data = audit.to_dict() | {"content_hash": audit.content_hash()}
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def store_audit(layout: Layout, manifest: Manifest, audit: GraderAudit) -> Path | None:
    """Keep a complete audit's results with the version (None: nothing written).

    Partial audits (a sample of items) are never stored. A dev audit is written unless the
    manifest pins other results (the freeze-time audit): then the two differ and the
    environment changed since the freeze.

    Raises:
        GraderAuditError: the results differ from those recorded at freeze (exit 3).
    """
    if not audit.complete:
        return None
    path = audit_results_path(layout, manifest.suite, manifest.version, audit.split)
    stamp = manifest.audit
    if audit.split == "dev" and stamp is not None and stamp.status == "passed":
        if stamp.content_hash != audit.content_hash():
            raise GraderAuditError(
                f"the grader audit of {manifest.ref} now gives other results "
                f"({audit.content_hash()}) than at freeze ({stamp.content_hash}): the family "
                f"code, tools or grader changed since; {stamp.file} is kept as frozen"
            )
        if path.is_file():
            return path  # identical results: the frozen file stays byte for byte
    atomic_write_text(path, audit_text(audit))
    return path
