r"""Text normalisation and hashed word n-grams: the fingerprint specs shared by freeze and guard.

Two specs exist; a fingerprint file names the one it was made with (its ``hash`` field) and
the guard normalises documents the same way. Both hash words and n-grams identically:

- Word hash, from the UTF-8 bytes ``b_1..b_L`` of a normalised word:
  ``fmix64(sum(b_i * P1**(L-i)) mod 2**64)`` with ``P1 = 0x100000001B3`` and ``fmix64`` the
  MurmurHash3 64-bit finaliser.
- N-gram hash of words ``w_1..w_n``: ``sum(h(w_i) * P**(n-i)) mod 2**64`` with
  ``P = 0x9E3779B97F4A7C15``.
- Text hash (exact match key): SHA-256 of the normalised words joined by single spaces.

They differ in how text becomes words:

``evalsuite-ngram/2`` (fingerprint formats /1 and /2): NFKC-normalise and lowercase; every
character that is neither alphanumeric nor white space becomes a space; split on white space.
So ``T-18699`` is two words and ``T18699`` one.

``evalsuite-ngram/3`` (format /3, the current one; ``docs/design/guard-normalisation.md``):

1. JSON escapes: ``\uXXXX`` (and surrogate pairs) become the character; a letter
   ``n r t b f`` after a backslash becomes a space (so ``\n`` separates words, however many
   times the text was escaped).
2. NFKC.
3. Chat-template markers become spaces: ``<|...|>`` (no white space inside), tags such as
   ``<s>``, ``</s>``, ``<start_of_turn>`` (a letter, then letters, digits or ``_``),
   ``[INST]``, ``[/INST]``, ``<<SYS>>``, ``<</SYS>>`` (any case).
4. Case folding (``str.casefold``), then NFKC again.
5. Each character: white space (``str.isspace``) separates words; alphanumeric
   (``str.isalnum``) characters are kept, and a Han, Hiragana or Katakana character is a word
   by itself; every other character (punctuation, symbols, markdown markers, controls) is
   deleted, so it joins what surrounds it: ``T-18699``, ``T18699`` and ``t.18699`` are the
   same word, and so is an e-mail address with or without its punctuation.

Both specs are computed for a whole batch of documents at once with numpy (prefix sums under
the modular inverse of ``P1``), which is what makes curriculum screening fast; ASCII text
takes a byte translation table, other text the exact Unicode path. The fast paths are tested
against the plain definitions (``words_v2``, ``words_v3``).
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import re
import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

__all__ = [
    "NGRAM_PRIME",
    "NGRAM_V2",
    "NGRAM_V3",
    "NUMPY_STEPS",
    "SPECS",
    "WORD_PRIME",
    "ByteSteps",
    "NgramSpec",
    "NormalisedBatch",
    "PreparedBatch",
    "Scanned",
    "Spans",
    "blank_v3",
    "fast_word_hashes",
    "gather_v3",
    "ngram_hashes",
    "normalise_ascii",
    "normalise_ascii_zero_gaps",
    "normalise_text",
    "normalise_unicode_batch",
    "normalise_unicode_bytes",
    "normalise_words",
    "prepare_batch_v3",
    "scan_v3",
    "separator_classes",
    "special_positions",
    "splice_v3",
    "text_hash",
    "word_hashes",
    "word_hashes_of_buffer",
    "words_v2",
    "words_v3",
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
    """SHA-256 of the normalised words (spec /2) of `text` joined by single spaces."""
    return _words_hash(normalise_words(text))


def _words_hash(words: list[str]) -> str:
    return "sha256:" + hashlib.sha256(" ".join(words).encode("utf-8")).hexdigest()


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


# ---------------------------------------------------------------------------------------------
# Batches of documents as one normalised buffer, for each spec.


@dataclass(frozen=True, slots=True)
class NormalisedBatch:
    """A batch of documents normalised into one buffer for ``fast_word_hashes(zero_gaps=True)``.

    Words are separated by 0 bytes (and only by them); document ``k`` is
    ``buffer[offsets[k]:offsets[k + 1] - 1]`` (one 0 byte after each document).
    """

    buffer: bytes
    offsets: npt.NDArray[np.int64]
    n_bytes: int
    """UTF-8 size of the raw documents (what was screened)."""


def _offsets(lengths: Sequence[int]) -> npt.NDArray[np.int64]:
    """Start of each document in a joined buffer (one separator after each), then the end."""
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(np.asarray(lengths, dtype=np.int64) + 1, out=offsets[1:])
    return offsets


def _utf8_size(texts: Sequence[str], lengths: Sequence[int], others: Sequence[int]) -> int:
    extra = sum(len(texts[k].encode("utf-8", "surrogatepass")) - lengths[k] for k in others)
    return sum(lengths) + extra


def normalise_batch_v2(texts: Sequence[str]) -> NormalisedBatch:
    """Spec /2 for a batch of documents.

    ASCII documents take one byte translation of the joined buffer, the others the exact
    Unicode path, all in one call.
    """
    lengths = [len(t) for t in texts]
    raw = "\n".join(texts)
    if raw.isascii():
        return NormalisedBatch(
            normalise_ascii_zero_gaps(raw.encode("ascii")), _offsets(lengths), sum(lengths)
        )
    others = [k for k, t in enumerate(texts) if not t.isascii()]
    normalised = normalise_unicode_batch([texts[k] for k in others])
    parts: list[bytes] = []
    sizes = list(lengths)
    previous = 0
    for k, part in zip(others, normalised, strict=True):
        if k > previous:
            parts.append("\n".join(texts[previous:k]).encode("ascii"))
        parts.append(part)
        sizes[k] = len(part)
        previous = k + 1
    if previous < len(texts):
        parts.append("\n".join(texts[previous:]).encode("ascii"))
    # ASCII parts are normalised here; normalised parts only get their spaces zeroed
    return NormalisedBatch(
        normalise_ascii_zero_gaps(b"\n".join(parts)),
        _offsets(sizes),
        _utf8_size(texts, lengths, others),
    )


def words_v2(text: str) -> list[str]:
    """Spec /2: the words of `text` (the same as `normalise_words`)."""
    return normalise_words(text)


# --- spec /3 ---------------------------------------------------------------------------------

# every pattern starts with a literal backslash, which lets `re` skip ahead at C speed
_ESCAPED_PAIR = re.compile(r"\\\\*u([dD][89abAB][0-9a-fA-F]{2})\\\\*u([dD][c-fC-F][0-9a-fA-F]{2})")
_ESCAPED_UNIT = re.compile(r"\\\\*u([0-9a-fA-F]{4})")
_ESCAPED_SPACE = re.compile(r"\\[nrtbf]")
_ESCAPED_SPACE_BYTES = re.compile(rb"\\[nrtbf]")
# chat-template markers, in two patterns that each start with a literal character (which lets
# `re` skip ahead at C speed); \x01 never belongs to one (the byte patterns of a batch also
# exclude its separator, which no document of the batch holds: `_tables`)
_ANGLE_MARKER = r"<(?:\|[^\s|<>\x01]{0,64}\||/?[a-z][a-z0-9_]{0,31}|</?sys>)>"
_INST_MARKER = r"\[/?inst\]"
_MARKERS = tuple(re.compile(p, re.IGNORECASE) for p in (_ANGLE_MARKER, _INST_MARKER))


def _pair(match: re.Match[str]) -> str:
    high, low = int(match[1], 16), int(match[2], 16)
    return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))


def _unescape(text: str) -> str:
    """Step 1 of spec /3: JSON escapes."""
    if "\\" not in text:
        return text
    if "u" in text:
        text = _ESCAPED_PAIR.sub(_pair, text)
        text = _ESCAPED_UNIT.sub(lambda m: chr(int(m[1], 16)), text)
    return _ESCAPED_SPACE.sub(r"\\ ", text)


def _nfkc(text: str) -> str:
    return text if unicodedata.is_normalized("NFKC", text) else unicodedata.normalize("NFKC", text)


def _find_all(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def _drop_markers(text: str) -> str:
    """Step 3 of spec /3: ``<...>`` markers, then ``[INST]`` markers, become spaces."""
    for pattern, first in zip(_MARKERS, "<[", strict=True):
        if first in text:
            text = pattern.sub(" ", text)
    return text


def _prepare_v3(text: str) -> str:
    """Steps 1 to 4 of spec /3 (escapes, NFKC, markers, case folding)."""
    return _nfkc(_drop_markers(_nfkc(_unescape(text))).casefold())


_OWN_WORD_RANGES = (
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x31F0, 0x31FF),  # Katakana phonetic extensions
    (0x3400, 0x4DBF),  # CJK extension A
    (0x4E00, 0x9FFF),  # CJK unified ideographs
    (0xF900, 0xFAFF),  # CJK compatibility ideographs
    (0x20000, 0x3134F),  # CJK extensions B to G, compatibility supplement
)
"""Blocks of the Han, Hiragana and Katakana scripts: written without spaces, so each of their
letters is a word by itself."""


def _own_word(point: int) -> bool:
    return any(lo <= point <= hi for lo, hi in _OWN_WORD_RANGES)


_DELETE, _KEEP, _SPACE, _OWN = 0, 1, 2, 3


def _char_class(c: str) -> int:
    if c.isspace():
        return _SPACE
    if c.isalnum():
        return _OWN if _own_word(ord(c)) else _KEEP
    return _DELETE


def words_v3(text: str) -> list[str]:
    r"""Spec /3: the words of `text` (the plain definition; see the module docstring).

    Examples:
        >>> words_v3("Ticket T-18699: e-mail <jo.doe@example.com>, **urgent**!")
        ['ticket', 't18699', 'email', 'jodoeexamplecom', 'urgent']
        >>> words_v3('{"text": "Hello,\\nWorld \\u00c9T\\u00c9"}<|im_end|>')
        ['text', 'hello', 'world', 'été']
    """
    out: list[str] = []
    for c in _prepare_v3(text):
        kind = _char_class(c)
        if kind == _KEEP:
            out.append(c)
        elif kind == _SPACE:
            out.append(" ")
        elif kind == _OWN:
            out.append(f" {c} ")
    return "".join(out).split()


@cache
def _class_table() -> npt.NDArray[np.uint8]:
    """`_char_class` of every code point (1.1 MB, built once in well under a second)."""
    table = np.zeros(sys.maxunicode + 1, dtype=np.uint8)
    table[_alnum_table()] = _KEEP
    table[[c for c in range(sys.maxunicode + 1) if chr(c).isspace()]] = _SPACE
    own = np.zeros(sys.maxunicode + 1, dtype=np.bool_)
    for lo, hi in _OWN_WORD_RANGES:
        own[lo : hi + 1] = True
    table[own & (table == _KEEP)] = _OWN
    return table


def _classify(
    points: npt.NDArray[np.uint32],
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]:
    """Step 5 of spec /3 on code points.

    Returns the output points (words and spaces) and the output length after each input
    point.
    """
    kind = _class_table()[points]
    own = kind == _OWN
    if own.any():  # Han and kana: a space on each side
        width = np.where(own, 3, (kind != _DELETE).astype(np.int64))
        ends = np.cumsum(width)
        out = np.full(int(ends[-1]), 32, dtype=np.uint32)
        keep = (kind == _KEEP) | own
        out[ends[keep] - 1 - own[keep]] = points[keep]
        return out, ends
    kept = kind != _DELETE
    return np.where(kind == _SPACE, np.uint32(32), points)[kept].astype(np.uint32), np.cumsum(kept)


def _utf8(points: npt.NDArray[np.uint32]) -> tuple[bytes, npt.NDArray[np.int64]]:
    """`points` as UTF-8, and the byte offset before each point (then the size)."""
    data = points.tobytes().decode("utf-32-le").encode("utf-8")
    width = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
    return data, np.concatenate(([0], np.cumsum(width)))


def _unicode_v3(texts: Sequence[str]) -> list[bytes]:
    """Spec /3 of each text as UTF-8 holding only words and spaces (one numpy pass)."""
    prepared = [_prepare_v3(t) for t in texts]
    points = np.frombuffer("".join(prepared).encode("utf-32-le", "surrogatepass"), np.uint32)
    out, ends = _classify(points)
    # cut the output back into documents: output length after each document's last point
    after = np.concatenate(([0], ends))
    cut = np.concatenate(([0], after[np.cumsum([len(t) for t in prepared], dtype=np.int64)]))
    data, offsets = _utf8(out)  # one UTF-8 encoding of them all, cut where each text ends
    return [data[lo:hi] for lo, hi in itertools.pairwise(offsets[cut].tolist())]


def _prepare_lines(text: str) -> str:
    r"""Steps 1 to 4 of spec /3 on each line of `text` (lines joined by line breaks).

    One call on the whole text: no step acts across a line break (markers hold no white
    space, escapes no line break, and NFKC and case folding leave U+000A alone and never
    join across it), and none removes one; only an escape (``\u000a``) can add one, and
    then each line is prepared by itself, its decoded breaks becoming spaces.
    """
    prepared = _prepare_v3(text)
    if prepared.count("\n") == text.count("\n"):
        return prepared
    # a decoded break is white space like any other: a space gives the same words
    return "\n".join(_prepare_v3(line).replace("\n", " ") for line in text.split("\n"))


def _unicode_lines(text: str) -> tuple[bytes, npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Spec /3 of each line of `text` (lines joined by line breaks, none inside a line).

    Returns UTF-8 words and spaces, and where each line's output starts and stops in it.
    """
    points = np.frombuffer(_prepare_lines(text).encode("utf-32-le", "surrogatepass"), np.uint32)
    out, ends = _classify(points)
    before = np.concatenate(([0], ends))  # output length before each point
    breaks = np.flatnonzero(points == 10)
    starts = before[np.concatenate(([0], breaks + 1))]
    stops = before[np.concatenate((breaks, [points.size]))]
    data, offsets = _utf8(out)
    return data, offsets[starts], offsets[stops]


