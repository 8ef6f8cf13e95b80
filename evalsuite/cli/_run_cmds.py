"""Commands of the run stage: `run`, `runs`, `ingest`."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import math
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import click
from rich.text import Text

from evalsuite.cli._common import (
    Context,
    GroupedCommand,
    console,
    emit_json,
    exit_after_output,
    handle_errors,
    hard_exit,
    json_option,
    key_file_option,
    option_group,
    pass_context,
    print_top_errors,
)
from evalsuite.cli._grader_views import audit_field, mark
from evalsuite.cli._views import print_view
from evalsuite.errors import UsageError
from evalsuite.service import RUNS_SHOWN, adaptive_view, fmt
from evalsuite.store import default_store_url

if TYPE_CHECKING:
    from evalsuite.run import RunResult
    from evalsuite.service import (
        AdaptiveOptions,
        AdaptiveResult,
        FaultOptions,
        GovernanceOptions,
        HarnessOptions,
        InspectOptions,
        MechanismOptions,
        ModelOptions,
        RunOutcome,
        RunPlan,
        ShardOptions,
    )
    from evalsuite.store import Store

__all__ = ["ingest_cmd", "open_store", "parse_model_args", "run_cmd", "runs_cmd"]


def open_store(ctx: Context, *, create: bool = True) -> Store:
    """The store of this project (``$EVALSUITE_STORE`` or `.evalsuite/results.sqlite`).

    ``create=False`` for the commands that only read: a SQLite store that does not exist is
    read as empty and left uncreated (`Store.missing`); a run asked of it is "not found",
    naming the absent store.
    """
    from evalsuite.store import Store  # here: SQLAlchemy and pandas, which `runs` does without

    return Store(ctx.store_url or default_store_url(ctx.layout.state), create=create)


_EXAMPLES = {"-M": "-M accuracy=0.7", "-T": "-T sandbox_type=local", "-G": "-G top_p=0.9"}
"""An example of each KEY=VALUE option, for the message that refuses a malformed one."""


def parse_model_args(pairs: tuple[str, ...], flag: str = "-M") -> dict[str, object]:
    """``-M KEY=VALUE`` pairs as a dict (values parsed as JSON when they are JSON).

    Raises:
        UsageError: a pair without ``=`` or a key, a key that is not a name (letters, digits
            and underscores: every key becomes a keyword argument of inspect's), or a key
            given twice.
    """
    example = _EXAMPLES.get(flag, f"{flag} name=value")
    args: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(
                f"{flag} expects KEY=VALUE (got {pair!r}): a name, '=', then the value, e.g. "
                f"{example}; give {flag} once per argument"
            )
        if not key.isidentifier():
            hint = f"; did you mean {key.replace('-', '_')}?" if "-" in key else ""
            raise UsageError(
                f"{flag} expects KEY=VALUE with KEY a name of letters, digits and underscores "
                f"(got key {key!r} in {pair!r}), e.g. {example}{hint}"
            )
        if key in args:
            raise UsageError(
                f"{flag} {key}=... is given twice ({key}={args[key]!r} and {pair!r}); give each "
                "argument once"
            )
        try:
            args[key] = json.loads(value)
        except json.JSONDecodeError:
            args[key] = value
    return args


def _ledger_note(ctx: Context, suite: str | None, split: str | None) -> None:
    """After a holdout run: say on stderr when the access ledger is not committed to git."""
    if split != "holdout" or suite is None:
        return
    from evalsuite.holdout import ledger_tracking_warning

    path = ctx.layout.ledger_file(suite)
    warning = ledger_tracking_warning(path, path.relative_to(ctx.layout.root).as_posix())
    if warning is not None:
        click.echo(f"note: {warning}", err=True)


# `run`'s options, one group per concern (the headings of `evalsuite run --help`); each group
# reaches `run_cmd` as one of the service's typed option objects (evalsuite/service/_run.py)


def _plan(
    split: Literal["dev", "holdout"],
    epochs: int,
    seed: int,
    limit_items: int | None,
    run_id: str | None,
    resume: str | None,
) -> RunPlan:
    from evalsuite.service import RunPlan

    return RunPlan(split, epochs, seed, limit_items, run_id, resume)


def _model(
    model: str | None,
    model_arg: tuple[str, ...],
    model_base_url: str | None,
    temperature: float | None,
    max_tokens: int | None,
    max_connections: int | None,
    generate_arg: tuple[str, ...],
) -> ModelOptions:
    from evalsuite.service import ModelOptions

    return ModelOptions(
        model=model,
        model_args=parse_model_args(model_arg, "-M"),
        model_base_url=model_base_url,
        temperature=temperature,
        max_tokens=max_tokens,
        max_connections=max_connections,
        generate=parse_model_args(generate_arg, "-G"),
    )


def _harness(
    message_limit: int | None,
    time_limit: int | None,
    token_limit: int | None,
    tool_timeout: float,
    max_retries: int,
    error_threshold: float,
) -> HarnessOptions:
    from evalsuite.service import HarnessOptions

    return HarnessOptions(
        message_limit, time_limit, token_limit, tool_timeout, max_retries, error_threshold
    )


def _inspect(
    task_arg: tuple[str, ...],
    sandbox: str | None,
    log_dir: str | None,
    max_samples: int | None,
    max_subprocesses: int | None,
    max_sandboxes: int | None,
    max_tasks: int | None,
    no_sandbox_cleanup: bool,
) -> InspectOptions:
    from evalsuite.service import InspectOptions

    return InspectOptions(
        task_args=parse_model_args(task_arg, "-T"),
        sandbox=sandbox,
        log_dir=log_dir,
        max_samples=max_samples,
        max_subprocesses=max_subprocesses,
        max_sandboxes=max_sandboxes,
        max_tasks=max_tasks,
        sandbox_cleanup=not no_sandbox_cleanup,
    )


def _governance(
    purpose: str | None,
    model_family: str | None,
    override_reason: str | None,
    key_file: Path | None,
) -> GovernanceOptions:
    from evalsuite.service import GovernanceOptions

    return GovernanceOptions(purpose, model_family, override_reason, key_file)


def _mechanism(
    mechanism: str | None,
    dev_run: str | None,
    threshold: float | None,
    noise_scale: float | None,
    mechanism_budget: int | None,
    mechanism_seed: int | None,
    ladder_step: float | None,
) -> MechanismOptions | None:
    from evalsuite.service import MechanismOptions

    given = [
        flag
        for flag, value in (
            ("--dev-run", dev_run),
            ("--threshold", threshold),
            ("--noise-scale", noise_scale),
            ("--mechanism-budget", mechanism_budget),
            ("--mechanism-seed", mechanism_seed),
            ("--ladder-step", ladder_step),
        )
        if value is not None
    ]
    if mechanism is None:
        if given:
            raise UsageError(f"{', '.join(given)} only apply with --mechanism")
        return None
    if mechanism == "none":
        if given:
            raise UsageError(f"{', '.join(given)} do not apply to --mechanism none")
        return MechanismOptions(none=True)
    ladder = mechanism == "ladder"
    wrong = [f for f in given if (f == "--ladder-step") != ladder]
    if wrong:
        raise UsageError(f"{', '.join(wrong)} do not apply to --mechanism {mechanism}")
    return MechanismOptions(
        name=mechanism,  # type: ignore[arg-type]  # click.Choice: one of MECHANISMS
        dev_run=dev_run,
        threshold=threshold,
        noise_scale=noise_scale,
        budget=mechanism_budget,
        seed=mechanism_seed,
        step=ladder_step,
    )


def _adaptive(
    adaptive: bool,
    target_halfwidth: float | None,
    versus: str | None,
    margin: float,
    max_epochs: int | None,
    max_calls: int | None,
    estimand: str | None,
) -> AdaptiveOptions:
    from evalsuite.service import AdaptiveOptions

    return AdaptiveOptions(
        adaptive, target_halfwidth, versus, margin, max_epochs, max_calls, estimand
    )


def _shards(shard_text: str | None) -> ShardOptions:
    from evalsuite.run import Shard
    from evalsuite.service import ShardOptions

    return ShardOptions(Shard.parse(shard_text) if shard_text is not None else None)


def _faults(
    fault_rate: float,
    fault_kind: Literal["error", "hang"],
    fault_mode: Literal["persistent", "transient"],
) -> FaultOptions:
    from evalsuite.service import FaultOptions

    return FaultOptions(fault_rate, fault_kind, fault_mode)


plan_options = option_group(
    "Run plan",
    "plan",
    _plan,
    click.option(
        "--split", type=click.Choice(["dev", "holdout"]), default="dev", show_default=True
    ),
    click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True),
    click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True),
    click.option(
        "--limit",
        "limit_items",
        type=click.IntRange(min=1),
        default=None,
        help="Only the first N items (quick checks).",
    ),
    click.option(
        "--run-id",
        "run_id",
        default=None,
        help="The new run's id (default: made from the time); the same for every shard of a run.",
    ),
    click.option(
        "--resume",
        "resume",
        default=None,
        help="Complete an interrupted run (every check runs again; a holdout run spends no look).",
    ),
)
model_options = option_group(
    "Model and generation",
    "model",
    _model,
    click.option("--model", "model", help="inspect model, e.g. evalsuite/improved."),
    click.option("-M", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable)."),
    click.option("--model-base-url", default=None, help="Base URL of the model's API server."),
    click.option("--temperature", type=float, default=None, help="Generation temperature."),
    click.option("--max-tokens", type=click.IntRange(min=1), default=None),
    click.option(
        "--max-connections",
        type=click.IntRange(min=1),
        default=None,
        help="Concurrent connections to the model API.",
    ),
    click.option(
        "-G",
        "generate_arg",
        multiple=True,
        help="Other inspect generation setting KEY=VALUE, e.g. top_p=0.9 (repeatable).",
    ),
)
harness_options = option_group(
    "Limits and harness health",
    "harness",
    _harness,
    click.option("--message-limit", type=click.IntRange(min=1), default=None),
    click.option(
        "--time-limit", type=click.IntRange(min=1), default=None, help="Seconds per sample."
    ),
    click.option("--token-limit", type=click.IntRange(min=1), default=None),
    click.option(
        "--tool-timeout",
        type=click.FloatRange(min=0, min_open=True),
        default=30.0,
        show_default=True,
        help="Seconds before a tool call is a harness error.",
    ),
    click.option("--max-retries", type=click.IntRange(0, 10), default=2, show_default=True),
    click.option(
        "--error-threshold",
        type=click.FloatRange(0, 1),
        default=0.05,
        show_default=True,
        help="Harness error rate above which the run is invalid (exit 5).",
    ),
)
inspect_options = option_group(
    "Inspect pass-through",
    "inspect",
    _inspect,
    click.option(
        "-T",
        "task_arg",
        multiple=True,
        help="Task argument KEY=VALUE (repeatable); only those a family lists in run_args.",
    ),
    click.option(
        "--sandbox",
        default=None,
        help="Sandbox for every task: local, docker, or TYPE:CONFIG (default: the task's own).",
    ),
    click.option(
        "--log-dir",
        default=None,
        help="Where inspect writes logs (any fsspec URL); dev runs only.",
    ),
    click.option("--max-samples", type=click.IntRange(min=1), default=None),
    click.option("--max-subprocesses", type=click.IntRange(min=1), default=None),
    click.option("--max-sandboxes", type=click.IntRange(min=1), default=None),
    click.option("--max-tasks", type=click.IntRange(min=1), default=None),
    click.option(
        "--no-sandbox-cleanup", is_flag=True, help="Keep sandboxes after the run (debugging)."
    ),
)
governance_options = option_group(
    "Holdout governance",
    "governance",
    _governance,
    click.option("--purpose", default=None, help="Why this run is made (holdout ledger)."),
    click.option(
        "--model-family",
        default=None,
        help=(
            "Model family for the holdout budget (default: model without checkpoint suffixes). "
            "Recorded at the model's first holdout run and kept; change it with "
            "`evalsuite holdout family`."
        ),
    ),
    click.option(
        "--override-reason",
        default=None,
        help="Run past the holdout budget; the reason is recorded in the ledger.",
    ),
    key_file_option,
)
mechanism_options = option_group(
    "Reusable holdout",
    "mechanism",
    _mechanism,
    click.option(
        "--mechanism",
        type=click.Choice(["thresholdout", "ladder", "none"]),
        default=None,
        help=(
            "With --split holdout: show this mechanism's answer instead of the exact holdout "
            "score, which stays sealed in the store (docs/design/reusable-holdout.md). "
            "Default: the suite's [holdout_mechanism], if it declares one (then another "
            "mechanism is refused, exit 2, and none is refused, exit 7)."
        ),
    ),
    click.option(
        "--dev-run",
        default=None,
        help="Thresholdout: the dev run to compare with (default: newest of the same model).",
    ),
    click.option(
        "--threshold", type=float, default=None, help="Thresholdout's T (0-1; fixed at first use)."
    ),
    click.option(
        "--noise-scale",
        type=float,
        default=None,
        help="Thresholdout's Laplace scale sigma (fixed at first use).",
    ),
    click.option(
        "--mechanism-budget",
        type=int,
        default=None,
        help="Thresholdout's budget B of holdout answers (default: the suite's holdout budget).",
    ),
    click.option(
        "--mechanism-seed",
        type=int,
        default=None,
        help="Thresholdout's seed (default: drawn at first use; recorded in the ledger).",
    ),
    click.option(
        "--ladder-step",
        type=float,
        default=None,
        help="The Ladder's step (default: the MDE of two holdout runs; fixed at first use).",
    ),
)
adaptive_options = option_group(
    "Adaptive",
    "adaptive",
    _adaptive,
    click.option(
        "--adaptive",
        is_flag=True,
        help=(
            "Plan attempts in rounds and stop at --target-halfwidth or a --versus verdict, with "
            "an anytime-valid interval (docs/design/adaptive.md)."
        ),
    ),
    click.option(
        "--target-halfwidth",
        type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
        default=None,
        help="With --adaptive: stop when the suite score's interval is at most +-H.",
    ),
    click.option(
        "--versus",
        "versus",
        default=None,
        metavar="RUN",
        help="With --adaptive: stop at a verdict against stored run RUN (paired by item).",
    ),
    click.option(
        "--margin",
        type=click.FloatRange(0, 1, max_open=True),
        default=0.02,
        show_default=True,
        help="With --versus: a difference within +-margin is 'no difference'.",
    ),
    click.option(
        "--max-epochs",
        type=click.IntRange(min=1),
        default=None,
        help="With --adaptive: budget of at most max-epochs x items attempts (default 5 x items).",
    ),
    click.option(
        "--max-calls",
        type=click.IntRange(min=1),
        default=None,
        help="With --adaptive: budget of at most this many attempts (model calls).",
    ),
    click.option(
        "--estimand",
        type=click.Choice(["items", "population"]),
        default=None,
        help=(
            "With --target-halfwidth: the suite's own items (default) or the population of "
            "items they were drawn from (refused when more epochs cannot reach +-H)."
        ),
    ),
)
shard_options = option_group(
    "Shards",
    "shards",
    _shards,
    click.option(
        "--shard",
        "shard_text",
        default=None,
        metavar="I/N",
        help=(
            "Run share I of N of the run named by --run-id (with --resume: of that run); N "
            "processes with I = 1..N run it all into one store (docs/design/sharded-runs.md)."
        ),
    ),
)


@dataclasses.dataclass(frozen=True, slots=True)
class ExecutorOptions:
    """Where the run's attempts run: in this process, or as shards on a Ray cluster."""

    executor: Literal["local", "ray"]
    address: str | None
    shards: int | None

    def check(self) -> None:
        """Refuse the cluster's options without ``--executor ray``.

        Raises:
            UsageError: ``--address`` or ``--shards`` with ``--executor local``.
        """
        given = [
            flag
            for flag, value in (("--address", self.address), ("--shards", self.shards))
            if value is not None
        ]
        if self.executor == "local" and given:
            raise UsageError(
                f"{' and '.join(given)} only apply with --executor ray (a run on a Ray "
                "cluster); add --executor ray, or leave them out to run in this process"
            )


def _executor(
    executor: Literal["local", "ray"], address: str | None, shards_n: int | None
) -> ExecutorOptions:
    options = ExecutorOptions(executor, address, shards_n)
    options.check()
    return options


executor_options = option_group(
    "Executor",
    "executor",
    _executor,
    click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        default="local",
        show_default=True,
        help=(
            "local: this process runs every attempt; ray: the run is split into --shards "
            "shards run as Ray tasks into one PostgreSQL store, lost shards retried "
            "(docs/scale.md)."
        ),
    ),
    click.option(
        "--address",
        default=None,
        metavar="ADDR",
        help="With --executor ray: the cluster's head, HOST:PORT (default: a local cluster).",
    ),
    click.option(
        "--shards",
        "shards_n",
        type=click.IntRange(min=1),
        default=None,
        help="With --executor ray: number of shards (default: the cluster's CPUs).",
    ),
)
fault_options = option_group(
    "Fault injection",
    "faults",
    _faults,
    click.option(
        "--inject-faults",
        "fault_rate",
        type=click.FloatRange(0, 1),
        default=0.0,
        help="Make environment tools fail in this share of episodes (harness testing).",
    ),
    click.option(
        "--fault-kind",
        type=click.Choice(["error", "hang"]),
        default="error",
        show_default=True,
        help="Injected fault: an exception, or a hang past the timeout.",
    ),
    click.option(
        "--fault-mode",
        type=click.Choice(["persistent", "transient"]),
        default="persistent",
        show_default=True,
        help="persistent: recurs on every retry; transient: first try only.",
    ),
)


