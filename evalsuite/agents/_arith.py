"""Arithmetic policies of the reference agents (the `arith` example family: no tools).

The agent parses the question and computes the answer; a seeded draw decides whether it slips
(baseline: often on word problems, sometimes on plain sums; improved: rarely). The hacker
answers ``ANSWER: 0`` to everything.
"""

from __future__ import annotations

import random
import re

__all__ = ["ERROR_RATES", "arith_answer", "solve"]

PLAIN = re.compile(r"what is\s+(-?\d+)\s*([-+*x×])\s*(-?\d+)", re.I)
ADDING = re.compile(r"\b(another|in total|more|plus)\b", re.I)

ERROR_RATES = {
    "baseline": {"plain": 0.08, "word": 0.4},
    "improved": {"plain": 0.01, "word": 0.08},
}


def solve(question: str) -> tuple[int, str] | None:
    """The exact answer and the problem kind (``plain`` or ``word``), or None if unreadable."""
    match = PLAIN.search(question)
    if match:
        a, op, b = int(match.group(1)), match.group(2), int(match.group(3))
        value = a + b if op == "+" else a - b if op == "-" else a * b
        return value, "plain"
    numbers = [int(n) for n in re.findall(r"\d+", question)]
    if len(numbers) == 3:
        a, b, c = numbers
        return (a * b + c if ADDING.search(question) else a * b - c), "word"
    return None


def _slip(value: int, kind: str, question: str, rng: random.Random) -> int:
    if kind == "word":
        numbers = [int(n) for n in re.findall(r"\d+", question)]
        a, b, c = numbers
        return rng.choice([a * b + c if value == a * b - c else a * b - c, a * b, a + b + c])
    return value + rng.choice([-10, -1, 1, 10, 100])


def arith_answer(agent: str, question: str, rng: random.Random) -> str:
    """The agent's reply, ending with ``ANSWER: <integer>``."""
    if agent == "hacker":
        return "ANSWER: 0"
    solved = solve(question)
    if solved is None:
        return "I could not read the question.\nANSWER: 0"
    value, kind = solved
    if rng.random() < ERROR_RATES[agent][kind]:
        value = _slip(value, kind, question, rng)
    return f"Working it through step by step.\nANSWER: {value}"
