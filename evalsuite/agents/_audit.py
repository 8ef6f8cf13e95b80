"""``evalsuite/audit``: the grader audit's scripted policies, served as an inspect model.

The audit (``evalsuite audit SUITE@X.Y.Z --graders``) runs its policies through the real
runner: the same task, tools, limits, grader and outcome classification as any run. This
model answers each sample with the policy its audit plan schedules for the sample's epoch
(`evalsuite.kit.PolicyPlan`), replaying the conversation's tool results into the policy
procedure (`evalsuite.kit.Episode`). It records in the sample's store which policy played
and the schema hash of every tool the episode offered (the action-space check reads both).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.solver._task_state import sample_state  # the running sample: id, metadata
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from evalsuite.agents._common import Turn, build_output, read_conversation
from evalsuite.kit import (
    APPLIES_KEY,
    POLICY_KEY,
    TOOLS_KEY,
    Episode,
    NextCall,
    ToolResult,
    active_plan,
    info_hash,
    null_policy,
)
from evalsuite.run import EPISODE_KEY, episode_spec

__all__ = ["AuditModel"]
_PRIVATE_METADATA = (EPISODE_KEY, "evalsuite_se_cluster", "item_id")


class AuditModel(ModelAPI):
    """``evalsuite/audit -M plan=<token>``: plays the scheduled policy of each episode."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's own signature)
        plan: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(
                f"evalsuite/audit takes only -M plan=<token> (got {', '.join(sorted(model_args))})"
            )
        active_plan(str(plan or ""))  # refuse at once outside an audit
        self.plan = str(plan)

    def max_connections(self) -> int:
        """No remote service: allow plenty of concurrent episodes."""
        return 256

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """The scheduled policy's next step: a tool call, or its final answer."""
        return build_output("audit", self.turn(input, tools), input, tools)

    def turn(self, messages: list[ChatMessage], tools: list[ToolInfo]) -> Turn:
        """Run the episode's policy over the conversation so far."""
        state = sample_state()
        if state is None:
            raise RuntimeError("evalsuite/audit answers inspect samples only: no sample is running")
        spec = episode_spec(state)
        plan = active_plan(self.plan)
        family = plan.families.get(spec.item_id)
        if family is None:
            raise RuntimeError(f"item {spec.item_id!r} is not in the audit plan")
        name = plan.policy_of(spec.epoch)
        policy = family.policies().get(name, null_policy)
        seen: dict[str, str] = dict(store().get(TOOLS_KEY, {}))
        seen.update({info.name: info_hash(info) for info in tools})
        store().set(TOOLS_KEY, seen)
        store().set(POLICY_KEY, name if name in family.policies() else "null")
        conversation = read_conversation(messages, tools)
        metadata: Mapping[str, Any] = {
            k: v for k, v in (state.metadata or {}).items() if k not in _PRIVATE_METADATA
        }
        probe = next((p for p in family.probes if p.name == name), None)
        if probe is not None:
            applies = probe.applies(metadata)
            store().set(APPLIES_KEY, applies)
            if not applies:  # not an exploit on this item: nothing to try
                policy = null_policy
        episode = Episode(
            item_id=spec.item_id,
            epoch=spec.epoch,
            seed=spec.seed,
            prompt=conversation.prompt,
            target=state.target.text,
            metadata=metadata,
            tools=conversation.tools,
            results=[
                ToolResult(r.function, dict(r.arguments), r.text, r.error)
                for r in conversation.results
            ],
        )
        try:
            return Turn(text=policy(episode))
        except NextCall as step:
            return Turn(text="", function=step.function, arguments=dict(step.arguments))
