"""Reusable-holdout mechanisms: Thresholdout and the Ladder, as pure, replayable functions.

Every look at the exact holdout score leaks: a team that keeps the checkpoint with the best
exact holdout score over many looks has tuned to the holdout (docs/design/holdout-governance.md).
These mechanisms answer with something other than the exact score, so that many adaptive
looks stay accurate (docs/design/reusable-holdout.md):

- **Thresholdout** (Dwork, Feldman, Hardt, Pitassi, Reingold and Roth, "The reusable
  holdout: Preserving validity in adaptive data analysis", *Science* 349:636-638, 2015, and
  its supplementary algorithm; "Guilt-free data reuse", *CACM* 60(4):86-93, 2017). Given the
  dev-split score ``d`` and the exact holdout score ``h`` of a run: with a noisy threshold
  ``T_hat = T + gamma`` (``gamma ~ Lap(2 sigma)``) and ``eta ~ Lap(4 sigma)``, answer ``d``
  when ``|h - d| <= T_hat + eta``; otherwise answer ``h + xi`` (``xi ~ Lap(sigma)``), spend one
  unit of the overfitting budget ``B`` and draw a fresh ``gamma``. With the budget spent, the
  mechanism answers nothing (the paper's "bottom").
- **The Ladder** (Blum and Hardt, "The Ladder: A Reliable Leaderboard for Machine Learning
  Competitions", ICML 2015, Algorithm 1, with scores where higher is better): the released
  score moves only when a submission's score beats the best released so far by more than the
  step ``eta``, and then to the score rounded to the nearest multiple of ``eta``. The first
  submission is released rounded.

Reproducibility: every random draw of answer ``i`` comes from its own generator,
``PCG64(SeedSequence(seed, spawn_key=(stream, i)))``, turned into Laplace noise by the
inverse CDF here (not ``Generator.laplace``, whose algorithm numpy does not promise to keep).
So an answer is a function of (parameters, seed, inputs, answer index, the budget spent
before it), and the budget spent is itself a function of the earlier answers: `replay_*`
recomputes a whole sequence from what the ledger records plus the sealed exact scores.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

__all__ = [
    "GENERATOR",
    "MECHANISMS",
    "LadderAnswer",
    "LadderParams",
    "MechanismName",
    "ThresholdoutAnswer",
    "ThresholdoutParams",
    "ladder_answer",
    "ladder_decide",
    "ladder_round",
    "laplace_from_uniform",
    "replay_ladder",
    "replay_thresholdout",
    "thresholdout_answer",
    "thresholdout_decide",
    "thresholdout_noise",
]

MechanismName = Literal["thresholdout", "ladder"]
MECHANISMS: tuple[MechanismName, ...] = ("thresholdout", "ladder")

GENERATOR = (
    "numpy PCG64(SeedSequence(seed, spawn_key=(stream, index))); stream 0: the threshold noise "
    "gamma of budget epoch `index`; stream 1: eta and xi of answer `index` (two uniforms); "
    "Laplace by inverse CDF"
)
"""How the random state is derived (recorded with every answer)."""

_GAMMA_STREAM = 0
_ANSWER_STREAM = 1


def _check_finite(name: str, value: float, *, positive: bool = False) -> None:
    if not math.isfinite(value) or (positive and value <= 0) or value < 0:
        need = "a finite number > 0" if positive else "a finite number >= 0"
        raise ValueError(f"{name} = {value!r} is not valid: expected {need}")


@dataclass(frozen=True, slots=True)
class ThresholdoutParams:
    """Thresholdout's parameters, fixed for a holdout (one suite version) before its first answer.

    Scores are on the suite's 0-1 scale. Dwork et al. (2015) use ``threshold = 0.04``,
    ``noise_scale = 0.01`` for 10,000 holdout items; docs/design/reusable-holdout.md says how
    to scale them to a holdout's standard error.
    """

    threshold: float
    """``T``: the dev and holdout scores agree when they differ by at most ``T`` (+ noise)."""
    noise_scale: float
    """``sigma``: the Laplace scale of the answer noise (threshold noise ``2 sigma``,
    comparison noise ``4 sigma``)."""
    budget: int
    """``B``: how many answers may come from the holdout (each disagreement spends one)."""
    seed: int
    """The seed every draw derives from (`GENERATOR`)."""

    def __post_init__(self) -> None:
        _check_finite("threshold", self.threshold)
        _check_finite("noise_scale", self.noise_scale, positive=True)
        if isinstance(self.budget, bool) or not isinstance(self.budget, int) or self.budget < 1:
            raise ValueError(f"budget = {self.budget!r} is not valid: expected an integer >= 1")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0:
            raise ValueError(f"seed = {self.seed!r} is not valid: expected an integer >= 0")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ledger's ``mechanism.params``)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class ThresholdoutAnswer:
    """One Thresholdout answer and the state it leaves."""

    index: int
    """0 for the holdout's first answer, then 1, 2, ..."""
    released: float | None
    """What the user sees; None once the budget is spent (the mechanism answers nothing)."""
    source: Literal["dev", "holdout", "refused"]
    """``dev``: the scores agreed, the dev score is released; ``holdout``: they did not, the
    noised holdout score is released and one unit of budget spent; ``refused``: no budget."""
    spent_before: int
    spent_after: int
    budget: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ledger's ``mechanism.answer``)."""
        return asdict(self)

    def meaning(self) -> str:
        """One plain sentence of what the released number means."""
        left = self.budget - self.spent_after
        if self.source == "refused":
            return (
                f"Thresholdout has spent its whole budget ({self.budget} holdout answers), so "
                "no score is released: the holdout can no longer answer without being overfit."
            )
        if self.source == "dev":
            return (
                f"{self.released:.4f} is this run's dev-split score: the holdout agreed with it "
                "within Thresholdout's noisy threshold, so the holdout itself was not revealed "
                f"({left} of {self.budget} holdout answers left)."
            )
        return (
            f"{self.released:.4f} is the holdout score plus Laplace noise: it disagreed with the "
            "dev-split score by more than Thresholdout's noisy threshold, and one unit of the "
            f"budget was spent ({left} of {self.budget} holdout answers left)."
        )


