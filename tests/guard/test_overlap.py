"""`freeze` refuses new items that near-copy frozen ones (docs/guard.md, "Before a freeze")."""

from __future__ import annotations

from pathlib import Path

from evalsuite._core.layout import Layout
from evalsuite.guard import new_item_overlaps
from tests.helpers import Project, json_out, make_items, make_project, write_jsonl


def _frozen(tmp_path: Path) -> tuple[Project, dict[str, dict[str, object]], set[str]]:
    records = make_items()
    project = make_project(tmp_path, records=records)
    result = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    dev = {r["id"] for r in project.read_items()}
    return project, {str(r["id"]): r for r in records}, dev


def _copy(record: dict[str, object], new_id: str) -> dict[str, object]:
    """A light edit of `record` under another id: one word changed, another target."""
    text = str(record["input"]).replace("Question", "Query", 1)
    return {**record, "id": new_id, "input": text, "target": f"other-{new_id}"}


def _fresh(new_id: str) -> dict[str, object]:
    (item,) = make_items(1, ops=("add",), seed=99)
    return {**item, "id": new_id}


def test_a_new_item_copying_a_frozen_dev_or_holdout_item_refuses_the_freeze(
    tmp_path: Path,
) -> None:
    project, records, dev = _frozen(tmp_path)
    dev_id = sorted(dev)[0]
    held_id = sorted(set(records) - dev)[0]
    write_jsonl(
        project.items_path(),
        [
            *project.read_items(),
            _copy(records[dev_id], "copy-of-dev"),
            _copy(records[held_id], "copy-of-held"),
            _fresh("fresh-000"),
        ],
    )
    overlaps = new_item_overlaps(Layout(project.root), "demo")
    assert {(o.item_id, o.frozen_id, o.split) for o in overlaps} == {
        ("copy-of-dev", dev_id, "dev"),
        ("copy-of-held", held_id, "holdout"),
    }
    result = project.invoke("freeze", "demo", "--version", "1.1.0")
    assert result.exit_code == 4, result.stdout + result.stderr
    assert "copy-of-held" in result.stderr and held_id in result.stderr
    assert "nothing was frozen" in result.stderr
    assert str(records[held_id]["input"]) not in result.stderr + result.stdout  # ids only
    assert not (project.root / "manifests/demo/1.1.0.json").exists()
    assert {r["id"] for r in project.read_items()} >= {"copy-of-dev", "copy-of-held"}

    retired = project.invoke(
        "freeze", "demo", "--version", "1.1.0", "--json",
        "--retire", "copy-of-dev", "--retire", "copy-of-held",
    )  # fmt: skip
    assert retired.exit_code == 0, retired.stderr
    assert json_out(retired)["diff"]["added"] == ["fresh-000"]


def test_carried_over_and_unrelated_new_items_pass(tmp_path: Path) -> None:
    project, _, _ = _frozen(tmp_path)
    layout = Layout(project.root)
    assert new_item_overlaps(layout, "demo") == []  # every item is carried over
    write_jsonl(project.items_path(), [*project.read_items(), _fresh("fresh-000")])
    assert new_item_overlaps(layout, "demo") == []
    result = project.invoke("freeze", "demo", "--version", "1.1.0", "--json")
    assert result.exit_code == 0, result.stderr


def test_nothing_frozen_yet_means_nothing_to_overlap(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert new_item_overlaps(Layout(project.root), "demo") == []
