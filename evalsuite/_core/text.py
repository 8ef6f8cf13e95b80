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

import itertools
import sys
import unicodedata
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "NGRAM_PRIME",
    "WORD_PRIME",
    "fast_word_hashes",
    "ngram_hashes",
    "normalise_ascii",
    "normalise_ascii_zero_gaps",
    "normalise_text",
    "normalise_unicode_batch",
    "normalise_unicode_bytes",
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


# ---------------------------------------------------------------------------------------------
# Fast paths with identical results (curriculum screening): tested against the functions above.


@cache
def _alnum_table() -> npt.NDArray[np.bool_]:
    """``str.isalnum`` of every code point (1.1 MB, built once in ~0.1 s)."""
    return np.array([chr(c).isalnum() for c in range(sys.maxunicode + 1)], dtype=np.bool_)


def normalise_unicode_bytes(text: str) -> bytes:
    """``normalise_text(text).encode()`` for any text, about four times faster.

    NFKC and lowercasing run in C; the "alphanumeric or space" step is one table look-up per
    code point in numpy instead of a Python loop. Lone surrogates (possible in JSON input) are
    not alphanumeric and become spaces, where ``normalise_text(...).encode()`` would raise.
    """
    if text.isascii():
        return normalise_ascii(text.encode("ascii"))
    if not unicodedata.is_normalized("NFKC", text):  # a quick check, 100x faster than NFKC
        text = unicodedata.normalize("NFKC", text)
    text = text.lower()
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).copy()
    points[~_alnum_table()[points]] = 32
    return points.tobytes().decode("utf-32-le").encode("utf-8")


def normalise_unicode_batch(texts: list[str]) -> list[bytes]:
    """`normalise_unicode_bytes` of each text, with one numpy pass for the whole list."""
    lowered = [
        (t if unicodedata.is_normalized("NFKC", t) else unicodedata.normalize("NFKC", t)).lower()
        for t in texts
    ]
    points = np.frombuffer("".join(lowered).encode("utf-32-le", "surrogatepass"), np.uint32)
    points = points.copy()
    points[~_alnum_table()[points]] = 32
    data = points.tobytes()
    out: list[bytes] = []
    start = 0
    for text in lowered:
        end = start + 4 * len(text)
        out.append(data[start:end].decode("utf-32-le").encode("utf-8"))
        start = end
    return out


class _PowerTables:
    """``prime**j`` and ``prime**-j`` mod 2**64 for j < size, grown on demand and kept."""

    def __init__(self, prime: int) -> None:
        self.prime = prime
        self.powers: U64 = np.ones(1, dtype=np.uint64)
        self.inverse: U64 = np.ones(1, dtype=np.uint64)

    def ensure(self, size: int) -> tuple[U64, U64]:
        if self.powers.size < size:
            size = max(size, 2 * self.powers.size)
            with np.errstate(over="ignore"):
                powers = np.full(size, self.prime, dtype=np.uint64)
                powers[0] = 1
                inverse = np.full(size, pow(self.prime, -1, 1 << 64), dtype=np.uint64)
                inverse[0] = 1
                self.powers = np.multiply.accumulate(powers)
                self.inverse = np.multiply.accumulate(inverse)
        return self.powers, self.inverse


_TABLES = _PowerTables(WORD_PRIME)
_BLOCK = 1 << 18
"""Bytes hashed per step: large enough to amortise numpy's call overhead, small enough that
the uint64 temporaries stay below the allocator's mmap threshold (fresh pages are slow)."""


_ZERO_GAP_TABLE = bytes(0 if c == 32 else c for c in _ASCII_TABLE)


def normalise_ascii_zero_gaps(data: bytes) -> bytes:
    """`normalise_ascii` with every byte between words 0 instead of a space.

    Also maps the spaces of already normalised text to 0, so it applies to a buffer that
    mixes raw ASCII and ``normalise_unicode_bytes`` output. For ``fast_word_hashes(...,
    zero_gaps=True)``; the words, and so every hash, are the same.
    """
    return data.translate(_ZERO_GAP_TABLE)


def fast_word_hashes(
    data: bytes | npt.NDArray[np.uint8], *, block: int = _BLOCK, zero_gaps: bool = False
) -> tuple[U64, npt.NDArray[np.int64]]:
    """Same result as `word_hashes_of_buffer`, two to four times faster on large buffers.

    The buffer is hashed in blocks of about `block` bytes that end at word boundaries, with
    power tables computed once per process instead of once per call. With `zero_gaps` (every
    byte between words is 0, see `normalise_ascii_zero_gaps`), a word's hash comes from the
    prefix sums at its end and at the previous word's end, which saves a few passes.
    """
    arr = np.frombuffer(data, dtype=np.uint8) if isinstance(data, bytes) else data
    padded = np.zeros(arr.size + 2, dtype=np.bool_)
    np.greater(arr, 32, out=padded[1:-1])
    change = np.flatnonzero(padded[1:] != padded[:-1])  # word starts and ends alternate
    starts, ends = change[0::2], change[1::2]
    raw = np.empty(starts.size, dtype=np.uint64)
    if starts.size == 0:
        return raw, starts.astype(np.int64)
    cuts = np.searchsorted(starts, np.arange(0, arr.size, block))
    cuts = np.unique(np.append(cuts, starts.size))
    longest = int((ends - starts).max())
    powers, inverse = _TABLES.ensure(max(block, longest) + longest + 1)
    with np.errstate(over="ignore"):
        for first, stop in itertools.pairwise(cuts.tolist()):
            lo, hi = int(starts[first]), int(ends[stop - 1])
            prefix = np.multiply(arr[lo:hi], inverse[: hi - lo], dtype=np.uint64)
            np.cumsum(prefix, out=prefix)
            e = ends[first:stop] - (lo + 1)
            if zero_gaps:
                span = np.diff(prefix[e], prepend=np.uint64(0))
            else:
                s = starts[first:stop] - lo
                span = prefix[s - 1]
                span[s == 0] = 0
                np.subtract(prefix[e], span, out=span)
            np.multiply(span, powers[e], out=raw[first:stop])
    return _fmix64(raw), starts.astype(np.int64)
