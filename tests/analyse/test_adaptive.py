"""Adaptive runs: the planner, the stopping rule, the budget (evalsuite/analyse/_adaptive.py)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from evalsuite.analyse._adaptive import (
    DEFAULT_MAX_EPOCHS,
    AdaptiveRule,
    AdaptiveRun,
    Versus,
    _SlotDraw,
)
from evalsuite.analyse._confseq import BETTING_METHOD, TARGET_METHOD
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
    assert out["method"] == TARGET_METHOD  # bets tuned to the target half-width
    assert out["rule"]["method"] == TARGET_METHOD
    assert out["rule"]["bets"] == "target"
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
    assert run.method == "betting_cs_hedged_wor+paired_t_final"
    assert run.calls < run.budget  # an early verdict: before the full run's data
    assert run.attempts_per_item.max() <= DEFAULT_MAX_EPOCHS


def test_versus_without_the_stored_run_is_refused() -> None:
    with pytest.raises(UsageError, match="stored run's results"):
        AdaptiveRun(_equal(3), AdaptiveRule(versus="x"))


def _versus_table(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(candidate's full 5-epoch table of attempts, stored baseline item means)."""
    rng = np.random.default_rng(seed)
    p = rng.beta(1, 1, n)
    table = (rng.random((n, DEFAULT_MAX_EPOCHS)) < p[:, None]).astype(float)
    base = rng.binomial(DEFAULT_MAX_EPOCHS, np.clip(p - 0.02, 0, 1)) / DEFAULT_MAX_EPOCHS
    return table, base


def _versus_run(table: np.ndarray, base: np.ndarray, seed: int) -> AdaptiveRun:
    n = base.size
    used = np.zeros(n, dtype=int)

    def attempt(i: int) -> float:
        used[i] += 1
        return float(table[i, used[i] - 1])

    rule = AdaptiveRule(versus="base", seed=seed)
    versus = Versus("base", base, np.full(n, float(DEFAULT_MAX_EPOCHS)))
    return AdaptiveRun(_equal(n), rule, versus).simulate(attempt)


class _PerDrawRun(AdaptiveRun):
    """An adaptive run whose --versus rounds go one draw at a time: one `Generator.choice`
    per draw, and each draw's pseudo-outcome from its own plan and open slots."""

    def _plan_slots(self, q: np.ndarray, size: int) -> list[int] | None:
        remaining = self._remaining.copy()
        draws: list[_SlotDraw] = []
        for _ in range(size):
            open_ = remaining > 0
            if not open_.any():
                break
            plan = np.where(open_, q, 0.0)
            plan = plan / plan.sum()
            item = int(self._rng.choice(self.n_items, p=plan))
            draws.append(_SlotDraw(item, plan, remaining.copy()))
            remaining[item] -= 1
        if not draws:
            self.stop_reason = f"budget: every slot of the {self.epoch_cap}-epoch run is filled"
            return None
        self._slot_draws = draws
        self._pending = [d.item for d in draws]
        return list(self._pending)

    def _observe_slots(self, scores: Sequence[float | None]) -> None:
        e = float(self.epoch_cap)
        p = self.predictions()
        if self._slot_draws is None:  # the pilot
            for item, s in zip(self._pending or [], scores, strict=True):
                self._fill(item, s, e)
            return
        xs: list[float] = []
        los: list[float] = []
        his: list[float] = []
        for draw, s in zip(self._slot_draws, scores, strict=True):
            if s is not None and not self._errors:
                open_ = draw.remaining > 0
                base = self._revealed + float(np.sum(self.weights * draw.remaining * p) / e)
                ratio = np.where(
                    open_, self.weights * draw.remaining / (e * np.where(open_, draw.plan, 1)), 0
                )
                xs.append(base + float(ratio[draw.item]) * (s - float(p[draw.item])))
                los.append(base - float(np.max(ratio * p)))
                his.append(base + float(np.max(ratio * (1 - p))))
            self._fill(draw.item, s, e)
        if xs:
            self._cs.update(xs, los, his)
            self.pseudo_outcomes.extend(xs)


