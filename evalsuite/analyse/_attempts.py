"""Read the attempts table (docs/design/attempts.md) into item-level arrays, once.

Every analysis starts here: the contract is checked, harness errors are excluded and counted,
limit rows count as score 0, and attempts are aggregated to item means (the unit of analysis).
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from evalsuite._core.hashing import sha256_bytes
from evalsuite.errors import InsufficientDataError, UsageError
from evalsuite.store._health import Health  # not the front: see pyproject.toml

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
    """Counts of the attempts (`evalsuite.store.Health`, not judged against a threshold)."""

    @property
    def n_items(self) -> int:
        """Items with at least one usable epoch."""
        return len(self.item_id)

    @property
    def n_items_excluded(self) -> int:
        """Items whose every epoch was a harness error (left out of every estimate)."""
        return sum(self.excluded_by_stratum.values())


def _fail(what: str, message: str) -> UsageError:
    return UsageError(f"{what}: {message} (see docs/design/attempts.md)")


@dataclass(frozen=True, slots=True)
class _Columns:
    """One run's attempts checked against the contract, as arrays (no per-row objects).

    Item ids are integer codes into `item_ids`, sorted by code point (the order of
    ``groupby(sort=True)`` on text); `frame` keeps the label columns for per-item lookups.
    """

    frame: pd.DataFrame
    item_code: npt.NDArray[np.intp]
    item_ids: npt.NDArray[np.object_]
    first_row: npt.NDArray[np.intp]  # first row of each item
    epoch: npt.NDArray[np.int64]
    outcome: npt.NDArray[np.int8]  # 0 scored, 1 limit, 2 harness_error
    score: npt.NDArray[np.float64]


_OUTCOME_CODE = {"scored": 0, "limit": 1, "harness_error": 2}


def _codes(column: pd.Series) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.object_]]:
    """Integer codes of a column's values (-1: missing) and the distinct values, in order."""
    codes, uniques = pd.factorize(column, sort=False)
    return np.asarray(codes, dtype=np.intp), np.asarray(uniques, dtype=object)


def text_codes(column: pd.Series) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.object_]]:
    """Codes of the values as text (``astype(str)``), the distinct texts sorted by code point."""
    codes, uniques = _codes(column)
    texts = np.array([str(u) for u in uniques], dtype=object)
    merged, sorted_texts = pd.factorize(texts, sort=True)  # values equal as text merge
    return np.asarray(merged, dtype=np.intp)[codes], np.asarray(sorted_texts, dtype=object)


def _constant_per_item(cols: _Columns, column: str, what: str) -> None:
    """Refuse a label that differs between the epochs of an item (missing counts as a value)."""
    codes, _ = _codes(cols.frame[column])
    differs = codes != codes[cols.first_row][cols.item_code]
    if differs.any():
        bad = np.unique(cols.item_code[differs])
        bad = bad[np.argsort(cols.first_row[bad], kind="stable")]  # first appearance
        ids = [str(i) for i in cols.item_ids[bad[:5]]]
        raise _fail(what, f"{column!r} differs between epochs of item(s) {ids}")


