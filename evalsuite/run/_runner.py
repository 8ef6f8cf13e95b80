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
import importlib.util
import math
import re
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from filelock import FileLock, Timeout
from inspect_ai import Task, task_with
from inspect_ai import eval as inspect_eval
from inspect_ai.log import EvalLog, EvalSample
from inspect_ai.scorer import Scorer, accuracy, scorer, stderr
from inspect_ai.solver import Solver
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from evalsuite._core.layout import Layout
from evalsuite._core.seeds import derive_seed
from evalsuite.errors import (
    EvalsuiteError,
    IntegrityError,
    UsageError,
)
from evalsuite.holdout import (
    append_entry,
    budget_status,
    check_budget,
    model_family,
    read_ledger,
)
from evalsuite.manifest import (
    Item,
    KeySpec,
    Manifest,
    ManifestItem,
    item_hash,
    item_texts,
    load_holdout_items,
    load_manifest,
    load_suite,
    load_suite_items,
    resolve_key,
    verify,
)
from evalsuite.manifest._schema import ManifestFamily
from evalsuite.run._episode import EPISODE_KEY, EpisodeSpec, episode_setup
from evalsuite.run._hooks import active_sink
from evalsuite.run._offline import inspect_model_args, with_model_adapter
from evalsuite.run._outcomes import classify_sample
from evalsuite.run._privacy import private_inspect_env
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._samples import item_to_sample
from evalsuite.run._scores import ScorerInfo, ScoreRule, family_rules, scorer_infos
from evalsuite.run._spec import RunSpec
from evalsuite.store import AttemptRecord, Health, RunRecord, Store, run_health

__all__ = [
    "PlannedAttempt",
    "RunInterrupted",
    "RunResult",
    "load_task_function",
    "plan_attempts",
    "run_suite",
]

_SEP = "::"
SE_CLUSTER_KEY = "evalsuite_se_cluster"
"""Sample metadata key naming the unit (cluster or item) inspect's stderr() clusters on."""


class RunInterrupted(EvalsuiteError):
    """The run stopped before every planned attempt ran; it can be resumed."""

    exit_code = 130


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

    def to_dict(self) -> dict[str, Any]:
        """The `run --json` payload (DESIGN.md: run_id, valid, mean, harness)."""
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
        }


def plan_attempts(items: Sequence[ManifestItem], spec: RunSpec) -> list[PlannedAttempt]:
    """Every (item, epoch) of the run with its seed and injected fault, in a stable order."""
    planned = []
    for item in sorted(items, key=lambda i: i.id):
        for epoch in range(1, spec.epochs + 1):
            draw = derive_seed(spec.seed, "fault", item.id, epoch) / 2**63
            fault: Literal["none", "error", "hang"] = (
                spec.fault_kind if draw < spec.fault_rate else "none"
            )
            planned.append(
                PlannedAttempt(
                    item=item,
                    epoch=epoch,
                    seed=derive_seed(spec.seed, item.id, epoch),
                    fault=fault,
                )
            )
    return planned


def _new_run_id(now: datetime) -> str:
    return f"{now.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(3)}"


