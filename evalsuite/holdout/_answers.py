"""Reusable-holdout answers in the ledger: the next answer's state, its record, and its replay.

A run made with ``--mechanism`` appends an ``answer`` entry after its holdout access
(docs/design/reusable-holdout.md). Its ``mechanism`` field records::

    {"name": "thresholdout", "scope": "support@1.0.0", "params": {...}, "generator": ...,
     "index": 2, "inputs": {"dev_run": ..., "dev_score": 0.71}, "answer": {...}}

``scope`` is what one mechanism instance answers for: the suite version's holdout for
Thresholdout (its budget is the holdout's), the suite version and model family for the Ladder
(a family's sequence of checkpoints). The exact holdout score is never written here: it stays
in the results store, and `answer_problems` recomputes every answer from the ledger and the
stored exact scores, so that an edited answer, parameter, index or input is found.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from evalsuite.holdout._ledger import LedgerEntry
from evalsuite.holdout._mechanism import (
    GENERATOR,
    LadderAnswer,
    LadderParams,
    MechanismName,
    ThresholdoutAnswer,
    ThresholdoutParams,
    ladder_answer,
    thresholdout_answer,
)

__all__ = [
    "MechanismState",
    "answer_problems",
    "answer_record",
    "mechanism_scope",
    "mechanism_state",
]

_TOLERANCE = 1e-9
"""Recomputed and recorded answers may differ by libm rounding across machines, no more."""


def mechanism_scope(name: MechanismName, suite: str, version: str, family: str) -> str:
    """Which answers share one mechanism instance (see the module docstring)."""
    return f"{suite}@{version}" if name == "thresholdout" else f"{suite}@{version}/{family}"


@dataclass(frozen=True, slots=True)
class MechanismState:
    """A scope's state before its next answer, read from the ledger's answers."""

    name: MechanismName
    scope: str
    params: dict[str, Any] | None
    """The parameters the scope's first answer fixed (None: no answer yet)."""
    answers: int
    spent: int
    """Thresholdout: units of budget spent so far."""
    best: float | None
    """The Ladder: the best released score so far."""
    last: dict[str, Any] | None
    """The newest answer's record (`mechanism` of its entry)."""


def _answers_in(entries: list[LedgerEntry], scope: str) -> list[LedgerEntry]:
    return [
        e
        for e in entries
        if e.kind == "answer" and e.mechanism is not None and e.mechanism.get("scope") == scope
    ]


def mechanism_state(entries: list[LedgerEntry], name: MechanismName, scope: str) -> MechanismState:
    """The state of `scope` after the ledger's answers (the ledger's chain already verified)."""
    answers = _answers_in(entries, scope)
    if not answers:
        return MechanismState(name, scope, None, 0, 0, None, None)
    last = answers[-1].mechanism or {}
    answer = last.get("answer", {})
    return MechanismState(
        name=last.get("name", name),
        scope=scope,
        params=(answers[0].mechanism or {}).get("params"),
        answers=len(answers),
        spent=int(answer.get("spent_after", 0)),
        best=answer.get("released") if last.get("name") == "ladder" else None,
        last=last,
    )


