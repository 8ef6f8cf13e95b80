"""A battery of light edits of frozen items, planted in real text, for guard recall.

`tests/guard/test_recall.py` runs it on synthetic holdout-like items (`synthetic.py`) frozen
in a throwaway project, and on the shipped suites' public dev items;
`benchmarks/bench_guard_recall.py` also on every shipped item, against the code at `main` as
the baseline. It uses only the public API that every version of evalsuite has (`load_index`,
`screen_documents`, the manifest and vault readers), so the same battery measures old and new
code.

Shipped holdout items are only used by the benchmark: decrypted in memory with the suite's
key (the shipped suites' key derives from their public canary) and screened in memory through
`screen_documents`; no item text is ever written to disk, printed or put in a message (misses
are reported by item id).
"""

from __future__ import annotations

import json
import random
import sysconfig
import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.guard import load_index, screen_documents
from evalsuite.manifest import (
    KeySpec,
    frozen_versions,
    item_texts,
    list_suite_names,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    resolve_key,
)
from tests.guard.corpus import paragraphs

KINDS = (
    "verbatim",
    "case",
    "punctuation_stripped",
    "whitespace_collapsed",
    "word_changed",
    "markdown",
    "chat_template",
    "json_escaped",
    "truncated_70",
    "middle_60",
    "reflowed",
)
TARGET_KINDS = tuple(k for k in KINDS if k != "middle_60")
"""Edits with a recall target (>= 0.98). A 60% window from the middle of a templated item
often holds little of what is its own (its details): measured, without a target."""
WHOLE_KINDS = ("verbatim", "case", "punctuation_stripped", "whitespace_collapsed", "reflowed")
"""Edits that keep every word: the only ones that leave a short item recognisable."""
LONG_WORDS = 13
"""Items whose prompt has at least this many words are planted inside longer documents."""
SHORT_WORDS = 6
"""Items with fewer words are planted as whole documents (the guard's documented scope)."""
SYNTHETIC = "synth"
"""The name of the synthetic suite (`tests/guard/synthetic.py`)."""
_REPLACEMENTS = ("zebra", "lantern", "Tuesday", "quietly", "seventeen", "orchard")


@dataclass(frozen=True)
class BatteryItem:
    """The prompt (and answer) of one frozen item, in memory."""

    suite: str
    version: str
    item_id: str
    split: str
    prompt: str
    answer: str

    @property
    def words(self) -> int:
        """Whitespace-separated tokens holding a letter or digit (spec-independent)."""
        return sum(any(c.isalnum() for c in t) for t in self.prompt.split())


def shipped_items(
    root: Path, *, splits: Sequence[str] = ("dev", "holdout"), key_dir: Path | None = None
) -> list[BatteryItem]:
    """Every item of `splits` of every frozen version of every suite under `root`.

    Dev items are read from `tasks/` (those the version froze), holdout items from the
    vault with the suite's key (from `key_dir`, or derived from the suite's public canary).
    """
    layout = Layout(root)
    out: list[BatteryItem] = []
    for suite in list_suite_names(layout):
        config = load_suite(layout, suite)
        dev = {e.item.id: e.item for e in load_suite_items(layout, config)}
        for version in frozen_versions(layout, suite):
            manifest = load_manifest(layout, suite, version)
            key = resolve_key(
                suite,
                manifest.key,
                manifest.canary,
                KeySpec(key_dir or root / "no-keys"),
                create=False,
            )
            held = {}
            if "holdout" in splits:
                held = {item.id: item for _, item in load_holdout_items(layout, manifest, key)}
            for entry in manifest.items:
                if entry.split not in splits:
                    continue
                item = held.get(entry.id) if entry.split == "holdout" else dev.get(entry.id)
                if item is None:
                    continue
                texts = item_texts(item)
                answer = item.target if isinstance(item.target, str) else " ".join(item.target)
                out.append(BatteryItem(suite, version, entry.id, entry.split, texts[0], answer))
    return out


def _licence_paragraphs() -> list[str]:
    """Licence texts and package descriptions (READMEs) of the installed packages."""
    site = Path(sysconfig.get_paths()["purelib"])
    found: set[str] = set()
    files = sorted(site.glob("*.dist-info/licenses/*")) + sorted(site.glob("*.dist-info/METADATA"))
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if path.name == "METADATA":
            text = text.partition("\n\n")[2]  # the description, after the headers
        found.update(p.strip() for p in text.split("\n\n") if len(p.split()) >= 8)
    return sorted(found)


def clean_pool() -> list[str]:
    """Real text offline: stdlib docstring paragraphs, licences and package READMEs."""
    return sorted(set(paragraphs()) | set(_licence_paragraphs()))


# --- the edits ----------------------------------------------------------------------------


def _case(text: str, rng: random.Random) -> str:
    if rng.random() < 0.3:
        return text.upper()
    styles: list[Callable[[str], str]] = [str.upper, str.lower, str.title, str.swapcase]
    return " ".join(rng.choice(styles)(w) for w in text.split(" "))


