"""code_repair through the real runner: injected faults, and holdout privacy (issue 14).

A fault injected into a code_repair tool is a harness error, never a score; at 2% the run
stays valid with every planned fault counted (slow: the shipped dev split over 3 epochs). A
holdout run leaves none of its hidden tests on disk (planted markers, as in
tests/run/test_process.py).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key
from evalsuite.run import RunSpec, plan_attempts
from evalsuite.store import Store, default_store_url
from tests import zygote
from tests.e2e.conftest import copy_project
from tests.entry_points import PRELUDE
from tests.helpers import Project, json_out
from tests.run.test_process import _leaks
from tests.tasks.repair_helpers import make_repair_project, plant, submodule

MARKER = "PLANTED-MARKER-repair-holdout-81d4"
REPO = Path(__file__).resolve().parents[2]
LAUNCH = (
    "import sys; sys.path.insert(0, {repo!r}); "
    + PRELUDE
    + "from evalsuite.cli import main; sys.argv = ['evalsuite'] + sys.argv[1:]; main()"
)


def _small_project(root: Path, key_dir: Path, *, marker: str | None = None) -> Project:
    items = submodule("generate").generate(per_stratum=2, check=False)
    if marker is not None:
        items = [plant(item, f"{marker}-{item['id']}") for item in items]
    return make_repair_project(root, items, key_dir)


def _attempts(project: Project, run_id: str) -> object:
    return Store(default_store_url(Layout(project.root).state)).attempts(run_id)


def test_an_injected_fault_is_a_harness_error_never_a_score(tmp_path: Path) -> None:
    project = _small_project(tmp_path / "project", tmp_path / "keys")
    result = project.invoke(
        "run",
        "repair@1.0.0",
        "--model",
        "evalsuite/improved",
        "--inject-faults",
        "1.0",
        "--limit",
        "2",
        "--no-progress",
        "--json",
    )
    assert result.exit_code == 5, result.stderr  # every episode faulted: invalid
    out = json_out(result)
    assert out["harness"]["harness_errors"] == out["harness"]["planned"] == 2
    frame = _attempts(project, out["run_id"])
    assert (frame["outcome"] == "harness_error").all()
    assert frame["score"].isna().all()
    assert frame["reason"].str.startswith("HarnessFault: injected fault").all()


@pytest.mark.slow  # about three minutes on two shared cores: 30 items x 3 epochs
def test_two_percent_faults_keep_the_run_valid_and_are_all_counted(tmp_path: Path) -> None:
    project = copy_project(tmp_path / "project")
    args = ["--epochs", "3", "--inject-faults", "0.02", "--seed", "4"]
    manifest = load_manifest(Layout(project.root), "repair")
    spec = RunSpec(
        suite="repair", version="1.0.0", model="improved", epochs=3, fault_rate=0.02, seed=4
    )
    injected = {
        p.key for p in plan_attempts(manifest.items_by_split("dev"), spec) if p.fault != "none"
    }
    result = project.invoke(
        "run", "repair@1.0.0", "--model", "evalsuite/improved", *args, "--no-progress", "--json"
    )
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert injected, "the plan should inject at least one fault in 90 episodes"
    frame = _attempts(project, out["run_id"])
    errors = frame[frame["outcome"] == "harness_error"]
    assert set(zip(errors["item_id"], errors["epoch"], strict=True)) == injected
    assert errors["score"].isna().all()
    assert out["valid"] is True
    assert out["harness"]["harness_errors"] == len(injected)


def _scan(root: Path, needle: bytes) -> list[str]:
    hits = []
    for path in root.rglob("*"):
        if path.is_file() and path.suffix != ".vault":
            try:
                if needle in path.read_bytes():
                    hits.append(str(path))
            except OSError:
                continue
    return hits


def test_a_holdout_run_leaves_no_hidden_test_on_disk(tmp_path: Path) -> None:
    project = _small_project(tmp_path / "project", tmp_path / "keys", marker=MARKER)
    layout = Layout(project.root)
    manifest = load_manifest(layout, "repair")
    key = resolve_key(
        "repair", manifest.key, manifest.canary, KeySpec(key_dir=project.key_dir), create=False
    )
    holdout = list(load_holdout_items(layout, manifest, key))
    markers = [f"{MARKER}-{item.id}" for _, item in holdout]
    assert holdout and all(
        m in str(item.target) for m, (_, item) in zip(markers, holdout, strict=True)
    )
    home, tmp = tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = dict(
        os.environ,
        EVALSUITE_KEY_DIR=str(project.key_dir),
        HOME=str(home),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        TMPDIR=str(tmp),
    )
    proc = zygote.run(  # a process forked by the tests' zygote, with this HOME and TMPDIR
        [
            *(sys.executable, "-c", LAUNCH.format(repo=str(REPO)), "--root", str(project.root)),
            *("run", "repair@1.0.0", "--split", "holdout", "--model", "evalsuite/improved"),
            *("--no-progress", "--json", "--purpose", "privacy test"),
        ],
        env=env,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["harness"]["scored"] == len(holdout)
    assert out["mean"] == 0.0  # the planted hidden test fails on purpose: it did run
    for marker in markers:
        assert marker not in proc.stdout + proc.stderr
    assert _leaks(tmp_path, [m.encode() for m in markers]) == {}, "hidden test text on disk"
    # positive control: the dev items' markers are on disk (in tasks/), where the scan finds them
    assert _scan(project.root / "tasks", MARKER.encode())
    assert list(tmp.iterdir()) == [] or all(p.name.startswith(".") for p in tmp.iterdir())
