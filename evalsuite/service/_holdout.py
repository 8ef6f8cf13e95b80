"""`holdout status`: a suite version's holdout use per model family against its budget; its view.

The counts are only returned when they can be trusted: the ledger's hash chain holds, the
ledger and the results store hold the same holdout runs, and the manifest hash agrees with
its changelog line, git history, ledger and store (`IntegrityError`, exit 3, otherwise).
Item ids and run ids only: no holdout item's content reaches any output
(docs/design/holdout-governance.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.errors import IntegrityError
from evalsuite.service._format import fmt_time
from evalsuite.service._governance import check_governance, stored_runs
from evalsuite.service._views import Column, ResultView, TableView

if TYPE_CHECKING:
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.holdout import BudgetStatus

__all__ = ["HoldoutStatus", "holdout_status", "holdout_status_view"]


@dataclass(frozen=True, slots=True)
class HoldoutStatus:
    """The trusted holdout use of one suite version.

    Attributes:
        budget: runs per model family, as the ledger counts them.
        ledger: the access ledger checked.
        ledger_entries: its entries (chain intact).
        store: the results store it agrees with (password hidden).
        hash_sources: where the manifest hash was found, and whether each agrees.
    """

    budget: BudgetStatus
    ledger: Path
    ledger_entries: int
    store: str
    hash_sources: dict[str, str]
    mechanisms: tuple[JsonObject, ...] = ()
    """Per reusable-holdout mechanism scope: which mechanism answered, how much of its budget
    is spent, the newest released number and what it means (docs/design/reusable-holdout.md)."""
    reveals: tuple[JsonObject, ...] = ()
    """Recorded reveals of sealed exact scores (who, when, why; never the score)."""

    @property
    def ref(self) -> str:
        """``suite@version``."""
        return f"{self.budget.suite}@{self.budget.version}"

    def to_dict(self) -> JsonObject:
        """The ``holdout status --json`` payload."""
        return (
            self.budget.to_dict()
            | {
                "ledger_entries": self.ledger_entries,
                "ledger": str(self.ledger),
                "store": self.store,
                "hash_sources": dict(self.hash_sources),
            }
            | (
                {"mechanisms": list(self.mechanisms), "reveals": list(self.reveals)}
                if self.mechanisms
                else {}
            )
        )


def holdout_status(
    layout: Layout, key_dir: Path, store_url: str | None, suite: str, version: str | None
) -> HoldoutStatus:
    """Holdout runs of ``suite@version`` (None: the latest) per model family.

    Raises:
        NotFoundError: unknown suite or version (exit 2).
        IntegrityError: the ledger, the store or the manifest hash's records disagree (exit 3).
    """
    from evalsuite.holdout import budget_status
    from evalsuite.manifest import history_check, load_manifest

    manifest = load_manifest(layout, suite, version)
    version = manifest.version
    history = history_check(layout, suite, version, manifest.manifest_hash)
    runs, store = stored_runs(layout, store_url)
    check = check_governance(
        layout, key_dir, suite, version, manifest.manifest_hash, runs, store, store_url=store_url
    )
    problems = [*history.problems, *check.problems]
    if problems or check.entries is None:
        raise IntegrityError(
            f"the holdout record of {suite}@{version} cannot be trusted, so no counts are "
            f"shown (checked the ledger {check.ledger} and the results store {store}): "
            + "; ".join(problems)
        )
    entries = list(check.entries)
    from evalsuite.service._mechanism import mechanism_summaries, reveal_records

    return HoldoutStatus(
        mechanisms=tuple(mechanism_summaries(entries, suite=suite, version=version)),
        reveals=tuple(reveal_records(entries, suite=suite, version=version)),
        budget=budget_status(entries, suite=suite, version=version, budget=manifest.holdout_budget),
        ledger=check.ledger,
        ledger_entries=len(entries),
        store=store,
        hash_sources=history.sources | check.sources,
    )


def holdout_status_view(result: HoldoutStatus) -> ResultView:
    """What `evalsuite holdout status` prints and writes as ``--json``."""
    status = result.budget
    families = sorted(status.runs_by_family.items())
    facts = [
        f"override by run {o['run_id']} ({o['model']}): {o['reason']}" for o in status.overrides
    ]
    facts += [
        f"family change: {c['model']} -> {c['model_family']} by {c['user']} at "
        f"{fmt_time(c['at'])}: {c['reason']}"
        for c in status.family_changes
    ]
    facts += [
        f"voided access of run {v['run_id']} ({v['model']}): the run failed before any holdout "
        "item reached the model"
        for v in status.voided
    ]
    facts += [_mechanism_fact(m) for m in result.mechanisms]
    facts += [
        f"exact score of run {r['run_id']} revealed to {r['user']} at {fmt_time(r['at'])}: "
        f"{r['reason']}"
        for r in result.reveals
    ]
    table = TableView(
        "holdout runs per model family",
        (
            Column("model family", numeric=False),
            Column("runs"),
            Column("remaining"),
            Column("run ids", numeric=False),
        ),
        tuple(
            (
                family,
                str(len(runs)),
                str(remaining) if (remaining := max(status.budget - len(runs), 0)) else "0 (spent)",
                ", ".join(runs),
            )
            for family, runs in families
        ),
    )
    spent = [family for family, runs in families if len(runs) >= status.budget]
    return ResultView(
        kind="holdout_status",
        title=f"{result.ref}: holdout budget {status.budget} run(s) per model family",
        headline=(
            f"ledger {result.ledger} ({result.ledger_entries} entries, chain intact) agrees "
            f"with the results store {result.store}" + ("" if families else "; no holdout runs yet")
        ),
        alerts=tuple(f"holdout budget spent by model family {f}" for f in spent),
        gate_line=None,
        tables=(table,) if families else (),
        facts=tuple(facts),
        caveats=(),
        payload=result.to_dict(),
    )


def _mechanism_fact(summary: Mapping[str, Any]) -> str:
    """One line per mechanism scope: who answers, its budget, and what its number means."""
    name = summary["mechanism"]
    if name == "thresholdout":
        budget = f"{summary['budget_spent']} of {summary['budget']} holdout answers spent"
    else:
        budget = f"step {summary['params']['step']:g}"
    return (
        f"{name} answers for {summary['scope']} ({summary['answers']} answer(s), {budget}); "
        f"newest (run {summary['last_run']}): {summary['meaning']}"
    )
