"""The one place that decides an attempt's outcome from what inspect recorded.

Policy (docs/design/outcomes.md):

* a sample error (after inspect's bounded retries) is a ``harness_error``;
* a limit is a ``limit`` (model failure, score 0, labelled with its type), except an
  ``operator`` limit (a person interrupted the sample), which is a ``harness_error``;
* a score the grader could not produce (``grader_failed``, ``scoring_failed``, no score, a
  NaN, a value outside [0, 1] or of a type that is not a number) is a ``harness_error``:
  never clipped, never defaulted;
* a model-side score reason (``refusal``, ``no_response``, ``invalid_response_format``) is
  ``scored`` with the verifier's value, or 0.0 when the verifier gave none, and keeps the
  reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score

__all__ = [
    "LIMIT_OUTCOME",
    "SCORE_REASON_OUTCOME",
    "Classified",
    "classify_sample",
    "score_to_float",
]

OutcomeName = Literal["scored", "limit", "harness_error"]

LIMIT_OUTCOME: Final[Mapping[str, OutcomeName]] = {
    "context": "limit",
    "time": "limit",
    "working": "limit",
    "message": "limit",
    "token": "limit",
    "turn": "limit",
    "cost": "limit",
    "custom": "limit",
    "operator": "harness_error",
}
"""inspect's `EvalSampleLimit.type` -> outcome (exhaustively tested)."""

SCORE_REASON_OUTCOME: Final[Mapping[str, OutcomeName]] = {
    "refusal": "scored",
    "no_response": "scored",
    "invalid_response_format": "scored",
    "grader_failed": "harness_error",
    "scoring_failed": "harness_error",
}
"""inspect's `ScoreReason` -> outcome (exhaustively tested)."""


class Classified:
    """An attempt's outcome, score, reason and checks, before it is stored."""

    __slots__ = ("checks", "limit_type", "outcome", "reason", "score")

    def __init__(
        self,
        outcome: OutcomeName,
        score: float,
        reason: str | None,
        limit_type: str | None = None,
        checks: dict[str, Any] | None = None,
    ) -> None:
        self.outcome = outcome
        self.score = score
        self.reason = reason
        self.limit_type = limit_type
        self.checks = checks


def score_to_float(value: Any) -> float | None:
    """A score value as a float in [0, 1], or None when it is not one.

    ``"C"``/``"I"`` (inspect's CORRECT/INCORRECT) become 1.0/0.0 and booleans 1.0/0.0;
    numbers outside [0, 1], NaN, lists, dicts and other strings are None (the caller turns
    that into a harness error; nothing is clipped).

    Examples:
        >>> score_to_float("C"), score_to_float(0.25), score_to_float(1.5), score_to_float([1])
        (1.0, 0.25, None, None)
    """
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, str):
        return {"C": 1.0, "I": 0.0}.get(value)
    if isinstance(value, int | float):
        number = float(value)
        return number if math.isfinite(number) and 0.0 <= number <= 1.0 else None
    return None


def _first_score(sample: EvalSample) -> tuple[str, Score] | None:
    if not sample.scores:
        return None
    name, score = next(iter(sample.scores.items()))
    return name, score


def _checks(score: Score, keep_text: bool) -> dict[str, Any] | None:
    if not score.metadata:
        return None
    allowed: tuple[type, ...] = (bool, int, float) + ((str,) if keep_text else ())
    return {k: v for k, v in score.metadata.items() if isinstance(v, allowed)} or None


def classify_sample(
    sample: EvalSample, *, redact: Callable[[str], str] = lambda s: s, keep_text: bool = True
) -> Classified:
    """Decide the outcome of one inspect sample (one item × epoch).

    Args:
        sample: The sample from the log (or a hook).
        redact: Applied to every free-text reason before it is stored (holdout runs remove
            any item text an error message might echo).
        keep_text: Keep string-valued verifier sub-checks (False on holdout runs).
    """
    if sample.error is not None:
        message = sample.error.message.strip().splitlines()[0] if sample.error.message else ""
        return Classified("harness_error", math.nan, redact(f"error: {message}")[:500])
    if sample.limit is not None:
        outcome = LIMIT_OUTCOME.get(sample.limit.type, "harness_error")
        reason = f"{sample.limit.type} limit ({sample.limit.limit:g})"
        if outcome == "harness_error":
            return Classified(outcome, math.nan, reason, limit_type=sample.limit.type)
        return Classified("limit", 0.0, reason, limit_type=sample.limit.type)
    first = _first_score(sample)
    if first is None:
        return Classified("harness_error", math.nan, "the grader produced no score")
    name, score = first
    value = score_to_float(score.value)
    reason_kind = score.reason
    if reason_kind is not None and SCORE_REASON_OUTCOME.get(reason_kind) == "harness_error":
        return Classified("harness_error", math.nan, f"grader: {reason_kind}")
    if value is None:
        if reason_kind is not None and SCORE_REASON_OUTCOME.get(reason_kind) == "scored":
            return Classified(
                "scored",
                0.0,
                f"{reason_kind} (no value, scored 0)",
                checks=_checks(score, keep_text),
            )
        return Classified(
            "harness_error",
            math.nan,
            f"scorer {name!r} returned a value that is not a number in [0, 1]",
        )
    explanation = score.explanation or reason_kind
    return Classified(
        "scored",
        value,
        redact(explanation)[:500] if explanation else None,
        checks=_checks(score, keep_text),
    )
