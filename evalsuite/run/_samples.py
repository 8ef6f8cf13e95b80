"""Items become inspect Samples: one conversion, used by the runner and standalone tasks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from inspect_ai.dataset import Sample

__all__ = ["item_to_sample", "standalone_samples"]


def item_to_sample(
    payload: Mapping[str, Any],
    *,
    sample_id: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> Sample:
    """An inspect `Sample` from an item payload (``id``, ``input``, ``target``, ...).

    Args:
        payload: The item record (as frozen).
        sample_id: Sample id to use (default: the item id).
        extra: Metadata added beside the item's own (e.g. the runner's episode spec).
    """
    metadata = dict(payload.get("metadata") or {})
    metadata["item_id"] = payload["id"]
    if extra:
        metadata.update(extra)
    return Sample(
        id=sample_id or str(payload["id"]),
        input=payload["input"],
        target=payload["target"],
        metadata=metadata,
        files=dict(payload["files"]) if payload.get("files") else None,
        setup=payload.get("setup"),
    )


def standalone_samples(path: Path) -> list[Sample]:
    """Samples of the dev items in a JSONL item source, for ``inspect eval`` outside evalsuite."""
    samples = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            samples.append(item_to_sample(json.loads(line)))
    return samples