@pytest.mark.parametrize(
    ("n", "seed", "share", "error_at"),
    [(60, 2, 0.25, None), (30, 5, 0.9, None), (7, 1, 0.6, None), (100, 3, 0.3, 137)],
)
def test_versus_rounds_are_the_draw_by_draw_definition(
    n: int, seed: int, share: float, error_at: int | None
) -> None:
    # the slots of a --versus round are drawn as one Generator.choice per draw draws them,
    # and their pseudo-outcomes are each draw's own: the same items, plans, pseudo-outcomes,
    # rounds and verdict, bit for bit (with a harness error in the middle of a round too)
    table, base = _versus_table(n, seed=seed + 20)
    runs = []
    for cls in (AdaptiveRun, _PerDrawRun):
        used = np.zeros(n, dtype=int)
        calls = [0]

        def attempt(i: int, used: np.ndarray = used, calls: list[int] = calls) -> float | None:
            calls[0] += 1
            if calls[0] == error_at:
                return None
            used[i] += 1
            return float(table[i, used[i] - 1])

        rule = AdaptiveRule(versus="base", seed=seed, round_share=share, final_share=0.5)
        versus = Versus("base", base, np.full(n, float(DEFAULT_MAX_EPOCHS)))
        runs.append(cls(_equal(n), rule, versus).simulate(attempt))
    fast, per_draw = runs
    assert len(fast.rounds) > 2
    assert fast.pseudo_outcomes == per_draw.pseudo_outcomes
    assert len(fast.pseudo_outcomes) > 10
    assert fast.to_dict() == per_draw.to_dict()
    assert fast.calls == per_draw.calls and fast.verdict == per_draw.verdict
    if error_at is not None:
        assert sum(r.harness_errors for r in fast.rounds) == 1


def test_versus_at_the_budget_is_the_fixed_runs_paired_t_at_its_alpha_share() -> None:
    from evalsuite.analyse._paired import paired_difference

    table, base = _versus_table(60, seed=21)
    run = _versus_run(table, base, seed=2)
    assert run.calls == run.budget == DEFAULT_MAX_EPOCHS * 60  # no early verdict here
    assert (run.attempts_per_item == DEFAULT_MAX_EPOCHS).all()  # every slot, none twice
    assert run.final is not None
    fixed = paired_difference(table.mean(axis=1) - base, level=1 - run.rule.alpha_final)
    assert run.final.diff == pytest.approx(fixed.diff)
    assert run.final.p_value == pytest.approx(fixed.p_value)
    assert (run.final.lower, run.final.upper) == pytest.approx((fixed.ci.low, fixed.ci.high))
    assert run.verdict == run.final.verdict
    assert run.estimate() == pytest.approx(table.mean())  # the full run's score, exactly
    summary = run.to_dict()["versus"]
    assert summary["final_test"]["alpha"] == pytest.approx(0.045)
    assert summary["alpha_sequence"] == pytest.approx(0.005)
    assert "final paired t at alpha 0.045" in str(run.stop_reason)


def test_versus_sequence_covers_the_full_runs_score_at_every_round() -> None:
    """The without-replacement sequence holds the full 5-epoch run's score T, every round."""
    table, base = _versus_table(30, seed=5)
    truth = table.mean()
    missed = 0
    for seed in range(40):
        rule = AdaptiveRule(versus="base", seed=seed, final_share=0.5)  # CS alpha 0.025
        run = AdaptiveRun(_equal(30), rule, Versus("base", base, np.full(30, 5.0)))
        used = np.zeros(30, dtype=int)
        while (items := run.next_round()) is not None:
            scores = []
            for i in items:
                used[i] += 1
                scores.append(float(table[i, used[i] - 1]))
            record = run.observe(scores)
            missed += not record.lower <= truth <= record.upper
            if run.calls >= 4 * 30:
                break
    assert missed <= 2  # at most alpha = 0.025 of 40 runs may ever miss


