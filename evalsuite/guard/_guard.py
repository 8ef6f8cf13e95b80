"""The curriculum contamination guard: screen training data against every frozen fingerprint.

Needs no vault and no key: it reads only the fingerprint files beside the manifests (hashed
n-grams, text hashes and canaries), after checking each against its manifest's hash.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from evalsuite.guard._index import FingerprintIndex
from evalsuite.guard._readers import Format, Skipped, Source, find_sources, read_source
from evalsuite.guard._screen import DEFAULT_BATCH_BYTES, DEFAULT_THRESHOLD, Hit, Screener

__all__ = ["GuardOptions", "GuardReport", "guard", "screen_sources"]


@dataclass(frozen=True, slots=True)
class GuardOptions:
    """How to read and screen a curriculum."""

    field: str = "text"
    """Text field of JSONL records, column of Parquet files and HF datasets."""
    threshold: float = DEFAULT_THRESHOLD
    """Share of an item's evidence n-grams one document must contain to be flagged."""
    batch_bytes: int = DEFAULT_BATCH_BYTES
    """Characters screened per vectorised step (bounds memory)."""
    format: Format = "auto"
    """Input format; ``auto`` goes by file suffix."""


@dataclass(frozen=True, slots=True)
class GuardReport:
    """What the guard screened and found."""

    documents_scanned: int
    bytes_scanned: int
    seconds: float
    threshold: float
    manifests: list[str]
    """``suite@version`` of every fingerprint file screened against."""
    hits: list[Hit]
    skipped: list[Skipped] = field(default_factory=list)
    """Paths in the named directories that were not read, with the reason (unknown format,
    a symbolic link that dangles, loops, leaves the directory or repeats a file)."""
    fingerprints: list[tuple[str, str, bool]] = field(default_factory=list)
    """(``suite@version``, format, derived) of every fingerprint file screened against."""
    legacy_only: list[str] = field(default_factory=list)
    """Versions screened only with fingerprints of an older format (lower recall)."""

    @property
    def contaminated(self) -> bool:
        """True when any document overlaps a frozen item or holds a canary."""
        return bool(self.hits)

    @property
    def documents_flagged(self) -> int:
        """Distinct documents with at least one hit."""
        return len({h.document for h in self.hits})

    def to_dict(self) -> dict[str, object]:
        """The ``guard --json`` payload (docs/cli.md, "guard")."""
        return {
            "documents_scanned": self.documents_scanned,
            "bytes_scanned": self.bytes_scanned,
            "seconds": round(self.seconds, 3),
            "threshold": self.threshold,
            "manifests": self.manifests,
            "documents_flagged": self.documents_flagged,
            "skipped": [str(s.path) for s in self.skipped],
            "skipped_details": [{"path": str(s.path), "reason": s.reason} for s in self.skipped],
            "fingerprints": [
                {"manifest": ref, "format": fmt, "derived": derived}
                for ref, fmt, derived in self.fingerprints
            ],
            "legacy_only": self.legacy_only,
            "contaminated": [h.to_dict() for h in self.hits],
        }


def screen_sources(
    sources: Sequence[Source],
    index: FingerprintIndex,
    *,
    options: GuardOptions,
    skipped: Sequence[Skipped] = (),
    advance: Callable[[int], None] = lambda _: None,
) -> GuardReport:
    """Screen every source in turn (one core; see docs/guard.md to scale out).

    Args:
        sources: Inputs from `find_sources`.
        index: Fingerprints to screen against (`load_index`).
        options: Field, threshold, batch size.
        skipped: What `find_sources` skipped, to report.
        advance: Called with input bytes consumed, for a progress bar.
    """
    started = time.perf_counter()
    screener = Screener(index, threshold=options.threshold, batch_bytes=options.batch_bytes)
    hits: list[Hit] = []
    stream = (
        batch
        for source in sources
        for batch in read_source(
            source,
            field=options.field,
            piece_size=screener.piece_size,
            overlap_words=screener.overlap_words,
            overlap_chars=screener.overlap_chars,
            advance=advance,
            count_words=screener.count_words,
        )
    )
    for found in screener.screen(stream):
        hits.extend(found)
    return GuardReport(
        documents_scanned=screener.documents,
        bytes_scanned=screener.bytes,
        seconds=time.perf_counter() - started,
        threshold=options.threshold,
        manifests=list(index.sources),
        hits=hits,
        skipped=list(skipped),
        fingerprints=list(index.files),
        legacy_only=list(index.legacy_only),
    )


def guard(
    paths: Sequence[Path],
    index: FingerprintIndex,
    *,
    options: GuardOptions = GuardOptions(),
) -> GuardReport:
    """Screen the curricula at `paths` (files or directories) against `index`.

    Raises:
        NotFoundError: a path does not exist.
        UsageError: unknown format, a record without the text field, malformed input.
    """
    sources, skipped = find_sources(paths, options.format)
    return screen_sources(sources, index, options=options, skipped=skipped)
