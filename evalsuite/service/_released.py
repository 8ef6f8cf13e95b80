"""`compare` of two holdout runs a reusable-holdout mechanism answered: the released view.

The exact holdout score of such a run is sealed (`check_sealed`). What may be compared is what
the mechanism released: the two released numbers and which one the mechanism ranks higher.
No paired interval is given: the Ladder's guarantee (Blum and Hardt 2015) and Thresholdout's
(Dwork et al. 2015) are about each released value, the leaderboard, and not about a paired
difference of two runs; a paired interval would need the exact item scores, which stay sealed.
This module reads only the ledger's ``answer`` entries and the runs' records, never their
attempts (docs/design/reusable-holdout.md, "Comparing released values").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import HoldoutAccessError, IncomparableRunsError

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.holdout import LedgerEntry
    from evalsuite.store import RunRecord, Store

__all__ = ["ReleasedComparison", "ReleasedRun", "released_comparison"]

Ranking = Literal["candidate_higher", "baseline_higher", "tied", "not_ranked"]

NO_INTERVAL = (
    "No paired interval or p-value is given: the mechanism's guarantee is about each released "
    "value (the leaderboard), not about a paired difference, and the exact item scores a paired "
    "interval needs stay sealed."
)


@dataclass(frozen=True, slots=True)
class ReleasedRun:
    """One run's released number, read from its ``answer`` entry in the ledger."""

    run_id: str
    model: str
    mechanism: str
    scope: str
    released: float | None
    """None: nothing was released (Thresholdout's budget was spent)."""
    meaning: str
    ledger_seq: int
    index: int

    def to_dict(self) -> JsonObject:
        """One side of ``compare --json``'s ``released``."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "mechanism": self.mechanism,
            "scope": self.scope,
            "released": self.released,
            "meaning": self.meaning,
            "ledger_seq": self.ledger_seq,
            "index": self.index,
        }


@dataclass(frozen=True, slots=True)
class ReleasedComparison:
    """Two released numbers, the mechanism's ranking, and no interval."""

    baseline: ReleasedRun
    candidate: ReleasedRun
    ranking: Ranking
    same_scope: bool
    headline: str
    caveats: tuple[str, ...]

    def to_dict(self) -> JsonObject:
        """``compare --json`` of the released view (docs/cli.md, "compare")."""
        return {
            "view": "released",
            "baseline": self.baseline.run_id,
            "candidate": self.candidate.run_id,
            "released": {
                "baseline": self.baseline.to_dict(),
                "candidate": self.candidate.to_dict(),
            },
            "ranking": self.ranking,
            "same_scope": self.same_scope,
            "interval": None,
            "headline": self.headline,
            "caveats": list(self.caveats),
        }


def _meaning(record: dict[str, Any]) -> str:
    from evalsuite.holdout import LadderAnswer, ThresholdoutAnswer

    answer = record.get("answer") or {}
    if record.get("name") == "thresholdout":
        return ThresholdoutAnswer(**answer).meaning()
    return LadderAnswer(**answer).meaning()


def _released_run(record: RunRecord, entry: LedgerEntry) -> ReleasedRun:
    mechanism = entry.mechanism or {}
    released = (mechanism.get("answer") or {}).get("released")
    return ReleasedRun(
        run_id=record.run_id,
        model=record.model,
        mechanism=str(mechanism.get("name")),
        scope=str(mechanism.get("scope")),
        released=None if released is None else float(released),
        meaning=_meaning(mechanism),
        ledger_seq=entry.seq,
        index=int(mechanism.get("index", 0)),
    )


def _ranking(base: ReleasedRun, cand: ReleasedRun) -> Ranking:
    if base.released is None or cand.released is None:
        return "not_ranked"
    if cand.released > base.released:
        return "candidate_higher"
    if cand.released < base.released:
        return "baseline_higher"
    return "tied"


