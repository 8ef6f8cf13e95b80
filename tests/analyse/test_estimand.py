"""Estimands named, and the population target's honest refusal."""

from __future__ import annotations

import numpy as np
import pytest

from evalsuite.analyse._estimand import estimand_text, population_target
from evalsuite.errors import UsageError


def test_every_estimand_has_words() -> None:
    assert "own items" in estimand_text("suite_items")
    assert "population" in estimand_text("item_population")


def test_a_reachable_population_target_gives_epochs() -> None:
    rng = np.random.default_rng(1)
    p = rng.beta(2, 2, 300)
    pilot = rng.binomial(2, p) / 2
    got = population_target(pilot, np.full(300, 2.0), 0.05)
    assert got.reachable and got.epochs_needed is not None and got.epochs_needed <= 5
    assert got.floor < 0.05
    assert got.to_dict()["estimand"] == "item_population"


def test_an_unreachable_population_target_is_refused_with_the_items_needed() -> None:
    rng = np.random.default_rng(2)
    p = rng.beta(0.5, 0.5, 100)  # sd of solve rates 0.35: the floor is about +-0.07
    pilot = rng.binomial(2, p) / 2
    got = population_target(pilot, np.full(100, 2.0), 0.03)
    assert not got.reachable and got.epochs_needed is None
    assert got.floor > 0.03
    assert got.items_needed > 100
    assert "more epochs cannot reach" in got.message and "items" in got.message


def test_refusals() -> None:
    with pytest.raises(UsageError):
        population_target([0.5], [2], 0.05)
    with pytest.raises(UsageError):
        population_target([0.5, 0.4], [2, 2], 0.7)
