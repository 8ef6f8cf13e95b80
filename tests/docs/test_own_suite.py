"""docs/own-suite.md is tested (issue 11.7): every ```sh block of the tutorial, in order, is run
as one bash script in an empty directory, offline, with the virtual environment's `bin/` first
on PATH (what `source .venv/bin/activate` does), and what it promises is checked.

It runs in `make test` (issue 28, point 22). What made it slow was start-up: each of its
`evalsuite` and `inspect` command lines imported inspect and evalsuite afresh (about 2 s of
CPU each, 16 of them). Here those two commands are small launchers, first on PATH, that ask
the test session's warm fork server (`tests/zygote.py`, which has made those imports once) to
run the same entry point (`evalsuite.cli:main`, `inspect_ai._cli.main:main`) with the same
arguments, environment, working directory and standard streams, and exit with its code. The
commands, their order, their output and every check are unchanged; the console scripts' own
start-up is tested elsewhere (tests/test_startup.py)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.helpers import REPO

DOC = REPO / "docs" / "own-suite.md"
_BLOCK = re.compile(r"^```sh\n(.*?)^```", re.S | re.M)


def shell_blocks(text: str) -> list[str]:
    """The ```sh blocks of a Markdown text, in order (```text/```toml blocks are not run)."""
    return [m.group(1) for m in _BLOCK.finditer(text)]


def test_shell_blocks_are_found() -> None:
    blocks = shell_blocks("a\n```sh\necho 1\n```\n```text\nnot run\n```\n```sh\necho 2\n```\n")
    assert blocks == ["echo 1\n", "echo 2\n"]


ENTRY_POINTS = {
    "evalsuite": "from evalsuite.cli import main",
    "inspect": "from inspect_ai._cli.main import main",
}
"""The console scripts the tutorial calls (evalsuite's and inspect-ai's `[project.scripts]`)."""

LAUNCHER = """#!{python}
import atexit, os, sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from tests import zygote
server = zygote.Zygote.attach(Path({server!r}))
if server is None:
    sys.exit("the test's zygote is gone")
zygote._ZYGOTE.append(server)
# if the shared zygote stops meanwhile, `popen` starts a private one: stopped at exit
atexit.register(zygote.shutdown)
zygote._charge = lambda cpu: None  # counted by the test, from the file below
code = "import sys; sys.argv[0] = {name!r}; " + {entry!r} + "; sys.exit(main())"
proc = zygote.popen([sys.executable, "-c", code, *sys.argv[1:]])
status = proc.wait()
with open({cpu_file!r}, "a") as out:
    out.write(f"{{proc.child_cpu or 0.0}}\\n")
sys.exit(status if status >= 0 else 128 - status)
"""
"""A console script that runs its entry point in a child of the warm fork server."""


def warm_launchers(directory: Path, cpu_file: Path) -> Path:
    """A directory of `evalsuite` and `inspect` launchers served by the session's zygote."""
    from tests import zygote

    server = zygote.zygote()
    directory.mkdir()
    for name, entry in ENTRY_POINTS.items():
        path = directory / name
        path.write_text(
            LAUNCHER.format(
                python=sys.executable,
                repo=str(REPO),
                server=server.dir,
                name=name,
                entry=entry,
                cpu_file=str(cpu_file),
            ),
            encoding="utf-8",
        )
        path.chmod(0o755)
    return directory


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    from tests import timing

    blocks = shell_blocks(DOC.read_text(encoding="utf-8"))
    script = "set -euo pipefail\n" + "".join(blocks)
    assert "evalsuite freeze" in script and "evalsuite compare" in script
    assert "inspect eval" in script and "--format inspect" in script
    bin_dir = Path(sys.executable).parent
    cpu_file = tmp_path / "child-cpu"
    launchers = warm_launchers(tmp_path / "launchers", cpu_file)
    env = {
        "PATH": os.pathsep.join([str(launchers), str(bin_dir), os.environ.get("PATH", "")]),
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
    if cpu_file.exists():
        timing.add_child_cpu(sum(map(float, cpu_file.read_text().split())))
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # each of the tutorial's 15 evalsuite command lines and its inspect eval went through a
    # launcher (a command that bypassed them would be a fresh, slow interpreter)
    assert len(cpu_file.read_text().split()) == 16
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
    # the plain inspect log, made offline by replaying the run's recorded outputs, attached
    assert list((project / "logs" / "plain").glob("*.json")), "inspect eval wrote no log"
    assert "evalsuite/replay" in done.stdout
