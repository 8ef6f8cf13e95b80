"""Helpers for the analyse tests: the public data sets, and attempts tables built in memory."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pandas as pd
import pytest

REPO = Path(__file__).resolve().parents[2]


def shared_data() -> Path:
    """The directory of public evaluation results, committed in tests/data/.

    Fails the calling test when it is missing: a published-number test that silently skips
    would prove nothing.
    """
    data = REPO / "tests" / "data"
    if not (data / "tau_bench").is_dir():
        pytest.fail(f"public test data missing from {data}; restore it from version control")
    return data


def make_attempts(
    scores: npt.ArrayLike,
    *,
    run_id: str = "run-a",
    strata: Sequence[str] | None = None,
    clusters: Sequence[str | None] | None = None,
    outcomes: npt.ArrayLike | None = None,
) -> pd.DataFrame:
    """An attempts table (docs/design/attempts.md) from an items × epochs score matrix.

    NaN scores become ``harness_error`` rows unless `outcomes` says otherwise.
    """
    y = np.atleast_2d(np.asarray(scores, dtype=np.float64))
    n, k = y.shape
    flat = y.ravel()
    if outcomes is None:
        out = np.where(np.isnan(flat), "harness_error", "scored")
    else:
        out = np.asarray(outcomes, dtype=object).ravel()
    return pd.DataFrame(
        {
            "run_id": run_id,
            "item_id": np.repeat([f"item-{i:04d}" for i in range(n)], k),
            "item_hash": np.repeat([f"sha256:{i:04d}" for i in range(n)], k),
            "stratum": np.repeat(list(strata) if strata is not None else ["all"] * n, k),
            "cluster": np.repeat(
                np.asarray(clusters if clusters is not None else [None] * n, dtype=object), k
            ),
            "epoch": np.tile(np.arange(1, k + 1), n),
            "seed": np.arange(n * k),
            "outcome": out,
            "limit_type": [("message" if o == "limit" else None) for o in out],
            "score": np.where(out == "harness_error", np.nan, flat),
            "reason": None,
            "retries": 0,
            "duration_s": 1.0,
            "tokens": 0,
            "checks": None,
        }
    )


@pytest.fixture
def rng() -> np.random.Generator:
    """A fresh, seeded generator per test."""
    return np.random.default_rng(20241130)
