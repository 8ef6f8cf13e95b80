"""Commands of the run stage: `run`, `runs`, `ingest`."""

from __future__ import annotations

import contextlib
import functools
import json
import math
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import click
from rich.text import Text

from evalsuite._core.display import printable
from evalsuite.cli._common import (
    Context,
    console,
    emit_json,
    exit_after_output,
    handle_errors,
    hard_exit,
    json_option,
    key_file_option,
    pass_context,
    print_top_errors,
)
from evalsuite.cli._grader_views import audit_field, mark
from evalsuite.cli._views import print_view
from evalsuite.errors import InvalidRunError, UsageError
from evalsuite.manifest import parse_ref
from evalsuite.service import adaptive_view, fmt
from evalsuite.store import default_store_url

if TYPE_CHECKING:
    from evalsuite.analyse import AdaptiveRule
    from evalsuite.errors import RunInterrupted
    from evalsuite.manifest import Manifest, ManifestSummary
    from evalsuite.report import Completeness
    from evalsuite.run import RunResult, RunSpec, Shard
    from evalsuite.service import AdaptiveResult
    from evalsuite.store import RunRecord, Store

__all__ = ["ingest_cmd", "open_store", "parse_model_args", "run_cmd", "runs_cmd"]


def open_store(ctx: Context, *, create: bool = True) -> Store:
    """The store of this project (``$EVALSUITE_STORE`` or `.evalsuite/results.sqlite`).

    ``create=False`` for the commands that only read: a SQLite store that does not exist is
    read as empty and left uncreated (`Store.missing`); a run asked of it is "not found",
    naming the absent store.
    """
    from evalsuite.store import Store  # here: SQLAlchemy and pandas, which `runs` does without

    return Store(ctx.store_url or default_store_url(ctx.layout.state), create=create)


def parse_model_args(pairs: tuple[str, ...], flag: str = "-M") -> dict[str, object]:
    """``-M KEY=VALUE`` pairs as a dict (values parsed as JSON when they are JSON)."""
    args: dict[str, object] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise UsageError(f"{flag} expects KEY=VALUE (got {pair!r})")
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


