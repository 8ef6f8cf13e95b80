"""The result of `evalsuite audit`: grader audit, leak audit and canary probe of a suite version.

The audits themselves run in `evalsuite.audit`, which plays policies through inspect; the
service layer never imports inspect (contract "only run/ and the reference agents touch the
harness"), so `AuditResult` holds each audit's JSON form as the audit stage wrote it, and
reads the verdicts from there. Its one view is `audit_view` (terminal, Markdown, HTML); its
JSON `to_dict()` is the ``audit --json`` payload (docs/cli.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from evalsuite._core.jsonout import JsonObject

__all__ = ["AuditResult"]


@dataclass(frozen=True, slots=True)
class AuditResult:
    """What `audit` found; each part None when it was not asked for.

    Attributes:
        graders: ``audit --graders``: the grader audit (`GraderAudit.to_dict`), with its
            ``content_hash`` and where it was ``stored`` (None: not stored).
        leaks: ``audit --leaks`` (the default): the leak audit (`LeakReport.to_dict`).
        canary_probe: ``audit --canary-probe``: the memorisation probe (`CanaryResult.to_dict`).
    """

    graders: JsonObject | None = None
    leaks: JsonObject | None = None
    canary_probe: JsonObject | None = None

    @property
    def graders_ok(self) -> bool | None:
        """Did every check of every family pass (None: no grader audit)."""
        return None if self.graders is None else bool(self.graders.get("ok"))

    @property
    def leaking_items(self) -> tuple[str, ...]:
        """``split item_id`` of every item whose target the agent can read, sorted."""
        findings = (self.leaks or {}).get("findings")
        if not isinstance(findings, Sequence):
            return ()
        return tuple(
            sorted(
                {f"{f.get('split')} {f.get('item_id')}" for f in findings if isinstance(f, Mapping)}
            )
        )

    @property
    def memorised(self) -> bool | None:
        """Did the model reproduce the canary (None: no probe)."""
        return None if self.canary_probe is None else bool(self.canary_probe.get("memorised"))

    def to_dict(self) -> JsonObject:
        """The ``audit --json`` payload: ``graders``, ``leaks``, ``canary_probe``, as asked."""
        parts = {"graders": self.graders, "leaks": self.leaks, "canary_probe": self.canary_probe}
        return {k: v for k, v in parts.items() if v is not None}
