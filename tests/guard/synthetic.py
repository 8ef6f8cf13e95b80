"""Synthetic holdout-like items for the recall battery: nothing here is a shipped item.

Three templated kinds, as a curriculum would meet them: support tickets (shared greetings,
policy sentences and sign-offs around ticket ids, order numbers, e-mail addresses, amounts),
arithmetic word problems (13+ words, a shared frame around names and numbers) and bare sums
(4 words). `topic_similar` draws more of the same from another seed: clean text on the same
topics, sharing the templates' wording but no item.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tests.helpers import Project, make_project, suite_toml


def _key(text: str) -> str:
    """Letters and digits, case-folded: equal for copies that differ only in format (and the
    same under every version of the text spec, so older code can run this module too)."""
    return "".join(c for c in text.casefold() if c.isalnum())


FIRST = (
    "Anna Bilal Carmen Dmitri Elif Farah Goran Hana Ivo Jonas Kemal Lena Mateo Nadia Oskar "
    "Priya Quentin Rosa Samir Tove Umar Vera Wiktor Ximena Yusuf Zofia"
).split()
LAST = (
    "Alvarez Brandt Costa Duarte Eriksen Fischer Gallo Horvat Ivanova Jensen Kowalski Lindqvist "
    "Moreau Novak Okafor Petrov Quinn Rossi Schulz Tanaka Ueda Varga Weber Yilmaz Zhou"
).split()
PRODUCTS = (
    "wireless headphones",
    "espresso machine",
    "standing desk",
    "robot vacuum",
    "electric kettle",
    "hiking backpack",
    "smart thermostat",
    "office chair",
    "air purifier",
    "portable speaker",
    "laptop sleeve",
    "blender",
)
OTHER_FIRST = (
    "Aiko Bruno Chidi Dagny Emre Fiona Gustav Hiro Ines Jakob Kira Luca Mira Nils Olga Pavel "
    "Rhea Sven Talia Ulla Viktor Wen Xavier Yara Zeno"
).split()
OTHER_LAST = (
    "Abara Bianchi Carvalho Dahl Esposito Fontaine Grieg Halvorsen Iqbal Juarez Kim Laine "
    "Mendes Nakamura Ortega Pace Rahman Sato Toivonen Urban Vidal Walsh Young Zeller"
).split()
"""People of the topic-similar clean text: nobody who appears in an item."""
DOMAINS = ("example.com", "mail.example.org", "post.example.net", "inbox.example.io")
MONTHS = "January February March April May June July August September October".split()
GREETINGS = ("Hello support team,", "Hi there,", "Good morning,", "Dear customer service,")
POLICIES = (
    "I have read your returns policy and I understand that refunds are issued to the original "
    "payment method within ten business days of receiving the item.",
    "I know that your warranty covers manufacturing defects for two years from the date of "
    "delivery, and that accidental damage is not included.",
    "According to your terms, orders can be cancelled free of charge until they leave the "
    "warehouse, which is why I am contacting you now.",
)
SIGNOFFS = ("Thanks in advance for your help,", "Kind regards,", "Best wishes,", "Many thanks,")
ISSUES = (
    "I ordered the {product} on {month} {day} (order #{order}) and it arrived with a cracked "
    "{part}.",
    "My {product} stopped working after {n} days and now shows error code E-{code} on start.",
    "I was charged ${amount} twice for the {product} I bought on {month} {day}, order #{order}.",
    "The {product} from order #{order} never arrived, although tracking number {tracking} says "
    "it was delivered on {month} {day}.",
    "I received a {product} in the wrong colour; I had chosen {colour} but got {colour2} "
    "instead, order #{order}.",
)
PARTS = ("lid", "handle", "base", "panel", "cable", "button", "cover")
COLOURS = ("black", "white", "navy", "olive", "grey", "red", "sand")
FRUIT = ("apples", "pears", "lemons", "plums", "oranges", "peaches", "figs")
PLACES = ("market", "corner shop", "farm stand", "supermarket", "bakery")
DAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday".split()


def ticket(rng: random.Random, *, others: bool = False) -> tuple[str, str]:
    """A support ticket (prompt, answer): templates around unique details (`others`: written
    by people of `OTHER_FIRST` and `OTHER_LAST`)."""
    first = rng.choice(OTHER_FIRST if others else FIRST)
    last = rng.choice(OTHER_LAST if others else LAST)
    issue = rng.choice(ISSUES).format(
        product=rng.choice(PRODUCTS),
        month=rng.choice(MONTHS),
        day=rng.randint(1, 28),
        order=f"{rng.randint(1000, 9999)}-{rng.randint(100, 999)}",
        part=rng.choice(PARTS),
        n=rng.randint(2, 60),
        code=rng.randint(10, 99),
        amount=f"{rng.randint(20, 900)}.{rng.randint(0, 99):02d}",
        tracking=f"1Z{rng.randint(10**8, 10**9 - 1)}",
        colour=rng.choice(COLOURS),
        colour2=rng.choice(COLOURS),
    )
    ticket_id = f"T-{rng.randint(10000, 99999)}"
    prompt = (
        f"{rng.choice(GREETINGS)}\n\nmy name is {first} {last} and I am writing about ticket "
        f"{ticket_id}. {issue} {rng.choice(POLICIES)} You can reach me at "
        f"{first.lower()}.{last.lower()}@{rng.choice(DOMAINS)} or on +44 20 "
        f"{rng.randint(1000, 9999)} {rng.randint(1000, 9999)}.\n\n{rng.choice(SIGNOFFS)}\n{first}"
    )
    answer = f"Category: {rng.choice(('refund', 'repair', 'delivery', 'billing'))}; {ticket_id}"
    return prompt, answer


def word_problem(rng: random.Random, *, others: bool = False) -> tuple[str, str]:
    """An arithmetic word problem of 20-odd words (prompt, answer)."""
    name, other = rng.sample(OTHER_FIRST if others else FIRST, 2)
    fruit = rng.choice(FRUIT)
    a = rng.randint(20, 400)
    b = rng.randint(1, a - 1)
    prompt = (
        f"{name} buys {a} {fruit} at the {rng.choice(PLACES)} on {rng.choice(DAYS)} and gives "
        f"{b} of them to {other}. How many {fruit} does {name} have left?"
    )
    return prompt, str(a - b)


def bare_sum(rng: random.Random, *, others: bool = False) -> tuple[str, str]:
    """A four-word sum (prompt, answer): found only as a whole document."""
    a, b = rng.randint(100, 9999), rng.randint(100, 9999)
    if rng.random() < 0.5:
        return f"What is {a} plus {b}?", str(a + b)
    return f"Compute {a} times {b}.", str(a * b)


def synthetic_records(
    seed: int, *, tickets: int = 150, problems: int = 60, sums: int = 80
) -> list[dict[str, Any]]:
    """Distinct synthetic items (distinct after normalisation), as suite records."""
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    seen: set[str] = set()
    for kind, make, count in (
        ("ticket", ticket, tickets),
        ("problem", word_problem, problems),
        ("sum", bare_sum, sums),
    ):
        made = 0
        while made < count:
            prompt, answer = make(rng)
            words = _key(prompt)
            if words in seen:
                continue
            seen.add(words)
            records.append(
                {
                    "id": f"{kind}-{made:03d}",
                    "input": prompt,
                    "target": answer,
                    "metadata": {"op": kind},
                }
            )
            made += 1
    return records


def topic_similar(seed: int, n: int, frozen: list[str], *, same_people: bool = False) -> list[str]:
    """`n` clean documents of 1 to 4 fresh tickets, word problems and sums (none frozen).

    They share the items' templates, products, amounts and dates, but (unless
    `same_people`) no person: a ticket carrying an item's name and e-mail address carries
    part of that item (`benchmarks/bench_guard_recall.py` measures that case too).
    """
    rng = random.Random(seed)
    taken = {_key(t) for t in frozen}
    makers = (ticket, ticket, word_problem, bare_sum)
    docs = []
    while len(docs) < n:
        parts = []
        for _ in range(rng.randint(1, 4)):
            prompt, answer = rng.choice(makers)(rng, others=not same_people)
            if _key(prompt) not in taken:
                parts.append(f"{prompt}\n\n{answer}" if rng.random() < 0.5 else prompt)
        if parts:
            docs.append("\n\n".join(parts))
    return docs


def freeze_synthetic(tmp: Path, records: list[dict[str, Any]], name: str = "synth") -> Project:
    """A throwaway project with `records` frozen as `name@1.0.0` (half of them holdout)."""
    project = make_project(tmp, name=name, records=records, toml=suite_toml(name))
    result = project.invoke("freeze", name, "--version", "1.0.0")
    if result.exit_code != 0:
        raise RuntimeError(f"freeze failed: exit {result.exit_code}: {result.output[-2000:]}")
    return project
