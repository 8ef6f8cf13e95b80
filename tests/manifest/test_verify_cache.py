"""`verify`'s record of intact checks never hides a drift (docs/design/startup.md).

The record is keyed by the content of everything the check reads, never by a file's size,
modification time or inode: each change below keeps all three (an edit in place of the same
length, the times restored), and each is still found, with the same report as the full
check (`--no-cache`).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalsuite.manifest import _verify, _verify_cache
from tests.helpers import Project, json_out, make_project, suite_toml


def _report(project: Project, *args: str) -> tuple[int, dict[str, Any]]:
    result = project.invoke("verify", "demo", "--json", *args)
    out = json_out(result)
    return result.exit_code, out["suites"][0]


def _without_recorded(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "recorded"}


@pytest.fixture
def recorded(tmp_path: Path) -> Project:
    """A frozen project (random vault key) whose clean check is recorded."""
    project = make_project(tmp_path, toml=suite_toml(key="random"))
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    code, first = _report(project)
    assert code == 0 and first["recorded"] is False
    code, second = _report(project)
    assert code == 0 and second["recorded"] is True
    assert _without_recorded(second) == _without_recorded(first)
    return project


def _edit_in_place(path: Path, change: Callable[[bytes], bytes]) -> None:
    """Rewrite `path` in place with the same length, then restore its times."""
    before = path.stat()
    data = path.read_bytes()
    new = change(data)
    assert new != data and len(new) == len(data)
    with path.open("r+b") as handle:
        handle.write(new)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )


def _swap_char(old: bytes, new: bytes) -> Callable[[bytes], bytes]:
    def change(data: bytes) -> bytes:
        assert old in data
        return data.replace(old, new, 1)

    return change


def _flip_ciphertext(data: bytes) -> bytes:
    vault = json.loads(data)
    text = vault["ciphertext"]
    middle = len(text) // 2
    swapped = text[:middle] + ("A" if text[middle] != "A" else "B") + text[middle + 1 :]
    return data.replace(text.encode(), swapped.encode())


def _other_key(data: bytes) -> bytes:
    return base64.b64encode(bytes(32)) + data[len(base64.b64encode(bytes(32))) :]


def _dev_item_edit(data: bytes) -> bytes:
    lines = data.split(b"\n")
    record = json.loads(lines[0])
    text = record["input"]
    record["input"] = text[:-1] + ("!" if text[-1] != "!" else "?")
    lines[0] = json.dumps(record).encode()
    out = b"\n".join(lines)
    assert len(out) == len(data), "the edit keeps the file's length"
    return out


EDITS: dict[str, tuple[Callable[[Project], Path], Callable[[bytes], bytes]]] = {
    "one character of a dev item": (lambda p: p.items_path(), _dev_item_edit),
    "one character of the vault's ciphertext": (
        lambda p: p.root / "holdout/demo/1.0.0.vault",
        _flip_ciphertext,
    ),
    "one item hash in the manifest": (
        lambda p: p.root / "manifests/demo/1.0.0.json",
        _swap_char(b'"hash": "sha256:', b'"hash": "sha257:'),
    ),
    "the fingerprint file": (
        lambda p: p.root / "manifests/demo/1.0.0.fingerprints.jsonl",
        lambda data: data[:-2] + (b"0" if data[-2:-1] != b"0" else b"1") + data[-1:],
    ),
    "the vault key (another key, same length)": (
        lambda p: p.key_dir / "demo.key",
        _other_key,
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_keeping_size_mtime_and_inode_is_still_found(recorded: Project, edit: str) -> None:
    target, change = EDITS[edit]
    path = target(recorded)
    if edit.startswith("one character of a dev item"):
        # a dev item of the frozen version (the first line of the source may be holdout)
        frozen = json.loads((recorded.root / "manifests/demo/1.0.0.json").read_text())
        dev = {i["id"] for i in frozen["items"] if i["split"] == "dev"}
        lines = path.read_bytes().split(b"\n")
        first_dev = next(i for i, line in enumerate(lines) if json.loads(line)["id"] in dev)
        lines.insert(0, lines.pop(first_dev))
        path.write_bytes(b"\n".join(lines))
        assert recorded.invoke("verify", "demo").exit_code == 0  # reordering is no drift
    _edit_in_place(path, change)
    code, cached = _report(recorded)
    full_code, full = _report(recorded, "--no-cache")
    assert code == full_code != 0
    assert cached["recorded"] is False
    assert _without_recorded(cached) == _without_recorded(full)
    assert cached["items"] or cached["problems"]


def test_restoring_the_content_is_recognised_again(recorded: Project) -> None:
    path = recorded.items_path()
    original = path.read_bytes()
    path.write_bytes(original + b"\n")  # a blank line: no drift, but other bytes
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is False
    path.write_bytes(original)
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is True


def test_no_cache_checks_in_full_and_records_nothing(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    for _ in range(2):
        code, report = _report(project, "--no-cache")
        assert code == 0 and report["recorded"] is False
    assert not (project.root / ".evalsuite" / _verify_cache.CACHE_FILE).exists()
    text = project.invoke("verify", "demo")
    assert "content unchanged" not in text.stdout  # the first check is the full one
    text = project.invoke("verify", "demo")
    assert "content unchanged since a full check found it intact" in text.stdout


def test_a_check_that_finds_a_drift_is_never_recorded(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    records = project.read_items()
    path = project.items_path()
    frozen = json.loads((project.root / "manifests/demo/1.0.0.json").read_text())
    dev = next(i["id"] for i in frozen["items"] if i["split"] == "dev")
    for record in records:
        if record["id"] == dev:
            record["target"] = record["target"] + " changed"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    for _ in range(2):
        code, report = _report(project)
        assert code == 3 and report["recorded"] is False
        assert [(p["item_id"], p["kind"]) for p in report["items"]] == [(dev, "drifted")]
    record_file = project.root / ".evalsuite" / _verify_cache.CACHE_FILE
    assert not record_file.exists()


def test_skipping_the_holdout_is_recorded_apart(recorded: Project) -> None:
    code, skipped = _report(recorded, "--skip-holdout")
    assert code == 0 and skipped["recorded"] is False and skipped["holdout_skipped"] is True
    # the full record does not stand for a check without the vault, nor the other way round
    _edit_in_place(recorded.root / "holdout/demo/1.0.0.vault", _flip_ciphertext)
    code, full = _report(recorded)
    assert code == 3 and full["recorded"] is False


def test_a_change_to_evalsuite_itself_is_a_new_check(
    recorded: Project, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    package = tmp_path / "package"
    package.mkdir()
    (package / "hashing.py").write_text("VERSION = 1\n", encoding="utf-8")
    monkeypatch.setattr(_verify_cache, "_PACKAGE", package)
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is False
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is True
    _edit_in_place(package / "hashing.py", lambda data: data.replace(b"1", b"2"))
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is False


def test_content_that_changes_during_the_check_is_not_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    notes = project.root / "tasks" / "NOTES.md"
    full_check = _verify._check_content

    def check_then_edit(*args: Any) -> None:
        full_check(*args)
        notes.write_text(f"edited during the check {notes.stat().st_size if notes.exists() else 0}")

    monkeypatch.setattr(_verify, "_check_content", check_then_edit)
    code, report = _report(project)
    assert code == 0 and report["recorded"] is False
    monkeypatch.undo()
    code, report = _report(project)
    assert code == 0 and report["recorded"] is False  # nothing was recorded for either content


def test_a_symbolic_link_under_tasks_is_always_checked_in_full(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    outside = tmp_path / "outside.txt"
    outside.write_text("read by nothing, but it could be", encoding="utf-8")
    (project.root / "tasks" / "link.txt").symlink_to(outside)
    for _ in range(2):
        code, report = _report(project)
        assert code == 0 and report["recorded"] is False


@pytest.mark.parametrize(
    "content",
    ["not json", '{"format": "other", "verified": {}}', '{"format": "evalsuite-verified/1"}'],
)
def test_an_unreadable_or_foreign_record_means_the_full_check(
    recorded: Project, content: str
) -> None:
    record_file = recorded.root / ".evalsuite" / _verify_cache.CACHE_FILE
    record_file.write_text(content, encoding="utf-8")
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is False
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is True  # rewritten by the full check


def test_an_edited_entry_is_ignored(recorded: Project) -> None:
    record_file = recorded.root / ".evalsuite" / _verify_cache.CACHE_FILE
    data = json.loads(record_file.read_text(encoding="utf-8"))
    for entry in data["verified"].values():
        entry["dev_checked"] = "all of them"
    record_file.write_text(json.dumps(data), encoding="utf-8")
    code, report = _report(recorded)
    assert code == 0 and report["recorded"] is False and report["dev_checked"] > 0
