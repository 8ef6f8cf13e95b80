"""Power helpers against statsmodels TTestPower and Miller's closed forms (METHODS §1e)."""

from __future__ import annotations

import math

import pytest
from scipy import stats
from statsmodels.stats.power import TTestPower

from evalsuite.analyse import VarianceComponents, epochs_needed, items_needed, mde
from evalsuite.analyse._power import mde_from_se, t_power
from evalsuite.errors import InsufficientDataError, UsageError

# METHODS §1e, v01: ω² = 0.0087, σ_A² = 0.177, σ_B² = 0.171, K = 3
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


def test_methods_v01_figures() -> None:
    # METHODS §1e (v01): the z formula gives n = 534; TTestPower about 1.4 items more
    delta = math.sqrt(Z**2 * V01.sd_diff(3) ** 2 / 533.6)
    assert items_needed(V01, delta=delta, epochs=3, method="z") == 534
    n_t = TTestPower().solve_power(effect_size=delta / V01.sd_diff(3), alpha=0.05, power=0.8)
    assert n_t == pytest.approx(535.5, abs=0.2)
    assert items_needed(V01, delta=delta, epochs=3) == math.ceil(n_t) == 536


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
