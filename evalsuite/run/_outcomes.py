"""The one place that decides an attempt's outcome from what inspect recorded.

Policy (docs/design/outcomes.md):

* a sample error (after inspect's bounded retries) is a ``harness_error``;
* a limit is a ``limit`` (model failure, score 0, labelled with its type), except an
  ``operator`` limit (a person interrupted the sample), which is a ``harness_error``; a
  model-bound tool that ran out of time (`guarded_call` with ``on_timeout="limit"``) is a
  ``limit`` of type ``tool_time``;
* a score the grader could not produce (``grader_failed``, ``scoring_failed``, no score, a
  NaN, a value outside [0, 1] or its declared bounds, or of a type that is not a score value)
  is a ``harness_error``: never clipped, never defaulted;
* which score counts when a task has several scorers or a dict-valued score is the family's
  declaration (`evalsuite.run._scores`, docs/design/scorers.md); the others are kept in the
  attempt's checks as secondary metrics;
* a model-side score reason (``refusal``, ``no_response``, ``invalid_response_format``) is
  ``scored`` with the verifier's value, or 0.0 when the verifier gave none, and keeps the
  reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Final

from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score

from evalsuite.run._episode import TOOL_LIMIT_KEY
from evalsuite.run._limits import LIMIT_OUTCOME, OutcomeName
from evalsuite.run._scores import (
    SECONDARY_ERRORS_KEY,
    SECONDARY_KEY,
    Picked,
    ScoreRule,
    pick_scores,
    to_unit,
)

__all__ = [
    "LIMIT_OUTCOME",
    "SCORE_REASON_OUTCOME",
    "Classified",
    "classify_sample",
    "score_to_float",
]

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

    inspect's ``value_to_float`` conventions (``"C"``/``"I"``/``"P"``/``"N"`` become
    1.0/0.0/0.5/0.0, booleans 1.0/0.0), without its fallback to 0.0: numbers outside [0, 1],
    NaN, lists, dicts and other strings are None (the caller turns that into a harness error;
    nothing is clipped). Declared bounds: `evalsuite.run._scores.to_unit`.

    Examples:
        >>> score_to_float("C"), score_to_float(0.25), score_to_float(1.5), score_to_float([1])
        (1.0, 0.25, None, None)
    """
    return to_unit(value)[0]


def _checks(score: Score, keep_text: bool) -> dict[str, Any] | None:
    if not score.metadata:
        return None
    allowed: tuple[type, ...] = (bool, int, float) + ((str,) if keep_text else ())
    return {
        k: v
        for k, v in score.metadata.items()
        if isinstance(v, allowed) and k not in (SECONDARY_KEY, SECONDARY_ERRORS_KEY)
    } or None


def _with_secondary(
    checks: dict[str, Any] | None, picked: Picked, redact: Callable[[str], str]
) -> dict[str, Any] | None:
    """The primary scorer's checks, plus every other score as a secondary metric."""
    if not picked.secondary:
        return checks
    values: dict[str, float | None] = {}
    errors: dict[str, str] = {}
    for metric in picked.secondary:
        kind = metric.score.reason
        if kind is not None and SCORE_REASON_OUTCOME.get(kind) == "harness_error":
            values[metric.name], errors[metric.name] = None, f"grader: {kind}"
            continue
        value, problem = to_unit(metric.value)
        values[metric.name] = value
        if value is None:
            errors[metric.name] = redact(problem)[:300]
    out = dict(checks or {})
    out[SECONDARY_KEY] = values
    if errors:
        out[SECONDARY_ERRORS_KEY] = errors
    return out


def classify_sample(
    sample: EvalSample,
    *,
    redact: Callable[[str], str] = lambda s: s,
    keep_text: bool = True,
    rule: ScoreRule | None = None,
) -> Classified:
    """Decide the outcome of one inspect sample (one item × epoch).

    Args:
        sample: The sample from the log (or a hook).
        redact: Applied to every free-text reason before it is stored (holdout runs remove
            any item text an error message might echo).
        keep_text: Keep string-valued verifier sub-checks (False on holdout runs).
        rule: The family's score declaration (docs/design/scorers.md); None: the single
            scorer's single value counts, and several scorers or a dict value are a harness
            error naming what to declare.
    """
    if sample.error is not None:
        message = sample.error.message.strip().splitlines()[0] if sample.error.message else ""
        return Classified("harness_error", math.nan, redact(f"error: {message}")[:500])
    tool_limit = (sample.store or {}).get(TOOL_LIMIT_KEY)
    if sample.limit is None and tool_limit:
        return Classified("limit", 0.0, f"tool time limit: {tool_limit}", limit_type="tool_time")
    if sample.limit is not None:
        outcome = LIMIT_OUTCOME.get(sample.limit.type, "harness_error")
        reason = f"{sample.limit.type} limit ({sample.limit.limit:g})"
        if outcome == "harness_error":
            return Classified(outcome, math.nan, reason, limit_type=sample.limit.type)
        return Classified("limit", 0.0, reason, limit_type=sample.limit.type)
    rule = rule or ScoreRule()
    picked = pick_scores(sample.scores or {}, rule)
    if isinstance(picked, str):
        return Classified("harness_error", math.nan, redact(picked)[:500])
    primary = picked.primary
    score = primary.score
    reason_kind = score.reason
    if reason_kind is not None and SCORE_REASON_OUTCOME.get(reason_kind) == "harness_error":
        return Classified("harness_error", math.nan, f"grader: {reason_kind}")
    value, problem = to_unit(primary.value, rule.bounds)
    checks = _with_secondary(_checks(score, keep_text), picked, redact)
    if value is None:
        if reason_kind is not None and SCORE_REASON_OUTCOME.get(reason_kind) == "scored":
            return Classified("scored", 0.0, f"{reason_kind} (no value, scored 0)", checks=checks)
        return Classified(
            "harness_error",
            math.nan,
            redact(f"score {primary.name!r}: {problem}")[:500],
        )
    explanation = score.explanation or reason_kind
    return Classified(
        "scored",
        value,
        redact(explanation)[:500] if explanation else None,
        checks=checks,
    )
