"""The `run --adaptive` use case: one run whose attempts are planned in rounds.

The statistics and the planner are `evalsuite.analyse` (`AdaptiveRun`, docs/design/adaptive.md);
this module drives them round by round. What runs one round is a parameter (`RoundRunner`):
the command line passes `run_suite` with its signal handling, so the service needs neither
the command line nor inspect. Each round's planned (item, epoch) attempts run as one more step
of the same run, so an adaptive holdout run spends one ledger look whatever its rounds, with
its stopping rule recorded in the ledger's access entry before anything runs.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Generic, Literal, Protocol, TypeVar

import numpy as np
import numpy.typing as npt

from evalsuite.analyse import (
    AdaptiveRule,
    AdaptiveRun,
    Estimand,
    SequentialComparison,
    SequentialDesign,
    SequentialLook,
    TargetDesign,
    Versus,
    estimand_text,
)
from evalsuite.errors import IncomparableRunsError, InvalidRunError, UsageError
from evalsuite.manifest import ManifestItem, load_manifest
from evalsuite.service._adaptive_result import AdaptiveResult

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.store import RunRecord, Store

__all__ = [
    "AdaptiveRunResult",
    "AdaptiveTarget",
    "RoundRunner",
    "RoundStep",
    "item_weights",
    "run_adaptive",
    "sequential_design",
    "versus_results",
]


class AdaptiveTarget(Protocol):
    """What the driver reads of the run to make (a `evalsuite.run.RunSpec` is one)."""

    @property
    def suite(self) -> str: ...
    @property
    def version(self) -> str: ...
    @property
    def split(self) -> str: ...
    @property
    def limit_items(self) -> int | None: ...


class _RoundResult(Protocol):
    """What the driver reads of a round's result (a `evalsuite.run.RunResult` is one)."""

    @property
    def run(self) -> RunRecord: ...


R = TypeVar("R", bound=_RoundResult)
R_co = TypeVar("R_co", bound=_RoundResult, covariant=True)


@dataclass(frozen=True, slots=True)
class RoundStep:
    """One call of the round runner.

    Attributes:
        attempts: every (item id, epoch) planned so far, this round's last; the runner runs
            those not yet stored.
        spec_update: the run spec's fields an adaptive run sets (its rule; one epoch).
        run_id: the first round: the id to start the run with (None: a new id).
        resume: later rounds and the finish: the run to continue.
        finish: the last call: no new attempts, finish the run (health, status).
    """

    attempts: tuple[tuple[str, int], ...]
    spec_update: Mapping[str, object]
    run_id: str | None
    resume: str | None
    finish: bool


class RoundRunner(Protocol[R_co]):
    """Runs one `RoundStep` of the run and returns its result."""

    def __call__(self, step: RoundStep) -> R_co: ...


@dataclass(frozen=True, slots=True)
class AdaptiveRunResult(Generic[R]):
    """The finished adaptive run: the runner's result of the last step, and what it found."""

    run: R
    adaptive: AdaptiveResult


