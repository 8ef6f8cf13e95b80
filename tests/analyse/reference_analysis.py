"""The row-by-row analysis as it was before docs/design/analysis-scale.md, kept as an oracle.

`item_table` and `item_rows` below are the pandas implementations the column-wise ones
replaced (per-row Python objects, `groupby` per item, the canonical JSON of every row built
as Python lists). tests/analyse/test_scale_parity.py checks that the new code gives the same
item tables, input hashes and report item rows on small runs. Never imported by evalsuite.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from evalsuite._core import content_hash
from evalsuite.analyse._attempts import (
    OUTCOMES,
    REQUIRED_COLUMNS,
    SUCCESS_THRESHOLD,
    Health,
    ItemTable,
)
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.store import run_health


def _fail(what: str, message: str) -> UsageError:
    return UsageError(f"{what}: {message} (see docs/design/attempts.md)")


def _constant_per_item(df: pd.DataFrame, column: str, what: str) -> None:
    counts = df.groupby("item_id", sort=False)[column].nunique(dropna=False)
    bad = counts[counts > 1]
    if len(bad):
        raise _fail(what, f"{column!r} differs between epochs of item(s) {list(bad.index[:5])}")


def _validate(attempts: pd.DataFrame, what: str) -> pd.DataFrame:
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
        threshold=None,
        valid=None,
        n_items=int(df["item_id"].nunique()),
        n_items_excluded=n_excluded,
    )


def item_table(
    attempts: pd.DataFrame, *, planned: int | None = None, what: str = "attempts"
) -> ItemTable:
    """The item table as `evalsuite.analyse._attempts.item_table` built it row by row."""
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


def item_rows(frames: dict[str, pd.DataFrame]) -> list[dict[str, Any]]:
    """The report's item rows as `evalsuite.report._build.item_rows` built them per item."""
    per_run = []
    for run_id, frame in frames.items():
        usable = frame[frame["outcome"] != "harness_error"]
        if usable.empty:
            continue
        grouped = usable.groupby("item_id").agg(
            mean=("score", "mean"),
            spread=("score", "nunique"),
            stratum=("stratum", "first"),
            item_hash=("item_hash", "first"),
            epochs=("epoch", "count"),
        )
        grouped["run_id"] = run_id
        per_run.append(grouped.reset_index())
    if not per_run:
        return []
    table = pd.concat(per_run)
    rows = []
    for item_id, group in table.groupby("item_id", sort=False):
        means = {
            str(run): float(value)
            for run, value in zip(group["run_id"], group["mean"].astype(float), strict=True)
        }
        rows.append(
            {
                "item_id": str(item_id),
                "stratum": str(group["stratum"].iloc[0]),
                "item_hash": group["item_hash"].iloc[0]
                if pd.notna(group["item_hash"].iloc[0])
                else None,
                "difficulty": 1.0 - float(group["mean"].mean()),
                "flip_rate": float((group["spread"] > 1).mean()),
                "epochs": int(group["epochs"].max()),
                "means": means,
            }
        )
    return sorted(rows, key=lambda r: (r["stratum"], r["item_id"]))


ITEM_ROWS_TEMPLATE = (
    '  {% for i in p["items"] %}<tr><td class="mono">{{ i.item_id }}</td>'
    "<td>{{ i.stratum }}</td>\n"
    '    <td class="mono">{{ (i.item_hash or "–")[:19] }}</td>'
    '<td class="num">{{ i.difficulty|fmt(2) }}</td>\n'
    '    <td class="num">{{ i.flip_rate|fmt(2) }}</td>\n'
    '    {% for r in p.runs %}<td class="num">{{ i.means.get(r.run_id)|fmt(2) }}</td>'
    "{% endfor %}</tr>{% endfor %}\n"
)
"""The report template's item rows as a Jinja loop, before they were built in Python."""
