"""Audits of a frozen suite: leaks of targets to the agent, canary memorisation probes."""

from evalsuite.audit._canary import CanaryProbe, canary_probe, split_canary
from evalsuite.audit._leaks import (
    LeakFinding,
    LeakReport,
    audit_leaks,
    default_secrets,
    default_surface,
)

__all__ = [
    "CanaryProbe",
    "LeakFinding",
    "LeakReport",
    "audit_leaks",
    "canary_probe",
    "default_secrets",
    "default_surface",
    "split_canary",
]
