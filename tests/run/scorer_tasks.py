"""Toy task families for scorer tests: each scorer returns what the item's metadata says.

Copied into a throwaway project by `tests/run/test_scorers.py` (as ``tasks/toy/task.py``);
the scores do not depend on the model, so the expected means are known from the items.
"""

from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, mean, scorer, stderr
from inspect_ai.solver import TaskState, generate


@scorer(metrics={"utility": [accuracy(), stderr()], "security": [accuracy(), stderr()]})
def dual() -> Scorer:
    """A dict-valued scorer, like inspect_evals' agent_threat_bench: utility and security."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value={"utility": state.metadata["u"], "security": state.metadata["s"]})

    return score


@scorer(metrics=[mean()])
def match() -> Scorer:
    """The item's ``value`` as it is (a letter, a boolean or a number)."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["value"], metadata={"seen": True})

    return score


@scorer(metrics=[accuracy()])
def other() -> Scorer:
    """A second scorer: the item's ``other`` value."""

    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=state.metadata["other"])

    return score


def _task(dataset: Sequence[Sample] | None, scorers: list[Scorer]) -> Task:
    return Task(dataset=list(dataset or []), solver=generate(), scorer=scorers, message_limit=10)


@task
def dict_valued(dataset: Sequence[Sample] | None = None) -> Task:
    return _task(dataset, [dual()])


@task
def two_scorers(dataset: Sequence[Sample] | None = None) -> Task:
    return _task(dataset, [match(), other()])


@task
def single(dataset: Sequence[Sample] | None = None) -> Task:
    return _task(dataset, [match()])