@click.command("run")
@click.argument("ref", required=False)
@click.option("--model", "model", help="inspect model, e.g. evalsuite/improved.")
@click.option("-M", "model_arg", multiple=True, help="Model argument KEY=VALUE (repeatable).")
@click.option("--split", type=click.Choice(["dev", "holdout"]), default="dev", show_default=True)
@click.option("--epochs", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option(
    "--inject-faults",
    "fault_rate",
    type=click.FloatRange(0, 1),
    default=0.0,
    help="Make environment tools fail in this share of episodes (harness testing).",
)
@click.option(
    "--fault-kind",
    type=click.Choice(["error", "hang"]),
    default="error",
    show_default=True,
    help="Injected fault: an exception, or a hang past the timeout.",
)
@click.option(
    "--fault-mode",
    type=click.Choice(["persistent", "transient"]),
    default="persistent",
    show_default=True,
    help="persistent: recurs on every retry; transient: first try only.",
)
@click.option(
    "--tool-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds before a tool call is a harness error.",
)
@click.option("--max-retries", type=click.IntRange(0, 10), default=2, show_default=True)
@click.option(
    "--error-threshold",
    type=click.FloatRange(0, 1),
    default=0.05,
    show_default=True,
    help="Harness error rate above which the run is invalid (exit 5).",
)
@click.option("--message-limit", type=click.IntRange(min=1), default=None)
@click.option("--time-limit", type=click.IntRange(min=1), default=None, help="Seconds per sample.")
@click.option("--token-limit", type=click.IntRange(min=1), default=None)
@click.option("--max-samples", type=click.IntRange(min=1), default=None)
@click.option(
    "--limit",
    "limit_items",
    type=click.IntRange(min=1),
    default=None,
    help="Only the first N items (quick checks).",
)
@click.option(
    "-T",
    "task_arg",
    multiple=True,
    help="Task argument KEY=VALUE (repeatable); only those a family lists in run_args.",
)
@click.option("--temperature", type=float, default=None, help="Generation temperature.")
@click.option("--max-tokens", type=click.IntRange(min=1), default=None)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    default=None,
    help="Concurrent connections to the model API.",
)
@click.option(
    "-G",
    "generate_arg",
    multiple=True,
    help="Other inspect generation setting KEY=VALUE, e.g. top_p=0.9 (repeatable).",
)
@click.option(
    "--sandbox",
    default=None,
    help="Sandbox for every task: local, docker, or TYPE:CONFIG (default: the task's own).",
)
@click.option(
    "--log-dir",
    default=None,
    help="Where inspect writes logs (any fsspec URL); dev runs only.",
)
@click.option("--model-base-url", default=None, help="Base URL of the model's API server.")
@click.option("--max-subprocesses", type=click.IntRange(min=1), default=None)
@click.option("--max-sandboxes", type=click.IntRange(min=1), default=None)
@click.option("--max-tasks", type=click.IntRange(min=1), default=None)
@click.option(
    "--no-sandbox-cleanup", is_flag=True, help="Keep sandboxes after the run (debugging)."
)
@click.option("--purpose", default=None, help="Why this run is made (holdout ledger).")
@click.option(
    "--model-family",
    default=None,
    help=(
        "Model family for the holdout budget (default: model without checkpoint suffixes). "
        "Recorded at the model's first holdout run and kept; change it with "
        "`evalsuite holdout family`."
    ),
)
@click.option(
    "--override-reason",
    default=None,
    help="Run past the holdout budget; the reason is recorded in the ledger.",
)
@click.option(
    "--resume",
    "resume",
    default=None,
    help="Complete an interrupted run (every check runs again; a holdout run spends no look).",
)
@click.option(
    "--run-id",
    "run_id",
    default=None,
    help="The new run's id (default: made from the time); the same for every shard of a run.",
)
@click.option(
    "--shard",
    "shard_text",
    default=None,
    metavar="I/N",
    help=(
        "Run share I of N of the run named by --run-id (with --resume: of that run); N "
        "processes with I = 1..N run it all into one store (docs/design/sharded-runs.md)."
    ),
)
@click.option(
    "--adaptive",
    is_flag=True,
    help=(
        "Plan attempts in rounds and stop at --target-halfwidth or a --versus verdict, with an "
        "anytime-valid interval (docs/design/adaptive.md)."
    ),
)
@click.option(
    "--target-halfwidth",
    type=click.FloatRange(0, 0.5, min_open=True, max_open=True),
    default=None,
    help="With --adaptive: stop when the suite score's interval is at most +-H.",
)
@click.option(
    "--versus",
    "versus",
    default=None,
    metavar="RUN",
    help="With --adaptive: stop at a verdict against stored run RUN (paired by item).",
)
@click.option(
    "--margin",
    type=click.FloatRange(0, 1, max_open=True),
    default=0.02,
    show_default=True,
    help="With --versus: a difference within +-margin is 'no difference'.",
)
@click.option(
    "--max-epochs",
    type=click.IntRange(min=1),
    default=None,
    help="With --adaptive: budget of at most max-epochs x items attempts (default 5 x items).",
)
@click.option(
    "--max-calls",
    type=click.IntRange(min=1),
    default=None,
    help="With --adaptive: budget of at most this many attempts (model calls).",
)
@click.option("--no-progress", is_flag=True, help="Do not show the progress bar.")
@key_file_option
@json_option
@pass_context
@handle_errors
def run_cmd(
    ctx: Context,
    ref: str | None,
    model: str | None,
    model_arg: tuple[str, ...],
    split: str,
    epochs: int,
    seed: int,
    fault_rate: float,
    fault_kind: str,
    fault_mode: str,
    tool_timeout: float,
    max_retries: int,
    error_threshold: float,
    message_limit: int | None,
    time_limit: int | None,
    token_limit: int | None,
    max_samples: int | None,
    limit_items: int | None,
    task_arg: tuple[str, ...],
    temperature: float | None,
    max_tokens: int | None,
    max_connections: int | None,
    generate_arg: tuple[str, ...],
    sandbox: str | None,
    log_dir: str | None,
    model_base_url: str | None,
    max_subprocesses: int | None,
    max_sandboxes: int | None,
    max_tasks: int | None,
    no_sandbox_cleanup: bool,
    purpose: str | None,
    model_family: str | None,
    override_reason: str | None,
    resume: str | None,
    run_id: str | None,
    shard_text: str | None,
    adaptive: bool,
    target_halfwidth: float | None,
    versus: str | None,
    margin: float,
    max_epochs: int | None,
    max_calls: int | None,
    no_progress: bool,
    key_file: Path | None,
    as_json: bool,
) -> None:
    """Run MODEL against REF (SUITE@X.Y.Z); prints the run id; exit 5 if the run is invalid.

    Ctrl-C or SIGTERM stops the run: finished attempts are kept, the run is stored as
    interrupted (exit 130) and `--resume RUN_ID` completes it.

    inspect's eval() options that do not change what is measured are passed through and
    recorded in the run's spec (docs/design/foreign-tasks.md, "Run options"). Task arguments
    are frozen with the suite; -T sets only those a family lists in run_args.
    """
    from evalsuite.run import RunSpec, Shard

    generate = _generate_config(generate_arg, temperature, max_tokens, max_connections)
    options = {
        "task_args": parse_model_args(task_arg, "-T"),
        "generate_config": generate,
        "sandbox": sandbox,
        "log_dir": log_dir,
        "model_base_url": model_base_url,
        "max_subprocesses": max_subprocesses,
        "max_sandboxes": max_sandboxes,
        "max_tasks": max_tasks,
        "sandbox_cleanup": not no_sandbox_cleanup,
    }
    shard = Shard.parse(shard_text) if shard_text is not None else None
    if resume is not None and run_id is not None:
        raise UsageError("--resume names the run already; give no --run-id with it")
    if shard is not None and resume is None and run_id is None:
        raise UsageError(
            f"--shard {shard} needs --run-id ID: every shard of a run is started with the same "
            "run id (e.g. the job array's id), so that they fill one run"
        )
    if resume is None:
        if ref is None or model is None:
            raise UsageError("give SUITE@X.Y.Z and --model, or --resume RUN_ID")
        suite, version = parse_ref(ref)
        if version is None:
            raise UsageError(f"give the exact version to run, e.g. {suite}@1.0.0")
        spec = RunSpec(
            suite=suite,
            version=version,
            model=model,
            split=split,
            epochs=epochs,
            seed=seed,
            model_args=parse_model_args(model_arg),
            max_retries=max_retries,
            error_threshold=error_threshold,
            fault_rate=fault_rate,
            fault_kind=fault_kind,
            fault_mode=fault_mode,
            tool_timeout=tool_timeout,
            message_limit=message_limit,
            time_limit=time_limit,
            token_limit=token_limit,
            max_samples=max_samples,
            limit_items=limit_items,
            purpose=purpose,
            model_family=model_family,
            override_reason=override_reason,
            **options,
        )
    else:
        if ref is not None or model is not None:
            raise UsageError("--resume takes the run's stored settings; give no SUITE or --model")
        given = [k for k, v in options.items() if v not in (None, {}, True)]
        if given:
            raise UsageError(
                f"--resume takes the run's stored settings; drop {', '.join(given)} (a resumed "
                "run runs as it was started)"
            )
        spec = RunSpec(suite="-", version="0.0.0", model="-")
    rule = _adaptive_rule(
        adaptive,
        target_halfwidth=target_halfwidth,
        versus=versus,
        margin=margin,
        max_epochs=max_epochs,
        max_calls=max_calls,
        seed=seed,
        conflicts={"--epochs": epochs != 1, "--resume": resume is not None, "--shard": shard},
    )
    # a run inspect does not stop within seconds of a signal ends the process with this,
    # on the command's real stdout (docs/design/run-limits.md)
    stop_now = functools.partial(hard_exit, as_json=as_json, stdout=sys.stdout)
    # inspect prints banners on stdout; keep stdout for our own output (JSON stays clean)
    with contextlib.redirect_stdout(sys.stderr):
        result, summary = _execute(
            ctx,
            spec,
            rule,
            key_file=key_file,
            progress=not no_progress and not as_json,
            resume=resume,
            run_id=run_id,
            shard=shard,
            hard_stop=stop_now,
        )
    health = result.health
    audit = audit_field(ctx, result.run.suite, result.run.version)
    _ledger_note(ctx, result.run.suite, result.run.split)
    if as_json:
        emit_json(result.to_dict() | {"audit": audit} | _adaptive_json(summary))
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
        console.print(f"  {mean_label}: {fmt(result.mean)}")
        limits = ", ".join(f"{k} {v}" for k, v in health.limits_by_type.items())
        console.print(
            f"  harness: {health.planned} planned, {health.scored} scored, {health.limits} "
            f"limits{f' ({limits})' if limits else ''}, {health.harness_errors} harness errors "
            f"({health.error_rate:.1%}; threshold {health.threshold:.0%})"
        )
        print_top_errors([g.to_dict() for g in health.top_errors or ()])
        if summary is not None:
            print_view(console, adaptive_view(summary))
    if not health.valid and result.run_complete:  # a shard's share alone judges nothing
        exit_after_output(
            InvalidRunError(
                f"run {result.run.run_id} is invalid: {health.error_rate:.1%} harness errors > "
                f"{health.threshold:.0%}; it is stored, but comparisons refuse it. Fix the harness "
                "and run again."
            )
        )


