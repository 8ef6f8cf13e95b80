"""The suite audit status every result carries (docs/design/grader-audit.md)."""

from __future__ import annotations

from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.manifest import AuditStatus, suite_audit_status

__all__ = ["audit_fields"]


def audit_fields(layout: Layout | None, suite: str | None, version: str | None) -> dict[str, Any]:
    """The ``audit`` field of a run's payload: its suite version's audit status and marker."""
    if layout is None:
        status = AuditStatus("unaudited", "the project is not known: its audit cannot be read")
    else:
        status = suite_audit_status(layout, suite, version)
    return status.to_dict() | {"marker": status.marker()}
