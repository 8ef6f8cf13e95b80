"""The grader audit's results: one record per (family, check), hashed and stored with a version.

A check has a name (``oracle``, ``null``, ``trivial``, ``exploit``, ``harness``,
``reward_bounds``, ``limits``, ``action_space``, ``determinism``, ``isolation``, ``kit``), the
policy it is about (trivial policies and exploit probes), a status, a one-line summary, its
counts, per-stratum counts, and the items that failed it (by id, never by text). Statuses:
``passed``; ``failed`` (the audit fails, exit 3); ``not_recorded`` (nothing to compare with, e.g.
a version frozen before action spaces were recorded: said, not failed); ``skipped`` (not run
on this split, with why). See docs/design/grader-audit.md.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from evalsuite._core.hashing import content_hash
from evalsuite.manifest import AUDIT_UNHASHED

__all__ = ["UNHASHED", "Check", "CheckStatus", "FamilyAudit", "GraderAudit"]

CheckStatus = Literal["passed", "failed", "not_recorded", "skipped"]
UNHASHED = AUDIT_UNHASHED
"""Fields of the results that vary between identical audits (left out of the hash)."""


@dataclass(slots=True)
class Check:
    """One check of one family."""

    check: str
    status: CheckStatus
    summary: str
    policy: str | None = None
    counts: dict[str, int | float] = field(default_factory=dict)
    strata: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: list[str] = field(default_factory=list)
    """Items that failed the check (ids), sorted."""

    @property
    def label(self) -> str:
        """``check`` or ``check/policy``."""
        return f"{self.check}/{self.policy}" if self.policy else self.check

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "check": self.check,
            "policy": self.policy,
            "status": self.status,
            "summary": self.summary,
            "counts": dict(self.counts),
            "strata": {k: dict(v) for k, v in sorted(self.strata.items())},
            "items": sorted(self.items),
        }


@dataclass(slots=True)
class FamilyAudit:
    """Every check of one family."""

    family: str
    version: int | None
    checks: list[Check] = field(default_factory=list)
    policies: list[dict[str, Any]] = field(default_factory=list)
    """Every policy played on the family's items (built-in, trivial, probes, tampers,
    generated, team, reference agents), with its mean and, per stratum, mean, passed, items."""
    redteam: dict[str, Any] | None = None
    """The red-team report: the best cheap policy and its margin under the weakest reference."""

    @property
    def ok(self) -> bool:
        """True when no check failed."""
        return not any(c.status == "failed" for c in self.checks)

    def failed(self) -> list[Check]:
        """The failed checks."""
        return [c for c in self.checks if c.status == "failed"]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return {
            "family": self.family,
            "version": self.version,
            "ok": self.ok,
            "checks": [c.to_dict() for c in self.checks],
            "policies": [dict(p) for p in self.policies],
            "redteam": dict(self.redteam) if self.redteam is not None else None,
        }


@dataclass(slots=True)
class GraderAudit:
    """The grader audit of one suite version on one split."""

    suite: str
    version: str
    manifest_hash: str
    """Hash of the manifest as audited (without its audit stamp: `Manifest.audited_hash`)."""
    split: str
    schedule: list[str]
    seed: int
    sample: dict[str, Any]
    """Which items were audited: ``{"items": n, "of": n, "per_stratum": k | None}``."""
    families: list[FamilyAudit] = field(default_factory=list)
    runs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    logs: list[str] = field(default_factory=list)
    redteam_schedule: list[str] = field(default_factory=list)
    """The red-team run's policies (generated and team), each played where it has a plan."""
    references: list[str] = field(default_factory=list)
    """The reference agents played for the red-team report."""

    @property
    def ok(self) -> bool:
        """True when every check of every family held."""
        return all(f.ok for f in self.families)

    @property
    def complete(self) -> bool:
        """True when every item of the split was audited."""
        return bool(self.sample.get("items") == self.sample.get("of"))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`audit --graders --json`, the results file)."""
        return {
            "format": "evalsuite-grader-audit/1",
            "suite": self.suite,
            "version": self.version,
            "manifest_hash": self.manifest_hash,
            "split": self.split,
            "ok": self.ok,
            "schedule": list(self.schedule),
            "seed": self.seed,
            "sample": dict(self.sample),
            "redteam_schedule": list(self.redteam_schedule),
            "references": list(self.references),
            "families": [f.to_dict() for f in self.families],
            "runs": list(self.runs),
            "seconds": round(self.seconds, 3),
            "logs": list(self.logs),
        }

    def content_hash(self) -> str:
        """Hash of the results (everything but run ids, timing and log paths)."""
        data = {k: v for k, v in self.to_dict().items() if k not in UNHASHED}
        return content_hash(data)

    def failures(self) -> list[str]:
        """One line per failed check: family, check, strata and items."""
        lines = []
        for family in self.families:
            for check in family.failed():
                where = ""
                bad = [s for s, v in sorted(check.strata.items()) if v.get("failed")]
                if bad:
                    where = f" in {', '.join(bad)}"
                items = ""
                if check.items:
                    shown = ", ".join(check.items[:8])
                    more = f" and {len(check.items) - 8} more" if len(check.items) > 8 else ""
                    items = f" (items {shown}{more})"
                lines.append(f"{family.family}: {check.label}{where}: {check.summary}{items}")
        return lines
