"""Whether a run covered its split (docs/design/partial-runs.md), without the analysis stack.

`evalsuite runs` flags partial runs; it imports this module, not `_payloads` (numpy, the
analyses), so that it starts at once (docs/scale.md, "Start-up").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalsuite._core.jsonout import JsonObject
from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError
from evalsuite.manifest import load_manifest_summary

if TYPE_CHECKING:
    from evalsuite.manifest import ManifestSummary
    from evalsuite.store import RunRecord

__all__ = ["Completeness", "run_completeness"]


@dataclass(frozen=True, slots=True)
class Completeness:
    """Whether a run covered its whole split (docs/design/partial-runs.md).

    Attributes:
        partial: the run planned fewer items than its split holds (``run --limit N``, or an
            ingested subset); its score is not the suite's score.
        n_items_run: items the run planned (``planned / epochs``).
        n_items_split: items in the run's split of its manifest (None: no manifest found).
        item_limit: the ``--limit`` the run was started with (None: none).
    """

    partial: bool
    n_items_run: int
    n_items_split: int | None
    item_limit: int | None

    def to_dict(self) -> JsonObject:
        """``partial``, ``n_items_run``, ``n_items_split``, ``item_limit``."""
        return {
            "partial": self.partial,
            "n_items_run": self.n_items_run,
            "n_items_split": self.n_items_split,
            "item_limit": self.item_limit,
        }

    def describe(self, run: RunRecord) -> str:
        """E.g. ``run X is PARTIAL: 5 of 40 dev items (run with --limit 5)``."""
        of = f" of {self.n_items_split}" if self.n_items_split is not None else ""
        limit = f" (run with --limit {self.item_limit})" if self.item_limit else ""
        split = f" {run.split}" if run.split else ""
        return (
            f"run {run.run_id} is PARTIAL: {self.n_items_run}{of}{split} items"
            f"{limit}; its numbers describe those items, not the suite"
        )


def run_completeness(
    run: RunRecord,
    layout: Layout | None,
    *,
    manifests: dict[tuple[str, str], ManifestSummary | None] | None = None,
) -> Completeness:
    """Whether `run` covered its split, derived from the stored run (no schema change).

    The run's spec records its item limit; its planned attempts divided by its epochs give
    the items it ran, compared with the size of its split in its manifest. Without a
    layout, or when the manifest cannot be read, only the item limit is known: a run started
    with ``--limit`` then counts as partial. Pass the same `manifests` dict for many runs:
    each suite version's manifest is then read once ((suite, version) -> manifest, or None
    when it cannot be read).
    """
    n_run = run.planned // max(run.epochs, 1)
    raw_limit = run.spec.get("limit_items") if isinstance(run.spec, dict) else None
    limit = int(raw_limit) if isinstance(raw_limit, int) and raw_limit > 0 else None
    n_split: int | None = None
    if layout is not None and run.suite and run.version and run.split in ("dev", "holdout"):
        key = (run.suite, run.version)
        manifest: ManifestSummary | None
        if manifests is not None and key in manifests:
            manifest = manifests[key]
        else:
            try:
                manifest = load_manifest_summary(layout, run.suite, run.version)
            except EvalsuiteError:
                manifest = None
            if manifests is not None:
                manifests[key] = manifest
        if manifest is not None and (
            not run.manifest_hash or run.manifest_hash == manifest.manifest_hash
        ):
            n_split = manifest.count(run.split)
    partial = n_run < n_split if n_split is not None else limit is not None
    return Completeness(partial, n_run, n_split, limit)