def _uniforms(seed: int, stream: int, index: int, count: int) -> list[float]:
    import numpy as np  # here: `verify` and `holdout status` start without numpy

    sequence = np.random.SeedSequence(seed, spawn_key=(stream, index))
    generator = np.random.Generator(np.random.PCG64(sequence))
    return [float(u) for u in generator.random(count)]


def laplace_from_uniform(u: Any, scale: float) -> Any:
    """Laplace(0, `scale`) noise from uniform(s) `u` in [0, 1), by the inverse CDF.

    Works on floats and numpy arrays alike (the simulation draws in bulk).

    Examples:
        >>> laplace_from_uniform(0.5, 1.0)
        0.0
        >>> round(laplace_from_uniform(0.75, 2.0), 6)  # the upper quartile is b ln 2
        1.386294
    """
    import numpy as np

    centred = np.asarray(u, dtype=float) - 0.5
    noise = -scale * np.sign(centred) * np.log1p(-2.0 * np.abs(centred))
    return float(noise) if np.ndim(noise) == 0 else noise


def thresholdout_noise(params: ThresholdoutParams, index: int, spent: int) -> dict[str, float]:
    """The noise of answer `index` when `spent` units of budget are spent before it.

    ``gamma`` (Lap(2 sigma)) belongs to the budget epoch `spent` (it is redrawn after every
    holdout answer), ``eta`` (Lap(4 sigma)) and ``xi`` (Lap(sigma)) to the answer.
    """
    (g,) = _uniforms(params.seed, _GAMMA_STREAM, spent, 1)
    e, x = _uniforms(params.seed, _ANSWER_STREAM, index, 2)
    sigma = params.noise_scale
    return {
        "gamma": laplace_from_uniform(g, 2 * sigma),
        "eta": laplace_from_uniform(e, 4 * sigma),
        "xi": laplace_from_uniform(x, sigma),
    }


def thresholdout_decide(
    dev: Any, holdout: Any, threshold: float, gamma: Any, eta: Any, xi: Any
) -> tuple[Any, Any]:
    """Thresholdout's decision, vectorised: (answer, whether the holdout answered).

    The one place the rule is written: `thresholdout_answer` calls it with one run's
    numbers, the simulation (`evalsuite.holdout._mechanism_sim`) with arrays of them.
    """
    import numpy as np

    dev_a = np.asarray(dev, dtype=float)
    hold_a = np.asarray(holdout, dtype=float)
    over = np.abs(hold_a - dev_a) > threshold + np.asarray(gamma) + np.asarray(eta)
    # kept in [0, 1]: post-processing of the noised answer, which keeps its guarantee
    answer = np.where(over, np.clip(hold_a + np.asarray(xi), 0.0, 1.0), dev_a)
    return answer, over


