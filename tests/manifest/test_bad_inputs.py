"""Every bad input of issue 2 point 2: exit code 2 and a message naming what and where."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.helpers import make_items, make_project, suite_toml, write_jsonl


def _freeze_fails(tmp_path: Path, **kwargs: object) -> str:
    project = make_project(tmp_path, **kwargs)  # type: ignore[arg-type]
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return result.stderr


def test_duplicate_ids(tmp_path: Path) -> None:
    items = make_items()
    items[3]["id"] = items[1]["id"]
    message = _freeze_fails(tmp_path, records=items)
    assert f"items.jsonl:4: duplicate item id '{items[1]['id']}' (first at " in message
    assert "items.jsonl:2" in message


def test_missing_field(tmp_path: Path) -> None:
    items = make_items()
    del items[5]["target"]
    message = _freeze_fails(tmp_path, records=items)
    assert f"items.jsonl:6 (item '{items[5]['id']}'): missing required key 'target'" in message


def test_unknown_item_field(tmp_path: Path) -> None:
    items = make_items()
    items[0]["answer"] = "x"
    message = _freeze_fails(tmp_path, records=items)
    assert "items.jsonl:1" in message and "unknown key 'answer'" in message


def test_integer_id(tmp_path: Path) -> None:
    items = make_items()
    items[0]["id"] = 17
    message = _freeze_fails(tmp_path, records=items)
    assert "id must be a string (got int 17)" in message


def test_invalid_json_line(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    path = project.items_path()
    path.write_text(path.read_text() + "{not json\n")
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "items.jsonl:13: not valid JSON" in result.stderr


def test_stratum_key_absent_from_an_item(tmp_path: Path) -> None:
    items = make_items()
    del items[4]["metadata"]["op"]
    message = _freeze_fails(tmp_path, records=items)
    assert f"(item '{items[4]['id']}'): metadata has no key 'op'" in message
    assert "stratify_by" in message


def test_weights_naming_unknown_strata(tmp_path: Path) -> None:
    weights = {"fam/add": 0.5, "fam/mul": 0.3, "fam/div": 0.2}
    message = _freeze_fails(tmp_path, toml=suite_toml(weights=weights))
    assert "weights name unknown strata ['fam/div']" in message


def test_weights_not_summing_to_one(tmp_path: Path) -> None:
    message = _freeze_fails(tmp_path, toml=suite_toml(weights={"fam/add": 0.5, "fam/mul": 0.4}))
    assert "weights sum to 0.9, not 1" in message


def test_weights_leaving_out_a_stratum(tmp_path: Path) -> None:
    message = _freeze_fails(tmp_path, toml=suite_toml(weights={"fam/add": 1.0}))
    assert "weights leave out strata ['fam/mul']" in message


def test_stratum_too_small_to_split(tmp_path: Path) -> None:
    items = make_items()
    items[0]["metadata"]["op"] = "lonely"
    message = _freeze_fails(tmp_path, records=items)
    assert "stratum 'fam/lonely' has 1 item(s), too few to split" in message


def test_unknown_key_in_suite_file(tmp_path: Path) -> None:
    message = _freeze_fails(tmp_path, toml=suite_toml(extra="holdout_fractoin = 0.3\n"))
    assert "tasks/demo.toml" in message and "unknown key 'holdout_fractoin'" in message


def test_unknown_key_in_a_family(tmp_path: Path) -> None:
    toml = suite_toml().replace("version = 1\n", "version = 1\nverison = 2\n")
    message = _freeze_fails(tmp_path, toml=toml)
    assert "unknown key 'families[0].verison'" in message


@pytest.mark.parametrize(
    ("bad", "expected"),
    [
        (
            "holdout_fraction = 0.5",
            "holdout_fraction = 1.5",
        ),
        ('key = "canary"', 'key = "guess"'),
    ],
)
def test_out_of_range_settings(tmp_path: Path, bad: str, expected: str) -> None:
    toml = suite_toml().replace(bad, expected)
    message = _freeze_fails(tmp_path, toml=toml)
    assert "tasks/demo.toml" in message


def test_not_toml(tmp_path: Path) -> None:
    message = _freeze_fails(tmp_path, toml="name = \n")
    assert "not valid TOML" in message


def test_unknown_suite_lists_the_known_ones(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    result = project.invoke("freeze", "nosuch", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "no suite 'nosuch'" in result.stderr and "demo" in result.stderr


def test_bad_version_string(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    result = project.invoke("freeze", "demo", "--version", "v1")
    assert result.exit_code == 2
    assert "MAJOR.MINOR.PATCH" in result.stderr


def test_json_errors_are_machine_readable(tmp_path: Path) -> None:
    import json

    project = make_project(tmp_path)
    result = project.invoke("freeze", "nosuch", "--version", "1.0.0", "--json")
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == 2 and payload["error"] == "NotFoundError"


def test_lone_surrogate_in_item_text(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    path = project.items_path()
    path.write_text(
        path.read_text() + '{"id": "bad", "input": "x \\ud800 y", "target": "t", '
        '"metadata": {"op": "add"}}\n'
    )
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2
    assert "(item 'bad'): contains a lone surrogate" in result.stderr


def _outside_items(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    source = outside / "items.jsonl"
    write_jsonl(source, make_items(n_per_stratum=5))  # 10 items, 5 of them would be holdout
    return source


def test_an_item_source_or_task_file_leading_out_of_the_project_is_refused_at_freeze(
    tmp_path: Path,
) -> None:
    """Issue 28 point 1: freeze read the items from outside the project and rewrote that file."""
    source = _outside_items(tmp_path)
    before = source.read_bytes()
    relative = _freeze_fails(tmp_path / "a", toml=suite_toml(items="../../outside/items.jsonl"))
    assert "items = '../../outside/items.jsonl', which leads out of the project" in relative
    project = make_project(tmp_path / "b")
    project.items_path().unlink()
    project.items_path().symlink_to(source)  # a link under tasks/ pointing out
    linked = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert linked.exit_code == 2
    assert "items = 'fam/items.jsonl', which leads out of the project" in linked.stderr
    project.items_path().unlink()
    write_jsonl(project.items_path(), make_items())
    task = project.root / "tasks" / "fam" / "task.py"
    shutil.move(task, tmp_path / "outside" / "task.py")
    task.symlink_to(tmp_path / "outside" / "task.py")
    code = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert code.exit_code == 2 and "task = 'fam/task.py', which leads out" in code.stderr
    assert source.read_bytes() == before  # never rewritten
    assert not (tmp_path / "a" / "project" / "manifests").exists()
    assert not (project.root / "manifests").exists()


def test_verify_refuses_a_frozen_item_source_that_now_leads_out_of_the_project(
    tmp_path: Path,
) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    assert project.invoke("verify", "demo").exit_code == 0
    family = project.root / "tasks" / "fam"
    shutil.move(family, tmp_path / "fam-elsewhere")
    family.symlink_to(tmp_path / "fam-elsewhere", target_is_directory=True)
    result = project.invoke("verify", "demo", "--no-cache")
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "demo@1.0.0 (its manifest) declares items = 'fam/items.jsonl'" in result.stdout
    assert "leads out of the project" in result.stdout


@pytest.mark.parametrize("how", ["absolute", "backslash"])
def test_an_absolute_or_backslashed_item_source_is_refused_at_freeze(
    tmp_path: Path, how: str
) -> None:
    """An absolute items path inside the project froze into the manifest as written: after the
    project was moved or cloned elsewhere, `verify` said it 'leads out of the project' (exit 3)."""
    root = tmp_path / "project"
    declared = (
        str(root / "tasks" / "fam" / "items.jsonl") if how == "absolute" else r"fam\items.jsonl"
    )
    message = _freeze_fails(tmp_path, toml=suite_toml(items=declared.replace("\\", "\\\\")))
    assert "must be a path relative to tasks/" in message
    assert not (root / "manifests").exists()
