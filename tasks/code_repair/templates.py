"""Bug templates of the code_repair family: one small repository per (bug kind, difficulty).

Each template builds, from a seeded `random.Random`, a `Spec`: the buggy module, the reference
patch (exact text replacements), the cases the visible test shows, the hidden cases, and the
issue text. `generate.py` turns a spec into an item and checks it by running it (the buggy
module fails the hidden tests, the patched one passes them, hard-coding the visible cases
does not pass them). Names, constants and test data vary with the seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Spec:
    """One generated bug: a module, its fix, and the cases that show it."""

    kind: str
    difficulty: str
    template: str
    package: str
    module: str
    function: str
    source: str
    edits: list[tuple[str, str]]
    """(before, after): exact replacements that turn `source` into the fixed module."""
    visible: list[tuple[tuple[Any, ...], Any]]
    """(arguments, expected) shown in the visible test."""
    hidden: list[tuple[tuple[Any, ...], Any]]
    """(arguments, expected) of the hidden test (a superset of the visible cases)."""
    issue: str
    extra_files: dict[str, str] = field(default_factory=dict)

    def fixed(self) -> str:
        """The module with the reference patch applied."""
        text = self.source
        for before, after in self.edits:
            if text.count(before) != 1:
                raise ValueError(f"{self.template}: patch text not found exactly once")
            text = text.replace(before, after)
        return text


PACKAGES = ["toolkit", "helpers", "common", "lib", "core", "util"]


def _reference(source: str, function: str) -> Callable[..., Any]:
    namespace: dict[str, Any] = {}
    exec(compile(source, "<reference>", "exec"), namespace)
    found: Callable[..., Any] = namespace[function]
    return found


def _cases(
    source: str, function: str, args: list[tuple[Any, ...]]
) -> list[tuple[tuple[Any, ...], Any]]:
    fixed = _reference(source, function)
    return [(a, fixed(*a)) for a in args]


def _ints(rng: random.Random, n: int, low: int = -9, high: int = 30) -> list[int]:
    return [rng.randint(low, high) for _ in range(n)]


# ---- off_by_one --------------------------------------------------------------------------------
def window_sums(rng: random.Random) -> Spec:
    fn = rng.choice(["window_sums", "rolling_totals", "moving_sums", "run_sums"])
    source = (
        '"""Helpers for numeric series."""\n\n\n'
        f"def {fn}(values, width):\n"
        '    """Sums of every run of `width` consecutive values, left to right."""\n'
        "    sums = []\n"
        "    for start in range(len(values) - width):\n"
        "        sums.append(sum(values[start : start + width]))\n"
        "    return sums\n"
    )
    edits = [("range(len(values) - width)", "range(len(values) - width + 1)")]
    shown = _ints(rng, rng.randint(4, 6))
    width = rng.randint(2, 3)
    hidden_args = [(shown, width)] + [
        (_ints(rng, rng.randint(3, 8)), rng.randint(1, 3)) for _ in range(4)
    ]
    equal = _ints(rng, 3)
    hidden_args.append((equal, 3))
    spec = Spec("off_by_one", "easy", "window_sums", "", "series", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [(shown, width)])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}` drops the last window. `{fn}({shown!r}, {width})` should return "
        f"{visible[0][1]!r} (one sum per run of {width} consecutive values), but the last "
        "sum is missing."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


def paging(rng: random.Random) -> Spec:
    fn = rng.choice(["page", "get_page", "page_of", "slice_page"])
    source = (
        '"""Page through a list."""\n\n\n'
        "def page_count(total, size):\n"
        '    """How many pages of `size` hold `total` items."""\n'
        "    return (total + size - 1) // size\n\n\n"
        f"def {fn}(items, number, size):\n"
        '    """Page `number` (1-based) of `items`, `size` items per page; [] past the end."""\n'
        "    if number < 1 or size < 1:\n"
        '        raise ValueError("page number and size start at 1")\n'
        "    start = number * size\n"
        "    return items[start : start + size]\n"
    )
    edits = [("    start = number * size\n", "    start = (number - 1) * size\n")]
    items = [rng.choice("abcdefghijklmnopqrstuvwxyz") * rng.randint(1, 2) for _ in range(11)]
    size = rng.randint(2, 4)
    shown = (items, 1, size)
    hidden_args = [shown, (items, 2, size), (items, 3, size), (items, 9, size)]
    hidden_args.append((list(range(rng.randint(5, 9))), 1, rng.randint(3, 5)))
    spec = Spec("off_by_one", "hard", "paging", "", "paging", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"Page 1 from `{fn}` skips the first {size} items: pages are numbered from 1, so "
        f"`{fn}(items, 1, {size})` should start with the first item."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


# ---- wrong_api ---------------------------------------------------------------------------------
def top_scores(rng: random.Random) -> Spec:
    fn = rng.choice(["top_scores", "best_n", "highest", "leaders"])
    source = (
        '"""Rankings."""\n\n\n'
        f"def {fn}(scores, n):\n"
        '    """The `n` highest scores, highest first; `scores` is left unchanged."""\n'
        "    ranked = scores.sort(reverse=True)\n"
        "    return ranked[:n]\n"
    )
    edits = [("ranked = scores.sort(reverse=True)", "ranked = sorted(scores, reverse=True)")]
    shown = (_ints(rng, 5, 0, 99), 2)
    hidden_args = [shown] + [
        (_ints(rng, rng.randint(2, 8), 0, 99), rng.randint(1, 4)) for _ in "abcd"
    ]
    spec = Spec("wrong_api", "easy", "top_scores", "", "ranking", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}({shown[0]!r}, {shown[1]})` raises a TypeError instead of returning "
        f"{visible[0][1]!r}."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


PREFIX_WORDS = {
    "img_": (["gamma", "mask", "image", "igloo", "magic", "grid"], ["mimic", "gig"]),
    "tmp_": (["template", "map", "stamp", "pump", "temp"], ["mop", "tempt"]),
    "raw_": (["wave", "draw", "war", "award", "rarity"], ["straw", "wax"]),
    "old_": (["dollar", "lode", "solid", "dodo", "load"], ["loll", "doodle"]),
}


def strip_prefix(rng: random.Random) -> Spec:
    fn = rng.choice(["short_name", "bare_name", "without_prefix", "base_name"])
    prefix = rng.choice(sorted(PREFIX_WORDS))
    prefixed, plain = PREFIX_WORDS[prefix]
    source = (
        '"""File-name helpers."""\n\n'
        f'PREFIX = "{prefix}"\n\n\n'
        f"def {fn}(name):\n"
        '    """`name` without the leading PREFIX, if it has one; otherwise unchanged."""\n'
        "    return name.strip(PREFIX)\n"
    )
    edits = [("return name.strip(PREFIX)", "return name.removeprefix(PREFIX)")]
    words = rng.sample(prefixed, 4)
    shown = (prefix + words[0],)
    hidden_args = [shown] + [(prefix + w,) for w in words[1:]] + [(w,) for w in plain]
    spec = Spec("wrong_api", "hard", "strip_prefix", "", "names", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}({shown[0]!r})` should return {visible[0][1]!r}, the name without its "
        f"{prefix!r} prefix, but it also eats letters of the name itself."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


# ---- edge_case ---------------------------------------------------------------------------------
def mean(rng: random.Random) -> Spec:
    fn = rng.choice(["mean", "average", "mean_of", "avg"])
    source = (
        '"""Summary statistics."""\n\n\n'
        f"def {fn}(values):\n"
        '    """Arithmetic mean of `values` (a list or tuple); 0.0 when it is empty."""\n'
        "    return sum(values) / len(values)\n"
    )
    edits = [
        (
            "    return sum(values) / len(values)\n",
            "    if not values:\n        return 0.0\n    return sum(values) / len(values)\n",
        )
    ]
    hidden_args = [([],), ((),)] + [(_ints(rng, rng.randint(1, 6)),) for _ in range(4)]
    spec = Spec("edge_case", "easy", "mean", "", "stats", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [([],)])
    hidden = _cases(fixed, fn, hidden_args)
    issue = f"`{fn}([])` crashes with ZeroDivisionError; the docstring promises 0.0."
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


FIRST = ["Ada", "Grace", "Alan", "Edsger", "Barbara", "Donald", "Frances", "Niklaus"]
LAST = ["Lovelace", "Hopper", "Turing", "Dijkstra", "Liskov", "Knuth", "Allen", "Wirth"]
MONONYMS = ["Plato", "Euclid", "Hypatia", "Aristotle", "Zeno"]


def split_name(rng: random.Random) -> Spec:
    fn = rng.choice(["split_name", "name_parts", "first_and_rest", "parse_name"])
    source = (
        '"""Names."""\n\n\n'
        f"def {fn}(full_name):\n"
        '    """(first, rest) of a full name. A one-word name has rest ""; spaces around\n'
        '    and between the words are ignored."""\n'
        '    first, rest = full_name.split(" ", 1)\n'
        "    return first, rest\n"
    )
    edits = [
        (
            '    first, rest = full_name.split(" ", 1)\n',
            "    parts = full_name.split(None, 1)\n"
            '    first = parts[0] if parts else ""\n'
            '    rest = parts[1].strip() if len(parts) > 1 else ""\n',
        )
    ]
    mono = rng.sample(MONONYMS, 2)
    first, last = rng.choice(FIRST), rng.choice(LAST)
    hidden_args = [
        (mono[0],),
        (f"{first} {last}",),
        (f"  {rng.choice(FIRST)}   {rng.choice(LAST)} ",),
        (f"{rng.choice(FIRST)} {rng.choice(FIRST)} {rng.choice(LAST)}",),
        (f" {mono[1]} ",),
        ("",),
    ]
    spec = Spec("edge_case", "hard", "split_name", "", "people", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [(mono[0],), (f"{first} {last}",)])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}({mono[0]!r})` raises ValueError; a one-word name should give "
        f"{visible[0][1]!r}. Extra spaces should not matter either."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


# ---- logic_error -------------------------------------------------------------------------------
def clamp(rng: random.Random) -> Spec:
    fn = rng.choice(["clamp", "bound", "limit_to", "pin"])
    source = (
        '"""Numeric bounds."""\n\n\n'
        f"def {fn}(value, low, high):\n"
        '    """`value` limited to the range [low, high]."""\n'
        "    return max(high, min(low, value))\n"
    )
    edits = [("return max(high, min(low, value))", "return max(low, min(high, value))")]
    low = rng.randint(-20, 10)
    high = low + rng.randint(5, 30)
    shown = (rng.randint(low + 1, high - 1), low, high)
    hidden_args = [
        shown,
        (low - rng.randint(1, 9), low, high),
        (high + rng.randint(1, 9), low, high),
        (low, low, high),
        (rng.randint(low + 1, high - 1), low, high),
    ]
    spec = Spec("logic_error", "easy", "clamp", "", "bounds", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}{shown!r}` returns the upper bound instead of {visible[0][1]!r}: "
        "a value inside the range should come back unchanged."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


