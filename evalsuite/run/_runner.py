"""`evalsuite run`: a model against a frozen manifest, through inspect-ai, every attempt stored.

One run = (suite version, split, model, epochs, seed). The runner

1. verifies the manifest (dev items re-hashed; holdout items decrypted in memory only);
2. plans one attempt per (item, epoch), each with its own seed and fault plan;
3. runs every pending attempt as its own inspect sample (epochs are expanded, so that a
   resumed run executes exactly the attempts that are missing), with the manifest hash as
   the inspect task version;
4. streams finished samples into the store, classifies each one (`_outcomes`), and records
   planned attempts that never ran as harness errors;
5. judges run health: above the harness error threshold the run is invalid.
"""

from __future__ import annotations

import ast
import asyncio
import contextlib
import errno
import gc
import math
import re
import signal
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType
from typing import Any, Literal

import pandas as pd
from filelock import FileLock, Timeout
from inspect_ai import Task, task_with
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.scorer import Scorer, accuracy, scorer, stderr
from inspect_ai.solver import Solver
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from sqlalchemy.engine import make_url

from evalsuite._core.display import printable
from evalsuite._core.layout import Layout
from evalsuite._core.seeds import derive_seed
from evalsuite.errors import (
    EvalsuiteError,
    IntegrityError,
    LedgerError,
    RunInterrupted,
    RunStoppedError,
    StoreError,
    UsageError,
)
from evalsuite.holdout import (
    LedgerEntry,
    anchor_file,
    append_entry,
    budget_status,
    check_budget,
    ledger_hash_check,
    open_ledger,
    read_ledger,
    resolve_family,
    store_hash_check,
    voided_accesses,
)
from evalsuite.manifest import (
    Item,
    KeySpec,
    Manifest,
    ManifestFamily,
    ManifestItem,
    VerifyReport,
    check_vault_key,
    item_hash,
    item_texts,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    read_frozen_dev_items,
    resolve_key,
    verify,
)
from evalsuite.run._action import check_action_space
from evalsuite.run._bounds import declared_limits, limits_in_force, refuse_unbounded
from evalsuite.run._distributions import scan_distributions_once
from evalsuite.run._episode import EPISODE_KEY, EpisodeSpec, episode_setup
from evalsuite.run._hooks import active_sink
from evalsuite.run._limits import LimitsInForce
from evalsuite.run._offline import inspect_model_args, with_model_adapter
from evalsuite.run._options import parse_sandbox
from evalsuite.run._outcomes import classify_sample
from evalsuite.run._privacy import private_inspect_env
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._run_id import new_run_id as _new_run_id
from evalsuite.run._samples import item_to_sample
from evalsuite.run._scores import ScorerInfo, ScoreRule, family_rules, scorer_infos
from evalsuite.run._shards import (
    Shard,
    check_run_id,
    finish_shard,
    join_check,
    kill_hook,
    resume_check,
    start_shard,
    stop_shard,
)
from evalsuite.run._spec import STOP_WITHIN_S, RunSpec, check_plan_size
from evalsuite.run._tasks import TaskReference, build_task, load_task_function
from evalsuite.store import AttemptRecord, Health, RunRecord, Store, run_health

__all__ = [
    "PlannedAttempt",
    "RunInterrupted",
    "RunResult",
    "TaskReference",
    "load_task_function",
    "plan_attempts",
    "run_suite",
    "stored_run_result",
]

_SEP = "::"
SE_CLUSTER_KEY = "evalsuite_se_cluster"
"""Sample metadata key naming the unit (cluster or item) inspect's stderr() clusters on."""


@dataclass(frozen=True, slots=True)
class PlannedAttempt:
    """One planned (item, epoch) with everything decided before it runs."""

    item: ManifestItem
    epoch: int
    seed: int
    fault: Literal["none", "error", "hang"]

    @property
    def key(self) -> tuple[str, int]:
        """(item_id, epoch)."""
        return (self.item.id, self.epoch)

    @property
    def sample_id(self) -> str:
        """The inspect sample id, ``<item_id>::<epoch>``."""
        return f"{self.item.id}{_SEP}{self.epoch}"


@dataclass(frozen=True, slots=True)
class RunResult:
    """What a run produced: its record and health, and the mean over scored and limit rows."""

    run: RunRecord
    health: Health
    mean: float
    resumed: bool = False
    hook_errors: list[str] = field(default_factory=list)
    shard: str | None = None
    """``I/N`` for one shard of a sharded run (docs/design/sharded-runs.md)."""
    run_complete: bool = True
    """False while other shards of the run are unfinished: `health` and `mean` are then
    those of this shard's share, not of the run."""
    shards_complete: int | None = None
    """How many of a sharded run's shards are complete."""

    def to_dict(self) -> dict[str, Any]:
        """The `run --json` payload (docs/cli.md, "run": run_id, valid, mean, harness).

        A shard of a sharded run adds ``shard``, ``run_complete`` and ``shards_complete``.
        """
        sharded = (
            {
                "shard": self.shard,
                "run_complete": self.run_complete,
                "shards_complete": self.shards_complete,
            }
            if self.shard is not None
            else {}
        )
        return {
            "run_id": self.run.run_id,
            "valid": self.health.valid,
            "mean": self.mean,
            "suite": self.run.suite,
            "version": self.run.version,
            "manifest_hash": self.run.manifest_hash,
            "split": self.run.split,
            "model": self.run.model,
            "epochs": self.run.epochs,
            "seed": self.run.seed,
            "resumed": self.resumed,
            "harness": self.health.to_dict(),
        } | sharded


def _planned(item: ManifestItem, epoch: int, spec: RunSpec) -> PlannedAttempt:
    """(item, epoch) with its seed and injected fault, derived from the run's seed."""
    draw = derive_seed(spec.seed, "fault", item.id, epoch) / 2**63
    fault: Literal["none", "error", "hang"] = spec.fault_kind if draw < spec.fault_rate else "none"
    return PlannedAttempt(
        item=item, epoch=epoch, seed=derive_seed(spec.seed, item.id, epoch), fault=fault
    )


def plan_attempts(
    items: Sequence[ManifestItem],
    spec: RunSpec,
    keys: Sequence[tuple[str, int]] | None = None,
) -> list[PlannedAttempt]:
    """Every (item, epoch) of the run with its seed and injected fault, in a stable order.

    With `keys` (an adaptive run's attempts so far, docs/design/adaptive.md): exactly those
    (item id, epoch) pairs, sorted, instead of `spec.epochs` per item.

    Raises:
        UsageError: a key names an item the run does not have, or an epoch below 1.
    """
    ordered = sorted(items, key=lambda i: i.id)
    if keys is None:
        return [_planned(item, e, spec) for item in ordered for e in range(1, spec.epochs + 1)]
    by_id = {item.id: item for item in ordered}
    unknown = sorted({i for i, e in keys if i not in by_id or e < 1})
    if unknown:
        raise UsageError(f"planned attempts name unknown items or epochs: {unknown[:5]}")
    return [_planned(by_id[i], e, spec) for i, e in sorted(set(keys))]


