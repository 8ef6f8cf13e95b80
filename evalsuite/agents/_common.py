"""What every reference policy shares: reading the conversation, replaying tool results, output.

A policy is a deterministic procedure over the ticket (or prompt) and the tool results seen so
far. `Replay` re-runs it on every turn: calls already answered return their recorded results,
and the first call not yet made becomes this turn's tool call (`NextCall`); a procedure that
runs to its end returns the final text. Randomness comes only from `seeded_rng`, seeded by the
episode's ``config.seed`` and a conversation position, so a seed fixes the whole episode.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.tool import ToolCall, ToolInfo

from evalsuite._core.seeds import derive_seed

__all__ = [
    "Conversation",
    "NextCall",
    "Replay",
    "ToolResult",
    "Turn",
    "build_output",
    "read_conversation",
    "seeded_rng",
]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call the agent made and what came back."""

    function: str
    arguments: dict[str, Any]
    text: str
    error: str | None = None

    def parsed(self) -> Any:
        """The result parsed as JSON (None when it is an error or not JSON)."""
        if self.error is not None:
            return None
        try:
            return json.loads(self.text)
        except json.JSONDecodeError:
            return None


@dataclass(frozen=True, slots=True)
class Conversation:
    """What an agent may read: the prompts, its own past calls and their results, the tools."""

    system: str
    prompt: str
    results: tuple[ToolResult, ...]
    tools: frozenset[str]
    position: int
    """Number of messages so far (the conversation position of this turn)."""


def read_conversation(messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]) -> Conversation:
    """Split the input messages into prompts and (call, result) pairs, in call order."""
    system = "\n".join(m.text for m in messages if m.role == "system")
    users = [m for m in messages if isinstance(m, ChatMessageUser)]
    answers = {m.tool_call_id: m for m in messages if isinstance(m, ChatMessageTool)}
    results: list[ToolResult] = []
    for message in messages:
        if not isinstance(message, ChatMessageAssistant):
            continue
        for call in message.tool_calls or []:
            answer = answers.get(call.id)
            if answer is None:
                continue
            error = answer.error.message if answer.error is not None else None
            results.append(ToolResult(call.function, dict(call.arguments), answer.text, error))
    return Conversation(
        system=system,
        prompt=users[0].text if users else "",
        results=tuple(results),
        tools=frozenset(t.name for t in tools),
        position=len(messages),
    )


class NextCall(Exception):
    """Raised by `Replay.call` for the first call that has no recorded result yet."""

    def __init__(self, function: str, arguments: dict[str, Any]) -> None:
        super().__init__(function)
        self.function = function
        self.arguments = arguments


@dataclass
class Replay:
    """Feeds recorded tool results back to a policy procedure, in order."""

    results: Sequence[ToolResult]
    cursor: int = 0

    def call(self, function: str, **arguments: Any) -> ToolResult:
        """The recorded result of this call, or `NextCall` when it has not been made yet."""
        if self.cursor < len(self.results):
            result = self.results[self.cursor]
            self.cursor += 1
            if result.function != function:
                return ToolResult(function, arguments, "", "conversation out of step")
            return result
        raise NextCall(function, arguments)


@dataclass(frozen=True, slots=True)
class Turn:
    """This turn's answer: text, and a tool call unless the episode is over."""

    text: str
    function: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)


def seeded_rng(seed: int | None, *parts: object) -> random.Random:
    """A generator seeded by the episode seed and `parts` (e.g. agent, purpose, position)."""
    return random.Random(derive_seed(seed, *parts))


def _tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def build_output(
    model: str, turn: Turn, messages: Sequence[ChatMessage], tools: Sequence[ToolInfo]
) -> ModelOutput:
    """A ModelOutput for `turn`, with plausible token usage (never left unset)."""
    calls = None
    out_text = turn.text
    if turn.function is not None:
        call_id = f"call_{len(messages)}_{turn.function}"
        calls = [ToolCall(id=call_id, function=turn.function, arguments=dict(turn.arguments))]
        out_text += json.dumps(turn.arguments, sort_keys=True) + turn.function
    message = ChatMessageAssistant(
        content=turn.text, tool_calls=calls, model=model, source="generate"
    )
    schema = sum(
        len(t.name) + len(t.description) + 60 * len(t.parameters.properties) for t in tools
    )
    input_tokens = sum(_tokens(m.text) + 4 for m in messages) + _tokens("x" * schema)
    output_tokens = _tokens(out_text) + 3
    return ModelOutput(
        model=model,
        choices=[
            ChatCompletionChoice(message=message, stop_reason="tool_calls" if calls else "stop")
        ],
        usage=ModelUsage(
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            total_tokens=input_tokens + output_tokens,
        ),
    )
