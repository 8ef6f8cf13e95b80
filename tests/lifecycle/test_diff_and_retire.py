"""`evalsuite diff SUITE@A SUITE@B` and `freeze --retire-flagged ITEMS.json --flag ...`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.manifest import item_hash, load_manifest, load_suite, load_suite_items
from tests.helpers import REPO, Project, json_out, make_items, make_project, write_jsonl

MARKER = "PLANTED-HOLDOUT-MARKER-7f3a"


def _project(tmp_path: Path) -> tuple[Project, list[dict[str, Any]]]:
    records = make_items()
    for record in records:
        record["input"] += f" {MARKER}"
        record["target"] += f"-{MARKER}"
    project = make_project(tmp_path, records=records)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project, records


def _manifest(project: Project, version: str) -> dict[str, Any]:
    path = project.root / "manifests" / "demo" / f"{version}.json"
    return dict(json.loads(path.read_text(encoding="utf-8")))


def _items_json(project: Project, version: str, flags: dict[str, list[str]], path: Path) -> Path:
    manifest = _manifest(project, version)
    rows = [
        {
            "item_id": item["id"],
            "stratum": item["stratum"],
            "flags": flags.get(item["id"], []),
            "flag_reasons": {
                f: f"reason for {f} of {item['id']}" for f in flags.get(item["id"], [])
            },
        }
        for item in manifest["items"]
    ]
    payload = {
        "suite": "demo",
        "version": version,
        "models": ["a", "b"],
        "items": rows,
        "strata": [],
    }
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


def test_diff_names_added_retired_changed_moved_and_weights(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    manifest = _manifest(project, "1.0.0")
    holdout_id = next(i["id"] for i in manifest["items"] if i["split"] == "holdout")
    dev = [i["id"] for i in manifest["items"] if i["split"] == "dev" and i["stratum"] == "fam/add"]
    # 1.1.0: one dev item changed, one moved to another stratum, two new, one holdout retired
    current = project.read_items()
    for record in current:
        if record["id"] == dev[0]:
            record["target"] = "changed-target"
        if record["id"] == dev[1]:
            record["metadata"]["op"] = "mul"
    extra = make_items(n_per_stratum=2, ops=("sub",), seed=11)
    write_jsonl(project.items_path(), current + extra)
    done = project.invoke("freeze", "demo", "--version", "2.0.0", "--retire", holdout_id, "--json")
    assert done.exit_code == 0, done.output
    result = project.invoke("diff", "demo@1.0.0", "demo@2.0.0", "--json")
    assert result.exit_code == 0, result.output
    payload = json_out(result)
    assert [a["item_id"] for a in payload["added"]] == sorted(r["id"] for r in extra)
    assert [r["item_id"] for r in payload["retired"]] == [holdout_id]
    changed = {c["item_id"] for c in payload["changed"]}
    assert dev[0] in changed and dev[1] in changed
    assert {c["cause"] for c in payload["changed"]} == {"content"}  # same family version
    assert payload["moved"] == [{"item_id": dev[1], "from": "fam/add", "to": "fam/mul"}]
    assert "fam/sub" in payload["weights"] and payload["weights"]["fam/sub"]["a"] is None
    assert payload["audit"]["a"]["status"] == "skipped"
    assert payload["n_common"] == len(manifest["items"]) - 1 - len(changed)
    text = project.invoke("diff", "demo@1.0.0", "demo@2.0.0")
    assert text.exit_code == 0
    assert "added (2)" in text.output and "retired (1)" in text.output
    # holdout plaintext never shows: only ids
    assert MARKER not in result.output + text.output


def test_diff_of_a_version_with_itself_is_identical(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    payload = json_out(project.invoke("diff", "demo@1.0.0", "demo@1.0.0", "--json"))
    assert payload["identical"] is True
    assert payload["n_common"] == payload["n_items"]["a"]


def test_diff_refuses_unknown_versions_and_two_suites(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    missing = project.invoke("diff", "demo@1.0.0", "demo@9.0.0")
    assert missing.exit_code == 2 and "not frozen" in missing.output
    other = project.invoke("diff", "demo@1.0.0", "other@1.0.0")
    assert other.exit_code == 2 and "one suite" in other.output
    bare = project.invoke("diff", "demo", "demo@1.0.0")
    assert bare.exit_code == 2 and "SUITE@X.Y.Z" in bare.output


def test_diff_of_a_tampered_manifest_exits_3(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    path = project.root / "manifests" / "demo" / "1.0.0.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["weights"] = {k: 0.25 for k in data["weights"]}
    path.write_text(json.dumps(data), encoding="utf-8")
    assert project.invoke("diff", "demo@1.0.0", "demo@1.0.0").exit_code == 3


def test_retire_flagged_retires_with_reasons_in_manifest_and_changelog(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    manifest = _manifest(project, "1.0.0")
    dev_id = next(i["id"] for i in manifest["items"] if i["split"] == "dev")
    hold_id = next(i["id"] for i in manifest["items"] if i["split"] == "holdout")
    other_id = next(i["id"] for i in manifest["items"] if i["id"] not in (dev_id, hold_id))
    flags = {dev_id: ["dead"], hold_id: ["leaky", "flaky"], other_id: ["flaky"]}
    items = _items_json(project, "1.0.0", flags, tmp_path / "items.json")
    done = project.invoke(
        "freeze",
        "demo",
        "--version",
        "1.1.0",
        "--retire-flagged",
        str(items),
        "--flag",
        "dead,leaky",
        "--json",
    )
    assert done.exit_code == 0, done.output
    payload = json_out(done)
    assert payload["retired_flagged"] == sorted([dev_id, hold_id])
    assert payload["bump"] == "minor"
    new = _manifest(project, "1.1.0")
    ids = {i["id"] for i in new["items"]}
    assert dev_id not in ids and hold_id not in ids and other_id in ids
    assert f"reason for dead of {dev_id}" in new["note"]
    assert f"reason for leaky of {hold_id}" in new["note"]
    assert other_id not in new["note"]
    changelog = (project.root / "manifests" / "demo" / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"reason for dead of {dev_id}" in changelog
    diff = json_out(project.invoke("diff", "demo@1.0.0", "demo@1.1.0", "--json"))
    assert sorted(r["item_id"] for r in diff["retired"]) == sorted([dev_id, hold_id])
    assert "Retired 2 item(s)" in diff["notes"]["b"]
    assert MARKER not in done.output + changelog + json.dumps(new)


def test_retire_flagged_refuses_bad_inputs_and_writes_nothing(tmp_path: Path) -> None:
    project, _ = _project(tmp_path)
    manifest = _manifest(project, "1.0.0")
    first = manifest["items"][0]["id"]
    good = _items_json(project, "1.0.0", {first: ["dead"]}, tmp_path / "items.json")
    stale = _items_json(project, "1.0.0", {first: ["dead"]}, tmp_path / "stale.json")
    stale.write_text(stale.read_text().replace('"1.0.0"', '"0.9.0"'), encoding="utf-8")
    broken = tmp_path / "broken.json"
    broken.write_text("{not json", encoding="utf-8")
    cases = [
        (("--retire-flagged", str(good)), "go together"),
        (("--flag", "dead"), "go together"),
        (("--retire-flagged", str(good), "--flag", "zombie"), "unknown: zombie"),
        (("--retire-flagged", str(stale), "--flag", "dead"), "demo@0.9.0"),
        (("--retire-flagged", str(broken), "--flag", "dead"), "not the JSON"),
        (("--retire-flagged", str(tmp_path / "none.json"), "--flag", "dead"), "no such file"),
        (("--retire-flagged", str(good), "--flag", "flaky"), "nothing to retire"),
    ]
    for args, expected in cases:
        done = project.invoke("freeze", "demo", "--version", "1.1.0", *args)
        assert done.exit_code == 2, (args, done.output)
        assert expected in done.output, (args, done.output)
        assert not (project.root / "manifests" / "demo" / "1.1.0.json").exists()


def test_diff_says_the_hashes_changed_with_the_family_version_not_the_items(
    tmp_path: Path,
) -> None:
    """Issue 28 point 23: support@2.0.0's note says "items unchanged" (true: every item of it
    hashes, with family version 1, to its 1.0.0 hash), while diff called all 204 "changed"."""
    shipped = Project(root=REPO, key_dir=tmp_path / "keys")  # diff reads the manifests only
    payload = json_out(shipped.invoke("diff", "support@1.0.0", "support@2.0.0", "--json"))
    assert payload["n_common"] == 0  # still true: not comparable across a family version
    assert len(payload["changed"]) == 204
    assert {c["cause"] for c in payload["changed"]} == {"family_version"}
    assert payload["families"] == {"support_desk": {"a": 1, "b": 2}}
    assert "items unchanged" in payload["notes"]["b"]
    text = shipped.invoke("diff", "support@1.0.0", "support@2.0.0").output
    assert "all 204 changed because their family's version changed (support_desk 1 -> 2)" in text
    assert "changed their own content" not in text
    # the note is right: the items hash with family version 1 to what 1.0.0 froze
    layout = Layout(REPO)
    frozen = {i.id: i.hash for i in load_manifest(layout, "support", "1.0.0").items}
    dev = [  # version 1's dev items (the file also holds a later version's, once frozen)
        e for e in load_suite_items(layout, load_suite(layout, "support")) if e.item.id in frozen
    ]
    assert len(dev) == 108
    assert all(item_hash(e.item, e.family, 1) == frozen[e.item.id] for e in dev)
