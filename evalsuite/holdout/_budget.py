"""The holdout budget: how many runs each model family may make on a suite version.

Every look at a holdout adapts what is built next; the best of 20 looks is inflated by
almost 2 standard errors (METHODS.md §8). So each suite version allows a small number of
holdout runs per model family (``holdout_budget`` in the suite file). Past it, a run is
refused (exit 7) unless an override reason is given, which the ledger records.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from evalsuite.errors import HoldoutAccessError
from evalsuite.holdout._ledger import LedgerEntry

__all__ = ["BudgetStatus", "budget_status", "check_budget"]


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Use of a suite version's holdout against its budget, per model family."""

    suite: str
    version: str
    budget: int
    runs_by_family: dict[str, list[str]] = field(default_factory=dict)
    overrides: list[dict[str, str]] = field(default_factory=list)

    def used(self, family: str) -> int:
        """Distinct runs of `family` (a resumed run counts once)."""
        return len(self.runs_by_family.get(family, []))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (`holdout status --json`)."""
        return {
            "suite": self.suite,
            "version": self.version,
            "budget_per_family": self.budget,
            "families": [
                {
                    "model_family": fam,
                    "runs": len(runs),
                    "remaining": max(self.budget - len(runs), 0),
                    "run_ids": runs,
                }
                for fam, runs in sorted(self.runs_by_family.items())
            ],
            "overrides": self.overrides,
        }


def budget_status(
    entries: list[LedgerEntry], *, suite: str, version: str, budget: int
) -> BudgetStatus:
    """Count distinct holdout runs per model family for one suite version."""
    runs: dict[str, list[str]] = defaultdict(list)
    overrides = []
    for entry in entries:
        if entry.suite != suite or entry.version != version:
            continue
        if entry.run_id not in runs[entry.model_family]:
            runs[entry.model_family].append(entry.run_id)
        if entry.override_reason:
            overrides.append(
                {
                    "run_id": entry.run_id,
                    "model": entry.model,
                    "reason": entry.override_reason,
                    "at": entry.at,
                }
            )
    return BudgetStatus(
        suite=suite, version=version, budget=budget, runs_by_family=dict(runs), overrides=overrides
    )


def check_budget(status: BudgetStatus, family: str, *, override_reason: str | None) -> None:
    """Refuse a new holdout run past the budget unless an override reason is given.

    Raises:
        HoldoutAccessError: the family has used its budget and no reason was given (exit 7).
    """
    used = status.used(family)
    if used < status.budget or override_reason:
        return
    raise HoldoutAccessError(
        f"the holdout of {status.suite}@{status.version} has been run {used} time(s) by model "
        f"family {family!r}, its budget is {status.budget}: every further look tunes the "
        "checkpoint to the holdout. Iterate on the dev split; to run anyway, pass "
        '--override-reason "<why>" (recorded in the access ledger), or freeze a new version '
        "with fresh holdout items."
    )