def test_final_halfwidth_bound_holds_for_every_completion() -> None:
    from evalsuite.analyse._adaptive_final import final_halfwidth_bound, final_paired_test

    rng = np.random.default_rng(3)
    n = 40
    w = rng.dirichlet(np.ones(n))
    low = rng.uniform(-1, 0.5, n)
    high = np.minimum(1.0, low + rng.uniform(0, 0.5, n))
    bound = final_halfwidth_bound(low, high, w, alpha=0.045)
    for _ in range(200):
        d = rng.uniform(low, high)
        test = final_paired_test(d, w, alpha=0.045, margin=0.02)
        assert (test.upper - test.lower) / 2 <= bound + 1e-12
    exact = final_paired_test(low, w, alpha=0.045, margin=0.02)
    tight = final_halfwidth_bound(low, low, w, alpha=0.045)
    assert tight == pytest.approx((exact.upper - exact.lower) / 2)


def test_final_test_verdicts_and_refusals() -> None:
    from evalsuite.analyse._adaptive_final import final_paired_test

    w = np.full(4, 0.25)
    assert final_paired_test([0.5, 0.4, 0.6, 0.5], w, alpha=0.05, margin=0.02).verdict == "better"
    assert final_paired_test([-0.5, -0.4, -0.6, -0.5], w, alpha=0.05, margin=0.0).verdict == "worse"
    close = final_paired_test([0.001, -0.001, 0.0, 0.0], w, alpha=0.05, margin=0.02)
    assert close.verdict == "no_difference_beyond_margin"
    assert final_paired_test([0.3, -0.3, 0.1, 0.0], w, alpha=0.05, margin=0.02).verdict == (
        "undecided"
    )
    with pytest.raises(UsageError, match="one difference and one weight"):
        final_paired_test([0.1, 0.2], w, alpha=0.05, margin=0.02)
    with pytest.raises(UsageError, match="alpha must be in"):
        final_paired_test([0.1] * 4, w, alpha=1.5, margin=0.02)
    with pytest.raises(UsageError, match="final_share"):
        AdaptiveRule(versus="x", final_share=1.0)


def test_the_final_test_without_variance_gives_bounds_not_the_point() -> None:
    """Four items, each with the difference 0: the interval was [0, 0] and the verdict
    "no difference beyond ±0.02" from four items."""
    from evalsuite.analyse._adaptive_final import final_paired_test

    same = final_paired_test(np.zeros(4), np.full(4, 0.25), alpha=0.05, margin=0.02)
    q = 1 - 0.025 ** (1 / 4)  # Clopper-Pearson: none of 4 items differs
    assert (same.lower, same.upper) == pytest.approx((-q, q))
    assert same.verdict == "undecided" and same.p_value == 1.0
    many = final_paired_test(np.zeros(400), np.full(400, 1 / 400), alpha=0.05, margin=0.02)
    assert many.verdict == "no_difference_beyond_margin" and many.upper < 0.02


def test_a_harness_error_in_a_versus_run_leaves_the_verdict_to_the_final_test() -> None:
    n = 40
    base = np.zeros(n)
    versus = Versus("base", base, np.full(n, 5.0))
    run = AdaptiveRun(_equal(n), AdaptiveRule(versus="base", seed=3), versus)
    first = True

    def attempt(i: int) -> float | None:
        nonlocal first
        if first:
            first = False
            return None
        return 1.0

    run.simulate(attempt)
    assert run.calls == run.budget  # no early verdict after the error
    assert run.final is not None and run.verdict == "better"


def test_bets_are_named_and_checked() -> None:
    assert AdaptiveRule(target_halfwidth=0.05, bets="plugin").method == BETTING_METHOD
    assert AdaptiveRule(versus="x").bet_rule == "plugin"
    with pytest.raises(UsageError, match="bets 'target' need --target-halfwidth"):
        AdaptiveRule(versus="x", bets="target")
    with pytest.raises(UsageError, match="bets must be one of plugin, target"):
        AdaptiveRule(target_halfwidth=0.05, bets="kelly")
    with pytest.raises(UsageError, match="truncation"):
        AdaptiveRule(target_halfwidth=0.05, truncation=1.0)
