"""Screening documents: matches become hits (document -> item), above a share threshold.

`screen_documents` is the per-shard function: pure, deterministic, and its only state is the
`FingerprintIndex` (numpy arrays and small dicts), so it runs unchanged inside Ray Data's
``map_batches`` or Dask's ``map_partitions`` (``docs/guard.md``).
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import compress, count
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalsuite._core.text import NGRAM_V3, SPECS
from evalsuite.errors import UsageError
from evalsuite.guard._batch import MIN_PIECE, Batch, Piece, batches_of, rebatch
from evalsuite.guard._confusables import fold_all
from evalsuite.guard._index import FingerprintIndex, PartIndex
from evalsuite.guard._match import BatchMatches, find_canaries, match_batch
from evalsuite.manifest import Split

__all__ = [
    "DEFAULT_BATCH_BYTES",
    "DEFAULT_THRESHOLD",
    "Hit",
    "How",
    "Screener",
    "screen_documents",
]

How = Literal["exact", "ngram", "short", "canary"]

DEFAULT_THRESHOLD = 0.2
"""Share of an item's evidence n-grams that one document must contain to be flagged.

In format /3 (8-grams of texts of 13 words or more), case, punctuation, white space, markdown
and JSON escaping keep every n-gram, and one changed word removes at most 8 of them, so an
item of 17 words or more keeps at least 2/10 of its 8-grams whatever word changed; ordinary
text shares at most a stock phrase with an item, and text that several items of a suite
share is not evidence at all. See docs/guard.md, "Threshold".
"""
DEFAULT_BATCH_BYTES = 1 << 20
"""Text screened per vectorised step: about 1 MiB keeps numpy's temporaries in cache."""


@dataclass(frozen=True, slots=True)
class Hit:
    """One document that contains one frozen item (or a suite's canary)."""

    document: str
    suite: str
    version: str
    split: Split | None
    """None for a canary hit (it names a suite version, not an item)."""
    item_id: str | None
    overlap: float
    """Share of the item's evidence n-grams found in the document (1.0 for exact and canary
    hits; for an item with no n-grams, the share of its short texts found)."""
    matched: int
    """Distinct evidence n-grams of the item found (short texts found, for a short hit)."""
    how: How

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return asdict(self)


@dataclass(slots=True)
class _Partial:
    """Matches of a document seen in more than one piece, until its final piece."""

    grams: list[npt.NDArray[np.int64]] = field(default_factory=list)
    """(item, gram) rows per piece."""
    shorts: set[tuple[int, int]] = field(default_factory=set)


