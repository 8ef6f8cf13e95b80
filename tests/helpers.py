"""Test helpers: build throwaway evalsuite projects and run the CLI in-process."""

from __future__ import annotations

import inspect
import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest
from click.testing import CliRunner, Result

from evalsuite.cli import cli

REPO = Path(__file__).resolve().parents[1]
CANARY = "evalsuite-canary testsuite 0c6f1b7e-2d4a-4e55-9a1b-5f3e9d2c7a10"

WORDS = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu"
).split()


def make_items(
    n_per_stratum: int = 6, ops: Sequence[str] = ("add", "mul"), seed: int = 7
) -> list[dict[str, Any]]:
    """Distinct items with long-enough inputs to have 13-grams."""
    rng = random.Random(seed)
    items = []
    for op in ops:
        for i in range(n_per_stratum):
            words = " ".join(rng.choice(WORDS) for _ in range(18))
            items.append(
                {
                    "id": f"{op}-{i:03d}",
                    "input": f"Question {op} {i}: {words}?",
                    "target": f"answer-{op}-{i}-{rng.randint(1000, 9999)}",
                    "metadata": {"op": op, "group": f"g{i % 3}"},
                }
            )
    return items


def suite_toml(
    name: str = "demo",
    *,
    key: str = "canary",
    extra: str = "",
    weights: dict[str, float] | None = None,
    items: str = "fam/items.jsonl",
) -> str:
    text = (
        f'name = "{name}"\n'
        'description = "test suite"\n'
        f'canary = "{CANARY}"\n'
        "holdout_fraction = 0.5\n"
        'stratify_by = ["family", "op"]\n'
        f'key = "{key}"\n'
        f"{extra}"
        "\n[[families]]\n"
        'name = "fam"\n'
        "version = 1\n"
        'task = "fam/task.py"\n'
        f'items = "{items}"\n'
    )
    if weights:
        text += "\n[weights]\n" + "".join(f'"{k}" = {v}\n' for k, v in weights.items())
    return text


