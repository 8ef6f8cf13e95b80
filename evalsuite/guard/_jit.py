"""The numba-compiled screening loop (imported by `_kernel.kernel` only, never at start-up).

See ``_kernel.py`` for what it computes and how it is checked against the numpy path.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from evalsuite._core.text import NGRAM_PRIME, WORD_PRIME

__all__ = ["screen", "screen_prepared", "special_positions", "unicode_lines"]

_WORD_PRIME = np.uint64(WORD_PRIME)
_NGRAM_PRIME = np.uint64(NGRAM_PRIME)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S3 = np.uint64(3)
_SEVEN = np.uint64(7)
_ONE = np.uint8(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _fmix(h: Any) -> Any:  # pragma: no cover - compiled
    h ^= h >> _S33
    h *= _C1
    h ^= h >> _S33
    h *= _C2
    h ^= h >> _S33
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _passes(table: Any, shift: Any, packed: bool, value: Any) -> Any:  # pragma: no cover
    slot = value >> shift
    if packed:
        return ((table[slot >> _S3] >> np.uint8(slot & _SEVEN)) & _ONE) != 0
    return table[slot] != 0


@numba.njit(cache=True, nogil=True)
def _power(base: Any, exponent: int) -> Any:  # pragma: no cover - compiled
    out = np.uint64(1)
    for _ in range(exponent):
        out *= base
    return out


@numba.njit(cache=True, nogil=True)
def _word_hashes(buf: Any) -> Any:  # pragma: no cover - compiled
    """Branch-free: the ends of words are unpredictable, so every byte stores its state."""
    size = buf.size
    cap = size // 2 + 2
    hashes = np.empty(cap, dtype=np.uint64)
    starts = np.empty(cap, dtype=np.int64)
    words = 0
    h = np.uint64(0)
    start = 0
    inside = False
    for i in range(size):
        c = buf[i]
        word = c > 32
        begins = word and not inside
        start = i if begins else start
        hashes[words] = h
        starts[words] = start
        words += inside and not word
        h = h * _WORD_PRIME + np.uint64(c) if word else np.uint64(0)
        inside = word
    if inside:
        hashes[words] = h
        starts[words] = start
        words += 1
    for k in range(words):
        hashes[k] = _fmix(hashes[k])
    return hashes[:words].copy(), starts[:words].copy()


@numba.njit(cache=True, nogil=True)
def _prepared_words(
    data: Any, mul: Any, add: Any, flags: Any, separator: int, n_docs: int
) -> Any:  # pragma: no cover - compiled
    """Step 5 of spec /3 and the word hashes in one pass over a `PreparedBatch`'s bytes.

    Branch-free (word ends are unpredictable), from three tables of the byte: the word
    hash steps ``h = h * mul + add`` (``WORD_PRIME`` and the kept byte; 1 and 0 for a
    deleted byte; 0 and 0 for white space and the separator, which end the word) and
    `flags` (1: ends a word, 2: kept). Every byte writes the open word's hash at the slot
    of the next word (one store, to a cache line in use); the count moves on only at a
    word's end. The separator is the one branch (rare, predicted). Returns the word hashes,
    the first word of each document (then the number of words) and where each document
    ends in `data`.
    """
    size = data.size
    hashes = np.empty(size // 2 + 2, dtype=np.uint64)
    doc_words = np.zeros(n_docs + 1, dtype=np.int64)
    doc_ends = np.empty(n_docs, dtype=np.int64)
    words = np.int64(0)
    docs = 0
    h = np.uint64(0)
    inside = np.int64(0)
    for i in range(size):
        c = data[i]
        f = flags[c]
        hashes[words] = h
        words += inside & f
        inside = (inside & ~f) | (f >> 1)
        h = h * mul[c] + add[c]
        if c == separator:
            doc_ends[docs] = i
            docs += 1
            doc_words[docs] = words
    if inside:
        hashes[words] = h
        words += 1
    for k in range(words):
        hashes[k] = _fmix(hashes[k])
    doc_ends[n_docs - 1] = size
    doc_words[n_docs] = words
    return hashes[:words].copy(), doc_words, doc_ends


@numba.njit(cache=True, nogil=True)
def _candidates(  # noqa: PLR0913 - the index's two filters, unpacked for the compiled code
    hashes: Any,
    n: int,
    m: int,
    gram_table: Any,
    gram_shift: Any,
    gram_packed: bool,
    head_table: Any,
    head_shift: Any,
    head_packed: bool,
) -> Any:  # pragma: no cover - compiled
    """Positions and hashes of the n-grams and m-gram heads that pass the bit filters."""
    words = hashes.size
    n_heads = max(words - m + 1, 0)
    n_grams = max(words - n + 1, 0)
    gram_pos = np.empty(n_grams, dtype=np.int64)
    gram_val = np.empty(n_grams, dtype=np.uint64)
    head_pos = np.empty(n_heads, dtype=np.int64)
    head_val = np.empty(n_heads, dtype=np.uint64)
    found_grams = 0
    found_heads = 0
    # rolling: the next window's hash from this one's (exact: arithmetic mod 2**64)
    top_m = _power(_NGRAM_PRIME, m - 1)
    top_n = _power(_NGRAM_PRIME, n - 1)
    head = np.uint64(0)
    gram = np.uint64(0)
    for j in range(min(m - 1, words)):
        head = head * _NGRAM_PRIME + hashes[j]
    for j in range(min(n - 1, words)):
        gram = gram * _NGRAM_PRIME + hashes[j]
    for i in range(n_heads):
        head = head * _NGRAM_PRIME + hashes[i + m - 1]
        if _passes(head_table, head_shift, head_packed, head):
            head_pos[found_heads] = i
            head_val[found_heads] = head
            found_heads += 1
        head -= hashes[i] * top_m
        if i < n_grams:
            gram = gram * _NGRAM_PRIME + hashes[i + n - 1]
            if _passes(gram_table, gram_shift, gram_packed, gram):
                gram_pos[found_grams] = i
                gram_val[found_grams] = gram
                found_grams += 1
            gram -= hashes[i] * top_n
    return (
        gram_pos[:found_grams].copy(),
        gram_val[:found_grams].copy(),
        head_pos[:found_heads].copy(),
        head_val[:found_heads].copy(),
    )


@numba.njit(cache=True, nogil=True)
def screen(  # noqa: PLR0913 - the index's two filters, unpacked for the compiled code
    buf: Any,
    n: int,
    m: int,
    gram_table: Any,
    gram_shift: Any,
    gram_packed: bool,
    head_table: Any,
    head_shift: Any,
    head_packed: bool,
) -> Any:  # pragma: no cover - compiled
    """Word hashes and starts of a normalised buffer; n-grams and m-gram heads that pass."""
    hashes, starts = _word_hashes(buf)
    gram_pos, gram_val, head_pos, head_val = _candidates(
        hashes, n, m, gram_table, gram_shift, gram_packed, head_table, head_shift, head_packed
    )
    return hashes, starts, gram_pos, gram_val, head_pos, head_val


@numba.njit(cache=True, nogil=True)
def screen_prepared(  # noqa: PLR0913 - the index's two filters, unpacked for the compiled code
    data: Any,
    mul: Any,
    add: Any,
    flags: Any,
    separator: int,
    n_docs: int,
    n: int,
    m: int,
    gram_table: Any,
    gram_shift: Any,
    gram_packed: bool,
    head_table: Any,
    head_shift: Any,
    head_packed: bool,
) -> Any:  # pragma: no cover - compiled
    """`screen` of a `PreparedBatch` (step 5 of spec /3 fused into the word pass).

    Returns word hashes, each document's first word (then the number of words), each
    document's end in `data`, and the n-grams and m-gram heads that pass.
    """
    hashes, doc_words, doc_ends = _prepared_words(data, mul, add, flags, separator, n_docs)
    gram_pos, gram_val, head_pos, head_val = _candidates(
        hashes, n, m, gram_table, gram_shift, gram_packed, head_table, head_shift, head_packed
    )
    return hashes, doc_words, doc_ends, gram_pos, gram_val, head_pos, head_val


_SPECIAL = np.zeros(256, dtype=np.uint8)
_SPECIAL[[ord("\\"), ord("<"), ord("[")]] = 1


@numba.njit(cache=True, nogil=True)
def _special_positions(data: Any, special: Any) -> Any:  # pragma: no cover - compiled
    out = np.empty(data.size, dtype=np.int64)  # pages are touched only as far as written
    k = 0
    for i in range(data.size):
        if special[data[i]]:  # rare: a predicted branch
            out[k] = i
            k += 1
    return out[:k].copy()


def special_positions(data: bytes) -> Any:
    """`evalsuite._core.text.special_positions`, compiled: one scan."""
    return _special_positions(np.frombuffer(data, dtype=np.uint8), _SPECIAL)


_LINE_BYTES = np.zeros(256, dtype=np.uint8)
_LINE_BYTES[10] = 1  # a line break ends a line (and so does the separator: `_line_bytes`)
_LINE_BYTES[128:] = 2  # a non-ASCII byte
_LINE_BYTES[92] = 3  # a backslash, maybe of a \u escape


def _line_bytes(separator: int) -> Any:
    table = _LINE_BYTES.copy()
    table[separator] = 1
    return table


@numba.njit(cache=True, nogil=True)
def _unicode_lines(data: Any, table: Any) -> Any:  # pragma: no cover - compiled
    size = data.size
    spans = np.empty((size // 2 + 1, 2), dtype=np.int64)  # a flagged line has 1 byte and an end
    count = 0
    start = 0
    flagged = False
    for i in range(size):
        k = table[data[i]]
        if k == 0:
            continue
        if k == 1:
            if flagged:
                spans[count, 0] = start
                spans[count, 1] = i
                count += 1
                flagged = False
            start = i + 1
        elif k == 2 or (i + 1 < size and data[i + 1] == 117):
            flagged = True
    if flagged:
        spans[count, 0] = start
        spans[count, 1] = size
        count += 1
    return spans[:count].copy()


def unicode_lines(data: bytes, separator: int) -> list[tuple[int, int]]:
    r"""`evalsuite._core.text.Lines`, compiled: one pass, lines with a byte >= 128 or ``\u``."""
    spans = _unicode_lines(np.frombuffer(data, dtype=np.uint8), _line_bytes(separator))
    return [(lo, hi) for lo, hi in spans.tolist()]
