"""Item sources that cannot be read (issue 10.15): usage errors naming the file, and `verify`
goes on with the other suites; a deleted item source is an integrity failure naming its items.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import Project, json_out, make_items, make_project, suite_toml, write_jsonl


def _freeze(project: Project) -> None:
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr


def _with_bad_byte(path: Path, line: int) -> int:
    """Put the byte 0xFF into line `line` (1-based) of `path`; return its offset in the file."""
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    offset = sum(len(x) for x in lines[: line - 1]) + 12
    path.write_bytes(data[:offset] + b"\xff" + data[offset:])
    return offset


def _second_suite(project: Project) -> Path:
    """Add suite `other` (its own items in tasks/fam2/) and freeze it."""
    (project.root / "tasks" / "other.toml").write_text(
        suite_toml("other", items="fam2/items.jsonl"), encoding="utf-8"
    )
    write_jsonl(project.root / "tasks" / "fam2" / "items.jsonl", make_items(seed=3))
    result = project.invoke("freeze", "other", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    return project.root / "tasks" / "fam2" / "items.jsonl"


# ---- freeze ------------------------------------------------------------------------------------
def test_empty_items_file_is_a_usage_error_naming_it(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.items_path().write_bytes(b"")
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert "tasks/fam/items.jsonl: the item source of family 'fam' holds no items" in message
    assert "Traceback" not in result.stderr and "DatasetGenerationError" not in message


def test_blank_lines_only_is_an_empty_source(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    project.items_path().write_text("\n  \n\n", encoding="utf-8")
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2 and "holds no items" in result.stderr


def test_non_utf8_items_file_names_line_and_byte_offset(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    offset = _with_bad_byte(project.items_path(), line=3)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert f"items.jsonl:3: not valid UTF-8 at byte offset {offset} of the file" in message
    assert "byte 13 of the line is 0xff" in message
    assert "re-save the file as UTF-8" in message


def test_unreadable_items_file_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)
    target = project.items_path()
    real = Path.read_bytes

    def refuse(self: Path) -> bytes:
        if self == target:
            raise PermissionError(13, "Permission denied", str(self))
        return real(self)

    # chmod 000 does not stop root, under which CI may run: deny the read itself
    monkeypatch.setattr(Path, "read_bytes", refuse)
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    message = " ".join(result.stderr.split())
    assert "items.jsonl: the item source cannot be read (Permission denied)" in message


def test_a_damaged_parquet_source_is_a_usage_error(tmp_path: Path) -> None:
    project = make_project(tmp_path, toml=suite_toml(items="fam/items.parquet"))
    (project.root / "tasks" / "fam" / "items.parquet").write_bytes(b"PAR1 not really parquet")
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stderr
    assert "items.parquet: not a readable Parquet file" in " ".join(result.stderr.split())


def test_raw_line_separators_inside_json_strings_survive_a_freeze(tmp_path: Path) -> None:
    """U+2028 / U+0085 may stand raw in JSON strings: they do not end a JSONL line."""
    items = make_items()
    items[0]["input"] += " first\u2028second\x85third"
    project = make_project(tmp_path)
    path = project.items_path()
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in items), encoding="utf-8"
    )
    _freeze(project)
    assert project.invoke("verify", "demo").exit_code == 0


# ---- verify ------------------------------------------------------------------------------------
def test_verify_reports_an_unreadable_source_and_checks_the_other_suites(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    _second_suite(project)
    _with_bad_byte(project.items_path(), line=2)
    result = project.invoke("verify", "--json")
    assert result.exit_code == 2, result.stdout + result.stderr
    reports = {r["suite"]: r for r in json_out(result)["suites"]}
    assert set(reports) == {"demo", "other"}
    assert reports["other"]["ok"] is True and reports["other"]["dev_checked"] == 6
    demo = reports["demo"]
    assert demo["ok"] is False and demo["problems"] == [] and demo["items"] == []
    assert len(demo["errors"]) == 1 and "items.jsonl:2: not valid UTF-8" in demo["errors"][0]
    # the holdout side of the broken suite was still checked
    assert demo["holdout_checked"] == 6


def test_verify_exits_3_when_another_suite_drifted(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    other = _second_suite(project)
    project.items_path().write_bytes(b"\xfe\xff")
    records = [json.loads(line) for line in other.read_text().splitlines()]
    records[0]["target"] += "!"
    write_jsonl(other, records)
    result = project.invoke("verify", "--json")
    assert result.exit_code == 3
    reports = {r["suite"]: r for r in json_out(result)["suites"]}
    assert reports["demo"]["errors"] and not reports["demo"]["items"]
    assert [(p["item_id"], p["kind"]) for p in reports["other"]["items"]] == [
        (records[0]["id"], "drifted")
    ]


def test_a_deleted_items_file_is_an_integrity_failure_naming_its_items(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    _second_suite(project)
    dev_ids = sorted(r["id"] for r in project.read_items())
    project.items_path().unlink()
    result = project.invoke("verify", "--json")
    assert result.exit_code == 3, result.stdout + result.stderr
    reports = {r["suite"]: r for r in json_out(result)["suites"]}
    assert reports["other"]["ok"] is True
    demo = reports["demo"]
    assert sorted(p["item_id"] for p in demo["items"]) == dev_ids
    assert {p["kind"] for p in demo["items"]} == {"missing"}
    assert all("tasks/fam/items.jsonl was deleted" in p["detail"] for p in demo["items"])
    assert demo["problems"] == [
        "item source tasks/fam/items.jsonl of family 'fam' is missing: 6 dev item(s) can no "
        "longer be verified; restore it from version control"
    ]
    text = project.invoke("verify", "demo")
    assert text.exit_code == 3 and all(i in text.stdout for i in dev_ids)


def test_a_run_on_an_unreadable_source_is_refused_as_a_usage_error(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    _freeze(project)
    _with_bad_byte(project.items_path(), line=1)
    result = project.invoke("run", "demo@1.0.0", "--model", "mockllm/model")
    assert result.exit_code == 2, result.stderr
    assert "not valid UTF-8" in " ".join(result.stderr.split())
