"""Judge audits: agreement against hand computation and the libraries, planted biases caught,
and the corrected score's coverage in simulation (issue 33)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from evalsuite.analyse._corrected import corrected_score
from evalsuite.analyse._judge import (
    _kappa_from_table,
    agreement,
    length_bias,
    model_family,
    position_consistency,
    shared_family,
)
from evalsuite.errors import UsageError


def _pairs(table: list[list[int]]) -> tuple[list[int], list[int], list[str]]:
    human, judge = [], []
    for h, row in enumerate(table):
        for j, count in enumerate(row):
            human += [h] * count
            judge += [j] * count
    return human, judge, [f"item-{k}" for k in range(len(human))]


def test_ninety_percent_agreement_at_a_90_10_base_rate_is_a_kappa_of_0_44() -> None:
    """The issue's example, by hand: p_o = 0.9, p_e = 0.9² + 0.1² = 0.82, kappa = 0.08/0.18."""
    human, judge, items = _pairs([[5, 5], [5, 85]])
    result = agreement(human, judge, items, scale="binary", rng=np.random.default_rng(1))
    assert result.raw_agreement == pytest.approx(0.9)
    assert result.value == pytest.approx(0.08 / 0.18)
    assert result.base_rate == pytest.approx(0.9)
    assert result.true_positive_rate == pytest.approx(85 / 90)
    assert result.false_positive_rate == pytest.approx(5 / 10)
    assert result.confusion == ((5, 5), (5, 85))
    assert result.interval.low < result.value < result.interval.high


def test_the_bootstrap_kappa_equals_statsmodels_on_random_tables() -> None:
    from statsmodels.stats.inter_rater import cohens_kappa

    rng = np.random.default_rng(7)
    for _ in range(50):
        table = rng.integers(0, 30, size=(3, 3)).astype(float) + np.eye(3) * 20
        assert _kappa_from_table(table) == pytest.approx(cohens_kappa(table).kappa)