@click.command("run", cls=GroupedCommand)
@click.argument("ref", required=False)
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@click.option(
    "--scan",
    is_flag=True,
    help="When the run ends, scan its transcripts with the built-in scanners (review --scan).",
)
@json_option
@pass_context
@handle_errors  # above the groups: a malformed value they parse exits with its code (2)
@plan_options
@model_options
@harness_options
@inspect_options
@governance_options
@mechanism_options
@adaptive_options
@shard_options
@fault_options
@executor_options
def run_cmd(
    ctx: Context,
    ref: str | None,
    no_progress: bool,
    scan: bool,
    as_json: bool,
    plan: RunPlan,
    model: ModelOptions,
    harness: HarnessOptions,
    inspect: InspectOptions,
    governance: GovernanceOptions,
    mechanism: MechanismOptions | None,
    adaptive: AdaptiveOptions,
    shards: ShardOptions,
    faults: FaultOptions,
    executor: ExecutorOptions,
) -> None:
    """Run MODEL against REF (SUITE@X.Y.Z); prints the run id; exit 5 if the run is invalid.

    Ctrl-C or SIGTERM stops the run: finished attempts are kept, the run is stored as
    interrupted (exit 130) and `--resume RUN_ID` completes it.

    inspect's eval() options that do not change what is measured are passed through and
    recorded in the run's spec (docs/design/foreign-tasks.md, "Run options"). Task arguments
    are frozen with the suite; -T sets only those a family lists in run_args.
    """
    from evalsuite.service import RunRequest, execute_run

    if executor.executor == "ray":
        _run_on_ray(ctx, executor, plan, shards, adaptive, mechanism, as_json, no_progress)
        return
    request = RunRequest(
        ref=ref,
        plan=plan,
        model=model,
        harness=harness,
        inspect=inspect,
        governance=dataclasses.replace(governance, mechanism=mechanism),
        adaptive=adaptive,
        shards=shards,
        faults=faults,
        progress=not no_progress and not as_json,
    )
    # a run inspect does not stop within seconds of a signal ends the process with this,
    # on the command's real stdout (docs/design/run-limits.md)
    stop_now = functools.partial(hard_exit, as_json=as_json, stdout=sys.stdout)
    # inspect prints banners on stdout; keep stdout for our own output (JSON stays clean)
    with contextlib.redirect_stdout(sys.stderr):
        outcome = execute_run(
            request,
            layout=ctx.layout,
            keys=ctx.keys(governance.key_file),
            store=lambda: open_store(ctx),  # opened once the request is checked
            run_adaptive=_run_adaptive,
            hard_stop=stop_now,
            stop_within_s=_stop_within(),
        )
    scanned = _scan_after_run(ctx, outcome) if scan else None
    _print_run(ctx, outcome, as_json=as_json, scanned=scanned)
    if outcome.invalid is not None:
        exit_after_output(outcome.invalid)


