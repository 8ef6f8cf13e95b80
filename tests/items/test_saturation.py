"""The saturation watch's "no separation" is a test with a stated error rate (issue 28,
point 8): it compared point estimates (`spread < noise floor`) and, with five truly identical
models, said they separate 41% of the time. Now a test of equal scores across models, the
items as strata (docs/design/items.md, "Saturation watch"), checked here by seeded
simulation and against statsmodels' Cochran's Q."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from statsmodels.stats.contingency_tables import cochrans_q

from evalsuite.items import analyse_items, stratum_watch
from evalsuite.items._saturation import separation_test
from evalsuite.items._stats import cell_table

ALPHA = 0.05


def _world(
    rng: np.random.Generator, shifts: np.ndarray, items: int, epochs: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(n, k, ss) items x models: 0/1 attempts, item rates spread, model m shifted in logit."""
    base = rng.normal(0.0, 1.2, size=items)
    p = 1 / (1 + np.exp(-(base[:, None] + shifts[None, :])))
    k = rng.binomial(epochs, p).astype(float)
    n = np.full_like(k, float(epochs))
    return n, k, k.copy()  # 0/1 scores: the sum of squares is the sum


def test_cochrans_q_is_the_single_binary_attempt_case() -> None:
    rng = np.random.default_rng(11)
    rates = rng.uniform(0.2, 0.8, size=(40, 1)) + np.array([0, 0.05, 0.1, 0, -0.1])
    x = rng.random((40, 5)) < rates
    x = x.astype(float)
    stat, df, p_value = separation_test(np.ones_like(x), x, x)
    expected = cochrans_q(x)
    assert stat == pytest.approx(expected.statistic, rel=1e-9)
    assert df == expected.df and p_value == pytest.approx(expected.pvalue, rel=1e-9)


def test_false_separation_rate_is_alpha_for_identical_models() -> None:
    """Seeded simulation: 5 identical models, 30 items, 2 epochs, 2,000 strata."""
    rng = np.random.default_rng(2028)
    reps = 2000
    rejected = sum(
        separation_test(*_world(rng, np.zeros(5), 30, 2))[2] < ALPHA for _ in range(reps)
    )
    rate = rejected / reps
    # binomial sd at 0.05 over 2,000: 0.005; the chi-square approximation stays within ±0.015
    assert abs(rate - ALPHA) < 0.015, rate


def test_models_that_differ_are_separated() -> None:
    rng = np.random.default_rng(7)
    shifts = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    power = np.mean([separation_test(*_world(rng, shifts, 30, 2))[2] < ALPHA for _ in range(200)])
    assert power > 0.95


def _attempts(rng: np.random.Generator, shifts: np.ndarray) -> pd.DataFrame:
    n, k, _ = _world(rng, shifts, 30, 2)
    rows = []
    for i in range(n.shape[0]):
        for m in range(n.shape[1]):
            wins = int(k[i, m])
            for e in (1, 2):
                rows.append((f"m{m}", f"i{i:02d}", "s", e, 1, "scored", float(e <= wins)))
    return pd.DataFrame(
        rows, columns=["model", "item_id", "stratum", "epoch", "seed", "outcome", "score"]
    )


def test_the_watch_calls_identical_models_not_separated_at_the_stated_rate() -> None:
    """Through `stratum_watch`: the old rule (`spread < noise floor`) called five identical
    models "not separated" about 59% of the time; the test does so 1 - alpha of the time."""
    rng = np.random.default_rng(5)
    verdicts = []
    for _ in range(40):
        (entry,) = stratum_watch(cell_table(_attempts(rng, np.zeros(5)), ()), alpha=ALPHA)
        verdicts.append(entry["no_separation"])
    # 1 - alpha = 0.95 (binomial sd over 40: 0.034); the old rule's 0.59 is 6 sd below 0.8
    assert np.mean(verdicts) > 0.8


def test_the_json_names_the_test_its_p_value_and_alpha() -> None:
    rng = np.random.default_rng(3)
    same = analyse_items(_attempts(rng, np.zeros(4)), suite="x", version="1.0.0", level=0.9)
    (s,) = same.to_dict()["strata"]
    test = s["separation"]
    assert test["alpha"] == pytest.approx(0.1) and test["df"] == 3
    assert test["method"] == "generalised_cmh_mean_score_items_as_strata"
    assert s["no_separation"] is (test["p_value"] >= 0.1)
    apart = analyse_items(
        _attempts(rng, np.array([-2.0, 0.0, 2.0, 4.0])), suite="x", version="1.0.0"
    )
    (t,) = apart.to_dict()["strata"]
    assert t["no_separation"] is False and t["separation"]["p_value"] < 1e-6
    assert not any("do not differ detectably" in r for r in t["reasons"])


def test_typed_rows_write_the_same_json_as_the_watch_and_the_contract() -> None:
    from evalsuite.items import ItemRow, ModelRow, StratumWatch

    rng = np.random.default_rng(5)
    frame = _attempts(rng, np.array([-1.0, 0.0, 1.0]))
    analysis = analyse_items(frame, suite="x", version="1.0.0")
    assert all(isinstance(s, StratumWatch) for s in analysis.strata)
    # the typed stratum rows write exactly what `stratum_watch` computes
    watch = stratum_watch(cell_table(frame, ()), alpha=1 - 0.95)
    assert [s.to_dict() for s in analysis.strata] == watch
    assert [StratumWatch.from_dict(d).to_dict() for d in watch] == watch
    payload = analysis.to_dict()
    assert all(isinstance(i, ItemRow) for i in analysis.items)
    assert all(isinstance(m, ModelRow) for m in analysis.models)
    assert list(payload["items"][0]) == [
        "item_id", "stratum", "models", "planned", "solve_rate", "solve_ci", "harness_errors",
        "harness_error_rate", "limits", "limit_rate", "item_rest_r", "item_rest_ci", "irt_a",
        "irt_a_se", "irt_b", "negative_q", "flip_models", "multi_epoch_models",
        "flip_expected", "epoch_variance", "noise_variance", "flaky_q", "harness_error_q",
        "seed_flip_models", "stratum_watched", "flags", "flag_reasons",
    ]  # fmt: skip
    assert isinstance(payload["items"][0]["solve_ci"], list)
    assert list(payload["models"][0]) == [
        "model", "runs", "items", "attempts", "mean", "ability", "ability_sd", "deterministic",
    ]  # fmt: skip