def _items_of_split(
    layout: Layout, manifest: Manifest, split: str, keys: KeySpec
) -> dict[str, tuple[str, Item]]:
    """Map item id to (family, item); holdout items are decrypted in memory only."""
    wanted = {i.id for i in manifest.items_by_split(split)}  # type: ignore[arg-type]
    if split == "holdout":
        key = resolve_key(manifest.suite, manifest.key, manifest.canary, keys, create=False)
        pairs = load_holdout_items(layout, manifest, key)
    else:
        suite = load_suite(layout, manifest.suite)
        from_task = {f.name for f in manifest.families if f.items is None}
        pairs = [
            (e.family, e.item) for e in load_suite_items(layout, suite) if e.family not in from_task
        ]
        pairs += [(e.family, e.item) for e in read_frozen_dev_items(layout, manifest)]
    found = {item.id: (family, item) for family, item in pairs if item.id in wanted}
    missing = sorted(wanted - set(found))
    if missing:
        raise IntegrityError(
            f"{len(missing)} {split} item(s) of {manifest.ref} not found: {missing[:5]}"
        )
    # what runs is what was verified: an item (or a file it reads) edited since is refused
    versions = {f.name: f.version for f in manifest.families}
    frozen = {i.id: i.hash for i in manifest.items}
    moved = sorted(
        i
        for i, (fam, item) in found.items()
        if item_hash(item, fam, versions.get(fam, 0)) != frozen[i]
    )
    if moved:
        raise IntegrityError(
            f"{len(moved)} {split} item(s) of {manifest.ref} changed since verification: "
            f"{moved[:5]}; run `evalsuite verify {manifest.ref}`"
        )
    return found


class _Redactor:
    """Removes any item text that an error message might echo (holdout runs)."""

    def __init__(self, items: Sequence[Item], active: bool) -> None:
        fragments: set[str] = set()
        if active:
            for item in items:
                for text in item_texts(item):
                    fragments.update(p.strip() for p in text.splitlines() if len(p.strip()) >= 8)
                    if len(text.strip()) >= 8:
                        fragments.add(text.strip())
        self.fragments = sorted(fragments, key=len, reverse=True)

    def __call__(self, message: str) -> str:
        for fragment in self.fragments:
            if fragment in message:
                message = message.replace(fragment, "[holdout text redacted]")
        return message


@dataclass
class _Sink:
    """Turns finished inspect samples into stored attempts, and counts progress."""

    store: Store
    run_id: str
    planned: dict[str, PlannedAttempt]
    redact: _Redactor
    holdout: bool
    on_progress: Callable[[AttemptRecord], None]
    guard: _SignalGuard | None = None
    rules: Mapping[str, ScoreRule] = field(default_factory=dict)
    limits: Mapping[str, LimitsInForce] = field(default_factory=dict)
    seen: set[str] = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    unrecorded: list[EvalSample] = field(default_factory=list)
    """Samples whose hook write failed: recorded again once the eval has ended (a holdout
    run's log keeps no samples to reconcile against, docs/design/run-speed.md)."""

    def record(self, sample: EvalSample) -> AttemptRecord | None:
        attempt = self.planned.get(str(sample.id))
        if attempt is None:
            return None
        classified = classify_sample(
            sample,
            redact=self.redact,
            keep_text=not self.holdout,
            rule=self.rules.get(attempt.item.family),
            limits=self.limits.get(attempt.item.family),
        )
        if classified.outcome == "harness_error" and self.guard and self.guard.signalled:
            return None  # cancelled by SIGINT/SIGTERM: not a result; a resumed run runs it
        if classified.outcome == "harness_error" and sample.error is not None:
            classified.reason = self.redact(_error_reason(sample))[:500]
        elif classified.outcome == "scored" and self.holdout:
            # a verifier's free-text explanation may quote the item: not kept on holdout runs
            classified.reason = None
        tokens = sum(u.total_tokens for u in (sample.model_usage or {}).values())
        record = AttemptRecord(
            item_id=attempt.item.id,
            epoch=attempt.epoch,
            stratum=attempt.item.stratum,
            outcome=classified.outcome,
            score=classified.score,
            item_hash=attempt.item.hash,
            cluster=attempt.item.cluster,
            seed=attempt.seed,
            limit_type=classified.limit_type,
            reason=classified.reason,
            retries=len(sample.error_retries or []),
            duration_s=float(sample.total_time or 0.0),
            tokens=int(tokens),
            checks=classified.checks,
        )
        self.store.record_attempts(self.run_id, [record])
        return record

    def accept(self, sample: EvalSample) -> None:
        try:
            record = self.record(sample)
        except Exception as exc:  # the hook must never fail the eval; reconciled afterwards
            self.errors.append(f"{type(exc).__name__}: {exc}")
            self.unrecorded.append(sample)
            return
        if record is not None and str(sample.id) not in self.seen:
            self.seen.add(str(sample.id))
            self.on_progress(record)


_REPR = re.compile(r"^([A-Za-z_][A-Za-z0-9_.]*)\((.*)\)$", re.DOTALL)


def _error_reason(sample: EvalSample) -> str:
    """``"<ExceptionType>: <message>"`` for a sample error (inspect stores ``repr(exc)``)."""
    raw = (sample.error.message if sample.error else "") or ""
    match = _REPR.match(raw.strip())
    if match:
        kind = match.group(1).rsplit(".", 1)[-1]
        try:
            text = str(ast.literal_eval(match.group(2))) if match.group(2) else ""
        except (ValueError, SyntaxError):
            text = match.group(2)
        return f"{kind}: {text}" if text else kind
    first = raw.strip().splitlines()[0] if raw.strip() else "unknown error"
    return f"Error: {first}"


def _build_tasks(
    prepared: _Prepared,
    pending: Sequence[PlannedAttempt],
    payloads: dict[str, tuple[str, Item]],
    spec: RunSpec,
    run_id: str,
    redact: Callable[[str], str],
) -> list[Task]:
    manifest = prepared.manifest
    by_family: dict[str, list[PlannedAttempt]] = {}
    for attempt in pending:
        by_family.setdefault(attempt.item.family, []).append(attempt)
    tasks = []
    for family_name, attempts in sorted(by_family.items()):
        samples = []
        for attempt in attempts:
            episode = EpisodeSpec(
                item_id=attempt.item.id,
                epoch=attempt.epoch,
                seed=attempt.seed,
                fault=attempt.fault,
                fault_mode=spec.fault_mode,
                tool_timeout=spec.tool_timeout,
                token=f"{run_id}{_SEP}{attempt.sample_id}",
            )
            payload = payloads[attempt.item.id][1].payload()
            # the unit evalsuite's SE clusters on: the declared cluster, else the item
            unit = (
                f"cluster:{attempt.item.cluster}"
                if attempt.item.cluster
                else f"item:{attempt.item.id}"
            )
            samples.append(
                item_to_sample(
                    payload,
                    sample_id=attempt.sample_id,
                    extra={EPISODE_KEY: episode.model_dump(), SE_CLUSTER_KEY: unit},
                )
            )
        function = prepared.functions[family_name]
        family = next(f for f in manifest.families if f.name == family_name)
        try:
            base = build_task(function, family, samples, _run_args(family, spec))
        except Exception as exc:
            reference = family.task
            raise UsageError(
                f"the task function {reference} of family {family_name!r} failed to build its "
                f"task: {redact(f'{type(exc).__name__}: {exc}')[:300]}. Nothing was stored; "
                "fix the task code (the frozen manifest names it) and run again."
            ) from None
        setup: list[Solver] = [episode_setup()]
        if isinstance(base.setup, Sequence):
            setup.extend(base.setup)
        elif base.setup is not None:
            setup.append(base.setup)
        in_force = prepared.limits.get(family_name, LimitsInForce())
        tasks.append(
            task_with(
                base,
                name=f"{manifest.suite}-{family_name}",
                version=manifest.manifest_hash,
                setup=setup,
                epochs=1,
                # what the family's kit declares where the task sets nothing; the task's own
                # and the run's options are unchanged (docs/design/run-limits.md)
                message_limit=in_force.messages,
                token_limit=in_force.tokens,
                time_limit=int(in_force.time_s) if in_force.time_s is not None else None,
                scorer=[
                    _item_clustered(scorer, info)
                    for scorer, info in zip(base.scorer or [], scorer_infos(base), strict=True)
                ],
            )
        )
    return tasks


