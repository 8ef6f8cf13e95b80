"""`evalsuite._core.git.run_git`: the caller's GIT_* variables never reach git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evalsuite._core.git import run_git


def _repository(path: Path) -> Path:
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def test_a_git_dir_set_for_another_repository_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    here = _repository(tmp_path / "here")
    other = _repository(tmp_path / "other")
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    done = run_git(here, "rev-parse", "--absolute-git-dir")
    assert done.returncode == 0
    assert Path(done.stdout.strip()) == (here / ".git").resolve()


def test_a_failing_command_returns_its_exit_code_and_message(tmp_path: Path) -> None:
    done = run_git(tmp_path, "rev-parse", "--is-inside-work-tree")
    assert done.returncode != 0
    assert "not a git repository" in done.stderr


def test_a_hung_git_is_cut_at_the_timeout(tmp_path: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired):
        run_git(tmp_path, "-c", "alias.hang=!sleep 5", "hang", timeout=0.2)
