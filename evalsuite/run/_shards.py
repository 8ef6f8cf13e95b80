"""Sharded runs: which planned attempts a shard runs, and who may join a run.

`evalsuite run SUITE@V --shard I/N --run-id ID` runs share I of N of run ID
(docs/design/sharded-runs.md): attempt k of the run's plan (items by id, then epochs;
counting from 0) belongs to shard ``(k mod N) + 1``.
"""

from __future__ import annotations

import os
import re
import signal
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from evalsuite.errors import UsageError
from evalsuite.run._spec import RunSpec
from evalsuite.store import RunRecord, Store

__all__ = [
    "KILL_SHARD_ENV",
    "PER_PROCESS_FIELDS",
    "Shard",
    "check_run_id",
    "finish_shard",
    "join_check",
    "kill_hook",
    "resume_check",
    "spec_differences",
    "start_shard",
    "stop_shard",
]

T = TypeVar("T")

_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")
_RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")

PER_PROCESS_FIELDS = frozenset({"max_samples", "purpose", "override_reason"})
"""Run settings that may differ between the shards of one run: how many samples a process
runs at once (a property of its machine), and the ledger's purpose and override reason
(used once, by the shard that takes the holdout look)."""


@dataclass(frozen=True, slots=True)
class Shard:
    """Share `index` (1..`count`) of a run split into `count` shares."""

    index: int
    count: int

    def __post_init__(self) -> None:
        if self.count < 1:
            raise UsageError(
                f"--shard {self.index}/{self.count}: N, the number of shards, must be at least 1"
            )
        if not 1 <= self.index <= self.count:
            hint = (
                " Shards count from 1 (Slurm's SLURM_ARRAY_TASK_ID with --array=1-N does); for "
                "an index that counts from 0, such as Kubernetes' JOB_COMPLETION_INDEX, give "
                "$((JOB_COMPLETION_INDEX + 1))."
                if self.index == 0
                else ""
            )
            raise UsageError(
                f"--shard {self.index}/{self.count}: I must be between 1 and N "
                f"({self.count}).{hint}"
            )

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"I/N"`` as a Shard.

        Raises:
            UsageError: not two whole numbers I/N, or I outside 1..N.
        """
        match = _SHARD.match(text)
        if match is None:
            raise UsageError(
                f"--shard expects I/N, two whole numbers such as 2/8 for the second of eight "
                f"shares of the run (got {text!r})"
            )
        return cls(int(match.group(1)), int(match.group(2)))

    def share(self, planned: Sequence[T]) -> list[T]:
        """This shard's attempts of the whole plan: every N-th from the I-th, in plan order."""
        return list(planned[self.index - 1 :: self.count])

    @property
    def lock_name(self) -> str:
        """Part of the lock file's name: one lock per shard of a run."""
        return f"shard-{self.index}-of-{self.count}"

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


def check_run_id(run_id: str) -> str:
    """`run_id` if it can name a run (it names files too), else a usage error.

    Raises:
        UsageError: empty, longer than 64 characters, or characters other than letters,
            digits, ``.``, ``_`` and ``-`` (starting with a letter or digit).
    """
    if not _RUN_ID.match(run_id):
        raise UsageError(
            f"--run-id {run_id!r} cannot name a run: use 1 to 64 letters, digits, '.', '_' or "
            "'-', starting with a letter or digit (e.g. support-gpt4o-2026-12-01)"
        )
    return run_id


def spec_differences(stored: dict[str, Any], wanted: dict[str, Any]) -> list[str]:
    """Settings (RunSpec fields) in which a shard's spec differs from its run's stored spec.

    Each entry reads ``field: run has X, this shard has Y``; fields in
    `PER_PROCESS_FIELDS` may differ.
    """
    return [
        f"{name}: the run has {stored.get(name)!r}, this shard has {wanted.get(name)!r}"
        for name in sorted(set(stored) | set(wanted))
        if name not in PER_PROCESS_FIELDS and stored.get(name) != wanted.get(name)
    ]


def join_check(record: RunRecord, spec: RunSpec, shard: Shard) -> None:
    """Refuse a shard that cannot join stored run `record` (nothing is run).

    Raises:
        UsageError: the run was ingested, was not started as a sharded run, has another
            number of shards, or was started with other settings (named).
    """
    run_id = record.run_id
    if record.source != "evalsuite":
        raise UsageError(f"run {run_id} was ingested, not run: a shard cannot join it")
    stored = dict(record.spec)
    count = stored.get("shards")
    if count is None:
        raise UsageError(
            f"run {run_id} was not started as a sharded run, so --shard {shard} cannot join "
            f"it; complete it with `evalsuite run --resume {run_id}`, or give another --run-id"
        )
    if count != shard.count:
        raise UsageError(
            f"run {run_id} is split into {count} shards, but this shard is {shard} (of "
            f"{shard.count}): every shard of a run must give the same N, or the shares "
            f"overlap; use --shard I/{count}, or another --run-id"
        )
    differences = spec_differences(stored, spec.model_dump(mode="json"))
    if differences:
        raise UsageError(
            f"shard {shard} was started with other settings than run {run_id}, so it cannot "
            "join it (nothing was run): "
            + "; ".join(differences)
            + ". Start every shard of a run with the same suite, model, split, epochs, seed "
            "and options (only --max-samples, --purpose and --override-reason may differ), "
            "or give another --run-id"
        )


