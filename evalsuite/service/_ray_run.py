"""`run --executor ray`: one run as N shards, each a Ray task, into one shared store.

A Ray run is exactly a sharded run (docs/design/sharded-runs.md) whose shards Ray launches,
watches and retries: shard I of N runs ``evalsuite --root ROOT run ... --run-id ID --shard
I/N --json`` in a process of its own, started by a Ray task on some node of the cluster.
Everything a sharded run guarantees therefore holds: the same plan and run id, disjoint
shares, the run judged over all its attempts by the shard that completes it, one holdout
look. What Ray adds (docs/scale.md, "Runs on a Ray cluster"):

- **retry of a lost shard**: a task whose worker dies (a node lost, a process killed) is run
  again by Ray, and so is one whose shard process was killed by a signal; the retry runs the
  same command, which resumes the shard: only the attempts of its share that are not stored
  are run, never one twice (attempts are keyed by run, item and epoch);
- **progress**: while the shards run, the store is read every few seconds and each shard's
  attempts done of its share, and its harness errors, are printed.

The shards write from many machines into one store, so the store must be PostgreSQL; a
SQLite file is refused before anything runs.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.errors import (
    EvalsuiteError,
    HoldoutAccessError,
    IntegrityError,
    InvalidRunError,
    RunInterrupted,
    RunStoppedError,
    UsageError,
)
from evalsuite.service._shard_progress import (
    ShardProgress,
    plan_item_ids,
    shard_progress,
    shards_line,
)

if TYPE_CHECKING:
    from evalsuite._core.cluster import ClusterOptions
    from evalsuite._core.layout import Layout
    from evalsuite.store import RunRecord, Store

__all__ = [
    "RayRunOutcome",
    "RayRunRequest",
    "ShardExit",
    "ShardLost",
    "execute_ray_run",
    "run_shard_process",
]

SHARD_RETRIES = 3
"""How many times a lost shard is run again (a worker that died, a process killed)."""

_FORWARDED_ENV_PREFIXES = ("EVALSUITE_",)
"""Environment variables of this process that every shard process gets (the store, the key
directory, the stop timeout...); Ray's own workers inherit nothing from a remote driver."""


class ShardLost(Exception):
    """A shard's process ended by a signal (killed): Ray runs the task again."""


@dataclass(frozen=True, slots=True)
class ShardExit:
    """How one shard's process ended."""

    shard: int
    code: int
    stdout: str
    stderr_tail: str
    host: str

    def payload(self) -> dict[str, Any] | None:
        """The shard's ``--json`` output (None if it printed none)."""
        try:
            found = json.loads(self.stdout)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None


