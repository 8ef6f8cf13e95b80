"""`store info`: where the results store is, its schema version and what it holds; its view.

Reading changes nothing: an older store is reported (with the command that upgrades it), not
upgraded; a store of a newer schema is reported too (docs/store.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalsuite.service._format import fmt_bytes
from evalsuite.service._views import ResultView

if TYPE_CHECKING:
    from evalsuite.store import StoreInfo

__all__ = ["store_info", "store_info_view"]


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
