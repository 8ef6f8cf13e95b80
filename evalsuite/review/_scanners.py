"""The built-in transcript scanners, written as Inspect Scout scanners (docs/review.md).

Each is an ordinary `inspect_scout` scanner over a whole `Transcript` (messages and events),
so it runs wherever Scout runs (``scout scan``, `inspect_scout.scan`) and a team's own Scout
scanners run beside it unchanged. A scanner's result is ``True`` (with an explanation) when
the transcript shows its signature, else ``False``. The signatures:

- ``tool_errors``: the episode was ended by an error (inspect's sample error: a tool fault,
  a hang past the tool timeout, a provider error), or a tool call failed in a way the agent
  is not meant to handle (inspect's tool error types ``timeout``, ``permission``,
  ``sandbox_unavailable``, ``output_limit``, ``cancelled``, or a message naming a harness
  fault or a time-out). A `ToolError` the environment raises on purpose (order not found)
  is part of the episode and not flagged.
- ``empty_completion``: the final assistant turn has neither text nor a tool call, or the
  provider stopped it on ``max_tokens`` / ``model_length`` (truncated).
- ``repeated_tool_call``: one tool called with the same arguments `REPEAT_AT` or more times.
- ``limit_reached``: the episode ended on a limit (inspect's sample limit, or a limit event).
- ``unbacked_success_claim``: the final text claims the work is done, the grader scored the
  attempt a failure, and no call of a tool that changes state succeeded.
- ``refusal``: the final text refuses or declines the request.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any

from inspect_ai.event import SampleLimitEvent
from inspect_ai.model import ChatMessageTool
from inspect_scout import Result, Scanner, Transcript, llm_scanner, scanner

from evalsuite.review._taxonomy import Mode

__all__ = [
    "BUILTIN_SCANNERS",
    "REPEAT_AT",
    "builtin_scanners",
    "llm_mode_scanner",
    "signature",
]

REPEAT_AT = 3
"""Calls of one tool with the same arguments that make a loop."""

_HARNESS_TOOL_ERRORS = frozenset(
    {"timeout", "permission", "sandbox_unavailable", "output_limit", "cancelled"}
)
_FAULT_TEXT = re.compile(r"harness ?fault|timed out|time ?out|injected fault", re.IGNORECASE)
_TRUNCATED = frozenset({"max_tokens", "model_length"})
_SUCCESS = re.compile(
    r"\b(?:(?:i|we)(?: have|'ve)? (?:now )?(?:fixed|resolved|completed|processed|issued|"
    r"refunded|updated|merged|applied|made the change|done)|(?:has|have) been (?:fixed|"
    r"resolved|completed|processed|issued|refunded|updated|merged|applied)|successfully|"
    r"all done|task (?:is )?(?:complete|done))\b",
    re.IGNORECASE,
)
_WRITE_VERB = re.compile(
    r"^(?:set|update|create|issue|refund|merge|write|edit|apply|send|reply|cancel|delete|"
    r"add|change|patch|replace|close|escalate|exchange|submit|save)",
    re.IGNORECASE,
)
_REFUSAL = re.compile(
    r"\b(?:i (?:can(?:no|')t|am (?:not able|unable)|'m (?:not able|unable)|won't|will not|"
    r"must decline)(?: help| assist| do| comply| provide| process| complete)?|i'm sorry, but i|"
    r"unable to (?:help|assist|comply)|as an ai)\b",
    re.IGNORECASE,
)


def _last_assistant(transcript: Transcript) -> Any:
    for message in reversed(transcript.messages):
        if message.role == "assistant":
            return message
    return None


def _tool_events(transcript: Transcript) -> list[Any]:
    return [e for e in transcript.events if getattr(e, "event", None) == "tool"]


def _tool_errors(transcript: Transcript) -> str | None:
    if transcript.error:
        return f"the episode ended on an error: {transcript.error.splitlines()[0][:300]}"
    for event in _tool_events(transcript):
        error = getattr(event, "error", None)
        if error is None:
            continue
        if error.type in _HARNESS_TOOL_ERRORS or _FAULT_TEXT.search(error.message or ""):
            return f"tool {event.function!r} failed ({error.type}): {error.message[:300]}"
    for message in transcript.messages:
        error = message.error if isinstance(message, ChatMessageTool) else None
        if (
            isinstance(message, ChatMessageTool)
            and error is not None
            and (error.type in _HARNESS_TOOL_ERRORS or _FAULT_TEXT.search(error.message or ""))
        ):
            return f"tool {message.function!r} failed ({error.type}): {error.message[:300]}"
    return None


def _empty_completion(transcript: Transcript) -> str | None:
    last = _last_assistant(transcript)
    if last is None:
        return "the model never answered (no assistant turn)" if not transcript.error else None
    stop = _stop_reason(transcript)
    if stop in _TRUNCATED:
        return f"the final completion was cut off by the provider (stop reason {stop})"
    if not (last.text or "").strip() and not last.tool_calls and not transcript.error:
        return "the final assistant turn is empty (no text, no tool call)"
    return None


def _stop_reason(transcript: Transcript) -> str | None:
    for event in reversed(transcript.events):
        if getattr(event, "event", None) == "model":
            output = getattr(event, "output", None)
            choices = getattr(output, "choices", None) or []
            return str(choices[0].stop_reason) if choices else None
    return None


def _call_key(function: str, arguments: Mapping[str, Any]) -> str:
    return function + json.dumps(arguments, sort_keys=True, default=str)


def _repeated_tool_call(transcript: Transcript) -> str | None:
    calls: Counter[str] = Counter()
    names: dict[str, str] = {}
    for message in transcript.messages:
        if message.role != "assistant":
            continue
        for call in message.tool_calls or []:
            key = _call_key(call.function, call.arguments)
            calls[key] += 1
            names[key] = call.function
    if not calls:
        return None
    key, count = calls.most_common(1)[0]
    if count < REPEAT_AT:
        return None
    return f"tool {names[key]!r} called {count} times with the same arguments"


def _limit_reached(transcript: Transcript) -> str | None:
    if transcript.limit:
        return f"the episode ended on a {transcript.limit} limit"
    for event in transcript.events:
        if isinstance(event, SampleLimitEvent):
            return f"the episode ended on a {event.type} limit: {event.message[:200]}"
    return None


def _failed(transcript: Transcript) -> bool:
    if transcript.success is not None:
        return not transcript.success
    score = transcript.score
    if isinstance(score, int | float) and not isinstance(score, bool):
        return float(score) < 1.0
    return score in ("I", "N", False, "no")


def _unbacked_success_claim(transcript: Transcript) -> str | None:
    last = _last_assistant(transcript)
    text = (last.text or "") if last is not None else ""
    claim = _SUCCESS.search(text)
    if claim is None or not _failed(transcript):
        return None
    for event in _tool_events(transcript):
        if _WRITE_VERB.match(event.function) and getattr(event, "error", None) is None:
            return None
    return (
        f"the final text claims success ({claim.group(0)!r}) but no state-changing call succeeded"
    )


def _refusal(transcript: Transcript) -> str | None:
    last = _last_assistant(transcript)
    text = (last.text or "") if last is not None else ""
    found = _REFUSAL.search(text)
    return f"the final text refuses: {found.group(0)!r}" if found else None


SIGNATURES: dict[str, Callable[[Transcript], str | None]] = {
    "tool_errors": _tool_errors,
    "empty_completion": _empty_completion,
    "repeated_tool_call": _repeated_tool_call,
    "limit_reached": _limit_reached,
    "unbacked_success_claim": _unbacked_success_claim,
    "refusal": _refusal,
}
"""Each built-in scanner's test: the reason it flags a transcript, or None."""

