"""The family kit: how a task family declares itself to the runner and the grader audit.

A family's task file builds its inspect ``@task`` as before and adds one `Family`::

    FAMILY = Family(
        name="support_desk", version=2, task=support_desk,
        limits=Limits(time_s=600, messages=40, tokens=400_000),
        tools=[ToolDecl(refund(), on_timeout="harness_error"), ...],
        final_state=lambda view: view.store["ShopStore:support_desk:state"],
        oracle=oracle, every_answer=every_answer,
        trivial=[Trivial("decline_everything", decline_everything, "...")],
        probes=[Probe("claim_success", claim_success, "...")],
    )

Policies are plain functions over an `Episode` (see `evalsuite.kit._policy`). The walk-through
is tasks/README.md; what the audit checks is docs/design/grader-audit.md.
"""

from evalsuite.kit._family import (
    AgentCode,
    CodeChange,
    Family,
    FamilyKitError,
    FamilyParts,
    FinalView,
    Limits,
    Probe,
    TimeoutOutcome,
    ToolDecl,
    Trivial,
    family_of,
    family_of_task,
)
from evalsuite.kit._loop import tool_loop
from evalsuite.kit._package import FamilyPackage, family_package, package_name
from evalsuite.kit._plan import (
    APPLIES_KEY,
    POLICY_KEY,
    TOOLS_KEY,
    PolicyPlan,
    active_plan,
    policy_plan,
)
from evalsuite.kit._policy import (
    Episode,
    NextCall,
    Policy,
    ToolResult,
    empty_answer,
    null_policy,
    redacted,
)
from evalsuite.kit._redteam import RedTeam, RedTeamError
from evalsuite.kit._tools import action_space, action_space_changes, info_hash, tool_name_of

__all__ = [
    "APPLIES_KEY",
    "POLICY_KEY",
    "TOOLS_KEY",
    "AgentCode",
    "CodeChange",
    "Episode",
    "Family",
    "FamilyKitError",
    "FamilyPackage",
    "FamilyParts",
    "FinalView",
    "Limits",
    "NextCall",
    "Policy",
    "PolicyPlan",
    "Probe",
    "RedTeam",
    "RedTeamError",
    "TimeoutOutcome",
    "ToolDecl",
    "ToolResult",
    "Trivial",
    "action_space",
    "action_space_changes",
    "active_plan",
    "empty_answer",
    "family_of",
    "family_of_task",
    "family_package",
    "info_hash",
    "null_policy",
    "package_name",
    "policy_plan",
    "redacted",
    "tool_loop",
    "tool_name_of",
]
