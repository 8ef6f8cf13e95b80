"""Text normalisation and hashed word n-grams (the fingerprint spec shared by freeze and guard).

Spec, so that other tools can reproduce fingerprints:

1. NFKC-normalise and lowercase the text.
2. Replace every character that is neither alphanumeric nor white space by a space
   (punctuation removed), then split on white space into words.
3. Hash each word to 64 bits: the first 8 bytes (little-endian) of BLAKE2b(word, UTF-8).
4. Hash the n-gram of words ``w_1..w_n`` as ``sum(h(w_i) * P**(n-i)) mod 2**64`` with
   ``P = 0x100000001B3``, so that consecutive n-grams can be computed with vectorised
   arithmetic.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

__all__ = [
    "NGRAM_PRIME",
    "ngram_hashes",
    "normalise_words",
    "text_hash",
    "word_hashes",
]

NGRAM_PRIME = 0x100000001B3
_MASK = (1 << 64) - 1


def normalise_words(text: str) -> list[str]:
    """Lowercase, strip punctuation and split `text` into words.

    Examples:
        >>> normalise_words("Hello, World!  It's 4:30.")
        ['hello', 'world', 'it', 's', '4', '30']
    """
    text = unicodedata.normalize("NFKC", text).lower()
    cleaned = "".join(c if c.isalnum() or c.isspace() else " " for c in text)
    return cleaned.split()


def _word_hash(word: str) -> int:
    return int.from_bytes(hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest(), "little")


def word_hashes(
    words: Iterable[str], cache: dict[str, int] | None = None
) -> npt.NDArray[np.uint64]:
    """64-bit hashes of `words` (step 3 of the spec); `cache` memoises repeated words."""
    memo = {} if cache is None else cache
    out: list[int] = []
    for word in words:
        value = memo.get(word)
        if value is None:
            value = _word_hash(word)
            memo[word] = value
        out.append(value)
    return np.array(out, dtype=np.uint64)


def ngram_hashes(hashes: npt.NDArray[np.uint64], n: int) -> npt.NDArray[np.uint64]:
    """Hashes of every run of `n` consecutive words (step 4), in order; empty if too short.

    Examples:
        >>> h = word_hashes("a b c d".split())
        >>> len(ngram_hashes(h, 3)), len(ngram_hashes(h, 5))
        (2, 0)
    """
    count = len(hashes) - n + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64)
    acc = np.zeros(count, dtype=np.uint64)
    prime = np.uint64(NGRAM_PRIME)
    with np.errstate(over="ignore"):
        for i in range(n):
            acc = acc * prime + hashes[i : i + count]
    return acc


def text_hash(text: str) -> str:
    """SHA-256 of the normalised words of `text` joined by single spaces (exact-match key)."""
    return "sha256:" + hashlib.sha256(" ".join(normalise_words(text)).encode("utf-8")).hexdigest()
