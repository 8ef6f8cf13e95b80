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
