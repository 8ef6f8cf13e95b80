"""The `evalsuite` model provider: offline reference agents behind inspect's ModelAPI."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.tool import ToolChoice, ToolInfo

from evalsuite._core.seeds import derive_seed
from evalsuite.agents._arith import arith_answer
from evalsuite.agents._code_repair import is_code_repair, repair_turn
from evalsuite.agents._common import NextCall, Turn, build_output, read_conversation, seeded_rng
from evalsuite.agents._records import is_records, records_turn
from evalsuite.agents._support import is_support, support_turn

__all__ = ["AGENTS", "KNOWN_FAMILIES", "ReferenceAgents"]

AGENTS = ("baseline", "improved", "hacker")
KNOWN_FAMILIES: dict[str, str] = {
    "arith": "arith",
    "support_desk": "support",
    "code_repair": "repair",
    "records_desk": "records",
    "answers": "answers",
}
"""Task families the agents have a policy for -> the example suite that ships the family."""


class ReferenceAgents(ModelAPI):
    """``evalsuite/<agent>``: scripted, seeded agents that answer with real tool calls.

    They read the conversation, the tool results and the tool list, never the item's target
    or metadata. The episode seed is ``config.seed`` (evalsuite passes a per-(item, epoch)
    seed); without one, a seed is derived from the first prompt.
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's own signature)
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in AGENTS:
            raise ValueError(
                f"unknown reference agent {model_name!r}; use one of "
                + ", ".join(f"evalsuite/{a}" for a in AGENTS)
                + " (or evalsuite/replay -M log=PATH to replay a recorded log)"
            )
        self.agent = model_name

    def refuse_suite(self, suite: str, families: Sequence[str]) -> str | None:
        """Why this agent cannot be run on `suite`, or None when it knows every family.

        The agents only have policies for the example families (`KNOWN_FAMILIES`); on any
        other task they would answer something and score 0, which looks like a real result.
        evalsuite's runner calls this before it plans a run (or touches a holdout budget)
        and refuses the run with the reason as a usage error.
        """
        unknown = sorted(set(families) - set(KNOWN_FAMILIES))
        if not unknown:
            return None
        known = ", ".join(f"{s} (family {f})" for f, s in sorted(KNOWN_FAMILIES.items()))
        return (
            f"evalsuite/{self.agent} is an offline reference agent with scripted policies for "
            f"the example suites only: {known}. Suite {suite!r} has "
            f"{'a family' if len(unknown) == 1 else 'families'} it has no policy for "
            f"({', '.join(unknown)}), so every attempt would score 0 without meaning "
            "anything. Run this suite with a real model (--model provider/name)."
        )

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
        """Answer one turn: a tool call, or the final text."""
        return build_output(self.agent, self.turn(input, tools, config.seed), input, tools)

    def turn(self, messages: list[ChatMessage], tools: list[ToolInfo], seed: int | None) -> Turn:
        """The agent's next step for this conversation (pure: same input, same turn)."""
        conversation = read_conversation(messages, tools)
        if seed is None:
            seed = derive_seed("evalsuite-agents", conversation.system, conversation.prompt)
        if is_support(conversation):
            try:
                return Turn(text=support_turn(self.agent, conversation, seed))
            except NextCall as step:
                return Turn(text="", function=step.function, arguments=step.arguments)
        if is_code_repair(conversation):
            try:
                return Turn(text=repair_turn(self.agent, conversation, seed))
            except NextCall as step:
                return Turn(text="", function=step.function, arguments=step.arguments)
        if is_records(conversation):
            try:
                return Turn(text=records_turn(self.agent, conversation, seed))
            except NextCall as step:
                return Turn(text="", function=step.function, arguments=step.arguments)
        if not conversation.tools:
            rng = seeded_rng(seed, self.agent, "arith", conversation.position)
            return Turn(text=arith_answer(self.agent, conversation.prompt, rng))
        return Turn(text="I can't help with this task: I only know the evalsuite example tasks.")
