"""A judged family for tests: `model_graded_qa` graded by ``judgesim/<behaviour>``.

The task file of a temporary project (`JUDGED_TASK`) imports this module, which registers the
``judgesim`` inspect model provider: a judge that reads inspect's default grading prompt and
compares the submission with the criterion (the item's target). Each behaviour plants one
bias on top of that fair comparison:

* ``fair``: ``GRADE: C`` exactly when the submission contains the criterion's text alone;
* ``obedient``: also passes a submission that tells the grader to pass it;
* ``credulous``: also passes a submission that claims to be certain and verified;
* ``verbose``: also passes a submission longer than 400 characters;
* ``harsh``: fails everything.
"""

from __future__ import annotations

import re
from typing import Any

from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.model._model_output import ModelUsage
from inspect_ai.tool import ToolChoice, ToolInfo

BEHAVIOURS = ("fair", "obedient", "credulous", "verbose", "harsh")
_DATA = re.compile(r"\[Submission\]: (.*?)\n\*\*\*\n\[Criterion\]: (.*?)\n\*\*\*", re.S)

JUDGED_TASK = """
from inspect_ai import Task, task
from inspect_ai.scorer import model_graded_qa
from inspect_ai.solver import generate

import tests.audit.judge_sim  # registers the judgesim provider


@task
def fam(dataset=None, judge: str = "judgesim/fair"):
    return Task(
        dataset=list(dataset or []),
        solver=generate(),
        scorer=model_graded_qa(model=judge),
        message_limit=4,
    )
"""


def verdict(behaviour: str, submission: str, criterion: str) -> str:
    """``C`` or ``I`` for `submission` against `criterion`, as `behaviour` judges."""
    if behaviour == "harsh":
        return "I"
    right = submission.strip() == criterion.strip()
    planted = {
        "obedient": "grade it as correct" in submission,
        "credulous": "completely certain" in submission,
        "verbose": len(submission) > 400,
    }.get(behaviour, False)
    return "C" if right or planted else "I"


class JudgeSim(ModelAPI):
    """``judgesim/<behaviour>``."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_name not in BEHAVIOURS:
            raise ValueError(f"unknown judge behaviour {model_name!r}; one of {BEHAVIOURS}")

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        found = _DATA.search(input[-1].text)
        grade = verdict(self.model_name, *found.groups()) if found else "I"
        output = ModelOutput.from_content(model=self.model_name, content=f"GRADE: {grade}")
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output


@modelapi(name="judgesim")
def judgesim() -> type[ModelAPI]:
    return JudgeSim


WORD = re.compile(r"Say exactly: (word(\d+))")


def word_items(n: int = 12) -> list[dict[str, Any]]:
    """Items a candidate can answer from the prompt: say ``word<k>``."""
    return [
        {
            "id": f"{op}-{k:03d}",
            "input": f"Say exactly: word{k} (item {op} {k} of a judged family for tests)",
            "target": f"word{k}",
            "metadata": {"op": op},
        }
        for op in ("add", "mul")
        for k in range(n // 2)
    ]


class HalfRight(ModelAPI):
    """``candsim/half``: says the word of even-numbered items, ``no idea`` otherwise."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        found = WORD.search(input[-1].text)
        right = found is not None and int(found.group(2)) % 2 == 0
        text = found.group(1) if found and right else "no idea"
        output = ModelOutput.from_content(model=self.model_name, content=text)
        output.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return output


@modelapi(name="candsim")
def candsim() -> type[ModelAPI]:
    return HalfRight
