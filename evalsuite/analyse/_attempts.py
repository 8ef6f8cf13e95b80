"""Read the attempts table (docs/design/attempts.md) into item-level arrays, once.

Every analysis starts here: the contract is checked, harness errors are excluded and counted,
limit rows count as score 0, and attempts are aggregated to item means (the unit of analysis).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd

from evalsuite._core import content_hash
from evalsuite.analyse._table import Table
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.store import run_health

__all__ = ["OUTCOMES", "REQUIRED_COLUMNS", "SUCCESS_THRESHOLD", "Health", "ItemTable", "item_table"]

REQUIRED_COLUMNS = (
    "run_id",
    "item_id",
    "stratum",
    "cluster",
    "epoch",
    "outcome",
    "limit_type",
    "score",
)
OUTCOMES = frozenset({"scored", "limit", "harness_error"})
SUCCESS_THRESHOLD = 1.0 - 1e-6
"""An attempt counts as a success for pass@k/pass^k when its score is at least this
(tau-bench's ``is_successful``: ``1 - 1e-6 <= reward``)."""


@dataclass(frozen=True, slots=True)
class Health:
    """Harness health of one run: what was planned, what happened, what was excluded.

    Attributes:
        planned: planned attempts (items × epochs); the denominator of `error_rate`.
        recorded: rows in the attempts table.
        scored: attempts the verifier scored.
        limits: attempts that hit a limit (model failures, score 0).
        limits_by_type: `limits` split by ``limit_type`` (``unspecified`` when missing).
        harness_errors: harness-error rows plus planned attempts with no row at all.
        unrecorded: planned attempts with no row (``planned − recorded``).
        error_rate: ``harness_errors / planned`` (NaN when nothing was planned).
        n_items: distinct items in the table.
        n_items_excluded: items whose every epoch was a harness error.
    """

    planned: int
    recorded: int
    scored: int
    limits: int
    limits_by_type: Mapping[str, int]
    harness_errors: int
    unrecorded: int
    error_rate: float
    n_items: int
    n_items_excluded: int

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields: the ``harness`` block of ``score --json`` plus the extra counts."""
        return {
            "planned": self.planned,
            "recorded": self.recorded,
            "scored": self.scored,
            "limits": self.limits,
            "limits_by_type": dict(self.limits_by_type),
            "harness_errors": self.harness_errors,
            "unrecorded": self.unrecorded,
            "error_rate": self.error_rate,
            "n_items": self.n_items,
            "n_items_excluded": self.n_items_excluded,
        }

    def summary(self) -> Table:
        """A one-row table of the health counts."""
        return Table.build(
            "Harness health",
            ["planned", "scored", "limits", "harness errors", "error rate", "items excluded"],
            [
                [
                    self.planned,
                    self.scored,
                    self.limits,
                    self.harness_errors,
                    self.error_rate,
                    self.n_items_excluded,
                ]
            ],
        )


@dataclass(frozen=True, slots=True)
class ItemTable:
    """One run's attempts, aggregated to the items that have at least one usable epoch.

    Item arrays are aligned and sorted by item id; attempt arrays hold every usable attempt
    (``scored`` or ``limit``) with the index of its item.
    """

    run_id: str
    input_hash: str
    item_id: npt.NDArray[np.object_]
    item_hash: npt.NDArray[np.object_]
    stratum: npt.NDArray[np.object_]
    cluster: npt.NDArray[np.object_]  # declared cluster, or "item:<id>" when none
    clustered: bool  # at least one item has a declared cluster
    mean: npt.NDArray[np.float64]
    n_epochs: npt.NDArray[np.int64]
    successes: npt.NDArray[np.int64]
    binary: bool  # every usable score is exactly 0 or 1
    excluded_by_stratum: Mapping[str, int]
    attempt_item: npt.NDArray[np.intp]
    attempt_score: npt.NDArray[np.float64]
    health: Health

    @property
    def n_items(self) -> int:
        """Items with at least one usable epoch."""
        return len(self.item_id)


def _fail(what: str, message: str) -> UsageError:
    return UsageError(f"{what}: {message} (see docs/design/attempts.md)")


def _constant_per_item(df: pd.DataFrame, column: str, what: str) -> None:
    counts = df.groupby("item_id", sort=False)[column].nunique(dropna=False)
    bad = counts[counts > 1]
    if len(bad):
        raise _fail(what, f"{column!r} differs between epochs of item(s) {list(bad.index[:5])}")


def _validate(attempts: pd.DataFrame, what: str) -> pd.DataFrame:
    """Check the contract column by column; return the needed columns, normalised."""
    missing = [c for c in REQUIRED_COLUMNS if c not in attempts.columns]
    if missing:
        raise _fail(what, f"missing column(s) {missing}")
    if len(attempts) == 0:
        raise InsufficientDataError(f"{what}: the attempts table is empty; nothing to analyse")
    df = attempts.loc[:, list(REQUIRED_COLUMNS) + (["item_hash"] * ("item_hash" in attempts))]
    df = df.reset_index(drop=True)
    if df["item_id"].isna().any():
        raise _fail(what, "'item_id' has missing values")
    if df["stratum"].isna().any():
        raise _fail(what, "'stratum' has missing values (ingested runs use 'all')")
    df["item_id"] = df["item_id"].astype(str)
    bad_outcomes = sorted(set(df["outcome"].astype(str)) - OUTCOMES)
    if bad_outcomes:
        raise _fail(what, f"unknown outcome(s) {bad_outcomes}; expected {sorted(OUTCOMES)}")
    epoch = pd.to_numeric(df["epoch"], errors="coerce")
    if epoch.isna().any() or (epoch < 1).any() or (epoch % 1 != 0).any():
        raise _fail(what, "'epoch' must be an integer >= 1 on every row")
    df["epoch"] = epoch.astype(np.int64)
    dup = df.duplicated(["item_id", "epoch"])
    if dup.any():
        first = df.loc[dup, ["item_id", "epoch"]].iloc[0].tolist()
        raise _fail(what, f"duplicate (item_id, epoch) rows, e.g. {first}")
    score = pd.to_numeric(df["score"], errors="coerce").astype(np.float64)
    df["score"] = score
    scored = df["outcome"] == "scored"
    bad = scored & ~score.between(0.0, 1.0)
    if bad.any():
        raise _fail(
            what, f"'scored' rows need a score in [0, 1]; item {df.loc[bad, 'item_id'].iloc[0]!r}"
        )
    limit = df["outcome"] == "limit"
    if (limit & (score != 0.0)).any():
        raise _fail(what, "'limit' rows must carry score 0.0")
    _constant_per_item(df, "stratum", what)
    _constant_per_item(df, "cluster", what)
    return df


def _input_hash(df: pd.DataFrame) -> str:
    """Content hash of what the estimates depend on: ids, epochs, outcomes, scores, labels."""
    ordered = df.sort_values(["item_id", "epoch"], kind="stable")
    rows = [
        [i, int(e), o, None if math.isnan(s) else float(s), str(st), None if pd.isna(c) else str(c)]
        for i, e, o, s, st, c in zip(
            ordered["item_id"],
            ordered["epoch"],
            ordered["outcome"],
            ordered["score"],
            ordered["stratum"],
            ordered["cluster"],
            strict=True,
        )
    ]
    return content_hash(rows)


def _health(df: pd.DataFrame, planned: int | None, n_excluded: int, what: str) -> Health:
    """Health counts; unrecorded planned attempts count as harness errors (docs/design/outcomes.md).

    The counts come from `evalsuite.store.run_health`, the one computation the runner, the
    CLI and the reports share.
    """
    recorded = len(df)
    if planned is None:
        planned = recorded
    if planned < recorded:
        raise _fail(what, f"planned={planned} is fewer than the {recorded} recorded attempts")
    shared = run_health(df, planned=planned, threshold=1.0)
    return Health(
        planned=planned,
        recorded=recorded,
        scored=shared.scored,
        limits=shared.limits,
        limits_by_type=shared.limits_by_type,
        harness_errors=shared.harness_errors,
        unrecorded=planned - recorded,
        error_rate=shared.error_rate,
        n_items=int(df["item_id"].nunique()),
        n_items_excluded=n_excluded,
    )


def item_table(
    attempts: pd.DataFrame, *, planned: int | None = None, what: str = "attempts"
) -> ItemTable:
    """Check one run's attempts against the contract and aggregate them to item means.

    Args:
        attempts: the attempts DataFrame of exactly one run.
        planned: planned attempts (items × epochs); None: one per row, as the contract says.
        what: how to name this table in error messages (``baseline``, ``candidate``, ...).

    Returns:
        The items with at least one ``scored`` or ``limit`` epoch, their means, epoch counts
        and successes; the usable attempts; the run's health.

    Raises:
        UsageError: the table breaks the contract (missing column, unknown outcome, duplicate
            epoch, a score outside [0, 1], a non-zero limit score, several runs, ...).
        InsufficientDataError: the table is empty.
    """
    df = _validate(attempts, what)
    runs = df["run_id"].dropna().astype(str).unique()
    if len(runs) != 1:
        raise _fail(what, f"expected the attempts of exactly one run, got run ids {list(runs)[:5]}")
    usable = df[df["outcome"] != "harness_error"]
    per_item = df.groupby("item_id", sort=True).agg(
        stratum=("stratum", "first"), cluster=("cluster", "first")
    )
    per_item["item_hash"] = (
        df.groupby("item_id", sort=True)["item_hash"].first() if "item_hash" in df else None
    )
    agg = usable.groupby("item_id", sort=True)["score"].agg(["sum", "count"])
    succ = (usable["score"] >= SUCCESS_THRESHOLD).groupby(usable["item_id"], sort=True).sum()
    kept = per_item.loc[agg.index]
    excluded = per_item.drop(index=agg.index)
    declared = kept["cluster"].notna()
    clusters = np.where(
        declared, "cluster:" + kept["cluster"].astype(str), "item:" + kept.index.astype(str)
    )
    position = pd.Series(np.arange(len(agg)), index=agg.index)
    scores = usable["score"].to_numpy(np.float64)
    return ItemTable(
        run_id=str(runs[0]),
        input_hash=_input_hash(df),
        item_id=kept.index.to_numpy(dtype=object),
        item_hash=kept["item_hash"].to_numpy(dtype=object),
        stratum=kept["stratum"].astype(str).to_numpy(dtype=object),
        cluster=np.asarray(clusters, dtype=object),
        clustered=bool(declared.any()),
        mean=(agg["sum"] / agg["count"]).to_numpy(np.float64),
        n_epochs=agg["count"].to_numpy(np.int64),
        successes=np.asarray(succ.reindex(agg.index), dtype=np.int64),
        binary=bool(np.all((scores == 0.0) | (scores == 1.0))),
        excluded_by_stratum={
            str(k): int(v) for k, v in excluded["stratum"].astype(str).value_counts().items()
        },
        attempt_item=position.loc[usable["item_id"]].to_numpy(np.intp),
        attempt_score=scores,
        health=_health(df, planned, len(excluded), what),
    )
