"""`evalsuite run SUITE@V --adaptive`: one run whose attempts are planned in rounds.

The statistics and the planner are `evalsuite.analyse._adaptive` (docs/design/adaptive.md);
this module drives them through the runner: each round's planned (item, epoch) attempts
run through inspect as one more step of the same run (`run_suite(attempts=...)`), so an
adaptive holdout run spends one ledger look whatever its rounds, with its stopping rule
recorded in the ledger's access entry before anything runs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from evalsuite._core.layout import Layout
from evalsuite.analyse import AdaptiveRule, AdaptiveRun, Versus
from evalsuite.errors import IncomparableRunsError, InvalidRunError, UsageError
from evalsuite.manifest import ManifestItem, load_manifest
from evalsuite.report import adaptive_file

if TYPE_CHECKING:
    from evalsuite.errors import RunInterrupted
    from evalsuite.manifest import KeySpec
    from evalsuite.run import RunResult, RunSpec
    from evalsuite.store import Store

__all__ = ["adaptive_file", "item_weights", "run_adaptive", "versus_results"]


def item_weights(
    items: Sequence[ManifestItem], strata: dict[str, float]
) -> npt.NDArray[np.float64]:
    """Each item's deployment weight: its stratum's weight shared by the stratum's items.

    Strata without items in the run leave the estimand; the rest are renormalised to sum 1.

    Raises:
        UsageError: an item's stratum has no weight.
    """
    counts = Counter(item.stratum for item in items)
    missing = sorted(set(counts) - set(strata))
    if missing:
        raise UsageError(f"the suite declares no deployment weight for stratum {missing[0]!r}")
    raw = np.array([strata[item.stratum] / counts[item.stratum] for item in items], dtype=float)
    if not raw.sum() > 0:
        raise UsageError("the run's strata all have deployment weight 0: nothing to estimate")
    weights: npt.NDArray[np.float64] = raw / raw.sum()
    return weights


def versus_results(
    store: Store, run_id: str, spec: RunSpec, items: Sequence[ManifestItem]
) -> Versus:
    """The stored run `run_id`'s item means and usable epochs, in the order of `items`.

    Raises:
        IncomparableRunsError: another suite, version or split, or items it did not run.
        UsageError: a run not complete (still running, or interrupted): its attempts so far
            are a subset chosen by timing, as `compare` refuses them.
        InvalidRunError: an invalid run (too many harness errors), as `compare` refuses it.
    """
    record = store.get_run(run_id)
    if record.status != "complete":
        still = "was interrupted" if record.status == "interrupted" else "is still running"
        raise UsageError(
            f"--versus {run_id}: the stored run {still} and is not complete, so its attempts "
            "so far are not the run to compare with. Complete it first (`evalsuite run "
            f"--resume {run_id}`; a sharded run: its unfinished shards, `--resume {run_id} "
            "--shard I/N`), or name a complete run"
        )
    if record.valid is False:
        raise InvalidRunError(
            f"--versus {run_id}: the stored run is invalid (too many harness errors): its "
            "scores measure the harness, not the model. Name a valid run of this suite version"
        )
    if (record.suite, record.version, record.split) != (spec.suite, spec.version, spec.split):
        raise IncomparableRunsError(
            f"--versus {run_id}: it ran {record.suite}@{record.version} {record.split}, this "
            f"run is {spec.suite}@{spec.version} {spec.split}; compare runs of the same suite "
            "version and split"
        )
    frame = store.attempts(record.run_id)
    usable = frame[frame["outcome"] != "harness_error"]
    means = usable.groupby("item_id")["score"].mean()
    epochs = usable.groupby("item_id")["score"].size()
    absent = [item.id for item in items if item.id not in means.index]
    if absent:
        raise IncomparableRunsError(
            f"--versus {run_id}: the stored run has no usable attempt of {len(absent)} item(s) "
            f"of this run (e.g. {absent[0]}); the comparison is paired by item"
        )
    ids = [item.id for item in items]
    return Versus(
        record.run_id,
        np.asarray(means.loc[ids].to_numpy(), dtype=np.float64),
        np.asarray(epochs.loc[ids].to_numpy(), dtype=np.float64),
    )


def _round_scores(store: Store, run_id: str, keys: Sequence[tuple[str, int]]) -> list[float | None]:
    """Scores of `keys` in order: None for a harness error (or an attempt not stored)."""
    frame = store.attempts(run_id)
    table: dict[tuple[str, int], Any] = {
        (str(i), int(e)): (o, s)
        for i, e, o, s in zip(
            frame["item_id"], frame["epoch"], frame["outcome"], frame["score"], strict=True
        )
    }
    scores: list[float | None] = []
    for key in keys:
        outcome, score = table.get(key, ("harness_error", math.nan))
        if outcome == "harness_error":
            scores.append(None)
        else:
            scores.append(0.0 if score is None or math.isnan(float(score)) else float(score))
    return scores


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
) -> tuple[RunResult, dict[str, Any]]:
    """Run `spec` adaptively under `rule`; (the finished run's result, the adaptive summary).

    `hard_stop` and `stop_within_s` are `run_suite`'s, for every round.

    The summary (rounds, attempts per item, intervals, why it stopped) is also kept with the
    run in the store (`Store.set_adaptive`), where the report reads it.

    Raises:
        UsageError: bad rule or options; IncomparableRunsError for a bad --versus run; and
            whatever `run_suite` raises.
    """
    from evalsuite.run import STOP_WITHIN_S, run_suite

    manifest = load_manifest(layout, spec.suite, spec.version)
    items = sorted(manifest.items_by_split(spec.split), key=lambda i: i.id)
    if spec.limit_items:
        items = items[: spec.limit_items]
    if not items:
        raise UsageError(f"{manifest.ref} has no {spec.split} items: nothing to run")
    weights = item_weights(items, dict(manifest.weights))
    versus = versus_results(store, rule.versus, spec, items) if rule.versus else None
    spec = spec.model_copy(update={"adaptive": rule.to_dict(), "epochs": 1})
    adaptive = AdaptiveRun(weights, rule, versus)
    done: list[tuple[str, int]] = []
    epochs: Counter[str] = Counter()
    current = run_id
    result = None
    while (chosen := adaptive.next_round()) is not None:
        round_keys = []
        for index in chosen:
            item_id = items[index].id
            epochs[item_id] += 1
            round_keys.append((item_id, epochs[item_id]))
        done.extend(round_keys)
        result = run_suite(
            layout,
            spec,
            keys=keys,
            store=store,
            progress=progress,
            run_id=current if not adaptive.rounds else None,
            resume=current if adaptive.rounds else None,
            attempts=done,
            finish=False,
            hard_stop=hard_stop,
            stop_within_s=STOP_WITHIN_S if stop_within_s is None else stop_within_s,
        )
        current = result.run.run_id
        adaptive.observe(_round_scores(store, current, round_keys))
    if current is None:  # the budget allows no attempt: refused by AdaptiveRule first
        raise UsageError("the adaptive run's budget allows no attempt")
    result = run_suite(
        layout, spec, keys=keys, store=store, progress=False, resume=current, attempts=done
    )
    summary = adaptive.to_dict() | {"run_id": current, "items": len(items)}
    store.set_adaptive(current, summary)
    return result, summary
