"""Arithmetic and multi-step word problems (evalsuite example family, version 1).

The model answers in free text ending with ``ANSWER: <integer>``; the verifier parses the
last such line and compares it with the target exactly. No partial credit.
History of this family's version: tasks/README.md.
"""

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from inspect_ai import Task, task
from inspect_ai.dataset import Sample
from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import Generate, Solver, TaskState, solver, system_message

from evalsuite.kit import Limits
from evalsuite.run import episode_seed, standalone_samples

SYSTEM_PROMPT = (
    "Solve the problem. Show your working if you like, and finish with a final line of the "
    "form 'ANSWER: <integer>'."
)
ANSWER = re.compile(r"ANSWER:\s*(-?\d+)\s*$", re.MULTILINE)


@solver
def seeded_generate() -> Solver:
    """One generation with the episode's own seed."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="none", seed=episode_seed(state))

    return solve


@scorer(metrics=[accuracy(), stderr()])
def final_answer() -> Scorer:
    """1.0 when the last 'ANSWER: n' line equals the target, else 0.0 (with the reason)."""

    async def score(state: TaskState, target: Target) -> Score:
        found = ANSWER.findall(state.output.completion or "")
        if not found:
            return Score(value=0.0, answer=None, explanation="no 'ANSWER: <integer>' line")
        answer = found[-1]
        correct = answer == target.text.strip()
        return Score(
            value=1.0 if correct else 0.0,
            answer=answer,
            explanation="exact match" if correct else "wrong answer",
        )

    return score


@task
def arith(dataset: Sequence[Sample] | None = None) -> Task:
    """The arith family; `dataset` is given by the evalsuite runner (default: dev items)."""
    samples = (
        list(dataset)
        if dataset is not None
        else standalone_samples(Path(__file__).parent / "items.jsonl")
    )
    return Task(
        dataset=samples,
        solver=[system_message(SYSTEM_PROMPT), seeded_generate()],
        scorer=final_answer(),
        version=1,
    )


# ---- family kit ---------------------------------------------------------------------------------
# Added for the grader audit (issue 13). Version 1's task above is unchanged: the kit declares
# it with the limits the family should run under, so that `evalsuite audit arith@1.0.0
# --graders` can tell the truth about this version (its task applies none of them).
def _kit_module() -> Any:
    import hashlib
    import importlib.util
    import sys

    here = Path(__file__).resolve().parent
    key = "_evalsuite_arith_kit_" + hashlib.sha256(str(here).encode()).hexdigest()[:12]
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, here / "kit.py")
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load {here / 'kit.py'}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


FAMILY = _kit_module().arith_kit(arith, 1, Limits(time_s=120, messages=10, tokens=20_000))
