"""The records desk's verifier: the source of truth in the final state, nothing else.

It never reads the cache (a value written only there is no fix) and never reads the agent's
text (a claim is no fix). The target lists the operations a correct episode performs; the
verifier applies them to the item's initial state (`env.apply_expected`) and compares the
result with the final source of truth, record by record:

* ``target_done``: every record the target changes holds the expected values;
* ``no_side_effects``: every other record is exactly as it was;
* ``records_changed`` / ``records_expected``: how many records differ from the initial state
  in the final state / in the expected state.

Score 1.0 only when both hold (the final source equals the expected source exactly): a status
flipped without the rest of the change, a merge in the wrong direction, a raw (unnormalised)
value, a write to the wrong record all score 0. `evaluate` is pure and table-tested.
"""

from dataclasses import dataclass
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState

from .env import KINDS, apply_expected, canonical_json
from .episode import read_records


@dataclass(frozen=True, slots=True)
class Verdict:
    """The sub-checks and the records that differ."""

    checks: dict[str, bool | int]
    wrong: list[str]
    """Records the target changes that do not hold the expected values (kind/id)."""
    side_effects: list[str]
    """Other records that changed (kind/id)."""

    @property
    def passed(self) -> bool:
        return bool(self.checks["target_done"] and self.checks["no_side_effects"])


def _differs(a: dict[str, Any], b: dict[str, Any]) -> set[str]:
    keys = set(a) | set(b)
    return {k for k in keys if canonical_json(a.get(k)) != canonical_json(b.get(k))}


def evaluate(
    initial: dict[str, Any], final_source: dict[str, Any], target: dict[str, Any]
) -> Verdict:
    """Compare the final source of truth with the expected one."""
    expected = apply_expected(initial, target["operations"])
    before = initial["source"]
    wrong: list[str] = []
    side: list[str] = []
    changed = 0
    to_change = 0
    for kind in KINDS:
        exp, fin, ini = expected[kind], final_source.get(kind, {}), before[kind]
        for record_id in sorted(set(exp) | set(fin) | set(ini)):
            e, f, i = exp.get(record_id), fin.get(record_id), ini.get(record_id)
            target_record = canonical_json(e) != canonical_json(i)
            to_change += target_record
            changed += canonical_json(f) != canonical_json(i)
            if canonical_json(e) == canonical_json(f):
                continue
            (wrong if target_record else side).append(f"{kind}/{record_id}")
    checks: dict[str, bool | int] = {
        "target_done": not wrong,
        "no_side_effects": not side,
        "records_changed": changed,
        "records_expected": to_change,
    }
    return Verdict(checks=checks, wrong=wrong, side_effects=side)


@scorer(metrics=[accuracy(), stderr()])
def records_verifier() -> Scorer:
    """1.0 when the final source of truth is exactly the expected one (module docstring)."""

    async def score(state: TaskState, target: Target) -> Score:
        import json

        runtime = read_records()
        initial = (state.metadata or {})["initial_state"]
        verdict = evaluate(initial, runtime["source"], json.loads(target.text))
        parts = []
        if verdict.wrong:
            parts.append(f"{len(verdict.wrong)} record(s) not changed as expected")
        if verdict.side_effects:
            parts.append(f"{len(verdict.side_effects)} other record(s) changed")
        # the explanation names no record (it is kept on holdout runs); the ids are text
        # sub-checks, which holdout runs drop
        return Score(
            value=1.0 if verdict.passed else 0.0,
            explanation="; ".join(parts) or "the source of truth holds the expected change",
            metadata={
                **verdict.checks,
                "wrong": " ".join(verdict.wrong),
                "side_effects": " ".join(verdict.side_effects),
            },
        )

    return score
