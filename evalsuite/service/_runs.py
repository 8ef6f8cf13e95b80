"""`runs`: the stored runs, oldest first, with their completeness, health and audit; one view.

Read through the store's fast reader (`evalsuite.store.RunReader`: SQLite without SQLAlchemy),
so that `runs` imports no analysis, database or harness library (docs/scale.md, "Start-up").
``runs --json`` is a list of runs (today's fields); the terminal shows one line per run,
never wrapped, the newest `RUNS_SHOWN` by default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalsuite._core.display import printable
from evalsuite.service._completeness import Completeness, run_completeness
from evalsuite.service._shard_progress import (
    ShardProgress,
    plan_item_ids,
    shard_progress,
    shards_line,
)
from evalsuite.service._views import Column, ResultView, TableView

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import AuditStatus, ManifestSummary
    from evalsuite.store import RunReader, RunRecord

__all__ = ["RUNS_SHOWN", "RunListing", "RunsResult", "list_runs", "runs_view"]

RUNS_SHOWN = 50
"""Runs `evalsuite runs` shows by default (the newest); ``--all`` or ``--limit N`` for others."""


@dataclass(frozen=True, slots=True)
class RunListing:
    """One stored run as `runs` lists it."""

    run: RunRecord
    completeness: Completeness
    audit: AuditStatus
    """Its suite version's grader audit status."""
    top_error: tuple[str, int] | None = None
    """Its most frequent harness error and how often it occurred (None: no harness error)."""
    shards: tuple[ShardProgress, ...] | None = None
    """A sharded run that is not complete: each shard's state and attempts done (None:
    any other run)."""

    def to_dict(self) -> JsonObject:
        """One entry of ``runs --json``."""
        r = self.run
        return {
            "run_id": r.run_id,
            "suite": r.suite,
            "version": r.version,
            "split": r.split,
            "model": r.model,
            "valid": r.valid,
            "started_at": r.started_at,
            "status": r.status,
            "epochs": r.epochs,
            "planned": r.planned,
            "error_rate": r.error_rate,
            "source": r.source,
            "top_error": (
                None
                if self.top_error is None
                else {"reason": self.top_error[0], "count": self.top_error[1]}
            ),
            **self.completeness.to_dict(),
            "audit": self.audit.state,
            "judges": dict(sorted(self.audit.judges.items())),
            "shards": None if self.shards is None else [p.to_dict() for p in self.shards],
        }


@dataclass(frozen=True, slots=True)
class RunsResult:
    """The runs listed, oldest first, and how many the store holds.

    Attributes:
        runs: the runs listed (the newest `newest`, or all).
        total: how many runs (of `suite`) the store holds.
        suite: the suite the listing is limited to, if any.
        missing_store: the message naming the store when it does not exist (else None).
    """

    runs: tuple[RunListing, ...]
    total: int
    suite: str | None = None
    missing_store: str | None = None

    def to_list(self) -> list[JsonObject]:
        """The ``runs --json`` payload: a list, one object per run."""
        return [r.to_dict() for r in self.runs]


def list_runs(
    layout: Layout, store_url: str | None, *, suite: str | None = None, newest: int | None = None
) -> RunsResult:
    """The stored runs (of `suite`), oldest first; only the newest `newest` when given.

    `store_url`: ``$EVALSUITE_STORE``, or None for the project's default store (a default
    store that does not exist is read as empty and not created).
    """
    from evalsuite.manifest import suite_audit_status
    from evalsuite.store import RunReader, default_store_url, missing_store_message

    reader = RunReader(store_url or default_store_url(layout.state))
    records = reader.runs(suite=suite, newest=newest)
    full = newest is None or len(records) < newest
    total = len(records) if full else reader.count(suite=suite)
    manifests: dict[tuple[str, str], ManifestSummary | None] = {}
    versions = dict.fromkeys((r.suite, r.version) for r in records)  # each read once
    audits = {(s, v): suite_audit_status(layout, s, v) for s, v in versions}
    top_error = reader.top_error_reasons([r.run_id for r in records if r.error_rate])
    listed = tuple(
        RunListing(
            r,
            run_completeness(r, layout, manifests=manifests),
            audits[(r.suite, r.version)],
            top_error.get(r.run_id),
            _shards(reader, r, manifests),
        )
        for r in records
    )
    missing = missing_store_message(reader.display_url) if reader.missing else None
    return RunsResult(listed, total, suite, missing)


def _shards(
    reader: RunReader, run: RunRecord, manifests: dict[tuple[str, str], ManifestSummary | None]
) -> tuple[ShardProgress, ...] | None:
    """How far each shard of `run` has come, if it is a sharded run that is not complete."""
    count = run.spec.get("shards") if isinstance(run.spec, dict) else None
    if not isinstance(count, int) or run.status == "complete":
        return None
    states, attempts = reader.shard_rows(run.run_id)
    manifest = manifests.get((run.suite, run.version)) if run.suite and run.version else None
    return tuple(shard_progress(run, count, plan_item_ids(run, manifest), attempts, states))


def _row(listing: RunListing) -> tuple[str, ...]:
    r, c = listing.run, listing.completeness
    health = "n/a" if r.valid is None else ("valid" if r.valid else "INVALID")
    marker = listing.audit.marker()
    items = str(c.n_items_run) + (f"/{c.n_items_split}" if c.n_items_split else "")
    return (
        printable(r.run_id),
        printable(f"{r.suite}@{r.version}") if r.suite else "(ingested)",
        r.split or "-",
        printable(r.model),
        str(r.epochs),
        items + (" PARTIAL" if c.partial else ""),
        r.status if listing.shards is None else f"{r.status} · {shards_line(listing.shards)}",
        health + (f" · {marker}" if marker else ""),
        r.started_at[:19],
    )


def runs_view(result: RunsResult) -> ResultView:
    """What `evalsuite runs` prints; ``--json`` is `RunsResult.to_list` (a list)."""
    which = f"runs of suite {result.suite}" if result.suite else "runs"
    if not result.runs:
        headline = "no runs stored yet" if result.suite is None else f"no {which} stored"
    else:
        headline = f"{len(result.runs):,} of {result.total:,} {which}, oldest first"
    facts = []
    if result.runs and len(result.runs) < result.total:
        facts.append(
            f"{len(result.runs):,} of {result.total:,} {which} shown (the newest); --all shows "
            "every run, --limit N the newest N"
        )
    for listing in result.runs:
        if listing.top_error is not None:
            reason, count = listing.top_error
            facts.append(
                f"{listing.run.run_id}: most frequent harness error ({count}×): {reason[:160]}"
                f" (`evalsuite score {listing.run.run_id}` says what to do)"
            )
    if result.missing_store:
        facts.append(result.missing_store)
    names = ("run", "suite", "split", "model", "epochs", "items", "status", "health", "started")
    table = TableView(
        "runs",
        tuple(Column(n, numeric=n == "epochs") for n in names),
        tuple(_row(listing) for listing in result.runs),
    )
    return ResultView(
        kind="runs",
        title="stored runs",
        headline=headline,
        alerts=(),
        gate_line=None,
        tables=(table,) if result.runs else (),
        facts=tuple(facts),
        caveats=(),
        payload={"runs": result.to_list()},
    )