def _validate(attempts: pd.DataFrame, what: str) -> _Columns:
    """Check the contract column by column; return the columns as arrays."""
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
    item_code, item_ids = text_codes(df["item_id"])
    out_codes, out_values = _codes(df["outcome"])
    names = [str(v) for v in out_values] + (["nan"] if np.any(out_codes < 0) else [])
    bad_outcomes = sorted(set(names) - OUTCOMES)
    if bad_outcomes:
        raise _fail(what, f"unknown outcome(s) {bad_outcomes}; expected {sorted(OUTCOMES)}")
    outcome = np.array([_OUTCOME_CODE[n] for n in names[: len(out_values)]], dtype=np.int8)[
        out_codes
    ]
    epoch_num = pd.to_numeric(df["epoch"], errors="coerce")
    if epoch_num.isna().any() or (epoch_num < 1).any() or (epoch_num % 1 != 0).any():
        raise _fail(what, "'epoch' must be an integer >= 1 on every row")
    epoch = epoch_num.to_numpy().astype(np.int64)
    dup = pd.DataFrame({"item": item_code, "epoch": epoch}).duplicated().to_numpy()
    if dup.any():
        row = int(np.argmax(dup))
        example = [str(item_ids[item_code[row]]), int(epoch[row])]
        raise _fail(what, f"duplicate (item_id, epoch) rows, e.g. {example}")
    score = pd.to_numeric(df["score"], errors="coerce").to_numpy(np.float64)
    scored = outcome == 0
    with np.errstate(invalid="ignore"):
        bad = scored & ~((score >= 0.0) & (score <= 1.0))
    if bad.any():
        first = str(item_ids[item_code[int(np.argmax(bad))]])
        raise _fail(what, f"'scored' rows need a score in [0, 1]; item {first!r}")
    if ((outcome == 1) & (score != 0.0)).any():
        raise _fail(what, "'limit' rows must carry score 0.0")
    order = np.argsort(item_code, kind="stable")
    starts = np.flatnonzero(np.r_[True, np.diff(item_code[order]) != 0])
    cols = _Columns(
        frame=df,
        item_code=item_code,
        item_ids=item_ids,
        first_row=order[starts].astype(np.intp),
        epoch=epoch,
        outcome=outcome,
        score=score,
    )
    _constant_per_item(cols, "stratum", what)
    _constant_per_item(cols, "cluster", what)
    return cols


_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
"""Characters `json.dumps(..., ensure_ascii=False)` escapes in a string; others pass as is."""


def _json_texts(values: npt.NDArray[np.object_], *, prefix: str = "", suffix: str = "") -> Any:
    """Each distinct text as its canonical JSON string, wrapped; an Arrow array to `take`."""
    return pa.array(
        [
            prefix
            + (json.dumps(v, ensure_ascii=False) if _JSON_ESCAPED.search(v) else f'"{v}"')
            + suffix
            for v in values
        ],
        type=pa.large_string(),
    )


def _input_hash(cols: _Columns) -> str:
    """Content hash of what the estimates depend on: ids, epochs, outcomes, scores, labels.

    The canonical JSON of the rows ``[item_id, epoch, outcome, score, stratum, cluster]`` in
    (item id, epoch) order (NaN score and missing cluster as null), built column-wise: each
    distinct value is serialised once by `json.dumps` (as `content_hash` does) and the rows
    are joined by Arrow, so the bytes hashed are exactly those of
    ``content_hash([[...], ...])`` (tests/analyse/test_scale_parity.py).
    """
    df = cols.frame
    order = np.lexsort((cols.epoch, cols.item_code))
    # "[" of the outer list and the "," between rows: every row starts with ",["; the
    # first comma is dropped below
    items = _json_texts(cols.item_ids, prefix=",[").take(pa.array(cols.item_code[order]))
    epochs, epoch_code = np.unique(cols.epoch[order], return_inverse=True)
    epoch_text = pa.array([str(int(e)) for e in epochs], type=pa.large_string())
    outcome_text = _json_texts(np.array(["scored", "limit", "harness_error"], dtype=object))
    score = cols.score[order]
    bits, score_code = np.unique(score.view(np.int64), return_inverse=True)  # -0.0 kept apart
    score_text = pa.array(
        ["null" if math.isnan(v) else json.dumps(float(v)) for v in bits.view(np.float64)],
        type=pa.large_string(),
    )
    stratum_code, strata = _codes(df["stratum"])
    cluster_code, clusters = _codes(df["cluster"])
    cluster_text = _json_texts(np.array([str(c) for c in clusters], dtype=object), suffix="]")
    null_cluster = pa.array(["null]"], type=pa.large_string())
    cluster_all = pa.concat_arrays([cluster_text, null_cluster])
    cluster_code = np.where(cluster_code < 0, len(clusters), cluster_code)
    rows = pc.binary_join_element_wise(
        items,
        epoch_text.take(pa.array(epoch_code)),
        outcome_text.take(pa.array(cols.outcome[order].astype(np.intp))),
        score_text.take(pa.array(score_code)),
        _json_texts(np.array([str(s) for s in strata], dtype=object)).take(
            pa.array(stratum_code[order])
        ),
        cluster_all.take(pa.array(cluster_code[order])),
        pa.scalar(",", type=pa.large_string()),
    )
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64)[rows.offset :]
    data = memoryview(rows.buffers()[2])[int(offsets[0]) + 1 : int(offsets[len(rows)])]
    return sha256_bytes(b"[" + bytes(data) + b"]")


