"""Which scripted policy plays which episode of an audit run (a process-local registry).

The grader audit runs its policies through `evalsuite run` with the model ``evalsuite/audit``
and ``-M plan=<token>``. The token names a `PolicyPlan` registered in this process: the
schedule (epoch k plays policy ``schedule[k-1]``) and each item's family kit. A plan lives
only while its ``with policy_plan(...)`` block runs, so the model cannot be used outside an
audit, and a run of it cannot be resumed in another process.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from evalsuite.kit._family import Family

__all__ = ["APPLIES_KEY", "POLICY_KEY", "TOOLS_KEY", "PolicyPlan", "active_plan", "policy_plan"]

POLICY_KEY: Final = "evalsuite_audit:policy"
"""Sample-store key: the name of the policy that played the episode."""
TOOLS_KEY: Final = "evalsuite_audit:tools"
"""Sample-store key: tool name -> schema hash of every tool the episode offered."""
APPLIES_KEY: Final = "evalsuite_audit:applies"
"""Sample-store key: whether the exploit probe that played applies to the item."""


@dataclass(frozen=True, slots=True)
class PolicyPlan:
    """The policies of one audit run."""

    schedule: tuple[str, ...]
    """Policy played in epoch 1, 2, ... (``null`` and the family's policy names)."""
    families: Mapping[str, Family]
    """Item id -> the kit of its family."""

    def policy_of(self, epoch: int) -> str:
        """The policy epoch `epoch` plays.

        Raises:
            LookupError: the epoch is outside the schedule.
        """
        if not 1 <= epoch <= len(self.schedule):
            raise LookupError(f"epoch {epoch} is outside the audit schedule ({self.schedule})")
        return self.schedule[epoch - 1]


_PLANS: dict[str, PolicyPlan] = {}


@contextmanager
def policy_plan(schedule: Sequence[str], families: Mapping[str, Family]) -> Iterator[str]:
    """Register a plan for the duration of the block; yields its token."""
    token = secrets.token_hex(8)
    _PLANS[token] = PolicyPlan(tuple(schedule), dict(families))
    try:
        yield token
    finally:
        _PLANS.pop(token, None)


def active_plan(token: str) -> PolicyPlan:
    """The registered plan called `token`.

    Raises:
        LookupError: no audit in this process registered it.
    """
    plan = _PLANS.get(token)
    if plan is None:
        raise LookupError(
            "evalsuite/audit plays the grader audit's scripted policies and runs only inside "
            "`evalsuite audit SUITE@X.Y.Z --graders` (no audit plan with this token is active "
            "in this process)"
        )
    return plan