def _scan_after_run(ctx: Context, outcome: RunOutcome) -> dict[str, Any] | None:
    """``run --scan``: the finished run's transcripts through Scout (a holdout run has none).

    Returns the scan report, or None when there is nothing to scan (a holdout run, a shard
    whose run is not complete).
    """
    run = outcome.result.run
    if run.split == "holdout" or not outcome.result.run_complete:
        return None
    from evalsuite.cli._review_scan import scan_runs

    with contextlib.redirect_stdout(sys.stderr):  # Scout's banners: stdout is ours
        return scan_runs(ctx, open_store(ctx), (run.run_id,))[0]


_RAY_OWN = frozenset(
    {"ref", "run_id", "resume", "shard_text", "as_json", "no_progress", "executor", "address"}
    | {"shards_n"}
)
"""`run`'s parameters that each shard gets from the Ray run, not from the command line."""


def _shard_run_args() -> tuple[str, ...]:
    """This `run` command's own options, as each shard of a Ray run is given them.

    Every option given on the command line, as given (paths made absolute: shards may start
    in another directory).
    """
    click_ctx = click.get_current_context()
    args: list[str] = []
    ref = click_ctx.params.get("ref")
    if ref is not None:
        args.append(str(ref))
    for param in click_ctx.command.params:
        name = param.name
        if not isinstance(param, click.Option) or name is None or name in _RAY_OWN:
            continue
        source = click_ctx.get_parameter_source(name)
        if source in (None, click.core.ParameterSource.DEFAULT):
            continue
        value = click_ctx.params.get(name)
        flag = param.opts[0]
        if param.is_flag:
            if value:
                args.append(flag)
            continue
        values: tuple[Any, ...] = tuple(value or ()) if param.multiple else (value,)
        for one in values:
            if one is None:
                continue
            text = str(Path(one).resolve()) if isinstance(one, Path) else str(one)
            args += [flag, text]
    return tuple(args)