def _execute(
    ctx: Context,
    spec: RunSpec,
    rule: AdaptiveRule | None,
    *,
    key_file: Path | None,
    progress: bool,
    resume: str | None,
    run_id: str | None,
    shard: Shard | None,
    hard_stop: Callable[[RunInterrupted], None],
) -> tuple[RunResult, AdaptiveResult | None]:
    """Run `spec`: adaptively under `rule`, or as planned (what the adaptive run found, or None).

    After SIGINT or SIGTERM inspect gets ``$EVALSUITE_STOP_WITHIN`` seconds (default 5) to
    stop; then the run is recorded as interrupted and `hard_stop` ends the process
    (docs/design/run-limits.md).
    """
    from evalsuite.run import run_suite

    store = open_store(ctx)
    if rule is not None:
        from evalsuite.cli._adaptive_cmd import run_adaptive

        return run_adaptive(
            ctx.layout,
            spec,
            rule,
            keys=ctx.keys(key_file),
            store=store,
            progress=progress,
            run_id=run_id,
            hard_stop=hard_stop,
            stop_within_s=_stop_within(),
        )
    result = run_suite(
        ctx.layout,
        spec,
        keys=ctx.keys(key_file),
        store=store,
        progress=progress,
        resume=resume,
        run_id=run_id,
        shard=shard,
        hard_stop=hard_stop,
        stop_within_s=_stop_within(),
    )
    return result, None


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


