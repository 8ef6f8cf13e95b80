"""Any scorer: a declared score picks one of several scorers or a key of a dict value, maps it to
[0, 1] by inspect's conventions or declared bounds, and keeps the others as secondary metrics
(docs/design/scorers.md). Toy families run end to end through `evalsuite run` with mockllm."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.log import EvalSample
from inspect_ai.scorer import Score

from evalsuite.run import classify_sample
from evalsuite.run._scores import ScoreRule, pick_scores, to_unit
from evalsuite.store import Store, default_store_url
from tests.helpers import CANARY, Project, json_out, write_jsonl

TOY_TASK = Path(__file__).parent / "scorer_tasks.py"


# ---- value mapping ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("C", 1.0),
        ("I", 0.0),
        ("P", 0.5),
        ("N", 0.0),
        (True, 1.0),
        (False, 0.0),
        ("yes", 1.0),
        ("False", 0.0),
        ("0.25", 0.25),
        (1, 1.0),
        (0.75, 0.75),
    ],
)
def test_inspect_value_conventions(value: Any, expected: float) -> None:
    assert to_unit(value) == (expected, "")


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (1.5, "outside [0, 1]"),
        (-0.1, "outside [0, 1]"),
        (math.nan, "not a finite number"),
        ("c", "not a score value"),  # inspect's value_to_float would make it 0.0
        ("maybe", "not a score value"),
        ([1, 0], "list"),
        ({"a": 1}, "dict (keys: a)"),
        (None, "no value"),
    ],
)
def test_unmappable_values_say_why(value: Any, words: str) -> None:
    mapped, reason = to_unit(value)
    assert mapped is None
    assert words in reason


def test_bounds_map_linearly_and_never_clip() -> None:
    assert to_unit(7, (0, 10)) == (0.7, "")
    assert to_unit("2.5", (0, 10)) == (0.25, "")
    assert to_unit(-5, (-10, 10)) == (0.25, "")
    assert to_unit("C", (0, 10)) == (1.0, "")  # letters and booleans are not on the scale
    mapped, reason = to_unit(11, (0, 10))
    assert mapped is None
    assert "outside the declared score_bounds [0, 10]" in reason


# ---- picking the score ---------------------------------------------------------------------
def _sample(scores: dict[str, Score]) -> EvalSample:
    return EvalSample(id="x::1", epoch=1, input="q", target="t", scores=scores)


def test_dict_value_needs_a_declaration_and_keeps_the_other_key() -> None:
    sample = _sample({"dual": Score(value={"utility": "C", "security": "I"})})
    undeclared = classify_sample(sample)
    assert undeclared.outcome == "harness_error"
    assert "keys: security, utility" in (undeclared.reason or "")
    declared = classify_sample(sample, rule=ScoreRule(select="utility"))
    assert (declared.outcome, declared.score) == ("scored", 1.0)
    assert declared.checks == {"evalsuite:secondary": {"security": 0.0}}


def test_several_scorers_are_never_silently_the_first() -> None:
    sample = _sample({"match": Score(value=0.0), "other": Score(value=1.0)})
    undeclared = classify_sample(sample)
    assert undeclared.outcome == "harness_error"
    assert "2 scorers (match, other)" in (undeclared.reason or "")
    declared = classify_sample(sample, rule=ScoreRule(select="other"))
    assert declared.score == 1.0
    assert declared.checks == {"evalsuite:secondary": {"match": 0.0}}


def test_scorer_slash_key_and_unmappable_secondaries() -> None:
    scores = {
        "judge": Score(value={"helpful": 8, "harmless": "C"}),
        "exact": Score(value="maybe"),
    }
    picked = pick_scores(scores, ScoreRule(select="judge/helpful"))
    assert not isinstance(picked, str)
    assert picked.primary.value == 8
    classified = classify_sample(_sample(scores), rule=ScoreRule("judge/helpful", (0, 10)))
    assert classified.score == 0.8
    assert classified.checks is not None
    assert classified.checks["evalsuite:secondary"] == {"judge/harmless": 1.0, "exact": None}
    assert "not a score value" in classified.checks["evalsuite:secondary_errors"]["exact"]
    missing = classify_sample(_sample(scores), rule=ScoreRule(select="judge/nope"))
    assert missing.outcome == "harness_error"
    assert "judge (keys: helpful, harmless), exact" in (missing.reason or "")


# ---- end to end through `evalsuite run` -----------------------------------------------------
def _items(n: int = 16) -> list[dict[str, Any]]:
    """Items whose metadata hold the values the toy scorers return."""
    letters = ["C", "I", "P", "N", True, False, "C", "I"]
    items = []
    for i in range(n):
        items.append(
            {
                "id": f"toy-{i:03d}",
                "input": f"Toy question number {i}: what is {i} plus one?",
                "target": str(i + 1),
                "metadata": {
                    "kind": "even" if i % 2 == 0 else "odd",
                    "u": "C" if i % 4 != 0 else "I",
                    "s": "I" if i % 3 == 0 else "C",
                    "value": letters[i % len(letters)],
                    "other": i % 5 == 0,
                    "points": i,
                },
            }
        )
    return items


def make_toy_project(
    tmp_path: Path, function: str, declaration: str = "", *, freeze: bool = True
) -> Project:
    root = tmp_path / "project"
    (root / "tasks" / "toy").mkdir(parents=True, exist_ok=True)
    shutil.copy(TOY_TASK, root / "tasks" / "toy" / "task.py")
    (root / "tasks" / "toy.toml").write_text(
        'name = "toy"\ndescription = "scorer tests"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = ["family", "kind"]\n'
        'key = "canary"\n\n[[families]]\nname = "toy"\nversion = 1\n'
        f'task = "toy/task.py@{function}"\nitems = "toy/items.jsonl"\n{declaration}',
        encoding="utf-8",
    )
    write_jsonl(root / "tasks" / "toy" / "items.jsonl", _items())
    project = Project(root=root, key_dir=tmp_path / "keys")
    if freeze:
        frozen = project.invoke("freeze", "toy", "--version", "1.0.0")
        assert frozen.exit_code == 0, frozen.stderr
    return project


def _dev_items(project: Project) -> list[dict[str, Any]]:
    """After a freeze, the item source holds exactly the dev items."""
    path = project.root / "tasks" / "toy" / "items.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _run(project: Project, *extra: str) -> Any:
    return project.invoke(
        "run", "toy@1.0.0", "--model", "mockllm/model", "--no-progress", "--json", *extra
    )


def _store(project: Project) -> Store:
    return Store(default_store_url(project.root / ".evalsuite"))


def _mean(values: list[float]) -> float:
    return sum(values) / len(values)


def test_undeclared_dict_score_is_refused_at_freeze_naming_the_keys(tmp_path: Path) -> None:
    project = make_toy_project(tmp_path, "dict_valued", freeze=False)
    source = project.root / "tasks" / "toy" / "items.jsonl"
    before = source.read_bytes()
    result = project.invoke("freeze", "toy", "--version", "1.0.0")
    assert result.exit_code == 2, result.stdout
    assert "keys: security, utility" in result.stderr
    assert 'score = "security"' in result.stderr  # says what to declare
    assert "nothing of toy was frozen" in result.stderr
    assert not (project.root / "manifests").exists()  # nothing written
    assert source.read_bytes() == before
    two = make_toy_project(tmp_path / "two", "two_scorers", freeze=False)
    refused = two.invoke("freeze", "toy", "--version", "1.0.0")
    assert refused.exit_code == 2
    assert "2 scorers (match, other)" in refused.stderr


def test_undeclared_dict_score_is_refused_at_run_start_naming_the_keys(tmp_path: Path) -> None:
    # a version frozen before freeze checked scorers: its task file now returns a dict
    project = make_toy_project(tmp_path, "single")
    task_file = project.root / "tasks" / "toy" / "task.py"
    text = task_file.read_text(encoding="utf-8")
    task_file.write_text(
        text.replace("[match()])", "[dual()])"),
        encoding="utf-8",
    )
    result = _run(project)
    assert result.exit_code == 2, result.stdout
    assert "keys: security, utility" in result.stderr
    assert 'score = "security"' in result.stderr  # says what to declare
    assert _store(project).list_runs() == []  # refused before anything was stored


def test_declared_key_is_the_score_and_the_other_key_a_secondary(tmp_path: Path) -> None:
    project = make_toy_project(tmp_path, "dict_valued", 'score = "utility"\n')
    result = _run(project, "--epochs", "2")
    assert result.exit_code == 0, result.stderr
    run_id = json_out(result)["run_id"]
    dev = _dev_items(project)
    utility = _mean([1.0 if i["metadata"]["u"] == "C" else 0.0 for i in dev])
    security = _mean([1.0 if i["metadata"]["s"] == "C" else 0.0 for i in dev])
    scored = json_out(project.invoke("score", run_id, "--json"))
    assert scored["harness"]["harness_errors"] == 0
    assert scored["overall"]["mean"] == pytest.approx(utility)
    (secondary,) = scored["secondary"]
    assert secondary["name"] == "security"
    assert secondary["mean"] == pytest.approx(security)
    assert secondary["n_items"] == len(dev)
    assert secondary["ci"][0] <= security <= secondary["ci"][1]
    assert secondary["n_missing"] == 0
    text = project.invoke("score", run_id)
    assert "secondary metric" in text.stdout
    assert "security" in text.stdout
    report = project.invoke("report", run_id, "--out", str(tmp_path / "report"))
    assert report.exit_code == 0, report.stderr
    markdown = (tmp_path / "report" / "report.md").read_text(encoding="utf-8")
    assert "**secondary metrics**" in markdown and "| security |" in markdown
    html = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    assert 'data-table="secondary"' in html and "<td>security</td>" in html


def test_two_scorers_scored_by_the_named_one(
    tmp_path: Path,
) -> None:
    project = make_toy_project(tmp_path / "b", "two_scorers", 'score = "other"\n')
    result = _run(project)
    assert result.exit_code == 0, result.stderr
    dev = _dev_items(project)
    scored = json_out(project.invoke("score", json_out(result)["run_id"], "--json"))
    assert scored["overall"]["mean"] == pytest.approx(
        _mean([1.0 if i["metadata"]["other"] else 0.0 for i in dev])
    )
    assert [s["name"] for s in scored["secondary"]] == ["match"]


def test_letters_and_booleans_map_by_inspect_conventions(tmp_path: Path) -> None:
    project = make_toy_project(tmp_path, "single")
    result = _run(project)
    assert result.exit_code == 0, result.stderr
    attempts = _store(project).attempts(json_out(result)["run_id"])
    expected = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0, True: 1.0, False: 0.0}
    values = {i["id"]: i["metadata"]["value"] for i in _dev_items(project)}
    assert set(attempts["outcome"]) == {"scored"}
    assert {values[i] for i in attempts["item_id"]} >= {"P", "N"}
    for item_id, score in zip(attempts["item_id"], attempts["score"], strict=True):
        assert score == expected[values[item_id]]
    # the verifier's own sub-checks are kept beside the score
    assert all(json.loads(c) == {"seen": True} for c in attempts["checks"])


def test_numbers_on_declared_bounds_and_out_of_bounds_harness_errors(tmp_path: Path) -> None:
    body = (
        Path(TOY_TASK)
        .read_text(encoding="utf-8")
        .replace('state.metadata["value"]', 'state.metadata["points"]')
    )
    project = make_toy_project(tmp_path, "single", "score_bounds = [0, 10]\n")
    (project.root / "tasks" / "toy" / "task.py").write_text(body, encoding="utf-8")
    result = _run(project, "--error-threshold", "1")
    assert result.exit_code == 0, result.stderr
    attempts = _store(project).attempts(json_out(result)["run_id"])
    points = {i["id"]: i["metadata"]["points"] for i in _dev_items(project)}
    over = [i for i, p in points.items() if p > 10]
    assert over, "the toy items must include points above the bounds"
    for row in attempts.itertuples():
        if points[row.item_id] > 10:
            assert row.outcome == "harness_error"
            assert math.isnan(row.score)
            assert f"the value {points[row.item_id]} is outside the declared score_bounds" in (
                row.reason
            )
        else:
            assert (row.outcome, row.score) == ("scored", points[row.item_id] / 10)