def _run_on_ray(
    ctx: Context,
    executor: ExecutorOptions,
    plan: RunPlan,
    shards: ShardOptions,
    adaptive: AdaptiveOptions,
    mechanism: MechanismOptions | None,
    as_json: bool,
    no_progress: bool,
) -> None:
    """`run --executor ray`: the run's shards as Ray tasks (docs/scale.md)."""
    from evalsuite.run import stored_run_result
    from evalsuite.service import RayRunRequest, RunOutcome, execute_ray_run

    refused = [
        flag
        for flag, given in (
            (f"--shard {shards.shard}", shards.shard is not None),
            ("--adaptive", adaptive.adaptive),
            ("--mechanism", mechanism is not None),
        )
        if given
    ]
    if refused:
        raise UsageError(
            f"--executor ray runs the run as --shards N shards itself, so {', '.join(refused)} "
            "cannot go with it: give --shards N (and no --shard); an adaptive run or a "
            "--mechanism run is one process's (run it without --executor ray)"
        )
    if plan.resume is not None and plan.run_id is not None:
        raise UsageError("--resume names the run already; give no --run-id with it")
    request = RayRunRequest(
        run_args=_shard_run_args(),
        run_id=plan.run_id,
        resume=plan.resume,
        shards=executor.shards,
        address=executor.address,
        progress=not no_progress,
    )
    store = functools.partial(open_store, ctx)
    with contextlib.redirect_stdout(sys.stderr):
        outcome = execute_ray_run(
            request,
            layout=ctx.layout,
            store_url=ctx.store_url,
            store=store,
            echo=lambda text: click.echo(text, err=True),
        )
        result = stored_run_result(store(), outcome.record)
    shards_json = [p.to_dict() for p in outcome.shards]
    if as_json:
        audit = audit_field(ctx, result.run.suite, result.run.version)
        _ledger_note(ctx, result.run.suite, result.run.split)
        extra = {"executor": "ray", "shards": shards_json, "elapsed_s": round(outcome.elapsed_s, 3)}
        emit_json(result.to_dict() | {"audit": audit} | extra)
    else:
        _print_run(ctx, RunOutcome(result), as_json=False)
        console.print(
            f"  executor: ray, {len(outcome.shards)} shard(s) on {outcome.cluster}, "
            f"{outcome.elapsed_s:.1f} s"
        )
    run_outcome = RunOutcome(result)
    if run_outcome.invalid is not None:
        exit_after_output(run_outcome.invalid)


