"""After freeze, no holdout item's text appears in any project file outside its vault."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import (
    KeySpec,
    frozen_versions,
    item_texts,
    list_suite_names,
    load_holdout_items,
    load_manifest,
    load_suite,
    resolve_key,
)
from tests.helpers import make_project

REPO = Path(__file__).resolve().parents[2]
SKIP_DIRS = {
    ".git",
    ".venv",
    "__pycache__",
    ".mypy_cache",
    ".ruff_cache",
    ".pytest_cache",
    ".hypothesis",
    "node_modules",
}


def _files(root: Path) -> Iterator[Path]:
    # prune the skipped directories rather than walk them (.venv alone has tens of thousands
    # of files): the same files, in seconds less per scan (docs/design/test-speed.md)
    for folder, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        for name in names:
            path = Path(folder) / name
            if name not in SKIP_DIRS and path.is_file() and path.suffix != ".vault":
                yield path


def _needles(root: Path, suite: str, version: str, key_dir: Path) -> list[bytes]:
    layout = Layout(root)
    manifest = load_manifest(layout, suite, version)
    key = resolve_key(suite, manifest.key, manifest.canary, KeySpec(key_dir=key_dir), create=False)
    needles: list[bytes] = []
    for _, item in load_holdout_items(layout, manifest, key):
        # short texts (a bare number) would match by chance; every input here is distinctive
        needles.extend(t.encode() for t in item_texts(item) if len(t) >= 12)
    assert needles
    return needles


def _leaks(root: Path, needles: list[bytes]) -> list[str]:
    found = []
    for path in _files(root):
        data = path.read_bytes()
        found.extend(f"{path.relative_to(root)}" for n in needles if n in data)
    return found


def test_freeze_leaves_no_holdout_text_in_a_fresh_project(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    assert project.invoke("verify", "demo").exit_code == 0
    needles = _needles(project.root, "demo", "1.0.0", project.key_dir)
    assert _leaks(project.root, needles) == []


@pytest.mark.parametrize("suite", list_suite_names(Layout(REPO)))
def test_shipped_suites_hold_no_holdout_text_outside_their_vaults(suite: str) -> None:
    layout = Layout(REPO)
    if load_suite(layout, suite).key != "canary":
        pytest.skip(f"{suite} uses a random key that is not in the repository")
    for version in frozen_versions(layout, suite):
        needles = _needles(REPO, suite, version, REPO / ".no-key-dir")
        assert _leaks(REPO, needles) == [], f"holdout text of {suite}@{version} found"
