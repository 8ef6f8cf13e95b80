"""Audits of a frozen suite: its graders and environments, leaks of targets, canary probes.

The grader audit (`audit_graders`, ``evalsuite audit SUITE@X.Y.Z --graders``) plays each
family's scripted policies (`evalsuite.kit.Family`) through the real runner and checks that
the oracle solves every item, that doing nothing, trivial policies and exploit probes do not
pay, that episodes are isolated and deterministic, that rewards are neither clipped nor
rounded, that limits are explicit, and that the tools did not change since the freeze.
Results are stored with the version (`store_audit`); every command shows a version's status
(`evalsuite.manifest.audit_status`). See docs/design/grader-audit.md.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.audit._canary import CanaryProbe, canary_probe, split_canary
    from evalsuite.audit._graders import AuditOptions, audit_graders, audit_manifest, schedule_of
    from evalsuite.audit._judge_probes import JudgeProbes, probe_judge
    from evalsuite.audit._leak_store import store_leak_audit
    from evalsuite.audit._leaks import (
        LeakFinding,
        LeakReport,
        audit_leaks,
        default_secrets,
        default_surface,
    )
    from evalsuite.audit._record import audit_text, store_audit
    from evalsuite.audit._report import Check, FamilyAudit, GraderAudit
    from evalsuite.audit._staging import FreezeAuditor, declared_action_spaces, stage_candidate
    from evalsuite.audit._team import load_team_policies
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._canary": (
                "CanaryProbe",
                "canary_probe",
                "split_canary",
            ),
            "._graders": (
                "AuditOptions",
                "audit_graders",
                "audit_manifest",
                "schedule_of",
            ),
            "._judge_probes": (
                "JudgeProbes",
                "probe_judge",
            ),
            "._leaks": (
                "LeakFinding",
                "LeakReport",
                "audit_leaks",
                "default_secrets",
                "default_surface",
            ),
            "._record": (
                "audit_text",
                "store_audit",
            ),
            "._report": (
                "Check",
                "FamilyAudit",
                "GraderAudit",
            ),
            "._staging": (
                "FreezeAuditor",
                "declared_action_spaces",
                "stage_candidate",
            ),
            "._leak_store": ("store_leak_audit",),
            "._team": ("load_team_policies",),
        },
    )

__all__ = [
    "AuditOptions",
    "CanaryProbe",
    "Check",
    "FamilyAudit",
    "FreezeAuditor",
    "GraderAudit",
    "JudgeProbes",
    "LeakFinding",
    "LeakReport",
    "audit_graders",
    "audit_leaks",
    "audit_manifest",
    "audit_text",
    "canary_probe",
    "declared_action_spaces",
    "default_secrets",
    "default_surface",
    "load_team_policies",
    "probe_judge",
    "schedule_of",
    "split_canary",
    "stage_candidate",
    "store_audit",
    "store_leak_audit",
]
