"""How far each shard of a sharded run has come, read from the store (no harness, no Ray).

Attempt k of a run's plan (items by id, then epochs 1..K; counting from 0) belongs to shard
``(k mod N) + 1`` (docs/design/sharded-runs.md), so the stored attempts of a run, placed in
its plan, say how many of each shard's share are done. `run --executor ray` prints this while
its shards run; `runs` shows it for a sharded run that is not complete (a Slurm job array's).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite.manifest import ManifestSummary
    from evalsuite.store import RunRecord, ShardRow

__all__ = ["ShardProgress", "plan_item_ids", "shard_progress", "shards_line"]


@dataclass(frozen=True, slots=True)
class ShardProgress:
    """One shard of a run: its state, and its attempts done of its share."""

    shard: int
    shards: int
    status: str
    """``running``, ``interrupted``, ``complete`` as stored, or ``waiting`` (not started)."""
    done: int | None
    """Attempts of its share stored so far (None: its plan could not be read)."""
    planned: int
    errors: int | None
    """Of those, harness errors (None: unknown)."""
    host: str | None = None

    def to_dict(self) -> JsonObject:
        """JSON-ready form (`runs --json`'s and `run --executor ray --json`'s ``shards``)."""
        return {
            "shard": self.shard,
            "shards": self.shards,
            "status": self.status,
            "done": self.done,
            "planned": self.planned,
            "errors": self.errors,
            "host": self.host,
        }

    def line(self) -> str:
        """``shard 1/2 running: 40/162 attempts, 0 errors``."""
        done = "?" if self.done is None else str(self.done)
        errors = "" if self.errors is None else f", {self.errors} error(s)"
        share = f"{done}/{self.planned} attempts{errors}"
        return f"shard {self.shard}/{self.shards} {self.status}: {share}"


def plan_item_ids(record: RunRecord, manifest: ManifestSummary | None) -> list[str] | None:
    """The items of `record`'s plan, by id (as the runner plans them), or None if unknown.

    None when the manifest cannot be read, or its items give another number of planned
    attempts than the run recorded (an adaptive run, or a manifest that changed).
    """
    if manifest is None or not record.split:
        return None
    spec: dict[str, Any] = dict(record.spec) if isinstance(record.spec, dict) else {}
    items = manifest.record().get("items", [])
    ids = sorted(str(i["id"]) for i in items if i.get("split") == record.split)
    chosen = spec.get("items")
    if isinstance(chosen, list):
        wanted = {str(i) for i in chosen}
        ids = [i for i in ids if i in wanted]
    limit = spec.get("limit_items")
    if isinstance(limit, int) and limit > 0:
        ids = ids[:limit]
    if len(ids) * max(record.epochs, 1) != record.planned:
        return None
    return ids


def _share_size(planned: int, shard: int, shards: int) -> int:
    return len(range(shard - 1, planned, shards))


def shard_progress(
    record: RunRecord,
    shards: int,
    item_ids: Sequence[str] | None,
    attempts: Iterable[tuple[str, int, str]],
    states: Sequence[ShardRow],
) -> list[ShardProgress]:
    """Every shard of `record` (split into `shards`), in order.

    Args:
        record: The run.
        shards: Its number of shards.
        item_ids: Its plan's item ids (`plan_item_ids`); None: the done counts are unknown.
        attempts: Its stored attempts as (item id, epoch, outcome).
        states: Its stored shard rows (a shard without one is ``waiting``).
    """
    done = [0] * shards
    errors = [0] * shards
    rank = {item: n for n, item in enumerate(item_ids or ())}
    epochs = max(record.epochs, 1)
    for item, epoch, outcome in attempts if item_ids is not None else ():
        position = rank.get(item)
        if position is None or not 1 <= epoch <= epochs:
            continue
        index = (position * epochs + epoch - 1) % shards
        done[index] += 1
        errors[index] += outcome == "harness_error"
    by_shard = {s.shard: s for s in states if s.shards == shards}
    known = item_ids is not None
    return [
        ShardProgress(
            shard=i,
            shards=shards,
            status=by_shard[i].status if i in by_shard else "waiting",
            done=done[i - 1] if known else None,
            planned=_share_size(record.planned, i, shards),
            errors=errors[i - 1] if known else None,
            host=by_shard[i].host if i in by_shard else None,
        )
        for i in range(1, shards + 1)
    ]


def shards_line(progress: Sequence[ShardProgress]) -> str:
    """``2/3 shards complete · 300/324 attempts · 1 error(s)``: a sharded run in one line."""
    complete = sum(p.status == "complete" for p in progress)
    text = f"{complete}/{len(progress)} shards complete"
    if progress and all(p.done is not None for p in progress):
        done = sum(p.done or 0 for p in progress)
        planned = sum(p.planned for p in progress)
        errors = sum(p.errors or 0 for p in progress)
        text += f" · {done}/{planned} attempts · {errors} error(s)"
    return text
