"""Freezing a frozen version again: a no-op in a fresh clone, and a refusal that names the field.

Fingerprints are part of what the manifest hashes, so they must come out byte for byte the
same in any process (any hash seed), and a version keeps the fingerprint format it was frozen
with (the shipped `arith@1.0.0` has format /1, later versions format /2). The suite files
describe the latest shipped version of each suite, so those are the ones frozen again; freezing
them again neither reruns nor rewrites their grader audit, and the items earlier versions
retired that `tasks/` still holds (older versions' dev items) stay retired without `--retire`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evalsuite.manifest._freeze as freeze_module
from evalsuite._core.layout import Layout
from evalsuite.manifest import frozen_versions, load_manifest, load_suite
from evalsuite.manifest._fingerprints import FingerprintRecord
from tests.helpers import REPO, WAIT_S, Project, make_project


def _run(code_root: Path, project: Path, cwd: Path, seed: str, *args: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(code_root)}
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from evalsuite.cli import main; main()",
            "--root",
            str(project),
            *args,
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT_S,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return dict(json.loads(done.stdout))


def _latest_shipped() -> list[tuple[str, str]]:
    """(suite, latest frozen version) of every suite shipped in `tasks/`."""
    layout = Layout(REPO)
    suites = sorted(p.stem for p in (REPO / "tasks").glob("*.toml"))
    assert suites, "no shipped suite found"
    return [(suite, frozen_versions(layout, suite)[-1]) for suite in suites]


def test_the_shipped_suite_files_describe_their_latest_version() -> None:
    """Each suite file's families are the latest version's: what the slow test freezes again."""
    layout = Layout(REPO)
    for suite, version in _latest_shipped():
        frozen = load_manifest(layout, suite, version).families
        config = load_suite(layout, suite).families
        assert [(f.name, f.version) for f in frozen] == [(f.name, f.version) for f in config]


@pytest.mark.slow  # about 60 s: `make slow`, which CI runs after `make test`
def test_shipped_suites_freeze_again_as_a_no_op_in_a_fresh_clone(tmp_path: Path) -> None:
    git = shutil.which("git")
    assert git and (REPO / ".git").exists(), "this test needs the project's git checkout"
    clone = tmp_path / "clone"
    subprocess.run([git, "clone", "-q", str(REPO), str(clone)], check=True, timeout=WAIT_S)
    # this code on the clone's data in two hash seeds, then the clone's own code
    for code_root, cwd, seed in (
        (REPO, tmp_path, "0"),
        (REPO, tmp_path, "4242"),
        (clone, clone, "7"),
    ):
        for suite, version in _latest_shipped():
            out = _run(code_root, clone, cwd, seed, "freeze", suite, "--version", version, "--json")
            assert out["status"] == "unchanged", (suite, seed, out)
    status = subprocess.run(
        [git, "-C", str(clone), "status", "--porcelain"], capture_output=True, text=True, check=True
    )
    assert status.stdout == ""  # nothing was written


def _frozen_project(tmp_path: Path) -> Project:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    return project


def test_refusal_names_the_fingerprint_file_and_both_hashes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _frozen_project(tmp_path)
    fp_path = project.root / "manifests/demo/1.0.0.fingerprints.jsonl"
    frozen_sha = json.loads((project.root / "manifests/demo/1.0.0.json").read_text())[
        "fingerprints"
    ]["sha256"]
    real = freeze_module.fingerprint_item

    def drifted(*args: object, **kwargs: object) -> FingerprintRecord:
        record = real(*args, **kwargs)  # type: ignore[arg-type]
        if record.id == "add-000":  # as if the fingerprint code had changed
            return dataclasses.replace(record, ngrams=[*record.ngrams, 1])
        return record

    monkeypatch.setattr(freeze_module, "fingerprint_item", drifted)
    result = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert result.exit_code == 3
    message = json.loads(result.stdout)["message"]
    assert "manifests/demo/1.0.0.fingerprints.jsonl" in message
    assert f"frozen as {frozen_sha}" in message and "regenerated as sha256:" in message
    assert "1 item record(s) differ, first 'add-000' in field(s) ['ngrams']" in message
    assert "settings" not in message and "item(s) added" not in message
    assert fp_path.read_text(encoding="utf-8").count("\n") == 13  # untouched


def test_refusal_names_a_changed_setting_with_old_and_new_values(tmp_path: Path) -> None:
    project = _frozen_project(tmp_path)
    toml = project.root / "tasks/demo.toml"
    toml.write_text(
        toml.read_text().replace(
            "holdout_fraction = 0.5\n", "holdout_fraction = 0.5\nholdout_budget = 5\n"
        )
    )
    result = project.invoke("freeze", "demo", "--version", "1.0.0", "--json")
    assert result.exit_code == 3
    message = json.loads(result.stdout)["message"]
    assert "holdout_budget frozen as 3, now 5" in message
    assert "fingerprint" not in message
