"""`store info` and `store upgrade`: the results store's schema version and what it holds.

Reading changes nothing: an older store is reported (with the command that upgrades it), not
upgraded; a store of a newer schema is reported too (docs/store.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalsuite.service._format import fmt_bytes
from evalsuite.service._views import ResultView

if TYPE_CHECKING:
    from pathlib import Path

    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.store import StoreInfo

__all__ = ["StoreUpgrade", "store_info", "store_info_view", "upgrade_store"]


def store_info(url: str) -> StoreInfo:
    """What the store at `url` is and holds (typed: `evalsuite.store.StoreInfo`)."""
    from evalsuite.store import Store

    return Store(url, upgrade=False, refuse_newer=False).info()


def store_info_view(info: StoreInfo) -> ResultView:
    """What `evalsuite store info` prints and writes as ``--json`` (today's fields)."""
    version = "none (empty)" if info.schema_version is None else str(info.schema_version)
    facts = [f"schema version {version}; this evalsuite uses version {info.supported_version}"]
    if info.written_by:
        facts.append(f"written by evalsuite {info.written_by}")
    facts.append(f"holds {info.runs} runs, {info.attempts} attempts, {info.outcomes} outcomes")
    facts.append(f"size {fmt_bytes(info.size_bytes)}")
    alerts = []
    if info.state == "older":
        alerts.append(
            "older schema: run `evalsuite store upgrade` (any command that writes would upgrade it)"
        )
    elif info.state == "newer":
        alerts.append(
            "newer schema: this evalsuite refuses to use it: upgrade evalsuite to the version "
            "that wrote it"
        )
    return ResultView(
        kind="store_info",
        title="results store",
        headline=f"{info.url} ({info.backend}), schema {info.state}",
        alerts=tuple(alerts),
        gate_line=None,
        tables=(),
        facts=tuple(facts),
        caveats=(),
        payload=info.to_dict(),
    )


@dataclass(frozen=True, slots=True)
class StoreUpgrade:
    """What `store upgrade` did.

    Attributes:
        url: the store (password hidden).
        from_version: its schema version before (None: the store was created).
        to_version: its schema version now.
        gates_imported: gates recorded by `compare` before schema version 5 in the project's
            ``.evalsuite/gates/``, now imported into the store.
        gate_files_not_imported: files of that folder that are not a valid gate record.
        gates_folder: that folder.
    """

    url: str
    from_version: int | None
    to_version: int
    gates_imported: int
    gate_files_not_imported: tuple[str, ...]
    gates_folder: Path

    def to_dict(self) -> JsonObject:
        """The ``store upgrade --json`` payload (docs/cli.md)."""
        return {
            "url": self.url,
            "from_version": self.from_version,
            "to_version": self.to_version,
            "gates_imported": self.gates_imported,
            "gate_files_not_imported": list(self.gate_files_not_imported),
        }

    @property
    def lines(self) -> tuple[str, ...]:
        """What the command prints, one sentence a line."""
        before, after = self.from_version, self.to_version
        if before is None:
            out = [f"created the store {self.url} at schema version {after}"]
        elif before == after:
            out = [f"the store {self.url} is at schema version {after}: nothing to do"]
        else:
            out = [f"upgraded the store {self.url} from version {before} to {after}"]
        if self.gates_imported:
            out.append(
                f"imported {self.gates_imported} gate(s) recorded by `compare` from "
                f"{self.gates_folder} into the store (the folder is now gates.imported)"
            )
        if self.gate_files_not_imported:
            out.append(
                "not imported (not a valid gate record): "
                f"{', '.join(self.gate_files_not_imported)} in {self.gates_folder}"
            )
        return tuple(out)


def upgrade_store(url: str, layout: Layout) -> StoreUpgrade:
    """Create the store at `url`, or upgrade its schema to this evalsuite's, in one transaction.

    Gates that `compare` recorded before schema version 5 in the project's
    ``.evalsuite/gates/`` are imported into the store.

    Raises:
        StoreError: the store has a newer schema than this evalsuite knows (left as it is),
            or the upgrade did not reach the current version.
    """
    from evalsuite.errors import StoreError
    from evalsuite.service._gates import LEGACY_DIR, import_local_gates
    from evalsuite.store import SCHEMA_VERSION, Store

    store = Store(url, upgrade=False)
    before, after = store.upgrade()
    imported, bad = import_local_gates(store, layout)
    if after != SCHEMA_VERSION:  # pragma: no cover - upgrade reaches the current version
        raise StoreError(f"the store is at version {after}, not {SCHEMA_VERSION}")
    return StoreUpgrade(
        url=store.display_url,
        from_version=before,
        to_version=after,
        gates_imported=imported,
        gate_files_not_imported=tuple(bad),
        gates_folder=layout.state / LEGACY_DIR,
    )