def _run_adaptive(*args: Any, **kwargs: Any) -> tuple[RunResult, AdaptiveResult]:
    """The adaptive runner `execute_run` is given (`evalsuite.cli._adaptive_cmd`).

    Imported only when an adaptive run calls it: its statistics import scipy, which a
    planned run never needs (docs/design/run-speed.md).
    """
    from evalsuite.cli._adaptive_cmd import run_adaptive

    return run_adaptive(*args, **kwargs)


def _print_run(
    ctx: Context, outcome: RunOutcome, *, as_json: bool, scanned: dict[str, Any] | None = None
) -> None:
    """A finished run (or shard): its JSON, or its lines on the terminal.

    `scanned`: what `run --scan` found (the JSON's ``scan``, a line on the terminal).
    """
    result, summary = outcome.result, outcome.adaptive
    health = result.health
    audit = audit_field(ctx, result.run.suite, result.run.version)
    _ledger_note(ctx, result.run.suite, result.run.split)
    release = outcome.release
    if as_json:
        sealed = {} if release is None else {"mean": None, "mechanism": release.to_dict()}
        found = {} if scanned is None else {"scan": scanned}
        emit_json(result.to_dict() | {"audit": audit} | _adaptive_json(summary) | sealed | found)
    elif not result.run_complete:
        _print_shard(result)
    else:
        mark(ctx, result.run.suite, result.run.version)
        state = (
            Text("valid", style="bold green") if health.valid else Text("INVALID", style="bold red")
        )
        console.print(Text.assemble(f"run {result.run.run_id}  ", state))
        # an adaptive run has no fixed epochs: it says its rounds, and its plain attempt mean
        # is named apart from the adaptive estimate printed below it
        plan = (
            f"adaptive, {len(summary.rounds)} round(s)"
            if summary is not None
            else f"{result.run.epochs} epoch(s)"
        )
        console.print(
            f"  {result.run.suite}@{result.run.version} {result.run.split} · {result.run.model} · "
            f"{plan} · seed {result.run.seed}"
        )
        mean_label = (
            "plain mean over all rounds' scored and limit attempts (the estimate is below)"
            if summary is not None
            else "mean over scored and limit attempts"
        )
        if release is None:
            console.print(f"  {mean_label}: {fmt(result.mean)}")
        else:  # the exact holdout score stays sealed (docs/design/reusable-holdout.md)
            shown = "nothing released" if release.released is None else fmt(release.released)
            console.print(f"  released by {release.mechanism} ({release.scope}): {shown}")
            console.print(f"  {release.meaning}")
            console.print(
                "  the exact holdout score is sealed in the store: `evalsuite holdout reveal "
                f'{result.run.run_id} --reason "..."` shows it and records that it did'
            )
        limits = ", ".join(f"{k} {v}" for k, v in health.limits_by_type.items())
        console.print(
            f"  harness: {health.planned} planned, {health.scored} scored, {health.limits} "
            f"limits{f' ({limits})' if limits else ''}, {health.harness_errors} harness errors "
            f"({health.error_rate:.1%}; threshold {health.threshold:.0%})"
        )
        print_top_errors([g.to_dict() for g in health.top_errors or ()])
        if summary is not None:
            print_view(console, adaptive_view(summary))
        if scanned is not None:
            counts = ", ".join(f"{k} {v}" for k, v in scanned["counts"].items())
            console.print(f"  scanned: {counts} (Scout's results in {scanned['location']})")