def _health(cols: _Columns, planned: int | None, n_excluded: int, what: str) -> Health:
    """Health counts; unrecorded planned attempts count as harness errors (docs/design/outcomes.md).

    The same counts as `evalsuite.store.run_health` (the one computation the runner, the
    CLI and the reports share), from the outcome codes.
    """
    recorded = len(cols.outcome)
    if planned is None:
        planned = recorded
    if planned < recorded:
        raise _fail(what, f"planned={planned} is fewer than the {recorded} recorded attempts")
    limit = cols.outcome == 1
    types = cols.frame["limit_type"][limit].astype(object).fillna("unspecified")
    limits_by_type = Counter(str(t) for t in types)
    errors = int(np.count_nonzero(cols.outcome == 2)) + planned - recorded
    return Health(
        planned=planned,
        recorded=recorded,
        scored=int(np.count_nonzero(cols.outcome == 0)),
        limits=int(np.count_nonzero(limit)),
        limits_by_type=dict(sorted(limits_by_type.items())),
        harness_errors=errors,
        unrecorded=planned - recorded,
        error_rate=errors / planned if planned > 0 else math.nan,
        threshold=None,  # the statistics count; the run's record judges
        valid=None,
        n_items=len(cols.item_ids),
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
    cols = _validate(attempts, what)
    df = cols.frame
    run_values = pd.unique(df["run_id"].dropna())
    runs = list(dict.fromkeys(str(r) for r in run_values))
    if len(runs) != 1:
        raise _fail(what, f"expected the attempts of exactly one run, got run ids {runs[:5]}")
    n_all = len(cols.item_ids)
    usable = cols.outcome != 2
    u_item = cols.item_code[usable]
    scores = cols.score[usable]
    sums = np.bincount(u_item, weights=scores, minlength=n_all)
    counts = np.bincount(u_item, minlength=n_all)
    succ = np.bincount(u_item, weights=scores >= SUCCESS_THRESHOLD, minlength=n_all)
    kept = counts > 0
    first = cols.first_row[kept]
    cluster = df["cluster"].iloc[first].reset_index(drop=True)
    declared = cluster.notna().to_numpy()
    ids = cols.item_ids[kept]
    clusters = np.where(
        declared,
        ("cluster:" + cluster.astype(str)).to_numpy(dtype=object),
        np.array([f"item:{i}" for i in ids], dtype=object),
    )
    stratum = df["stratum"].iloc[cols.first_row].astype(str).to_numpy(dtype=object)
    item_hash = np.full(n_all, None, dtype=object)
    if "item_hash" in df:
        hashes = df["item_hash"]
        has = hashes.notna().to_numpy()
        rows = np.flatnonzero(has)
        firsts, at = np.unique(cols.item_code[rows], return_index=True)  # first non-null
        item_hash[firsts] = hashes.iloc[rows[at]].to_numpy(dtype=object)
    excluded = Counter(str(s) for s in stratum[~kept])
    position = np.cumsum(kept) - 1
    return ItemTable(
        run_id=runs[0],
        input_hash=_input_hash(cols),
        item_id=ids,
        item_hash=item_hash[kept],
        stratum=stratum[kept],
        cluster=np.asarray(clusters, dtype=object),
        clustered=bool(declared.any()),
        mean=sums[kept] / counts[kept],
        n_epochs=counts[kept].astype(np.int64),
        successes=succ[kept].astype(np.int64),
        binary=bool(np.all((scores == 0.0) | (scores == 1.0))),
        excluded_by_stratum=dict(excluded),
        attempt_item=position[u_item].astype(np.intp),
        attempt_score=scores,
        health=_health(cols, planned, int(np.count_nonzero(~kept)), what),
    )
