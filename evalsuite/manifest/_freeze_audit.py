"""What `freeze` needs from the grader audit, without importing it (it lives two layers up).

`freeze` builds the new version in memory, then hands a `FreezeCandidate` (the manifest as
it will be, minus its audit stamp; its fingerprints; the sealed vault, still staged; the dev
items) to the caller's audit function, which runs the audit on it and returns an
`AuditOutcome`. Only a passed audit (or an explicit skip with a reason) lets the version be
written; the stamp is part of the manifest and its hash. Design: docs/design/grader-audit.md.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalsuite.errors import GraderAuditError, UsageError
from evalsuite.manifest._audit_record import audit_file_path
from evalsuite.manifest._items import Item
from evalsuite.manifest._schema import AuditStamp, Manifest

__all__ = [
    "AuditCallback",
    "AuditOutcome",
    "FreezeAudit",
    "FreezeCandidate",
    "audit_file_path",
    "audit_stamp",
    "changelog_audit_text",
    "record_tools",
]


@dataclass(frozen=True, slots=True)
class FreezeCandidate:
    """A version about to be frozen, for its grader audit."""

    manifest: Manifest
    """The manifest as it will be written, without the audit stamp (its hash covers the rest:
    `Manifest.audited_hash`)."""
    fingerprints_text: str
    vault_path: Path
    """The sealed vault, staged beside its final place."""
    dev_items: Sequence[tuple[str, Item]]
    """(family, item) of every dev item of the version."""


@dataclass(frozen=True, slots=True)
class AuditOutcome:
    """What the audit of a candidate found."""

    passed: bool
    content_hash: str
    """Hash of the results' hashed content."""
    text: str
    """The results file (JSON), written beside the manifest when the version is frozen."""
    summary: str
    """One paragraph naming what failed (family, check, stratum, items)."""


AuditCallback = Callable[[FreezeCandidate], AuditOutcome]


@dataclass(frozen=True, slots=True)
class FreezeAudit:
    """The audit part of a freeze: action spaces to record, and the audit or its skip."""

    tools: Mapping[str, Mapping[str, str]] | None = None
    """Family name -> tool name -> schema hash (families left out record none)."""
    run: AuditCallback | None = None
    """Runs the grader audit on the candidate version."""
    skip_reason: str | None = None
    """Freeze without the audit, for this reason (recorded in manifest and changelog)."""


def audit_stamp(
    candidate: FreezeCandidate, audit: FreezeAudit | None
) -> tuple[AuditStamp | None, AuditOutcome | None]:
    """Run the audit (or record the skip); raise when it fails.

    Raises:
        UsageError: both an audit and a skip were given, or a skip without a reason.
        GraderAuditError: the audit failed (exit 3); nothing is written.
    """
    if audit is None:
        return None, None
    if audit.skip_reason is not None:
        if audit.run is not None:
            raise UsageError("freeze takes an audit or a reason to skip it, not both")
        if not audit.skip_reason.strip():
            raise UsageError("--skip-audit needs --reason: say why the audit is skipped")
        return AuditStamp(status="skipped", reason=audit.skip_reason.strip()), None
    if audit.run is None:
        return None, None
    outcome = audit.run(candidate)
    if not outcome.passed:
        raise GraderAuditError(
            f"the grader audit of {candidate.manifest.ref} failed, so it was not frozen "
            f"(nothing was written): {outcome.summary} Fix the family (or its kit) and "
            "freeze again, or freeze with --skip-audit --reason '...' (recorded in the "
            "manifest and the changelog)."
        )
    path = audit_file_path(candidate.manifest.suite, candidate.manifest.version)
    stamp = AuditStamp(status="passed", file=path, content_hash=outcome.content_hash)
    return stamp, outcome


def record_tools(content: dict[str, Any], tools: Mapping[str, Mapping[str, str]] | None) -> None:
    """Put each family's action space (tool name -> schema hash) into the manifest content."""
    for family in content["families"]:
        if tools is not None and family["name"] in tools:
            family["tools"] = dict(sorted(tools[family["name"]].items()))


def changelog_audit_text(stamp: AuditStamp | None) -> str:
    """The changelog's words on the audit (empty when the version records none)."""
    if stamp is None:
        return ""
    if stamp.status == "skipped":
        return f"; grader audit SKIPPED: {' '.join((stamp.reason or '').split())}"
    return f"; grader audit passed (`{stamp.content_hash}`)"
