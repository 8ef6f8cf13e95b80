"""Reading a red-team sweep's scores from the store: per policy (epoch), per stratum."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

THRESHOLD = 0.03
"""Issue 29: a cheap policy scores at most 3% of a fixed family's dev items."""


@dataclass(frozen=True)
class PolicyScore:
    policy: str
    mean: float
    """Mean score over the family's attempts (harness errors count 0 here: a cheap policy that
    breaks the harness is not a pass, and one that is excluded must not hide a pass)."""
    strata: dict[str, tuple[float, int]]
    """Stratum -> (mean, attempts)."""
    outcomes: dict[str, int]

    def row(self) -> str:
        worst = sorted(self.strata.items(), key=lambda kv: -kv[1][0])
        shown = ", ".join(f"{s} {m:.2f} (n={n})" for s, (m, n) in worst if m > 0) or "-"
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return f"{self.policy:30} {self.mean:6.3f}  [{outcomes}]  {shown}"


def by_policy(rows: Sequence[dict[str, Any]], schedule: Sequence[str]) -> dict[str, PolicyScore]:
    """Rows of `Store.attempts` (item_id, epoch, stratum, outcome, score) -> per policy."""
    sums: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    outcomes: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for row in rows:
        name = schedule[(int(row["epoch"]) - 1) % len(schedule)]
        score = float(row["score"])
        score = 0.0 if score != score else score  # NaN (harness error) counts 0
        sums[name][str(row["stratum"])].append(score)
        outcomes[name][str(row["outcome"])] += 1
    result = {}
    for name in schedule:
        strata = {s: (sum(v) / len(v), len(v)) for s, v in sorted(sums[name].items())}
        every = [x for v in sums[name].values() for x in v]
        result[name] = PolicyScore(
            name, sum(every) / len(every) if every else 0.0, strata, dict(outcomes[name])
        )
    return result


def table(scores: dict[str, PolicyScore]) -> str:
    return "\n".join(s.row() for s in scores.values())
