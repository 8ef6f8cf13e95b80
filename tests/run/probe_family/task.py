"""A tiny tool-using family for runner tests: look a key up, answer with its value."""

import re
from collections.abc import Sequence

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, ToolError, tool
from inspect_ai.util import store

from evalsuite.run import HarnessFault, episode_seed, guarded_call

ANSWER = re.compile(r"ANSWER:\s*(\S+)")


@tool
def lookup() -> Tool:
    async def execute(key: str) -> str:
        """Look up the value stored under a key.

        Args:
            key: The key to look up.
        """

        async def impl() -> str:
            table = store().get("table", {})
            if key not in table:
                raise ToolError(f"no key {key}")
            return str(table[key])

        return await guarded_call("lookup", impl)

    return execute


@solver
def reset() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        if store().get("table") is not None:
            raise HarnessFault("state leaked from an earlier episode")
        store().set("table", dict(state.metadata["table"]))
        return state

    return solve


@solver
def agent() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop", seed=episode_seed(state))

    return solve


@scorer(metrics=[accuracy()])
def exact() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        found = ANSWER.findall(state.output.completion or "")
        ok = bool(found) and found[-1] == target.text
        return Score(
            value=1.0 if ok else 0.0,
            explanation="exact" if ok else "wrong",
            metadata={"answered": bool(found), "correct": ok},
        )

    return score


@task
def probe(dataset: Sequence[Sample] | None = None) -> Task:
    return Task(
        dataset=list(dataset or []),
        setup=reset(),
        solver=[use_tools(lookup()), agent()],
        scorer=exact(),
        message_limit=20,
    )
