"""Inspect tasks written without evalsuite in mind, for the foreign-task tests.

None of them takes a ``dataset`` argument or calls evalsuite's seeding: they read their own
dataset (a JSONL file beside this module, through inspect's ``json_dataset``), generate with a
plain ``generate()`` and score with their own scorer. The ``fakeecho`` model answers with the
generation settings it was called with, which the scorer keeps in ``Score.metadata`` (stored
as the attempt's checks), so a test can see what reached the model.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample, hf_dataset, json_dataset
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.scorer import CORRECT, INCORRECT, Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import TaskState, generate
from inspect_ai.tool import ToolInfo
from inspect_ai.util import sandbox

from tests.run.fake_models import FakeAPI

DATA = Path(__file__).parent / "foreign_data" / "triage.jsonl"
_SETTINGS = re.compile(r"(\w+)=(\S+)")


class _Echo(FakeAPI):
    """Answers ``yes`` plus the settings it got: ``seed=.. temperature=.. max_tokens=..``."""

    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        text = (
            f"yes seed={config.seed} temperature={config.temperature} "
            f"max_tokens={config.max_tokens} messages={len(input)}"
        )
        return ModelOutput.from_content(model="echo", content=text)


@modelapi(name="fakeecho")
def fakeecho() -> type[ModelAPI]:
    return _Echo


def _number(text: str) -> int | float | None:
    """``None``, an int (seeds are 64-bit: a float would round them) or a float."""
    if text == "None":
        return None
    try:
        return int(text)
    except ValueError:
        return float(text)


@scorer(metrics=[accuracy()])
def says_target() -> Scorer:
    """C when the answer starts with the target; keeps the settings the model reported."""

    async def score(state: TaskState, target: Target) -> Score:
        completion = state.output.completion
        settings: dict[str, Any] = {}
        for key, value in _SETTINGS.findall(completion):
            settings[key] = _number(value)
        ready = ""
        if state.metadata.get("check_setup"):
            ready = (await sandbox().exec(["cat", "ready.txt"])).stdout.strip()
        return Score(
            value=CORRECT if completion.startswith(target.text) else INCORRECT,
            metadata={**settings, "ready": ready},
        )

    return score


@task
def triage(queue: str | None = None, sandbox_type: str = "local") -> Task:
    """A team's own task: its JSONL dataset, a plain generate(), its own scorer."""
    dataset = json_dataset(str(DATA))
    if queue is not None:
        dataset = dataset.filter(lambda s: (s.metadata or {}).get("queue") == queue)
    return Task(
        dataset=dataset,
        solver=generate(),
        scorer=says_target(),
        sandbox=sandbox_type,
        message_limit=7,
    )


@task
def from_the_hub() -> Task:
    """A task whose dataset is downloaded from the Hugging Face Hub when it is built."""
    return Task(
        dataset=hf_dataset("evalsuite-tests/not-on-this-machine", split="test", revision="0" * 40),
        solver=generate(),
        scorer=says_target(),
    )


def _broken_sample(kind: str) -> Sample:
    if kind == "missing_file":
        return Sample(id="b-1", input="q", target="yes", files={"data.csv": "inputs/data.csv"})
    if kind == "url":
        return Sample(id="b-1", input="q", target="yes", files={"a.txt": "https://example.org/a"})
    if kind == "no_id":
        return Sample(input="q", target="yes")
    return Sample(id="b-1", input="q", target="yes", metadata={"when": object()})


@task
def broken(kind: str) -> Task:
    """A task one of whose samples cannot be frozen (`kind` says how)."""
    good = [Sample(id=f"g-{i}", input=f"q{i}", target="yes") for i in range(3)]
    return Task(
        dataset=MemoryDataset([*good, _broken_sample(kind)]),
        solver=generate(),
        scorer=says_target(),
    )