BUILTIN_SCANNERS = tuple(SIGNATURES)
"""The names of the built-in scanners."""


def signature(name: str, transcript: Transcript) -> str | None:
    """Why built-in scanner `name` flags `transcript`, or None (the test without Scout)."""
    return SIGNATURES[name](transcript)


def _scout_scanner(name: str) -> Scanner[Transcript]:
    test = SIGNATURES[name]

    @scanner(name=name, messages="all", events="all")
    def factory() -> Scanner[Transcript]:
        async def scan(transcript: Transcript) -> Result:
            reason = test(transcript)
            return Result(value=reason is not None, explanation=reason or "")

        return scan

    return factory()


def builtin_scanners(names: tuple[str, ...] | None = None) -> dict[str, Scanner[Transcript]]:
    """The built-in Scout scanners by name (all, or those in `names`)."""
    return {name: _scout_scanner(name) for name in names or BUILTIN_SCANNERS}


def llm_mode_scanner(mode: Mode, model: str) -> Scanner[Transcript]:
    """A Scout LLM scanner asking `model` whether a transcript shows failure mode `mode`.

    Any inspect model works (``openai/gpt-4o``, ``mockllm/model`` offline); its answer is a
    yes/no, recorded as the scanner ``llm_<mode name>``.
    """
    question = (
        f"Does this transcript show the following failure? {mode.name}: {mode.definition} "
        "Answer yes only if the transcript clearly shows it."
    )
    return llm_scanner(question=question, answer="boolean", model=model, name=f"llm_{mode.name}")
