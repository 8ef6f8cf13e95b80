"""Test-only inspect model providers (registered when this module is imported)."""

from __future__ import annotations

import abc
import asyncio
import os
import random
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolCall, ToolChoice, ToolInfo

_NUMBERS = re.compile(r"-?\d+")


class FakeAPI(ModelAPI):
    """Base of the test providers: keeps `model_args`; every output reports token usage
    (without it inspect would try to download a tokenizer)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.args = model_args

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        output = await self.respond(input, tools, config)
        output.usage = ModelUsage(input_tokens=30, output_tokens=6, total_tokens=36)
        return output

    @abc.abstractmethod
    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        """The fake's answer (usage is added by `generate`)."""


def _solve(text: str) -> int:
    numbers = [int(n) for n in _NUMBERS.findall(text)]
    if "+" in text:
        return numbers[0] + numbers[1]
    if " - " in text:
        return numbers[0] - numbers[1]
    if "*" in text:
        return numbers[0] * numbers[1]
    return 0


class _Arith(FakeAPI):
    """Answers arith questions; `accuracy` sets how often (seeded by config.seed)."""

    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        question = input[-1].text
        fail = str(self.args.get("fail", ""))
        if fail and fail in question:
            raise RuntimeError(f"provider failed on: {question}")
        rng = random.Random(config.seed)
        correct = rng.random() < float(self.args.get("accuracy", 1.0))
        answer = _solve(question) if correct else -1
        return ModelOutput.from_content(self.model_name, f"ANSWER: {answer}")


_CALLS = [0]
"""Model calls answered so far in this process (for `hold_after`)."""


async def _hold(args: dict[str, Any]) -> None:
    """With ``hold_after=N`` and ``hold_until=PATH``: the process's calls after its N-th wait
    until PATH exists. A test that signals a run process waits for the attempts the first N
    calls complete and signals while the run is held: the signal lands mid-run every time,
    without a `delay` to make the run slow enough."""
    _CALLS[0] += 1
    gate = str(args.get("hold_until", ""))
    if gate and _CALLS[0] > int(args.get("hold_after", 0)):
        while not os.path.exists(gate):
            await asyncio.sleep(0.01)


class _Agent(FakeAPI):
    """A scripted tool-calling agent for runner tests.

    Calls the first tool offered with the key found in the prompt, then answers with the
    tool's result (wrongly with probability 1 - accuracy, seeded by config.seed). `delay`
    sleeps before each answer; `loop` keeps calling the tool forever (limits); `hold_after`
    and `hold_until` hold the process's later calls until a file exists (`_hold`).
    """

    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        await _hold(self.args)
        delay = float(self.args.get("delay", 0.0))
        if delay:
            await asyncio.sleep(delay)
        results = [m for m in input if isinstance(m, ChatMessageTool)]
        prompt = next(m.text for m in input if m.role == "user")
        key = prompt.split()[-1].strip("?.")
        if tools and (not results or bool(self.args.get("loop", False))):
            call = ToolCall(
                id=f"call-{len(results)}", function=tools[0].name, arguments={"key": key}
            )
            output = ModelOutput.for_tool_call(self.model_name, tools[0].name, {"key": key})
            output.choices[0].message = ChatMessageAssistant(
                content="", tool_calls=[call], model=self.model_name
            )
            return output
        value = results[-1].text if results else "?"
        rng = random.Random(config.seed)
        correct = rng.random() < float(self.args.get("accuracy", 1.0))
        answer = value if correct else value + "-wrong"
        return ModelOutput.from_content(self.model_name, f"ANSWER: {answer}")


@modelapi(name="fakearith")
def fakearith() -> type[ModelAPI]:
    return _Arith


@modelapi(name="fakeagent")
def fakeagent() -> type[ModelAPI]:
    return _Agent
