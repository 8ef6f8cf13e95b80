"""Secondary metrics are estimated like the primary score: item means, harness errors and
missing values excluded and counted, limits 0 (docs/design/scorers.md)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from evalsuite.analyse import estimate_mean, secondary_estimates


def _row(item: str, epoch: int, outcome: str, score: float, secondary: object) -> dict:
    checks = None
    if secondary is not None:
        payload = {"ok": True, "evalsuite:secondary": secondary}
        if isinstance(secondary, dict) and None in secondary.values():
            payload["evalsuite:secondary_errors"] = {
                k: "the value 7 is outside [0, 1]" for k, v in secondary.items() if v is None
            }
        checks = json.dumps(payload)
    return {
        "run_id": "r",
        "item_id": item,
        "item_hash": None,
        "stratum": "all",
        "cluster": {"a": "c1", "b": "c1", "c": "c2", "d": "c2"}.get(item, "c3"),
        "epoch": epoch,
        "seed": 0,
        "outcome": outcome,
        "limit_type": "message" if outcome == "limit" else None,
        "score": score,
        "reason": None,
        "retries": 0,
        "duration_s": 0.0,
        "tokens": 0,
        "checks": checks,
    }


def test_secondary_metric_uses_item_means_and_clusters() -> None:
    attempts = pd.DataFrame(
        [
            _row("a", 1, "scored", 1.0, {"security": 1.0, "style": 0.5}),
            _row("a", 2, "scored", 0.0, {"security": 0.0, "style": None}),
            _row("b", 1, "limit", 0.0, None),  # a limit counts 0 for every metric
            _row("b", 2, "scored", 1.0, {"security": 1.0, "style": 1.0}),
            _row("c", 1, "harness_error", math.nan, None),  # excluded
            _row("c", 2, "scored", 1.0, {"security": 1.0, "style": 0.25}),
            _row("d", 1, "scored", 1.0, {"security": 0.0, "style": 0.0}),
            _row("d", 2, "scored", 1.0, {"security": 0.0, "style": 0.0}),
            _row("e", 1, "scored", 1.0, {"security": 1.0, "style": 1.0}),
            _row("f", 1, "scored", 0.0, {"security": 1.0, "style": 1.0}),
        ]
    )
    found = {s.name: s for s in secondary_estimates(attempts, rng=np.random.default_rng(0))}
    assert sorted(found) == ["security", "style"]
    security = found["security"]
    expected = estimate_mean(
        [0.5, 0.5, 1.0, 0.0, 1.0, 1.0],
        clusters=["c1", "c1", "c2", "c2", "c3", "c3"],
        rng=np.random.default_rng(0),
    )
    assert security.estimate.mean == pytest.approx(4 / 6)
    assert math.isfinite(expected.se)
    assert security.estimate.se == pytest.approx(expected.se)
    assert security.estimate.ci == expected.ci
    assert security.n_missing == 0
    style = found["style"]
    # item a keeps only its first epoch for `style` (the second had no value)
    assert style.estimate.mean == pytest.approx((0.5 + 0.5 + 0.25 + 0.0 + 1.0 + 1.0) / 6)
    assert style.n_missing == 1
    assert style.missing_reasons == {"the value 7 is outside [0, 1]": 1}
    assert style.to_dict()["name"] == "style"


def test_a_single_scored_task_has_no_secondary_metric() -> None:
    attempts = pd.DataFrame([_row("a", 1, "scored", 1.0, None)])
    assert secondary_estimates(attempts, rng=np.random.default_rng(0)) == []
