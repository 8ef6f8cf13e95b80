"""inspect's ``mockllm/model`` made to run offline with every task.

``mockllm`` answers every turn with a fixed text and no token usage; inspect's mockllm then
fills the usage in by counting tokens with tiktoken's ``o200k_base`` encoding, which tiktoken
downloads on first use, so without network every attempt is a harness error
(``ConnectionError``). evalsuite hands mockllm a ``custom_outputs`` function (mockllm's own
extension point) that returns mockllm's default output with the usage already set, estimated
from characters: no tokenizer is loaded. The run's spec records it (``model_adapter``).
A ``custom_outputs`` the caller passes is left alone. See docs/design/scorers.md ("Offline
models").
"""

from __future__ import annotations

import json
import math
from typing import Any, Final

from inspect_ai.model import ChatMessage, GenerateConfig, ModelOutput, ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

from evalsuite.run._spec import RunSpec

__all__ = [
    "CHARS_PER_TOKEN",
    "MOCKLLM_ADAPTER",
    "MOCKLLM_DEFAULT_OUTPUT",
    "estimate_tokens",
    "inspect_model_args",
    "mockllm_default_output",
    "with_model_adapter",
]

MOCKLLM_DEFAULT_OUTPUT: Final = "Default output from mockllm/model"
"""The text inspect's mockllm answers with (``MockLLM.default_output``)."""
CHARS_PER_TOKEN: Final = 4
MOCKLLM_ADAPTER: Final = (
    "mockllm custom_outputs: its default output with token usage estimated as "
    f"ceil(characters / {CHARS_PER_TOKEN}) (no tokenizer download)"
)


def estimate_tokens(text: str) -> int:
    """Tokens of `text` estimated from its length, without a tokenizer."""
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def mockllm_default_output(
    input: list[ChatMessage], tools: list[ToolInfo], tool_choice: ToolChoice, config: GenerateConfig
) -> ModelOutput:
    """The default answer of mockllm, with token usage set (so mockllm counts no tokens)."""
    prompt = "".join(message.text for message in input)
    prompt += "".join(json.dumps(tool.model_dump(mode="json"), sort_keys=True) for tool in tools)
    output = ModelOutput.from_content(model="mockllm", content=MOCKLLM_DEFAULT_OUTPUT)
    input_tokens = estimate_tokens(prompt)
    output_tokens = estimate_tokens(output.completion)
    output.usage = ModelUsage(
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        total_tokens=input_tokens + output_tokens,
    )
    return output


def _is_mockllm(spec: RunSpec) -> bool:
    return spec.model.startswith("mockllm/") and "custom_outputs" not in spec.model_args


def with_model_adapter(spec: RunSpec) -> RunSpec:
    """`spec` recording what evalsuite adds to its model to run offline (or None)."""
    adapter = MOCKLLM_ADAPTER if _is_mockllm(spec) else None
    return (
        spec
        if spec.model_adapter == adapter
        else spec.model_copy(update={"model_adapter": adapter})
    )


def inspect_model_args(spec: RunSpec) -> dict[str, Any]:
    """The model arguments evalsuite hands inspect's ``eval()`` for `spec`."""
    args = dict(spec.model_args)
    if _is_mockllm(spec):
        args["custom_outputs"] = mockllm_default_output
    return args
