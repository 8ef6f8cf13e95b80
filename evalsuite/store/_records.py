"""A stored run's record, and where a project's store is: no database library needed.

`RunRecord` is what every reader of the ``runs`` table returns, whether `Store` (SQLAlchemy)
or `RunReader`'s SQLite path (the standard library's sqlite3), so both build it here from a
row's values.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "JSON_RUN_FIELDS",
    "IngestStored",
    "RunRecord",
    "default_store_url",
    "missing_store_message",
    "run_from_mapping",
    "run_row",
    "sqlite_file",
]

JSON_RUN_FIELDS = ("model_args", "weights", "spec", "provenance")
"""Columns of ``runs`` stored as JSON text."""


def default_store_url(state_dir: Path) -> str:
    """``sqlite:///<project>/.evalsuite/results.sqlite``."""
    return f"sqlite:///{state_dir / 'results.sqlite'}"


@dataclass(frozen=True, slots=True)
class RunRecord:
    """One run: what was run, how, and its health.

    See docs/architecture.md, "Data model": Run health.
    """

    run_id: str
    model: str
    epochs: int
    planned: int
    status: Literal["running", "interrupted", "complete"]
    source: Literal["evalsuite", "inspect", "csv", "eee", "lm-eval", "helm"]
    started_at: str
    error_threshold: float = 0.05
    suite: str | None = None
    version: str | None = None
    manifest_hash: str | None = None
    split: str | None = None
    model_args: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    valid: bool | None = None
    error_rate: float | None = None
    weights: dict[str, float] = field(default_factory=dict)
    spec: dict[str, Any] = field(default_factory=dict)
    """The exact run spec (limits, retries, fault injection, ...), enough to resume."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """Package versions, git revision, host, user, command line."""
    finished_at: str | None = None
    content_hash: str | None = None
    """Ingested runs: fingerprint of the stored content (docs/design/ingest.md); else None."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form."""
        return asdict(self)


def run_from_mapping(row: Mapping[str, Any]) -> RunRecord:
    """The record of one ``runs`` row (column -> value, JSON columns as text)."""
    data = dict(row)
    for name in JSON_RUN_FIELDS:
        data[name] = json.loads(data[name] or "{}")
    return RunRecord(**data)


@dataclass(frozen=True, slots=True)
class IngestStored:
    """What `Store.add_ingested_run` did with one run's content."""

    content_hash: str
    run_id: str | None
    """The new run, or None when the same content was already stored (and not forced)."""
    existing: tuple[str, ...]
    """Runs that held the same content before this call, oldest first."""


def run_row(record: RunRecord) -> dict[str, Any]:
    """The ``runs`` table row of `record` (its JSON fields as text)."""
    row = {f.name: getattr(record, f.name) for f in fields(RunRecord)}
    for name in JSON_RUN_FIELDS:
        row[name] = json.dumps(row[name], sort_keys=True)
    return row


def missing_store_message(display_url: str) -> str:
    """What to say when a command that only reads finds no SQLite store at its path."""
    return (
        f"no results store at {display_url}: nothing has been run or ingested into it yet. "
        "Check --root and EVALSUITE_STORE (a project's own store is "
        "<root>/.evalsuite/results.sqlite), or store results first with `evalsuite run` or "
        "`evalsuite ingest`"
    )


def sqlite_file(url: str) -> Path | None:
    """The database file of a plain ``sqlite:///PATH`` URL; None for any other URL.

    URLs with a driver (``sqlite+pysqlite://``), options (``?``) or escapes (``%``), and
    in-memory databases, are left to SQLAlchemy.
    """
    prefix = "sqlite:///"
    if not url.startswith(prefix) or any(c in url for c in "?#%"):
        return None
    path = url.removeprefix(prefix)
    return Path(path) if path and path != ":memory:" else None