_SEPARATORS = (16, 17, 18, 19, 20, 21, 22, 23, 14, 15, 4, 5, 6, 1, 2, 3, 7, 8, 24, 25, 26, 27)
"""Control bytes that may join the documents of a batch (spec /3 deletes them all): the
first one that no document holds. Text holds the first ones least: DLE to ETB (0x10-0x17)
drove 1960s data links; SOH, STX and ETX turn up in docstrings and logs, BEL and BS in
terminal output, ESC in colour codes, SUB as an old end-of-file mark. Which one joins a
batch changes nothing in its words (tested); a batch whose first choice is held is joined
again, which costs time only."""


@dataclass(frozen=True, slots=True)
class _Tables:
    """The byte-level passes of spec /3 for one batch separator."""

    separator: int
    translate: bytes
    """A-Z -> a-z, digits and letters kept, white space -> 0 (a word gap), the separator kept,
    bytes >= 128 (already normalised UTF-8) kept."""
    delete: bytes
    """ASCII characters deleted: punctuation, symbols and controls (not the separator)."""
    markers: tuple[re.Pattern[bytes], re.Pattern[bytes]]
    """Chat-template markers, which never hold the separator."""


@cache
def _tables(separator: int) -> _Tables:
    sep = re.escape(chr(separator)).encode("ascii")
    angle = _ANGLE_MARKER.encode("ascii").replace(rb"\x01", rb"\x01" + sep)
    return _Tables(
        separator=separator,
        translate=bytes(
            (c + 32)
            if 65 <= c <= 90
            else c
            if (48 <= c <= 57 or 97 <= c <= 122 or c >= 128 or c == separator)
            else 0
            for c in range(256)
        ),
        delete=bytes(
            c for c in range(128) if not (chr(c).isalnum() or chr(c).isspace() or c == separator)
        ),
        markers=(
            re.compile(angle, re.IGNORECASE),
            re.compile(_INST_MARKER.encode("ascii"), re.IGNORECASE),
        ),
    )


