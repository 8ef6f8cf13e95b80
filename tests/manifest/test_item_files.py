"""Item files (issue 10.7): safe sandbox paths only, and content frozen into the item.

Keys that are absolute, leave the sandbox or are otherwise unsafe are refused by `freeze`,
`verify` and `audit --leaks`; a file an item names is read at load time, so its content is
hashed (and sealed in the vault for holdout items), and inspect is never given a host path.
"""

from __future__ import annotations

import asyncio
import base64
import json
import re
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from inspect_ai._eval.task.sandbox import read_sandboxenv_file, resolve_sample_files

import tests.run.fake_models  # noqa: F401  (registers the fake providers)
from evalsuite._core.layout import Layout
from evalsuite.manifest import (
    KeySpec,
    list_suite_names,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    resolve_key,
    verify,
)
from evalsuite.manifest import _files as files_module
from evalsuite.run import item_to_sample
from tests.helpers import REPO, Project, json_out, make_items, make_project

TASK = """
from inspect_ai import Task, task
from inspect_ai.scorer import Score, accuracy, scorer
from inspect_ai.solver import generate
from inspect_ai.util import sandbox


@scorer(metrics=[accuracy()])
def sees_the_frozen_file():
    async def score(state, target):
        text = await sandbox().read_file("notes/data.txt")
        return Score(value=1.0 if text == target.text else 0.0, explanation="checked")

    return score


@task
def fam(dataset=None):
    return Task(
        dataset=list(dataset or []),
        solver=generate(),
        scorer=sees_the_frozen_file(),
        sandbox="local",
        message_limit=10,
    )
"""


def _unfrozen_fixture_project(tmp_path: Path) -> Project:
    """make_items(), each reading notes/data.txt from its own fixture file (content = target)."""
    items = make_items()
    for item in items:
        item["target"] = f"fixture-of-{item['id']}-c0ffee"
        item["files"] = {"notes/data.txt": {"path": f"fixtures/{item['id']}.txt"}}
        item["input"] = "What is 1 + 1?"
    project = make_project(tmp_path, records=items)
    family = project.root / "tasks" / "fam"
    (family / "fixtures").mkdir()
    for item in items:
        (family / "fixtures" / f"{item['id']}.txt").write_text(item["target"], encoding="utf-8")
    (family / "task.py").write_text(TASK, encoding="utf-8")
    return project


def _fixture_project(tmp_path: Path) -> Project:
    project = _unfrozen_fixture_project(tmp_path)
    result = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    return project


def _splits(project: Project) -> dict[str, str]:
    manifest = load_manifest(Layout(project.root), "demo")
    return {i.id: i.split for i in manifest.items}


def _freeze_message(
    tmp_path: Path, files: Any, before: Callable[[Path], None] | None = None
) -> str:
    """Freeze with item add-002 given `files` (after `before(family directory)`): the error."""
    items = make_items()
    items[2]["files"] = files
    project = make_project(tmp_path, records=items)
    if before is not None:
        before(project.root / "tasks" / "fam")
    result = project.invoke("freeze", "demo", "--version", "1.0.0")
    assert result.exit_code == 2, result.stdout + result.stderr
    assert "Traceback" not in result.stderr
    return " ".join(result.stderr.split())


# ---- keys -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("key", "why"),
    [
        ("../../escaped.txt", "contains '..', which leaves the sandbox"),
        ("notes/../../escaped.txt", "contains '..'"),
        ("/etc/cron.d/x", "is absolute"),
        ("", "is empty"),
        ("notes\\data.txt", "contains a backslash"),
        ("C:/data.txt", "starts with a drive letter"),
        ("~/data.txt", "starts with '~'"),
        ("notes/\x00data.txt", "contains a control character"),
        ("./data.txt", "has an empty or '.' segment"),
        ("notes//data.txt", "has an empty or '.' segment"),
        ("notes/", "has an empty or '.' segment"),
    ],
)
def test_freeze_refuses_unsafe_keys_naming_the_item(tmp_path: Path, key: str, why: str) -> None:
    message = _freeze_message(tmp_path, {key: "text"})
    assert "items.jsonl:3 (item 'add-002'): files key " in message
    assert why in message