def _headline(base: ReleasedRun, cand: ReleasedRun, ranking: Ranking) -> str:
    from evalsuite.service._format import fmt

    shown = f"{cand.model} {fmt(cand.released)} vs {base.model} {fmt(base.released)} (released)"
    if ranking == "not_ranked":
        return f"{shown}: the mechanism released nothing for one run, so it ranks neither."
    if ranking == "tied":
        return f"{shown}: the mechanism ranks neither above the other."
    higher = cand.model if ranking == "candidate_higher" else base.model
    return f"{shown}: the mechanism ranks {higher} higher."


def _answers(layout: Layout, record: RunRecord) -> tuple[LedgerEntry | None, bool]:
    """(the run's ``answer`` entry, whether a ``reveal`` of it is recorded)."""
    if record.split != "holdout" or not record.suite:
        return None, False
    path = layout.ledger_file(record.suite)
    if not path.is_file():
        return None, False
    from evalsuite.holdout import read_ledger

    mine = [e for e in read_ledger(path) if e.run_id == record.run_id]
    answer = next((e for e in reversed(mine) if e.kind == "answer"), None)
    return answer, any(e.kind == "reveal" for e in mine)


def released_comparison(
    layout: Layout, store: Store, baseline: str, candidate: str
) -> ReleasedComparison | None:
    """The released view of two runs, when either one's exact score is sealed; else None.

    None means the paired comparison applies (neither run is sealed: not answered by a
    mechanism, or revealed). Never reads a run's attempts.

    Raises:
        UnknownRunError: a run id no stored run has (exit 2).
        HoldoutAccessError: one run is sealed and the other has no released number (exit 7).
        IncomparableRunsError: the two runs are of different suite versions (exit 2).
    """
    records = (store.get_run(baseline), store.get_run(candidate))
    found = [_answers(layout, r) for r in records]
    if not any(answer is not None and not revealed for answer, revealed in found):
        return None
    missing = [r.run_id for r, (answer, _) in zip(records, found, strict=True) if answer is None]
    if missing:
        sealed = next(r.run_id for r, (a, _) in zip(records, found, strict=True) if a)
        raise HoldoutAccessError(
            f"run {sealed}'s exact holdout score is sealed behind a reusable-holdout "
            f"mechanism's answer, and {', '.join(missing)} has no released number to compare "
            "it with: compare shows released values only when both runs were answered by a "
            f'mechanism. `evalsuite holdout reveal {sealed} --reason "..."` shows the exact '
            "score and records that it did; afterwards compare pairs the runs as usual."
        )
    base, cand = records
    if (base.suite, base.version) != (cand.suite, cand.version):
        raise IncomparableRunsError(
            f"released values of {base.suite}@{base.version} and {cand.suite}@{cand.version} "
            "come from different holdouts: compare released values of one suite version only"
        )
    sides = [_released_run(r, a) for r, (a, _) in zip(records, found, strict=True) if a]
    ranking = _ranking(sides[0], sides[1])
    same_scope = sides[0].scope == sides[1].scope
    caveats = [NO_INTERVAL]
    if sides[0].mechanism != sides[1].mechanism:
        caveats.append(
            f"The two numbers come from different mechanisms ({sides[0].mechanism}, "
            f"{sides[1].mechanism}): each means what its sentence says, and they rank only as "
            "numbers."
        )
    elif sides[0].mechanism == "ladder" and same_scope:
        caveats.append(
            "One Ladder scope: a later checkpoint's released number moves only when it beats "
            "the family's best by more than the step, so equal numbers mean the later one was "
            "not shown to be better."
        )
    elif sides[0].mechanism == "ladder":
        caveats.append(
            "Two Ladder scopes (model families): each number is its family's best released "
            "score, rounded to the step."
        )
    return ReleasedComparison(
        baseline=sides[0],
        candidate=sides[1],
        ranking=ranking,
        same_scope=same_scope,
        headline=_headline(sides[0], sides[1], ranking),
        caveats=tuple(caveats),
    )
