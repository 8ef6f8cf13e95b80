"""Scripted policies: deterministic procedures over an episode, replayed turn by turn.

A policy is a function ``(episode) -> str``: it calls tools with ``episode.call(name,
**arguments)`` and returns the final answer. The audit's model (``evalsuite/audit``) runs the
procedure again on every turn: calls already answered return their recorded results, and the
first call without a result becomes this turn's tool call (`NextCall`). So a policy is plain
Python, reads like a solution, and still goes through the real task, tools, limits and grader.

Policies see what the audit gives them (`Episode`): the prompt, the tool results so far, the
tool names, and the item (target and metadata), because an oracle needs the answer key and a
probe may aim at it. They are the audit's instruments, never an agent under evaluation.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

__all__ = [
    "Episode",
    "NextCall",
    "Policy",
    "ToolResult",
    "empty_answer",
    "null_policy",
    "redacted",
]


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call of the episode and what came back."""

    function: str
    arguments: Mapping[str, Any]
    text: str
    error: str | None = None
    """The tool's error message (a `ToolError`, a bad argument), or None."""

    @property
    def ok(self) -> bool:
        """True when the call returned without an error."""
        return self.error is None

    def parsed(self) -> Any:
        """The result parsed as JSON (None when it is an error or not JSON)."""
        if self.error is not None:
            return None
        try:
            return json.loads(self.text)
        except json.JSONDecodeError:
            return None


class NextCall(Exception):
    """Raised by `Episode.call` for the first call that has no recorded result yet."""

    def __init__(self, function: str, arguments: Mapping[str, Any]) -> None:
        super().__init__(function)
        self.function = function
        self.arguments = dict(arguments)


@dataclass
class Episode:
    """What a policy reads, and its way to call tools (replayed from the conversation)."""

    item_id: str
    epoch: int
    seed: int
    prompt: str
    """The first user message (the item's input as the agent sees it)."""
    target: str
    """The item's target, as text (the oracle's answer key)."""
    metadata: Mapping[str, Any]
    """The item's metadata (evalsuite's own keys removed)."""
    tools: frozenset[str]
    """Names of the tools this episode offers."""
    results: Sequence[ToolResult] = ()
    """Tool calls already made, in order, with their results."""
    _cursor: int = field(default=0, repr=False)

    def call(self, function: str, /, **arguments: Any) -> ToolResult:
        """The recorded result of this call, or `NextCall` when it has not been made yet.

        A recorded call of another tool at this position means the policy is not
        deterministic: its result is an error the policy sees ("conversation out of step").
        """
        if self._cursor < len(self.results):
            result = self.results[self._cursor]
            self._cursor += 1
            if result.function != function:
                return ToolResult(function, arguments, "", "conversation out of step")
            return result
        raise NextCall(function, arguments)

    def target_json(self) -> Any:
        """The target parsed as JSON (a family whose targets are JSON objects)."""
        return json.loads(self.target)


Policy = Callable[[Episode], str]
"""A scripted policy: calls tools through the episode, returns the final answer."""


def null_policy(episode: Episode) -> str:
    """Do nothing: no tool call and no answer (the audit's null policy)."""
    return ""


def empty_answer(episode: Episode) -> str:
    """The empty answer (default for every family; a family with a format overrides it)."""
    return ""


def redacted(episode: Episode) -> Episode:
    """The episode as a cheap policy may see it: the prompt, the tools and the tool results.

    The target is ``""`` and the metadata ``{}``: red-team policies (the audit's generated ones
    and a team's own, `evalsuite.kit.RedTeam`) play what any agent sees, never the answer key.
    The copy replays the same calls from its own start.
    """
    return replace(episode, target="", metadata={}, _cursor=0)
