"""The episode's repository: set up in its own sandbox, checked, and reached only through tools.

Each episode runs in inspect's sandbox (``local`` by default: a fresh private temporary
directory per sample, mode 0700, deleted when the sample ends; ``docker`` where available).
`reset_repo` writes the item's repository (visible files only) into it after checking the
item's hash; the hidden tests stay in the item's target, in memory, until the verifier runs.
The limits of every command are here, explicit: see docs/design/code_repair.md.

No `from __future__ import annotations` here: a StoreModel defined under it breaks under the
inspect CLI (docs/inspect.md, point 11).
"""

import hashlib
import json
import os
import re
import secrets
import sys
from pathlib import Path
from typing import Any

from inspect_ai.solver import Generate, Solver, TaskState, solver
from inspect_ai.util import ExecResult, StoreModel, sandbox, store_as
from pydantic import Field

from evalsuite.run import HarnessFault

STORE_INSTANCE = "code_repair"
RUNNER = (Path(__file__).resolve().parent / "runner.py").read_text(encoding="utf-8")
JAIL = (Path(__file__).resolve().parent / "jail.py").read_text(encoding="utf-8")
JAIL_FAILED = 97
"""The jail's exit status when it could not isolate the process (before the agent's code ran)."""

COMMAND_TIMEOUT_S = 10
"""Wall-clock seconds of one run_tests / list_files command (the agent's code may loop)."""
VERIFY_TIMEOUT_S = 20
"""Wall-clock seconds of the verifier's hidden-test run."""
CPU_S = 8
"""CPU seconds of the test process (RLIMIT_CPU, set by the runner itself)."""
MEMORY_MB = 1024
"""Address space of the test process (RLIMIT_AS)."""
OUTPUT_CHARS = 4000
"""Longest tool output the agent gets (run_tests, list_files); the rest is cut, and said so."""
READ_CHARS = 20_000
"""Longest file read_file returns."""
WRITE_CHARS = 50_000
"""Longest content write_file accepts."""
SANDBOXES = ("local", "docker")

_PATH = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*(/[A-Za-z0-9_][A-Za-z0-9_.-]*)*$")


class RepoStore(StoreModel):
    """The episode's repository record: what was set up and what the agent wrote."""

    item_id: str = ""
    repo_hash: str = ""
    python: str = ""
    files: list[str] = Field(default_factory=list)
    """The repository's files as set up."""
    writes: dict[str, str] = Field(default_factory=dict)
    """path -> sha256 of the last content the agent wrote there (the audit's final state)."""
    test_writes: int = 0
    """Writes the agent made to the visible test files (the verifier restores them)."""
    jailed: bool = False
    """Version 2 under the local sandbox: every test process runs in the jail (`jail.py`)."""


def repo_store() -> RepoStore:
    """This sample's repository record (only valid inside a running sample)."""
    return store_as(RepoStore, instance=STORE_INSTANCE)


def repo_hash(repo: dict[str, str]) -> str:
    """sha256 of the repository's files (path and content); the generator records it."""
    digest = hashlib.sha256()
    for path in sorted(repo):
        digest.update(path.encode() + b"\0" + repo[path].encode() + b"\0")
    return "sha256:" + digest.hexdigest()


def content_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def check_path(path: str) -> str | None:
    """Why `path` is refused (None when it is a plain relative path inside the repository)."""
    if not path or len(path) > 200:
        return "give a relative path of 1 to 200 characters, e.g. 'pkg/module.py'"
    if path.startswith("/") or ".." in path.split("/"):
        return "the path must stay inside the repository (no leading '/', no '..')"
    if not _PATH.match(path):
        return "use letters, digits, '_', '-', '.' and '/' only, no hidden files"
    return None


def python_for(kind: str, jailed: bool = False) -> str:
    """The interpreter the tests run with in a sandbox of this kind.

    In the jail, the base interpreter (not a virtual environment's, which may live inside the
    project): the jail shows the process only that interpreter's prefix.
    """
    if kind != "local":
        return "python3"
    if not jailed:
        return sys.executable
    return os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)


class IsolationError(HarnessFault):
    """The jail could not isolate the agent's code: nothing of the agent's ran."""


def jail_command(python: str, token: str) -> list[str]:
    """The command that runs the runner in the jail; `token` marks the jail's own failures."""
    return [python, "-I", "-S", "-c", JAIL, RUNNER, token]


def jail_failure(done: ExecResult[str], token: str) -> str | None:
    """The jail's own failure message (None when the jail started the runner)."""
    marker = f"evalsuite-jail {token}: "
    if done.returncode != JAIL_FAILED:
        return None
    for line in done.stderr.splitlines():
        if line.startswith(marker):
            return line[len(marker) :]
    return None


def isolation_error(reason: str) -> IsolationError:
    return IsolationError(
        "code_repair could not isolate the agent's code (" + reason + "); version 2 runs the "
        "agent's code only in its jail: Linux user, mount and PID namespaces, as root or as a "
        "user where unprivileged user namespaces are allowed (sysctl "
        "user.max_user_namespaces > 0; on Ubuntu, kernel.apparmor_restrict_unprivileged_userns "
        "= 0). It never falls back to running the code unisolated."
    )


def cap(text: str, limit: int = OUTPUT_CHARS) -> str:
    """`text`, cut to `limit` characters with a note saying how much was cut."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[output cut: {len(text) - limit} more characters]"


async def run_runner(request: dict[str, Any], timeout: int) -> ExecResult[str]:
    """Run the test runner in this episode's sandbox (raises TimeoutError past `timeout`)."""
    store = repo_store()
    python = store.python
    if not python:
        raise HarnessFault("code_repair repository is not set up (reset_repo did not run)")
    request = {"cpu_s": CPU_S, "memory_mb": MEMORY_MB, **request}
    if not store.jailed:
        return await sandbox().exec(
            [python, "-I", "-S", "-c", RUNNER], input=json.dumps(request), timeout=timeout
        )
    token = secrets.token_hex(8)
    done = await sandbox().exec(
        jail_command(python, token), input=json.dumps(request), timeout=timeout
    )
    failure = jail_failure(done, token)
    if failure is not None:
        raise isolation_error(failure)
    return done


@solver
def reset_repo(kind: str = "local", jail: bool = False) -> Solver:
    """Write the item's repository into this episode's sandbox, after checking its hash.

    `jail` (version 2): under the local sandbox every test process runs in `jail.py`.
    """

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        metadata = dict(state.metadata or {})
        repo = metadata.get("repo")
        expected = metadata.get("repo_hash")
        if not isinstance(repo, dict) or not isinstance(expected, str):
            raise HarnessFault("code_repair item has no repo/repo_hash in its metadata")
        actual = repo_hash(repo)
        if actual != expected:
            raise HarnessFault(
                f"the item's repository does not match its recorded hash (expected "
                f"{expected[:19]}…, got {actual[:19]}…): the item or the family was altered"
            )
        box = sandbox()
        for path, content in sorted(repo.items()):
            if check_path(path) is not None:
                raise HarnessFault(f"code_repair item has an unsafe repository path {path!r}")
            await box.write_file(path, content)
        store = repo_store()
        store.item_id = str(metadata.get("item_id", state.sample_id))
        store.repo_hash = expected
        store.jailed = jail and kind == "local"
        store.python = python_for(kind, store.jailed)
        store.files = sorted(repo)
        store.writes = {}
        store.test_writes = 0
        return state

    return solve