def answer_record(
    scope: str,
    params: ThresholdoutParams | LadderParams,
    answer: ThresholdoutAnswer | LadderAnswer,
    inputs: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``mechanism`` field of an ``answer`` entry (no exact holdout score in it)."""
    name = "thresholdout" if isinstance(params, ThresholdoutParams) else "ladder"
    return {
        "name": name,
        "scope": scope,
        "params": params.to_dict(),
        "generator": GENERATOR if name == "thresholdout" else None,
        "index": answer.index,
        "inputs": dict(inputs),
        "answer": answer.to_dict(),
    }


def _same(recorded: Any, recomputed: Any) -> bool:
    if isinstance(recorded, bool) or isinstance(recomputed, bool):
        return recorded is recomputed
    if isinstance(recorded, int | float) and isinstance(recomputed, int | float):
        return math.isclose(recorded, recomputed, rel_tol=0.0, abs_tol=_TOLERANCE)
    if isinstance(recorded, dict) and isinstance(recomputed, dict):
        return recorded.keys() == recomputed.keys() and all(
            _same(recorded[k], recomputed[k]) for k in recorded
        )
    return bool(recorded == recomputed)


def _replay_one(
    record: dict[str, Any], exact: float, dev: float | None, spent: int, best: float | None
) -> ThresholdoutAnswer | LadderAnswer:
    index = int(record["index"])
    if record["name"] == "thresholdout":
        if dev is None:
            raise ValueError("no dev score recorded")
        params = ThresholdoutParams(**record["params"])
        return thresholdout_answer(params, dev=dev, holdout=exact, index=index, spent=spent)
    return ladder_answer(LadderParams(**record["params"]), score=exact, best=best, index=index)


def _record_problem(
    entry: LedgerEntry,
    position: int,
    first: LedgerEntry,
    exact: Mapping[str, float],
    dev_scores: Mapping[str, float] | None,
    where: str,
) -> str | None:
    """What makes one answer record impossible to replay or inconsistent (None: nothing)."""
    record = entry.mechanism or {}
    head = first.mechanism or {}
    if record.get("name") != head.get("name") or record.get("params") != head.get("params"):
        return (
            f"{where} changes the mechanism or its parameters fixed by the scope's first "
            f"answer (entry {first.seq}): the ledger's mechanism state was edited"
        )
    if record.get("index") != position:
        return (
            f"{where} has answer index {record.get('index')!r}, expected {position}: an answer "
            "was deleted, moved or edited"
        )
    if record.get("name") == "thresholdout" and record.get("generator") != GENERATOR:
        return f"{where} records another random generator (edited)"
    if entry.run_id not in exact:
        return (
            f"{where} cannot be recomputed: the run's exact holdout score is not in the results "
            "store (point EVALSUITE_STORE at the store that holds the run)"
        )
    inputs = record.get("inputs") or {}
    if dev_scores is None or record.get("name") != "thresholdout":
        return None
    dev, dev_run = inputs.get("dev_score"), inputs.get("dev_run")
    stored = dev_scores.get(str(dev_run))
    if stored is None:
        return f"{where} names dev run {dev_run}, not in the results store"
    if dev is None or not _same(dev, stored):
        return (
            f"{where} records dev score {dev!r}, but dev run {dev_run} scores {stored!r} in "
            "the results store: the ledger or the store was edited"
        )
    return None


def _scopes(
    entries: list[LedgerEntry], ledger: str
) -> tuple[dict[str, list[LedgerEntry]], list[str]]:
    scopes: dict[str, list[LedgerEntry]] = {}
    problems: list[str] = []
    for entry in entries:
        if entry.kind != "answer":
            continue
        record = entry.mechanism
        if not isinstance(record, dict) or "scope" not in record:
            problems.append(f"{ledger}: answer entry {entry.seq} has no mechanism record (edited)")
            continue
        scopes.setdefault(str(record["scope"]), []).append(entry)
    return scopes, problems


def answer_problems(
    entries: list[LedgerEntry],
    exact: Mapping[str, float],
    dev_scores: Mapping[str, float] | None = None,
    *,
    ledger: str,
) -> list[str]:
    """Recompute every ``answer`` of the ledger; each disagreement is a problem (exit 3).

    Args:
        entries: The ledger's entries (chain verified).
        exact: The exact holdout score of each answered run, from the results store (a run
            missing here is a problem: the answer cannot be checked).
        dev_scores: The stored mean of each dev run an answer names (None: not checked).
        ledger: The ledger's path, for messages.
    """
    scopes, problems = _scopes(entries, ledger)
    for scope, answers in scopes.items():
        spent, best = 0, None
        answered: set[str] = set()
        for position, entry in enumerate(answers):
            record = entry.mechanism or {}
            where = f"{ledger}: answer entry {entry.seq} (run {entry.run_id}, {scope})"
            if entry.run_id in answered:
                problems.append(f"{where} answers a run already answered (a second look)")
            answered.add(entry.run_id)
            problem = _record_problem(entry, position, answers[0], exact, dev_scores, where)
            if problem is not None:
                problems.append(problem)
                continue
            dev = (record.get("inputs") or {}).get("dev_score")
            try:
                again = _replay_one(record, exact[entry.run_id], dev, spent, best)
            except (TypeError, ValueError, KeyError) as exc:
                problems.append(f"{where} cannot be recomputed ({exc}): edited")
                continue
            if not _same(record.get("answer"), again.to_dict()):
                problems.append(
                    f"{where} does not match its recomputation from the ledger's parameters, seed "
                    "and inputs and the stored exact score: the released answer or the "
                    "mechanism's state was edited"
                )
            if isinstance(again, ThresholdoutAnswer):
                spent = again.spent_after
            else:
                best = again.released
    return problems
