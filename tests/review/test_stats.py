"""Mode rates, paired changes and harness re-classification against a hand computation."""

from __future__ import annotations

import math

import pytest
from scipy import stats

from evalsuite.review import AttemptLabel, load_labels, save_label
from evalsuite.review._stats import mode_changes, mode_rates, reclassify
from evalsuite.store import Store
from tests.review.conftest import TAXONOMY, make_run


def _labels(run: str, table: dict[str, list[tuple[str, ...]]]) -> list[AttemptLabel]:
    return [
        AttemptLabel(run, item, epoch, modes, taxonomy_version="1")
        for item, per_epoch in table.items()
        for epoch, modes in enumerate(per_epoch, start=1)
    ]


BASE = _labels(
    "a",
    {
        "i1": [("tool_loop",), ("tool_loop",)],
        "i2": [("tool_loop",), ()],
        "i3": [("wrong_answer",), ()],
        "i4": [("tool_fault",), ("tool_fault", "tool_loop")],
    },
)
CAND = _labels(
    "b",
    {
        "i1": [(), ()],
        "i2": [("tool_loop",), ()],
        "i3": [(), ()],
        "i4": [("tool_fault",), ()],
    },
)


def test_mode_rates_match_the_hand_computation() -> None:
    rates = {r.mode: r for r in mode_rates(BASE, TAXONOMY)}
    loop = rates["tool_loop"]
    # item shares 1, 1/2, 0, 1/2: mean 1/2; s² = (1/4 + 0 + 1/4 + 0)/3; SE = √(s²/4)
    assert loop.rate == pytest.approx(0.5)
    assert loop.se == pytest.approx(math.sqrt((0.5 / 3) / 4))
    assert (loop.count, loop.labelled, loop.n_items) == (4, 8, 4)
    assert loop.examples == ("i1#1", "i1#2", "i2#1")
    assert loop.ci[0] < 0.5 < loop.ci[1] and loop.method == "wilson_neff"
    assert rates["tool_fault"].rate == pytest.approx(0.25) and rates["tool_fault"].count == 2
    assert rates["wrong_answer"].rate == pytest.approx(0.125)
    assert rates["tool_fault"].kind == "harness"
    # highest count first
    assert [r.mode for r in mode_rates(BASE, TAXONOMY)] == [
        "tool_loop",
        "tool_fault",
        "wrong_answer",
    ]


def test_paired_changes_match_the_hand_computation_with_holm() -> None:
    changes = {c.mode: c for c in mode_changes(BASE, CAND, TAXONOMY)}
    loop = changes["tool_loop"]
    d = [-1.0, 0.0, 0.0, -0.5]  # candidate share − baseline share, per item
    mean = sum(d) / 4
    se = math.sqrt(sum((x - mean) ** 2 for x in d) / 3 / 4)
    p_loop = 2 * stats.t.sf(abs(mean / se), 3)
    assert loop.difference == pytest.approx(-0.375)
    assert (loop.baseline_rate, loop.candidate_rate) == pytest.approx((0.5, 0.125))
    assert loop.p_value == pytest.approx(p_loop)
    half = stats.t.ppf(0.975, 3) * se
    assert loop.ci == pytest.approx((max(-1.0, mean - half), mean + half))
    # tool_fault and wrong_answer: d = one item at -1/2, three at 0
    p_one = 2 * stats.t.sf(1.0, 3)
    assert changes["tool_fault"].p_value == pytest.approx(p_one)
    # Holm over the three modes: 3·p_loop, then max(3·p_loop, 2·p_one) for both others
    assert loop.p_holm == pytest.approx(3 * p_loop)
    assert changes["tool_fault"].p_holm == pytest.approx(max(3 * p_loop, 2 * p_one))
    assert changes["wrong_answer"].p_holm == pytest.approx(max(3 * p_loop, 2 * p_one))
    assert all(c.direction == "no clear change" for c in changes.values())
    assert loop.n_items == 4


def test_a_clear_change_is_called_fixed() -> None:
    items = [f"i{k}" for k in range(12)]
    before = _labels("a", {i: [("tool_loop",)] for i in items})
    after = _labels("b", {i: [()] for i in items})
    loop = next(c for c in mode_changes(before, after, TAXONOMY) if c.mode == "tool_loop")
    assert loop.difference == -1.0 and loop.direction == "fixed"
    assert loop.p_value == pytest.approx(2 * 0.5**12)  # exact sign-flip: no variance


def test_a_harness_mode_reclassifies_attempts_and_flips_validity(sqlite_store: Store) -> None:
    store = sqlite_store
    outcomes = {(f"i{k}", 1): ("scored", 1.0 if k % 2 else 0.0) for k in range(20)}
    make_run(store, "r1", outcomes)
    save_label(store, AttemptLabel("r1", "i1", 1, ("tool_fault",)), taxonomy=TAXONOMY)
    save_label(store, AttemptLabel("r1", "i3", 1, ("tool_fault", "tool_loop")), taxonomy=TAXONOMY)
    save_label(store, AttemptLabel("r1", "i2", 1, ("wrong_answer",)), taxonomy=TAXONOMY)
    run = store.get_run("r1")
    stored = store.attempts("r1")
    view = reclassify(run, stored, load_labels(store, "r1"), TAXONOMY)
    assert view.reclassified == (("i1", 1, "tool_fault"), ("i3", 1, "tool_fault"))
    assert (view.error_rate_before, view.error_rate_after) == (0.0, 2 / 20)
    assert view.valid_before and not view.valid_after  # 10% > the 5% threshold
    assert view.score_before == pytest.approx(0.5)
    assert view.score_after == pytest.approx(8 / 18)  # i1 and i3 (both 1.0) leave the mean
    out = view.to_dict()
    assert out["recomputed"] is True
    assert out["reclassified"][0]["reason"] == "review: harness mode tool_fault"
    # the stored outcomes are untouched
    assert (store.attempts("r1")["outcome"] == "scored").all()