def resume_check(record: RunRecord, stored: RunSpec, shard: Shard | None) -> None:
    """Refuse `--resume` of a sharded run without its shard, or with a shard of another N.

    Raises:
        UsageError: what to run instead.
    """
    run_id = record.run_id
    if stored.shards is None and shard is not None:
        raise UsageError(
            f"run {run_id} is not sharded: resume it with `evalsuite run --resume {run_id}` "
            "(no --shard)"
        )
    if stored.shards is not None and shard is None:
        raise UsageError(
            f"run {run_id} is split into {stored.shards} shards: resume each unfinished one "
            f"with `evalsuite run --resume {run_id} --shard I/{stored.shards}` (or its own "
            "command again)"
        )
    if stored.shards is not None and shard is not None and stored.shards != shard.count:
        raise UsageError(
            f"run {run_id} is split into {stored.shards} shards, not {shard.count}: use "
            f"--shard I/{stored.shards}"
        )


def _sync_status(store: Store, run_id: str) -> None:
    """An unfinished sharded run is ``interrupted`` while any shard is, else ``running``."""
    run = store.find_run(run_id)
    if run is None or run.status == "complete":
        return
    states = store.shards(run_id)
    status = "interrupted" if any(s.status == "interrupted" for s in states) else "running"
    if run.status != status:
        store.update_run(run_id, status=status)


def start_shard(store: Store, record: RunRecord, shard: Shard) -> None:
    """Record `shard` of the run as running (on this host)."""
    store.set_shard(record.run_id, shard.index, shard.count, "running", host=socket.gethostname())
    _sync_status(store, record.run_id)


def stop_shard(store: Store, record: RunRecord, shard: Shard) -> None:
    """Record `shard` as interrupted (its finished attempts stay)."""
    store.set_shard(record.run_id, shard.index, shard.count, "interrupted")


def finish_shard(store: Store, record: RunRecord, shard: Shard) -> bool:
    """Record `shard` as complete; True if now every shard of the run is.

    Each shard writes its own row before it counts the others, so of the last shards to
    finish at least one sees them all (docs/design/sharded-runs.md).
    """
    store.set_shard(record.run_id, shard.index, shard.count, "complete")
    states = store.shards(record.run_id)
    done = {s.shard for s in states if s.status == "complete" and s.shards == shard.count}
    if done >= set(range(1, shard.count + 1)):
        return True
    _sync_status(store, record.run_id)
    return False


KILL_SHARD_ENV = "EVALSUITE_FAULT_KILL_SHARD"
"""Fault injection for tests of lost shards: ``I:K`` makes the process running shard I kill
itself with SIGKILL once it has stored K attempts, on its first try only; ``I:K:parent`` kills
its parent process first (the Ray worker that runs the shard, docs/scale.md): a worker lost
mid-run, as a node failure loses it."""


def kill_hook(state_dir: Path, run_id: str, shard: Shard | None) -> Callable[[int], None] | None:
    """The `KILL_SHARD_ENV` fault for this shard: called with the attempts stored so far.

    None when the variable is unset, names another shard, or this shard was killed once
    already (a marker file under `state_dir`/faults): the retry runs to the end.

    Raises:
        UsageError: the variable is not ``I:K`` or ``I:K:parent``.
    """
    text = os.environ.get(KILL_SHARD_ENV)
    if not text or shard is None:
        return None
    parts = text.split(":")
    if not (
        len(parts) in (2, 3)
        and parts[0].isdigit()
        and parts[1].isdigit()
        and (len(parts) == 2 or parts[2] == "parent")
    ):
        raise UsageError(
            f"{KILL_SHARD_ENV}={text!r}: give I:K (kill shard I after K stored attempts) or "
            "I:K:parent (kill its parent process too), or unset it"
        )
    if int(parts[0]) != shard.index:
        return None
    marker = state_dir / "faults" / f"{run_id}.{shard.lock_name}.killed"
    if marker.exists():
        return None
    after, parent = int(parts[1]), len(parts) == 3

    def kill(stored: int) -> None:
        if stored < after:
            return
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        if parent:
            os.kill(os.getppid(), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)

    return kill
