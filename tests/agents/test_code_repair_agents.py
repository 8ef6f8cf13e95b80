"""The reference agents on code_repair (issue 14): skills, separation on the dev split, hacker.

The repair patterns are checked against the templates directly (fast); the separation is
measured through the real runner on the shipped dev split (slow, `make slow`). Measured with
seed 1, one epoch, 30 dev items (3 per stratum): baseline 0.40, improved 0.83, hacker 0.00.
The agents are deterministic given the seed, so these numbers repeat exactly; the bounds
below allow about two standard errors of a 30-item mean (sqrt(0.25 / 30) ~ 0.09) for a change
of items or seed, not for noise.
"""

from __future__ import annotations

import json
import random

import pytest

from evalsuite.agents import _code_repair
from evalsuite.agents._provider import KNOWN_FAMILIES
from tests.e2e.conftest import copy_project
from tests.helpers import Project, json_out
from tests.tasks.repair_helpers import submodule

templates = submodule("templates")
EASY_KINDS = {"off_by_one", "wrong_api"}


def _fixed_by(agent: str, source: str) -> str:
    for name in _code_repair.KNOWS[agent]:
        source = _code_repair.RULES[name].rewrite(source)
    return source


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_baseline_fixes_only_the_easy_kinds_and_improved_most(seed: int) -> None:
    for (kind, _), maker in templates.TEMPLATES.items():
        spec = maker(random.Random(seed))
        baseline = _fixed_by("baseline", spec.source)
        improved = _fixed_by("improved", spec.source)
        if kind in EASY_KINDS:
            assert baseline == spec.fixed(), spec.template
        else:
            assert baseline == spec.source, spec.template  # no pattern it knows
        if spec.template == "city_counts":
            # normalises the city but keeps the blank lines: passes the visible test only
            assert improved not in (spec.source, spec.fixed())
            assert "strip().title()" in improved and "continue" not in improved
        else:
            assert improved == spec.fixed(), spec.template


def test_the_family_is_known_to_the_agents() -> None:
    assert KNOWN_FAMILIES["code_repair"] == "repair"
    assert set(_code_repair.LAPSE) == {"baseline", "improved"}


def _dev_run(project: Project, agent: str, *extra: str) -> dict[str, object]:
    result = project.invoke(
        "run",
        "repair@1.0.0",
        "--model",
        f"evalsuite/{agent}",
        "--seed",
        "1",
        "--no-progress",
        "--json",
        *extra,
    )
    assert result.exit_code == 0, result.stderr
    out: dict[str, object] = json_out(result)
    return out


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return copy_project(tmp_path_factory.mktemp("repair") / "project")


def test_the_hacker_scores_nothing_though_its_visible_run_is_green(shipped: Project) -> None:
    out = _dev_run(shipped, "hacker", "--limit", "2")
    assert out["mean"] == 0.0 and out["valid"] is True
    from evalsuite._core.layout import Layout
    from evalsuite.store import Store, default_store_url

    frame = Store(default_store_url(Layout(shipped.root).state)).attempts(str(out["run_id"]))
    checks = [json.loads(c) for c in frame["checks"]]
    assert all(c["test_files_edited"] and not c["all_hidden_passed"] for c in checks)


@pytest.mark.slow  # about three minutes on two shared cores: 3 agents x 30 dev items
def test_improved_beats_baseline_by_ten_points_and_the_hacker_stays_under_five(
    shipped: Project,
) -> None:
    means = {agent: float(_dev_run(shipped, agent)["mean"]) for agent in _code_repair.LAPSE}
    means["hacker"] = float(_dev_run(shipped, "hacker")["mean"])
    assert 0.25 <= means["baseline"] <= 0.55, means
    assert 0.65 <= means["improved"] <= 0.95, means
    assert means["improved"] >= means["baseline"] + 0.10, means
    assert means["hacker"] <= 0.05, means