def thresholdout_answer(
    params: ThresholdoutParams, *, dev: float, holdout: float, index: int, spent: int
) -> ThresholdoutAnswer:
    """Answer one run: its dev-split score `dev`, its exact holdout score `holdout`.

    Args:
        params: The holdout's parameters (the same for every answer of the holdout).
        dev: The run's dev-split score (0-1).
        holdout: The run's exact holdout score (0-1); never part of the answer's record.
        index: How many answers the holdout gave before this one.
        spent: How many units of budget those answers spent.

    Raises:
        ValueError: a score outside [0, 1], or `spent`/`index` impossible.
    """
    for name, value in (("dev", dev), ("holdout", holdout)):
        if not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError(f"{name} score {value!r} is not valid: expected a number in [0, 1]")
    if index < 0 or spent < 0 or spent > min(index, params.budget):
        raise ValueError(
            f"answer index {index} with {spent} unit(s) spent is impossible: expected "
            f"0 <= spent <= min(index, budget = {params.budget})"
        )
    if spent >= params.budget:
        return ThresholdoutAnswer(index, None, "refused", spent, spent, params.budget)
    noise = thresholdout_noise(params, index, spent)
    answer, over = thresholdout_decide(
        dev, holdout, params.threshold, noise["gamma"], noise["eta"], noise["xi"]
    )
    if bool(over):
        return ThresholdoutAnswer(index, float(answer), "holdout", spent, spent + 1, params.budget)
    return ThresholdoutAnswer(index, float(answer), "dev", spent, spent, params.budget)


def replay_thresholdout(
    params: ThresholdoutParams, scores: Sequence[tuple[float, float]]
) -> list[ThresholdoutAnswer]:
    """Every answer of a holdout, from its (dev, exact holdout) scores in answer order."""
    answers: list[ThresholdoutAnswer] = []
    spent = 0
    for index, (dev, holdout) in enumerate(scores):
        answer = thresholdout_answer(params, dev=dev, holdout=holdout, index=index, spent=spent)
        spent = answer.spent_after
        answers.append(answer)
    return answers


@dataclass(frozen=True, slots=True)
class LadderParams:
    """The Ladder's step, fixed for a model family's sequence on a holdout."""

    step: float
    """``eta``: a submission moves the released score only when it beats the best released by
    more than this (0-1 scale). Declared, or the minimum detectable effect of a paired
    comparison of two runs on the holdout (docs/design/mde.md)."""

    def __post_init__(self) -> None:
        _check_finite("step", self.step, positive=True)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ledger's ``mechanism.params``)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class LadderAnswer:
    """One Ladder answer: the released best after this submission."""

    index: int
    released: float
    improved: bool
    """True when this submission moved the released score (the first one always does)."""
    best_before: float | None
    step: float

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ledger's ``mechanism.answer``)."""
        return asdict(self)

    def meaning(self) -> str:
        """One plain sentence of what the released number means."""
        if self.best_before is None:
            return (
                f"{self.released:.4f} is this family's first holdout score, rounded to the "
                f"Ladder's step {self.step:g}; later checkpoints move it only by beating it "
                "by more than the step."
            )
        if self.improved:
            return (
                f"{self.released:.4f} is this checkpoint's holdout score rounded to the step "
                f"{self.step:g}: it beat the family's best released score "
                f"{self.best_before:.4f} by more than the step."
            )
        return (
            f"{self.released:.4f} is still the family's best released score: this checkpoint "
            f"did not beat it by more than the step {self.step:g}, so nothing about its own "
            "holdout score is revealed."
        )


def ladder_round(score: Any, step: float) -> Any:
    """`score` rounded to the nearest multiple of `step` (halves up), kept in [0, 1].

    Works on floats and numpy arrays alike.

    Examples:
        >>> ladder_round(0.6349, 0.02)
        0.64
    """
    import numpy as np

    rounded = np.clip(np.round(np.floor(np.asarray(score) / step + 0.5) * step, 12), 0.0, 1.0)
    return float(rounded) if np.ndim(rounded) == 0 else rounded


def ladder_decide(score: Any, best: Any, step: float) -> tuple[Any, Any]:
    """The Ladder's rule, vectorised: (released best, whether it moved).

    `best` is NaN where nothing was released yet (the first submission is released rounded).
    The one place the rule is written: `ladder_answer` calls it with one run's score, the
    simulation with arrays.
    """
    import numpy as np

    score_a = np.asarray(score, dtype=float)
    best_a = np.asarray(best, dtype=float)
    moved = np.isnan(best_a) | (score_a > best_a + step)
    return np.where(moved, ladder_round(score_a, step), best_a), moved


def ladder_answer(
    params: LadderParams, *, score: float, best: float | None, index: int
) -> LadderAnswer:
    """Answer one submission of exact holdout score `score`, given the best released so far."""
    if not (math.isfinite(score) and 0.0 <= score <= 1.0):
        raise ValueError(f"holdout score {score!r} is not valid: expected a number in [0, 1]")
    released, moved = ladder_decide(score, math.nan if best is None else best, params.step)
    return LadderAnswer(index, float(released), bool(moved), best, params.step)


def replay_ladder(params: LadderParams, scores: Sequence[float]) -> list[LadderAnswer]:
    """Every answer of a family's sequence, from its exact holdout scores in order."""
    answers: list[LadderAnswer] = []
    best: float | None = None
    for index, score in enumerate(scores):
        answer = ladder_answer(params, score=score, best=best, index=index)
        best = answer.released
        answers.append(answer)
    return answers
