"""Power helpers: against statsmodels' TTestPower (an independent implementation of the
noncentral-t power), and against simulated experiments through the whole data-generating
process (items, two models, K Bernoulli epochs), which is what the formulas promise."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from evalsuite.analyse import VarianceComponents, epochs_needed, items_needed, mde
from evalsuite.analyse._power import mde_from_se, t_power
from evalsuite.errors import InsufficientDataError, UsageError

# a pilot: ω² = 0.0087, σ_A² = 0.177, σ_B² = 0.171, K = 3
V01 = VarianceComponents(omega2=0.0087, sigma2_baseline=0.177, sigma2_candidate=0.171)
Z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)


@pytest.mark.parametrize("n", [10, 50, 534, 2000])
def test_mde_t_matches_ttestpower(n: int) -> None:
    sd = V01.sd_diff(3)
    effect = TTestPower().solve_power(nobs=n, alpha=0.05, power=0.8)
    ours = mde(V01, n_items=n, epochs=3)
    assert ours == pytest.approx(effect * sd, rel=1e-4)  # statsmodels' solver tolerance
    assert TTestPower().power(effect_size=ours / sd, nobs=n, alpha=0.05) == pytest.approx(
        0.8, abs=1e-9
    )
    assert mde(V01, n_items=n, epochs=3, method="z") == pytest.approx(Z * sd / math.sqrt(n))


@pytest.mark.parametrize("delta", [0.03, 0.043, 0.1])
def test_items_needed_matches_ttestpower(delta: float) -> None:
    sd = V01.sd_diff(3)
    n_t = TTestPower().solve_power(effect_size=delta / sd, alpha=0.05, power=0.8)
    assert items_needed(V01, delta=delta, epochs=3) == math.ceil(n_t)
    assert items_needed(V01, delta=delta, epochs=3, method="z") == math.ceil(
        Z**2 * sd**2 / delta**2
    )


# ---- simulated power through the whole model: items, two models, K Bernoulli epochs ----
#
# Baseline true item scores x_A ~ U(0.3, 0.7); candidate x_B = x_A + δ + e with
# e ~ U(−0.25, 0.25) independent (model disagreement). Then, exactly,
#   ω² = Var(e) = 0.5²/12,  σ_A² = E[x_A(1 − x_A)],  σ_B² = E[x_B(1 − x_B)],
# and each item is attempted K times by each model. The test of the helpers is whether a
# paired t on the item means, at the n (or K) they ask for, rejects as often as promised.

LOW, HIGH, SPREAD = 0.3, 0.7, 0.25  # x_B stays in [0, 1] for δ ≤ 0.05


def components(delta: float) -> VarianceComponents:
    mean_a = (LOW + HIGH) / 2
    var_a = (HIGH - LOW) ** 2 / 12
    omega2 = (2 * SPREAD) ** 2 / 12
    sigma_a = mean_a - (var_a + mean_a**2)
    mean_b, var_b = mean_a + delta, var_a + omega2
    sigma_b = mean_b - (var_b + mean_b**2)
    return VarianceComponents(omega2, sigma_a, sigma_b)


def simulated_power(
    rng: np.random.Generator,
    n: int,
    k: int,
    delta: float,
    reps: int,
    alternative: str = "two-sided",
    margin: float = 0.0,
) -> float:
    x_a = rng.uniform(LOW, HIGH, size=(reps, n))
    x_b = x_a + delta + rng.uniform(-SPREAD, SPREAD, size=(reps, n))
    d = (rng.binomial(k, x_b) - rng.binomial(k, x_a)) / k + margin
    test = stats.ttest_1samp(d, 0.0, axis=1, alternative=alternative)
    return float(np.mean(test.pvalue < 0.05))


def test_items_needed_reaches_its_power_in_simulation() -> None:
    rng = np.random.default_rng(28)
    delta, k, reps = 0.04, 8, 3000
    n = items_needed(components(delta), delta=delta, epochs=k)
    assert 300 < n < 500  # the scale of the example: a 4-point difference needs ~400 items
    power = simulated_power(rng, n, k, delta, reps)
    mc = math.sqrt(0.8 * 0.2 / reps)
    assert abs(power - 0.8) < 3.5 * mc, power
    # and a third fewer items is clearly underpowered: the helper is not merely generous
    assert simulated_power(rng, int(n * 2 / 3), k, delta, reps) < 0.8 - 3.5 * mc


def test_mde_is_detected_with_its_power_in_simulation() -> None:
    rng = np.random.default_rng(280)
    n, k, reps = 600, 8, 3000
    delta = 0.04
    for _ in range(4):  # σ_B² depends on δ: iterate to the fixed point δ = MDE(δ)
        delta = mde(components(delta), n_items=n, epochs=k)
    power = simulated_power(rng, n, k, delta, reps)
    assert abs(power - 0.8) < 3.5 * math.sqrt(0.8 * 0.2 / reps), (delta, power)


def test_epochs_needed_reaches_its_power_in_simulation() -> None:
    rng = np.random.default_rng(2800)
    n, delta, reps = 600, 0.04, 3000
    k = epochs_needed(components(delta), delta=delta, n_items=n)
    assert k >= 2
    power = simulated_power(rng, n, k, delta, reps)
    assert power > 0.8 - 3.5 * math.sqrt(0.8 * 0.2 / reps), (k, power)


def test_noninferiority_sample_size_in_simulation() -> None:
    # one-sided test of H0: δ ≤ −Δ at the true δ = 0: items_needed(delta = 0 + Δ, larger)
    rng = np.random.default_rng(28000)
    margin, k, reps = 0.04, 2, 3000
    n = items_needed(components(0.0), delta=margin, epochs=k, alternative="larger")
    power = simulated_power(rng, n, k, 0.0, reps, alternative="greater", margin=margin)
    assert abs(power - 0.8) < 3.5 * math.sqrt(0.8 * 0.2 / reps), (n, power)


def test_one_sided_noninferiority_power() -> None:
    sd = V01.sd_diff(3)
    n_t = TTestPower().solve_power(
        effect_size=0.05 / sd, alpha=0.05, power=0.8, alternative="larger"
    )
    assert items_needed(V01, delta=0.05, epochs=3, alternative="larger") == math.ceil(n_t)


def test_epochs_needed_is_the_smallest_sufficient_k() -> None:
    comp = VarianceComponents(omega2=0.002, sigma2_baseline=0.15, sigma2_candidate=0.15)
    n, delta = 400, 0.05
    k = epochs_needed(comp, delta=delta, n_items=n)

    def power(kk: int) -> float:
        return float(TTestPower().power(effect_size=delta / comp.sd_diff(kk), nobs=n, alpha=0.05))

    assert power(k) >= 0.8 > power(k - 1)
    budget = n * delta**2 / Z**2
    assert epochs_needed(comp, delta=delta, n_items=n, method="z") == math.ceil(
        0.3 / (budget - 0.002)
    )


def test_epochs_cannot_beat_model_disagreement() -> None:
    with pytest.raises(InsufficientDataError, match="Add items"):
        epochs_needed(V01, delta=0.02, n_items=100)


def test_design_effect_scales_items() -> None:
    clustered = VarianceComponents(0.0087, 0.177, 0.171, design_effect=2.4)
    n1 = items_needed(V01, delta=0.05, epochs=3, method="z")
    n2 = items_needed(clustered, delta=0.05, epochs=3, method="z")
    assert n2 == pytest.approx(2.4 * n1, rel=0.01)


def test_mde_from_se_undefined_is_nan() -> None:
    assert math.isnan(mde_from_se(math.nan, 10))
    assert math.isnan(mde_from_se(0.1, 0))
    assert mde_from_se(0.0, 10) == 0.0


def test_t_power_tends_to_normal() -> None:
    assert t_power(2.8, math.inf, alpha=0.05) == pytest.approx(0.7995, abs=1e-3)
    assert t_power(2.8, 1e6, alpha=0.05) == pytest.approx(
        t_power(2.8, math.inf, alpha=0.05), abs=1e-5
    )
    assert t_power(40.0, 5, alpha=0.05) == pytest.approx(1.0)


def test_bad_arguments() -> None:
    with pytest.raises(UsageError):
        VarianceComponents(-1.0, 0.1, 0.1)
    with pytest.raises(UsageError):
        mde(V01, n_items=1, epochs=3)
    with pytest.raises(UsageError):
        items_needed(V01, delta=0.0, epochs=3)
    with pytest.raises(UsageError):
        mde(V01, n_items=50, epochs=3, power=0.01)
