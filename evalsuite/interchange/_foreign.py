"""Results read from another tool's files, as rows of the results-table contract.

Every foreign reader (Every Eval Ever, lm-eval, HELM) turns its files into `ForeignRows`: one
row per attempt (model, item id, epoch, score, outcome), each with the place in the original
files it came from, and the item's content hash where the format has one. `ingest_foreign`
hands them to the run stage's checked, one-transaction path (`evalsuite.run.ResultsTable` over
an in-memory table, `ingest_checked_table`): the same checks as a CSV, messages naming the
original file and line, nothing stored unless every row is valid (docs/interchange.md).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from evalsuite.errors import ItemSourceError

if TYPE_CHECKING:
    from evalsuite.manifest import Manifest
    from evalsuite.run import IngestReport, IngestSource
    from evalsuite.store import Store

__all__ = ["ForeignRows", "ingest_foreign"]

TOLERANCE = 1e-9
"""How far a record's own aggregate may be from the mean of its samples (float rounding)."""


@dataclass(slots=True)
class ForeignRows:
    """Attempts read from another tool's files, before any check of the contract's."""

    source: IngestSource
    origin: Path
    """The file or directory the command named (messages start with it)."""
    models: list[str] = field(default_factory=list)
    ids: list[tuple[str, ...]] = field(default_factory=list)
    """Each row's item id candidates, best first: the first one that is an item of the
    attached suite is the item (the first one without ``--suite``)."""
    hashes: list[str | None] = field(default_factory=list)
    """The item's content hash where the format records one (EEE ``sample_hash``)."""
    epochs: list[int | None] = field(default_factory=list)
    """None: numbered in file order per (model, item), from 1."""
    scores: list[float | None] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    limit_types: list[str | None] = field(default_factory=list)
    strata: list[str | None] = field(default_factory=list)
    """The item's stratum where the file says (with ``--suite`` the manifest's must agree)."""
    places: list[str] = field(default_factory=list)
    """Where each row is: ``FILE line N`` (or ``FILE, instance X``)."""
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)
    """model -> what the run spec records of where its rows came from."""
    manifest_hash: str | None = None
    """The manifest an evalsuite export names (linked when it is frozen in this project)."""

    def add(  # noqa: PLR0913 (one per column)
        self,
        model: str,
        ids: tuple[str, ...],
        score: float | None,
        place: str,
        *,
        epoch: int | None = None,
        sample_hash: str | None = None,
        outcome: str = "scored",
        limit_type: str | None = None,
        stratum: str | None = None,
    ) -> None:
        """Add one attempt."""
        self.models.append(model)
        self.ids.append(ids)
        self.hashes.append(sample_hash)
        self.epochs.append(epoch)
        self.scores.append(score)
        self.outcomes.append(outcome)
        self.limit_types.append(limit_type)
        self.strata.append(stratum)
        self.places.append(place)

    def item_ids(self, manifest: Manifest | None) -> list[str]:
        """Each row's item: an id candidate that is an item of `manifest`, else its hash's item.

        Without `manifest` (or when neither matches) the first candidate: `--suite` then
        refuses the ids that are not its items, naming them.
        """
        if manifest is None:
            return [ids[0] for ids in self.ids]
        known = {i.id for i in manifest.items}
        by_hash = {i.hash: i.id for i in manifest.items}
        chosen = []
        for ids, content in zip(self.ids, self.hashes, strict=True):
            hit = next((i for i in ids if i in known), None)
            if hit is None and content is not None:
                hit = by_hash.get(content)
            chosen.append(hit if hit is not None else ids[0])
        return chosen

    def table(self, manifest: Manifest | None) -> pa.Table:
        """The rows in the results-table contract's columns, as text (as a CSV holds them)."""
        items = self.item_ids(manifest)
        counts: Counter[tuple[str, str]] = Counter()
        epochs = []
        for model, item, epoch in zip(self.models, items, self.epochs, strict=True):
            counts[(model, item)] += 1
            epochs.append(str(epoch if epoch is not None else counts[(model, item)]))
        return pa.table(
            {
                "model": pa.array(self.models, pa.string()),
                "item_id": pa.array(items, pa.string()),
                "epoch": pa.array(epochs, pa.string()),
                "score": pa.array(["" if s is None else repr(s) for s in self.scores]),
                "outcome": pa.array(self.outcomes, pa.string()),
                "limit_type": pa.array([t or "" for t in self.limit_types], pa.string()),
                "stratum": pa.array([t or "" for t in self.strata], pa.string()),
            }
        )


def check_mean(
    declared: float, scores: list[float], items: list[str], *, where: str, field_name: str
) -> None:
    """Refuse a record whose aggregate is neither the mean of its samples nor of its items.

    Raises:
        ItemSourceError: naming `field_name`, the declared value and both means.
    """
    if not scores:
        raise ItemSourceError(f"{where}: no scored sample for {field_name}; nothing to ingest")
    plain = sum(scores) / len(scores)
    per_item: dict[str, list[float]] = {}
    for item, score in zip(items, scores, strict=True):
        per_item.setdefault(item, []).append(score)
    item_mean = sum(sum(v) / len(v) for v in per_item.values()) / len(per_item)
    if min(abs(declared - plain), abs(declared - item_mean)) > TOLERANCE:
        raise ItemSourceError(
            f"{where}: {field_name} is {declared!r}, but its {len(scores)} samples average "
            f"{plain!r} ({item_mean!r} as a mean of {len(per_item)} item means); the record "
            "disagrees with its own samples, so nothing was stored. Regenerate the record "
            "and its samples together with the tool that wrote them"
        )


def ingest_foreign(
    rows: ForeignRows,
    store: Store,
    *,
    root: Path,
    suite: Manifest | None,
    split: str | None,
    error_threshold: float,
    again: bool,
) -> IngestReport:
    """Store `rows` as one run per model through the run stage's checked path.

    Raises:
        ItemSourceError: no rows, or any row the results-table contract refuses (named by its
            place in the original files); nothing is stored.
    """
    from evalsuite.run import CsvOptions, ResultsTable, ingest_checked_table

    if not rows.models:
        raise ItemSourceError(f"{rows.origin}: no samples to ingest")
    places = rows.places
    table = ResultsTable(
        rows.origin,
        CsvOptions(columns={}, error_threshold=error_threshold),
        "parquet",
        table=rows.table(suite),
        where=lambda row: places[row],
        reason=f"ingested from {rows.source}",
    )
    return ingest_checked_table(
        table,
        store,
        root=root,
        source=rows.source,
        extra=lambda model: rows.extra.get(model, {}),
        again=again,
        suite=suite,
        split=split,
    )
