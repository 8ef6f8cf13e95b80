"""`score_run`: everything `evalsuite score` reports about one run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite.analyse._attempts import Health, ItemTable, item_table, text_codes
from evalsuite.analyse._estimates import StratumEstimate, estimate_mean, stratified_estimates
from evalsuite.analyse._intervals import Estimate, IntervalMethod, check_level
from evalsuite.analyse._passk import PassK, pass_at_k, pass_hat_k
from evalsuite.analyse._reliability import Reliability, reliability_from_items
from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = ["RunScore", "score_run"]


@dataclass(frozen=True, slots=True)
class RunScore:
    """The scored run: health, unweighted and weighted means, strata, pass@k, reliability.

    Attributes:
        run_id: the run (from the ``run_id`` column).
        input_hash: content hash of the attempts analysed (ids, epochs, outcomes, scores).
        health: planned, scored, limits, harness errors and the error rate.
        overall: unweighted mean of item means.
        weighted: post-stratified mean ``Σ_h W_h ȳ_h``.
        strata: one estimate per stratum, with its weight.
        pass_k: pass@k and pass^k for k = 1 .. the most usable epochs of any item, each over
            the items with at least k usable epochs (its ``n_items`` says how many).
        reliability: flip rate, ICCs, noise floor, cost-optimal K, pilot MDE.
        level: confidence level of every interval.
        epochs: the most attempts any item has in the table (harness errors included). The
            planned epochs are the run's (`score --json` reports those as ``epochs``).
        epochs_usable: the most usable epochs (``scored`` or ``limit``) of any item.
        clustered: the suite declares clusters (SEs are cluster-robust).
        notes: assumptions and exclusions a reader must see.
    """

    run_id: str
    input_hash: str
    health: Health
    overall: Estimate
    weighted: Estimate
    strata: tuple[StratumEstimate, ...]
    pass_k: tuple[PassK, ...]
    reliability: Reliability
    level: float
    epochs: int
    clustered: bool
    notes: tuple[str, ...]
    epochs_usable: int = 0

    def conf_int(self, level: float = 0.95) -> Interval:
        """The interval of the unweighted (manifest) score at `level`."""
        return self.overall.conf_int(level)

    def to_dict(self) -> dict[str, Any]:
        """The ``score --json`` fields this stage owns (run facts come from the store)."""
        return {
            "run_id": self.run_id,
            "input_hash": self.input_hash,
            "epochs": self.epochs,
            "epochs_usable": self.epochs_usable,
            "level": self.level,
            "clustered": self.clustered,
            "harness": self.health.to_dict(),
            "overall": self.overall.to_dict(),
            "weighted": self.weighted.to_dict(),
            "strata": [s.to_dict() for s in self.strata],
            "pass_at_k": {str(p.k): p.pass_at_k.mean for p in self.pass_k},
            "pass_hat_k": {str(p.k): p.pass_hat_k.mean for p in self.pass_k},
            "pass_k_n_items": {str(p.k): p.pass_hat_k.n_items for p in self.pass_k},
            "pass_k": [p.to_dict() for p in self.pass_k],
            "reliability": self.reliability.to_dict(),
            "notes": list(self.notes),
        }

    def to_frame(self) -> pd.DataFrame:
        """One row per estimate: overall, weighted, then each stratum."""
        frames = [
            self.overall.to_frame().assign(scope="overall", stratum=None, weight=None),
            self.weighted.to_frame().assign(scope="weighted", stratum=None, weight=None),
        ]
        frames += [s.to_frame().assign(scope="stratum") for s in self.strata]
        frame = pd.concat(frames, ignore_index=True)
        first = ["scope", "stratum", "weight"]
        return frame[first + [c for c in frame.columns if c not in first]]


def _pass_k(
    it: ItemTable,
    clusters: npt.NDArray[np.object_] | None,
    *,
    level: float,
    interval: IntervalMethod,
    rng: np.random.Generator,
) -> list[PassK]:
    """pass@k and pass^k for k = 1 .. the most usable epochs of any item.

    Each k is estimated over the items with at least k usable epochs (the unbiased
    estimators need ``n_i ≥ k``), and says how many those are: one item with harness errors
    no longer hides pass^k of every other item.
    """
    out: list[PassK] = []
    k_max = int(it.n_epochs.max()) if it.n_items else 0
    base_excluded = it.n_items_excluded
    for k in range(1, k_max + 1):
        usable = it.n_epochs >= k
        n, c = it.n_epochs[usable], it.successes[usable]
        sub_clusters = None if clusters is None else clusters[usable]
        short = int(np.count_nonzero(~usable))
        estimates = [
            estimate_mean(
                values,
                clusters=sub_clusters,
                level=level,
                interval=interval,
                n_excluded=base_excluded + short,
                trials=n,
                rng=rng,
            )
            for values in (pass_at_k(n, c, k), pass_hat_k(n, c, k))
        ]
        out.append(PassK(k, estimates[0], estimates[1], n_items_short=short))
    return out


def score_run(  # noqa: PLR0913 - the analysis options of `score`, one each
    attempts: pd.DataFrame,
    *,
    weights: Mapping[str, float] | None = None,
    planned: int | None = None,
    level: float = 0.95,
    interval: IntervalMethod = "auto",
    alpha: float = 0.05,
    model_corr: float = 0.9,
    rng: np.random.Generator,
    table: ItemTable | None = None,
) -> RunScore:
    """Score one run from its attempts: the estimates behind ``evalsuite score``.

    Attempts are aggregated to item means first (the item is the unit of analysis);
    ``harness_error`` rows are excluded and counted, ``limit`` rows count 0. Every interval
    is chosen by the one rule of `estimate_mean` (docs/design/intervals.md) and names its
    method.

    Args:
        attempts: the attempts table of one run (docs/design/attempts.md).
        weights: deployment share per stratum (must cover every stratum and sum to 1);
            None or empty: item shares.
        planned: planned attempts (items × epochs); None: the number of rows.
        level: confidence level of every interval.
        interval: as in `estimate_mean` (``auto``: Wilson with effective n).
        alpha: two-sided significance level of the pilot MDE.
        model_corr: assumed correlation of a second model's true item scores with this
            run's, for the pilot MDE (`_mde.pilot_mde`); stated in every output.
        rng: generator for the bootstrap (only drawn from when it runs).
        table: `item_table(attempts, planned=planned)` when the caller has built it already
            (a report shares it with the comparison, docs/design/analysis-scale.md); None:
            built here.

    Returns:
        The `RunScore`. Estimates that are undefined (no usable item, one unit, ...) are NaN
        with the reason in their ``note``; nothing undefined is reported as 0.

    Notes:
        pass@k and pass^k use the unbiased estimators per item with that item's usable
        epochs n_i, averaged over the items with ``n_i ≥ k``, for k up to the largest n_i
        (docs/methods.md, "pass@k and pass^k"); each k reports its own number of items. A
        success is a score ≥ 1 − 1e-6 (tau-bench's rule), so they are meant for 0/1 scores.

    Raises:
        UsageError: the table breaks the attempts contract, or bad weights or arguments.
        InsufficientDataError: the table is empty.
    """
    check_level(level)
    if not 0 < alpha < 1:
        raise UsageError(f"'alpha' must be strictly between 0 and 1 (got {alpha!r})")
    if not -1.0 <= model_corr <= 1.0:
        raise UsageError(f"'model_corr' must be in [-1, 1] (got {model_corr!r})")
    it = item_table(attempts, planned=planned) if table is None else table
    clusters = it.cluster if it.clustered else None
    n_excluded = it.n_items_excluded
    overall = estimate_mean(
        it.mean,
        clusters=clusters,
        level=level,
        interval=interval,
        n_excluded=n_excluded,
        trials=it.n_epochs,
        rng=rng,
    )
    weighted, strata = stratified_estimates(
        it,
        weights,
        level=level,
        interval=interval,
        rng=rng,
    )
    pass_k = _pass_k(it, clusters, level=level, interval=interval, rng=rng)
    notes = []
    if not it.binary and pass_k:
        notes.append(
            "scores are not all 0/1: pass@k and pass^k count a score >= 1 - 1e-6 as a success"
        )
    short = [p for p in pass_k if p.n_items_short]
    if short:
        notes.append(
            f"pass@k/pass^k use fewer than all {it.n_items} items at k = "
            + ", ".join(f"{p.k} ({p.pass_hat_k.n_items} items)" for p in short)
            + ": only items with at least k usable epochs enter them (the others had harness "
            "errors); if harness errors hit hard items more often, those figures lean optimistic"
        )
    rel = reliability_from_items(
        it, level=level, cost_ratio=1.0, model_corr=model_corr, alpha=alpha, retest=None
    )
    epochs = int(np.bincount(text_codes(pd.Series(attempts["item_id"]))[0]).max())
    return RunScore(
        run_id=it.run_id,
        input_hash=it.input_hash,
        health=it.health,
        overall=overall,
        weighted=weighted,
        strata=strata,
        pass_k=tuple(pass_k),
        reliability=rel,
        level=level,
        epochs=epochs,
        clustered=it.clustered,
        notes=tuple(notes),
        epochs_usable=int(it.n_epochs.max()) if it.n_items else 0,
    )
