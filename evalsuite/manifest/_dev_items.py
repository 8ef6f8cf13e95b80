"""Dev items taken from a task's own dataset, frozen beside the manifest.

A family without an item source (no ``items`` in its suite file) gets its items from its
task's dataset at `freeze` (docs/design/foreign-tasks.md). Its holdout items are sealed in
the vault like any other; its dev items are written to ``manifests/<suite>/<version>.items.jsonl``
(one ``{"family": ..., "item": {...}}`` per line, sorted by id, each item carrying the
suite's canary), recorded in the manifest by path and hash (``dev_items``). `verify` and
`run` read them from there, so a run never needs the task's dataset again (nor a download).
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from pydantic import ValidationError

from evalsuite._core.hashing import sha256_file
from evalsuite._core.layout import Layout
from evalsuite.errors import IntegrityError
from evalsuite.manifest._items import Item, LoadedItem
from evalsuite.manifest._schema import Manifest

__all__ = ["read_frozen_dev_items", "render_dev_items"]


def render_dev_items(entries: Iterable[tuple[str, Item]], *, canary: str) -> str:
    """The file's text: one ``{"family", "item"}`` record per line, sorted by item id."""
    lines = []
    for family, item in sorted(entries, key=lambda e: e[1].id):
        payload = item.model_copy(update={"canary": canary}).payload()
        record = {"family": family, "item": payload}
        lines.append(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    return "".join(lines)


def read_frozen_dev_items(layout: Layout, manifest: Manifest) -> list[LoadedItem]:
    """The dev items a manifest froze from tasks' datasets (empty when it froze none).

    Raises:
        IntegrityError: the file is missing, no longer hashes as recorded, or holds a record
            that is not an item (it is written by `freeze` and must not be edited).
    """
    record = manifest.dev_items
    if record is None:
        return []
    path = layout.root / record.path
    restore = "restore it from version control (it is written by `evalsuite freeze`)"
    if not path.is_file():
        raise IntegrityError(f"frozen dev items file {record.path} is missing; {restore}")
    actual = sha256_file(path)
    if actual != record.sha256:
        raise IntegrityError(
            f"frozen dev items file {record.path} was modified after freezing (hashes to "
            f"{actual}, frozen as {record.sha256}); {restore}"
        )
    loaded = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
            loaded.append(
                LoadedItem(
                    item=Item.model_validate(raw["item"]),
                    family=str(raw["family"]),
                    location=f"{record.path}:{number}",
                )
            )
        except (json.JSONDecodeError, KeyError, TypeError, ValidationError):
            raise IntegrityError(
                f"{record.path}:{number}: not a frozen item record; {restore}"
            ) from None
    return loaded
