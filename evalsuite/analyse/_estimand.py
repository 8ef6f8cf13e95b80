"""What an adaptive result's interval covers, and whether a population target is reachable.

Two estimands (docs/design/sequential.md, "Estimands"):

- ``suite_items``: the mean long-run solve rate of this suite's own items. More epochs
  narrow its interval towards zero width.
- ``item_population``: the mean over the population of items the suite was drawn from. Its
  interval has a floor that no number of epochs removes: the spread of solve rates between
  items, ``z sigma_b / sqrt(N)``. `population_target` says whether a half-width H is
  reachable with at most `max_epochs` epochs, and when it is not, refuses and says how many
  items would reach it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.errors import UsageError

__all__ = [
    "ESTIMANDS",
    "Estimand",
    "PopulationTarget",
    "estimand_text",
    "population_target",
]

Estimand = Literal["suite_items", "item_population"]
Estimand.__doc__ = (
    "What an interval covers: ``suite_items`` (the mean long-run score of this suite's own "
    "items) or ``item_population`` (the mean over the population they were drawn from)."
)
ESTIMANDS: tuple[Estimand, ...] = ("suite_items", "item_population")

_TEXT = {
    "suite_items": "the mean long-run score of this suite's own items (not beyond them)",
    "item_population": "the mean score over the population of items the suite was drawn from",
}


def estimand_text(estimand: Estimand) -> str:
    """The estimand in words, for every output that carries an interval."""
    return _TEXT[estimand]


@dataclass(frozen=True, slots=True)
class PopulationTarget:
    """Whether +-H for the item population is reachable, and with what.

    Attributes:
        halfwidth: H asked for.
        reachable: True when at most `max_epochs` epochs on the N items give +-H.
        epochs_needed: the smallest such epochs (None when not reachable).
        floor: the half-width with infinitely many epochs on these N items.
        items_needed: items that would reach +-H at `max_epochs` epochs.
        between_sd, within_var: the estimated spread of solve rates between items and the
            mean within-item variance of one attempt.
        message: the refusal (or the plan), in words.
    """

    halfwidth: float
    reachable: bool
    epochs_needed: int | None
    floor: float
    items_needed: int
    between_sd: float
    within_var: float
    message: str

    def to_dict(self) -> dict[str, Any]:
        """JSON fields (with the estimand named)."""
        return {
            "estimand": "item_population",
            "estimand_text": estimand_text("item_population"),
            "halfwidth": self.halfwidth,
            "reachable": self.reachable,
            "epochs_needed": self.epochs_needed,
            "floor": self.floor,
            "items_needed": self.items_needed,
            "between_sd": self.between_sd,
            "within_var": self.within_var,
            "message": self.message,
        }


def population_target(
    item_means: npt.ArrayLike,
    epochs: npt.ArrayLike,
    halfwidth: float,
    *,
    alpha: float = 0.05,
    max_epochs: int = 5,
) -> PopulationTarget:
    """Can +-`halfwidth` for the item population be reached, from a pilot's item means?

    With E epochs per item the population interval's half-width is about
    ``z sqrt((sigma_b^2 + sigma_w^2 / E) / N)``: ``sigma_b^2`` the variance of the items'
    true solve rates, estimated by ``var(ybar_j) - mean(s_j^2 / k_j)`` (the method of
    moments, floored at 0), ``sigma_w^2`` the mean within-item variance ``mean(s_j^2)``
    (``s_j^2 = ybar_j (1 - ybar_j) k_j / (k_j - 1)``; items with one attempt give none).
    H is reachable with ``E = ceil(sigma_w^2 / (N H^2 / z^2 - sigma_b^2))`` epochs when
    that is at most `max_epochs`; otherwise the result refuses and names the items needed.

    Raises:
        UsageError: lengths differ, fewer than two items, H or alpha out of range.
    """
    y = np.asarray(item_means, dtype=float)
    k = np.asarray(epochs, dtype=float)
    if y.shape != k.shape or y.ndim != 1 or y.size < 2:
        raise UsageError("population_target: one mean and one epoch count per item, 2+ items")
    if not 0 < halfwidth < 0.5 or not 0 < alpha < 1:
        raise UsageError("population_target: halfwidth in (0, 0.5) and alpha in (0, 1)")
    n = y.size
    z = float(stats.norm.isf(alpha / 2))
    multi = k > 1
    s2 = np.where(multi, y * (1 - y) * k / np.maximum(k - 1, 1), 0.0)
    within = float(s2[multi].mean()) if multi.any() else 0.25
    between = max(0.0, float(np.var(y, ddof=1)) - float(np.mean(np.where(multi, s2 / k, 0.25))))
    floor = z * math.sqrt(between / n)
    room = n * halfwidth**2 / z**2 - between
    needed = math.ceil(within / room) if room > 0 else None
    reachable = needed is not None and needed <= max_epochs
    items = math.ceil(z**2 * (between + within / max_epochs) / halfwidth**2)
    if reachable:
        message = (
            f"+-{halfwidth:g} for the item population: {needed} epoch(s) on the {n} items "
            f"(between-item spread alone gives +-{floor:.3f})"
        )
    else:
        message = (
            f"refused: more epochs cannot reach +-{halfwidth:g} for the item population with "
            f"{n} items: the spread between items alone gives +-{floor:.3f} with infinitely "
            f"many epochs{'' if needed is None else f' ({needed} epochs needed)'}; about "
            f"{items} items at {max_epochs} epochs would reach it. Add items, or ask for the "
            "suite's own items (estimand suite_items)."
        )
    return PopulationTarget(
        halfwidth,
        reachable,
        needed if reachable else None,
        floor,
        items,
        math.sqrt(between),
        within,
        message,
    )
