"""Adaptive runs: the planner, the stopping rule, the budget (evalsuite/analyse/_adaptive.py)."""

from __future__ import annotations

import numpy as np
import pytest

from evalsuite.analyse._adaptive import DEFAULT_MAX_EPOCHS, AdaptiveRule, AdaptiveRun, Versus
from evalsuite.analyse._confseq import BETTING_METHOD
from evalsuite.errors import UsageError


def _equal(n: int) -> np.ndarray:
    return np.full(n, 1 / n)


def test_rule_needs_a_target() -> None:
    with pytest.raises(UsageError, match="--target-halfwidth H"):
        AdaptiveRule()
    with pytest.raises(UsageError, match="--target-halfwidth must be in"):
        AdaptiveRule(target_halfwidth=0.7)
    with pytest.raises(UsageError, match="--max-calls"):
        AdaptiveRule(target_halfwidth=0.05, max_calls=0)


def test_budget_is_the_smaller_of_the_two_and_defaults_to_five_epochs() -> None:
    assert AdaptiveRule(target_halfwidth=0.05).budget(10) == DEFAULT_MAX_EPOCHS * 10
    assert AdaptiveRule(target_halfwidth=0.05, max_epochs=3, max_calls=25).budget(10) == 25
    assert AdaptiveRule(target_halfwidth=0.05, max_epochs=2, max_calls=25).budget(10) == 20


def test_first_round_runs_every_item_once_in_a_seeded_order() -> None:
    run = AdaptiveRun(_equal(12), AdaptiveRule(target_halfwidth=0.05, seed=7))
    first = run.next_round()
    assert first is not None
    assert sorted(first) == list(range(12))
    again = AdaptiveRun(_equal(12), AdaptiveRule(target_halfwidth=0.05, seed=7)).next_round()
    assert first == again
    other = AdaptiveRun(_equal(12), AdaptiveRule(target_halfwidth=0.05, seed=8))
    assert first != other.next_round()


def test_later_rounds_favour_mixed_outcome_items_but_never_drop_one() -> None:
    run = AdaptiveRun(_equal(4), AdaptiveRule(target_halfwidth=0.01, seed=1))
    # item 0 always solved, item 1 never, items 2 and 3 mixed
    history = {0: [1, 1, 1, 1], 1: [0, 0, 0, 0], 2: [1, 0, 1, 0], 3: [0, 1, 0, 1]}
    run._sums = np.array([sum(history[i]) for i in range(4)], dtype=float)
    run._counts = np.array([len(history[i]) for i in range(4)], dtype=float)
    q = run.plan()
    assert q.sum() == pytest.approx(1.0)
    assert q[2] > q[0] and q[3] > q[1]
    assert (q >= run.rule.mix * run.weights - 1e-12).all()


def test_pseudo_outcomes_are_unbiased_for_the_weighted_suite_score() -> None:
    # E[x | past] = sum_j w_j p_j whatever the predictions and the plan: check by exact sum
    weights = np.array([0.5, 0.3, 0.2])
    p_true = np.array([0.9, 0.2, 0.5])
    run = AdaptiveRun(weights, AdaptiveRule(target_halfwidth=0.01, seed=2))
    run._sums = np.array([3.0, 0.0, 1.0])
    run._counts = np.array([3.0, 2.0, 1.0])
    run.rounds.append(object())  # type: ignore[arg-type]  # past the pilot
    run.next_round()
    assert run._draws is not None
    draw = run._draws[0]
    q = run.plan()
    pred = run.predictions()
    expected = sum(
        q[i]
        * (
            p_true[i] * (draw.anchor + weights[i] / q[i] * (1 - pred[i]))
            + (1 - p_true[i]) * (draw.anchor + weights[i] / q[i] * (0 - pred[i]))
        )
        for i in range(3)
    )
    assert expected == pytest.approx(float(weights @ p_true))


def test_stops_at_the_target_and_names_the_method() -> None:
    rng = np.random.default_rng(11)
    p = np.r_[np.zeros(20), np.ones(20), np.full(20, 0.5)]
    run = AdaptiveRun(_equal(60), AdaptiveRule(target_halfwidth=0.1, seed=3, max_epochs=20))
    run.simulate(lambda i: float(rng.random() < p[i]))
    assert run.stop_reason is not None and run.stop_reason.startswith("target")
    last = run.rounds[-1]
    assert last.halfwidth <= 0.1
    assert last.lower <= p.mean() <= last.upper
    out = run.to_dict()
    assert out["method"] == BETTING_METHOD
    assert out["rule"]["method"] == BETTING_METHOD
    assert out["rounds"][0]["attempts"] == 60
    assert run.calls < 20 * 60


def test_stops_at_the_budget_without_overspending_it() -> None:
    rng = np.random.default_rng(12)
    run = AdaptiveRun(_equal(10), AdaptiveRule(target_halfwidth=0.001, seed=3, max_calls=23))
    run.simulate(lambda i: float(rng.random() < 0.5))
    assert run.calls == 23
    assert run.stop_reason == "budget: 23 of 23 attempts made"
    assert run.next_round() is None


def test_harness_errors_are_excluded_and_counted() -> None:
    run = AdaptiveRun(_equal(3), AdaptiveRule(target_halfwidth=0.05, seed=0))
    items = run.next_round()
    assert items is not None
    record = run.observe([None, 1.0, 0.0])
    assert record.harness_errors == 1
    assert run.attempts_per_item.sum() == 2
    assert run.calls == 3


def test_observe_refuses_a_wrong_round() -> None:
    run = AdaptiveRun(_equal(3), AdaptiveRule(target_halfwidth=0.05))
    with pytest.raises(UsageError, match="no round is planned"):
        run.observe([1.0])
    run.next_round()
    with pytest.raises(UsageError, match="planned 3 attempts but 2"):
        run.observe([1.0, 0.0])
    with pytest.raises(UsageError, match=r"in \[0, 1\]"):
        run.observe([1.0, 0.0, 2.0])


def test_refuses_weights_that_do_not_sum_to_one() -> None:
    with pytest.raises(UsageError, match="summing to 1"):
        AdaptiveRun(np.array([0.5, 0.2]), AdaptiveRule(target_halfwidth=0.05))


def test_versus_reaches_a_verdict_for_a_large_difference() -> None:
    rng = np.random.default_rng(13)
    n = 200
    baseline = np.zeros(n)  # the stored run solved nothing, 10 epochs each
    versus = Versus("base", baseline, np.full(n, 10.0))
    run = AdaptiveRun(_equal(n), AdaptiveRule(versus="base", seed=1), versus)
    run.simulate(lambda i: float(rng.random() < 0.6))
    assert run.verdict == "better"
    assert run.stop_reason is not None and run.stop_reason.startswith("verdict better")
    assert run.to_dict()["versus"]["verdict"] == "better"
    assert "+hoeffding_fixed" in run.method


def test_versus_without_the_stored_run_is_refused() -> None:
    with pytest.raises(UsageError, match="stored run's results"):
        AdaptiveRun(_equal(3), AdaptiveRule(versus="x"))
