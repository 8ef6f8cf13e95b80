"""The `evalsuite` model provider: offline reference agents behind inspect's ModelAPI."""

from __future__ import annotations

from typing import Any

from inspect_ai.model import ChatMessage, GenerateConfig, ModelAPI, ModelOutput
from inspect_ai.tool import ToolChoice, ToolInfo

from evalsuite._core.seeds import derive_seed
from evalsuite.agents._arith import arith_answer
from evalsuite.agents._common import NextCall, Turn, build_output, read_conversation, seeded_rng
from evalsuite.agents._support import is_support, support_turn

__all__ = ["AGENTS", "ReferenceAgents"]

AGENTS = ("baseline", "improved", "hacker")


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
            )
        self.agent = model_name

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
        if not conversation.tools:
            rng = seeded_rng(seed, self.agent, "arith", conversation.position)
            return Turn(text=arith_answer(self.agent, conversation.prompt, rng))
        return Turn(text="I can't help with this task: I only know the evalsuite example tasks.")