def _word_changed(text: str, rng: random.Random) -> str:
    tokens = text.split(" ")
    spots = [k for k, t in enumerate(tokens) if any(c.isalnum() for c in t)]
    k = rng.choice(spots)
    tokens[k] = rng.choice([w for w in _REPLACEMENTS if w != tokens[k]])
    return " ".join(tokens)


def _markdown(text: str, rng: random.Random) -> str:
    tokens = text.split(" ")
    for mark in ("**", "`", "_"):
        k = rng.randrange(len(tokens))
        if tokens[k].strip():
            tokens[k] = mark + tokens[k] + mark
    body = "\n".join("> " + line if line.strip() else ">" for line in " ".join(tokens).split("\n"))
    return f"### Example {rng.randint(1, 99)}\n\n{body}\n\n---"


def _chat(text: str, answer: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return (
            "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n"
            f"<|im_start|>user\n{text}<|im_end|>\n<|im_start|>assistant\n{answer}<|im_end|>"
        )
    return (
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n"
        f"{text}<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n{answer}<|eot_id|>"
    )


def _json(text: str, answer: str, rng: random.Random) -> str:
    messages = [{"role": "user", "content": text}, {"role": "assistant", "content": answer}]
    return json.dumps({"messages": messages}, ensure_ascii=rng.random() < 0.5)


def _truncated(text: str) -> str:
    tokens = text.split(" ")
    return " ".join(tokens[: max(1, int(0.7 * len(tokens)))])


def _middle(text: str, rng: random.Random) -> str:
    """A partial copy: 60% of the words, from somewhere in the first 40%."""
    tokens = text.split(" ")
    size = max(1, int(0.6 * len(tokens)))
    start = rng.randint(0, len(tokens) - size)
    return " ".join(tokens[start : start + size])


def _reflowed(text: str, rng: random.Random) -> str:
    """The same words laid out again: hard-wrapped, indented as code, or as HTML."""
    lines = textwrap.wrap(" ".join(text.split()), width=rng.randint(20, 60)) or [text]
    style = rng.randrange(3)
    if style == 0:
        return "\n".join(lines)
    if style == 1:
        return "\n".join("    " + line for line in lines)
    return "<p>" + "<br>\n".join(lines) + "</p>"


def edit(item: BatteryItem, kind: str, rng: random.Random) -> str:
    """`item`'s prompt with one kind of light edit (the wrappers also carry its answer)."""
    text = item.prompt
    edits: dict[str, Callable[[], str]] = {
        "verbatim": lambda: text,
        "case": lambda: _case(text, rng),
        "punctuation_stripped": lambda: "".join(c for c in text if c.isalnum() or c.isspace()),
        "whitespace_collapsed": lambda: " ".join(text.split()),
        "word_changed": lambda: _word_changed(text, rng),
        "markdown": lambda: _markdown(text, rng),
        "chat_template": lambda: _chat(text, item.answer, rng),
        "json_escaped": lambda: _json(text, item.answer, rng),
        "truncated_70": lambda: _truncated(text),
        "middle_60": lambda: _middle(text, rng),
        "reflowed": lambda: _reflowed(text, rng),
    }
    return edits[kind]()


# --- planting and scoring -------------------------------------------------------------------


@dataclass
class Tally:
    """Counts per (group, kind): planted, found, and planted documents flagging another item."""

    planted: Counter[tuple[str, str]] = field(default_factory=Counter)
    found: Counter[tuple[str, str]] = field(default_factory=Counter)
    wrong: Counter[tuple[str, str]] = field(default_factory=Counter)
    """Hits naming an item other than the planted one (or an identical duplicate of it)."""
    wrong_documents: Counter[tuple[str, str]] = field(default_factory=Counter)
    wrong_hits: list[tuple[str, str | None]] = field(default_factory=list)
    """(planted document, the other item it flagged): ids only."""
    """Planted documents with at least one such hit (false positives)."""
    clean_documents: int = 0
    clean_flagged: int = 0
    topic_documents: int = 0
    """Of the clean documents, those holding topic-similar text."""
    topic_flagged: int = 0
    missed: list[tuple[str, str, str]] = field(default_factory=list)
    """(group, kind, suite@version/item id) of every miss (ids only, never text)."""

    def to_dict(self) -> dict[str, object]:
        """JSON-ready counts."""
        rows = sorted(self.planted, key=lambda r: (r[0], KINDS.index(r[1])))
        return {
            "rows": [
                {
                    "group": g,
                    "kind": k,
                    "planted": self.planted[g, k],
                    "found": self.found[g, k],
                    "wrong": self.wrong[g, k],
                    "wrong_documents": self.wrong_documents[g, k],
                }
                for g, k in rows
            ],
            "clean_documents": self.clean_documents,
            "clean_flagged": self.clean_flagged,
            "topic_documents": self.topic_documents,
            "topic_flagged": self.topic_flagged,
            "missed": self.missed,
        }


def group_of(item: BatteryItem) -> str:
    """Table row group: the suite (and for a synthetic suite the item's kind: the prefix of
    its id), and whether the item is planted whole or inside text."""
    where = "in text" if item.words >= LONG_WORDS else "whole document"
    kind = f" {item.item_id.partition('-')[0]}" if item.suite == SYNTHETIC else ""
    return f"{item.suite}{kind} ({where})"


def run_battery(
    root: Path,
    items: Sequence[BatteryItem],
    *,
    seed: int = 20240611,
    sample: int | None = None,
    n_clean: int = 2000,
    topic_similar: Sequence[str] = (),
    kinds: Sequence[str] = KINDS,
    threshold: float | None = None,
    known_copies: Sequence[tuple[str, str]] = (),
) -> Tally:
    """Plant every edit of every (or `sample` per suite) item, screen, and count.

    `known_copies`: pairs of item ids (any versions of one suite) whose texts are known
    near-copies of each other: a copy of one finding the other is not counted wrong.

    `items` are frozen items of the project at `root`. Items of `LONG_WORDS` words or more
    are pasted, edited, between 1 to 6 clean paragraphs; items under `SHORT_WORDS` words are
    whole documents, for the edits that keep every word. Items in between (none here) would
    be skipped. Clean documents: `n_clean` of 1 to 6 real paragraphs, and each of
    `topic_similar` (text on the items' topics that holds none of them) between 0 and 2.
    `threshold`: the guard's share threshold (default: the guard's default).
    """
    rng = random.Random(seed)
    pool = clean_pool()
    items = list(items)
    every_item = items  # identical items (one item in several versions) count as one
    if sample is not None:
        by_suite: dict[str, list[BatteryItem]] = {}
        for item in items:
            by_suite.setdefault(item.suite, []).append(item)
        items = [
            i for group in by_suite.values() for i in rng.sample(group, min(sample, len(group)))
        ]
    docs: list[tuple[str, str]] = []
    truth: dict[str, tuple[BatteryItem, str]] = {}
    for item in items:
        long = item.words >= LONG_WORDS
        if not long and item.words >= SHORT_WORDS:
            continue
        for kind in kinds if long else [k for k in kinds if k in WHOLE_KINDS]:
            text = edit(item, kind, random.Random(f"{seed}/{item.suite}/{item.item_id}/{kind}"))
            if long:
                parts = rng.sample(pool, rng.randint(1, 6))
                parts.insert(rng.randint(0, len(parts)), text)
                text = "\n\n".join(parts)
            name = f"{item.suite}@{item.version}/{item.item_id}/{kind}"
            docs.append((name, text))
            truth[name] = (item, kind)
    clean = [
        (f"clean/{k}", "\n\n".join(rng.sample(pool, rng.randint(1, 6)))) for k in range(n_clean)
    ]
    for k, doc in enumerate(topic_similar):
        parts = [*rng.sample(pool, rng.randint(0, 2)), doc]
        rng.shuffle(parts)
        clean.append((f"clean/topic/{k}", "\n\n".join(parts)))
    options = {} if threshold is None else {"threshold": threshold}
    hits = screen_documents(docs + clean, load_index(Layout(root)), **options)
    tally = Tally(clean_documents=len(clean))
    same_prompt: dict[str, set[tuple[str, str, str | None]]] = {}
    for item in every_item:  # an item duplicated in its suite, or in another version of
        # it (the same item frozen in 1.0.0 and 2.0.0): a copy is a copy of each of them
        same_prompt.setdefault(item.prompt, set()).add((item.suite, item.version, item.item_id))
    twins: dict[str, set[str]] = {}
    for a, b in known_copies:
        twins.setdefault(a, set()).add(b)
        twins.setdefault(b, set()).add(a)
    flagged: dict[str, set[tuple[str, str, str | None]]] = {}
    for hit in hits:
        flagged.setdefault(hit.document, set()).add((hit.suite, hit.version, hit.item_id))
    for name, (item, kind) in truth.items():
        row = (group_of(item), kind)
        tally.planted[row] += 1
        found = flagged.get(name, set())
        if (item.suite, item.version, item.item_id) in found:
            tally.found[row] += 1
        else:
            tally.missed.append((*row, f"{item.suite}@{item.version}/{item.item_id}"))
        wrong = {
            hit
            for hit in found - same_prompt[item.prompt]
            if hit[2] not in twins.get(item.item_id, set())
        }
        tally.wrong[row] += len(wrong)
        tally.wrong_hits.extend((name, hit[2]) for hit in wrong)
        tally.wrong_documents[row] += bool(wrong)
    tally.clean_flagged = sum(1 for name, _ in clean if name in flagged)
    tally.topic_documents = len(topic_similar)
    tally.topic_flagged = sum(
        1 for name, _ in clean if name.startswith("clean/topic/") and name in flagged
    )
    return tally