def _item_clustered(base: Scorer, info: ScorerInfo) -> Scorer:
    """`base`, scoring as before under its own name, with metrics that cluster epochs by item.

    Every (item, epoch) is its own inspect sample, so the family's own ``stderr()`` would
    count K epochs as K items. This scorer reports ``accuracy()`` and
    ``stderr(cluster=...)`` on the unit evalsuite's SE clusters on (the declared cluster,
    else the item), so the log and `evalsuite score` agree (docs/methods.md, "Inspect logs");
    a dict-valued scorer gets them per declared key. The name stays the one inspect gives
    the scorer's scores, so a family's declared ``score`` (docs/design/scorers.md) still
    finds it. ``task_with(metrics=...)`` would not do: it leaves the scorer's own metrics in
    place. A dict-valued scorer whose keys are decided per sample keeps its own metrics.
    """
    clustered_metrics = [accuracy(), stderr(cluster=SE_CLUSTER_KEY)]
    if info.dict_valued and not info.keys:
        return base
    metrics: Any = (
        {key: clustered_metrics for key in info.keys} if info.dict_valued else clustered_metrics
    )

    @scorer(metrics=metrics, name=info.name)
    def clustered() -> Scorer:
        return base

    return clustered()


@contextmanager
def _progress(
    total: int, done: int, label: str, enabled: bool
) -> Iterator[Callable[[AttemptRecord], None]]:
    if not enabled:
        yield lambda _record: None
        return
    counts = {"harness_error": 0, "limit": 0}
    if not sys.stderr.isatty():
        # not a terminal: plain lines (about every tenth of the run), never a cut bar
        step = max(1, total // 10)
        state = {"done": done}

        def line(record: AttemptRecord) -> None:
            counts[record.outcome] = counts.get(record.outcome, 0) + 1
            state["done"] += 1
            if state["done"] % step == 0 or state["done"] >= total:
                sys.stderr.write(
                    f"{label}: {state['done']}/{total} attempts · "
                    f"{counts['harness_error']} harness errors · {counts['limit']} limits\n"
                )
                sys.stderr.flush()

        yield line
        return
    progress = Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=False,
    )
    task_id = progress.add_task(label, total=total, completed=done, status="")

    def advance(record: AttemptRecord) -> None:
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
        status = f"{counts['harness_error']} harness errors · {counts['limit']} limits"
        progress.update(task_id, advance=1, status=status)

    with progress:
        yield advance


_UNDISPLAYABLE = re.compile(r"[\[\]\x00-\x1f\x7f-\x9f]")
"""Characters a model name may not hold: square brackets (inspect's display renders the name
inside rich markup, so ``x[/]`` failed the eval after every attempt had run) and controls."""


def _check_model(spec: RunSpec) -> None:
    from inspect_ai.model import get_model

    bad = sorted({f"U+{ord(c):04X}" for c in _UNDISPLAYABLE.findall(spec.model)})
    if bad:
        raise UsageError(
            f"cannot use model {printable(spec.model)!r}: a model name may not contain square "
            f"brackets or control characters ({', '.join(bad)}), which inspect's display "
            "reads as markup or sends to the terminal (the eval would fail after its attempts "
            "ran). Give the provider's model name as it spells it, such as provider/model."
        )
    try:
        # inspect prints its banner ("inspect_ai v…, hooks enabled") with rich's print on
        # stdout; it is a diagnostic, so it goes to stderr, before the run's own output
        with contextlib.redirect_stdout(sys.stderr):
            get_model(spec.model, **spec.model_args)
    except Exception as exc:
        raise UsageError(
            f"cannot use model {spec.model!r}: {type(exc).__name__}: {str(exc).rstrip('.')}. "
            "Give an inspect model such as evalsuite/improved, or provider/model with its API "
            "key set."
        ) from None


def _check_model_knows_suite(layout: Layout, spec: RunSpec) -> None:
    """Refuse a model that says it cannot solve the suite, before anything is planned.

    A model API may define ``refuse_suite(suite, families) -> str | None`` (the reference
    agents do: they only know the example families); a reason refuses the run (exit 2).
    A manifest that cannot be read is left to `verify`, which runs next and says why.
    """
    from inspect_ai.model import get_model

    refuse = getattr(get_model(spec.model, **spec.model_args).api, "refuse_suite", None)
    if not callable(refuse):
        return
    try:
        manifest = load_manifest(layout, spec.suite, spec.version)
    except EvalsuiteError:
        return
    reason = refuse(manifest.suite, [f.name for f in manifest.families])
    if reason:
        raise UsageError(str(reason))


def _select_items(manifest: Manifest, spec: RunSpec) -> list[ManifestItem]:
    items = sorted(manifest.items_by_split(spec.split), key=lambda i: i.id)
    if spec.items is not None:
        unknown = sorted(set(spec.items) - {i.id for i in items})
        if unknown:
            raise UsageError(
                f"{manifest.ref} has no {spec.split} item(s) {unknown[:5]}; name items of the "
                f"{spec.split} split"
            )
        items = [i for i in items if i.id in set(spec.items)]
    return items[: spec.limit_items] if spec.limit_items else items


@dataclass(frozen=True, slots=True)
class _Prepared:
    """What every check before a run decided: nothing is stored or reserved yet."""

    manifest: Manifest
    planned: list[PlannedAttempt]
    functions: dict[str, Callable[..., Task]]
    rules: dict[str, ScoreRule]
    limits: dict[str, LimitsInForce] = field(default_factory=dict)
    """Each family's limits in force (docs/design/run-limits.md)."""


def _refuse_unverified(spec: RunSpec, report: VerifyReport) -> None:
    if report.ok:
        return
    problems = report.problems + [f"{p.kind} {p.split} item {p.item_id}" for p in report.items]
    problems += report.errors
    raise (IntegrityError if report.integrity_failed else UsageError)(
        f"{spec.suite}@{spec.version} does not verify, refusing to run (nothing was stored): "
        + "; ".join(problems[:10])
        + (" ..." if len(problems) > 10 else "")
        + f" (run `evalsuite verify {spec.suite}@{spec.version}` for details)"
    )


def _check_recorded_hashes(layout: Layout, manifest: Manifest, store: Store) -> None:
    """Refuse a manifest whose hash the store's runs or the ledger's accesses contradict."""
    problems = []
    _state, problem = store_hash_check(
        store.list_runs(),
        suite=manifest.suite,
        version=manifest.version,
        manifest_hash=manifest.manifest_hash,
        store=make_url(store.url).render_as_string(hide_password=True),
    )
    if problem:
        problems.append(problem)
    try:
        entries = read_ledger(layout.ledger_file(manifest.suite))
    except LedgerError:
        entries = []  # a damaged ledger refuses holdout runs (under its lock), not dev runs
    _state, problem = ledger_hash_check(
        entries,
        suite=manifest.suite,
        version=manifest.version,
        manifest_hash=manifest.manifest_hash,
    )
    if problem:
        problems.append(problem)
    if problems:
        raise IntegrityError(
            f"{manifest.ref} was edited after it was frozen, refusing to run (nothing was "
            "stored): " + "; ".join(problems)
        )


