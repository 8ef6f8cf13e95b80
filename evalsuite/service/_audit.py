"""The suite audit status every result carries (docs/design/grader-audit.md)."""

from __future__ import annotations

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.manifest import AuditStatus, suite_audit_status
from evalsuite.service._results import AuditInfo

__all__ = ["audit_fields", "audit_info"]


def audit_info(layout: Layout | None, suite: str | None, version: str | None) -> AuditInfo:
    """A run's suite version's audit status and marker (unknown project: unaudited)."""
    if layout is None:
        status = AuditStatus("unaudited", "the project is not known: its audit cannot be read")
    else:
        status = suite_audit_status(layout, suite, version)
    fields = status.to_dict()
    return AuditInfo(
        status=str(fields["status"]),
        detail=str(fields["detail"]),
        problems=tuple(fields["problems"]),
        failed_checks=tuple(fields["failed_checks"]),
        marker=status.marker(),
        judges=tuple(sorted(status.judges.items())),
    )


def audit_fields(layout: Layout | None, suite: str | None, version: str | None) -> JsonObject:
    """The ``audit`` field of a run's payload: its suite version's audit status and marker."""
    return audit_info(layout, suite, version).to_dict()
