"""`evalsuite run SUITE@V --adaptive`: the command line's round runner for `run_adaptive`.

The use case (planning rounds, observing them, stopping, keeping the summary) is
`evalsuite.service.run_adaptive`; this module gives it what runs one round: `run_suite` with
the command's progress display and signal handling (docs/design/run-limits.md).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from evalsuite._core.layout import Layout
from evalsuite.service import AdaptiveResult, RoundStep
from evalsuite.service import run_adaptive as run_adaptive_use_case

if TYPE_CHECKING:
    from evalsuite.analyse import AdaptiveRule
    from evalsuite.errors import RunInterrupted
    from evalsuite.manifest import KeySpec
    from evalsuite.run import RunResult, RunSpec
    from evalsuite.store import Store

__all__ = ["run_adaptive"]


def run_adaptive(
    layout: Layout,
    spec: RunSpec,
    rule: AdaptiveRule,
    *,
    keys: KeySpec,
    store: Store,
    progress: bool,
    run_id: str | None,
    hard_stop: Callable[[RunInterrupted], None] | None = None,
    stop_within_s: float | None = None,
) -> tuple[RunResult, AdaptiveResult]:
    """Run `spec` adaptively under `rule`; (the finished run's result, what it found).

    `hard_stop` and `stop_within_s` are `run_suite`'s, for every round.

    Raises:
        UsageError: bad rule or options; IncomparableRunsError for a bad --versus run; and
            whatever `run_suite` raises.
    """
    from evalsuite.run import STOP_WITHIN_S, run_suite

    def run_round(step: RoundStep) -> RunResult:
        round_spec = spec.model_copy(update=dict(step.spec_update))
        if step.finish:
            return run_suite(
                layout,
                round_spec,
                keys=keys,
                store=store,
                progress=False,
                resume=step.resume,
                attempts=list(step.attempts),
            )
        return run_suite(
            layout,
            round_spec,
            keys=keys,
            store=store,
            progress=progress,
            run_id=step.run_id,
            resume=step.resume,
            attempts=list(step.attempts),
            finish=False,
            hard_stop=hard_stop,
            stop_within_s=STOP_WITHIN_S if stop_within_s is None else stop_within_s,
        )

    done = run_adaptive_use_case(
        layout, spec, rule, store=store, run_round=run_round, run_id=run_id
    )
    return done.run, done.adaptive