def _preflight(
    layout: Layout, spec: RunSpec, keys: KeySpec, store: Store, record: RunRecord | None
) -> _Prepared:
    """Every check that can fail before a holdout look is reserved or a run row stored.

    Model, manifest (dev items, file hashes, changelog and git history, the hashes recorded
    by stored runs and ledger accesses), the vault key (from the vault header: the vault is
    not opened) and every task function the run needs.
    """
    check_plan_size(spec.epochs)  # before the model is even loaded
    _check_options(spec)
    _check_model(spec)
    _check_model_knows_suite(layout, spec)
    report = verify(layout, spec.suite, spec.version, keys=keys, skip_holdout=True)
    _refuse_unverified(spec, report)
    manifest = load_manifest(layout, spec.suite, spec.version)
    if record is not None and record.manifest_hash != manifest.manifest_hash:
        raise IntegrityError(
            f"run {record.run_id} ran on manifest {record.manifest_hash}, but "
            f"{manifest.ref} now hashes to {manifest.manifest_hash}; it cannot be resumed"
        )
    _check_recorded_hashes(layout, manifest, store)
    items = _select_items(manifest, spec)
    if not items:
        raise UsageError(f"{manifest.ref} has no {spec.split} items: nothing to run")
    check_plan_size(spec.epochs, len(items))  # before a single attempt is planned
    if spec.split == "holdout":
        key = resolve_key(manifest.suite, manifest.key, manifest.canary, keys, create=False)
        if manifest.vault is None:
            raise IntegrityError(f"{manifest.ref} has holdout items but records no vault")
        check_vault_key(
            layout.root / manifest.vault.path,
            suite=manifest.suite,
            version=manifest.version,
            key=key,
        )
    families = {f.name: f for f in manifest.families}
    _check_run_task_args(manifest, spec, sorted({i.family for i in items}))
    functions = {
        name: load_task_function(layout, manifest.suite, families[name])
        for name in sorted({i.family for i in items})
    }
    check_action_space(manifest, functions)
    built = {
        f.name: _scoring_task(functions, f, _run_args(f, spec))
        for f in manifest.families
        if f.name in functions
    }
    rules = family_rules(manifest, lambda family: built.get(family.name))
    limits = {
        name: limits_in_force(task, spec, declared_limits(functions[name]))
        for name, task in built.items()
        if task
    }
    refuse_unbounded(manifest, limits)
    return _Prepared(manifest, plan_attempts(items, spec), functions, rules, limits)


def _check_options(spec: RunSpec) -> None:
    """Refuse options a holdout run cannot take (docs/design/foreign-tasks.md)."""
    if spec.split == "holdout" and spec.log_dir is not None:
        raise UsageError(
            f"--log-dir {spec.log_dir!r}: a holdout run never writes logs (they would hold the "
            "holdout items in plaintext); its logs stay in memory. Drop --log-dir, or use it "
            "with the dev split."
        )


def _run_args(family: ManifestFamily, spec: RunSpec) -> dict[str, Any]:
    """The run-time task arguments (``-T``) that apply to `family`: those it lists in run_args."""
    allowed = set(family.run_args or ())
    return {k: v for k, v in spec.task_args.items() if k in allowed}


def _check_run_task_args(manifest: Manifest, spec: RunSpec, families: Sequence[str]) -> None:
    """Every ``-T`` must name a task argument some family of the run declares in run_args."""
    if not spec.task_args:
        return
    declared = [f for f in manifest.families if f.name in families]
    runnable = {name for f in declared for name in (f.run_args or ())}
    refused = sorted(set(spec.task_args) - runnable)
    if not refused:
        return
    frozen = {f"{f.name}.{k}={v!r}" for f in declared for k, v in (f.task_args or {}).items()}
    raise UsageError(
        f"-T {', '.join(refused)}: task arguments can change what is measured, so they are "
        f"frozen with the suite ({manifest.ref} froze "
        f"{', '.join(sorted(frozen)) or 'none'}); only the arguments a family lists in "
        f"run_args may be set at run time ({', '.join(sorted(runnable)) or 'none listed'}). "
        "To change a frozen argument, set task_args in the suite file and freeze a new "
        "version; to allow one that only changes how the task runs, add it to the family's "
        "run_args and freeze a new version."
    )


def _scoring_task(
    functions: Mapping[str, Callable[..., Task]],
    family: ManifestFamily,
    run_args: Mapping[str, Any] | None = None,
) -> Task | None:
    """The family's task, built on one placeholder sample, to read its scorers before a run.

    Only the scorers are read (docs/design/scorers.md); no item, so no vault is opened.
    """
    function = functions.get(family.name)
    if function is None:
        return None
    try:
        return build_task(
            function, family, [Sample(id="evalsuite-scorer-check", input="")], run_args
        )
    except Exception as exc:
        raise UsageError(
            f"the task function {family.task} of family {family.name!r} failed to build its "
            f"task: {type(exc).__name__}: {str(exc)[:300]}. Nothing was stored; fix the task "
            "code (the frozen manifest names it) and run again."
        ) from None


def _access_fields(
    spec: RunSpec, manifest: Manifest, run_id: str, family: str, provenance: dict[str, Any]
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "suite": manifest.suite,
        "version": manifest.version,
        "manifest_hash": manifest.manifest_hash,
        "model": spec.model,
        "model_family": family,
        "user": str(provenance.get("user", "unknown")),
        "host": str(provenance.get("host", "unknown")),
        "purpose": spec.purpose,
    } | ({"stopping_rule": spec.adaptive} if spec.adaptive is not None else {})


def _reserve_look(  # noqa: PLR0913 - the run's parts the ledger entry records, one each
    layout: Layout,
    spec: RunSpec,
    manifest: Manifest,
    run_id: str,
    resumed: bool,
    provenance: dict[str, Any],
    now: datetime,
    *,
    run_stored: Callable[[], bool] | None = None,
    anchor: Path | None = None,
) -> LedgerEntry:
    """Check the budget and append the access in one step, under the ledger's lock.

    `anchor`: where this machine records the ledger's head, outside the project
    (`evalsuite.holdout.anchor_file`); the ledger must still hold it, and the access becomes
    the new head.

    Runs before the vault is opened and before any run row is stored, so a refusal
    (exit 7 past the budget or for a changed family; exit 3 for a damaged ledger, a
    manifest the ledger contradicts, or a resumed run without an access) leaves nothing.

    A new run must fit its family's budget (or carry an override reason); a resumed run
    must hold a (not voided) access of its own, and spends no further look.

    A shard of a sharded run (`run_stored` given: whether the run's row exists) takes the
    run's one look: the first shard checks the budget and appends the access; every other
    shard, resumed or not, finds that access and appends nothing. A stored run row without
    an access means the ledger lost it (the access is appended before the row): refused.
    """
    with open_ledger(layout.ledger_file(manifest.suite), anchor=anchor) as ledger:
        _state, problem = ledger_hash_check(
            ledger.entries,
            suite=manifest.suite,
            version=manifest.version,
            manifest_hash=manifest.manifest_hash,
        )
        if problem:
            raise IntegrityError(f"refusing the holdout run (nothing was stored): {problem}")
        override: str | None = None
        if run_stored is not None:
            voided = voided_accesses(ledger.entries)
            for entry in ledger.entries:
                if entry.kind == "access" and entry.run_id == run_id and entry.seq not in voided:
                    return entry  # one look per sharded run, whichever shard took it
            if run_stored():
                raise IntegrityError(
                    f"holdout run {run_id} is stored but has no access in the ledger "
                    f"{layout.ledger_file(manifest.suite)}: its entry was deleted, so no shard "
                    "of it may run (nothing was run). Restore the ledger, or start a new run, "
                    "which is budgeted."
                )
            resumed = False  # the first shard to get here takes the run's look
        if resumed:
            voided = voided_accesses(ledger.entries)
            granted = [
                e
                for e in ledger.entries
                if e.kind == "access" and e.run_id == run_id and e.seq not in voided
            ]
            if not granted:
                raise IntegrityError(
                    f"holdout run {run_id} has no access in the ledger "
                    f"{layout.ledger_file(manifest.suite)}: it was never granted a look, or "
                    "its entry was deleted, so it cannot be resumed (nothing was run). Restore "
                    "the ledger, or start a new run, which is budgeted."
                )
            family = granted[0].model_family
        else:
            family = resolve_family(ledger.entries, spec.model, spec.model_family)
            status = budget_status(
                ledger.entries,
                suite=manifest.suite,
                version=manifest.version,
                budget=manifest.holdout_budget,
            )
            check_budget(status, family, override_reason=spec.override_reason)
            override = spec.override_reason
        return ledger.append(
            _access_fields(spec, manifest, run_id, family, provenance)
            | {"at": now.isoformat(), "override_reason": override, "resumed": resumed}
        )