def _adaptive_json(found: AdaptiveResult | None) -> dict[str, object]:
    """`run --json`'s ``adaptive`` field: the adaptive run's view as JSON (none: no field)."""
    return {} if found is None else {"adaptive": adaptive_view(found).to_dict()}


def _stop_within() -> float:
    """``$EVALSUITE_STOP_WITHIN``: seconds inspect gets to stop after a signal (default 5)."""
    from evalsuite.run import STOP_WITHIN_S

    text = os.environ.get("EVALSUITE_STOP_WITHIN")
    if text is None:
        return STOP_WITHIN_S
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise UsageError(
            f"EVALSUITE_STOP_WITHIN={text!r}: give the seconds a signalled run waits for inspect "
            f"to stop before it stops hard, a number above 0 (default {STOP_WITHIN_S:g}), or "
            "unset it"
        )
    return value


def _print_shard(result: RunResult) -> None:
    """A shard whose run is not complete yet: its share's figures, and what is left."""
    health = result.health
    run = result.run
    planned = run.planned
    console.print(
        Text.assemble(f"run {run.run_id}  ", Text(f"shard {result.shard} done", style="bold green"))
    )
    console.print(
        f"  {run.suite}@{run.version} {run.split} · {run.model} · {run.epochs} epoch(s) · "
        f"seed {run.seed} · {planned} attempts planned in all"
    )
    console.print(
        f"  this shard's share: {health.planned} attempts, {health.scored} scored, "
        f"{health.limits} limits, {health.harness_errors} harness errors "
        f"({health.error_rate:.1%}); mean {fmt(result.mean)}"
        if health.planned
        else f"  this shard's share is empty: the run has fewer attempts than shards "
        f"({planned} planned), so none fell to shard {result.shard}"
    )
    console.print(
        f"  {result.shards_complete} of {result.shard.split('/')[1] if result.shard else '?'} "
        "shards complete: the run's health and scores come when every shard is"
    )


