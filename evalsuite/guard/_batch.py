"""Batches of documents, and long documents cut into overlapping pieces.

Readers produce `Batch`es (parallel lists of names and texts, a few hundred documents at a
time, so that no Python work is done per document beyond building the lists); `rebatch`
regroups them into batches of about ``batch_bytes`` characters for the vectorised matcher,
cutting any document longer than a piece into overlapping pieces.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice

from evalsuite._core.text import words_v3

__all__ = ["Batch", "Piece", "WordCounter", "batches_of", "pieces_of", "rebatch"]

MIN_PIECE = 1 << 12
_SPACES = (" ", "\n", "\t", "\r", "\f", "\v")

WordCounter = Callable[[str], int]
"""Number of normalised words of a text (under the text spec, or the fewest of several)."""


def _count_v3(text: str) -> int:
    return len(words_v3(text))


@dataclass(frozen=True, slots=True)
class Piece:
    """A piece of a long document (pieces overlap by at least ``n - 1`` words)."""

    name: str
    text: str
    part: int = 0
    final: bool = True
    overlap: int = 0
    """Characters at the start of `text` repeated from the previous piece."""

    @property
    def whole(self) -> bool:
        """True for a document in one piece."""
        return self.part == 0 and self.final


@dataclass(slots=True)
class Batch:
    """Documents screened together: parallel names and texts, and which are pieces."""

    names: list[str] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    pieces: dict[int, Piece] = field(default_factory=dict)
    """Position -> piece, for the entries that are pieces of long documents."""
    chars: int = 0

    @classmethod
    def of_piece(cls, piece: Piece) -> Batch:
        """A batch of one piece."""
        return cls([piece.name], [piece.text], {0: piece}, len(piece.text))

    def extend(self, other: Batch, lo: int = 0, hi: int | None = None) -> None:
        """Append documents ``lo:hi`` of `other`."""
        hi = len(other.names) if hi is None else hi
        base = len(self.names) - lo
        self.names.extend(other.names[lo:hi])
        texts = other.texts[lo:hi]
        self.texts.extend(texts)
        self.chars += sum(map(len, texts))
        self.pieces.update({k + base: p for k, p in other.pieces.items() if lo <= k < hi})


def _overlap_start(piece: str, words: int, chars: int, count_words: WordCounter) -> int:
    """Start of the tail of `piece` to repeat in the next piece (0: the whole piece).

    The tail starts after white space and holds at least `words` normalised words and
    `chars` characters.
    """
    width = max(256, 2 * chars)
    while True:
        start = max(0, len(piece) - width)
        if start > 0:
            start = max(piece.find(c, start) for c in _SPACES) + 1
            start = start if start > 0 else 0
        if start == 0 or (count_words(piece[start:]) >= words and len(piece) - start >= chars):
            return start
        width *= 2


def _cut(buffer: str, size: int) -> int:
    cut = max(buffer.rfind(c, 0, size) for c in _SPACES) + 1
    return cut if cut > size // 2 else size


def pieces_of(
    name: str,
    blocks: Iterable[str],
    *,
    size: int,
    overlap_words: int,
    overlap_chars: int = 0,
    count_words: WordCounter = _count_v3,
) -> Iterator[Piece]:
    """Cut a stream of text into pieces of about `size` characters, cut at white space.

    Each piece repeats the tail of the previous one, enough for `overlap_words` normalised
    words and `overlap_chars` characters, so that no n-gram (``n - 1 <= overlap_words``) and
    no canary (``len <= overlap_chars``) crossing a cut is missed. Cutting at white space
    keeps normalisation exact: no step of either text spec acts across white space (NFKC,
    case folding, escapes, chat-template markers).
    """
    size = max(size, MIN_PIECE, 4 * overlap_chars)
    buffer, part, overlap = "", 0, 0
    for block in blocks:
        buffer += block
        while len(buffer) > size:
            cut = _cut(buffer, size)
            piece = buffer[:cut]
            yield Piece(name, piece, part, final=False, overlap=overlap)
            start = _overlap_start(piece, overlap_words, overlap_chars, count_words)
            start = start if start > 0 else cut  # a single giant token: nothing to repeat
            buffer, part, overlap = buffer[start:], part + 1, cut - start
    yield Piece(name, buffer, part, final=True, overlap=overlap)


def batches_of(documents: Iterable[tuple[str, str]], *, size: int = 256) -> Iterator[Batch]:
    """(name, text) documents as batches of `size` documents."""
    documents = iter(documents)
    while chunk := list(islice(documents, size)):
        names, texts = map(list, zip(*chunk, strict=True))
        yield Batch(names, texts, {}, sum(map(len, texts)))


def _cut_long(
    batch: Batch, size: int, overlap_words: int, overlap_chars: int, count_words: WordCounter
) -> Batch:
    """`batch` with every document longer than `size` replaced by its pieces."""
    if batch.chars <= size or max(map(len, batch.texts), default=0) <= size:
        return batch  # (no text is longer than all of them together)
    out = Batch()
    for k, (name, text) in enumerate(zip(batch.names, batch.texts, strict=True)):
        if len(text) <= size or k in batch.pieces:
            out.extend(batch, k, k + 1)
            continue
        blocks = (text[i : i + size] for i in range(0, len(text), size))
        for piece in pieces_of(
            name,
            blocks,
            size=size,
            overlap_words=overlap_words,
            overlap_chars=overlap_chars,
            count_words=count_words,
        ):
            out.extend(Batch.of_piece(piece))
    return out


def rebatch(
    stream: Iterable[Batch],
    *,
    batch_bytes: int,
    overlap_words: int,
    overlap_chars: int,
    count_words: WordCounter = _count_v3,
) -> Iterator[Batch]:
    """Regroup batches into batches of about `batch_bytes` characters.

    Every batch holds at least one document; documents longer than
    ``max(batch_bytes, 4096)`` characters are cut into pieces.
    """
    size = max(batch_bytes, MIN_PIECE)
    out = Batch()
    for incoming in stream:
        batch = _cut_long(incoming, size, overlap_words, overlap_chars, count_words)
        if out.chars + batch.chars <= batch_bytes:
            out.extend(batch)
            continue
        start, total = 0, out.chars
        for k, text in enumerate(batch.texts):
            if total + len(text) > batch_bytes and (out.names or k > start):
                out.extend(batch, start, k)
                yield out
                out, start, total = Batch(), k, 0
            total += len(text)
        out.extend(batch, start)
    if out.names:
        yield out