def _adaptive_rule(
    adaptive: bool,
    *,
    target_halfwidth: float | None,
    versus: str | None,
    margin: float,
    max_epochs: int | None,
    max_calls: int | None,
    seed: int,
    conflicts: dict[str, object],
) -> AdaptiveRule | None:
    """The adaptive run's rule from `run`'s flags (None without --adaptive).

    Raises:
        UsageError: an adaptive flag without --adaptive, or --adaptive with a flag that
            plans attempts another way (--epochs, --resume, --shard).
    """
    if not adaptive:
        given = [
            flag
            for flag, value in (
                ("--target-halfwidth", target_halfwidth),
                ("--versus", versus),
                ("--max-epochs", max_epochs),
                ("--max-calls", max_calls),
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
    # only here: the adaptive rule's module imports scipy.stats (its final interval), about a
    # second of CPU that a planned run does not need (docs/design/run-speed.md, "Cold first run")
    from evalsuite.analyse import AdaptiveRule

    return AdaptiveRule(
        target_halfwidth=target_halfwidth,
        versus=versus,
        margin=margin,
        max_epochs=max_epochs,
        max_calls=max_calls,
        seed=seed,
    )


def _generate_config(
    pairs: tuple[str, ...],
    temperature: float | None,
    max_tokens: int | None,
    max_connections: int | None,
) -> dict[str, object]:
    """Generation settings from -G pairs and the named options (checked against inspect's)."""
    from evalsuite.run import check_generate_config

    config = parse_model_args(pairs, "-G")
    for key, value in (
        ("temperature", temperature),
        ("max_tokens", max_tokens),
        ("max_connections", max_connections),
    ):
        if value is not None:
            if key in config:
                raise UsageError(f"--{key.replace('_', '-')} and -G {key}=... both given")
            config[key] = value
    try:
        return check_generate_config(config)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


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


RUNS_SHOWN = 50
"""Runs `evalsuite runs` shows by default (the newest); ``--all`` or ``--limit N`` for others."""

_RUNS_HEADER = ("run", "suite", "split", "model", "epochs", "items", "status", "health", "started")


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
    from evalsuite.service import run_completeness
    from evalsuite.store import RunReader, missing_store_message

    if show_all and limit is not None:
        raise UsageError("--all and --limit N exclude each other: give one of them")
    newest = None if show_all or (as_json and limit is None) else (limit or RUNS_SHOWN)
    reader = RunReader(ctx.store_url or default_store_url(ctx.layout.state))
    records = reader.runs(suite=suite, newest=newest)
    full = newest is None or len(records) < newest
    total = len(records) if full else reader.count(suite=suite)
    manifests: dict[tuple[str, str], ManifestSummary | None] = {}
    completeness = {r.run_id: run_completeness(r, ctx.layout, manifests=manifests) for r in records}
    versions = dict.fromkeys((r.suite, r.version) for r in records)  # each read once
    audits = {(suite_, version): audit_field(ctx, suite_, version) for suite_, version in versions}
    top_error = reader.top_error_reasons([r.run_id for r in records if r.error_rate])
    if as_json:
        emit_json(
            [
                {
                    "run_id": r.run_id,
                    "suite": r.suite,
                    "version": r.version,
                    "split": r.split,
                    "model": r.model,
                    "valid": r.valid,
                    "started_at": r.started_at,
                    "status": r.status,
                    "epochs": r.epochs,
                    "planned": r.planned,
                    "error_rate": r.error_rate,
                    "source": r.source,
                    "top_error": (
                        {"reason": top_error[r.run_id][0], "count": top_error[r.run_id][1]}
                        if r.run_id in top_error
                        else None
                    ),
                    **completeness[r.run_id].to_dict(),
                    "audit": audits[(r.suite, r.version)]["status"],
                }
                for r in records
            ]
        )
        return
    if not records:
        click.echo("no runs stored yet" if suite is None else f"no runs of suite {suite} stored")
        if reader.missing:
            click.echo(missing_store_message(reader.display_url))
        return
    rows = [_runs_row(r, completeness[r.run_id], audits[(r.suite, r.version)]) for r in records]
    click.echo(_columns([_RUNS_HEADER, *rows]))
    if len(records) < total:
        which = f"runs of suite {suite}" if suite else "runs"
        click.echo(
            f"{len(records):,} of {total:,} {which} shown (the newest); --all shows every run, "
            "--limit N the newest N"
        )
    for r in records:
        if r.run_id in top_error:
            reason, count = top_error[r.run_id]
            console.print(
                f"{r.run_id}: most frequent harness error ({count}×): {reason[:160]}"
                f" (`evalsuite score {r.run_id}` says what to do)"
            )


def _runs_row(r: RunRecord, c: Completeness, audit: dict[str, object]) -> tuple[str, ...]:
    """One run's cells in `evalsuite runs`."""
    health = "n/a" if r.valid is None else ("valid" if r.valid else "INVALID")
    items = str(c.n_items_run) + (f"/{c.n_items_split}" if c.n_items_split else "")
    return (
        printable(r.run_id),
        printable(f"{r.suite}@{r.version}") if r.suite else "(ingested)",
        r.split or "-",
        printable(r.model),
        str(r.epochs),
        items + (" PARTIAL" if c.partial else ""),
        r.status,
        health + _audit_tag(audit),
        r.started_at[:19],
    )


def _columns(rows: list[tuple[str, ...]]) -> str:
    """Rows as left-aligned columns, one line per row, never wrapped (grep and pipe friendly).

    Plain text rather than a rich table: rich measures and wraps every cell, which took
    seconds for a store of thousands of runs (docs/scale.md, "Start-up").
    """
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip()
        for row in rows
    )


def _audit_tag(audit: dict[str, object]) -> str:
    """A run's health cell: its suite version's audit marker, when it has one."""
    return f" · {audit['marker']}" if audit.get("marker") else ""


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


def _ingest_suite(ctx: Context, suite_ref: str | None, split: str | None) -> Manifest | None:
    """The frozen manifest ``ingest --suite`` attaches to (``--split`` needs it)."""
    from evalsuite.manifest import load_manifest

    if suite_ref is None:
        if split is not None:
            raise UsageError("--split applies with --suite SUITE@X.Y.Z only")
        return None
    name, version = parse_ref(suite_ref)
    if version is None:
        raise UsageError(f"--suite needs the exact frozen version, e.g. {name}@1.0.0")
    return load_manifest(ctx.layout, name, version)


_CSV_TARGETS = ("model", "item_id", "epoch", "score", "stratum", "outcome", "limit_type")


@click.command("ingest", help=_INGEST_HELP)
@click.argument("path", metavar="PATH")
@click.option("--format", "fmt", type=click.Choice(["inspect", "csv", "parquet"]), required=True)
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
    as_json: bool,
) -> None:
    """Store results produced elsewhere as runs (the help text is `_INGEST_HELP`)."""
    from evalsuite.run import CsvOptions, ingest_inspect, ingest_table, is_url

    suite = _ingest_suite(ctx, suite_ref, split)
    if fmt != "inspect" and is_url(path):
        raise UsageError(
            f"--format {fmt} reads a local file, not a URL ({path}); copy the file to this "
            "machine first (inspect logs, --format inspect, may be read from any fsspec URL)"
        )

    if fmt == "inspect":
        if columns or model or ignore_columns or epoch_base != "1":
            raise UsageError(
                "--column, --ignore-column, --model and --epoch-base apply to --format csv "
                "and --format parquet only"
            )
        store = open_store(ctx)
        report = ingest_inspect(
            path,
            store,
            root=ctx.layout.root,
            error_threshold=error_threshold,
            again=again,
            suite=suite,
            split=split,
        )
    else:
        mapping: dict[str, str] = {}
        for pair in columns:
            target, sep, source = pair.partition("=")
            if not sep or target not in _CSV_TARGETS or not source:
                raise UsageError(
                    f"--column expects TARGET=NAME with TARGET one of {', '.join(_CSV_TARGETS)} "
                    f"and NAME a column of the file (got {pair!r}), e.g. --column item_id=task_id"
                )
            if target in mapping:
                raise UsageError(f"--column maps {target} twice ({mapping[target]}, {source})")
            mapping[target] = source
        options = CsvOptions(
            columns=mapping,
            model=model,
            epoch_base=1 if epoch_base == "1" else 0,
            error_threshold=error_threshold,
            ignore=ignore_columns,
        )
        store = open_store(ctx)
        report = ingest_table(
            Path(path),
            store,
            root=ctx.layout.root,
            options=options,
            fmt="parquet" if fmt == "parquet" else "csv",
            again=again,
            suite=suite,
            split=split,
        )
    if as_json:
        emit_json(
            {
                "runs": [r.to_dict() for r in report.runs],
                "skipped": [s.to_dict() for s in report.skipped],
            }
        )
    else:
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
    if report.invalid:
        listed = "; ".join(
            f"{r.run_id} ({r.model}: {r.error_rate:.1%} harness errors > {r.error_threshold:.0%})"
            for r in report.invalid
        )
        exit_after_output(
            InvalidRunError(
                f"{len(report.invalid)} ingested run(s) are invalid: {listed}. They are stored "
                "and flagged, and comparisons refuse them. Fix the harness that produced these "
                "results and ingest its new results, or pass --error-threshold if this share "
                "of harness errors is acceptable for your purpose"
            )
        )