def _void_look(layout: Layout, look: LedgerEntry, reason: str, now: datetime) -> None:
    """Release a reserved access whose run failed before any holdout item reached the model.

    If the ledger cannot take the entry, the look stays counted (the safe side).
    """
    fields = {
        k: getattr(look, k)
        for k in ("run_id", "suite", "version", "manifest_hash", "model", "model_family")
    }
    fields |= {
        "user": look.user,
        "host": look.host,
        "at": now.isoformat(),
        "purpose": None,
        "override_reason": None,
        "resumed": look.resumed,
        "kind": "void",
        "reason": reason[:300],
    }
    with contextlib.suppress(EvalsuiteError, OSError):
        append_entry(layout.ledger_file(look.suite), fields)


def dev_items(layout: Layout, manifest: Manifest) -> dict[str, tuple[str, Item]]:
    """The dev items of `manifest` as frozen: item id -> (family, item), hashes checked.

    Raises:
        IntegrityError: a dev item is missing from `tasks/` or changed since the freeze.
    """
    return _items_of_split(layout, manifest, "dev", KeySpec(key_dir=layout.state / "no-keys"))


def _open_items(
    layout: Layout, manifest: Manifest, spec: RunSpec, keys: KeySpec
) -> dict[str, tuple[str, Item]]:
    """The run's item payloads; for a holdout run the vault is opened (and re-verified) here."""
    if spec.split == "holdout":
        _refuse_unverified(spec, verify(layout, spec.suite, spec.version, keys=keys))
    return _items_of_split(layout, manifest, spec.split, keys)


def _resumable(store: Store, run_id: str) -> RunRecord:
    record = store.get_run(run_id)
    if record.source != "evalsuite":
        raise UsageError(f"run {record.run_id} was ingested, not run: nothing to resume")
    if record.status == "complete":
        raise UsageError(f"run {record.run_id} is complete: nothing to resume")
    return record


@contextmanager
def _run_lock(layout: Layout, run_id: str) -> Iterator[None]:
    (layout.state / "locks").mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(layout.state / "locks" / f"{run_id}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise UsageError(f"run {run_id} is being executed by another process") from None
    try:
        yield
    finally:
        lock.release()


def _start_record(
    spec: RunSpec,
    manifest: Manifest,
    run_id: str,
    planned: int,
    now: datetime,
    provenance: dict[str, Any],
) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        model=spec.model,
        epochs=spec.epochs,
        planned=planned,
        status="running",
        source="evalsuite",
        started_at=now.isoformat(),
        error_threshold=spec.error_threshold,
        suite=manifest.suite,
        version=manifest.version,
        manifest_hash=manifest.manifest_hash,
        split=spec.split,
        model_args=dict(spec.model_args),
        seed=spec.seed,
        weights=dict(manifest.weights),
        spec=spec.model_dump(mode="json"),
        provenance=provenance,
    )


_UNAWAITED = r"coroutine '.*' was never awaited"
"""Python's warning for a coroutine a cancellation left unstarted (inspect's task groups)."""


class _SignalGuard:
    """SIGINT and SIGTERM during a run: remember the signal and stop the run cleanly.

    Installed (main thread only) from the moment a run holds its lock until it is recorded.
    The first signal stops the run (SIGTERM would otherwise kill the process with the run
    left ``running``): while inspect's event loop runs, it cancels the loop's tasks, as
    asyncio does for Ctrl-C, so inspect finishes every log as ``cancelled`` with the samples
    that did finish (docs/design/sharded-runs.md, "The inspect log directory"); outside the
    loop, or at a second signal, it raises `KeyboardInterrupt`. Samples that end after it
    are cancellations, not results: the sink drops their harness errors so that a resumed
    run executes them. While `shielded` (appending to the ledger, recording the
    interruption), signals are only remembered.

    inspect's cancellation can take minutes (it condenses and logs every cancelled sample,
    whose transcript may hold gigabytes). With `overdue` set (by the runner, while inspect
    runs, when the caller gave a hard stop), a timer started by the first signal calls it
    after `stop_within_s` unless the eval has returned by then: the run is recorded as
    interrupted and the process ends (docs/design/run-limits.md).
    """

    def __init__(self, stop_within_s: float = STOP_WITHIN_S) -> None:
        self.signum: int | None = None
        self.shielded = False
        self.stop_within_s = stop_within_s
        self.overdue: Callable[[], None] | None = None
        self._saved: dict[int, Any] = {}
        self._warnings = warnings.catch_warnings()
        self._lock = threading.Lock()
        self._returned = False
        self._firing = False

    @property
    def signalled(self) -> bool:
        """True once SIGINT or SIGTERM arrived."""
        return self.signum is not None

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        first = self.signum is None
        if first:
            self.signum = signum
            # the coroutines the cancellation leaves unstarted are expected: Python's warning
            # about each would print a stray source line (issue 28 saw "JsonChange(")
            warnings.filterwarnings("ignore", message=_UNAWAITED, category=RuntimeWarning)
        if self.shielded:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            loop = None
        if first and loop is not None:
            # inside inspect's event loop: cancel it, as asyncio does for Ctrl-C, so inspect
            # finishes each task's log as "cancelled" with the samples that did finish (an
            # exception thrown into the loop would leave the logs without them)
            for task in asyncio.all_tasks(loop):
                task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake a loop waiting in select()
            if self.overdue is not None:
                timer = threading.Timer(self.stop_within_s, self._fire)
                timer.daemon = True
                timer.start()
            return
        raise KeyboardInterrupt

    def _fire(self) -> None:
        """The timer: inspect is still cancelling; stop hard unless the eval returned."""
        with self._lock:
            if self._returned or self.overdue is None:
                return
            self._firing = True
        self.overdue()

    def eval_returned(self) -> None:
        """The eval is over (returned or raised): the timer, if it fires, does nothing.

        If the timer is already stopping the process, wait for it: it ends the process.
        """
        with self._lock:
            self._returned = True
            firing = self._firing
        if firing:
            threading.Event().wait()

    def __enter__(self) -> _SignalGuard:
        self._warnings.__enter__()  # the filter a signal adds is undone on exit
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous = signal.getsignal(sig)
                self._saved[sig] = signal.SIG_DFL if previous is None else previous
                signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self._saved.items():
            signal.signal(sig, previous)
        self._saved.clear()
        if self.signalled:
            gc.collect()  # finalize the unstarted coroutines while their warning is ignored
        self._warnings.__exit__(None, None, None)

    def name(self) -> str:
        """The signal's name (``SIGINT`` for a KeyboardInterrupt from elsewhere)."""
        return signal.Signals(self.signum).name if self.signum is not None else "SIGINT"


