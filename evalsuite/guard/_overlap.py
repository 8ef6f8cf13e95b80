"""Before a freeze: does a new item near-copy an item an earlier version froze?

A version's new items are split into dev (published) and holdout (vaulted) only at the
freeze. A new item that near-copies an earlier version's *dev* item may land in the holdout,
which is then public text in all but name; one that near-copies an earlier *holdout* item
may land in dev, which publishes that holdout item's text. Either way the freeze would
weaken a holdout, so `freeze` refuses it before anything is written (docs/guard.md,
"Before a freeze"). Templated generators make such pairs by chance: records@2.0.0 was frozen
with two holdout requests that repeat records@1.0.0 dev requests (same company, same
template) before this check existed.

The screen is the guard's own (`screen_documents` over the frozen versions' fingerprints, at
the guard's default threshold), on each new item's first text (its prompt). Results name
items by id only.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from evalsuite._core.layout import Layout
from evalsuite.guard._index import frozen_suites, load_index
from evalsuite.guard._screen import screen_documents
from evalsuite.manifest import (
    frozen_versions,
    item_texts,
    load_manifest,
    load_suite,
    load_suite_items,
)

__all__ = ["FrozenOverlap", "new_item_overlaps"]


@dataclass(frozen=True, slots=True)
class FrozenOverlap:
    """A new item whose prompt near-copies an item an earlier version froze."""

    item_id: str
    """The new item (in the suite's item sources, in no frozen version)."""
    suite: str
    version: str
    split: str
    frozen_id: str
    """The frozen item it near-copies (another id)."""
    overlap: float
    """Share of the frozen item's evidence found in the new item's prompt."""

    def describe(self) -> str:
        """One line naming both items by id (never by text)."""
        return (
            f"new item {self.item_id} near-copies {self.split} item {self.frozen_id} of "
            f"{self.suite}@{self.version} (overlap {self.overlap:.2f})"
        )


def new_item_overlaps(
    layout: Layout, suite_name: str, *, retire: Iterable[str] = ()
) -> list[FrozenOverlap]:
    """The new items of `suite_name` that near-copy an item of any frozen version of any suite.

    New items: those in the suite's item sources, not retired, that no frozen version of the
    suite holds (an item carried over from a parent keeps its id and is not new). An empty
    list when nothing is frozen anywhere yet.
    """
    retired = set(retire)
    held: set[str] = set()
    for version in frozen_versions(layout, suite_name):
        held.update(i.id for i in load_manifest(layout, suite_name, version).items)
    docs = [
        (entry.item.id, item_texts(entry.item)[0])
        for entry in load_suite_items(layout, load_suite(layout, suite_name))
        if entry.item.id not in held and entry.item.id not in retired
    ]
    if not docs or not frozen_suites(layout):
        return []
    index = load_index(layout)
    found = {
        (hit.document, hit.suite, hit.version, hit.item_id): hit
        for hit in screen_documents(docs, index)
        if hit.item_id is not None and hit.item_id != hit.document
    }
    return [
        FrozenOverlap(
            item_id=hit.document,
            suite=hit.suite,
            version=hit.version,
            split=str(hit.split),
            frozen_id=str(hit.item_id),
            overlap=hit.overlap,
        )
        for hit in sorted(found.values(), key=lambda h: (h.document, h.suite, h.version))
    ]
