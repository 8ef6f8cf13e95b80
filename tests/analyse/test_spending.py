"""Group-sequential boundaries against published tables and a Monte-Carlo check."""

from __future__ import annotations

import numpy as np
import pytest

from evalsuite.analyse._spending import (
    constant_boundary,
    crossing_probability,
    gs_boundaries,
    mixture_cs_boundary,
    spending,
)
from evalsuite.errors import UsageError

# Jennison & Turnbull (2000), Table 2.1 (Pocock C_P) and Table 2.3 (O'Brien-Fleming C_B),
# two-sided alpha = 0.05, K equally spaced looks.
POCOCK_C = {2: 2.178, 3: 2.289, 4: 2.361, 5: 2.413}
OBF_C = {2: 1.977, 3: 2.004, 4: 2.024, 5: 2.040}

# Lan-DeMets O'Brien-Fleming-type spending, two-sided symmetric alpha = 0.05 (each side
# sfLDOF at 0.025, as gsDesign and rpact tabulate it), equally spaced looks.
LD_OBF = {
    2: (2.963, 1.969),
    3: (3.710, 2.511, 1.993),
    4: (4.333, 2.963, 2.359, 2.014),
    5: (4.877, 3.357, 2.680, 2.290, 2.031),
}
LD_POCOCK_2 = (2.157, 2.201)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_classical_constants_match_jennison_turnbull(k: int) -> None:
    assert constant_boundary(k, 0.05, "pocock")[0] == pytest.approx(POCOCK_C[k], abs=1.5e-3)
    assert constant_boundary(k, 0.05, "obrien_fleming")[-1] == pytest.approx(OBF_C[k], abs=1.5e-3)


@pytest.mark.parametrize("k", [2, 3, 4, 5])
def test_lan_demets_obrien_fleming_matches_the_published_values(k: int) -> None:
    got = gs_boundaries(np.arange(1, k + 1) / k, 0.05, "obrien_fleming")
    assert got == pytest.approx(LD_OBF[k], abs=1.5e-3)


def test_lan_demets_pocock_two_looks() -> None:
    assert gs_boundaries([0.5, 1.0], 0.05, "pocock") == pytest.approx(LD_POCOCK_2, abs=1.5e-3)


@pytest.mark.parametrize("shape", ["pocock", "obrien_fleming"])
def test_boundaries_spend_exactly_alpha_by_monte_carlo(shape: str) -> None:
    times = np.array([0.15, 0.4, 0.55, 0.8, 1.0])  # unequal spacing
    c = gs_boundaries(times, 0.05, shape)  # type: ignore[arg-type]
    assert crossing_probability(c, times) == pytest.approx(0.05, abs=2e-4)
    rng = np.random.default_rng(31)
    steps = rng.standard_normal((200_000, times.size)) * np.sqrt(np.diff(times, prepend=0))
    z = np.cumsum(steps, axis=1) / np.sqrt(times)
    rate = float((np.abs(z) >= c).any(axis=1).mean())
    assert rate == pytest.approx(0.05, abs=3 * np.sqrt(0.05 * 0.95 / 200_000))


def test_spending_functions_reach_alpha_and_increase() -> None:
    t = np.linspace(0.05, 1, 20)
    for shape in ("pocock", "obrien_fleming"):
        a = spending(shape, t, 0.05)  # type: ignore[arg-type]
        assert (np.diff(a) > 0).all()
        assert a[-1] == pytest.approx(0.05)


def test_mixture_cs_is_wider_than_fixed_and_tightest_near_its_target() -> None:
    z = mixture_cs_boundary(np.array([10.0, 100.0, 1000.0]), 100, 0.05)
    assert (z > 1.96).all()
    assert z[1] < z[0] and z[1] < z[2]


def test_refusals() -> None:
    with pytest.raises(UsageError):
        gs_boundaries([0.5, 0.4], 0.05)
    with pytest.raises(UsageError):
        gs_boundaries([0.5, 1.0], 1.5)
    with pytest.raises(UsageError):
        spending("linear", [0.5], 0.05)  # type: ignore[arg-type]