class _PartScreener:
    """Hits from one part of the index (one text spec)."""

    def __init__(self, index: PartIndex, threshold: float) -> None:
        self.index = index
        self.threshold = threshold
        self._pending: dict[str, _Partial] = {}

    def feed(
        self,
        batch: Batch,
        whole: list[bool] | None,
        split: list[int],
        canaries: Collection[str] = (),
        sized: int | None = None,
    ) -> tuple[list[tuple[int, Hit]], int, list[tuple[int, str]] | None]:
        """Hits of the documents this batch completes, its UTF-8 size, and its canaries.

        Returns (batch position, hit) pairs, the UTF-8 size (of the first `sized` documents),
        and where `canaries` are (`find_canaries`; None when none are asked for).
        """
        found = match_batch(batch.texts, self.index, whole=whole, canaries=canaries, sized=sized)
        hits = self._whole_hits(found, exclude=split)
        for k in split:
            hits.extend(self._merge_piece(batch.pieces[k], k, found))
        return (
            [
                (d, self._hit(batch.names[d], item, share, matched, how))
                for d, item, share, matched, how in hits
            ],
            found.n_bytes,
            found.canaries,
        )

    def _whole_hits(self, found: BatchMatches, *, exclude: Sequence[int]) -> list[_Row]:
        """Hits of documents entirely inside this batch (vectorised over the batch)."""
        index = self.index
        keep = ~np.isin(found.gram_doc, exclude)
        doc, item = found.gram_doc[keep], found.gram_item[keep]
        key = doc * len(index.items) + item
        keys, counts = np.unique(key, return_counts=True)
        shares = counts / np.maximum(index.item_ngrams[keys % len(index.items)], 1)
        grams = {
            (int(k) // len(index.items), int(k) % len(index.items)): (int(c), float(s))
            for k, c, s in zip(keys, counts, shares, strict=True)
            if s >= self.threshold
        }
        shorts: dict[tuple[int, int], int] = {}
        for d, i in zip(found.short_doc.tolist(), found.short_item.tolist(), strict=True):
            if d not in exclude:
                shorts[d, i] = shorts.get((d, i), 0) + 1
        exact = {pair for pair in found.exact if pair[0] not in exclude}
        return self._rows(grams, shorts, exact, found)

    def _rows(
        self,
        grams: dict[tuple[int, int], tuple[int, float]],
        shorts: dict[tuple[int, int], int],
        exact: set[tuple[int, int]],
        found: BatchMatches,
    ) -> list[_Row]:
        index = self.index
        rows: list[_Row] = []
        for d, i in sorted(set(grams) | set(shorts) | exact):
            matched, share = grams.get((d, i), (0, 0.0))
            how: How = "exact" if (d, i) in exact else "ngram" if (d, i) in grams else "short"
            if how == "short":
                matched = shorts[d, i]
                if index.item_ngrams[i] == 0:
                    share = matched / max(int(index.item_short[i]), 1)
                else:
                    share = self._share(found, d, i)
            elif how == "exact":
                share = 1.0
                matched = max(matched, int(index.item_ngrams[i]))
            rows.append((d, i, share, matched, how))
        return rows

    def fork(self, name: str, view: str) -> None:
        """Start `view` of a long document from what `name`'s pieces so far matched."""
        partial = self._pending.get(name)
        if partial is not None:
            self._pending[view] = _Partial(list(partial.grams), set(partial.shorts))

    def _hit(self, name: str, item: int, share: float, matched: int, how: How) -> Hit:
        ref = self.index.items[item]
        return Hit(name, ref.suite, ref.version, ref.split, ref.item_id, share, matched, how)

    def _share(self, found: BatchMatches, doc: int, item: int) -> float:
        """Share of an item's n-grams in a document (below the threshold: recomputed)."""
        rows = (found.gram_doc == doc) & (found.gram_item == item)
        return float(rows.sum()) / max(int(self.index.item_ngrams[item]), 1)

    def _merge_piece(self, piece: Piece, k: int, found: BatchMatches) -> list[_Row]:
        partial = self._pending.setdefault(piece.name, _Partial())
        rows = found.gram_doc == k
        partial.grams.append(np.stack([found.gram_item[rows], found.gram_id[rows]], axis=1))
        shorts = found.short_doc == k
        partial.shorts.update(
            zip(found.short_item[shorts].tolist(), found.short_id[shorts].tolist(), strict=True)
        )
        if not piece.final:
            return []
        del self._pending[piece.name]
        return [(k, i, share, matched, how) for _, i, share, matched, how in self._finish(partial)]

    def _finish(self, partial: _Partial) -> list[_Row]:
        """Hits of a document seen in several pieces (n-grams counted once each)."""
        index = self.index
        rows = np.unique(np.concatenate(partial.grams), axis=0)
        items, counts = np.unique(rows[:, 0], return_counts=True)
        grams = {
            (0, int(i)): (int(c), float(c) / max(int(index.item_ngrams[i]), 1))
            for i, c in zip(items, counts, strict=True)
        }
        shorts: dict[tuple[int, int], int] = {}
        for item, _entry in partial.shorts:
            shorts[0, item] = shorts.get((0, item), 0) + 1
        found = BatchMatches(
            gram_doc=np.zeros(rows.shape[0], dtype=np.int64),
            gram_item=rows[:, 0],
            gram_id=rows[:, 1],
            short_doc=np.zeros(0, dtype=np.int64),
            short_item=np.zeros(0, dtype=np.int64),
            short_id=np.zeros(0, dtype=np.int64),
            exact=[],
            n_bytes=0,
        )
        kept = {k: v for k, v in grams.items() if v[1] >= self.threshold}
        return self._rows(kept, shorts, set(), found)


_Row = tuple[int, int, float, int, How]
"""(document, item, overlap, matched, how) inside one part."""


def _strength(hit: Hit) -> tuple[bool, float, int]:
    return (hit.how == "exact", hit.overlap, hit.matched)


def _merge(found: list[tuple[int, Hit]]) -> list[Hit]:
    """One hit per (document, suite version, item), in document order, canaries last.

    The strongest hit over the index's parts is kept (the first, current-spec part wins ties).
    """
    best: dict[tuple[int, str, str, str | None], tuple[int, int, Hit]] = {}
    for position, (doc, hit) in enumerate(found):
        key = (doc, hit.suite, hit.version, hit.item_id)
        if key not in best or _strength(hit) > _strength(best[key][2]):
            best[key] = (doc, position, hit)
    return [hit for _, _, hit in sorted(best.values(), key=lambda e: (e[0], e[1]))]


class Screener:
    """Screen a stream of batches; documents cut into pieces are judged once, when whole.

    Args:
        index: Fingerprints to screen against.
        threshold: Share of an item's evidence n-grams a document must contain to be flagged.
        batch_bytes: Characters screened per vectorised step.
    """

    def __init__(
        self,
        index: FingerprintIndex,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        batch_bytes: int = DEFAULT_BATCH_BYTES,
    ) -> None:
        if not 0 < threshold <= 1:
            raise UsageError(f"threshold must be in (0, 1], got {threshold!r}")
        self.index = index
        self.threshold = threshold
        self.batch_bytes = batch_bytes
        self.documents = 0
        self.bytes = 0
        self._parts = [_PartScreener(part, threshold) for part in index.parts]
        self._canaries: dict[str, set[str]] = {}
        self._canary_strings = tuple(index.canaries)
        self._folding: set[str] = set()
        """Long documents whose pieces are screened folded too (`_with_folded`)."""
        specs = [SPECS[s] for s in index.specs] or [SPECS[NGRAM_V3]]
        self.count_words: Callable[[str], int] = lambda text: min(len(s.words(text)) for s in specs)
        """Words of a text under every spec of the index (the fewest), to size overlaps."""

    @property
    def piece_size(self) -> int:
        """Longest piece: longer documents are cut, with overlap."""
        return max(self.batch_bytes, MIN_PIECE)

    @property
    def overlap_words(self) -> int:
        """Normalised words repeated across a cut: one less than the longest fingerprint."""
        return self.index.window - 1

    @property
    def overlap_chars(self) -> int:
        """Characters repeated across a cut, at least: room for the longest canary."""
        return max((len(c) for c in self.index.canaries), default=0)

    def screen(self, stream: Iterable[Batch]) -> Iterator[list[Hit]]:
        """Screen batches of documents and pieces.

        Yields the hits of each screened batch (often none) as soon as it is done.
        """
        for batch in rebatch(
            stream,
            batch_bytes=self.batch_bytes,
            overlap_words=self.overlap_words,
            overlap_chars=self.overlap_chars,
            count_words=self.count_words,
        ):
            yield self.feed(batch)

    def feed(self, batch: Batch) -> list[Hit]:
        """Screen one batch; hits of the documents it completes.

        A document with confusable characters is screened folded as well (`_with_folded`);
        its hits are those of the stronger reading.
        """
        screened, origin = self._with_folded(batch)
        pieces = screened.pieces
        whole: list[bool] | None = None
        if pieces:
            whole = [True] * len(screened.texts)
            for k, piece in pieces.items():
                whole[k] = piece.whole
        split = sorted(k for k, p in pieces.items() if not p.whole)
        found: list[tuple[int, Hit]] = []
        n_bytes = -1
        canaries: list[tuple[int, str]] | None = None
        for k, part in enumerate(self._parts):  # the first part finds the canaries too
            hits, n_bytes, seen = part.feed(  # the size of the batch without folded copies
                screened, whole, split, () if k else self._canary_strings, len(batch.texts)
            )
            canaries = seen if k == 0 else canaries
            found.extend(hits)
        if n_bytes < 0:  # an index with no part
            n_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in batch.texts)
        if canaries is None:
            canaries = find_canaries(screened.texts, self._canary_strings)
        found.extend(self._canary_hits(screened, split, canaries))
        if screened is not batch:
            found = [(origin[d], hit) for d, hit in found]
        self.documents += len(batch.texts) - sum(not p.final for p in batch.pieces.values())
        self.bytes += n_bytes - sum(
            len(p.text[: p.overlap].encode("utf-8", "surrogatepass")) for p in batch.pieces.values()
        )
        return _merge(found)

    def _with_folded(self, batch: Batch) -> tuple[Batch, list[int]]:
        """`batch` plus a folded copy of each document with confusables; each one's origin.

        The copies (`fold_confusables`: one character for one, so piece overlaps hold) come
        after the batch's documents, under the same names. A long document is followed in
        every later piece once one piece needed folding, as a view of its own whose matches
        start from those of the pieces before (docs/design/guard-normalisation.md).
        """
        origin = list(range(len(batch.texts)))
        added = Batch()
        # only a document with non-ASCII text, or a piece of a long one, may need a copy
        candidates = set(compress(count(), map(operator.not_, map(str.isascii, batch.texts))))
        candidates.update(batch.pieces)
        order = sorted(candidates)
        for d, folded in zip(order, fold_all([batch.texts[d] for d in order]), strict=True):
            text = batch.texts[d]
            piece = batch.pieces.get(d)
            split = piece is not None and not piece.whole
            following = split and piece is not None and piece.name in self._folding
            if folded is text and not following:
                continue
            position = len(batch.texts) + len(added.texts)
            if piece is not None and split:
                view = piece.name + "\x00confusables folded"
                if not following:
                    for part in self._parts:
                        part.fork(piece.name, view)
                    self._canaries[view] = set(self._canaries.get(piece.name, ()))
                if piece.final:
                    self._folding.discard(piece.name)
                else:
                    self._folding.add(piece.name)
                added.pieces[position] = Piece(view, folded, piece.part, piece.final, piece.overlap)
            elif piece is not None:
                added.pieces[position] = Piece(piece.name, folded)
            added.names.append(batch.names[d])
            added.texts.append(folded)
            origin.append(d)
        if not added.texts:
            return batch, origin
        screened = Batch(
            [*batch.names, *added.names],
            [*batch.texts, *added.texts],
            {**batch.pieces, **added.pieces},
            batch.chars + sum(map(len, added.texts)),
        )
        return screened, origin

    def _canary_hits(
        self, batch: Batch, split: list[int], seen: list[tuple[int, str]]
    ) -> list[tuple[int, Hit]]:
        """Canaries found verbatim: a document's hits once it is whole.

        `seen`: `find_canaries` of the batch.
        """
        found: dict[int, set[str]] = {}
        for d, canary in seen:
            found.setdefault(d, set()).add(canary)
        for k in split:
            piece = batch.pieces[k]
            pending = self._canaries.setdefault(piece.name, set())
            pending.update(found.pop(k, set()))
            if piece.final:
                found[k] = self._canaries.pop(piece.name)
        hits: list[tuple[int, Hit]] = []
        for d in sorted(found):
            for canary in sorted(found[d]):
                for suite, version in self.index.canaries[canary]:
                    hits.append(
                        (d, Hit(batch.names[d], suite, version, None, None, 1.0, 1, "canary"))
                    )
        return hits


def screen_documents(
    docs: Iterable[tuple[str, str]],
    index: FingerprintIndex,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    batch_bytes: int = DEFAULT_BATCH_BYTES,
) -> list[Hit]:
    """Screen documents against frozen fingerprints: the per-shard function of the guard.

    Pure and deterministic: the result depends only on the arguments, and `index` is plain
    numpy arrays and small dicts (cheap to pickle or broadcast to Ray or Dask workers).

    Args:
        docs: (name, raw text) pairs; names should be unique (they label the hits).
        index: Fingerprints of the frozen suite versions (`load_index`).
        threshold: Share of an item's evidence n-grams a document must contain for an n-gram hit.
            Exact, short-text and canary hits do not depend on it.
        batch_bytes: Characters screened per vectorised step.

    Returns:
        One `Hit` per (document, suite version, item) found, and one per canary found, in
        document order.

    Examples:
        >>> from evalsuite.guard._index import build_index
        >>> screen_documents([("a", "nothing to see here")], build_index([]))
        []
    """
    screener = Screener(index, threshold=threshold, batch_bytes=batch_bytes)
    hits: list[Hit] = []
    for found in screener.screen(batches_of(docs)):
        hits.extend(found)
    return hits