@pytest.mark.parametrize(
    ("keys", "why"),
    [
        (["Data.txt", "data.txt"], "name the same file on case-insensitive"),
        (["caf\u00e9.txt", "cafe\u0301.txt"], "name the same file"),
        (["notes", "notes/data.txt"], "key 'notes' is a file but also a directory"),
    ],
)
def test_freeze_refuses_keys_that_collide(tmp_path: Path, keys: list[str], why: str) -> None:
    message = _freeze_message(tmp_path, dict.fromkeys(keys, "text"))
    assert "(item 'add-002'): files" in message and why in message


def _older_evalsuite(monkeypatch: pytest.MonkeyPatch) -> None:
    """Accept any files key, as evalsuite did before issue 10.7 (to build such a suite)."""
    monkeypatch.setattr(files_module, "check_file_keys", lambda keys: [])
    monkeypatch.setattr("evalsuite.manifest._items.check_file_keys", lambda keys: [])


def test_verify_and_audit_refuse_an_unsafe_key_in_a_dev_item(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    (project.root / "tasks" / "fam" / "task.py").write_text(TASK, encoding="utf-8")
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    records = project.read_items()
    records[0]["files"] = {"../../escaped.txt": "x"}
    project.items_path().write_text("".join(json.dumps(r) + "\n" for r in records))
    verified = project.invoke("verify", "demo", "--json")
    assert verified.exit_code == 2, verified.stdout + verified.stderr
    (error,) = json_out(verified)["suites"][0]["errors"]
    assert f"(item '{records[0]['id']}'): files key '../../escaped.txt' contains '..'" in error
    audited = project.invoke("audit", "demo", "--leaks")
    assert audited.exit_code == 2
    assert "files key '../../escaped.txt' contains '..'" in " ".join(audited.stderr.split())


def test_a_vault_with_an_unsafe_key_is_refused_without_quoting_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A suite frozen before the fix: verify, audit and run refuse; retire gets rid of it."""
    escaped = Path(tempfile.gettempdir()) / f"escaped-SECRET-{uuid.uuid4().hex}.txt"
    items = make_items()
    for item in items:
        # inspect's local sandbox is a directory in the temporary directory: one level up
        item["files"] = {f"../{escaped.name}": f"boom {item['id']}"}
    project = make_project(tmp_path, records=items)
    (project.root / "tasks" / "fam" / "task.py").write_text(TASK, encoding="utf-8")
    _older_evalsuite(monkeypatch)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    monkeypatch.undo()
    held = sorted(i for i, s in _splits(project).items() if s == "holdout")

    verified = project.invoke("verify", "demo", "--json")
    assert verified.exit_code == 2, verified.stdout + verified.stderr
    report = json_out(verified)["suites"][0]
    assert any("files key" in e for e in report["errors"])  # the dev items, by the loader
    holdout_error = [e for e in report["errors"] if "in the vault of demo@1.0.0" in e]
    assert holdout_error and f"holdout item '{held[0]}'" in holdout_error[0]
    assert "SECRET" not in holdout_error[0]

    audited = project.invoke("audit", "demo", "--leaks")
    assert audited.exit_code == 2
    run = project.invoke("run", "demo@1.0.0", "--model", "fakearith/x", "--split", "dev")
    assert run.exit_code == 2
    assert not escaped.exists()


# ---- values ---------------------------------------------------------------------------------
def test_a_plain_string_naming_a_host_path_is_refused(tmp_path: Path) -> None:
    host = tmp_path / "host.txt"
    host.write_text("host content")
    message = _freeze_message(tmp_path, {"notes/data.txt": str(host)})
    assert "(item 'add-002'): files['notes/data.txt'] looks like a host path" in message


def test_a_plain_string_naming_a_file_beside_the_items_is_refused(tmp_path: Path) -> None:
    def put(family: Path) -> None:
        (family / "data.txt").write_text("file content")

    message = _freeze_message(tmp_path, {"notes/data.txt": "data.txt"}, put)
    assert "names the file 'data.txt' beside the item source" in message
    assert "{\"path\": 'data.txt'}" in message or "{\"path\": 'data.txt'}" in message


@pytest.mark.parametrize(
    "value", ["https://example.org/data.txt", "data:text/plain;base64,aGk=", "s3://bucket/x"]
)
def test_urls_are_refused(tmp_path: Path, value: str) -> None:
    message = _freeze_message(tmp_path, {"notes/data.txt": value})
    assert "is a URL or data: URI" in message


@pytest.mark.parametrize(
    ("reference", "why"),
    [
        ("../../outside.txt", "leaves"),
        ("/etc/hostname", "is absolute"),
        ("missing.txt", "no such file"),
        ("fixtures", "is a directory"),
    ],
)
def test_bad_references_are_refused(tmp_path: Path, reference: str, why: str) -> None:
    (tmp_path / "outside.txt").write_text("outside")
    message = _freeze_message(
        tmp_path, {"notes/data.txt": {"path": reference}}, lambda f: (f / "fixtures").mkdir()
    )
    assert "(item 'add-002'): files['notes/data.txt'] path" in message and why in message


def test_a_symlink_out_of_the_item_directory_is_refused(tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("host secret")
    message = _freeze_message(
        tmp_path,
        {"notes/data.txt": {"path": "link.txt"}},
        lambda family: (family / "link.txt").symlink_to(tmp_path / "secret.txt"),
    )
    assert "path 'link.txt' leaves" in message


def test_unknown_value_forms_are_refused(tmp_path: Path) -> None:
    message = _freeze_message(tmp_path, {"notes/data.txt": {"url": "x"}})
    assert "files['notes/data.txt'] must be a string" in message
    message = _freeze_message(tmp_path / "b", {"x.bin": {"encoding": "base64", "content": "!!"}})
    assert "files['x.bin'] content is not valid base64" in message


def _sandbox_bytes(sample_files: dict[str, str] | None) -> dict[str, bytes]:
    """What inspect writes into the sandbox for a Sample's files."""
    assert sample_files is not None
    resolved = resolve_sample_files(sample_files)

    async def read() -> dict[str, bytes]:
        return {k: await read_sandboxenv_file(v) for k, v in resolved.items()}

    return asyncio.run(read())


def test_inspect_is_never_given_a_host_path(tmp_path: Path) -> None:
    """Literal text that happens to name a host file reaches the sandbox as that text."""
    host = tmp_path / "host.txt"
    host.write_text("HOST CONTENT")
    setup = tmp_path / "setup.sh"
    setup.write_text("echo HOST SETUP")
    payload = {
        "id": "a",
        "input": "q",
        "target": "t",
        "files": {
            "notes/data.txt": str(host),
            "blob.bin": {"encoding": "base64", "content": base64.b64encode(b"\x00\xff").decode()},
        },
        "setup": str(setup),
    }
    sample = item_to_sample(payload)
    assert _sandbox_bytes(sample.files) == {
        "notes/data.txt": str(host).encode(),
        "blob.bin": b"\x00\xff",
    }
    assert sample.setup is not None
    assert asyncio.run(read_sandboxenv_file(sample.setup)) == str(setup).encode()


def test_a_sample_with_an_unsafe_key_cannot_be_built() -> None:
    from evalsuite.errors import ItemSourceError

    with pytest.raises(ItemSourceError, match=re.escape("key '../x' contains '..'")):
        item_to_sample({"id": "a", "input": "q", "target": "t", "files": {"../x": "y"}})


# ---- content frozen into the item -------------------------------------------------------------
def test_referenced_files_are_frozen_text_and_bytes(tmp_path: Path) -> None:
    items = make_items()
    for item in items:
        item["files"] = {"a.txt": {"path": "fx/a.txt"}, "b.bin": {"path": "fx/b.bin"}}
    project = make_project(tmp_path, records=items)
    root = project.root
    (root / "tasks" / "fam" / "fx").mkdir()
    (root / "tasks" / "fam" / "fx" / "a.txt").write_text("café\n")
    (root / "tasks" / "fam" / "fx" / "b.bin").write_bytes(b"\x89PNG\x00\xff")
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    layout = Layout(root)
    manifest = load_manifest(layout, "demo")
    key = resolve_key("demo", "canary", manifest.canary, KeySpec(key_dir=tmp_path), create=False)
    _, item = load_holdout_items(layout, manifest, key)[0]
    assert item.files == {
        "a.txt": "café\n",
        "b.bin": {"encoding": "base64", "content": base64.b64encode(b"\x89PNG\x00\xff").decode()},
    }
    # the fixtures are still read by dev items, so they stay
    assert (root / "tasks" / "fam" / "fx" / "a.txt").exists()


def test_editing_a_referenced_file_after_freeze_is_drift_and_the_run_refuses(
    tmp_path: Path,
) -> None:
    project = _fixture_project(tmp_path)
    dev = sorted(i for i, s in _splits(project).items() if s == "dev")
    run = project.invoke("run", "demo@1.0.0", "--model", "fakearith/x", "--json", "--no-progress")
    assert run.exit_code == 0, run.stderr
    assert json_out(run)["mean"] == 1.0  # the sandbox saw exactly the frozen content
    fixture = project.root / "tasks" / "fam" / "fixtures" / f"{dev[0]}.txt"
    fixture.write_text("edited after freezing")
    verified = project.invoke("verify", "demo", "--json")
    assert verified.exit_code == 3
    items = json_out(verified)["suites"][0]["items"]
    assert [(p["item_id"], p["kind"]) for p in items] == [(dev[0], "drifted")]
    again = project.invoke("run", "demo@1.0.0", "--model", "fakearith/x", "--no-progress")
    assert again.exit_code == 3 and "does not verify" in again.stderr


def test_a_deleted_referenced_file_is_drift_naming_the_item_and_file(tmp_path: Path) -> None:
    project = _fixture_project(tmp_path)
    dev = sorted(i for i, s in _splits(project).items() if s == "dev")
    (project.root / "tasks" / "fam" / "fixtures" / f"{dev[1]}.txt").unlink()
    verified = project.invoke("verify", "demo", "--json")
    assert verified.exit_code == 3, verified.stdout + verified.stderr
    (problem,) = json_out(verified)["suites"][0]["items"]
    assert (problem["item_id"], problem["kind"]) == (dev[1], "drifted")
    assert f"a file it reads was deleted (tasks/fam/fixtures/{dev[1]}.txt)" in problem["detail"]


def test_holdout_file_contents_live_only_in_the_vault(tmp_path: Path) -> None:
    project = _fixture_project(tmp_path)
    splits = _splits(project)
    fixtures = project.root / "tasks" / "fam" / "fixtures"
    present = {p.stem for p in fixtures.iterdir()}
    assert present == {i for i, s in splits.items() if s == "dev"}
    for item_id, split in splits.items():
        marker = f"fixture-of-{item_id}-c0ffee".encode()
        hits = [
            p
            for p in project.root.rglob("*")
            if p.is_file() and p.suffix != ".vault" and marker in p.read_bytes()
        ]
        assert bool(hits) == (split == "dev"), (item_id, split, hits)
    # the holdout run reads the content from the vault: the sandbox sees it all the same
    run = project.invoke(
        "run", "demo@1.0.0", "--split", "holdout", "--model", "fakearith/x", "--json",
        "--no-progress", "--purpose", "test",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert json_out(run)["mean"] == 1.0
    for item_id, split in splits.items():
        if split == "holdout":
            marker = f"fixture-of-{item_id}-c0ffee".encode()
            leaked = [
                p
                for p in project.root.rglob("*")
                if p.is_file() and p.suffix != ".vault" and marker in p.read_bytes()
            ]
            assert leaked == [], leaked


def test_an_interrupted_freeze_still_removes_holdout_files_when_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _unfrozen_fixture_project(tmp_path)
    root = project.root

    def crash(*args: object) -> int:
        raise OSError("the machine went down here")

    monkeypatch.setattr("evalsuite.manifest._freeze._clean_holdout_files", crash)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 1
    monkeypatch.undo()
    assert len(list((root / "tasks" / "fam" / "fixtures").iterdir())) == 12
    again = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert again.exit_code == 0, again.stderr
    out = json_out(again)
    assert out["status"] == "completed" and out["removed_files"] == 6
    assert len(list((root / "tasks" / "fam" / "fixtures").iterdir())) == 6
    assert project.invoke("verify", "demo").exit_code == 0


@pytest.mark.parametrize("suite", list_suite_names(Layout(REPO)))
def test_shipped_suites_still_verify(suite: str) -> None:
    """The shipped suites use no files: their frozen item hashes must not have moved."""
    layout = Layout(REPO)
    assert not any(e.item.files for e in load_suite_items(layout, load_suite(layout, suite)))
    report = verify(layout, suite, keys=KeySpec(key_dir=REPO / ".no-key-dir"))
    assert report.ok, report.to_dict()
    assert report.dev_checked > 0 and report.holdout_checked > 0
