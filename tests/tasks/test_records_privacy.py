"""records_desk holdout items stay in their vault: planted markers never reach the disk (issue 14).

Every item of a throwaway records project carries a marker of its own in each secret part: the
request text, the records (the initial state the tools serve) and the target. A holdout run
of the improved agent, in a real process with its own HOME and TMPDIR and injected faults (so
that error paths run too), must leave none of the holdout items' markers on disk (outside the
vault) nor in its output. The positive control: the dev items' markers are on disk (the items
file), so the scan would see a leak.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key
from tests.helpers import REPO, Project, finish
from tests.run.test_process import _cli, _leaks, _scan
from tests.tasks.records_helpers import env, generate

PREFIX = "PLANTED-RECORDS-"


def _planted(item: dict[str, Any]) -> dict[str, Any]:
    marker = PREFIX + item["id"]
    item = json.loads(json.dumps(item))
    item["input"] += f"Reference: {marker}\n"
    state = item["metadata"]["initial_state"]
    for account in state["source"]["accounts"].values():
        account["notes"] = marker
    item["metadata"]["state_hash"] = env.state_hash(state)
    target = json.loads(item["target"])
    target["ticket"] = marker
    item["target"] = json.dumps(target, sort_keys=True)
    return item


def _project(tmp_path: Path) -> Project:
    root = tmp_path / "project"
    shutil.copytree(
        REPO / "tasks" / "records_desk",
        root / "tasks" / "records_desk",
        ignore=shutil.ignore_patterns("__pycache__", "items*.jsonl"),
    )
    shutil.copy(REPO / "tasks" / "records.toml", root / "tasks" / "records.toml")
    items = [_planted(i) for i in generate.generate_items(2)]  # the suite file's version 2
    (root / "tasks" / "records_desk" / "items.jsonl").write_text(
        "".join(json.dumps(i, sort_keys=True, ensure_ascii=False) + "\n" for i in items)
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    result = project.invoke("freeze", "records", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    return project


def _markers(project: Project, split: str) -> list[str]:
    layout = Layout(project.root)
    manifest = load_manifest(layout, "records")
    if split == "dev":
        return [PREFIX + i.id for i in manifest.items_by_split("dev")]
    key = resolve_key(
        "records", manifest.key, manifest.canary, KeySpec(key_dir=project.key_dir), create=False
    )
    found = []
    for _, item in load_holdout_items(layout, manifest, key):
        marker = PREFIX + item.id
        assert isinstance(item.input, str) and marker in item.input and marker in str(item.target)
        found.append(marker)
    return found


def test_a_records_holdout_run_leaves_no_marker_on_disk(tmp_path: Path) -> None:
    project = _project(tmp_path)
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env_vars = {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmp),
    }
    proc = _cli(
        project, "run", "records@1.0.0", "--split", "holdout", "--model", "evalsuite/improved",
        "--limit", "12", "--inject-faults", "0.2", "--seed", "3", "--purpose", "privacy test",
        "--no-progress", "--json", env=env_vars,
    )  # fmt: skip
    out, err = finish(proc)
    assert proc.returncode in (0, 5), err
    payload = json.loads(out)
    assert payload["harness"]["planned"] == 12
    assert payload["harness"]["harness_errors"] > 0  # the error paths ran
    holdout = _markers(project, "holdout")
    assert len(holdout) == 100
    assert _leaks(tmp_path, [m.encode() for m in holdout]) == {}, "markers found on disk"
    for marker in holdout:
        assert marker not in out + err
    # positive control: a dev item's marker is on disk, in the items file
    dev = _markers(project, "dev")
    assert _scan(project.root / "tasks", dev[0].encode())
