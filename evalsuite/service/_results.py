"""The parts `ScoreResult` and `ComparisonResult` share: a run's facts and its suite's audit.

Typed results travel between the layers (docs/design/result-model.md, "Typed results"); each
has a `to_dict()` that writes its ``--json`` form (a `JsonObject`) with the contract's field
names, for the renderers and files only. Light on purpose (no numpy, no store): the views
import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from evalsuite._core.jsonout import JsonObject
from evalsuite.service._completeness import Completeness

if TYPE_CHECKING:
    from evalsuite.store import RunRecord

NO_WEIGHTS = "the suite declares no deployment weights"
"""The reason a comparison has no deployment-weighted row (a suite without weights)."""

Role = Literal["baseline", "candidate"]

__all__ = ["NO_WEIGHTS", "AuditInfo", "Role", "RunFacts"]


@dataclass(frozen=True, slots=True)
class RunFacts:
    """What every result says of a run: its id, suite, model, state and whether it is whole.

    Attributes:
        run_id: the stored run.
        suite, version, manifest_hash, split: what it ran (None for a run ingested without a
            suite).
        model: the model (or agent) it evaluated.
        epochs: the run's planned epochs per item.
        valid: harness errors at or below the run's threshold (False also while a run is
            not complete: `status` says so).
        status: ``complete``, ``running`` or ``interrupted``.
        source: ``evalsuite``, ``inspect`` or ``csv``.
        completeness: whether the run covered its split (``run --limit``: partial).
    """

    run_id: str
    suite: str | None
    version: str | None
    manifest_hash: str | None
    split: str | None
    model: str
    epochs: int
    valid: bool
    status: str
    source: str
    completeness: Completeness
    invalid: bool = False
    """The run's health was judged and it is invalid (False while it is not complete)."""

    @classmethod
    def of(cls, run: RunRecord, completeness: Completeness) -> RunFacts:
        """The facts of a stored run."""
        return cls(
            run_id=run.run_id,
            suite=run.suite,
            version=run.version,
            manifest_hash=run.manifest_hash,
            split=run.split,
            model=run.model,
            epochs=run.epochs,
            valid=bool(run.valid),
            status=run.status,
            source=run.source,
            completeness=completeness,
            invalid=run.valid is False,
        )

    @property
    def partial(self) -> bool:
        """The run planned fewer items than its split holds (not the suite's score)."""
        return self.completeness.partial

    @property
    def unfinished(self) -> bool:
        """Still running or interrupted: its health is not judged yet."""
        return self.status in ("running", "interrupted")

    def facts_dict(self) -> JsonObject:
        """The run fields every analysis output starts with (the `score --json` contract)."""
        return {
            "run_id": self.run_id,
            "suite": self.suite,
            "version": self.version,
            "manifest_hash": self.manifest_hash,
            "split": self.split,
            "model": self.model,
            "epochs": self.epochs,
            "valid": self.valid,
            "status": self.status,
            "source": self.source,
        }

    def to_dict(self) -> JsonObject:
        """`facts_dict` and the completeness fields (``compare --json``'s ``runs`` entries)."""
        return self.facts_dict() | self.completeness.to_dict()


@dataclass(frozen=True, slots=True)
class AuditInfo:
    """The grader audit status of a run's suite version, as every result shows it.

    Attributes:
        status: ``passed``, ``failed``, ``skipped``, ``unaudited`` or ``damaged``.
        detail: one sentence on it.
        problems: integrity problems of the audit record.
        failed_checks: ``family: check/policy`` of each failed check.
        marker: what every number of such a run carries (``GRADER AUDIT FAILED``,
            ``JUDGE FAILING (family)``, ...); None for a passed audit with passed judges.
        judges: each judged family's judge audit: ``passed``, ``failing``, ``unaudited`` or
            ``damaged`` (docs/design/judge-audit.md); empty when no family has a judge.
    """

    status: str
    detail: str
    problems: tuple[str, ...] = ()
    failed_checks: tuple[str, ...] = ()
    marker: str | None = None
    judges: tuple[tuple[str, str], ...] = ()

    def to_dict(self) -> JsonObject:
        """The ``audit`` field: status, detail, problems, failed_checks, marker, judges."""
        return {
            "status": self.status,
            "detail": self.detail,
            "problems": list(self.problems),
            "failed_checks": list(self.failed_checks),
            "marker": self.marker,
            "judges": dict(self.judges),
        }

    def note(self, run: RunFacts) -> str:
        """What every output says of a run whose suite version is not audited (or failed)."""
        suite = f"{run.suite}@{run.version}" if run.suite else "no frozen suite (ingested)"
        return (
            f"{self.marker}: run {run.run_id} is of {suite}, which "
            f"{self.detail}; its numbers are only as good as that suite's graders"
        )