def _execute(
    layout: Layout,
    tasks: list[Task],
    spec: RunSpec,
    run_id: str,
    sink: _Sink,
) -> list[EvalLog]:
    holdout = spec.split == "holdout"
    if holdout:
        log_dir = f"memory://evalsuite/{run_id}"
    else:
        log_dir = spec.log_dir or str(layout.state / "logs" / run_id)
    samples = sum(len(task.dataset) for task in tasks)
    scan_distributions_once()
    # inspect's banner goes to stderr (see `_check_model`): stdout is the command's output
    with (
        private_inspect_env(holdout=holdout),
        active_sink(sink),
        contextlib.redirect_stdout(sys.stderr),
    ):
        return inspect_eval(
            tasks,
            model=spec.model,
            model_base_url=spec.model_base_url,
            model_args=inspect_model_args(spec),
            sandbox=parse_sandbox(spec.sandbox),
            sandbox_cleanup=spec.sandbox_cleanup,
            max_subprocesses=spec.max_subprocesses,
            max_sandboxes=spec.max_sandboxes,
            max_tasks=spec.max_tasks,
            log_dir=log_dir,
            log_format="json",
            log_realtime=False,
            # a holdout run's log lives in memory and is never read: samples are not
            # condensed into it; a dev run's JSON log is written whole when the eval ends
            # (and by inspect's stale-flush timer), not rewritten every 10 samples: a
            # buffer one larger than the run never fills (docs/design/run-speed.md)
            log_samples=spec.log_samples and not holdout,
            log_buffer=samples + 1,
            display="none",
            retry_on_error=spec.max_retries,
            fail_on_error=False,
            message_limit=spec.message_limit,
            time_limit=spec.time_limit,
            token_limit=spec.token_limit,
            max_samples=spec.max_samples,
            ctl_server=False,
            log_level="error",
            score=True,
            **spec.generate_config,
        )


def run_suite(  # noqa: PLR0913 - the options of `evalsuite run`'s runner, one each
    layout: Layout,
    spec: RunSpec,
    *,
    keys: KeySpec,
    store: Store,
    progress: bool = True,
    resume: str | None = None,
    run_id: str | None = None,
    shard: Shard | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
    attempts: Sequence[tuple[str, int]] | None = None,
    finish: bool = True,
    hard_stop: Callable[[RunInterrupted], None] | None = None,
    stop_within_s: float = STOP_WITHIN_S,
) -> RunResult:
    """Run `spec` (or resume run `resume`) and store every attempt.

    Order (docs/design/holdout-governance.md): every check that can fail (model, manifest
    and its recorded hashes, vault key, task functions); for a holdout run, the budget
    check and the ledger access in one step under the ledger's lock; then the vault is
    opened, tasks are built and the run row is stored; then inspect runs. A refusal or a
    failure before the run row leaves nothing stored, and a reserved look is voided.

    With `shard` (docs/design/sharded-runs.md), this process runs only its share of run
    `run_id` (or of run `resume`); the shards of one run share its row, and the run is
    judged complete, over all its attempts, by the shard that finds every shard complete.

    Args:
        layout: The project.
        spec: What to run; ignored when resuming (the stored spec is used).
        keys: Vault key locations (holdout runs).
        store: The results store.
        progress: Show a progress bar on stderr.
        resume: Id of an interrupted run to complete.
        run_id: The new run's id (default: made from the time); required with `shard`.
        shard: Run only this share of the run.
        now: Clock (tests).
        attempts: An adaptive run's (item id, epoch) attempts so far, this round's
            included (docs/design/adaptive.md): they replace ``epochs`` per item, and the
            ones already stored are not run again.
        finish: False for an adaptive run's round that may not be its last: the run stays
            ``running`` (its next round resumes it, spending no further holdout look).
        hard_stop: Ends the process with the interruption (the CLI's: print it, exit 130).
            Given, a run that inspect has not stopped `stop_within_s` seconds after SIGINT
            or SIGTERM is recorded as interrupted and handed to it (docs/design/run-limits.md);
            None (a library caller): the run waits for inspect, however long it takes.
        stop_within_s: Seconds inspect gets to stop after a signal when `hard_stop` is given.

    Returns:
        The run's record, health and mean. An invalid run is returned, not raised: the
        caller decides (the CLI exits 5). A shard whose run is not complete yet returns
        the health and mean of its own share, with ``run_complete`` False.

    Raises:
        IntegrityError: the manifest does not verify or was edited, the ledger is damaged,
            or a resumed holdout run has no access in the ledger (exit 3).
        HoldoutAccessError: the budget is spent, or the model's family changed (exit 7).
        UsageError: bad model, task file or task function; a shard whose settings differ
            from its run's, or a run id that is taken.
        RunInterrupted: SIGINT or SIGTERM stopped the eval; resume with `resume=run_id`.
    """
    record, spec, run_id = _what_to_run(store, spec, resume, run_id, shard, now)
    _check_adaptive(spec, run_id, attempts, shard)
    if record is not None and record.status == "complete" and shard is not None:
        return _stored_result(store, record, shard)  # a finished shard's retry: nothing to do
    lock = run_id if shard is None else f"{run_id}.{shard.lock_name}"
    with _run_lock(layout, lock), _SignalGuard(stop_within_s) as guard:
        try:
            if record is not None and shard is None:
                record = _resumable(store, run_id)  # another process may have completed it
            prepared = _adaptive_plan(_preflight(layout, spec, keys, store, record), spec, attempts)
        except KeyboardInterrupt:
            raise _not_started(run_id, guard, None) from None
        manifest = prepared.manifest
        provenance = record.provenance if record else collect_provenance(layout.root)
        look = None
        if spec.split == "holdout":
            guard.shielded = True  # the access is appended whole, or not at all
            look = _reserve_look(
                layout,
                spec,
                manifest,
                run_id,
                record is not None,
                provenance,
                now(),
                run_stored=(lambda: store.find_run(run_id) is not None) if shard else None,
                anchor=anchor_file(keys.key_dir, layout.root, manifest.suite),
            )
            guard.shielded = False
        # a sharded run's look is never voided: another shard may have opened the vault
        voidable = look if shard is None else None
        try:
            if guard.signalled:
                raise KeyboardInterrupt
            payloads = _open_items(layout, manifest, spec, keys)
            redact = _Redactor([p[1] for p in payloads.values()], active=look is not None)
            done = store.attempt_keys(run_id) if record is not None else set()
            share = shard.share(prepared.planned) if shard else prepared.planned
            pending = [p for p in share if p.key not in done]
            tasks = _build_tasks(prepared, pending, payloads, spec, run_id, redact)
            if record is None or shard is not None:
                made = _start_record(
                    spec, manifest, run_id, len(prepared.planned), now(), provenance
                )
                if shard is None:
                    store.create_run(made)
                    record = made
                else:
                    record = store.create_run_if_absent(made)
                    join_check(record, spec, shard)  # another shard may have made it
                    start_shard(store, record, shard)
        except BaseException as exc:
            guard.shielded = True
            if voidable is not None:
                _void_look(
                    layout,
                    voidable,
                    "the run failed before any holdout item reached the model: "
                    f"{type(exc).__name__}",
                    now(),
                )
            if isinstance(exc, KeyboardInterrupt):
                raise _not_started(run_id, guard, voidable) from None
            raise
        job = _Job(
            layout,
            spec,
            manifest,
            payloads,
            prepared.planned,
            record,
            store,
            look,
            resume is not None,
            prepared.rules,
            shard,
            prepared.limits,
        )
        if record is not None and record.planned != len(prepared.planned):
            store.update_run(run_id, planned=len(prepared.planned))  # an adaptive round
        _give_hard_stop(guard, job, hard_stop)
        return _run_locked(job, tasks, redact, guard, progress=progress, now=now, finish=finish)


