"""The `run` use case: a typed request, checked into a run spec, run through the runner.

`evalsuite run` parses its options into a `RunRequest` (one frozen dataclass per group of
options, as its ``--help`` shows them) and calls `execute_run`; a notebook builds the same
request::

    request = RunRequest("support@2.0.0", model=ModelOptions("evalsuite/improved"),
                         plan=RunPlan(epochs=2))
    outcome = execute_run(request, layout=layout, keys=keys, store=store)
    outcome.result.mean

`plan_run` checks the request (which options go together, what ``--resume`` takes) and turns
it into the runner's `RunSpec` without running anything; `execute_run` runs it: adaptively
through the injected `run_adaptive` (today `evalsuite.cli._adaptive_cmd.run_adaptive`, moving
to this layer), or as planned through `evalsuite.run.run_suite`.

The application layer imports the runner: orchestrating the stages is its job
(docs/architecture.md, "Where each stage lives"); it never imports inspect itself.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

from evalsuite._core.jsonout import JsonObject
from evalsuite.errors import InvalidRunError, UsageError
from evalsuite.manifest import parse_ref

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.analyse import AdaptiveRule
    from evalsuite.errors import RunInterrupted
    from evalsuite.manifest import KeySpec
    from evalsuite.run import RunResult, RunSpec, Shard
    from evalsuite.service._adaptive_result import AdaptiveResult
    from evalsuite.service._mechanism import MechanismOptions, PreparedMechanism, Release
    from evalsuite.store import Store

__all__ = [
    "AdaptiveOptions",
    "AdaptiveRunner",
    "FaultOptions",
    "GovernanceOptions",
    "HarnessOptions",
    "InspectOptions",
    "ModelOptions",
    "PlannedRun",
    "RunOutcome",
    "RunPlan",
    "RunRequest",
    "ShardOptions",
    "execute_run",
    "plan_run",
]


@dataclass(frozen=True, slots=True)
class RunPlan:
    """What is run: split, epochs, seed and which run (`run`'s "Run plan" options)."""

    split: Literal["dev", "holdout"] = "dev"
    epochs: int = 1
    seed: int = 0
    """Run seed; each (item, epoch) gets its own seed derived from it."""
    limit_items: int | None = None
    """Only the first N items of the split (``--limit``): quick checks, never for reporting."""
    run_id: str | None = None
    """The new run's id (default: made from the time); the same for every shard of a run."""
    resume: str | None = None
    """Complete this interrupted run: it runs with its stored settings."""


@dataclass(frozen=True, slots=True)
class ModelOptions:
    """The model under test and its generation settings ("Model and generation")."""

    model: str | None = None
    """Any inspect model, e.g. ``evalsuite/improved`` or ``openai/gpt-4o``."""
    model_args: Mapping[str, object] = field(default_factory=dict)
    """``-M KEY=VALUE``: arguments of the model's provider."""
    model_base_url: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    max_connections: int | None = None
    generate: Mapping[str, object] = field(default_factory=dict)
    """``-G KEY=VALUE``: any other field of inspect's ``GenerateConfig``."""

    def generate_config(self) -> dict[str, object]:
        """``-G`` settings with the named ones, checked against inspect's ``GenerateConfig``.

        Raises:
            UsageError: a named setting also given by ``-G``, a field inspect does not know,
                one that would change what is measured, or a value of the wrong type.
        """
        from evalsuite.run import check_generate_config

        config = dict(self.generate)
        for key, value in (
            ("temperature", self.temperature),
            ("max_tokens", self.max_tokens),
            ("max_connections", self.max_connections),
        ):
            if value is not None:
                if key in config:
                    raise UsageError(f"--{key.replace('_', '-')} and -G {key}=... both given")
                config[key] = value
        try:
            return check_generate_config(config)
        except ValueError as exc:
            raise UsageError(str(exc)) from None


@dataclass(frozen=True, slots=True)
class HarnessOptions:
    """Limits of an attempt and the harness's health ("Limits and harness health")."""

    message_limit: int | None = None
    time_limit: int | None = None
    """Seconds per sample."""
    token_limit: int | None = None
    tool_timeout: float = 30.0
    """Seconds before a tool call is a harness error."""
    max_retries: int = 2
    error_threshold: float = 0.05
    """Harness error rate above which the run is invalid (exit 5)."""


@dataclass(frozen=True, slots=True)
class InspectOptions:
    """inspect ``eval()`` options that do not change what is measured ("Inspect pass-through")."""

    task_args: Mapping[str, object] = field(default_factory=dict)
    """``-T KEY=VALUE``: only the task arguments a family lists in ``run_args``."""
    sandbox: str | None = None
    log_dir: str | None = None
    max_samples: int | None = None
    max_subprocesses: int | None = None
    max_sandboxes: int | None = None
    max_tasks: int | None = None
    sandbox_cleanup: bool = True


@dataclass(frozen=True, slots=True)
class GovernanceOptions:
    """The holdout ledger and budget ("Holdout governance")."""

    purpose: str | None = None
    """Why this run is made (recorded in the holdout ledger)."""
    model_family: str | None = None
    """Model family for the holdout budget (default: the model without checkpoint suffixes)."""
    override_reason: str | None = None
    """Run past the holdout budget; the reason is recorded in the ledger."""
    key_file: Path | None = None
    """Vault key file (default: ``$EVALSUITE_KEY_DIR/<suite>.key``); the caller's `KeySpec`."""
    mechanism: MechanismOptions | None = None
    """``--mechanism``: a reusable-holdout mechanism answers instead of the exact holdout score
    (docs/design/reusable-holdout.md)."""


@dataclass(frozen=True, slots=True)
class AdaptiveOptions:
    """An adaptive run's stopping rule and budget ("Adaptive", docs/design/adaptive.md)."""

    adaptive: bool = False
    target_halfwidth: float | None = None
    versus: str | None = None
    margin: float = 0.02
    max_epochs: int | None = None
    max_calls: int | None = None
    estimand: str | None = None
    """``--estimand items|population`` (with ``--target-halfwidth``; None: items)."""

    def rule(self, *, seed: int, conflicts: Mapping[str, object]) -> AdaptiveRule | None:
        """The adaptive rule (None without ``--adaptive``).

        Args:
            seed: The run's seed (its rounds draw items with it).
            conflicts: Flags that plan attempts another way, with whether each was given.

        Raises:
            UsageError: an adaptive flag without ``--adaptive``, or ``--adaptive`` with a
                flag of `conflicts` (``--epochs``, ``--resume``, ``--shard``).
        """
        if not self.adaptive:
            given = [
                flag
                for flag, value in (
                    ("--target-halfwidth", self.target_halfwidth),
                    ("--versus", self.versus),
                    ("--max-epochs", self.max_epochs),
                    ("--max-calls", self.max_calls),
                    ("--estimand", self.estimand),
                )
                if value is not None
            ]
            if given:
                raise UsageError(
                    f"{', '.join(given)} only apply to adaptive runs: add --adaptive (or drop them)"
                )
            return None
        clashing = [flag for flag, value in conflicts.items() if value]
        if clashing:
            raise UsageError(
                f"--adaptive plans its own attempts in rounds; drop {', '.join(clashing)} (an "
                "adaptive run cannot be resumed or sharded, and --max-epochs is its budget)"
            )
        # only here: the adaptive rule's module imports scipy.stats (its final interval), about
        # a second of CPU that a planned run does not need (docs/design/run-speed.md)
        from evalsuite.analyse import AdaptiveRule

        return AdaptiveRule(
            target_halfwidth=self.target_halfwidth,
            versus=self.versus,
            margin=self.margin,
            max_epochs=self.max_epochs,
            max_calls=self.max_calls,
            seed=seed,
            estimand="item_population" if self.estimand == "population" else "suite_items",
        )


@dataclass(frozen=True, slots=True)
class ShardOptions:
    """One share of a run split over processes ("Shards", docs/design/sharded-runs.md)."""

    shard: Shard | None = None


@dataclass(frozen=True, slots=True)
class FaultOptions:
    """Faults injected into environment tools, for testing the harness ("Fault injection")."""

    rate: float = 0.0
    """Share of (item, epoch) episodes whose environment tools fail."""
    kind: Literal["error", "hang"] = "error"
    mode: Literal["persistent", "transient"] = "persistent"


@dataclass(frozen=True, slots=True)
class RunRequest:
    """Everything `evalsuite run` is asked: the suite version and one object per option group."""

    ref: str | None = None
    """``SUITE@X.Y.Z`` (None with ``plan.resume``)."""
    plan: RunPlan = field(default_factory=RunPlan)
    model: ModelOptions = field(default_factory=ModelOptions)
    harness: HarnessOptions = field(default_factory=HarnessOptions)
    inspect: InspectOptions = field(default_factory=InspectOptions)
    governance: GovernanceOptions = field(default_factory=GovernanceOptions)
    adaptive: AdaptiveOptions = field(default_factory=AdaptiveOptions)
    shards: ShardOptions = field(default_factory=ShardOptions)
    faults: FaultOptions = field(default_factory=FaultOptions)
    progress: bool = True
    """Show inspect's progress display."""


@dataclass(frozen=True, slots=True)
class PlannedRun:
    """A checked request: the runner's spec and how it runs; nothing has run yet."""

    spec: RunSpec
    """What to run (a placeholder when resuming: the stored spec is used)."""
    rule: AdaptiveRule | None
    """The adaptive rule, or None for a planned run."""
    resume: str | None
    run_id: str | None
    shard: Shard | None


class AdaptiveRunner(Protocol):
    """Runs a spec adaptively under a rule: (the finished run's result, its summary)."""

    def __call__(  # noqa: PLR0913 - run_suite's options, as the adaptive runner takes them
        self,
        layout: Layout,
        spec: RunSpec,
        rule: AdaptiveRule,
        *,
        keys: KeySpec,
        store: Store,
        progress: bool,
        run_id: str | None,
        hard_stop: Callable[[RunInterrupted], None] | None = ...,
        stop_within_s: float | None = ...,
    ) -> tuple[RunResult, AdaptiveResult]: ...


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What a run produced: the runner's result and, for an adaptive run, its summary."""

    result: RunResult
    adaptive: AdaptiveResult | None = None
    """What the adaptive run found (rounds, intervals, why it stopped; `adaptive_view`
    renders it, `run --json`'s ``adaptive``); None for a planned run."""
    release: Release | None = None
    """A ``--mechanism`` run's answer, shown instead of the exact holdout score."""

    @property
    def invalid(self) -> InvalidRunError | None:
        """The error `run` exits with (5) when the complete run is invalid, else None.

        A shard whose run is not complete judges nothing: its share alone is not the run.
        """
        health = self.result.health
        if health.valid or not self.result.run_complete:
            return None
        return InvalidRunError(
            f"run {self.result.run.run_id} is invalid: {health.error_rate:.1%} harness errors > "
            f"{health.threshold:.0%}; it is stored, but comparisons refuse it. Fix the harness "
            "and run again."
        )


def _check_sandbox(sandbox: str | None) -> None:
    """``--sandbox TYPE`` or ``TYPE:CONFIG``: refuse an empty type or config."""
    if sandbox is None:
        return
    kind, sep, config = sandbox.partition(":")
    if not kind.strip() or (sep and not config.strip()):
        raise UsageError(
            f"--sandbox expects TYPE or TYPE:CONFIG, e.g. local, docker or "
            f"docker:compose.yaml (got {sandbox!r})"
        )


def plan_run(request: RunRequest) -> PlannedRun:
    """Check `request` and turn it into the runner's spec; nothing runs, nothing is stored.

    Raises:
        UsageError: options that do not go together (``--resume`` with ``--run-id``, a
            suite, a model or settings of its own; ``--shard`` without a run id; the
            adaptive flags), a reference without its exact version, a generation setting
            inspect does not take or that would change what is measured, a malformed
            ``--sandbox``.
    """
    from evalsuite.run import RunSpec

    plan, model, inspect = request.plan, request.model, request.inspect
    shard = request.shards.shard
    generate = model.generate_config()
    _check_sandbox(inspect.sandbox)
    if plan.resume is not None and plan.run_id is not None:
        raise UsageError("--resume names the run already; give no --run-id with it")
    if shard is not None and plan.resume is None and plan.run_id is None:
        raise UsageError(
            f"--shard {shard} needs --run-id ID: every shard of a run is started with the same "
            "run id (e.g. the job array's id), so that they fill one run"
        )
    options: JsonObject = {
        "task_args": dict(inspect.task_args),
        "generate_config": generate,
        "sandbox": inspect.sandbox,
        "log_dir": inspect.log_dir,
        "model_base_url": model.model_base_url,
        "max_subprocesses": inspect.max_subprocesses,
        "max_sandboxes": inspect.max_sandboxes,
        "max_tasks": inspect.max_tasks,
        "sandbox_cleanup": inspect.sandbox_cleanup,
    }
    if plan.resume is None:
        if request.ref is None or model.model is None:
            raise UsageError("give SUITE@X.Y.Z and --model, or --resume RUN_ID")
        suite, version = parse_ref(request.ref)
        if version is None:
            raise UsageError(f"give the exact version to run, e.g. {suite}@1.0.0")
        harness, governance, faults = request.harness, request.governance, request.faults
        spec = RunSpec(
            suite=suite,
            version=version,
            model=model.model,
            split=plan.split,
            epochs=plan.epochs,
            seed=plan.seed,
            model_args=dict(model.model_args),
            max_retries=harness.max_retries,
            error_threshold=harness.error_threshold,
            fault_rate=faults.rate,
            fault_kind=faults.kind,
            fault_mode=faults.mode,
            tool_timeout=harness.tool_timeout,
            message_limit=harness.message_limit,
            time_limit=harness.time_limit,
            token_limit=harness.token_limit,
            max_samples=inspect.max_samples,
            limit_items=plan.limit_items,
            purpose=governance.purpose,
            model_family=governance.model_family,
            override_reason=governance.override_reason,
            **options,
        )
    else:
        if request.ref is not None or model.model is not None:
            raise UsageError("--resume takes the run's stored settings; give no SUITE or --model")
        given = [
            *(["model_args"] if model.model_args else []),
            *[k for k, v in options.items() if v not in (None, {}, True)],
        ]
        if given:
            raise UsageError(
                f"--resume takes the run's stored settings; drop {', '.join(given)} (a resumed "
                "run runs as it was started)"
            )
        spec = RunSpec(suite="-", version="0.0.0", model="-")
    rule = request.adaptive.rule(
        seed=plan.seed,
        conflicts={
            "--epochs": plan.epochs != 1,
            "--resume": plan.resume is not None,
            "--shard": shard,
        },
    )
    return PlannedRun(spec=spec, rule=rule, resume=plan.resume, run_id=plan.run_id, shard=shard)


def execute_run(
    request: RunRequest,
    *,
    layout: Layout,
    keys: KeySpec,
    store: Store | Callable[[], Store],
    run_adaptive: AdaptiveRunner | None = None,
    hard_stop: Callable[[RunInterrupted], None] | None = None,
    stop_within_s: float | None = None,
) -> RunOutcome:
    """Run `request` and store every attempt: adaptively under its rule, or as planned.

    Args:
        request: What to run (`plan_run` checks it first).
        layout: The project.
        keys: Where the vault key is (``request.governance.key_file`` is the caller's to
            put in it).
        store: The results store every attempt goes into, or a function that opens it:
            called once the request is checked, so that a refused request makes no store.
        run_adaptive: Runs an adaptive request round by round (required for one).
        hard_stop: Ends the process when inspect does not stop within `stop_within_s`
            seconds of SIGINT or SIGTERM (docs/design/run-limits.md).
        stop_within_s: Those seconds (default ``evalsuite.run.STOP_WITHIN_S``).

    Raises:
        UsageError: see `plan_run`; an adaptive request without `run_adaptive`; and
            whatever the runner raises (budget refusals, drift, interrupts: their own
            exit codes).
    """
    from evalsuite.run import STOP_WITHIN_S, run_suite

    planned = plan_run(request)
    within = STOP_WITHIN_S if stop_within_s is None else stop_within_s
    if callable(store):
        store = store()
    prepared = _prepare_mechanism(request, planned, layout, store)
    if planned.rule is not None:
        if run_adaptive is None:
            raise UsageError(
                "an adaptive run needs its round-by-round runner: pass run_adaptive= to "
                "execute_run (the command line passes its own)"
            )
        result, summary = run_adaptive(
            layout,
            planned.spec,
            planned.rule,
            keys=keys,
            store=store,
            progress=request.progress,
            run_id=planned.run_id,
            hard_stop=hard_stop,
            stop_within_s=within,
        )
        return RunOutcome(result=result, adaptive=summary)
    result = run_suite(
        layout,
        planned.spec,
        keys=keys,
        store=store,
        progress=request.progress,
        resume=planned.resume,
        run_id=planned.run_id,
        shard=planned.shard,
        hard_stop=hard_stop,
        stop_within_s=within,
    )
    if prepared is None:
        return RunOutcome(result=result)
    from evalsuite.service._mechanism import release_answer

    return RunOutcome(
        result=result, release=release_answer(layout, keys.key_dir, store, prepared, result)
    )


def _prepare_mechanism(
    request: RunRequest, planned: PlannedRun, layout: Layout, store: Store
) -> PreparedMechanism | None:
    """``--mechanism``: everything that can refuse, checked before the look is spent."""
    from evalsuite.service._mechanism import prepare_mechanism, with_suite_default

    options = request.governance.mechanism
    spec = planned.spec
    if request.plan.split == "holdout":
        # the suite's [holdout_mechanism], frozen in its manifest, answers when none is given
        from evalsuite.manifest import load_manifest_summary

        declared = load_manifest_summary(layout, spec.suite, spec.version).holdout_mechanism
        ref = f"{spec.suite}@{spec.version}"
        options = with_suite_default(options, declared, ref=ref)
        if declared is not None and (planned.resume or planned.shard or planned.rule):
            raise UsageError(
                f"{ref} declares [holdout_mechanism] name = {declared['name']!r}, which answers "
                "a whole holdout run: its holdout runs cannot use --resume, --shard or "
                "--adaptive. No look was spent."
            )
    elif options is not None and options.none:
        options = None
    if options is None or options.name is None:
        return None
    if request.plan.split != "holdout" or planned.resume or planned.shard or planned.rule:
        raise UsageError(
            f"--mechanism {options.name} answers a whole holdout run: use it with --split "
            "holdout, without --resume, --shard or --adaptive"
        )

    return prepare_mechanism(
        layout,
        store,
        suite=spec.suite,
        version=spec.version,
        model=spec.model,
        model_family=request.governance.model_family,
        options=options,
    )
