"""Test-only inspect model providers (registered when this module is imported)."""

from __future__ import annotations

import random
import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
    modelapi,
)
from inspect_ai.tool import ToolChoice, ToolInfo

_NUMBERS = re.compile(r"-?\d+")


def _solve(text: str) -> int:
    numbers = [int(n) for n in _NUMBERS.findall(text)]
    if "+" in text:
        return numbers[0] + numbers[1]
    if " - " in text:
        return numbers[0] - numbers[1]
    if "*" in text:
        return numbers[0] * numbers[1]
    return 0


class _Arith(ModelAPI):
    """Answers arith questions; `accuracy` sets how often (seeded by config.seed)."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.accuracy = float(model_args.get("accuracy", 1.0))
        self.fail = str(model_args.get("fail", ""))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        question = input[-1].text
        if self.fail and self.fail in question:
            raise RuntimeError(f"provider failed on: {question}")
        rng = random.Random(config.seed)
        answer = _solve(question) if rng.random() < self.accuracy else -1
        output = ModelOutput.from_content(self.model_name, f"ANSWER: {answer}")
        output.usage = ModelUsage(input_tokens=20, output_tokens=5, total_tokens=25)
        return output


@modelapi(name="fakearith")
def fakearith() -> type[ModelAPI]:
    return _Arith


class _Agent(ModelAPI):
    """A scripted tool-calling agent for runner tests.

    Calls the first tool offered with the key found in the prompt, then answers with the
    tool's result (wrongly with probability 1 - accuracy, seeded by config.seed). `delay`
    sleeps before each answer; `loop` keeps calling the tool forever (limits).
    """

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        self.accuracy = float(model_args.get("accuracy", 1.0))
        self.delay = float(model_args.get("delay", 0.0))
        self.loop = bool(model_args.get("loop", False))

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        import asyncio

        from inspect_ai.model import ChatMessageAssistant, ChatMessageTool
        from inspect_ai.tool import ToolCall

        if self.delay:
            await asyncio.sleep(self.delay)
        results = [m for m in input if isinstance(m, ChatMessageTool)]
        prompt = next(m.text for m in input if m.role == "user")
        key = prompt.split()[-1].strip("?.")
        if tools and (not results or self.loop):
            call = ToolCall(
                id=f"call-{len(results)}", function=tools[0].name, arguments={"key": key}
            )
            message = ChatMessageAssistant(content="", tool_calls=[call], model=self.model_name)
            output = ModelOutput.for_tool_call(self.model_name, tools[0].name, {"key": key})
            output.choices[0].message = message
        else:
            value = results[-1].text if results else "?"
            rng = random.Random(config.seed)
            answer = value if rng.random() < self.accuracy else value + "-wrong"
            output = ModelOutput.from_content(self.model_name, f"ANSWER: {answer}")
        output.usage = ModelUsage(input_tokens=30, output_tokens=6, total_tokens=36)
        return output


@modelapi(name="fakeagent")
def fakeagent() -> type[ModelAPI]:
    return _Agent