_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Linux: the shard process is killed when the Ray worker that started it dies.

    So a retried shard never runs beside an orphan of its first try.
    """
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def run_shard_process(
    shard: int, argv: Sequence[str], env: Mapping[str, str], cwd: str
) -> ShardExit:
    """Run one shard's command in a process of its own (the body of the Ray task).

    Raises:
        ShardLost: the process was killed by a signal (Ray retries the task).
    """
    import socket

    command = [
        sys.executable,
        "-c",
        "import sys; from evalsuite.cli import main; sys.argv[0] = 'evalsuite'; main()",
        *argv,
    ]
    done = subprocess.run(
        command,
        env={**os.environ, **env},
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=_die_with_parent if sys.platform == "linux" else None,
    )
    if done.returncode < 0:
        raise ShardLost(
            f"shard {shard}'s process was killed by signal {-done.returncode} on "
            f"{socket.gethostname()}: {done.stderr[-300:].strip()}"
        )
    return ShardExit(shard, done.returncode, done.stdout, done.stderr[-2000:], socket.gethostname())


@dataclass(frozen=True, slots=True)
class RayRunRequest:
    """A run for the cluster: the shard command's arguments, and where and how to run it.

    Attributes:
        run_args: The arguments of ``run`` every shard gets (suite, model, settings), without
            ``--run-id``, ``--resume``, ``--shard``, ``--json`` and the executor's options.
        run_id: The run's id (None: made from the time, as a local run's).
        resume: The id of a Ray run to complete (its unfinished shards resume).
        shards: Number of shards (None: the cluster's CPUs; with `resume`, the run's).
        address: The cluster's address (None: a local cluster started here).
        num_cpus: CPUs of a local cluster (None: the machine's).
        progress: Print each shard's progress on stderr while the run goes.
    """

    run_args: tuple[str, ...]
    run_id: str | None = None
    resume: str | None = None
    shards: int | None = None
    address: str | None = None
    num_cpus: int | None = None
    progress: bool = True
    poll_s: float = 2.0
    retries: int = SHARD_RETRIES


@dataclass(frozen=True, slots=True)
class RayRunOutcome:
    """A finished Ray run: its id, every shard's progress and exit, and the run record."""

    run_id: str
    shards: list[ShardProgress]
    exits: list[ShardExit]
    record: RunRecord
    elapsed_s: float
    cluster: str


def check_distributed_store(store_url: str | None) -> None:
    """Refuse a store the shards of a distributed run cannot share.

    Raises:
        UsageError: no ``$EVALSUITE_STORE`` (the project's SQLite file), or an SQLite URL.
    """
    if store_url is None or store_url.startswith("sqlite"):
        where = "the project's SQLite file" if store_url is None else store_url
        raise UsageError(
            f"--executor ray writes every shard's attempts from the cluster's machines into one "
            f"store, and {where} is a file on one machine that they cannot share (SQLite). "
            "Set EVALSUITE_STORE to a PostgreSQL database every node can reach, e.g. "
            "EVALSUITE_STORE=postgresql://USER@HOST/DB (docs/store.md), or run without "
            "--executor ray (`--shard I/N` runs shards on one machine into SQLite)"
        )


def shard_argv(
    root: Path, run_args: Sequence[str], run_id: str, shard: int, shards: int, *, resume: bool
) -> list[str]:
    """Shard `shard` of `shards`'s command line (after the program name)."""
    which = ["--resume", run_id] if resume else ["--run-id", run_id]
    return [
        "--root",
        str(root),
        "run",
        *run_args,
        *which,
        "--shard",
        f"{shard}/{shards}",
        "--json",
        "--no-progress",
    ]


_EXIT_ERRORS: dict[int, type[EvalsuiteError]] = {
    2: UsageError,
    3: IntegrityError,
    5: InvalidRunError,
    7: HoldoutAccessError,
    130: RunInterrupted,
}


def _shard_error(found: ShardExit, shards: int) -> EvalsuiteError:
    """The error a shard that failed ended with, exit code kept (its own message)."""
    payload = found.payload() or {}
    message = str(payload.get("message") or found.stderr_tail.strip()[-600:] or "no message")
    kind = _EXIT_ERRORS.get(found.code, EvalsuiteError)
    return kind(
        f"shard {found.shard}/{shards} on {found.host} failed (exit {found.code}): {message}"
    )


def _now_id() -> str:
    from evalsuite.run import new_run_id

    return str(new_run_id(datetime.now(UTC)))


class _Watch:
    """Reads each shard's progress from the store, and prints it when it changed."""

    def __init__(
        self, layout: Layout, store: Store, run_id: str, shards: int, echo: Callable[[str], None]
    ) -> None:
        self.layout, self.store, self.run_id, self.shards = layout, store, run_id, shards
        self.echo = echo
        self.item_ids: list[str] | None = None
        self.last = ""

    def read(self) -> list[ShardProgress] | None:
        record = self.store.find_run(self.run_id)
        if record is None:
            return None
        if self.item_ids is None:
            self.item_ids = plan_item_ids(record, _summary(self.layout, record))
        return shard_progress(
            record,
            self.shards,
            self.item_ids,
            self.store.attempt_outcomes(self.run_id),
            _rows(self.store, self.run_id),
        )

    def show(self) -> None:
        progress = self.read()
        if progress is None:
            return
        text = f"run {self.run_id}: {shards_line(progress)}\n" + "\n".join(
            f"  {p.line()}" for p in progress
        )
        if text != self.last:
            self.echo(text)
            self.last = text


def _summary(layout: Layout, record: RunRecord) -> Any:
    from evalsuite.manifest import load_manifest_summary

    if not record.suite or not record.version:
        return None
    try:
        return load_manifest_summary(layout, record.suite, record.version)
    except EvalsuiteError:
        return None


def _rows(store: Store, run_id: str) -> list[Any]:
    from evalsuite.store import ShardRow

    return [
        ShardRow(s.run_id, s.shard, s.shards, s.status, s.host, s.started_at, s.finished_at)
        for s in store.shards(run_id)
    ]


def execute_ray_run(
    request: RayRunRequest,
    *,
    layout: Layout,
    store_url: str | None,
    store: Callable[[], Store],
    echo: Callable[[str], None],
) -> RayRunOutcome:
    """Run `request`'s shards as Ray tasks until every one has ended; retry the lost ones.

    Raises:
        UsageError: a SQLite store, Ray missing, an unreachable cluster, a bad shard count;
            a shard's own refusal (its exit code kept: 2, 3, 7...).
        RunStoppedError: a shard lost more often than `request.retries` allows (its
            stored attempts stay; the message names the command that resumes it).
    """
    from evalsuite._core.cluster import (
        ClusterOptions,
        check_address,
        connect,
        import_ray,
        shutdown,
    )
    from evalsuite.run import check_run_id

    check_distributed_store(store_url)
    check_address(request.address)
    if request.shards is not None and request.shards < 1:
        raise UsageError(f"--shards {request.shards}: give the number of shards, at least 1")
    opened = store()
    run_id = request.resume or (
        check_run_id(request.run_id) if request.run_id is not None else _now_id()
    )
    shards = request.shards
    if request.resume is not None:
        found = opened.find_run(request.resume)
        if found is None:
            raise UsageError(f"--resume {request.resume}: no such run in the store")
        stored = found.spec.get("shards") if isinstance(found.spec, dict) else None
        if not isinstance(stored, int):
            raise UsageError(
                f"run {request.resume} was not a sharded run: resume it with `evalsuite run "
                f"--resume {request.resume}`"
            )
        if shards is not None and shards != stored:
            raise UsageError(
                f"run {request.resume} is split into {stored} shards, not {shards}: give "
                f"--shards {stored} or leave --shards out"
            )
        shards = stored
    options = ClusterOptions(request.address, num_cpus=request.num_cpus)
    ours = not import_ray().is_initialized()  # connected here: disconnected here
    ray = connect(options)
    try:
        target = _Target(layout, opened, store_url, run_id, echo)
        return _run_shards(ray, request, options, target, shards)
    finally:
        if ours:
            shutdown(ray)


@dataclass(frozen=True, slots=True)
class _Target:
    """The run the shards fill: its project, store, id, and where progress is printed."""

    layout: Layout
    store: Store
    store_url: str | None
    run_id: str
    echo: Callable[[str], None]


def _run_shards(
    ray: Any, request: RayRunRequest, options: ClusterOptions, target: _Target, shards: int | None
) -> RayRunOutcome:
    """Launch the shards on connected `ray`, watch them, and judge how they ended."""
    layout, opened, store_url, run_id = target.layout, target.store, target.store_url, target.run_id
    echo = target.echo
    if shards is None:
        shards = max(1, int(ray.cluster_resources().get("CPU", 1)))
    env = {k: v for k, v in os.environ.items() if k.startswith(_FORWARDED_ENV_PREFIXES)}
    if store_url is not None:
        env["EVALSUITE_STORE"] = store_url
    task = ray.remote(run_shard_process).options(
        num_cpus=1,
        max_retries=request.retries,
        retry_exceptions=[ShardLost],
    )
    started = time.perf_counter()
    refs = {
        task.remote(
            i,
            shard_argv(
                layout.root,
                request.run_args,
                run_id,
                i,
                shards,
                resume=request.resume is not None,
            ),
            env,
            str(layout.root),
        ): i
        for i in range(1, shards + 1)
    }
    watch = _Watch(layout, opened, run_id, shards, echo)
    if request.progress:
        echo(f"run {run_id}: {shards} shard(s) on {options.describe()}")
    exits: dict[int, ShardExit] = {}
    lost: dict[int, str] = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=len(pending), timeout=request.poll_s)
        for ref in ready:
            index = refs[ref]
            try:
                exits[index] = ray.get(ref)
            except Exception as exc:  # the task's retries are spent: the shard is lost
                lost[index] = (str(exc).strip().splitlines() or [type(exc).__name__])[-1][:300]
        if request.progress:
            watch.show()
    elapsed = time.perf_counter() - started
    final = watch.read() or []
    record = _judge(target, shards, exits, lost, request.retries)
    return RayRunOutcome(
        run_id=run_id,
        shards=final,
        exits=[exits[i] for i in sorted(exits)],
        record=record,
        elapsed_s=elapsed,
        cluster=options.describe(),
    )


