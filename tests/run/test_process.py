"""Runs in real processes: killed and resumed, two writers on one store, holdout privacy."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterable
from pathlib import Path

import pandas as pd
import pytest

from evalsuite._core.layout import Layout
from evalsuite.store import Store, default_store_url
from tests import zygote
from tests.entry_points import PRELUDE
from tests.helpers import Project, finish
from tests.run.conftest import MARKER, STABLE, make_probe_project
from tests.run.processes import wait_for_attempts

REPO = Path(__file__).resolve().parents[2]
LAUNCH = (
    "import sys; sys.path.insert(0, {repo!r}); " + PRELUDE + "import tests.run.fake_models; "
    "from evalsuite.cli import main; sys.argv = ['evalsuite'] + sys.argv[1:]; main()"
)


def _cli(project: Project, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """`evalsuite --root <project> ARGS...` in a process forked by the tests' zygote
    (tests/zygote.py): a real process with the environment given, no fresh start-up."""
    full_env = dict(os.environ, EVALSUITE_KEY_DIR=str(project.key_dir), **(env or {}))
    return zygote.popen(
        [sys.executable, "-c", LAUNCH.format(repo=str(REPO)), "--root", str(project.root), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=full_env,
    )


def _store(project: Project) -> Store:
    return Store(default_store_url(Layout(project.root).state))


@pytest.mark.slow  # about 40 s: `make slow`, which CI runs after `make test`
def test_a_killed_run_resumes_to_the_same_attempts(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    args = (
        "run",
        "probe@1.0.0",
        "--model",
        "fakeagent/x",
        "-M",
        "accuracy=0.6",
        "-M",
        "delay=0.05",
        "--epochs",
        "4",
        "--seed",
        "5",
        "--max-samples",
        "2",
        "--no-progress",
        "--json",
    )
    victim = _cli(project, *args)
    store = _store(project)
    run_id = wait_for_attempts(store, at_least=15, proc=victim)
    victim.send_signal(signal.SIGKILL)
    finish(victim)
    partial = len(store.attempt_keys(run_id))
    assert 15 <= partial < 80
    resumed = _cli(project, "run", "--resume", run_id, "--json", "--no-progress")
    out, err = finish(resumed)
    assert resumed.returncode == 0, err
    assert json.loads(out)["resumed"] is True
    reference = _cli(project, *args)
    ref_out, ref_err = finish(reference)
    assert reference.returncode == 0, ref_err
    ref_id = json.loads(ref_out)["run_id"]
    a = store.attempts(run_id)[STABLE]
    b = store.attempts(ref_id)[STABLE]
    assert len(a) == 80
    pd.testing.assert_frame_equal(a, b)
    assert store.get_run(run_id).status == "complete"


# about 29 s of CPU (two run processes): `make slow`. In `make test`, run processes writing one
# SQLite store at once: tests/run/test_shards.py::test_shard_processes_at_once_fill_one_run[sqlite]
# (three); store writers in processes: tests/store/test_store.py::
# test_concurrent_writer_processes_lose_nothing (docs/design/test-speed.md)
@pytest.mark.slow
def test_two_runs_writing_one_store_at_once_both_complete(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    common = (
        "run",
        "probe@1.0.0",
        "--model",
        "fakeagent/x",
        "-M",
        "delay=0.01",
        "--epochs",
        "5",
        "--no-progress",
        "--json",
    )
    first = _cli(project, *common, "--seed", "1")
    second = _cli(project, *common, "--seed", "2")
    outs = [finish(p) for p in (first, second)]
    assert first.returncode == 0, outs[0][1]
    assert second.returncode == 0, outs[1][1]
    store = _store(project)
    for out, _ in outs:
        run_id = json.loads(out)["run_id"]
        frame = store.attempts(run_id)
        assert len(frame) == 100
        assert frame[["item_id", "epoch"]].drop_duplicates().shape[0] == 100


def _holdout_texts(project: Project) -> list[str]:
    from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key

    layout = Layout(project.root)
    manifest = load_manifest(layout, "probe")
    key = resolve_key(
        "probe", manifest.key, manifest.canary, KeySpec(key_dir=project.key_dir), create=False
    )
    texts = []
    for _, item in load_holdout_items(layout, manifest, key):
        assert isinstance(item.input, str)
        assert MARKER in item.input
        texts.extend([item.input, str(item.target)])
    return texts


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


def _leaks(root: Path, needles: Iterable[bytes]) -> dict[bytes, list[str]]:
    """The needles found in files under `root` (vaults aside), with the files holding them.

    The same search as `_scan` for each needle, with every file read once rather than once
    per needle (a records holdout run is checked for 100 markers)."""
    contents = {}
    for path in root.rglob("*"):
        if path.is_file() and path.suffix != ".vault":
            try:
                contents[str(path)] = path.read_bytes()
            except OSError:
                continue
    found = {needle: [p for p, data in contents.items() if needle in data] for needle in needles}
    return {needle: paths for needle, paths in found.items() if paths}


def test_holdout_run_leaves_no_plaintext_on_disk(tmp_path: Path) -> None:
    project = make_probe_project(tmp_path)
    home = tmp_path / "home"
    tmp = tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    env = {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "TMPDIR": str(tmp),
    }
    args = (
        "run",
        "probe@1.0.0",
        "--split",
        "holdout",
        "--model",
        "fakeagent/x",
        "--inject-faults",
        "0.3",
        "--epochs",
        "1",  # every holdout item once: a second epoch decrypts nothing new (about 5 s of CPU)
        "--no-progress",
        "--json",
    )
    proc = _cli(project, *args, env=env)
    out, err = finish(proc)
    assert proc.returncode == 5, err  # 30% faults: invalid, but everything stored
    payload = json.loads(out)
    assert payload["harness"]["harness_errors"] > 0
    frame = _store(project).attempts(payload["run_id"])
    assert len(frame) == 20
    assert (frame["outcome"] == "scored").sum() > 0
    needles = _holdout_texts(project)
    assert _leaks(tmp_path, [n.encode() for n in needles]) == {}, "holdout text found on disk"
    for needle in needles:
        assert needle not in out + err


def test_the_scan_finds_text_that_is_on_disk(tmp_path: Path) -> None:
    """Positive control for the privacy test: dev runs keep their inspect logs. The run is made
    in this process: the control is of the scan, which reads the same files however the run was
    started (a run process of its own cost about 9 s of CPU more)."""
    project = make_probe_project(tmp_path)
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--limit", "2", "--no-progress", "--json"
    )
    assert result.exit_code == 0, result.stderr
    dev_input = next(
        json.loads(line)
        for line in (project.root / "tasks/probe/items.jsonl").read_text().splitlines()
    )["input"]
    hits = _scan(project.root / ".evalsuite" / "logs", dev_input.encode())
    assert hits
