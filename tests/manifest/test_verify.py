from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from tests.helpers import Project, json_out, make_project, suite_toml, write_jsonl


@pytest.fixture
def frozen(tmp_path: Path) -> Project:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project


def test_clean_project_verifies(frozen: Project) -> None:
    result = frozen.invoke("verify", "--json")
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert out["ok"] is True
    report = out["suites"][0]
    assert report["dev_checked"] == 6 and report["holdout_checked"] == 6


def test_one_changed_character_names_exactly_that_item(frozen: Project) -> None:
    records = frozen.read_items()
    victim = records[2]
    victim["input"] = victim["input"][:-1] + "!"
    write_jsonl(frozen.items_path(), records)
    result = frozen.invoke("verify", "demo@1.0.0", "--json")
    assert result.exit_code == 3
    report = json_out(result)["suites"][0]
    assert [(p["item_id"], p["kind"]) for p in report["items"]] == [(victim["id"], "drifted")]
    assert report["problems"] == []


def test_missing_item_and_new_candidates(frozen: Project) -> None:
    records = frozen.read_items()
    gone = records.pop(0)
    records.append({"id": "brand-new", "input": "x", "target": "y", "metadata": {"op": "add"}})
    write_jsonl(frozen.items_path(), records)
    result = frozen.invoke("verify", "demo", "--json")
    assert result.exit_code == 3
    report = json_out(result)["suites"][0]
    assert [(p["item_id"], p["kind"]) for p in report["items"]] == [(gone["id"], "missing")]
    assert report["candidates"] == ["brand-new"]
    # text output names both
    text = frozen.invoke("verify", "demo")
    assert gone["id"] in text.stdout and "brand-new" in text.stdout


def test_edited_manifest_is_caught(frozen: Project) -> None:
    path = frozen.root / "manifests/demo/1.0.0.json"
    manifest = json.loads(path.read_text())
    manifest["items"][0]["split"] = (
        "dev" if manifest["items"][0]["split"] == "holdout" else "holdout"
    )
    path.write_text(json.dumps(manifest, indent=2))
    result = frozen.invoke("verify", "demo", "--json")
    assert result.exit_code == 3
    assert "was edited after freezing" in json_out(result)["suites"][0]["problems"][0]


def test_unknown_key_in_manifest_is_rejected(frozen: Project) -> None:
    path = frozen.root / "manifests/demo/1.0.0.json"
    manifest = json.loads(path.read_text())
    manifest["sneaky"] = True
    path.write_text(json.dumps(manifest))
    result = frozen.invoke("verify", "demo")
    assert result.exit_code == 3
    assert "unknown key 'sneaky'" in result.stdout + result.stderr


def test_edited_vault_is_caught(frozen: Project) -> None:
    path = frozen.root / "holdout/demo/1.0.0.vault"
    vault = json.loads(path.read_text())
    blob = bytearray(base64.b64decode(vault["ciphertext"]))
    blob[10] ^= 1
    vault["ciphertext"] = base64.b64encode(bytes(blob)).decode()
    path.write_text(json.dumps(vault))
    result = frozen.invoke("verify", "demo", "--json")
    assert result.exit_code == 3
    assert (
        "vault holdout/demo/1.0.0.vault was modified"
        in json_out(result)["suites"][0]["problems"][0]
    )


def test_wrong_key_gives_a_clear_message(tmp_path: Path) -> None:
    project = make_project(tmp_path, toml=suite_toml(key="random"))
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    other = tmp_path / "other.key"
    other.write_text(base64.b64encode(b"k" * 32).decode())
    result = project.invoke("verify", "demo", "--key-file", str(other))
    assert result.exit_code == 3
    assert "wrong key" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_edited_fingerprints_are_caught(frozen: Project) -> None:
    path = frozen.root / "manifests/demo/1.0.0.fingerprints.jsonl"
    path.write_text(path.read_text().replace('"ngrams": [', '"ngrams": [1, ', 1))
    result = frozen.invoke("verify", "demo")
    assert result.exit_code == 3
    assert "fingerprint file" in result.stdout


def test_holdout_item_back_in_tasks_is_a_leak(frozen: Project, tmp_path: Path) -> None:
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key

    layout = Layout(frozen.root)
    manifest = load_manifest(layout, "demo")
    key = resolve_key("demo", "canary", manifest.canary, KeySpec(key_dir=tmp_path), create=False)
    _family, item = load_holdout_items(layout, manifest, key)[0]
    write_jsonl(frozen.items_path(), [*frozen.read_items(), item.payload()])
    result = frozen.invoke("verify", "demo", "--json")
    assert result.exit_code == 3
    problems = json_out(result)["suites"][0]["items"]
    assert [(p["item_id"], p["kind"]) for p in problems] == [(item.id, "leaked")]
    assert isinstance(item.input, str) and item.input not in result.stdout + result.stderr


def test_skip_holdout_needs_no_key(tmp_path: Path) -> None:
    project = make_project(tmp_path, toml=suite_toml(key="random"))
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    (project.key_dir / "demo.key").unlink()
    out = project.invoke("verify", "demo", "--skip-holdout", "--json")
    assert out.exit_code == 0
    assert json_out(out)["suites"][0]["holdout_skipped"] is True


def test_family_version_bump_without_freeze_is_reported(frozen: Project) -> None:
    toml = frozen.root / "tasks/demo.toml"
    toml.write_text(toml.read_text().replace("version = 1", "version = 2"))
    result = frozen.invoke("verify", "demo")
    assert result.exit_code == 3
    assert "family 'fam' has version 2" in result.stdout


def test_an_item_an_older_version_holds_is_not_a_new_candidate(tmp_path: Path) -> None:
    """A retired dev item kept in tasks/ for the older version's dev split (records@1.0.0's
    beside records@2.0.0's) is in a manifest: verify of the newer version does not call it
    new; an item no version holds still is."""
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    records = project.read_items()
    kept = records[0]
    retired = project.invoke("freeze", "demo", "--version", "1.1.0", "--retire", kept["id"])
    assert retired.exit_code == 0, retired.stderr
    # retiring leaves the record in tasks/: 1.0.0 reads its dev items there
    assert kept in project.read_items()
    new = {"id": "brand-new", "input": "x", "target": "y", "metadata": {"op": "add"}}
    write_jsonl(project.items_path(), [*project.read_items(), new])
    result = project.invoke("verify", "demo@1.1.0", "--json")
    report = json_out(result)["suites"][0]
    assert report["candidates"] == ["brand-new"]
    older = project.invoke("verify", "demo@1.0.0", "--json")
    assert older.exit_code == 0, older.stdout