def grades(rng: random.Random) -> Spec:
    fn = rng.choice(["grade", "letter_grade", "grade_for", "to_letter"])
    c = rng.randint(40, 60)
    b = c + rng.randint(10, 15)
    a = b + rng.randint(8, 12)
    source = (
        '"""Grading."""\n\n\n'
        f"def {fn}(score):\n"
        f'    """Letter grade: A from {a}, B from {b}, C from {c}, otherwise F."""\n'
        f"    if score >= {c}:\n"
        '        return "C"\n'
        f"    if score >= {b}:\n"
        '        return "B"\n'
        f"    if score >= {a}:\n"
        '        return "A"\n'
        '    return "F"\n'
    )
    block_bug = (
        f'    if score >= {c}:\n        return "C"\n    if score >= {b}:\n        return "B"\n'
        f'    if score >= {a}:\n        return "A"\n'
    )
    block_fix = (
        f'    if score >= {a}:\n        return "A"\n    if score >= {b}:\n        return "B"\n'
        f'    if score >= {c}:\n        return "C"\n'
    )
    shown = a + rng.randint(0, 5)
    hidden_args = [(shown,), (b,), (a - 1,), (c,), (c - 1,), (100,)]
    spec = Spec(
        "logic_error",
        "hard",
        "grades",
        "",
        "grading",
        fn,
        source,
        [(block_bug, block_fix)],
        [],
        [],
        "",
    )
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [(shown,)])
    hidden = _cases(fixed, fn, hidden_args)
    issue = f"`{fn}({shown})` returns 'C'; a score of {shown} is an A."
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


