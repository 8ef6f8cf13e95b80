"""Labels of attempts: failure modes and a note, saved at once to the store, history kept."""

from __future__ import annotations

import getpass
import json
import os
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from evalsuite.errors import NotFoundError, UsageError
from evalsuite.review._taxonomy import Taxonomy

if TYPE_CHECKING:
    from evalsuite.store import Store

__all__ = [
    "AttemptLabel",
    "check_label",
    "default_labeller",
    "label_history",
    "load_labels",
    "now_utc",
    "save_label",
]

_NOTE_LIMIT = 20_000


def now_utc() -> str:
    """The current time as ISO 8601 UTC, to the second (``2026-12-06T03:30:00Z``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_labeller() -> str:
    """Who labels: ``$EVALSUITE_LABELLER``, else the login name."""
    named = os.environ.get("EVALSUITE_LABELLER", "").strip()
    if named:
        return named
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry (a container): still say something
        return "unknown"


@dataclass(frozen=True, slots=True)
class AttemptLabel:
    """One labelling of an attempt (run, item, epoch): its failure modes and a free note.

    An empty `modes` says "looked at, no failure mode applies" (a note may say why).
    """

    run_id: str
    item_id: str
    epoch: int
    modes: tuple[str, ...]
    note: str = ""
    who: str = ""
    at: str = ""
    """ISO 8601 UTC; `save_label` fills it in when empty."""
    taxonomy_version: str = ""

    @property
    def key(self) -> tuple[str, int]:
        """(item_id, epoch): the attempt within its run."""
        return (self.item_id, self.epoch)

    def to_dict(self) -> dict[str, Any]:
        """The label as plain data (modes as a list)."""
        return {
            "run_id": self.run_id,
            "item_id": self.item_id,
            "epoch": self.epoch,
            "modes": list(self.modes),
            "note": self.note,
            "who": self.who,
            "at": self.at,
            "taxonomy_version": self.taxonomy_version,
        }


def check_label(label: AttemptLabel, taxonomy: Taxonomy) -> AttemptLabel:
    """`label` checked against `taxonomy`, its version filled in when empty.

    Raises:
        UsageError: a mode the taxonomy does not have, a mode named twice, or a label made
            against another version of the taxonomy.
    """
    for name in label.modes:
        taxonomy.mode(name)
    if len(set(label.modes)) != len(label.modes):
        raise UsageError(f"label of {label.item_id} epoch {label.epoch}: a mode is named twice")
    version = label.taxonomy_version or taxonomy.version
    if version != taxonomy.version:
        raise UsageError(
            f"label of {label.item_id} epoch {label.epoch} was made against taxonomy version "
            f"{version}, but the taxonomy of {taxonomy.suite} is at version {taxonomy.version}; "
            "re-label the attempt against the current version"
        )
    return replace(label, taxonomy_version=version)


def _checked_fields(label: AttemptLabel) -> None:
    if not label.run_id or not label.item_id:
        raise UsageError("a label needs a run id and an item id")
    if isinstance(label.epoch, bool) or not isinstance(label.epoch, int) or label.epoch < 1:
        raise UsageError(f"epoch {label.epoch!r}: expected an integer of at least 1")
    if len(label.note) > _NOTE_LIMIT:
        raise UsageError(f"the note has {len(label.note)} characters; keep it under {_NOTE_LIMIT}")
    if not label.taxonomy_version:
        raise UsageError(
            "a label needs the taxonomy version it was made against; pass the taxonomy "
            "(save_label(..., taxonomy=...)) or set taxonomy_version"
        )


def save_label(store: Store, label: AttemptLabel, *, taxonomy: Taxonomy | None = None) -> None:
    """Save `label` in the store at once; earlier labels of the attempt stay as its history.

    With `taxonomy` the modes are checked against it and the label's version filled in;
    `who` defaults to `default_labeller()` and `at` to now.

    Raises:
        UsageError: a bad field, or a mode the taxonomy does not have.
        NotFoundError: no such run, or the run has no attempt (item, epoch).
    """
    if taxonomy is not None:
        label = check_label(label, taxonomy)
    label = replace(
        label,
        who=label.who.strip() or default_labeller(),
        at=label.at or now_utc(),
        modes=tuple(label.modes),
    )
    _checked_fields(label)
    if label.key not in store.attempt_keys(label.run_id):
        raise NotFoundError(
            f"run {label.run_id} has no attempt of item {label.item_id!r} at epoch "
            f"{label.epoch}; check the item id and the epoch (1 to the run's epochs)"
        )
    store.add_label_row(label.to_dict() | {"modes": json.dumps(list(label.modes))})


def _label(row: dict[str, Any]) -> AttemptLabel:
    return AttemptLabel(
        run_id=row["run_id"],
        item_id=row["item_id"],
        epoch=int(row["epoch"]),
        modes=tuple(json.loads(row["modes"])),
        note=row["note"],
        who=row["who"],
        at=row["at"],
        taxonomy_version=row["taxonomy_version"],
    )


def load_labels(store: Store, run_id: str) -> list[AttemptLabel]:
    """The current label of each labelled attempt of run `run_id` (its latest save)."""
    return [_label(row) for row in store.label_rows(run_id)]


def label_history(store: Store, run_id: str) -> list[AttemptLabel]:
    """Every label ever saved on run `run_id`, in the order they were saved."""
    return [_label(row) for row in store.label_rows(run_id, history=True)]
