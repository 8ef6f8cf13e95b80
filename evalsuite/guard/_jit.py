"""The numba-compiled screening loop (imported by `_kernel.kernel` only, never at start-up).

See ``_kernel.py`` for what it computes and how it is checked against the numpy path.
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np

from evalsuite._core.text import NGRAM_PRIME, WORD_PRIME

__all__ = ["blank", "gather", "scan", "screen", "screen_prepared", "splice"]

_WORD_PRIME = np.uint64(WORD_PRIME)
_NGRAM_PRIME = np.uint64(NGRAM_PRIME)
_C1 = np.uint64(0xFF51AFD7ED558CCD)
_C2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)
_S3 = np.uint64(3)
_SEVEN = np.uint64(7)
_ONE = np.uint8(1)
_ZERO = np.uint64(0)
_U1 = np.uint64(1)


@numba.njit(cache=True, nogil=True, inline="always")
def _fmix(h: Any) -> Any:  # pragma: no cover - compiled
    h ^= h >> _S33
    h *= _C1
    h ^= h >> _S33
    h *= _C2
    h ^= h >> _S33
    return h


@numba.njit(cache=True, nogil=True, inline="always")
def _holds(table: Any, packed: bool, slot: Any) -> Any:  # pragma: no cover - compiled
    if packed:
        return ((table[slot >> _S3] >> np.uint8(slot & _SEVEN)) & _ONE) != 0
    return table[slot] != 0


@numba.njit(cache=True, nogil=True, inline="always")
def _passes(table: Any, shift: Any, packed: bool, value: Any) -> Any:  # pragma: no cover
    """`BitFilter`'s two probes: the top bits, then (rarely reached) the bottom bits."""
    return _holds(table, packed, value >> shift) and _holds(
        table, packed, (value << shift) >> shift
    )


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
    `flags` (uint64; 1: ends a word, 2: kept). Every byte writes the open word's hash at the slot
    of the next word (one store, to a cache line in use); the count moves on only at a
    word's end. The separator is the one branch (rare, predicted). Returns the word hashes,
    the first word of each document (then the number of words) and where each document
    ends in `data`.
    """
    size = data.size
    hashes = np.empty(size // 2 + 2, dtype=np.uint64)
    doc_words = np.zeros(n_docs + 1, dtype=np.int64)
    doc_ends = np.empty(n_docs, dtype=np.int64)
    # unsigned counters: an index numba cannot prove non-negative costs a wrap-around check
    # (``a[-1]``) at every use, a quarter of this loop's time
    words = _ZERO
    docs = _ZERO
    h = _ZERO
    inside = _ZERO
    for i in range(size):
        c = data[i]
        f = flags[c]
        hashes[words] = h
        words += inside & f
        inside = (inside & ~f) | (f >> _U1)
        h = h * mul[c] + add[c]
        if c == separator:
            doc_ends[docs] = i
            docs += _U1
            doc_words[docs] = words
    if inside:
        hashes[words] = h
        words += _U1
    out = np.empty(words, dtype=np.uint64)  # the final hashes, in one pass
    for k in range(words):
        out[k] = _fmix(hashes[k])
    doc_ends[n_docs - 1] = size
    doc_words[n_docs] = words
    return out, doc_words, doc_ends


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
    """Positions and hashes of the n-grams and m-gram heads that pass the bit filters.

    ``m = 0``: no heads (an index without short texts), only n-grams.
    """
    words = hashes.size
    n_heads = max(words - m + 1, 0) if m > 0 else 0
    n_grams = max(words - n + 1, 0)
    gram_pos = np.empty(n_grams, dtype=np.int64)
    gram_val = np.empty(n_grams, dtype=np.uint64)
    head_pos = np.empty(n_heads, dtype=np.int64)
    head_val = np.empty(n_heads, dtype=np.uint64)
    found_grams = 0
    found_heads = 0
    # rolling: the next window's hash from this one's (exact: arithmetic mod 2**64)
    top_m = _power(_NGRAM_PRIME, max(m - 1, 0))
    top_n = _power(_NGRAM_PRIME, n - 1)
    head = np.uint64(0)
    gram = np.uint64(0)
    for j in range(min(m - 1, words)):
        head = head * _NGRAM_PRIME + hashes[j]
    for j in range(min(n - 1, words)):
        gram = gram * _NGRAM_PRIME + hashes[j]
    for i in range(max(n_heads, n_grams)):
        if i < n_heads:
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


@numba.njit(cache=True, nogil=True)
def _scan(data: Any, separator: int) -> Any:  # pragma: no cover - compiled
    r"""`evalsuite._core.text.Scanned` of a joined batch, as arrays, in three passes.

    A vectorised pass marks the bytes that matter (``\ < [``, the separator, bytes >= 128);
    the marks are read eight at a time (most words of eight are zero) and compacted into
    positions; only those positions are looked at one by one. A line for the Unicode path
    (a byte >= 128, or ``\u``) is found by walking to its line break or separator on both
    sides; the marks inside a line already found are skipped, so each byte is walked once.
    """
    size = data.size
    marks = np.zeros(size - size % 8 + 8, dtype=np.uint8)
    for i in range(size):
        c = data[i]
        marks[i] = (c == 92) | (c == 60) | (c == 91) | (c == separator) | (c >= 128)
    eights = marks.view(np.uint64)
    marked = np.empty(size + 8, dtype=np.int64)
    count = np.int64(0)
    for q in range(eights.size):
        word = eights[q]
        if word != 0:  # branch-free compaction of the (rare) marked bytes of this word
            for j in range(8):
                marked[count] = q * 8 + j
                count += np.int64((word >> np.uint64(8 * j)) & np.uint64(1))
    specials = np.empty(count, dtype=np.int64)
    spans = np.empty((count + 1, 2), dtype=np.int64)
    n_specials = 0
    n_spans = 0
    separators = 0
    span_end = -1
    for t in range(count):
        i = marked[t]
        c = data[i]
        if c == separator:
            separators += 1
            continue
        if c < 128:
            specials[n_specials] = i
            n_specials += 1
            if c != 92 or i + 1 >= size or data[i + 1] != 117:
                continue
        if i < span_end:  # inside the line found last
            continue
        lo = i
        while lo > 0 and data[lo - 1] != 10 and data[lo - 1] != separator:
            lo -= 1
        hi = i
        while hi < size and data[hi] != 10 and data[hi] != separator:
            hi += 1
        spans[n_spans, 0] = lo
        spans[n_spans, 1] = hi
        n_spans += 1
        span_end = hi
    return specials[:n_specials].copy(), spans[:n_spans].copy(), separators


def scan(data: bytes, separator: int, regions: Any = None) -> tuple[Any, Any, int]:
    """`evalsuite._core.text.scan_v3`, compiled (the same `Scanned`; `regions` unused)."""
    specials, spans, separators = _scan(np.frombuffer(data, dtype=np.uint8), separator)
    return specials, spans, int(separators)


_NOT_IN_PIPE_MARKER = np.zeros(256, dtype=np.uint8)
_NOT_IN_PIPE_MARKER[[9, 10, 11, 12, 13, 32, 124, 60, 62, 1]] = 1  # \s | < > \x01 (bytes `re`)
_TAG_BYTES = np.zeros(256, dtype=np.uint8)  # [a-z0-9_] under IGNORECASE: 1 letter, 2 digit or _
_TAG_BYTES[[*range(65, 91), *range(97, 123)]] = 1
_TAG_BYTES[[*range(48, 58), 95]] = 2
_ESCAPED = np.zeros(256, dtype=np.uint8)
_ESCAPED[list(b"nrtbf")] = 1


@numba.njit(cache=True, nogil=True, inline="always")
def _lower(c: Any) -> Any:  # pragma: no cover - compiled
    return c | np.uint8(32) if 65 <= c <= 90 else c


@numba.njit(cache=True, nogil=True)
def _pipe_end(b: Any, p: int, excluded: Any) -> int:  # pragma: no cover - compiled
    """``<|...|>`` at `p`: up to 64 bytes outside `excluded`, then ``|>``."""
    n = b.size
    q = p + 2
    while q < n and excluded[b[q]] == 0:
        q += 1
        if q - (p + 2) > 64:
            return -1
    if q + 1 < n and b[q] == 124 and b[q + 1] == 62:
        return q + 2
    return -1


_SYS = np.frombuffer(b"sys>>", dtype=np.uint8)
_INST = np.frombuffer(b"inst]", dtype=np.uint8)


@numba.njit(cache=True, nogil=True)
def _literal_end(b: Any, q: int, literal: Any) -> int:  # pragma: no cover - compiled
    """End of an optional ``/`` then `literal` (lower case; any case in `b`) at `q`, or -1."""
    n = b.size
    size: int = literal.size
    if q < n and b[q] == 47:
        q += 1
    if q + size > n:
        return -1
    for k in range(size):
        if _lower(b[q + k]) != literal[k]:
            return -1
    return q + size


@numba.njit(cache=True, nogil=True)
def _tag_end(b: Any, p: int, tag: Any) -> int:  # pragma: no cover - compiled
    """``</?[a-z][a-z0-9_]{0,31}>`` (any case) at `p`."""
    n = b.size
    q = p + 1
    if q < n and b[q] == 47:
        q += 1
    if q >= n or tag[b[q]] != 1:
        return -1
    q += 1
    start = q
    while q < n and tag[b[q]] != 0:
        q += 1
        if q - start > 31:
            return -1
    if q < n and b[q] == 62:
        return q + 1
    return -1


@numba.njit(cache=True, nogil=True)
def _angle_end(b: Any, p: int, excluded: Any, tag: Any) -> int:  # pragma: no cover
    """End of the ``<...>`` marker at `p` (`evalsuite._core.text._ANGLE_MARKER`), or -1.

    The pattern's three branches start with distinct bytes after ``<``; each repeat stops
    at a byte it cannot take, which is what the pattern's backtracking comes to.
    """
    if p + 1 >= b.size:
        return -1
    if b[p + 1] == 124:
        return _pipe_end(b, p, excluded)
    if b[p + 1] == 60:  # <<SYS>>, <</SYS>>
        return _literal_end(b, p + 2, _SYS)
    return _tag_end(b, p, tag)


@numba.njit(cache=True, nogil=True)
def _blank(
    data: Any, at: Any, skip: Any, excluded: Any, tag: Any, escaped: Any
) -> Any:  # pragma: no cover - compiled
    """`evalsuite._core.text._blank_v3` on bytes: (the blanked copy, whether any changed)."""
    n = data.size
    keep = np.empty(at.size, dtype=np.int64)
    kept = 0
    s = 0
    for t in range(at.size):  # the special bytes outside the Unicode-path lines
        p = at[t]
        while s < skip.shape[0] and skip[s, 1] <= p:
            s += 1
        if s < skip.shape[0] and skip[s, 0] <= p:
            continue
        keep[kept] = p
        kept += 1
    out = data.copy()
    changed = False
    for t in range(kept):  # escaped letters, read from the original bytes
        p = keep[t]
        if data[p] == 92 and p + 1 < n and escaped[data[p + 1]]:
            out[p + 1] = 32
            changed = True
    end = -1
    for t in range(kept):  # then <...> markers, matched on the blanked bytes
        p = keep[t]
        if data[p] != 60 or p < end:
            continue
        stop = _angle_end(out, p, excluded, tag)
        if stop >= 0:
            out[p:stop] = 32
            end = stop
            changed = True
    end = -1
    for t in range(kept):  # then [INST] markers, unless an angle marker blanked them
        p = keep[t]
        if data[p] != 91 or p < end or out[p] != 91:
            continue
        stop = _literal_end(out, p + 1, _INST)  # [INST], [/INST], any case
        if stop >= 0:
            out[p:stop] = 32
            end = stop
            changed = True
    return out, changed


def blank(data: bytes, separator: int, skip: Any, specials: Any) -> bytes:
    """`evalsuite._core.text.blank_v3`, compiled (the same bytes)."""
    excluded = _NOT_IN_PIPE_MARKER.copy()
    excluded[separator] = 1
    out, changed = _blank(
        np.frombuffer(data, dtype=np.uint8), specials, skip, excluded, _TAG_BYTES, _ESCAPED
    )
    return out.tobytes() if changed else data


@numba.njit(cache=True, nogil=True)
def _gather(data: Any, spans: Any) -> Any:  # pragma: no cover - compiled
    size = max(spans.shape[0] - 1, 0)
    for k in range(spans.shape[0]):
        size += spans[k, 1] - spans[k, 0]
    out = np.empty(size, dtype=np.uint8)
    at = 0
    for k in range(spans.shape[0]):
        if k:
            out[at] = 10
            at += 1
        lo, hi = spans[k, 0], spans[k, 1]
        out[at : at + hi - lo] = data[lo:hi]
        at += hi - lo
    return out


def gather(data: bytes, spans: Any) -> bytes:
    """`evalsuite._core.text.gather_v3`, compiled (the same bytes)."""
    return bytes(_gather(np.frombuffer(data, dtype=np.uint8), spans).data)


@numba.njit(cache=True, nogil=True)
def _splice(data: Any, spans: Any, done: Any, starts: Any, stops: Any) -> Any:  # pragma: no cover
    size = data.size
    for k in range(spans.shape[0]):
        size += (stops[k] - starts[k]) - (spans[k, 1] - spans[k, 0])
    out = np.empty(size, dtype=np.uint8)
    at = 0
    previous = 0
    for k in range(spans.shape[0]):
        lo = spans[k, 0]
        out[at : at + lo - previous] = data[previous:lo]
        at += lo - previous
        length = stops[k] - starts[k]
        out[at : at + length] = done[starts[k] : stops[k]]
        at += length
        previous = spans[k, 1]
    out[at:] = data[previous:]
    return out


def splice(data: bytes, spans: Any, done: bytes, starts: Any, stops: Any) -> bytes:
    """`evalsuite._core.text.splice_v3`, compiled (the same bytes)."""
    return bytes(
        _splice(
            np.frombuffer(data, dtype=np.uint8),
            spans,
            np.frombuffer(done, dtype=np.uint8),
            starts,
            stops,
        ).data
    )