def _judge(
    target: _Target, shards: int, exits: dict[int, ShardExit], lost: dict[int, str], retries: int
) -> RunRecord:
    """The complete run the shards made, or the error of the first shard that failed.

    Raises:
        RunStoppedError: a shard was lost past its retries (marked interrupted), or every
            shard ended and the run is still not complete.
        EvalsuiteError: the first failed shard's error, its exit code kept.
    """
    opened, run_id = target.store, target.run_id
    again = f"`evalsuite run --resume {run_id} --executor ray --shards {shards}`"
    if lost:
        if opened.find_run(run_id) is not None:  # a shard lost before the run row: none
            for index in lost:
                opened.set_shard(run_id, index, shards, "interrupted")
        named = "; ".join(f"shard {i}/{shards}: {why}" for i, why in sorted(lost.items()))
        raise RunStoppedError(
            f"run {run_id}: {len(lost)} shard(s) were lost {retries + 1} times each ({named}). "
            f"The attempts they stored are kept; resume the run with {again}"
        )
    failed = [e for _, e in sorted(exits.items()) if e.code not in (0, 5)]
    if failed:
        raise _shard_error(failed[0], shards)
    record = opened.find_run(run_id)
    if record is None or record.status != "complete":
        status = "missing" if record is None else record.status
        raise RunStoppedError(
            f"run {run_id}: every shard ended but the run is {status}; resume it with {again}"
        )
    return record
