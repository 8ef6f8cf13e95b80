"""A suite score corrected for judge error with a few human labels (issue 33, point 4).

A judge grades every item; humans label a random subset. Three estimates of the suite's mean
human-label score, side by side (`corrected_score`):

- ``judge``: the judge's mean over every item, with the interval that trusts the judge (it
  covers the judge's mean, not the humans'; shown so that the gap is visible);
- ``human``: the labelled items alone (the classical interval; valid, wide);
- ``ppi``: prediction-powered inference, PPI++ with its power-tuning parameter
  (Angelopoulos, Bates, Fannjiang, Jordan & Zrnic 2023, "Prediction-powered inference",
  Science 382:669; Angelopoulos, Duchi & Zrnic 2023, "PPI++", arXiv:2311.01453), computed by
  the maintained `ppi-python` package (`ppi_mean_pointestimate`, `ppi_mean_ci`). Valid
  whatever the judge's errors, as long as the labelled items are a uniform random subset;
  never wider than ``human`` by more than the tuning noise, narrower when the judge is good;
- ``rogan_gladen``: for binary scores, the judge's mean corrected by its sensitivity and
  specificity measured on the labelled items (Rogan & Gladen 1978, "Estimating prevalence
  from the results of a screening test", Am. J. Epidemiol. 107:71), with a delta-method
  interval (Greenland 1996); undefined when the judge is no better than chance.

The unit is the item (docs/methods.md): with several attempts per item, pass each item's mean
human label and mean judge score.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = ["CorrectedScore", "ScoreEstimate", "corrected_score"]


@dataclass(frozen=True, slots=True)
class ScoreEstimate:
    """One estimate of the suite's mean score: method, mean, interval and what it trusts."""

    method: str
    mean: float
    interval: Interval
    note: str

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "method": self.method,
            "mean": self.mean,
            "interval": [self.interval.low, self.interval.high],
            "note": self.note,
        }


@dataclass(frozen=True, slots=True)
class CorrectedScore:
    """The suite score from the judge alone, the humans alone, and both combined."""

    judge: ScoreEstimate
    human: ScoreEstimate
    ppi: ScoreEstimate
    rogan_gladen: ScoreEstimate | None
    level: float
    n_labelled: int
    n_unlabelled: int

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "level": self.level,
            "n_labelled": self.n_labelled,
            "n_unlabelled": self.n_unlabelled,
            "estimates": [
                e.to_dict()
                for e in (self.judge, self.human, self.ppi, self.rogan_gladen)
                if e is not None
            ],
        }


def _array(values: Sequence[float], what: str) -> np.ndarray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or not np.all(np.isfinite(array)):
        raise UsageError(f"{what}: expected finite numbers, one per item")
    return array


def corrected_score(
    human: Sequence[float],
    judge_labelled: Sequence[float],
    judge_unlabelled: Sequence[float],
    *,
    level: float = 0.95,
) -> CorrectedScore:
    """The suite's mean human score from `human` labels and the judge's scores.

    Args:
        human: Human score of each labelled item (a uniform random subset of the suite).
        judge_labelled: The judge's score of the same items, in the same order.
        judge_unlabelled: The judge's score of every other item.
        level: Confidence level.

    Raises:
        UsageError: fewer than 2 labelled items, unequal labelled lengths, or non-finite
            scores.
    """
    y = _array(human, "human labels")
    yhat = _array(judge_labelled, "judge scores of the labelled items")
    unl = _array(judge_unlabelled, "judge scores of the unlabelled items")
    if y.size != yhat.size:
        raise UsageError(f"{y.size} human labels but {yhat.size} judge scores of those items")
    if y.size < 2:
        raise UsageError("a corrected score needs human labels of at least 2 items")
    import ppi_py

    alpha = 1 - level
    z = float(stats.norm.ppf(1 - alpha / 2))
    every = np.concatenate([yhat, unl])
    judge_mean = float(every.mean())
    judge_se = float(every.std(ddof=1) / math.sqrt(every.size)) if every.size > 1 else math.nan
    human_mean = float(y.mean())
    human_se = float(y.std(ddof=1) / math.sqrt(y.size))
    if unl.size:
        point = float(np.ravel(ppi_py.ppi_mean_pointestimate(y, yhat, unl))[0])
        lo, hi = ppi_py.ppi_mean_ci(y, yhat, unl, alpha=alpha)
        ppi = ScoreEstimate(
            "ppi",
            point,
            Interval(float(np.ravel(lo)[0]), float(np.ravel(hi)[0])),
            "prediction-powered (PPI++, ppi-python): the judge's scores corrected by the "
            "labelled items; valid for the humans' mean",
        )
    else:  # every item labelled: nothing to borrow from the judge
        ppi = ScoreEstimate(
            "ppi",
            human_mean,
            Interval(human_mean - z * human_se, human_mean + z * human_se),
            "every item is labelled: the human mean",
        )
    return CorrectedScore(
        judge=ScoreEstimate(
            "judge",
            judge_mean,
            Interval(judge_mean - z * judge_se, judge_mean + z * judge_se),
            "the judge's mean over every item; its interval trusts the judge",
        ),
        human=ScoreEstimate(
            "human",
            human_mean,
            Interval(human_mean - z * human_se, human_mean + z * human_se),
            "the labelled items alone",
        ),
        ppi=ppi,
        rogan_gladen=_rogan_gladen(y, yhat, every, z),
        level=level,
        n_labelled=int(y.size),
        n_unlabelled=int(unl.size),
    )


def _rogan_gladen(
    y: np.ndarray, yhat: np.ndarray, every: np.ndarray, z: float
) -> ScoreEstimate | None:
    """Binary scores only: the judge's mean corrected by its measured error rates."""
    binary = np.isin(y, (0.0, 1.0)).all() and np.isin(every, (0.0, 1.0)).all()
    if not binary:
        return None
    pos, neg = y == 1, y == 0
    if not pos.any() or not neg.any():
        return ScoreEstimate(
            "rogan_gladen",
            math.nan,
            Interval(math.nan, math.nan),
            "undefined: the labelled items hold one class only",
        )
    sens = float(yhat[pos].mean())
    spec = float(1 - yhat[neg].mean())
    youden = sens + spec - 1
    if youden <= 0:
        return ScoreEstimate(
            "rogan_gladen",
            math.nan,
            Interval(math.nan, math.nan),
            f"undefined: the judge is no better than chance (sensitivity {sens:.2f}, "
            f"specificity {spec:.2f})",
        )
    q = float(every.mean())
    est = (q + spec - 1) / youden
    # delta method: var(q)/J^2 + [est^2 var(sens) + (1-est)^2 var(spec)]/J^2
    var = (
        q * (1 - q) / every.size
        + est**2 * sens * (1 - sens) / pos.sum()
        + (1 - est) ** 2 * spec * (1 - spec) / neg.sum()
    ) / youden**2
    se = math.sqrt(var)
    return ScoreEstimate(
        "rogan_gladen",
        est,
        Interval(est - z * se, est + z * se),
        f"the judge's mean corrected by sensitivity {sens:.3f} and specificity {spec:.3f} "
        "measured on the labelled items (not clipped to [0, 1])",
    )