def write_jsonl(path: Path, records: Sequence[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


SKIP_AUDIT = ("--skip-audit", "--reason", "test project: its toy family declares no kit")
"""What `Project.invoke` adds to a `freeze`: the toy families of most tests declare no family
kit, so their grader audit cannot run (tests of the audit freeze with ``audit=True``)."""


@dataclass
class Project:
    root: Path
    key_dir: Path
    audit: bool = False
    """Run the grader audit on `freeze` (else it is skipped, with `SKIP_AUDIT`'s reason)."""
    store_url: str | None = None
    """``EVALSUITE_STORE`` for every command (None: the project's SQLite store)."""

    def invoke(self, *args: str) -> Result:
        if args and args[0] == "freeze" and not self.audit and "--skip-audit" not in args:
            args = (*args, *SKIP_AUDIT)
        runner = CliRunner()
        env = {"EVALSUITE_KEY_DIR": str(self.key_dir)}
        if self.store_url is not None:
            env["EVALSUITE_STORE"] = self.store_url
        return runner.invoke(
            cli,
            ["--root", str(self.root), *args],
            env=env,
            catch_exceptions=False,
        )

    def store(self) -> Any:
        """The project's results store (`evalsuite.store.Store`)."""
        from evalsuite._core.layout import Layout
        from evalsuite.store import Store, default_store_url

        return Store(self.store_url or default_store_url(Layout(self.root).state))

    def items_path(self) -> Path:
        return self.root / "tasks" / "fam" / "items.jsonl"

    def read_items(self) -> list[dict[str, Any]]:
        return [
            json.loads(line)
            for line in self.items_path().read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]


MINIMAL_TASK = """
from inspect_ai import Task, task


@task
def fam(dataset=None):
    return Task(dataset=list(dataset or []), message_limit=10)
"""
"""A task file for `fam/task.py`: `freeze` checks that the task reference exists (with a
limit: `run` refuses a task no limit bounds, docs/design/run-limits.md)."""


def make_project(
    tmp_path: Path,
    *,
    name: str = "demo",
    records: Sequence[dict[str, Any]] | None = None,
    toml: str | None = None,
) -> Project:
    root = tmp_path / "project"
    (root / "tasks" / "fam").mkdir(parents=True)
    (root / "tasks" / f"{name}.toml").write_text(toml or suite_toml(name), encoding="utf-8")
    (root / "tasks" / "fam" / "task.py").write_text(MINIMAL_TASK, encoding="utf-8")
    write_jsonl(
        root / "tasks" / "fam" / "items.jsonl",
        list(records) if records is not None else make_items(),
    )
    return Project(root=root, key_dir=tmp_path / "keys")


SLOW_ON_POSTGRESQL = pytest.mark.parametrize(
    "store_url",
    ["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])],
    indirect=True,
)
"""For a test of the `store_url` fixture (tests/conftest.py) whose PostgreSQL variant is long
(several processes, each importing the store): that variant runs in `make slow`, the SQLite
one in `make test` (docs/design/test-speed.md lists which fast test keeps each property)."""


def json_out(result: Result) -> Any:
    return json.loads(result.stdout)


_WAIT_THEN_RUN = (
    "import sys, time, pathlib\n"
    "from evalsuite.cli import cli\n"
    "ready, go = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])\n"
    "ready.touch()\n"
    "while not go.exists():\n"
    "    time.sleep(0.005)\n"
    "cli(sys.argv[3:])\n"
)


@dataclass(frozen=True)
class Finished:
    code: int
    stdout: str
    stderr: str


def start_together(
    project: Project, scratch: Path, commands: Sequence[Sequence[str]]
) -> list[Finished]:
    """Run CLI commands in separate processes that start their work at the same moment.

    Each process imports evalsuite, says it is ready, and waits for one "go" file, so the
    commands themselves (not the interpreter start-ups) overlap.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    go = scratch / "go"
    procs = []
    for n, command in enumerate(commands):
        ready = scratch / f"ready-{n}"
        argv = [sys.executable, "-c", _WAIT_THEN_RUN, str(ready), str(go)]
        procs.append(
            subprocess.Popen(
                [*argv, "--root", str(project.root), *command],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env={**os.environ, "EVALSUITE_KEY_DIR": str(project.key_dir)},
            )
        )
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and not all(
        (scratch / f"ready-{n}").exists() or p.poll() is not None for n, p in enumerate(procs)
    ):
        time.sleep(0.01)
    go.touch()
    finished = []
    for proc in procs:
        out, err = finish(proc)
        finished.append(Finished(proc.returncode, out, err))
    return finished


# waiting on subprocesses ----------------------------------------------------------------

WAIT_S = float(os.environ.get("EVALSUITE_TEST_WAIT_S", "900"))
"""How long a test waits for a subprocess (or a condition one should bring about) overall.

Generous, because a shared 2-core machine under a load of 20 slows a CLI process tenfold:
a fixed 120 s failed healthy runs there. Real hangs still fail, after this long, with the
process killed and its stderr shown; a process that dies early fails at once
(docs/design/test-speed.md, "Waits")."""

T = TypeVar("T")


def _tail(proc: subprocess.Popen[str]) -> str:
    """Whatever the (now ended) process wrote to stderr, last 2,000 characters."""
    try:
        _out, err = proc.communicate(timeout=30)
    except (subprocess.TimeoutExpired, ValueError):
        return "(stderr unavailable)"
    return (err or "")[-2000:]


def finish(proc: subprocess.Popen[str], timeout_s: float | None = None) -> tuple[str, str]:
    """``proc.communicate()`` with an overall timeout; a hang kills the process and fails.

    Returns (stdout, stderr). The timeout is `WAIT_S` unless given.
    """
    limit = WAIT_S if timeout_s is None else timeout_s
    try:
        out, err = proc.communicate(timeout=limit)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise AssertionError(
            f"process {proc.args!r:.200} still running after {limit:.0f} s (a hang?); "
            f"killed it. stderr:\n{_tail(proc)}"
        ) from None
    return out, err


def wait_until(
    condition: Callable[[], T | None],
    what: str,
    *,
    proc: subprocess.Popen[str] | None = None,
    timeout_s: float | None = None,
    interval_s: float = 0.05,
) -> T:
    """Poll `condition` until it returns something other than None/False; return that.

    With `proc`, a process that ends before the condition holds fails at once, with its exit
    code and stderr (nothing left to wait for); after `timeout_s` (default `WAIT_S`) the
    wait fails, killing `proc`.
    """
    limit = WAIT_S if timeout_s is None else timeout_s
    deadline = time.monotonic() + limit
    while True:
        value = condition()
        if value is not None and value is not False:
            return value
        if proc is not None and proc.poll() is not None:
            value = condition()  # it may have got there just before it ended
            if value is not None and value is not False:
                return value
            raise AssertionError(
                f"process ended with exit code {proc.returncode} before {what}. "
                f"stderr:\n{_tail(proc)}"
            )
        if time.monotonic() >= deadline:
            if proc is not None:
                proc.kill()
            tail = f" stderr:\n{_tail(proc)}" if proc is not None else ""
            raise AssertionError(f"waited {limit:.0f} s and still not {what}.{tail}")
        time.sleep(interval_s)


def count_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[tuple[Any, ...]]:
    """Wrap ``owner.name`` (a function or method, sync or async) so that each call appends its
    positional arguments to the returned list, then runs the original; undone by `monkeypatch`.

    For the tests that count how often the run path does something (builds a model, rewrites
    a log, scans the installed packages).
    """
    calls: list[tuple[Any, ...]] = []
    original = getattr(owner, name)
    if inspect.iscoroutinefunction(original):

        async def counted_async(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return await original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted_async)
    else:

        def counted(*args: Any, **kwargs: Any) -> Any:
            calls.append(args)
            return original(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    return calls
