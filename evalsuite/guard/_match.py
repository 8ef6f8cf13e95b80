"""Vectorised matching of a batch of documents against one part of a `FingerprintIndex`.

The whole batch is one normalised byte buffer (documents separated by a 0 byte, in the part's
text spec): one pass computes every word hash and every n-gram hash, a bit filter and a
binary search find the n-grams that are fingerprints, and only those few are mapped back to
(document, item).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count, repeat
from operator import contains

import numpy as np
import numpy.typing as npt

from evalsuite._core.text import (
    NGRAM_PRIME,
    NGRAM_V3,
    SPECS,
    PreparedBatch,
    fast_word_hashes,
    prepare_batch_v3,
)
from evalsuite.guard._index import PartIndex
from evalsuite.guard._kernel import (
    byte_tables,
    kernel,
    prepared_kernel,
    steps,
)

__all__ = ["BatchMatches", "find_canaries", "match_batch"]

I64 = npt.NDArray[np.int64]
U64 = npt.NDArray[np.uint64]
_MASK = (1 << 64) - 1
_NONE = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))


@dataclass(frozen=True, slots=True)
class BatchMatches:
    """What a batch of documents shares with the index; document numbers are batch positions.

    Triples are unique: ``(gram_doc[k], gram_item[k], gram_id[k])`` says that document
    ``gram_doc[k]`` contains n-gram ``grams[gram_id[k]]`` of item ``gram_item[k]``.
    """

    gram_doc: I64
    gram_item: I64
    gram_id: I64
    short_doc: I64
    short_item: I64
    short_id: I64
    """Index of the short-text entry found (``short_len[short_id]`` words)."""
    exact: list[tuple[int, int]]
    """(document, item) whose normalised text equals one of the item's texts."""
    n_bytes: int
    """UTF-8 size of the documents."""
    canaries: list[tuple[int, str]] | None = None
    """`find_canaries` of the documents and the canaries asked for (None: none asked for)."""


def find_canaries(texts: Sequence[str], canaries: Iterable[str]) -> list[tuple[int, str]]:
    """(document, canary) for every canary found verbatim inside one document, sorted.

    Each document is searched by itself (no joined copy of the batch, no boundary checks),
    in a C-level loop (`operator.contains` mapped over the texts: no Python frame per text).

    Args:
        texts: The documents.
        canaries: The canary strings to look for.
    """
    return sorted(
        (doc, canary)
        for canary in canaries
        for doc in compress(count(), map(contains, texts, repeat(canary)))
    )


def _joined_canaries(
    n_docs: int, raw: bytes, separator: int, canaries: Iterable[str]
) -> list[tuple[int, str]]:
    """`find_canaries` of a batch from its documents joined by `separator` (`raw`, UTF-8).

    One ``bytes.find`` over the batch per canary and document holding it (several times
    faster than searching each document's `str`), and the same pairs: a canary is inside a
    document exactly when its UTF-8 bytes are inside the document's (UTF-8 is
    self-synchronising), and an occurrence never spans two documents (the separator joining
    them is in no document, so a canary holding it is in none).
    """
    sep = separator.to_bytes(1, "little")
    found: list[tuple[int, str]] = []
    for canary in canaries:
        needle = canary.encode("utf-8", "surrogatepass")
        if not needle:  # in every document, as `str.__contains__` says
            found.extend((doc, canary) for doc in range(n_docs))
            continue
        if sep in needle:
            continue
        doc, start = 0, 0
        at = raw.find(needle)
        while at >= 0:
            doc += raw.count(sep, start, at)
            found.append((doc, canary))
            start = raw.find(sep, at)  # the end of this document: on to the next one
            if start < 0:
                break
            at = raw.find(needle, start)
    return sorted(found)


def _expand(owner_ptr: I64, ids: I64) -> tuple[I64, I64]:
    """For each id, the range ``owner_ptr[id]:owner_ptr[id + 1]``: (repeat index, position)."""
    counts = owner_ptr[ids + 1] - owner_ptr[ids]
    which = np.repeat(np.arange(ids.size, dtype=np.int64), counts)
    first = np.repeat(owner_ptr[ids] - np.cumsum(counts) + counts, counts)
    return which, first + np.arange(which.size, dtype=np.int64)


def _unique_rows(*columns: I64) -> tuple[I64, ...]:
    """Distinct rows of parallel integer columns, sorted (lexsort beats ``unique(axis=1)``)."""
    if columns[0].size == 0:
        return columns
    order = np.lexsort(columns[::-1])
    sorted_columns = [c[order] for c in columns]
    change = np.zeros(order.size, dtype=np.bool_)
    change[0] = True
    for c in sorted_columns:
        change[1:] |= c[1:] != c[:-1]
    return tuple(c[change] for c in sorted_columns)