def item_weights(
    items: Sequence[ManifestItem], strata: Mapping[str, float]
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
    store: Store, run_id: str, target: AdaptiveTarget, items: Sequence[ManifestItem]
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
    ours = (target.suite, target.version, target.split)
    if (record.suite, record.version, record.split) != ours:
        raise IncomparableRunsError(
            f"--versus {run_id}: it ran {record.suite}@{record.version} {record.split}, this "
            f"run is {target.suite}@{target.version} {target.split}; compare runs of the same "
            "suite version and split"
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


def _play_round(
    run_round: RoundRunner[R],
    store: Store,
    done: list[tuple[str, int]],
    round_keys: list[tuple[str, int]],
    update: Mapping[str, object],
    current: str | None,
    *,
    first: bool,
) -> tuple[str, list[float | None]]:
    """Run one round's new attempts (`round_keys`, added to `done`) into the run.

    The first round creates the run; later ones resume it. Returns the run id and the
    round's scores, in the order of `round_keys` (None: a harness error).
    """
    done.extend(round_keys)
    result = run_round(
        RoundStep(
            attempts=tuple(done),
            spec_update=update,
            run_id=current if first else None,
            resume=None if first else current,
            finish=False,
        )
    )
    run_id: str = result.run.run_id
    return run_id, _round_scores(store, run_id, round_keys)


def _round_scores(store: Store, run_id: str, keys: Sequence[tuple[str, int]]) -> list[float | None]:
    """Scores of `keys` in order: None for a harness error (or an attempt not stored)."""
    frame = store.attempts(run_id)
    table: dict[tuple[str, int], tuple[object, object]] = {
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
        elif isinstance(score, int | float) and not math.isnan(float(score)):
            scores.append(float(score))
        else:
            scores.append(0.0)
    return scores


def run_adaptive(
    layout: Layout,
    target: AdaptiveTarget,
    rule: AdaptiveRule,
    *,
    store: Store,
    run_round: RoundRunner[R],
    run_id: str | None = None,
) -> AdaptiveRunResult[R]:
    """Run `target` adaptively under `rule`, one `run_round` call per round, then finish it.

    The result's summary (rounds, attempts per item, intervals, why it stopped) is also kept
    with the run in the store (`Store.set_adaptive`), where `score` and the report read it.

    Raises:
        UsageError: bad rule or options (no items, no weight for a stratum, a budget that
            allows no attempt); IncomparableRunsError, InvalidRunError for a bad
            ``--versus`` run; and whatever `run_round` raises.
    """
    if rule.versus is not None and rule.target_halfwidth is not None:
        raise UsageError(
            "--versus runs a sequential comparison that stops at a verdict, and "
            "--target-halfwidth a run that stops at an interval width: give one of them "
            "(docs/design/sequential.md)"
        )
    manifest = load_manifest(layout, target.suite, target.version)
    split: Literal["dev", "holdout"] = "holdout" if target.split == "holdout" else "dev"
    items = sorted(manifest.items_by_split(split), key=lambda i: i.id)
    if target.limit_items:
        items = items[: target.limit_items]
    if not items:
        raise UsageError(f"{manifest.ref} has no {target.split} items: nothing to run")
    weights = item_weights(items, dict(manifest.weights))
    versus = versus_results(store, rule.versus, target, items) if rule.versus else None
    if versus is None and rule.target_halfwidth is not None:
        return _run_target(items, weights, rule, store=store, run_round=run_round, run_id=run_id)
    if versus is not None:
        _require_binary(store, versus.run_id)
        return _run_sequential(
            items, weights, rule, versus, store=store, run_round=run_round, run_id=run_id
        )
    update: Mapping[str, object] = {"adaptive": rule.to_dict(), "epochs": 1}
    adaptive = AdaptiveRun(weights, rule, versus)
    done: list[tuple[str, int]] = []
    epochs: Counter[str] = Counter()
    current = run_id
    while (chosen := adaptive.next_round()) is not None:
        round_keys = []
        for index in chosen:
            item_id = items[index].id
            epochs[item_id] += 1
            round_keys.append((item_id, epochs[item_id]))
        done.extend(round_keys)
        first = not adaptive.rounds
        result = run_round(
            RoundStep(
                attempts=tuple(done),
                spec_update=update,
                run_id=current if first else None,
                resume=None if first else current,
                finish=False,
            )
        )
        current = result.run.run_id
        adaptive.observe(_round_scores(store, current, round_keys))
    if current is None:  # the budget allows no attempt: refused by AdaptiveRule first
        raise UsageError("the adaptive run's budget allows no attempt")
    finished = run_round(
        RoundStep(tuple(done), spec_update=update, run_id=None, resume=current, finish=True)
    )
    summary = adaptive.to_dict() | {
        "run_id": current,
        "items": len(items),
        "estimand": "suite_items",
        "estimand_text": estimand_text("suite_items"),
    }
    store.set_adaptive(current, summary)
    return AdaptiveRunResult(finished, AdaptiveResult.from_dict(summary))


def sequential_design(rule: AdaptiveRule) -> SequentialDesign:
    """The sequential comparison a ``--versus`` rule runs (docs/design/sequential.md).

    Its alpha, margin and seed are the rule's; the full fixed run it stands for has
    ``--max-epochs`` epochs (default 5) on every item.
    """
    return SequentialDesign(
        alpha=rule.alpha,
        margin=rule.margin,
        epochs=rule.full_epochs,
        seed=rule.seed,
    )


def _require_binary(store: Store, run_id: str) -> None:
    """The sequential comparison takes 0/1 scores: refuse a stored run with others."""
    frame = store.attempts(run_id)
    scored = frame.loc[frame["outcome"] != "harness_error", "score"].dropna()
    other = scored[~scored.isin((0.0, 1.0))]
    if len(other):
        raise UsageError(
            f"--versus {run_id}: the stored run has non-binary scores (e.g. "
            f"{float(other.iloc[0]):g}); the sequential comparison takes scores of 0 or 1. "
            "Compare fixed runs with `evalsuite compare` instead"
        )


def _round_dict(
    index: int,
    keys: Sequence[tuple[str, int]],
    scores: Sequence[float | None],
    calls: int,
    seq: SequentialComparison,
    look: SequentialLook | None,
) -> dict[str, object]:
    score = seq.candidate_score() if look is not None else None
    return {
        "round": index,
        "attempts": len(keys),
        "items": len({k[0] for k in keys}),
        "harness_errors": sum(s is None for s in scores),
        "calls": calls,
        "look": None if look is None else look.index,
        "estimate": None if score is None else score[0],
        "ci": None if score is None else [score[1], score[2]],
        "halfwidth": None if score is None else (score[2] - score[1]) / 2,
        "difference": None if look is None else look.estimate,
        "difference_ci": None if look is None else [look.lower, look.upper],
    }


def _run_sequential(
    items: Sequence[ManifestItem],
    weights: npt.NDArray[np.float64],
    rule: AdaptiveRule,
    versus: Versus,
    *,
    store: Store,
    run_round: RoundRunner[R],
    run_id: str | None,
) -> AdaptiveRunResult[R]:
    """``--versus``: the sequential comparison over items (`SequentialComparison`).

    Items in stratified random order (seeded by the rule's seed), in groups; each round
    runs exactly the attempts the comparison asks for; the run stops at the first look
    with a verdict, or at ``--max-calls`` (undecided).
    """
    design = sequential_design(rule)
    seq = SequentialComparison(
        versus.item_means,
        design,
        rng=np.random.default_rng(rule.seed),
        strata=[item.stratum for item in items],
        weights=weights,
    )
    budget = min(seq.budget, rule.max_calls) if rule.max_calls is not None else seq.budget
    record = rule.to_dict() | {"method": design.method, "sequential": design.to_dict()}
    update: Mapping[str, object] = {"adaptive": record, "epochs": 1}
    done: list[tuple[str, int]] = []
    epochs: Counter[str] = Counter()
    rounds: list[dict[str, object]] = []
    current = run_id
    stopped_at_budget = False
    while (requests := seq.next_round()) is not None:
        if seq.calls + sum(n for _, n in requests) > budget:
            stopped_at_budget = True
            break
        round_keys = []
        for index, n in requests:
            item_id = items[index].id
            for _ in range(n):
                epochs[item_id] += 1
                round_keys.append((item_id, epochs[item_id]))
        current, scores = _play_round(
            run_round, store, done, round_keys, update, current, first=not rounds
        )
        grouped: list[list[float | None]] = []
        at = 0
        for _, n in requests:
            grouped.append(list(scores[at : at + n]))
            at += n
        look = seq.observe(grouped)
        rounds.append(_round_dict(len(rounds) + 1, round_keys, scores, seq.calls, seq, look))
    if current is None:
        raise UsageError(
            f"--max-calls {rule.max_calls} is fewer than the sequential comparison's first "
            f"round ({design.stage_one} attempts on each item of its first group): raise it"
        )
    finished = run_round(
        RoundStep(tuple(done), spec_update=update, run_id=None, resume=current, finish=True)
    )
    summary = _sequential_summary(seq, rule, versus, rounds, epochs, items, budget)
    if stopped_at_budget:
        summary["stop_reason"] = (
            f"budget: the next round would pass {budget} attempts (--max-calls) before a "
            f"verdict; no verdict (the full comparison needs {seq.budget})"
        )
        summary["versus"]["verdict"] = "undecided"  # type: ignore[index]
    summary |= {"run_id": current}
    store.set_adaptive(current, summary)
    return AdaptiveRunResult(finished, AdaptiveResult.from_dict(summary))


def _sequential_summary(
    seq: SequentialComparison,
    rule: AdaptiveRule,
    versus: Versus,
    rounds: list[dict[str, object]],
    epochs: Counter[str],
    items: Sequence[ManifestItem],
    budget: int,
) -> dict[str, object]:
    """The stored and ``--json`` summary: the adaptive fields, plus ``sequential``."""
    block = seq.to_dict()
    score = seq.candidate_score()
    per_item = np.array([epochs[item.id] for item in items], dtype=float)
    weights = np.asarray(seq.weights, dtype=float)
    text = f"{block['estimand_text']}; the candidate's score: {estimand_text('item_population')}"
    return {
        "method": seq.method,
        "rule": rule.to_dict() | {"method": seq.method, "sequential": block["design"]},
        "estimand": block["estimand"],
        "estimand_text": text,
        "interval": "repeated",
        "estimate": None if score is None else score[0],
        "ci": None if score is None else [score[1], score[2]],
        "level": 1 - seq.design.spent_alpha,
        "calls": seq.calls,
        "budget": budget,
        "items": len(items),
        "seed": rule.seed,
        "stop_reason": seq.stop_reason,
        "rounds": rounds,
        "attempts_per_item": {
            "min": int(per_item.min()),
            "median": float(np.median(per_item)),
            "max": int(per_item.max()),
        },
        "sequential": block,
        "versus": {
            "run_id": versus.run_id,
            "estimate": float(weights @ versus.item_means),
            "ci": None,
            "method": "paired_item_differences",
            "epochs": seq.design.epochs,
            "verdict": seq.verdict,
            "margin": seq.design.margin,
            "alpha_sequence": seq.design.alpha,
            "alpha_final": None,
            "final_test": None,
            "difference": block["estimate"],
            "difference_ci": block["ci"],
            "estimand": block["estimand"],
        },
    }


def _target_design(rule: AdaptiveRule, weights: npt.NDArray[np.float64]) -> TargetDesign:
    """The few-stage design a ``--target-halfwidth`` rule runs (`TargetDesign`)."""
    if rule.target_halfwidth is None:  # run_adaptive calls it only with a target
        raise UsageError("the few-stage design needs --target-halfwidth")
    estimand: Estimand = "item_population" if rule.estimand == "item_population" else "suite_items"
    return TargetDesign(
        weights,
        rule.target_halfwidth,
        np.random.default_rng(rule.seed),
        estimand=estimand,
        alpha=rule.alpha,
        max_epochs=rule.full_epochs,
        max_calls=rule.max_calls,
    )


def _run_target(
    items: Sequence[ManifestItem],
    weights: npt.NDArray[np.float64],
    rule: AdaptiveRule,
    *,
    store: Store,
    run_round: RoundRunner[R],
    run_id: str | None,
) -> AdaptiveRunResult[R]:
    """``--target-halfwidth``: the few-stage design (docs/design/sequential.md).

    A pilot of 2 epochs on every item, then top-ups of equal epochs (a random subset gets
    one more), each a round of the same run, until the interval of the estimand is at most
    +-H, or the budget; the item population's target is refused after the pilot when more
    epochs cannot reach it.
    """
    design = _target_design(rule, weights)
    record = rule.to_dict() | {"method": design.method}
    update: Mapping[str, object] = {"adaptive": record, "epochs": 1}
    done: list[tuple[str, int]] = []
    epochs: Counter[str] = Counter()
    rounds: list[dict[str, object]] = []
    current = run_id
    while (extra := design.next_round()) is not None:
        round_keys: list[tuple[str, int]] = []
        owners: list[int] = []
        for index in np.flatnonzero(extra):
            item_id = items[int(index)].id
            for _ in range(int(extra[index])):
                epochs[item_id] += 1
                round_keys.append((item_id, epochs[item_id]))
                owners.append(int(index))
        current, scores = _play_round(
            run_round, store, done, round_keys, update, current, first=not rounds
        )
        count = len(items)
        sums, squares = np.zeros(count), np.zeros(count)
        scored = np.zeros(count, dtype=np.int64)
        for owner, score in zip(owners, scores, strict=True):
            if score is not None:
                sums[owner] += score
                squares[owner] += score * score
                scored[owner] += 1
        design.observe(sums, scored, squares)
        now = design.interval()
        rounds.append(
            {
                "round": len(rounds) + 1,
                "attempts": len(round_keys),
                "items": len({k[0] for k in round_keys}),
                "harness_errors": sum(s is None for s in scores),
                "calls": design.calls,
                "estimate": now.estimate,
                "ci": [now.estimate - now.halfwidth, now.estimate + now.halfwidth],
                "halfwidth": now.halfwidth,
            }
        )
    if current is None:  # the pilot always runs: TargetDesign refuses a budget below it
        raise UsageError("the adaptive run's budget allows no attempt")
    finished = run_round(
        RoundStep(tuple(done), spec_update=update, run_id=None, resume=current, finish=True)
    )
    summary = _target_summary(design, rule, record, rounds, current, len(items))
    store.set_adaptive(current, summary)
    return AdaptiveRunResult(finished, AdaptiveResult.from_dict(summary))


def _target_summary(
    design: TargetDesign,
    rule: AdaptiveRule,
    record: Mapping[str, object],
    rounds: list[dict[str, object]],
    run_id: str,
    n_items: int,
) -> dict[str, object]:
    out = design.outcome()
    now = design.interval()
    per_item = design.attempts
    population = design.population
    return {
        "run_id": run_id,
        "method": design.method,
        "rule": dict(record),
        "estimand": design.estimand,
        "estimand_text": estimand_text(design.estimand),
        "interval": "few-stage",
        "estimate": out.estimate,
        "ci": [out.lower, out.upper],
        "level": 1 - rule.alpha,
        "calls": design.calls,
        "budget": design.budget,
        "items": n_items,
        "seed": rule.seed,
        "stop_reason": design.stop_reason,
        "rounds": rounds,
        "attempts_per_item": {
            "min": int(per_item.min()),
            "median": float(np.median(per_item)),
            "max": int(per_item.max()),
        },
        "target": {
            "halfwidth": design.halfwidth,
            "reached": out.reached,
            "refused": out.refused,
            "stages": design.stages,
            "epochs_needed": design.epochs_needed,
            "quantile": now.quantile,
            "df": now.df if math.isfinite(now.df) else None,
            "population": None if population is None else population.to_dict(),
        },
    }
