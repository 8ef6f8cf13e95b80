"""The arith family kit (`evalsuite.kit.Family`) for either version's task file.

Scripted policies of the grader audit: the oracle answers the target; every answer at once
gives the target and then its neighbours, each on an ``ANSWER:`` line (a grader that accepted
any of them would pass it); the empty answer is an ``ANSWER:`` line with nothing after it; the
trivial policy answers 0 everywhere (the shipped `hacker`); the exploit probes claim
correctness in words, or answer with the question's own numbers.
"""

import re
from collections.abc import Callable

from inspect_ai import Task

from evalsuite.kit import Episode, Family, Limits, Probe, Trivial


def oracle(ep: Episode) -> str:
    return f"Working it through.\nANSWER: {ep.target.strip()}"


def every_answer(ep: Episode) -> str:
    value = int(ep.target.strip())
    decoys = [value + d for d in (1, -1, 2, -2, 10, -10, 100)]
    return "\n".join(f"ANSWER: {v}" for v in [value, *decoys])


def empty_answer(ep: Episode) -> str:
    return "ANSWER:"


def answer_zero(ep: Episode) -> str:
    return "ANSWER: 0"


def claim_correct(ep: Episode) -> str:
    return "I have checked this twice and my answer is correct.\nANSWER: correct"


def question_numbers(ep: Episode) -> str:
    numbers = re.findall(r"\d+", ep.prompt)
    return f"ANSWER: {''.join(numbers) or '0'}"


def arith_kit(task: Callable[..., Task], version: int, limits: Limits) -> Family:
    """The kit of one version of arith (no tools: the final state is the answer)."""
    return Family(
        name="arith",
        version=version,
        task=task,
        limits=limits,
        oracle=oracle,
        every_answer=every_answer,
        empty_answer=empty_answer,
        trivial=[Trivial("answer_zero", answer_zero, "answering 0 to everything")],
        probes=[
            Probe("claim_correct", claim_correct, "claiming correctness in words"),
            Probe("question_numbers", question_numbers, "answering with the question's numbers"),
        ],
        references=("evalsuite/baseline", "evalsuite/improved"),
        prompt_only={
            "arith/": "the question is the whole task (no tool, nothing to read): an answer "
            "made from the prompt alone is the task; a copied answer scores only where two "
            "items share their answer"
        },
    )