def _check_adaptive(
    spec: RunSpec, run_id: str, attempts: Sequence[tuple[str, int]] | None, shard: Shard | None
) -> None:
    """Refuse to resume or shard an adaptive run: only its own rounds plan its attempts."""
    if spec.adaptive is not None and (attempts is None or shard is not None):
        raise UsageError(
            f"run {run_id} is adaptive: its rounds are planned by `evalsuite run --adaptive`, "
            "so it cannot be resumed or sharded (start a new adaptive run)"
        )


def _adaptive_plan(
    prepared: _Prepared, spec: RunSpec, attempts: Sequence[tuple[str, int]] | None
) -> _Prepared:
    """`prepared` with an adaptive run's attempts so far as its plan (None: unchanged)."""
    if attempts is None:
        return prepared
    items = list({p.item.id: p.item for p in prepared.planned}.values())
    return replace(prepared, planned=plan_attempts(items, spec, attempts))


def _what_to_run(
    store: Store,
    spec: RunSpec,
    resume: str | None,
    run_id: str | None,
    shard: Shard | None,
    now: Callable[[], datetime],
) -> tuple[RunRecord | None, RunSpec, str]:
    """(the stored run, if any; the spec to run; the run id), every refusal checked."""
    if resume is not None:
        record = _resumable(store, resume)
        stored = RunSpec.model_validate(record.spec)
        resume_check(record, stored, shard)
        return record, with_model_adapter(stored), record.run_id
    if shard is not None:
        spec = spec.model_copy(update={"shards": shard.count})
        if run_id is None:
            raise UsageError(
                f"--shard {shard} needs --run-id: every shard of a run is started with the "
                "same run id (e.g. the job array's id), so that they fill one run"
            )
    spec = with_model_adapter(spec)
    if run_id is None:
        return None, spec, _new_run_id(now())
    check_run_id(run_id)
    found = store.find_run(run_id)
    if found is None:
        return None, spec, run_id
    if shard is None:
        raise UsageError(
            f"run {run_id} already exists in the store {store.display_url}: complete it with "
            f"`evalsuite run --resume {run_id}`, or give another --run-id"
        )
    join_check(found, spec, shard)
    return found, spec, run_id


def _not_started(run_id: str, guard: _SignalGuard, look: LedgerEntry | None) -> RunInterrupted:
    voided = " and its holdout look was voided" if look is not None and not look.resumed else ""
    return RunInterrupted(
        f"run {run_id} was interrupted ({guard.name()}) before any attempt started: nothing "
        f"new was stored{voided}."
    )


@dataclass(frozen=True, slots=True)
class _Job:
    layout: Layout
    spec: RunSpec
    manifest: Manifest
    payloads: dict[str, tuple[str, Item]]
    planned: list[PlannedAttempt]
    record: RunRecord
    store: Store
    look: LedgerEntry | None
    resumed: bool
    rules: Mapping[str, ScoreRule] = field(default_factory=dict)
    shard: Shard | None = None
    limits: Mapping[str, LimitsInForce] = field(default_factory=dict)

    @property
    def share(self) -> list[PlannedAttempt]:
        """The attempts this process runs: its shard's share, or the whole plan."""
        return self.shard.share(self.planned) if self.shard else self.planned

    def kept(self) -> int:
        """Attempts of this process's share already stored."""
        keys = self.store.attempt_keys(self.record.run_id)
        return sum(p.key in keys for p in self.share)


def _interrupted(job: _Job, guard: _SignalGuard) -> RunInterrupted:
    guard.shielded = True  # a second signal must not cut the status update short
    run_id = job.record.run_id
    if job.shard is not None:
        stop_shard(job.store, job.record, job.shard)
    job.store.update_run(run_id, status="interrupted")
    kept = job.kept()
    look = " (a resumed holdout run spends no further look)" if job.look is not None else ""
    if job.shard is not None:
        return RunInterrupted(
            f"shard {job.shard} of run {run_id} was interrupted ({guard.name()}): {kept} of "
            f"the {len(job.share)} attempts of its share finished and are kept; it is stored "
            "as interrupted. Complete it by running the same command again, or "
            f"`evalsuite run --resume {run_id} --shard {job.shard}`{look}."
        )
    return RunInterrupted(
        f"run {run_id} was interrupted ({guard.name()}): {kept} of {len(job.planned)} "
        "attempts finished and are kept, the rest were not run; it is stored as interrupted. "
        f"Complete it with `evalsuite run --resume {run_id}`{look}."
    )


_DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO})
"""A full, over-quota, read-only or failing disk: the machine's fault, not the eval's."""


def _environment_failure(exc: BaseException) -> bool:
    """True when `exc` is the disk's or the results store's failure, not the eval's own."""
    return isinstance(exc, StoreError) or (isinstance(exc, OSError) and exc.errno in _DISK_ERRNOS)


def _mark_interrupted(job: _Job) -> bool:
    """Store the run (or this shard) as interrupted; False when the store refuses even that."""
    try:
        if job.shard is not None:
            stop_shard(job.store, job.record, job.shard)
        job.store.update_run(job.record.run_id, status="interrupted")
    except (StoreError, OSError):
        return False
    return True


def _kept_or_none(job: _Job) -> int | None:
    try:
        return job.kept()
    except (StoreError, OSError):
        return None


def _resume_command(job: _Job) -> str:
    run_id = job.record.run_id
    shard = f" --shard {job.shard}" if job.shard is not None else ""
    return f"`evalsuite run --resume {run_id}{shard}`"


def _store_failed(job: _Job, exc: BaseException, redact: _Redactor) -> RunStoppedError:
    """The disk or the store failed during or after the eval: stop, resumable (exit 2).

    The run is marked interrupted if the store takes the update; if it does not (a database
    server that is gone), the run still reads ``running``, which `--resume` accepts as well.
    """
    cause = redact(f"{type(exc).__name__}: {exc}")[:400]
    what = f"shard {job.shard} of run" if job.shard is not None else "run"
    kept = _kept_or_none(job)
    if _mark_interrupted(job):
        state = (
            f"{kept} finished attempt(s) are kept and it is stored as interrupted"
            if kept is not None
            else "it is stored as interrupted"
        )
    else:
        state = (
            "the store could not even be told the run stopped, so it still reads `running`; "
            "every attempt it holds is kept and a resume runs only the missing ones"
        )
    return RunStoppedError(
        f"{what} {job.record.run_id} stopped: its results could not be written ({cause}). "
        f"{state[0].upper()}{state[1:]}. Free space on the disk, or bring the results store "
        f"back (`evalsuite store info` checks it), then complete it with {_resume_command(job)}."
    )


def _give_hard_stop(
    guard: _SignalGuard, job: _Job, hard_stop: Callable[[RunInterrupted], None] | None
) -> None:
    """Let the guard stop `job` hard, with `hard_stop`, when inspect is late after a signal."""
    if hard_stop is not None:  # armed by a signal while inspect runs (`_SignalGuard`)
        guard.overdue = lambda: hard_stop(_overdue_interruption(job, guard))


def _overdue_interruption(job: _Job, guard: _SignalGuard) -> RunInterrupted:
    """The interruption recorded by the guard's timer, inspect still cancelling its samples."""
    late = (
        f" inspect was still finishing its cancelled samples {guard.stop_within_s:g} s after the "
        "signal, so the run stopped without them: a resume runs them again."
    )
    try:
        return RunInterrupted(f"{_interrupted(job, guard)}{late}")
    except (StoreError, OSError) as exc:
        return RunInterrupted(
            f"run {job.record.run_id} was interrupted ({guard.name()}) but could not be "
            f"recorded as interrupted ({type(exc).__name__}); it may still read `running`. "
            f"Its finished attempts are kept; complete it with {_resume_command(job)}.{late}"
        )