# ---- data_handling -----------------------------------------------------------------------------
ACCOUNTS = ["rent", "food", "travel", "books", "fuel", "gifts", "tools"]


def totals(rng: random.Random) -> Spec:
    fn = rng.choice(["totals", "sum_by_account", "account_totals", "tally"])
    source = (
        '"""Ledger summaries."""\n\n\n'
        f"def {fn}(entries):\n"
        '    """Total amount per account from (account, amount) pairs; an account may\n'
        '    appear more than once."""\n'
        "    totals = {}\n"
        "    for account, amount in entries:\n"
        "        totals[account] = amount\n"
        "    return totals\n"
    )
    edits = [
        (
            "        totals[account] = amount\n",
            "        totals[account] = totals.get(account, 0) + amount\n",
        )
    ]

    def entries(n: int) -> list[tuple[str, int]]:
        names = rng.sample(ACCOUNTS, 3)
        rows = [(rng.choice(names), rng.randint(1, 90)) for _ in range(n)]
        rows.append((rows[0][0], rng.randint(1, 90)))
        return rows

    shown = (entries(3),)
    hidden_args = [shown] + [(entries(rng.randint(3, 7)),) for _ in range(4)]
    spec = Spec("data_handling", "easy", "totals", "", "ledger", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}` loses amounts when an account appears twice: for {shown[0]!r} it should "
        f"return {visible[0][1]!r}."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


CITIES = ["leeds", "york", "bath", "derby", "hull", "ely"]
PEOPLE = ["ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]


def city_counts(rng: random.Random) -> Spec:
    fn = rng.choice(["count_by_city", "city_counts", "people_per_city", "tally_cities"])
    source = (
        '"""Survey results."""\n\n\n'
        f"def {fn}(lines):\n"
        '    """People per city from "name;city" lines. Cities are compared ignoring case\n'
        '    and surrounding spaces and reported in title case; blank lines are skipped."""\n'
        "    counts = {}\n"
        "    for line in lines:\n"
        '        name, city = line.split(";")\n'
        "        counts[city] = counts.get(city, 0) + 1\n"
        "    return counts\n"
    )
    edits = [
        (
            '    for line in lines:\n        name, city = line.split(";")\n',
            "    for line in lines:\n"
            "        if not line.strip():\n"
            "            continue\n"
            '        name, city = line.split(";")\n'
            "        city = city.strip().title()\n",
        )
    ]

    def messy(city: str) -> str:
        style = rng.randint(0, 3)
        spelled = [city, city.upper(), city.title(), f" {city.title()} "][style]
        return spelled

    def lines(n: int, blanks: int) -> list[str]:
        names = rng.sample(CITIES, 2)
        rows = [f"{rng.choice(PEOPLE)};{messy(rng.choice(names))}" for _ in range(n)]
        rows.append(f"{rng.choice(PEOPLE)};{names[0].upper()}")
        for _ in range(blanks):
            rows.insert(rng.randint(0, len(rows)), rng.choice(["", "   "]))
        return rows

    shown = (lines(3, 0),)
    hidden_args = [shown] + [(lines(rng.randint(3, 6), rng.randint(1, 2)),) for _ in range(4)]
    spec = Spec("data_handling", "hard", "city_counts", "", "survey", fn, source, edits, [], [], "")
    fixed = spec_fixed(spec)
    visible = _cases(fixed, fn, [shown])
    hidden = _cases(fixed, fn, hidden_args)
    issue = (
        f"`{fn}` counts the same city several times when it is spelled differently: for "
        f"{shown[0]!r} it should return {visible[0][1]!r}. The survey export also has blank "
        "lines."
    )
    return _replace(spec, visible=visible, hidden=hidden, issue=issue)


def spec_fixed(spec: Spec) -> str:
    return spec.fixed()


def _replace(spec: Spec, **changes: Any) -> Spec:
    from dataclasses import replace

    return replace(spec, **changes)


TEMPLATES: dict[tuple[str, str], Callable[[random.Random], Spec]] = {
    ("off_by_one", "easy"): window_sums,
    ("off_by_one", "hard"): paging,
    ("wrong_api", "easy"): top_scores,
    ("wrong_api", "hard"): strip_prefix,
    ("edge_case", "easy"): mean,
    ("edge_case", "hard"): split_name,
    ("logic_error", "easy"): clamp,
    ("logic_error", "hard"): grades,
    ("data_handling", "easy"): totals,
    ("data_handling", "hard"): city_counts,
}
"""(bug kind, difficulty) -> template."""
