"""The one place that decides an attempt's outcome from what inspect recorded.

Policy (docs/design/outcomes.md):

* a sample error (after inspect's bounded retries) is a ``harness_error``;
* a limit is a ``limit`` (model failure, score 0, labelled with its type), except an
  ``operator`` limit (a person interrupted the sample), which is a ``harness_error``; a
  model-bound tool that ran out of time (`guarded_call` with ``on_timeout="limit"``) is a
  ``limit`` of type ``tool_time``;
* a limit inspect did not record (an agent loop caught inspect's ``LimitExceededError`` and
  returned normally) is found in the transcript: a ``SampleLimitEvent``, or messages,
  tokens or time beyond the limits in force (docs/design/run-limits.md);
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

from evalsuite._core.checks import JUDGE_OUTPUT_KEY
from evalsuite.run._episode import TOOL_LIMIT_KEY
from evalsuite.run._limits import LIMIT_OUTCOME, LimitsInForce, OutcomeName
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


def _unrecorded_limit(sample: EvalSample, limits: LimitsInForce | None) -> Classified | None:
    """A limit of the episode that inspect did not record in ``sample.limit``, or None.

    inspect raises ``LimitExceededError`` (after logging a ``SampleLimitEvent``) inside the
    agent; an agent loop that catches it and returns makes the sample look complete, and
    inspect scores it. Evidence, against the limits in force: a limit event of the transcript
    whose type and value are those of a limit in force (an event of another value is a limit
    the task scoped to a sub-agent, which the task handles); else the transcript beyond a
    limit in force (more messages or tokens than the limit: inspect never lets a conversation
    pass one; at least the time or working time limit). A count exactly at its limit with no
    event is a completion: the agent stopped within its budget.
    """
    if limits is None:
        return None
    in_force: dict[str, float | None] = {
        "message": limits.messages,
        "token": limits.tokens,
        "time": limits.time_s,
        "working": limits.working_s,
    }
    for event in getattr(sample, "events", None) or ():
        if getattr(event, "event", None) != "sample_limit":
            continue
        limit = in_force.get(str(event.type))
        if limit is not None and event.limit is not None and float(event.limit) == limit:
            return Classified(
                "limit",
                0.0,
                f"{event.type} limit ({limit:g}), caught by the agent's own loop: inspect "
                "recorded no limit; the transcript holds the limit's event",
                limit_type=str(event.type),
            )
    found: list[tuple[str, float, str]] = []
    messages = len(getattr(sample, "messages", None) or ())
    if limits.messages is not None and messages > limits.messages:
        found.append(("message", limits.messages, f"{messages} messages"))
    usage = getattr(sample, "model_usage", None) or {}
    tokens = sum(u.total_tokens for u in usage.values())
    if limits.tokens is not None and tokens > limits.tokens:
        found.append(("token", limits.tokens, f"{tokens} tokens"))
    total = getattr(sample, "total_time", None)
    if limits.time_s is not None and total is not None and total >= limits.time_s:
        found.append(("time", limits.time_s, f"{total:.1f} s"))
    working = getattr(sample, "working_time", None)
    if limits.working_s is not None and working is not None and working >= limits.working_s:
        found.append(("working", limits.working_s, f"{working:.1f} s of working time"))
    if not found:
        return None
    kind, limit, seen = found[0]
    return Classified(
        "limit",
        0.0,
        f"{kind} limit ({limit:g}): the transcript holds {seen}, though inspect recorded no limit",
        limit_type=kind,
    )


def classify_sample(
    sample: EvalSample,
    *,
    redact: Callable[[str], str] = lambda s: s,
    keep_text: bool = True,
    rule: ScoreRule | None = None,
    limits: LimitsInForce | None = None,
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
        limits: The limits the episode ran under (docs/design/run-limits.md): a limit
            found in the transcript is a limit even when inspect recorded none. None: only
            what inspect recorded counts (a log read without its limits).
    """
    if sample.error is not None:
        message = sample.error.message.strip().splitlines()[0] if sample.error.message else ""
        return Classified("harness_error", math.nan, redact(f"error: {message}")[:500])
    tool_limit = (sample.store or {}).get(TOOL_LIMIT_KEY)
    if sample.limit is None and tool_limit:
        return Classified("limit", 0.0, f"tool time limit: {tool_limit}", limit_type="tool_time")
    if sample.limit is None:
        unrecorded = _unrecorded_limit(sample, limits)
        if unrecorded is not None:
            return unrecorded
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
    if keep_text and score.explanation and "grading" in (score.metadata or {}):
        # a model-graded verdict (inspect's model_graded_* scorers put the judge's messages in
        # ``grading``): its raw output is kept whole, beside the 500-character reason (never on
        # a holdout run: the judge may restate the item; docs/design/judge-audit.md)
        checks = {**(checks or {}), JUDGE_OUTPUT_KEY: redact(score.explanation)}
    return Classified(
        "scored",
        value,
        redact(explanation)[:500] if explanation else None,
        checks=checks,
    )