def load_task_function(layout: Layout, suite: str, family: ManifestFamily) -> Callable[..., Task]:
    """Import a family's task file by path and return its inspect @task function."""
    file_part, _, name = family.task.partition("@")
    path = layout.tasks / file_part
    if not path.is_file():
        raise UsageError(f"task file of family {family.name!r} not found: {path}")
    module_name = f"evalsuite_tasks_{suite}_{family.name}".replace("-", "_")
    module = sys.modules.get(module_name)
    if module is None or getattr(module, "__file__", None) != str(path):
        spec = importlib.util.spec_from_file_location(module_name, path)
        if spec is None or spec.loader is None:
            raise UsageError(f"cannot import task file {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    function = getattr(module, name or family.name, None)
    if not callable(function):
        raise UsageError(
            f"{path} defines no task function {name or family.name!r}; name it in the suite "
            f'file as task = "{file_part}@<function>"'
        )
    return function  # type: ignore[no-any-return]  # an inspect @task function


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
        pairs = [(e.family, e.item) for e in load_suite_items(layout, suite)]
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


class _Sink:
    """Turns finished inspect samples into stored attempts, and counts progress."""

    def __init__(
        self,
        store: Store,
        run_id: str,
        planned: dict[str, PlannedAttempt],
        redact: _Redactor,
        holdout: bool,
        on_progress: Callable[[AttemptRecord], None],
        rules: Mapping[str, ScoreRule] | None = None,
    ) -> None:
        self.store = store
        self.rules = dict(rules or {})
        self.run_id = run_id
        self.planned = planned
        self.redact = redact
        self.holdout = holdout
        self.on_progress = on_progress
        self.seen: set[str] = set()
        self.errors: list[str] = []

    def record(self, sample: EvalSample) -> AttemptRecord | None:
        attempt = self.planned.get(str(sample.id))
        if attempt is None:
            return None
        classified = classify_sample(
            sample,
            redact=self.redact,
            keep_text=not self.holdout,
            rule=self.rules.get(attempt.item.family),
        )
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
    layout: Layout,
    manifest: Manifest,
    pending: Sequence[PlannedAttempt],
    payloads: dict[str, tuple[str, Item]],
    spec: RunSpec,
    run_id: str,
) -> list[Task]:
    families = {f.name: f for f in manifest.families}
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
        function = load_task_function(layout, manifest.suite, families[family_name])
        base = function(dataset=samples)
        setup: list[Solver] = [episode_setup()]
        if isinstance(base.setup, Sequence):
            setup.extend(base.setup)
        elif base.setup is not None:
            setup.append(base.setup)
        tasks.append(
            task_with(
                base,
                name=f"{manifest.suite}-{family_name}",
                version=manifest.manifest_hash,
                setup=setup,
                epochs=1,
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


def _scoring_task(
    layout: Layout,
    manifest: Manifest,
    family: ManifestFamily,
    payloads: dict[str, tuple[str, Item]],
) -> Task | None:
    """The family's task built on one of its items, to read its scorers before the run."""
    first = next((item for fam, item in payloads.values() if fam == family.name), None)
    if first is None:
        return None
    function = load_task_function(layout, manifest.suite, family)
    return function(dataset=[item_to_sample(first.payload())])


@contextmanager
def _progress(
    total: int, done: int, label: str, enabled: bool
) -> Iterator[Callable[[AttemptRecord], None]]:
    if not enabled:
        yield lambda _record: None
        return
    counts = {"harness_error": 0, "limit": 0}
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


def _check_model(spec: RunSpec) -> None:
    from inspect_ai.model import get_model

    try:
        get_model(spec.model, **spec.model_args)
    except Exception as exc:
        raise UsageError(
            f"cannot use model {spec.model!r}: {type(exc).__name__}: {exc}. Give an inspect "
            "model such as evalsuite/improved, or provider/model with its API key set."
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


def _prepare_run(
    layout: Layout, spec: RunSpec, keys: KeySpec
) -> tuple[Manifest, dict[str, tuple[str, Item]]]:
    report = verify(
        layout, spec.suite, spec.version, keys=keys, skip_holdout=spec.split != "holdout"
    )
    if not report.ok:
        problems = report.problems + [f"{p.kind} {p.split} item {p.item_id}" for p in report.items]
        problems += report.errors
        raise (IntegrityError if report.integrity_failed else UsageError)(
            f"{spec.suite}@{spec.version} does not verify, refusing to run: "
            + "; ".join(problems[:10])
            + (" ..." if len(problems) > 10 else "")
            + f" (run `evalsuite verify {spec.suite}@{spec.version}` for details)"
        )
    manifest = load_manifest(layout, spec.suite, spec.version)
    return manifest, _items_of_split(layout, manifest, spec.split, keys)


def _select_items(manifest: Manifest, spec: RunSpec) -> list[ManifestItem]:
    items = sorted(manifest.items_by_split(spec.split), key=lambda i: i.id)
    return items[: spec.limit_items] if spec.limit_items else items


def _family(spec: RunSpec) -> str:
    return spec.model_family or model_family(spec.model)


def _check_holdout_budget(layout: Layout, spec: RunSpec) -> None:
    """Refuse (exit 7) before the vault is opened when the budget is spent."""
    manifest = load_manifest(layout, spec.suite, spec.version)
    status = budget_status(
        read_ledger(layout.ledger_file(spec.suite)),
        suite=spec.suite,
        version=spec.version,
        budget=manifest.holdout_budget,
    )
    check_budget(status, _family(spec), override_reason=spec.override_reason)


def _log_access(
    layout: Layout, spec: RunSpec, record: RunRecord, *, resumed: bool, now: datetime
) -> None:
    append_entry(
        layout.ledger_file(spec.suite),
        {
            "run_id": record.run_id,
            "suite": spec.suite,
            "version": spec.version,
            "manifest_hash": record.manifest_hash or "",
            "model": spec.model,
            "model_family": _family(spec),
            "user": str(record.provenance.get("user", "unknown")),
            "host": str(record.provenance.get("host", "unknown")),
            "at": now.isoformat(),
            "purpose": spec.purpose,
            "override_reason": spec.override_reason,
            "resumed": resumed,
        },
    )


def _start_record(
    layout: Layout, spec: RunSpec, manifest: Manifest, planned: int, now: datetime
) -> RunRecord:
    return RunRecord(
        run_id=_new_run_id(now),
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
        provenance=collect_provenance(layout.root),
    )


def _execute(
    layout: Layout,
    tasks: list[Task],
    spec: RunSpec,
    run_id: str,
    sink: _Sink,
) -> list[EvalLog]:
    holdout = spec.split == "holdout"
    log_dir = f"memory://evalsuite/{run_id}" if holdout else str(layout.state / "logs" / run_id)
    with private_inspect_env(holdout=holdout), active_sink(sink):
        return inspect_eval(
            tasks,
            model=spec.model,
            model_args=inspect_model_args(spec),
            log_dir=log_dir,
            log_format="json",
            log_realtime=False,
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
        )


def run_suite(
    layout: Layout,
    spec: RunSpec,
    *,
    keys: KeySpec,
    store: Store,
    progress: bool = True,
    resume: str | None = None,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> RunResult:
    """Run `spec` (or resume run `resume`) and store every attempt.

    Args:
        layout: The project.
        spec: What to run; ignored when resuming (the stored spec is used).
        keys: Vault key locations (holdout runs).
        store: The results store.
        progress: Show a progress bar on stderr.
        resume: Id of an interrupted run to complete.
        now: Clock (tests).

    Returns:
        The run's record, health and mean. An invalid run is returned, not raised: the
        caller decides (the CLI exits 5).

    Raises:
        IntegrityError: the manifest does not verify (exit 3).
        UsageError: bad model or task file.
        RunInterrupted: the eval was cancelled; resume with `resume=run_id`.
    """
    record: RunRecord | None = None
    if resume is not None:
        record = store.get_run(resume)
        if record.source != "evalsuite":
            raise UsageError(f"run {record.run_id} was ingested, not run: nothing to resume")
        if record.status == "complete":
            raise UsageError(f"run {record.run_id} is complete: nothing to resume")
        spec = RunSpec.model_validate(record.spec)
    spec = with_model_adapter(spec)
    _check_model(spec)
    _check_model_knows_suite(layout, spec)
    if spec.split == "holdout" and record is None:
        _check_holdout_budget(layout, spec)
    manifest, payloads = _prepare_run(layout, spec, keys)
    rules = family_rules(manifest, lambda family: _scoring_task(layout, manifest, family, payloads))
    if record is not None and record.manifest_hash != manifest.manifest_hash:
        raise IntegrityError(
            f"run {record.run_id} ran on manifest {record.manifest_hash}, but "
            f"{manifest.ref} now hashes to {manifest.manifest_hash}; it cannot be resumed"
        )
    planned = plan_attempts(_select_items(manifest, spec), spec)
    resumed = record is not None
    if record is None:
        record = _start_record(layout, spec, manifest, len(planned), now())
        store.create_run(record)
    run_id = record.run_id
    if spec.split == "holdout":
        _log_access(layout, spec, record, resumed=resumed, now=now())
    lock = FileLock(str(layout.state / "locks" / f"{run_id}.lock"))
    (layout.state / "locks").mkdir(parents=True, exist_ok=True)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise UsageError(f"run {run_id} is being executed by another process") from None
    job = _Job(layout, spec, manifest, payloads, planned, record, store, rules)
    try:
        return _run_locked(job, progress=progress, resumed=resume is not None, now=now)
    finally:
        lock.release()


@dataclass(frozen=True, slots=True)
class _Job:
    layout: Layout
    spec: RunSpec
    manifest: Manifest
    payloads: dict[str, tuple[str, Item]]
    planned: list[PlannedAttempt]
    record: RunRecord
    store: Store
    rules: Mapping[str, ScoreRule] = field(default_factory=dict)


def _run_locked(
    job: _Job, *, progress: bool, resumed: bool, now: Callable[[], datetime]
) -> RunResult:
    layout, spec, manifest, payloads = job.layout, job.spec, job.manifest, job.payloads
    planned, store = job.planned, job.store
    run_id = job.record.run_id
    done = store.attempt_keys(run_id)
    pending = [p for p in planned if p.key not in done]
    by_sample = {p.sample_id: p for p in planned}
    redact = _Redactor([payloads[i][1] for i in payloads], active=spec.split == "holdout")
    label = f"{manifest.ref} {spec.split} · {spec.model}"
    logs: list[EvalLog] = []
    with _progress(len(planned), len(planned) - len(pending), label, progress) as advance:
        sink = _Sink(store, run_id, by_sample, redact, spec.split == "holdout", advance, job.rules)
        if pending:
            tasks = _build_tasks(layout, manifest, pending, payloads, spec, run_id)
            try:
                logs = _execute(layout, tasks, spec, run_id, sink)
            except KeyboardInterrupt:
                store.update_run(run_id, status="interrupted")
                raise RunInterrupted(
                    f"run {run_id} interrupted; resume with `evalsuite run --resume {run_id}`"
                ) from None
            for log in logs:  # reconcile: samples the hook missed (a failed hook write)
                for sample in log.samples or []:
                    if str(sample.id) not in sink.seen:
                        sink.record(sample)
    if any(log.status == "cancelled" for log in logs):
        store.update_run(run_id, status="interrupted")
        raise RunInterrupted(
            f"run {run_id} was cancelled; resume with `evalsuite run --resume {run_id}`"
        )
    _record_never_ran(store, run_id, planned, logs, redact)
    frame = store.attempts(run_id)
    health = run_health(frame, planned=len(planned), threshold=spec.error_threshold)
    store.update_run(
        run_id,
        status="complete",
        valid=health.valid,
        error_rate=health.error_rate,
        finished_at=now().isoformat(),
    )
    counted = frame[frame["outcome"] != "harness_error"]["score"]
    mean = float(counted.mean()) if len(counted) else math.nan
    return RunResult(
        run=store.get_run(run_id),
        health=health,
        mean=mean,
        resumed=resumed,
        hook_errors=sink.errors,
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