def test_alpha_with_two_categories_equals_the_coincidence_matrix_formula() -> None:
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability": with two coders and
    no missing values, alpha = ((n-1) Σ o_cc - Σ n_c(n_c-1)) / (n(n-1) - Σ n_c(n_c-1)),
    n = 2N pairable values; with two categories the ordinal and nominal metrics agree."""
    human, judge, items = _pairs([[12, 4], [6, 28]])
    got = agreement(human, judge, items, scale="ordinal", rng=np.random.default_rng(2))
    o = np.zeros((2, 2))
    for h, j in zip(human, judge, strict=True):
        o[h, j] += 1
        o[j, h] += 1
    n_c = o.sum(axis=1)
    n = n_c.sum()
    expected = ((n - 1) * np.trace(o) - (n_c * (n_c - 1)).sum()) / (
        n * (n - 1) - (n_c * (n_c - 1)).sum()
    )
    assert got.statistic == "krippendorff_alpha"
    assert got.value == pytest.approx(expected)


def test_ordinal_alpha_equals_the_krippendorff_package() -> None:
    import krippendorff

    rng = np.random.default_rng(3)
    human = rng.integers(1, 6, 200)
    judge = np.clip(human + rng.integers(-1, 2, 200), 1, 5)
    items = [f"i{k // 2}" for k in range(200)]  # two attempts per item
    got = agreement(list(human), list(judge), items, scale="ordinal", rng=rng, n_boot=200)
    direct = krippendorff.alpha(
        reliability_data=np.vstack([human - 1, judge - 1]).astype(float),
        level_of_measurement="ordinal",
        value_domain=list(range(5)),
    )
    assert got.value == pytest.approx(direct)
    assert got.n_items == 100


def test_a_position_biased_judge_is_inconsistent_and_its_flips_become_ties() -> None:
    items = [f"pair-{k}" for k in range(60)]
    rng = np.random.default_rng(4)
    always_first = position_consistency(["first"] * 60, ["first"] * 60, items, rng=rng)
    assert always_first.consistency == 0.0 and set(always_first.resolved) == {"tie"}
    truth = rng.choice(["first", "second"], 60)
    swapped = ["second" if t == "first" else "first" for t in truth]
    fair = position_consistency(list(truth), swapped, items, rng=rng)
    assert fair.consistency == 1.0 and fair.resolved == tuple(truth)


def test_a_length_loving_judge_is_flagged_and_a_fair_one_is_not() -> None:
    rng = np.random.default_rng(5)
    n = 400
    human = rng.integers(0, 2, n)
    length = rng.lognormal(5, 0.8, n)
    items = [f"i{k}" for k in range(n)]
    fair = 0.2 + 0.6 * human + rng.normal(0, 0.1, n)
    loving = fair + 0.08 * np.log2(length / length.mean())
    assert not length_bias(list(fair), list(length), list(human), items).flagged
    biased = length_bias(list(loving), list(length), list(human), items)
    assert biased.flagged and biased.slope_per_doubling == pytest.approx(0.08, abs=0.02)


def test_families_are_told_from_the_model_name_not_the_provider() -> None:
    assert model_family("openrouter/anthropic/claude-3.5-sonnet") == "anthropic"
    assert model_family("bedrock/anthropic.claude-3-haiku") == "anthropic"
    assert model_family("openai/gpt-4o-mini") == "openai"
    assert model_family("mockllm/model") is None
    assert shared_family("openai/gpt-4o", "azureai/gpt-4o-mini")
    assert not shared_family("openai/gpt-4o", "anthropic/claude-3-opus")
    assert not shared_family("mockllm/model", "mockllm/model")  # unknown is never shared


def test_unequal_or_empty_labels_are_refused() -> None:
    rng = np.random.default_rng(0)
    with pytest.raises(UsageError, match="one pair each"):
        agreement([1, 0], [1], ["a", "b"], scale="binary", rng=rng)
    with pytest.raises(UsageError, match="at least two items"):
        agreement([1, 0], [1, 1], ["a", "a"], scale="binary", rng=rng)
    with pytest.raises(UsageError, match="two labels"):
        agreement([0, 1, 2], [0, 1, 2], ["a", "b", "c"], scale="binary", rng=rng)
    with pytest.raises(UsageError, match="at least 2"):
        corrected_score([1.0], [1.0], [0.0, 1.0])


def _simulate(reps: int, seed: int) -> dict[str, float]:
    """A judge of known error rates (sensitivity 0.85, specificity 0.90) grades 1,500 items
    drawn from a population with pass rate 0.6; humans label a uniform 150 of them."""
    rng = np.random.default_rng(seed)
    n_items, n_labelled, truth = 1500, 150, 0.6
    covered = {"ppi": 0, "human": 0, "judge": 0, "rogan_gladen": 0}
    width = {"ppi": 0.0, "human": 0.0}
    for _ in range(reps):
        y = (rng.random(n_items) < truth).astype(float)
        yhat = np.where(y == 1, rng.random(n_items) < 0.85, rng.random(n_items) < 0.10)
        yhat = yhat.astype(float)
        labelled = rng.permutation(n_items)[:n_labelled]
        mask = np.zeros(n_items, bool)
        mask[labelled] = True
        result = corrected_score(y[mask], yhat[mask], yhat[~mask])
        estimates = {"ppi": result.ppi, "human": result.human, "judge": result.judge}
        assert result.rogan_gladen is not None
        estimates["rogan_gladen"] = result.rogan_gladen
        for name, est in estimates.items():
            covered[name] += est.interval.low <= truth <= est.interval.high
        for name in width:
            width[name] += estimates[name].interval.high - estimates[name].interval.low
    out = {f"coverage_{k}": v / reps for k, v in covered.items()}
    out |= {f"width_{k}": v / reps for k, v in width.items()}
    return out


def test_the_corrected_score_covers_the_truth_and_is_narrower_than_humans_alone() -> None:
    """Issue 33's acceptance: ≥ 94% coverage over ≥ 2,000 replications, narrower than the
    human-labels-only interval; the judge's own interval (which trusts it) does not cover.
    4,000 replications: at 2,000 the Monte-Carlo spread of the coverage (0.936 to 0.954 over
    seeds 1 to 5; pooled 0.947) reaches below 0.94 (docs/design/judge-audit.md)."""
    reps = 4000
    got = _simulate(reps, seed=20261205)
    mc = (0.95 * 0.05 / reps) ** 0.5
    shown = f"corrected score, {reps} replications (Monte-Carlo se {mc:.4f}): {got}"
    sys.stdout.write(shown + "\n")  # the figures, in the test's output (-s, or on failure)
    assert got["coverage_ppi"] >= 0.94
    assert got["coverage_rogan_gladen"] >= 0.94
    assert got["width_ppi"] < got["width_human"]
    assert got["coverage_judge"] < 0.5  # the judge's mean is 0.55, not the humans' 0.6
