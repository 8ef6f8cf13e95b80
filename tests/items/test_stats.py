"""The item statistics, the flags and the saturation watch on hand-made attempt tables."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from evalsuite.items import analyse_items
from evalsuite.items._stats import benjamini_hochberg, poisson_binomial_sf, wilson


def frame(rows: list[tuple[str, str, int, float | None]], *, stratum: str = "s",
          seeds: dict[tuple[str, str, int], int] | None = None) -> pd.DataFrame:  # fmt: skip
    """Attempts from (model, item, epoch, score) rows; None: a harness error, -1: a limit."""
    out = []
    for model, item, epoch, score in rows:
        outcome = "harness_error" if score is None else ("limit" if score < 0 else "scored")
        value = math.nan if score is None else max(score, 0.0)
        seed = (seeds or {}).get((model, item, epoch), 100 + epoch)
        out.append((model, item, stratum, epoch, seed, outcome, value))
    return pd.DataFrame(
        out, columns=["model", "item_id", "stratum", "epoch", "seed", "outcome", "score"]
    )


def grid(
    scores: Mapping[str, Mapping[str, Sequence[float | None]]],
) -> list[tuple[str, str, int, float | None]]:
    return [
        (m, i, e, v)
        for m, items in scores.items()
        for i, values in items.items()
        for e, v in enumerate(values, start=1)
    ]


def test_wilson_matches_statsmodels_on_binary_outcomes() -> None:
    k, n = np.array([0, 3, 7, 10]), np.array([10, 10, 10, 10])
    lo, hi = wilson(k / n, n.astype(float), 0.95)
    for j in range(4):
        ref = proportion_confint(k[j], n[j], alpha=0.05, method="wilson")
        assert (lo[j], hi[j]) == pytest.approx(ref, abs=1e-12)


def test_benjamini_hochberg_and_poisson_binomial_match_references() -> None:
    p = np.array([0.01, 0.04, np.nan, 0.03, 0.2, 0.001])
    ok = ~np.isnan(p)
    ref = multipletests(p[ok], method="fdr_bh")[1]
    np.testing.assert_allclose(benjamini_hochberg(p)[ok], ref)
    assert np.isnan(benjamini_hochberg(p)[2])
    probs = np.full(7, 0.3)
    for x in range(8):
        assert poisson_binomial_sf(x, probs) == pytest.approx(binom.sf(x - 1, 7, 0.3))


def test_difficulty_counts_models_and_excludes_harness_errors() -> None:
    rows = grid({
        "a": {"i1": [1.0, 1.0], "i2": [0.0, None]},
        "b": {"i1": [1.0, 0.0], "i2": [None, None]},
        "c": {"i1": [0.0, -1.0], "i2": [1.0, 1.0]},
    })  # fmt: skip
    out = analyse_items(frame(rows), suite="x", version="1.0.0")
    items = {i["item_id"]: i for i in out.to_dict()["items"]}
    # i1: model means 1, 0.5, 0 -> 0.5 over 3 models; the limit is a 0, not excluded
    assert items["i1"]["solve_rate"] == 0.5 and items["i1"]["models"] == 3
    assert items["i1"]["limits"] == 1 and items["i1"]["limit_rate"] == 1 / 6
    lo, hi = wilson(np.array([0.5]), np.array([3.0]), 0.95)
    assert items["i1"]["solve_ci"] == [pytest.approx(lo[0]), pytest.approx(hi[0])]
    # i2: b's two harness errors drop b; a's error is excluded, never a 0
    assert items["i2"]["models"] == 2 and items["i2"]["solve_rate"] == 0.5
    assert items["i2"]["harness_errors"] == 3 and items["i2"]["harness_error_rate"] == 0.5


def test_item_rest_correlation_by_hand() -> None:
    rng = np.random.default_rng(2)
    scores = {f"m{m}": {f"i{j}": [float(rng.random() < (m + 1) / 7)] for j in range(6)}
              for m in range(6)}  # fmt: skip
    out = analyse_items(frame(grid(scores)), suite="x", version="1.0.0").to_dict()
    table = pd.DataFrame({m: {i: v[0] for i, v in s.items()} for m, s in scores.items()}).T
    for item in out["items"]:
        x = table[item["item_id"]]
        rest = table.drop(columns=item["item_id"]).mean(axis=1)
        if x.nunique() > 1:
            assert item["item_rest_r"] == pytest.approx(np.corrcoef(x, rest)[0, 1])


def test_a_deterministic_agent_flipping_at_one_seed_is_a_harness_suspect() -> None:
    rows = grid({
        "evalsuite/baseline": {"i1": [1.0, 0.0], "i2": [1.0, 1.0], "i3": [0.0, 1.0]},
        "other": {"i1": [1.0, 0.0], "i2": [0.0, 1.0], "i3": [0.0, 0.0]},
    })  # fmt: skip
    # i1: the agent ran it twice at seed 7 and scored 1 then 0; i3 at two different seeds
    seeds = {("evalsuite/baseline", "i1", 1): 7, ("evalsuite/baseline", "i1", 2): 7}
    out = analyse_items(
        frame(rows, seeds=seeds), suite="x", version="1.0.0", deterministic={"evalsuite/baseline"}
    ).to_dict()
    items = {i["item_id"]: i for i in out["items"]}
    assert items["i1"]["flags"] == ["harness-suspect"]
    assert "evalsuite/baseline" in items["i1"]["flag_reasons"]["harness-suspect"]
    assert items["i1"]["seed_flip_models"] == ["evalsuite/baseline"]
    assert "harness-suspect" not in items["i3"]["flags"]  # other seeds may differ
    # a model not declared deterministic may flip at one seed
    plain = analyse_items(frame(rows, seeds=seeds), suite="x", version="1.0.0").to_dict()
    assert all(i["seed_flip_models"] == [] for i in plain["items"])


def test_an_item_flipping_where_models_are_steady_is_flaky() -> None:
    scores: dict[str, dict[str, list[float | None]]] = {}
    for m in range(6):
        scores[f"m{m}"] = {f"i{j:02d}": [float(j % 2)] * 4 for j in range(30)}
        scores[f"m{m}"]["i00"] = [1.0, 0.0, 1.0, 0.0]
    scores["m0"]["i05"] = [1.0, 1.0, 0.0, 1.0]  # one model flips once elsewhere: not flaky
    out = analyse_items(frame(grid(scores)), suite="x", version="1.0.0").to_dict()
    items = {i["item_id"]: i for i in out["items"]}
    assert items["i00"]["flags"] == ["flaky"]
    assert items["i00"]["flip_models"] == 6
    assert "6 of 6 models" in items["i00"]["flag_reasons"]["flaky"]
    assert "flaky" not in items["i05"]["flags"]
    assert items["i00"]["epoch_variance"] == 0.25


def test_noise_floor_and_no_separation_by_hand() -> None:
    # three models, two items, 2 epochs; every model scores 0.5 on average: no spread at all
    scores = {m: {"i1": [1.0, 0.0], "i2": [0.0, 1.0]} for m in ("a", "b", "c")}
    out = analyse_items(frame(grid(scores)), suite="x", version="1.0.0").to_dict()
    (s,) = out["strata"]
    # per model: item variance 0.25 (population) over n = 2: s^2/n = 0.25/(2-1) = 0.25 per
    # item; SE^2 of the mean of 2 items = 0.25 / 2; the floor is its root
    assert s["noise_floor"] == pytest.approx(math.sqrt(0.25 / 2))
    assert s["spread"] == 0.0 and s["no_separation"] is True and s["watch"] is True
    assert not s["saturated"]
    one_epoch = {m: {"i1": [1.0], "i2": [float(m == "a")]} for m in ("a", "b", "c")}
    (t,) = analyse_items(frame(grid(one_epoch)), suite="x", version="1.0.0").to_dict()["strata"]
    assert t["noise_floor"] is None and "unknown" in t["noise_floor_note"]
    # the test of equal scores needs no second epoch (issue 28.8): one item varies, 2 df
    assert t["separation"]["df"] == 2 and t["no_separation"] is True


def test_dead_needs_two_models_and_all_equal() -> None:
    one = analyse_items(frame(grid({"a": {"i1": [1.0]}})), suite="x", version="1.0.0")
    assert one.items[0].flags == ()
    two = analyse_items(
        frame(grid({"a": {"i1": [0.0], "i2": [1.0]}, "b": {"i1": [0.0], "i2": [0.5]}})),
        suite="x",
        version="1.0.0",
    )
    items = {i.item_id: i.to_dict() for i in two.items}
    assert (
        items["i1"]["flags"] == ["dead"]
        and "none of 2 models" in items["i1"]["flag_reasons"]["dead"]
    )
    assert items["i2"]["flags"] == []  # a partial score is not "everyone solves it"


_PROBE = """
import json, sys
import numpy as np, pandas as pd
from evalsuite.items import analyse_items, fit_2pl, stratum_watch
rows = [("m%d" % m, "i%d" % i, "s", e, 1, "scored", float((m + i + e) % 2))
        for m in range(9) for i in range(5) for e in (1, 2)]
frame = pd.DataFrame(rows, columns=["model", "item_id", "stratum", "epoch", "seed", "outcome",
                                    "score"])
analyse_items(frame, suite="x", version="1.0.0")
print(json.dumps(sorted(sys.modules)))
"""


def test_the_item_statistics_load_no_database() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    modules = set(json.loads(out))
    assert "evalsuite.items._irt" in modules  # nine models: the 2PL fit ran
    assert not {m for m in modules if m.split(".")[0] == "sqlalchemy"}
    assert "evalsuite.store._store" not in modules
