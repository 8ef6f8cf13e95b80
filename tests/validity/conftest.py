"""Fixtures of the validity tests."""

import numpy as np
import pytest


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, seeded generator per test (the seed of the analyse tests)."""
    return np.random.default_rng(20241130)