def _eval_failed(job: _Job, exc: Exception, redact: _Redactor, now: datetime) -> EvalsuiteError:
    """The eval raised: keep what finished, or store nothing if nothing did."""
    if _environment_failure(exc):
        return _store_failed(job, exc, redact)
    run_id = job.record.run_id
    cause = redact(f"{type(exc).__name__}: {exc}")[:300]
    kept = job.kept()
    if job.shard is not None:  # the run row is shared: never deleted by one shard
        stop_shard(job.store, job.record, job.shard)
        job.store.update_run(run_id, status="interrupted")
        return EvalsuiteError(
            f"shard {job.shard} of run {run_id} stopped: the eval failed ({cause}); {kept} "
            "finished attempt(s) of its share are kept and the shard is stored as "
            "interrupted. Fix the cause and run the same command again (or "
            f"`evalsuite run --resume {run_id} --shard {job.shard}`)."
        )
    if kept == 0 and not job.resumed:
        if job.look is not None:
            _void_look(job.layout, job.look, f"the eval failed to start: {cause}", now)
        job.store.delete_run(run_id)
        return EvalsuiteError(
            f"the eval failed before any attempt finished ({cause}); nothing was stored"
            + (" and the holdout look was voided" if job.look is not None else "")
            + ". Fix the cause and run again."
        )
    job.store.update_run(run_id, status="interrupted")
    return EvalsuiteError(
        f"run {run_id} stopped: the eval failed ({cause}); {kept} finished attempt(s) are "
        "kept and the run is stored as interrupted. Fix the cause and complete it with "
        f"`evalsuite run --resume {run_id}`."
    )


def _with_fault(
    advance: Callable[[AttemptRecord], None], kill: Callable[[int], None] | None
) -> Callable[[AttemptRecord], None]:
    """`advance`, then the injected kill of a lost-shard test (`KILL_SHARD_ENV`), if any."""
    if kill is None:
        return advance
    stored = 0

    def counted(record: AttemptRecord) -> None:
        nonlocal stored
        advance(record)
        stored += 1
        kill(stored)

    return counted


def _run_locked(
    job: _Job,
    tasks: list[Task],
    redact: _Redactor,
    guard: _SignalGuard,
    *,
    progress: bool,
    now: Callable[[], datetime],
    finish: bool = True,
) -> RunResult:
    layout, spec, manifest = job.layout, job.spec, job.manifest
    share, store = job.share, job.store
    run_id = job.record.run_id
    by_sample = {p.sample_id: p for p in share}
    label = f"{manifest.ref} {spec.split} · {spec.model}"
    if job.shard is not None:
        label += f" · shard {job.shard}"
    logs: list[EvalLog] = []
    with _progress(len(share), job.kept(), label, progress) as advance:
        sink = _Sink(
            store,
            run_id,
            by_sample,
            redact,
            spec.split == "holdout",
            _with_fault(advance, kill_hook(layout.state, run_id, job.shard)),
            guard,
            job.rules,
            job.limits,
        )
        try:
            if tasks:
                logs = _execute(layout, tasks, spec, run_id, sink)
        except (KeyboardInterrupt, asyncio.CancelledError):
            guard.eval_returned()
            raise _interrupted(job, guard) from None
        except Exception as exc:
            guard.eval_returned()
            guard.shielded = True
            raise _eval_failed(job, exc, redact, now()) from None
        guard.eval_returned()
        if guard.signalled or any(log.status == "cancelled" for log in logs):
            raise _interrupted(job, guard)
        guard.shielded = True
        try:
            # reconcile: samples the hook missed (a failed hook write), kept by the sink and,
            # for a dev run, in its log
            missed = [*sink.unrecorded, *(s for log in logs for s in log.samples or [])]
            for sample in missed:
                if str(sample.id) not in sink.seen:
                    sink.seen.add(str(sample.id))
                    sink.record(sample)
            _record_never_ran(store, run_id, share, logs, redact)
            if job.shard is not None and not finish_shard(store, job.record, job.shard):
                return _shard_result(job, sink.errors)  # other shards are still running
            frame = store.attempts(run_id)
            health = run_health(frame, planned=len(job.planned), threshold=spec.error_threshold)
            if finish:
                store.update_run(
                    run_id,
                    status="complete",
                    valid=health.valid,
                    error_rate=health.error_rate,
                    finished_at=now().isoformat(),
                )
        except (StoreError, OSError) as exc:  # a full disk, a database server gone
            raise _store_failed(job, exc, redact) from None
    return RunResult(
        run=store.get_run(run_id),
        health=health,
        mean=_mean(frame),
        resumed=job.resumed,
        hook_errors=sink.errors,
        shard=str(job.shard) if job.shard else None,
        shards_complete=job.shard.count if job.shard else None,
    )


def _mean(frame: pd.DataFrame) -> float:
    """Mean score over scored and limit attempts (NaN without any)."""
    counted = frame[frame["outcome"] != "harness_error"]["score"]
    return float(counted.mean()) if len(counted) else math.nan


def _shard_result(job: _Job, hook_errors: list[str]) -> RunResult:
    """A shard's share is done, the run is not: the share's own health and mean."""
    frame = job.store.attempts(job.record.run_id)
    keys = {p.key for p in job.share}
    pairs = zip(frame["item_id"], frame["epoch"], strict=True)
    mask = pd.Series([(item, int(epoch)) in keys for item, epoch in pairs], dtype=bool)
    mine = frame.loc[mask.to_numpy()]
    health = run_health(mine, planned=len(job.share), threshold=job.spec.error_threshold)
    if not job.share:  # more shards than attempts: an empty share is neither valid nor not
        health = replace(health, valid=None)
    complete = sum(s.status == "complete" for s in job.store.shards(job.record.run_id))
    return RunResult(
        run=job.store.get_run(job.record.run_id),
        health=health,
        mean=_mean(mine),
        resumed=job.resumed,
        hook_errors=hook_errors,
        shard=str(job.shard) if job.shard else None,
        run_complete=False,
        shards_complete=complete,
    )


def _stored_result(store: Store, record: RunRecord, shard: Shard) -> RunResult:
    """The result of a run that is complete already (a finished shard started again)."""
    frame = store.attempts(record.run_id)
    return RunResult(
        run=record,
        health=run_health(frame, planned=record.planned, threshold=record.error_threshold),
        mean=_mean(frame),
        shard=str(shard),
        shards_complete=shard.count,
    )


def stored_run_result(store: Store, record: RunRecord) -> RunResult:
    """The result of stored run `record` as a local run returns it.

    Health and mean over all its attempts: what `run --executor ray` prints once its shards
    completed the run.
    """
    frame = store.attempts(record.run_id)
    return RunResult(
        run=record,
        health=run_health(frame, planned=record.planned, threshold=record.error_threshold),
        mean=_mean(frame),
    )


def _record_never_ran(
    store: Store,
    run_id: str,
    planned: list[PlannedAttempt],
    logs: list[EvalLog],
    redact: Callable[[str], str],
) -> None:
    done = store.attempt_keys(run_id)
    failures = "; ".join(
        f"{log.eval.task}: {log.error.message.splitlines()[0]}"
        for log in logs
        if log.error is not None and log.error.message
    )
    reason = "not run: the eval ended before this attempt ran" + (
        f" ({redact(failures)[:300]})" if failures else ""
    )
    missing = [
        AttemptRecord(
            item_id=p.item.id,
            epoch=p.epoch,
            stratum=p.item.stratum,
            outcome="harness_error",
            score=math.nan,
            item_hash=p.item.hash,
            cluster=p.item.cluster,
            seed=p.seed,
            reason=reason,
        )
        for p in planned
        if p.key not in done
    ]
    store.record_attempts(run_id, missing)
