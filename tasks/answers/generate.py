"""Seeded generator of the answers example items (run once before the first freeze).

    python tasks/answers/generate.py > tasks/answers/items.jsonl

Short-answer problems whose answer a rubric judge grades (`[families.judge]` in
tasks/answers.toml). After `evalsuite freeze`, items.jsonl holds only the dev items; the
holdout half lives in holdout/answers/<version>.vault. Like arith, this example suite's key
is derived from its public canary: it keeps crawlers out, not a determined reader.
"""

from __future__ import annotations

import json
import random
import sys

CANARY = "evalsuite-canary answers 7c1d9e20-4b8a-4f3e-a5d6-2e9b0c4f8a13"
SEED = 20261206
PER_OP = 24

WORD_TEMPLATES = [
    (
        "An orchard has {a} rows of {b} apple trees. A storm fells {c} of the trees. How many "
        "apple trees are still standing?",
        lambda a, b, c: a * b - c,
    ),
    (
        "A library buys {a} shelves that hold {b} books each, then receives {c} more books "
        "as gifts. How many books does it have in total?",
        lambda a, b, c: a * b + c,
    ),
    (
        "A ferry makes {a} crossings with {b} passengers on each, and {c} of those passengers "
        "had return tickets. How many passengers travelled one way only?",
        lambda a, b, c: a * b - c,
    ),
    (
        "A printer prints {a} pages a minute for {b} minutes and then another {c} pages. How "
        "many pages does it print in total?",
        lambda a, b, c: a * b + c,
    ),
]


def _item(rng: random.Random, op: str, index: int) -> dict[str, object]:
    if op == "mul":
        a, b = rng.randint(102, 999), rng.randint(12, 99)
        question, answer = f"What is {a} * {b}?", a * b
    else:
        template, solve = WORD_TEMPLATES[index % len(WORD_TEMPLATES)]
        a, b = rng.randint(4, 60), rng.randint(7, 80)
        c = rng.randint(1, a * b - 1)
        question, answer = template.format(a=a, b=b, c=c), solve(a, b, c)
    return {
        "id": f"answers-{op}-{index:03d}",
        "input": question,
        "target": str(answer),
        "metadata": {"op": op},
        "canary": CANARY,
    }


def main() -> None:
    rng = random.Random(SEED)
    for op in ("mul", "word"):
        for index in range(PER_OP):
            sys.stdout.write(json.dumps(_item(rng, op, index), sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
