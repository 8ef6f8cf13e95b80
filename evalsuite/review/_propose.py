"""What to label first, and when labelling stops revealing new modes (docs/review.md).

The accepted way to build a failure taxonomy reads about 100 transcripts, failing ones
stratified plus a random share, labels them, and repeats until new labels stop revealing new
modes. `propose` picks those attempts (seeded; the seed is part of the answer) and
`saturation` counts the new modes among the last k labels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from evalsuite.errors import UsageError
from evalsuite.review._labels import AttemptLabel
from evalsuite.review._stats import attempt_id

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEFAULT_PROPOSE", "RANDOM_SHARE", "Proposal", "propose", "saturation"]

DEFAULT_PROPOSE = 100
"""Attempts proposed for labelling when no number is given."""

RANDOM_SHARE = 0.25
"""Share of the proposal drawn at random from all attempts (the rest: failures, stratified)."""


@dataclass(frozen=True, slots=True)
class Proposal:
    """Attempts to label next, with why each was picked and the seed that picked them."""

    run_id: str
    seed: int
    random_share: float
    attempts: tuple[dict[str, Any], ...]
    failures: int
    """Unlabelled failing attempts the failures were drawn from."""
    already_labelled: int

    def to_dict(self) -> dict[str, Any]:
        """As plain data."""
        return {
            "run_id": self.run_id,
            "seed": self.seed,
            "random_share": self.random_share,
            "proposed": len(self.attempts),
            "failures_available": self.failures,
            "already_labelled": self.already_labelled,
            "attempts": list(self.attempts),
        }


def _failing(frame: pd.DataFrame) -> np.ndarray[Any, np.dtype[np.bool_]]:
    outcome = frame["outcome"].astype(str).to_numpy()
    score = frame["score"].to_numpy(dtype=float)
    low = np.where(np.isnan(score), False, score < 1.0)
    return np.asarray((outcome != "scored") | low, dtype=bool)


def _allocate(sizes: dict[tuple[str, str], int], total: int) -> dict[tuple[str, str], int]:
    """Proportional allocation, at least one per group while there is room (largest rest)."""
    available = sum(sizes.values())
    if total >= available:
        return dict(sizes)
    shares = {g: total * n / available for g, n in sizes.items()}
    take = {
        g: min(sizes[g], max(1 if total >= len(sizes) else 0, math.floor(s)))
        for g, s in shares.items()
    }
    rest = sorted(sizes, key=lambda g: (-(shares[g] - math.floor(shares[g])), g))
    while sum(take.values()) < total:
        grew = False
        for g in rest:
            if sum(take.values()) >= total:
                break
            if take[g] < sizes[g]:
                take[g] += 1
                grew = True
        if not grew:
            break
    while sum(take.values()) > total:  # the minimum of one each overshot: trim the largest
        g = max(take, key=lambda k: (take[k], k))
        take[g] -= 1
    return take


def propose(
    run_id: str,
    attempts: pd.DataFrame,
    labels: Sequence[AttemptLabel],
    *,
    n: int = DEFAULT_PROPOSE,
    seed: int,
    random_share: float = RANDOM_SHARE,
) -> Proposal:
    """Pick `n` unlabelled attempts of a run to label next.

    Failing attempts (not ``scored``, or a score below 1) are drawn stratified by (stratum,
    outcome), proportionally with at least one per group while there is room; a random share
    (`random_share` of `n`) is drawn from all unlabelled attempts.

    Raises:
        UsageError: `n` below 1 or `random_share` outside [0, 1].
    """
    if n < 1:
        raise UsageError(f"--propose {n}: expected at least 1 attempt to propose")
    if not 0.0 <= random_share <= 1.0:
        raise UsageError(f"random share {random_share}: expected a number in [0, 1]")
    rng = np.random.default_rng(seed)
    done = {x.key for x in labels}
    keys = list(zip(attempts["item_id"].astype(str), attempts["epoch"].astype(int), strict=True))
    open_rows = np.array([k not in done for k in keys], dtype=bool)
    failing = _failing(attempts) & open_rows
    strata = attempts["stratum"].astype(str).to_numpy() if "stratum" in attempts else None
    outcomes = attempts["outcome"].astype(str).to_numpy()
    groups: dict[tuple[str, str], list[int]] = {}
    for index in np.flatnonzero(failing):
        at = int(index)
        group = (str(strata[at]) if strata is not None else "", str(outcomes[at]))
        groups.setdefault(group, []).append(at)
    n_random = round(n * random_share)
    take = _allocate({g: len(rows) for g, rows in sorted(groups.items())}, n - n_random)
    picked: list[tuple[int, str]] = []
    for group in sorted(g for g in take if take[g]):
        rows = groups[group]
        chosen = [int(i) for i in rng.choice(len(rows), size=take[group], replace=False)]
        picked += [(rows[i], f"failure: stratum {group[0]}, {group[1]}") for i in sorted(chosen)]
    taken = {row for row, _ in picked}
    pool = [int(r) for r in np.flatnonzero(open_rows) if int(r) not in taken]
    extra = min(len(pool), n - len(picked))
    drawn = [int(i) for i in rng.choice(len(pool), size=extra, replace=False)] if extra else []
    picked += [(pool[i], "random") for i in sorted(drawn)]
    scores = attempts["score"].to_numpy(dtype=float)
    out = []
    for row, why in picked:
        item, epoch = keys[row]
        score = float(scores[row])
        out.append(
            {
                "attempt": attempt_id(item, epoch),
                "item_id": item,
                "epoch": epoch,
                "stratum": str(strata[row]) if strata is not None else None,
                "outcome": str(outcomes[row]),
                "score": score if math.isfinite(score) else None,
                "why": why,
            }
        )
    return Proposal(
        run_id=run_id,
        seed=seed,
        random_share=random_share,
        attempts=tuple(out),
        failures=int(failing.sum()),
        already_labelled=len(done),
    )


def saturation(history: Sequence[AttemptLabel], k: int = 20) -> dict[str, Any]:
    """How many new modes the last `k` labels revealed (history in save order).

    A label reveals a mode when no earlier label carried it. ``curve`` is the number of
    distinct modes seen after each label; ``saturated`` says the last `k` labels (at least
    `k` of them) revealed none.
    """
    if k < 1:
        raise UsageError(f"saturation window {k}: expected at least 1 label")
    seen: set[str] = set()
    curve: list[int] = []
    new_at: list[int] = []
    for label in history:
        fresh = [m for m in label.modes if m not in seen]
        seen.update(fresh)
        new_at.append(len(fresh))
        curve.append(len(seen))
    last = sum(new_at[-k:])
    return {
        "k": k,
        "labels": len(history),
        "modes_seen": len(seen),
        "new_in_last_k": last,
        "saturated": len(history) >= k and last == 0,
        "curve": curve,
    }