def _rolling(word_hashes: U64, n: int, m: int) -> tuple[U64, U64]:
    """Hashes of every n-gram and every m-gram (``m <= n``), sharing the first m steps.

    Same values as ``ngram_hashes(word_hashes, n)`` and ``ngram_hashes(word_hashes, m)``;
    in-place steps on one cache-resident array (faster here than prefix sums).
    """
    prime = np.uint64(NGRAM_PRIME)
    count = word_hashes.size - m + 1
    if count <= 0:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.uint64)
    acc = np.zeros(count, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for i in range(m):
            np.multiply(acc, prime, out=acc)
            np.add(acc, word_hashes[i : i + count], out=acc)
        short = acc.copy() if m < n else acc
        count = word_hashes.size - n + 1
        if count <= 0:
            return np.zeros(0, dtype=np.uint64), short
        acc = acc[:count]
        for i in range(m, n):
            np.multiply(acc, prime, out=acc)
            np.add(acc, word_hashes[i : i + count], out=acc)
    return acc, short


def _gram_matches(
    index: PartIndex, found: tuple[I64, I64], doc_words: I64
) -> tuple[I64, I64, I64, I64]:
    """Unique (doc, item, gram) triples and the number of fingerprint n-grams of each doc.

    `found`: (word position, index into ``index.grams``) of every fingerprint n-gram.
    """
    n = index.n
    pos, gram = found
    doc = np.searchsorted(doc_words, pos, side="right") - 1
    inside = pos + n <= doc_words[doc + 1]  # n-grams across a document boundary are dropped
    pos, gram, doc = pos[inside], gram[inside], doc[inside]
    per_doc = np.bincount(doc, minlength=doc_words.size - 1).astype(np.int64)
    which, owner = _expand(index.gram_ptr, gram)
    items = index.gram_items[owner].astype(np.int64)
    d, i, g = _unique_rows(doc[which], items, gram[which])
    return d, i, g, per_doc


def _window_hash(word_hashes: U64, start: int, length: int) -> int:
    acc = 0
    for h in word_hashes[start : start + length].tolist():
        acc = (acc * NGRAM_PRIME + h) & _MASK
    return acc


def _short_matches(
    index: PartIndex, word_hashes: U64, found: tuple[I64, I64], doc_words: I64
) -> tuple[I64, I64, I64]:
    """Unique (doc, item, short entry) of short texts found whole inside a document.

    `found`: (word position, index into ``index.short_heads``) of every short-text head.
    """
    empty = np.zeros(0, dtype=np.int64)
    if index.short_heads.size == 0:
        return empty, empty, empty
    pos, head = found
    doc = np.searchsorted(doc_words, pos, side="right") - 1
    which, entry = _expand(index.short_ptr, head)
    matched: set[tuple[int, int, int]] = set()
    for k, e in zip(which.tolist(), entry.tolist(), strict=True):
        p, d, length = int(pos[k]), int(doc[k]), int(index.short_len[e])
        if p + length <= doc_words[d + 1] and _window_hash(word_hashes, p, length) == int(
            index.short_whole[e]
        ):
            matched.add((d, int(index.short_item[e]), e))
    if not matched:
        return empty, empty, empty
    rows = np.array(sorted(matched), dtype=np.int64)
    return rows[:, 0], rows[:, 1], rows[:, 2]


def _exact_matches(
    index: PartIndex, doc_words: Callable[[int], list[bytes]], candidates: I64
) -> list[tuple[int, int]]:
    found: list[tuple[int, int]] = []
    for doc in candidates.tolist():
        key = "sha256:" + hashlib.sha256(b" ".join(doc_words(doc))).hexdigest()
        found.extend((doc, item) for item in index.exact.get(key, ()))
    return found


def _buffer_words(buffer: bytes, offsets: I64) -> Callable[[int], list[bytes]]:
    def words(doc: int) -> list[bytes]:
        return [w for w in buffer[offsets[doc] : offsets[doc + 1] - 1].split(b"\x00") if w]

    return words


def _prepared_words(prepared: PreparedBatch, ends: I64) -> Callable[[int], list[bytes]]:
    def words(doc: int) -> list[bytes]:
        return prepared.words(int(ends[doc - 1]) + 1 if doc > 0 else 0, int(ends[doc]))

    return words


def match_batch(
    texts: Sequence[str],
    index: PartIndex,
    *,
    whole: Sequence[bool] | None = None,
    compiled: bool = True,
    canaries: Collection[str] = (),
    sized: int | None = None,
) -> BatchMatches:
    """Find every fingerprint of one index part in a batch of documents.

    Args:
        texts: Raw document texts (a batch of about 1 MiB is fastest).
        index: Fingerprints to look for (one part: one text spec).
        whole: Per document, False when it is a piece of a longer document (then it is not
            compared with exact text hashes); default all True.
        compiled: Use the compiled kernel when it is available (`_kernel.kernel`); False
            forces the numpy path (the reference the kernel is tested against).
        canaries: Strings to find verbatim (`find_canaries`, here from the batch's joined
            bytes when the compiled kernel prepared them); none: `canaries` is None.
        sized: `n_bytes` counts only the first `sized` documents (default: all of them).

    Returns:
        The matches, with documents numbered by their position in `texts`.
    """
    m = index.short_min if index.short_heads.size else index.n  # every format has n >= m
    m_heads = m if index.short_heads.size else 0  # for the compiled kernels: 0 is no heads
    gf, hf = index.gram_filter, index.short_filter
    filters = (
        gf.table.view(np.uint8),
        np.uint64(gf.shift),
        gf.table.dtype != np.bool_,
        hf.table.view(np.uint8),
        np.uint64(hf.shift),
        hf.table.dtype != np.bool_,
    )
    fused = prepared_kernel() if compiled and index.spec == NGRAM_V3 else None
    found_canaries: list[tuple[int, str]] | None = None
    words_of: Callable[[int], list[bytes]]
    if fused is not None:  # spec /3: its last step fused into the compiled word pass
        prepared = prepare_batch_v3(texts, steps=steps())
        n_bytes = prepared.n_bytes
        word_hashes, doc_words, ends, gram_pos, gram_val, head_pos, head_val = fused(
            np.frombuffer(prepared.data, dtype=np.uint8),
            *byte_tables(prepared.separator),
            prepared.separator,
            max(prepared.n_docs, 1),
            index.n,
            m_heads,
            *filters,
        )
        doc_words = doc_words[: len(texts) + 1]
        in_grams = index.confirm_grams(gram_pos, gram_val)
        in_heads = index.confirm_short_heads(head_pos, head_val)
        words_of = _prepared_words(prepared, ends)
        if canaries and prepared.raw is not None:
            found_canaries = _joined_canaries(
                prepared.n_docs, prepared.raw, prepared.separator, canaries
            )
        if sized is not None and sized < len(texts) and prepared.raw is not None:
            joins = np.flatnonzero(
                np.frombuffer(prepared.raw, dtype=np.uint8) == prepared.separator
            )
            n_bytes = int(joins[sized - 1]) - (sized - 1) if sized else 0  # (the joins before)
            sized = None
    else:
        batch = SPECS[index.spec].batch(texts)
        buffer, offsets, n_bytes = batch.buffer, batch.offsets, batch.n_bytes
        screen = kernel() if compiled else None
        if screen is None:  # the numpy path: the reference
            word_hashes, word_starts = fast_word_hashes(buffer, zero_gaps=True)
            grams, heads = _rolling(word_hashes, index.n, m)
            in_grams = index.lookup_grams(grams)
            in_heads = index.lookup_short_heads(heads) if index.short_heads.size else _NONE
        else:
            word_hashes, word_starts, gram_pos, gram_val, head_pos, head_val = screen(
                np.frombuffer(buffer, dtype=np.uint8), index.n, m_heads, *filters
            )
            in_grams = index.confirm_grams(gram_pos, gram_val)
            in_heads = index.confirm_short_heads(head_pos, head_val)
        doc_words = np.searchsorted(word_starts, offsets).astype(np.int64)
        words_of = _buffer_words(buffer, offsets)
    if canaries and found_canaries is None:
        found_canaries = find_canaries(texts, canaries)
    if sized is not None and sized < len(texts):
        n_bytes -= sum(len(t.encode("utf-8", "surrogatepass")) for t in texts[sized:])
    gram_doc, gram_item, gram_id, per_doc = _gram_matches(index, in_grams, doc_words)
    short_doc, short_item, short_id = _short_matches(index, word_hashes, in_heads, doc_words)
    exact: list[tuple[int, int]] = []
    if index.exact:
        n_words = np.diff(doc_words)
        # an exact copy of a text with n-grams has all of its n-grams among the keys
        maybe = (n_words < index.long_min) | (per_doc == n_words - index.n + 1)
        if whole is not None:
            maybe &= np.asarray(whole, dtype=np.bool_)
        exact = _exact_matches(index, words_of, np.flatnonzero(maybe & (n_words > 0)))
    return BatchMatches(
        gram_doc=gram_doc,
        gram_item=gram_item,
        gram_id=gram_id,
        short_doc=short_doc,
        short_item=short_item,
        short_id=short_id,
        exact=exact,
        n_bytes=n_bytes,
        canaries=found_canaries,
    )