@click.command("runs")
@click.option("--suite", default=None, help="Only runs of this suite.")
@click.option(
    "--limit",
    type=click.IntRange(min=1),
    default=None,
    help=f"Only the newest N runs (default: {RUNS_SHOWN} in the table, every run with --json).",
)
@click.option(
    "--all", "show_all", is_flag=True, help=f"Every run (the table shows the newest {RUNS_SHOWN})."
)
@json_option
@pass_context
@handle_errors
def runs_cmd(
    ctx: Context, suite: str | None, limit: int | None, show_all: bool, as_json: bool
) -> None:
    """List stored runs, oldest first (partial runs, made with --limit, are flagged).

    The table shows the newest 50 runs and says how many there are; --all shows every run,
    --limit N the newest N. --json lists every run unless --limit N is given.
    """
    from evalsuite.cli._plain import echo_view
    from evalsuite.service import list_runs, runs_view

    if show_all and limit is not None:
        raise UsageError("--all and --limit N exclude each other: give one of them")
    newest = None if show_all or (as_json and limit is None) else (limit or RUNS_SHOWN)
    result = list_runs(ctx.layout, ctx.store_url, suite=suite, newest=newest)
    if as_json:
        emit_json(result.to_list())
        return
    # the table is the answer: its header is the first line (the headline only without runs)
    echo_view(runs_view(result), wide=True, title=False, headline=not result.runs)


_INGEST_HELP = """Store results produced elsewhere (inspect logs, a CSV or Parquet file) as runs.

PATH is an inspect log (.eval or .json) or a directory of logs, a local path or any fsspec
URL (s3://bucket/logs/RUN, file:///...), or a local results table: a CSV
(--format csv) or a Parquet file (--format parquet) with the same columns. Each log, and
each model of a table, becomes one run. Content that is already stored (the same
attempts, whatever the file is called) is reported with the run that holds it and
skipped, exit 0; --again stores it anyway. A run with more harness errors than
--error-threshold is stored and flagged invalid, and the command exits 5 once everything
is stored, as `evalsuite run` does.

Logs written by `evalsuite run` attach themselves to their frozen suite. --suite
SUITE@X.Y.Z attaches any other results (a plain `inspect eval` log of the suite's task, a
CSV of its items) to that frozen manifest: an item id it does not list is refused, an
item of the split that is absent is counted as not run, and strata, split and item hashes
come from the manifest (so the run compares with live runs of the suite).

Other tools' files (docs/interchange.md): --format eee reads an Every Eval Ever aggregate
record (.json, or a directory of them) with its per-sample _samples.jsonl sidecar,
validated by the every-eval-ever package; --format lm-eval reads one task's
samples_<task>_<date>.jsonl (lm_eval --log_samples) with its results_<date>.json beside
it; --format helm reads a HELM run directory (run_spec.json, per_instance_stats.json,
scenario_state.json). With --suite their items attach by id or by content hash
(sample_hash). A record whose aggregate disagrees with its samples, a checksum or row
count that does not match, or a metric whose direction is unknown or lower-is-better is
refused, the field named, and nothing is stored.

\b
CSV columns (one row per attempt; map other names with --column TARGET=NAME):
  model       the model's name (or leave the column out and pass --model NAME)
  item_id     the item's stable id
  epoch       the attempt's number at this item: 1, 2, ... up to 1000
              (0, 1, ... with --epoch-base 0)
  score       a number in [0, 1], or true/false for 1/0; empty on harness_error rows
  stratum     optional: the item's stratum (empty: all)
  outcome     optional: scored (the default); limit (a model failure: score 0);
              harness_error (excluded from the score and counted)
  limit_type  optional, limit rows only: message, time, working, token, context,
              turn, cost or custom

\b
Example:
  model,item_id,epoch,score,stratum,outcome,limit_type
  gpt-4o,task-001,1,1,billing,,
  gpt-4o,task-001,2,0,billing,limit,time
  gpt-4o,task-002,1,,refunds,harness_error,

A CSV must be UTF-8. A Parquet file holds the same columns as text, numbers or
booleans; a missing value (null, or NaN in a float column) is an empty cell, and problems
are named by row instead of line. Every other column is refused (a misspelt "stratun" would lose
the strata silently); drop one with --ignore-column NAME. Every bad row is named by its
line, and nothing is stored unless every row is valid. Files of any size are read in
batches (docs/scale.md).
"""


