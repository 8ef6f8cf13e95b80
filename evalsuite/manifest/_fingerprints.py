"""Fingerprints: hashed word 13-grams of every item, saved beside the manifest.

They let a training pipeline screen curricula (`evalsuite guard`) without the vault key: a
64-bit hash of a 13-word window does not give the window back.

Format ``evalsuite-fingerprints/2`` (``/1`` is still read) adds ``short`` to each record: for
every text field of `SHORT_MIN` to ``NGRAM_SIZE - 1`` words, too short to have a 13-gram,
``[L, head, whole]`` with the hashes (same n-gram function) of its first `SHORT_MIN` words and
of all its L words, so that the guard finds such a text inside a longer document.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from evalsuite._core.text import ngram_hashes, normalise_words, text_hash, word_hashes
from evalsuite.manifest._items import Item
from evalsuite.manifest._split import Split

__all__ = [
    "FINGERPRINT_FORMAT",
    "NGRAM_SIZE",
    "SHORT_MIN",
    "FingerprintRecord",
    "fingerprint_item",
    "item_texts",
    "render_fingerprints",
]

FINGERPRINT_FORMAT = "evalsuite-fingerprints/2"
NGRAM_SIZE = 13
SHORT_MIN = 6
"""Texts of fewer words than this have no n-gram fingerprint (only their exact text hash)."""


@dataclass(frozen=True, slots=True)
class FingerprintRecord:
    """The fingerprint of one item."""

    id: str
    split: Split
    stratum: str
    text_hashes: list[str]
    """Exact-match keys: hash of each normalised text field (input, target, files)."""
    ngrams: list[int]
    """Sorted, unique 64-bit hashes of the item's word 13-grams."""
    short: list[list[int]]
    """Sorted, unique ``[L, head, whole]`` of texts of `SHORT_MIN` <= L < `NGRAM_SIZE` words."""


def _message_text(message: Any) -> str:
    if isinstance(message, dict):
        content = message.get("content", "")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(message)


def item_texts(item: Item) -> list[str]:
    """The text fields of an item that a curriculum could contain."""
    texts: list[str] = []
    if isinstance(item.input, str):
        texts.append(item.input)
    else:
        texts.extend(_message_text(m) for m in item.input)
    texts.extend([item.target] if isinstance(item.target, str) else item.target)
    if item.files:
        texts.extend(item.text_files().values())
    return [t for t in texts if t.strip()]


def fingerprint_item(item: Item, *, split: Split, stratum: str) -> FingerprintRecord:
    """Fingerprint one item (see `evalsuite._core.text` for the hashing spec)."""
    texts = item_texts(item)
    grams: set[int] = set()
    short: set[tuple[int, int, int]] = set()
    for text in texts:
        hashes = word_hashes(normalise_words(text))
        grams.update(int(h) for h in ngram_hashes(hashes, NGRAM_SIZE))
        if SHORT_MIN <= len(hashes) < NGRAM_SIZE:
            head = int(ngram_hashes(hashes[:SHORT_MIN], SHORT_MIN)[0])
            whole = int(ngram_hashes(hashes, len(hashes))[0])
            short.add((len(hashes), head, whole))
    return FingerprintRecord(
        id=item.id,
        split=split,
        stratum=stratum,
        text_hashes=sorted({text_hash(t) for t in texts}),
        ngrams=sorted(grams),
        short=[list(s) for s in sorted(short)],
    )


def render_fingerprints(
    records: Iterable[FingerprintRecord], *, suite: str, version: str, canary: str
) -> str:
    """The fingerprint file: a header line, then one JSON line per item sorted by id."""
    header = {
        "format": FINGERPRINT_FORMAT,
        "suite": suite,
        "version": version,
        "n": NGRAM_SIZE,
        "hash": "evalsuite-ngram/2",
        "canary": canary,
    }
    lines = [json.dumps(header, sort_keys=True)]
    for record in sorted(records, key=lambda r: r.id):
        lines.append(
            json.dumps(
                {
                    "id": record.id,
                    "split": record.split,
                    "stratum": record.stratum,
                    "text_hashes": record.text_hashes,
                    "ngrams": record.ngrams,
                    "short": record.short,
                },
                sort_keys=True,
            )
        )
    return "\n".join(lines) + "\n"
