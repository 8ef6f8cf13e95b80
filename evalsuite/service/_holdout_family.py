"""`holdout family`: record that a model belongs to another holdout budget family.

A model's family is recorded at its first holdout run and kept; `change_family` is the
audited way to change it: a hash-chained entry in the suite's access ledger with the reason
(docs/design/holdout-governance.md). It returns a typed `FamilyChange`; the command prints
its `sentence` or writes its `to_dict` as ``--json`` (docs/cli.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from evalsuite.errors import NotFoundError, UsageError

if TYPE_CHECKING:
    from pathlib import Path

    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout

__all__ = ["FamilyChange", "change_family"]


@dataclass(frozen=True, slots=True)
class FamilyChange:
    """A model's move to another holdout budget family, as the ledger recorded it.

    Attributes:
        suite: the suite whose ledger holds the entry.
        model: the model that moved.
        model_family: the family it belongs to from now on.
        previous_family: the family it belonged to before (None: none recorded).
        reason: why, as recorded (stripped).
        seq: the ledger entry's sequence number.
        hash: the ledger entry's hash.
    """

    suite: str
    model: str
    model_family: str
    previous_family: str | None
    reason: str
    seq: int
    hash: str

    def to_dict(self) -> JsonObject:
        """The ``holdout family --json`` payload (docs/cli.md)."""
        return {
            "suite": self.suite,
            "model": self.model,
            "model_family": self.model_family,
            "previous_family": self.previous_family,
            "reason": self.reason,
            "seq": self.seq,
            "hash": self.hash,
        }

    @property
    def sentence(self) -> str:
        """What the command prints."""
        was = f"from {self.previous_family!r} " if self.previous_family else ""
        return (
            f"{self.model} moved {was}to family {self.model_family!r} on {self.suite} (ledger "
            f"entry {self.seq}); its earlier holdout runs stay counted under the family they "
            "ran as"
        )


def change_family(
    layout: Layout, key_dir: Path, suite: str, model: str, family: str, *, reason: str
) -> FamilyChange:
    """Record in `suite`'s access ledger that `model` belongs to budget `family` from now on.

    Runs made before stay counted under the family they ran as.

    Raises:
        NotFoundError: the suite has no frozen version (exit 2).
        UsageError: an empty reason or family, or the model already belongs to `family`.
        IntegrityError: the ledger's hash chain or its anchor does not hold (exit 3).
    """
    from evalsuite.holdout import anchor_file, family_mapping, open_ledger, who
    from evalsuite.manifest import frozen_versions, parse_ref

    name, _ = parse_ref(suite)
    if not frozen_versions(layout, name):
        raise NotFoundError(f"suite {name!r} has no frozen version: no holdout to govern")
    if not reason.strip():
        raise UsageError("--reason must say why the model changes family (it is recorded)")
    if not family.strip():
        raise UsageError("FAMILY must not be empty")
    user, host = who()
    anchor = anchor_file(key_dir, layout.root, name)
    with open_ledger(layout.ledger_file(name), anchor=anchor) as ledger:
        before = family_mapping(ledger.entries).get(model)
        if before == family:
            raise UsageError(f"model {model!r} already belongs to family {family!r} on {name}")
        entry = ledger.append(
            {
                "run_id": "",
                "suite": name,
                "version": "",
                "manifest_hash": "",
                "model": model,
                "model_family": family,
                "user": user,
                "host": host,
                "at": datetime.now(UTC).isoformat(),
                "purpose": None,
                "override_reason": None,
                "resumed": False,
                "kind": "family",
                "reason": reason.strip(),
            }
        )
    return FamilyChange(
        suite=name,
        model=model,
        model_family=family,
        previous_family=before,
        reason=entry.reason if entry.reason is not None else reason.strip(),
        seq=entry.seq,
        hash=entry.hash,
    )
