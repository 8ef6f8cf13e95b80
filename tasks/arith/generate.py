"""Seeded generator of the arith example items (run once before the first freeze).

    python tasks/arith/generate.py > tasks/arith/items.jsonl

After `evalsuite freeze`, items.jsonl holds only the dev items; the holdout half lives in
holdout/arith/<version>.vault. Regenerating would recreate the holdout's text: this example
suite protects its holdout against crawlers only (see the README's threat model).
"""

from __future__ import annotations

import json
import random
import sys

CANARY = "evalsuite-canary arith 3b0f4c52-6a1e-4d8e-9c47-1f2a8e7d5b90"
SEED = 20261130
PER_OP = 30

WORD_TEMPLATES = [
    (
        "A warehouse stores {a} crates holding {b} bottles each. After {c} bottles are "
        "shipped to a customer, how many bottles are left in the warehouse?",
        lambda a, b, c: a * b - c,
    ),
    (
        "A school orders {a} boxes of pencils with {b} pencils in every box, then gives "
        "{c} pencils to the art club. How many pencils does the school keep?",
        lambda a, b, c: a * b - c,
    ),
    (
        "A cyclist rides {a} laps of a track that is {b} metres long and then rides another "
        "{c} metres home. How many metres does the cyclist ride in total?",
        lambda a, b, c: a * b + c,
    ),
    (
        "A bakery bakes {a} trays of rolls with {b} rolls on each tray and sells all but "
        "{c} of them by noon. How many rolls are sold by noon?",
        lambda a, b, c: a * b - c,
    ),
]


def _item(rng: random.Random, op: str, index: int) -> dict[str, object]:
    if op == "add":
        a, b = rng.randint(100, 999), rng.randint(100, 999)
        question, answer = f"What is {a} + {b}?", a + b
    elif op == "sub":
        a, b = rng.randint(500, 1999), rng.randint(10, 499)
        question, answer = f"What is {a} - {b}?", a - b
    elif op == "mul":
        a, b = rng.randint(12, 99), rng.randint(12, 99)
        question, answer = f"What is {a} * {b}?", a * b
    else:
        template, solve = WORD_TEMPLATES[index % len(WORD_TEMPLATES)]
        a, b = rng.randint(3, 40), rng.randint(6, 60)
        c = rng.randint(1, a * b - 1)
        question, answer = template.format(a=a, b=b, c=c), solve(a, b, c)
    return {
        "id": f"arith-{op}-{index:03d}",
        "input": question,
        "target": str(answer),
        "metadata": {"op": op},
        "canary": CANARY,
    }


def main() -> None:
    rng = random.Random(SEED)
    for op in ("add", "sub", "mul", "word"):
        for index in range(PER_OP):
            sys.stdout.write(json.dumps(_item(rng, op, index), sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
