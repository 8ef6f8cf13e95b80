"""docs/own-suite.md is tested (issue 11.7): every ```sh block of the tutorial, in order, is run
as one bash script in an empty directory, offline, with the virtual environment's `bin/` first
on PATH (what `source .venv/bin/activate` does), and what it promises is checked."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO

DOC = REPO / "docs" / "own-suite.md"
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def shell_blocks(text: str) -> list[str]:
    """The ```sh blocks of a Markdown text, in order (```text/```toml blocks are not run)."""
    return [m.group(1) for m in _BLOCK.finditer(text)]


def test_shell_blocks_are_found() -> None:
    blocks = shell_blocks("a\n```sh\necho 1\n```\n```text\nnot run\n```\n```sh\necho 2\n```\n")
    assert blocks == ["echo 1\n", "echo 2\n"]


@pytest.mark.slow  # about 70 s: `make slow`, which CI runs after `make test`
def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    blocks = shell_blocks(DOC.read_text(encoding="utf-8"))
    script = "set -euo pipefail\n" + "".join(blocks)
    assert "evalsuite freeze" in script and "evalsuite compare" in script
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "EVALSUITE_KEY_DIR": str(tmp_path / "keys"),
        # nothing may be downloaded: a download attempt fails instead of hanging
        "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_OFFLINE": "1",
        "NO_PROXY": "*",
        "LANG": "C.UTF-8",
    }
    work = tmp_path / "work"
    work.mkdir()
    done = subprocess.run(
        ["bash", "-c", script],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    project = work / "myevals"
    # what the tutorial says happens
    for suite in ("faq", "triage"):
        manifest = json.loads((project / "manifests" / suite / "1.0.0.json").read_text())
        assert (project / "manifests" / suite / "1.0.0.items.jsonl").is_file()
        assert len(manifest["items"]) == 12
        assert {i["split"] for i in manifest["items"]} == {"dev", "holdout"}
    assert (project / "reports" / "triage" / "index.html").is_file()
    assert list((project / "logs" / "triage").glob("*.json")), "--log-dir was not used"
    # the random vault key went to the key directory, not into the project
    assert list((tmp_path / "keys").iterdir())
    assert "helpdesk-v1" in done.stdout and "mockllm/model" in done.stdout