def _byte_set(chars: bytes) -> npt.NDArray[np.bool_]:
    table = np.zeros(256, dtype=np.bool_)
    table[np.frombuffer(chars, dtype=np.uint8)] = True
    return table


_BACKSLASH, _ANGLE, _BRACKET = 1, 2, 3
_SPECIAL_BYTES = np.zeros(256, dtype=np.uint8)
_SPECIAL_BYTES[[ord("\\"), ord("<"), ord("[")]] = [_BACKSLASH, _ANGLE, _BRACKET]
_SPECIAL_TABLE = bytes(_SPECIAL_BYTES > 0)
"""Byte table: 1 for a backslash, ``<`` or ``[``, else 0 (`bytes.translate` is a C loop)."""
_ESCAPED_LETTERS = _byte_set(b"nrtbf")
_AFTER_ANGLE = _byte_set(b"|/<ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
"""What may follow ``<`` in a marker (a necessary condition, checked before the pattern)."""
_AFTER_BRACKET = _byte_set(b"/iI")


Spans = npt.NDArray[np.int64]
"""Sorted, disjoint (start, stop) byte spans, one a row (shape ``(k, 2)``)."""

Scanned = tuple[npt.NDArray[np.int64], Spans, int]
"""What a scan of a joined batch finds: the positions of every ``\\``, ``<`` and ``[``
(sorted), the lines (between line breaks and the separator byte) that hold a non-ASCII byte
or a ``\\u`` escape (`Spans`), and the number of separator bytes."""

Regions = Sequence[tuple[int, int]] | None
"""Where a joined batch's non-ASCII documents are (`_encode`), or None: anywhere."""


@dataclass(frozen=True, slots=True)
class ByteSteps:
    """The byte-level passes of `prepare_batch_v3`.

    Numpy ones (`NUMPY_STEPS`, the reference) or compiled ones (the guard's,
    ``evalsuite/guard/_jit.py``), with the same results.
    """

    scan: Callable[[bytes, int, Regions], Scanned]
    """``(data, separator, regions)``: the one pass over a batch (`scan_v3`)."""
    blank: Callable[[bytes, int, Spans, npt.NDArray[np.int64]], bytes]
    """``(data, separator, skip, specials)``: escaped letters and chat-template markers
    blanked outside the `skip` spans (`blank_v3`)."""
    gather: Callable[[bytes, Spans], bytes]
    """``(data, spans)``: the spans joined by line breaks (`gather_v3`)."""
    splice: Callable[[bytes, Spans, bytes, npt.NDArray[np.int64], npt.NDArray[np.int64]], bytes]
    """``(data, spans, done, starts, stops)``: `data` with span ``k`` replaced by
    ``done[starts[k]:stops[k]]`` (`splice_v3`)."""
    regions: bool = True
    """Whether `scan` reads the regions (else it is given None)."""


def special_positions(data: bytes) -> npt.NDArray[np.int64]:
    """Positions of every backslash, ``<`` and ``[`` in `data` (one translate, one scan)."""
    return np.flatnonzero(np.frombuffer(data.translate(_SPECIAL_TABLE), dtype=np.bool_))


def _blank_v3(
    data: bytes,
    tables: _Tables,
    skip: Spans,
    specials: npt.NDArray[np.int64] | None = None,
) -> bytes:
    r"""Steps 1 and 3 of spec /3 on raw ASCII text, in place (every length kept).

    `data` holds documents joined by the separator. Outside the `skip` spans (lines for the
    Unicode path), escaped letters become spaces, then ``<...>`` markers, then ``[INST]``
    markers. One pass finds the backslashes, ``<`` and ``[`` (`special_positions`, or given
    as `specials`); a pattern is tried only where a marker may start.
    """
    at = special_positions(data) if specials is None else specials
    if len(skip) and at.size:
        los, his = skip[:, 0], skip[:, 1]
        span = np.searchsorted(los, at, side="right") - 1
        at = at[(span < 0) | (at >= his[np.maximum(span, 0)])]
    if at.size == 0:
        return data
    arr = np.frombuffer(data, dtype=np.uint8)
    kind = _SPECIAL_BYTES[arr[at]]
    following = arr[np.minimum(at + 1, arr.size - 1)]  # at the end: itself, harmless
    letters = at[(kind == _BACKSLASH) & _ESCAPED_LETTERS[following]] + 1
    angles = at[(kind == _ANGLE) & _AFTER_ANGLE[following]].tolist()
    brackets = at[(kind == _BRACKET) & _AFTER_BRACKET[following]].tolist()
    if not (letters.size or angles or brackets):
        return data
    out = bytearray(data)
    np.frombuffer(out, dtype=np.uint8)[letters] = 32
    for pattern, starts in zip(tables.markers, (angles, brackets), strict=True):
        end = -1
        for start in starts:
            if start < end or out[start] != data[start]:
                continue  # inside the previous marker, or blanked by the angle markers
            match = pattern.match(out, start)
            if match:
                end = match.end()
                out[start:end] = b" " * (end - start)
    return bytes(out)


def blank_v3(data: bytes, separator: int, skip: Spans, specials: npt.NDArray[np.int64]) -> bytes:
    """Steps 1 and 3 of spec /3 on a joined batch (`_blank_v3`): `ByteSteps.blank`."""
    return _blank_v3(data, _tables(separator), skip, specials)


def _escapes(arr: npt.NDArray[np.uint8], specials: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    r"""Positions of ``\u`` in `arr`, from the positions of its special bytes."""
    slashes = specials[specials < arr.size - 1]
    slashes = slashes[arr[slashes] == ord("\\")]
    escapes: npt.NDArray[np.int64] = slashes[arr[slashes + 1] == ord("u")]
    return escapes


def _line_spans(data: bytes, found: npt.NDArray[np.int64], separator: int) -> Spans:
    """The lines (between line breaks and separators) holding the sorted positions `found`."""
    return np.asarray(_line_list(data, found, separator), dtype=np.int64).reshape(-1, 2)


def _line_list(data: bytes, found: npt.NDArray[np.int64], separator: int) -> list[tuple[int, int]]:
    """`_line_spans` as a list (a walk from each position, or one pass when they are dense)."""
    spans: list[tuple[int, int]] = []
    arr = np.frombuffer(data, dtype=np.uint8)
    if found.size > 4096:  # dense: every line break at once
        breaks = np.flatnonzero((arr == ord("\n")) | (arr == separator))
        for k in np.unique(np.searchsorted(breaks, found)).tolist():
            lo = int(breaks[k - 1]) + 1 if k > 0 else 0
            spans.append((lo, int(breaks[k]) if k < breaks.size else arr.size))
        return spans
    sep = bytes([separator])
    i = 0
    while i < found.size:
        at = int(found[i])
        newline = data.rfind(b"\n", 0, at)
        lo = max(newline, data.rfind(sep, newline + 1, at)) + 1
        newline = data.find(b"\n", at)
        newline = len(data) if newline < 0 else newline
        hi = data.find(sep, at, newline)
        hi = newline if hi < 0 else hi
        spans.append((lo, hi))
        i = int(np.searchsorted(found, hi))  # the next position after this line
    return spans


def gather_v3(data: bytes, spans: Spans) -> bytes:
    """The spans of `data` joined by line breaks (`ByteSteps.gather`)."""
    return b"\n".join([data[lo:hi] for lo, hi in spans.tolist()])


def splice_v3(
    data: bytes,
    spans: Spans,
    done: bytes,
    starts: npt.NDArray[np.int64],
    stops: npt.NDArray[np.int64],
) -> bytes:
    """`data` with span ``k`` replaced by ``done[starts[k]:stops[k]]`` (`ByteSteps.splice`)."""
    pieces: list[bytes] = []
    previous = 0
    for (lo, hi), start, stop in zip(spans.tolist(), starts.tolist(), stops.tolist(), strict=True):
        pieces.extend((data[previous:lo], done[start:stop]))
        previous = hi
    pieces.append(data[previous:])
    return b"".join(pieces)


def _splice(data: bytes, spans: Spans, steps: ByteSteps) -> bytes:
    """`data` with each span (a line) replaced by its Unicode-path normalisation.

    The lines are gathered, decoded, prepared and classified together (`_unicode_lines`).
    """
    lines = steps.gather(data, spans).decode("utf-8", "surrogatepass")
    done, starts, stops = _unicode_lines(lines)
    return steps.splice(data, spans, done, starts, stops)


@dataclass(frozen=True, slots=True)
class PreparedBatch:
    """A batch of documents after steps 1 to 4 of spec /3, before the last byte-level step.

    `data` holds the documents joined by the byte `separator` (exactly one between two
    documents): ASCII lines raw with escaped letters and chat-template markers blanked, other
    lines already normalised by the Unicode path. What is left (step 5 on bytes: lowercase
    ASCII, delete punctuation, split at white space) is `finish`, or the compiled kernel's
    first pass (``evalsuite/guard/_jit.py``), which reads `classes`.
    """

    data: bytes
    separator: int
    n_docs: int
    n_bytes: int
    """UTF-8 size of the raw documents (what was screened)."""
    raw: bytes | None = None
    """The raw documents joined by `separator` (UTF-8, ``surrogatepass``), before any step;
    None when the batch could not be joined (every spare byte held: `prepare_batch_v3`)."""

    @property
    def classes(self) -> npt.NDArray[np.int16]:
        """`separator_classes` of this batch's separator."""
        return separator_classes(self.separator)

    def words(self, start: int, stop: int) -> list[bytes]:
        """The normalised words of ``data[start:stop]`` (one document, or part of one)."""
        tables = _tables(self.separator)
        return [
            w
            for w in self.data[start:stop].translate(tables.translate, tables.delete).split(b"\x00")
            if w
        ]

    def finish(self) -> NormalisedBatch:
        """The normalised batch (equal to `normalise_batch_v3` of the documents)."""
        tables = _tables(self.separator)
        buffer = self.data.translate(tables.translate, tables.delete)
        done = _v3_result(buffer, self.n_docs, self.separator, self.n_bytes)
        if done is None:  # pragma: no cover - `prepare_batch_v3` counted the separators
            raise RuntimeError("normalise_batch_v3: documents and separators out of step")
        return done


@cache
def separator_classes(separator: int) -> npt.NDArray[np.int16]:
    """Per byte value, step 5 of spec /3 on prepared bytes (`PreparedBatch`).

    -1 deleted, 0 white space (a word gap), 256 the separator, else the byte the word keeps
    (ASCII letters lowercased).
    """
    tables = _tables(separator)
    classes = np.frombuffer(tables.translate, dtype=np.uint8).astype(np.int16)
    classes[np.frombuffer(tables.delete, dtype=np.uint8)] = -1
    classes[separator] = 256
    classes.flags.writeable = False
    return classes


def _held(char: str, texts: Sequence[str]) -> bool:
    """True when a text holds `char` (a C-level loop: no Python frame per text)."""
    return any(map(operator.contains, texts, itertools.repeat(char)))


def prepare_batch_v3(texts: Sequence[str], *, steps: ByteSteps | None = None) -> PreparedBatch:
    r"""Steps 1 to 4 of spec /3 for a batch of documents (`PreparedBatch`).

    The documents are joined by a control byte that none of them holds (usually ``\x10``)
    and encoded once. Lines with a non-ASCII character or a ``\u`` escape take the exact
    Unicode path together; the rest stays raw ASCII for byte-level passes over the whole
    buffer, which blank escaped letters and chat-template markers in place. `steps` are
    those passes (default `NUMPY_STEPS`; the guard passes compiled ones, with the same
    result). The batch is joined by the first of `_SEPARATORS` and joined again by another
    byte only when the scan counts more of it than the joins (a document holds it).
    """
    steps = NUMPY_STEPS if steps is None else steps
    if not texts:
        return PreparedBatch(b"", 1, 0, 0, b"")
    first = _SEPARATORS[0]
    data, regions = _encode(texts, chr(first), steps.regions)
    scanned = steps.scan(data, first, regions)
    if scanned[2] == len(texts) - 1:
        n_bytes = len(data) - (len(texts) - 1)
        return _batch_v3(data, len(texts), first, n_bytes, scanned, steps)
    separator = next((c for c in _SEPARATORS if not _held(chr(c), texts)), None)
    if separator is None:  # every spare byte is used: one document at a time
        n_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)
        return PreparedBatch(b"\x01".join(_unicode_v3(texts)), 1, len(texts), n_bytes)
    data, regions = _encode(texts, chr(separator), steps.regions)
    n_bytes = len(data) - (len(texts) - 1)
    scanned = steps.scan(data, separator, regions)
    return _batch_v3(data, len(texts), separator, n_bytes, scanned, steps)


def normalise_batch_v3(texts: Sequence[str]) -> NormalisedBatch:
    r"""Spec /3 for a batch of documents (equal to `words_v3` of each, tested).

    `prepare_batch_v3`, then one ``bytes.translate`` lowercases, deletes punctuation and
    zeroes white space. The separators survive and give each document's offsets.
    """
    if not texts:
        return NormalisedBatch(b"", np.zeros(1, dtype=np.int64), 0)
    return prepare_batch_v3(texts).finish()


def _encode(texts: Sequence[str], separator: str, regions: bool = True) -> tuple[bytes, Regions]:
    """`texts` joined by `separator` as UTF-8, and where its non-ASCII documents are.

    The regions are None unless asked for (`ByteSteps.regions`). Each text is encoded by
    itself (an ASCII one is copied as it is) and the bytes joined: faster than joining runs
    of `str` first (two copies), and a batch is never one wide `str`. A text is ASCII
    exactly when its UTF-8 is as long as it is.
    """
    encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
    data = separator.encode("ascii").join(encoded)
    if not regions:
        return data, None
    sizes = list(map(len, encoded))
    lengths = list(map(len, texts))
    if sum(sizes) == sum(lengths):
        return data, []
    starts = list(itertools.accumulate([s + 1 for s in sizes], initial=0))
    others = itertools.compress(itertools.count(), map(operator.ne, sizes, lengths))
    return data, [(starts[k], starts[k] + sizes[k]) for k in others]


def _batch_v3(
    data: bytes, n_docs: int, separator: int, n_bytes: int, scanned: Scanned, steps: ByteSteps
) -> PreparedBatch:
    r"""One batch joined by `separator`, with what its scan found.

    Lines with a non-ASCII character or a ``\u`` escape take the Unicode path; the rest
    takes the byte-level passes. Exact, because no step of the spec acts across a line break
    or the separator, which no document holds.
    """
    at, spans, _ = scanned
    raw = data
    data = steps.blank(data, separator, spans, at)
    if len(spans):
        data = _splice(data, spans, steps)
    return PreparedBatch(data, separator, n_docs, n_bytes, raw)


def scan_v3(data: bytes, separator: int, regions: Regions = None) -> Scanned:
    r"""`Scanned` of a joined batch, with numpy (`ByteSteps.scan`).

    Args:
        data: UTF-8 documents joined by the byte `separator`.
        separator: The joining byte.
        regions: Where non-ASCII bytes may be (`_encode`'s non-ASCII documents); default:
            anywhere.
    """
    at = special_positions(data)
    arr = np.frombuffer(data, dtype=np.uint8)
    if regions is None:
        found = [np.flatnonzero(arr >= 128)]
    else:
        found = [np.flatnonzero(arr[lo:hi] >= 128) + lo for lo, hi in regions]
    found.append(_escapes(arr, at))
    points = np.unique(np.concatenate(found))
    spans = _line_spans(data, points, separator) if points.size else np.zeros((0, 2), np.int64)
    return at, spans, data.count(separator.to_bytes(1, "little"))


NUMPY_STEPS = ByteSteps(scan_v3, blank_v3, gather_v3, splice_v3)
"""The numpy byte passes of `prepare_batch_v3`: the reference of the compiled ones."""


def _v3_result(buffer: bytes, n_docs: int, separator: int, n_bytes: int) -> NormalisedBatch | None:
    """The batch from its translated buffer: documents end at the separators.

    None when the buffer does not hold exactly one separator between documents (a document
    held the separator itself).
    """
    separators = np.flatnonzero(np.frombuffer(buffer, dtype=np.uint8) == separator)
    if separators.size != n_docs - 1:
        return None
    offsets = np.empty(n_docs + 1, dtype=np.int64)
    offsets[0], offsets[-1] = 0, len(buffer) + 1
    offsets[1:-1] = separators + 1
    return NormalisedBatch(buffer.replace(bytes([separator]), b"\x00"), offsets, n_bytes)


# --- the specs by name ------------------------------------------------------------------------

from evalsuite._core.ngram_ids import NGRAM_V2, NGRAM_V3  # noqa: E402 (names apart: no numpy)


@dataclass(frozen=True, slots=True)
class NgramSpec:
    """How a fingerprint spec turns text into words (hashing is the same for all specs)."""

    name: str
    words: Callable[[str], list[str]]
    """The plain definition, for one text."""
    batch: Callable[[Sequence[str]], NormalisedBatch]
    """The fast path, for a batch of documents (same words)."""

    def text_hash(self, text: str) -> str:
        """Exact-match key: SHA-256 of the normalised words joined by single spaces."""
        return _words_hash(self.words(text))

    def word_hashes(self, text: str) -> U64:
        """Hash of every word of `text`, in order."""
        return word_hashes(self.words(text))


SPECS: dict[str, NgramSpec] = {
    NGRAM_V2: NgramSpec(NGRAM_V2, words_v2, normalise_batch_v2),
    NGRAM_V3: NgramSpec(NGRAM_V3, words_v3, normalise_batch_v3),
}
"""Every spec a fingerprint file may name."""
