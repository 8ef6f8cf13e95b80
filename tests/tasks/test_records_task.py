"""records_desk through the real runner, and the reference agents' separation (issue 14).

The agents' numbers on the dev split come from the offline simulation (`records_helpers`:
the same agents, tools' dispatch table and messages as a run, without inspect's loop), which
the runner-level tests check against attempt by attempt. Measured (seed 11, one epoch, 100 dev
items): baseline 0.27, improved 0.92, hacker 0.00; the null policy 0.00. Full-split runs
through the runner are `@pytest.mark.slow`.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import pandas as pd
import pytest

from evalsuite._core.layout import Layout
from evalsuite._core.seeds import derive_seed
from evalsuite.kit import null_policy
from evalsuite.manifest import load_manifest
from evalsuite.run import RunSpec, plan_attempts
from evalsuite.store import Store, default_store_url
from tests.e2e.conftest import copy_project
from tests.helpers import Project, json_out
from tests.tasks.records_helpers import dev_items, play, simulate

SEED = 11
MEASURED = {"baseline": 0.27, "improved": 0.92, "hacker": 0.0}
"""Dev-split means (seed 11, one epoch); the tolerance below is about one item in twenty:
the agents' seeded traits move a few items when the seed changes, never the ranking."""
TOLERANCE = 0.05


@pytest.fixture(scope="module")
def simulated() -> dict[str, dict[str, Any]]:
    return {
        agent: {
            item["id"]: simulate(agent, item, derive_seed(SEED, item["id"], 1))
            for item in dev_items()
        }
        for agent in MEASURED
    }


def _mean(values: Any) -> float:
    values = list(values)
    return sum(values) / len(values)


def test_the_agents_separate_on_the_dev_split(simulated: dict[str, dict[str, Any]]) -> None:
    means = {agent: _mean(o.score for o in runs.values()) for agent, runs in simulated.items()}
    for agent, measured in MEASURED.items():
        assert abs(means[agent] - measured) <= TOLERANCE, means
    assert means["improved"] >= means["baseline"] + 0.10
    assert means["hacker"] <= 0.05
    assert all(play(null_policy, item).score == 0.0 for item in dev_items())  # null scores 0


def test_the_baseline_fails_where_the_family_plants_the_trouble(
    simulated: dict[str, dict[str, Any]],
) -> None:
    by_condition: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for agent, runs in simulated.items():
        for item in dev_items():
            by_condition[agent][item["metadata"]["condition"]].append(runs[item["id"]].score)
    base = {c: _mean(v) for c, v in by_condition["baseline"].items()}
    improved = {c: _mean(v) for c, v in by_condition["improved"].items()}
    assert base["clean"] == improved["clean"] == 1.0
    assert max(base["messy"], base["stale_cache"], base["slow_tool"]) <= 0.2, base
    assert min(improved.values()) >= 0.75, improved
    # every failed slow-tool attempt of the baseline is a labelled tool-time limit
    slow = [
        simulated["baseline"][i["id"]]
        for i in dev_items()
        if i["metadata"]["condition"] == "slow_tool"
    ]
    assert slow and all(o.limit for o in slow)
    assert not any(o.limit for o in simulated["improved"].values() if o.score == 1.0)


def test_the_agents_are_deterministic_given_the_seed() -> None:
    item = next(i for i in dev_items() if i["metadata"]["condition"] == "stale_cache")
    first = simulate("improved", item, 5)
    again = simulate("improved", item, 5)
    assert first.state == again.state


@pytest.fixture(scope="module")
def records_project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return copy_project(tmp_path_factory.mktemp("records") / "project")


def _faulty_seed(project: Project, n_items: int) -> tuple[int, set[tuple[str, int]]]:
    """The first run seed whose 2% fault plan hits exactly one of the first `n_items` dev
    items (one in 24 attempts: under the 5% threshold, as 2% of a full run is)."""
    manifest = load_manifest(Layout(project.root), "records", "1.0.0")
    items = sorted(manifest.items_by_split("dev"), key=lambda i: i.id)[:n_items]
    for seed in range(500):
        spec = RunSpec(suite="records", version="1.0.0", model="x", seed=seed, fault_rate=0.02)
        faults = {(p.item.id, p.epoch) for p in plan_attempts(items, spec) if p.fault != "none"}
        if len(faults) == 1:
            return seed, faults
    raise AssertionError("no seed in 500 injects a fault")


def test_injected_faults_are_harness_errors_and_a_slow_search_is_a_labelled_limit(
    records_project: Project,
) -> None:
    n = 24
    seed, injected = _faulty_seed(records_project, n)
    result = records_project.invoke(
        "run", "records@1.0.0", "--model", "evalsuite/baseline", "--limit", str(n),
        "--seed", str(seed), "--inject-faults", "0.02", "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert out["valid"] is True  # the run stays valid; the fault is counted, not scored
    frame = Store(default_store_url(Layout(records_project.root).state)).attempts(out["run_id"])
    assert len(frame) == n
    errors = frame[frame["outcome"] == "harness_error"]
    assert set(zip(errors["item_id"], errors["epoch"], strict=True)) == injected
    assert errors["score"].isna().all()
    assert errors["reason"].str.contains("injected fault").all()
    assert out["harness"]["harness_errors"] == len(injected)
    # every other attempt is what the offline simulation says, outcome and score
    items = {i["id"]: i for i in dev_items()}
    limits = 0
    for row in frame[frame["outcome"] != "harness_error"].itertuples():
        offline = simulate("baseline", items[row.item_id], int(row.seed))
        if offline.limit:
            limits += 1
            assert (row.outcome, row.limit_type, row.score) == ("limit", "tool_time", 0.0)
            assert row.reason == "tool time limit: search_records (8s)"
        else:
            assert row.outcome == "scored" and row.score == offline.score, row.item_id
    assert limits >= 1  # the first items include slow-tool ones
    assert not math.isnan(out["mean"])


@pytest.mark.slow
def test_full_dev_runs_through_the_runner_match_the_measured_numbers(
    records_project: Project, simulated: dict[str, dict[str, Any]]
) -> None:
    for agent, measured in MEASURED.items():
        result = records_project.invoke(
            "run", "records@1.0.0", "--model", f"evalsuite/{agent}", "--seed", str(SEED),
            "--no-progress", "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        out = json_out(result)
        assert out["valid"] and out["harness"]["harness_errors"] == 0
        frame = Store(default_store_url(Layout(records_project.root).state)).attempts(out["run_id"])
        offline = pd.Series({k: o.score for k, o in simulated[agent].items()})
        assert (frame.set_index("item_id")["score"].sort_index() == offline.sort_index()).all()
        assert abs(out["mean"] - measured) <= TOLERANCE
