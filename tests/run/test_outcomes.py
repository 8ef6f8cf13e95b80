"""The outcome taxonomy is decided in one place and covers every inspect reason."""

from __future__ import annotations

import math
from typing import Any, get_args

import pytest
from inspect_ai.log import EvalError, EvalSample
from inspect_ai.log._log import EvalSampleLimit
from inspect_ai.scorer import Score, ScoreReason

from evalsuite.run import LIMIT_OUTCOME, SCORE_REASON_OUTCOME, classify_sample
from evalsuite.run._outcomes import score_to_float


def test_every_inspect_limit_type_is_classified() -> None:
    assert set(LIMIT_OUTCOME) == set(get_args(EvalSampleLimit.model_fields["type"].annotation))


def test_every_inspect_score_reason_is_classified() -> None:
    assert set(SCORE_REASON_OUTCOME) == set(get_args(ScoreReason))


def _sample(**kwargs: Any) -> EvalSample:
    return EvalSample(id="x::1", epoch=1, input="q", target="t", **kwargs)


def test_sample_error_is_a_harness_error() -> None:
    sample = _sample(error=EvalError(message="boom", traceback="", traceback_ansi=""))
    classified = classify_sample(sample)
    assert classified.outcome == "harness_error"
    assert math.isnan(classified.score)


@pytest.mark.parametrize("kind", sorted(LIMIT_OUTCOME))
def test_limits(kind: str) -> None:
    sample = _sample(limit=EvalSampleLimit(type=kind, limit=3), scores={"s": Score(value=1.0)})
    classified = classify_sample(sample)
    assert classified.outcome == LIMIT_OUTCOME[kind]
    assert classified.limit_type == kind
    # a limit is never scored by what the scorer made of the truncated state
    expected = 0.0 if classified.outcome == "limit" else math.nan
    assert classified.score == expected or (math.isnan(expected) and math.isnan(classified.score))


@pytest.mark.parametrize(
    ("value", "outcome", "score"),
    [
        (1.0, "scored", 1.0),
        (0.25, "scored", 0.25),
        ("C", "scored", 1.0),
        ("I", "scored", 0.0),
        (True, "scored", 1.0),
        (1.5, "harness_error", math.nan),
        (-0.1, "harness_error", math.nan),
        (math.nan, "harness_error", math.nan),
        ([1, 0], "harness_error", math.nan),
        ({"a": 1}, "harness_error", math.nan),
        ("maybe", "harness_error", math.nan),
    ],
)
def test_score_values(value: Any, outcome: str, score: float) -> None:
    classified = classify_sample(_sample(scores={"s": Score(value=value)}))
    assert classified.outcome == outcome
    assert classified.score == score or (math.isnan(score) and math.isnan(classified.score))


@pytest.mark.parametrize("reason", sorted(SCORE_REASON_OUTCOME))
def test_score_reasons(reason: str) -> None:
    classified = classify_sample(_sample(scores={"s": Score(value=math.nan, reason=reason)}))
    assert classified.outcome == SCORE_REASON_OUTCOME[reason]
    if classified.outcome == "scored":
        assert classified.score == 0.0
        assert reason in (classified.reason or "")


def test_no_score_is_a_harness_error() -> None:
    assert classify_sample(_sample()).outcome == "harness_error"


def test_checks_keep_scalars_and_drop_text_on_holdout() -> None:
    score = Score(
        value=1.0, metadata={"fixed": True, "amount": 12.5, "note": "refund ok", "nested": {"a": 1}}
    )
    with_text = classify_sample(_sample(scores={"s": score}))
    without = classify_sample(_sample(scores={"s": score}), keep_text=False)
    assert with_text.checks == {"fixed": True, "amount": 12.5, "note": "refund ok"}
    assert without.checks == {"fixed": True, "amount": 12.5}


def test_score_to_float_never_clips() -> None:
    assert score_to_float(1.0000001) is None
    assert score_to_float(0) == 0.0


def _limit_event(kind: str, limit: float) -> Any:
    from inspect_ai.event import SampleLimitEvent

    return SampleLimitEvent(type=kind, message=f"{kind} limit reached", limit=limit)


def _messages(n: int) -> list[Any]:
    from inspect_ai.model import ChatMessageUser

    return [ChatMessageUser(content=f"m{i}") for i in range(n)]


@pytest.mark.parametrize(
    ("evidence", "limits", "kind"),
    [
        ({"events": [_limit_event("message", 20)]}, {"messages": 20}, "message"),
        ({"events": [_limit_event("token", 500)]}, {"tokens": 500}, "token"),
        ({"messages": _messages(21)}, {"messages": 20}, "message"),
        ({"total_time": 30.0}, {"time_s": 30}, "time"),
        ({"working_time": 12.5}, {"working_s": 10}, "working"),
    ],
    ids=["message-event", "token-event", "messages-beyond", "time", "working"],
)
def test_a_limit_inspect_did_not_record_is_found_in_the_transcript(
    evidence: dict[str, Any], limits: dict[str, Any], kind: str
) -> None:
    """An agent loop that caught inspect's LimitExceededError returned normally: inspect
    recorded no limit and scored the sample; the transcript shows the limit."""
    from evalsuite.run._limits import LimitsInForce

    sample = _sample(scores={"s": Score(value="C")}, **evidence)
    assert classify_sample(sample).outcome == "scored"  # without the limits in force
    classified = classify_sample(sample, limits=LimitsInForce(**limits))
    assert (classified.outcome, classified.score, classified.limit_type) == ("limit", 0.0, kind)


@pytest.mark.parametrize(
    "evidence",
    [
        {"messages": _messages(20)},  # exactly at the limit, no event: it stopped by itself
        {"events": [_limit_event("message", 5)]},  # a sub-agent's own scoped limit
        {"total_time": 29.9},
    ],
    ids=["at-the-limit", "scoped-limit", "under-time"],
)
def test_a_transcript_within_the_limits_is_scored(evidence: dict[str, Any]) -> None:
    from evalsuite.run._limits import LimitsInForce

    sample = _sample(scores={"s": Score(value="C")}, **evidence)
    limits = LimitsInForce(messages=20, time_s=30)
    assert classify_sample(sample, limits=limits).outcome == "scored"
