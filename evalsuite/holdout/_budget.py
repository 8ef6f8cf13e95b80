"""The holdout budget: how many runs each model family may make on a suite version.

Every look at a holdout adapts what is built next, and the best of many looks is biased
upward (docs/design/holdout-governance.md; Dwork et al. 2015, "The reusable holdout",
Science 349:636). So each suite version allows a small number of holdout runs per model
family (``holdout_budget`` in the suite file). Past it, a run is refused (exit 7) unless an
override reason is given, which the ledger records.

A look is a run id: a resumed run continues its look and spends nothing; an access that
was voided (the run failed before any item reached the model) spends nothing either.

A model's family is a recorded mapping, not a flag: the first holdout access of a model
records its family in the ledger (the default strips checkpoint suffixes, `model_family`,
or ``--model-family`` declares it), later runs keep it, and only an audited ``family``
event (`evalsuite holdout family`) moves the model to another family. Running a known model
under another family is refused (exit 7), so a family name cannot be used to start a
fresh budget.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from evalsuite.errors import HoldoutAccessError
from evalsuite.holdout._ledger import LedgerEntry, model_family

__all__ = [
    "BudgetStatus",
    "budget_status",
    "check_budget",
    "family_mapping",
    "resolve_family",
    "voided_accesses",
]


@dataclass(frozen=True, slots=True)
class BudgetStatus:
    """Use of a suite version's holdout against its budget, per model family."""

    suite: str
    version: str
    budget: int
    runs_by_family: dict[str, list[str]] = field(default_factory=dict)
    overrides: list[dict[str, str]] = field(default_factory=list)
    voided: list[dict[str, str]] = field(default_factory=list)
    """Accesses released because their run failed before any item reached the model."""
    family_changes: list[dict[str, str]] = field(default_factory=list)
    """Audited re-mappings of a model to another family (the whole suite)."""
    model_families: dict[str, str] = field(default_factory=dict)
    """The family each model that used the suite's holdout belongs to now."""

    def used(self, family: str) -> int:
        """Distinct runs of `family` (a resumed run counts once; a voided access not at all)."""
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
            "voided": self.voided,
            "family_changes": self.family_changes,
            "model_families": dict(sorted(self.model_families.items())),
        }


def voided_accesses(entries: list[LedgerEntry]) -> set[int]:
    """Sequence numbers of access entries released by a later ``void`` entry."""
    open_access: dict[str, int] = {}
    voided: set[int] = set()
    for entry in entries:
        if entry.kind == "access":
            open_access[entry.run_id] = entry.seq
        elif entry.kind == "void" and entry.run_id in open_access:
            voided.add(open_access.pop(entry.run_id))
    return voided


def family_mapping(entries: list[LedgerEntry]) -> dict[str, str]:
    """Model -> family: the family of its first access, or of its latest ``family`` event."""
    mapping: dict[str, str] = {}
    for entry in entries:
        if entry.kind == "family":
            mapping[entry.model] = entry.model_family
        elif entry.kind == "access":
            mapping.setdefault(entry.model, entry.model_family)
    return mapping


def resolve_family(entries: list[LedgerEntry], model: str, requested: str | None) -> str:
    """The family `model` runs under: its recorded family, else `requested` or the default.

    Raises:
        HoldoutAccessError: the model has a recorded family and `requested` names another
            (exit 7); the message says how to re-map it on the record.
    """
    known = family_mapping(entries).get(model)
    if known is None:
        return requested or model_family(model)
    if requested is None or requested == known:
        return known
    suite = entries[-1].suite if entries else "<suite>"
    raise HoldoutAccessError(
        f"model {model!r} belongs to holdout family {known!r} in the {suite} access ledger "
        f"(recorded at its first holdout run or by a re-mapping); running it as family "
        f"{requested!r} would give it a fresh budget, so it is refused. Run it without "
        "--model-family to use its family, or move it on the record (audited in the ledger): "
        f'evalsuite holdout family {suite} {model} {requested} --reason "<why>"'
    )


def budget_status(
    entries: list[LedgerEntry], *, suite: str, version: str, budget: int
) -> BudgetStatus:
    """Count distinct holdout runs per model family for one suite version.

    A run counts once, under the family of its first access that was not voided; resumed
    accesses and voided accesses spend nothing.
    """
    voided = voided_accesses(entries)
    runs: dict[str, list[str]] = defaultdict(list)
    counted: set[str] = set()
    overrides = []
    released = []
    changes = []
    for entry in entries:
        if entry.kind == "family":
            changes.append(
                {
                    "model": entry.model,
                    "model_family": entry.model_family,
                    "reason": entry.reason or "",
                    "user": entry.user,
                    "at": entry.at,
                }
            )
            continue
        if entry.suite != suite or entry.version != version or entry.kind != "access":
            continue
        if entry.seq in voided:
            released.append({"run_id": entry.run_id, "model": entry.model, "at": entry.at})
            continue
        if entry.run_id in counted:
            continue  # a resumed access continues its look
        counted.add(entry.run_id)
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
        suite=suite,
        version=version,
        budget=budget,
        runs_by_family=dict(runs),
        overrides=overrides,
        voided=released,
        family_changes=changes,
        model_families=family_mapping(entries),
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