INGEST_FORMATS: dict[str, Literal["inspect", "csv", "parquet", "eee", "lm-eval", "helm"]] = {
    "inspect": "inspect",
    "csv": "csv",
    "parquet": "parquet",
    "eee": "eee",
    "lm-eval": "lm-eval",
    "helm": "helm",
}


@click.command("ingest", help=_INGEST_HELP)
@click.argument("path", metavar="PATH")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["inspect", "csv", "parquet", "eee", "lm-eval", "helm"]),
    required=True,
)
@click.option(
    "--column",
    "columns",
    multiple=True,
    help="CSV/Parquet: map an evalsuite column to the file's, e.g. item_id=task_id (repeatable).",
)
@click.option(
    "--ignore-column",
    "ignore_columns",
    multiple=True,
    help="CSV/Parquet: drop this column (repeatable); other unknown columns are refused.",
)
@click.option("--model", default=None, help="CSV/Parquet without a model column: the model's name.")
@click.option(
    "--epoch-base",
    type=click.Choice(["0", "1"]),
    default="1",
    show_default=True,
    help="CSV/Parquet: whether epochs count from 0 or 1.",
)
@click.option(
    "--error-threshold",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Harness error rate above which a run is invalid (stored, flagged, exit 5).",
)
@click.option(
    "--again",
    is_flag=True,
    help="Store content that is already stored as a new run anyway.",
)
@click.option(
    "--suite",
    "suite_ref",
    default=None,
    metavar="SUITE@X.Y.Z",
    help="Attach the results to this frozen suite: item ids checked against its manifest "
    "(unknown ids refused, absent ones counted as not run), strata, split and item hashes "
    "taken from it.",
)
@click.option(
    "--split",
    "split",
    type=click.Choice(["dev"]),
    default=None,
    help="With --suite: keep the results of this split's items (a plain `inspect eval` runs "
    "every sample); the others are counted and never stored.",
)
@click.option(
    "--metric",
    default=None,
    metavar="NAME",
    help="eee, lm-eval, helm: the metric to ingest (default: the record's first metric with "
    "samples, the samples' first metric, HELM's exact_match).",
)
@json_option
@pass_context
@handle_errors
def ingest_cmd(
    ctx: Context,
    path: str,
    fmt: str,
    columns: tuple[str, ...],
    ignore_columns: tuple[str, ...],
    model: str | None,
    epoch_base: str,
    error_threshold: float,
    again: bool,
    suite_ref: str | None,
    split: str | None,
    metric: str | None,
    as_json: bool,
) -> None:
    """Store results produced elsewhere as runs (the help text is `_INGEST_HELP`)."""
    from evalsuite.service import IngestRequest, column_mapping, ingest_results

    request = IngestRequest(
        path=path,
        format=INGEST_FORMATS[fmt],
        columns=column_mapping(columns),
        ignore_columns=ignore_columns,
        model=model,
        epoch_base=1 if epoch_base == "1" else 0,
        error_threshold=error_threshold,
        again=again,
        suite=suite_ref,
        split="dev" if split is not None else None,
        metric=metric,
    )
    outcome = ingest_results(request, layout=ctx.layout, store=lambda: open_store(ctx))
    report = outcome.report
    if as_json:
        emit_json(
            {
                "runs": [r.to_dict() for r in report.runs],
                "skipped": [s.to_dict() for s in report.skipped],
                "aggregates": [a.to_dict() for a in outcome.aggregates],
            }
        )
    else:
        for a in outcome.aggregates:
            se = f" ± {a.se:.4f} (se)" if a.se is not None else ""
            console.print(
                f"{'stored' if a.added else 'already stored'} aggregate result: {a.model} on "
                f"{a.benchmark} = {a.score:.4f}{se} (no items: usable by `evalsuite validity "
                "report --aggregates`, not by score or compare)"
            )
        for r in report.runs:
            state = (
                "valid"
                if r.valid
                else f"INVALID: {r.error_rate:.1%} harness errors > {r.error_threshold:.0%}"
            )
            again_note = (
                f"; same content as {', '.join(r.same_content_as)}, stored again (--again)"
                if r.same_content_as
                else ""
            )
            attached = f" of {r.suite} ({r.split})" if r.suite else ""
            left = (
                f"; {r.left_out} attempts of the other split left out, not stored"
                if r.left_out
                else ""
            )
            console.print(
                f"ingested {r.run_id}{attached}: {r.model}, {r.n_items} items × {r.epochs} "
                f"epochs ({r.planned} planned, {state}){again_note}{left}"
            )
        for s in report.skipped:
            console.print(
                f"skipped {s.model} from {s.source}: the same content is already stored as "
                f"run {', '.join(s.existing_run_ids)} (pass --again to store it anyway)"
            )
    if outcome.invalid is not None:
        exit_after_output(outcome.invalid)
