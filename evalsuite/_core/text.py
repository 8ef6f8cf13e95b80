"""Text normalisation and hashed word n-grams (the fingerprint spec shared by freeze and guard).

Spec (``evalsuite-ngram/2``), so that other tools can reproduce fingerprints:

1. NFKC-normalise and lowercase the text; replace every character that is neither
   alphanumeric nor white space by a space (punctuation removed); split on white space.
2. Hash each word from its UTF-8 bytes ``b_1..b_L``: ``fmix64(sum(b_i * P1**(L-i)) mod 2**64)``
   with ``P1 = 0x100000001B3`` and ``fmix64`` the MurmurHash3 64-bit finaliser.
3. Hash the n-gram of words ``w_1..w_n`` as ``sum(h(w_i) * P**(n-i)) mod 2**64`` with
   ``P = 0x9E3779B97F4A7C15``.

Both polynomial steps are computed for a whole buffer at once with numpy (prefix sums under
the modular inverse of ``P1``), which is what makes curriculum screening fast. For ASCII
text, step 1 is a byte translation table; other text takes the exact Unicode path.
"""

from __future__ import annotations

import unicodedata

import numpy as np
import numpy.typing as npt

__all__ = [
    "NGRAM_PRIME",
    "WORD_PRIME",
    "ngram_hashes",
    "normalise_ascii",
    "normalise_text",
    "normalise_words",
    "text_hash",
    "word_hashes",
    "word_hashes_of_buffer",
]

WORD_PRIME = 0x100000001B3
NGRAM_PRIME = 0x9E3779B97F4A7C15
_MASK = (1 << 64) - 1
_WORD_PRIME_INV = pow(WORD_PRIME, -1, 1 << 64)
U64 = npt.NDArray[np.uint64]

_ASCII_TABLE = bytes(
    (c + 32) if 65 <= c <= 90 else c if (48 <= c <= 57 or 97 <= c <= 122) else 32
    for c in range(128)
) + bytes(range(128, 256))
"""Byte table: A-Z -> a-z, digits and a-z kept, other ASCII -> space, bytes >= 128 kept."""


def normalise_words(text: str) -> list[str]:
    """Step 1 of the spec: lowercase, strip punctuation and split `text` into words.

    Examples:
        >>> normalise_words("Hello, World!  It's 4:30.")
        ['hello', 'world', 'it', 's', '4', '30']
    """
    return normalise_text(text).split()


def normalise_text(text: str) -> str:
    """The normalised text (words separated by white space), exact for any Unicode input."""
    if text.isascii():
        return text.encode("ascii").translate(_ASCII_TABLE).decode("ascii")
    text = unicodedata.normalize("NFKC", text).lower()
    # white space of any kind becomes an ASCII space, so that byte-level splitting agrees
    return "".join(c if c.isalnum() else " " for c in text)


def normalise_ascii(data: bytes) -> bytes:
    """Step 1 for ASCII bytes: one C-speed translation (callers check `isascii()` first)."""
    return data.translate(_ASCII_TABLE)


def _fmix64(h: U64) -> U64:
    with np.errstate(over="ignore"):
        h = h ^ (h >> np.uint64(33))
        h = h * np.uint64(0xFF51AFD7ED558CCD)
        h = h ^ (h >> np.uint64(33))
        h = h * np.uint64(0xC4CEB9FE1A85EC53)
        h = h ^ (h >> np.uint64(33))
    return h


def word_hashes_of_buffer(
    data: bytes | npt.NDArray[np.uint8],
) -> tuple[U64, npt.NDArray[np.int64]]:
    """Hashes (step 2) of every word of a normalised buffer, and each word's start offset.

    `data` must already be normalised: words of non-space bytes separated by ASCII white
    space (``normalise_ascii`` output, or ``normalise_text(...).encode()``).
    """
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    if arr.size == 0:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
    is_word = arr > 32
    padded = np.concatenate(([False], is_word, [False]))
    change = np.flatnonzero(padded[1:] != padded[:-1])
    starts, ends = change[0::2], change[1::2]
    if starts.size == 0:
        return np.zeros(0, dtype=np.uint64), starts.astype(np.int64)
    with np.errstate(over="ignore"):
        inv_powers = np.full(arr.size, _WORD_PRIME_INV, dtype=np.uint64)
        inv_powers[0] = 1
        inv_powers = np.cumprod(inv_powers, dtype=np.uint64)  # P1^-j
        prefix = np.cumsum(arr.astype(np.uint64) * inv_powers, dtype=np.uint64)
        before = np.where(starts > 0, prefix[np.maximum(starts - 1, 0)], np.uint64(0))
        span = prefix[ends - 1] - before
        powers = np.full(arr.size, WORD_PRIME, dtype=np.uint64)
        powers[0] = 1
        powers = np.cumprod(powers, dtype=np.uint64)  # P1^j
        raw = span * powers[ends - 1]
    return _fmix64(raw), starts.astype(np.int64)


def word_hashes(words: list[str]) -> U64:
    """Step 2 for a list of already normalised words."""
    hashes, _ = word_hashes_of_buffer(" ".join(words).encode("utf-8"))
    return hashes


def ngram_hashes(hashes: U64, n: int) -> U64:
    """Hashes (step 3) of every run of `n` consecutive words, in order; empty if too short.

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
    import hashlib

    return "sha256:" + hashlib.sha256(" ".join(normalise_words(text)).encode("utf-8")).hexdigest()
