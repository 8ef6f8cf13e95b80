"""Scheme-2 content fingerprints: order- and batch-free, yet sensitive to every value."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from evalsuite.store import attempt_table
from evalsuite.store._fingerprint import (
    ATTEMPT_CONTENT_COLUMNS,
    FINGERPRINT_PREFIX,
    ContentFingerprint,
    ingest_fingerprint,
)

RUN = {"source": "csv", "model": "m", "epochs": 2, "planned": 8}


def _columns(n: int = 8) -> dict[str, list[object]]:
    columns: dict[str, list[object]] = {name: [None] * n for name in ATTEMPT_CONTENT_COLUMNS}
    columns |= {
        "item_id": [f"q{i // 2}" for i in range(n)],
        "epoch": [i % 2 + 1 for i in range(n)],
        "stratum": ["s"] * n,
        "outcome": ["scored"] * n,
        "score": [i / n for i in range(n)],
        "retries": [0] * n,
        "tokens": [0] * n,
        "duration_s": [0.0] * n,
    }
    return columns


def _digest(table: pa.Table, batches: int = 1) -> str:
    fingerprint = ContentFingerprint()
    for part in np.array_split(np.arange(table.num_rows), batches):
        fingerprint.add(table.take(pa.array(part, pa.int64())))
    return fingerprint.digest(RUN, {})


def test_row_order_and_batch_boundaries_do_not_matter() -> None:
    table = attempt_table(_columns())
    reference = _digest(table)
    assert reference.startswith(FINGERPRINT_PREFIX)
    shuffled = table.take(pa.array(np.random.default_rng(3).permutation(table.num_rows)))
    for batches in (1, 2, 3, 8):
        assert _digest(shuffled, batches) == reference


@pytest.mark.parametrize("column", ATTEMPT_CONTENT_COLUMNS)
def test_a_change_in_any_column_changes_the_fingerprint(column: str) -> None:
    columns = _columns()
    reference = ingest_fingerprint(RUN, {}, columns)
    changed = dict(columns)
    values = list(columns[column])
    values[3] = {"epoch": 7, "seed": 5, "retries": 2, "tokens": 9, "score": 0.99}.get(
        column, 1.5 if column == "duration_s" else "x"
    )
    changed[column] = values
    assert ingest_fingerprint(RUN, {}, changed) != reference


def test_values_are_bound_to_their_row() -> None:
    # the same multiset of scores, on other items: other content
    columns = _columns()
    swapped = dict(columns)
    scores = list(columns["score"])
    scores[0], scores[5] = scores[5], scores[0]
    swapped["score"] = scores
    assert ingest_fingerprint(RUN, {}, swapped) != ingest_fingerprint(RUN, {}, columns)


def test_numbers_are_compared_as_values_and_missing_is_missing() -> None:
    columns = _columns()
    as_ints = dict(
        columns, score=[int(s) if float(s).is_integer() else s for s in columns["score"]]
    )
    assert ingest_fingerprint(RUN, {}, as_ints) == ingest_fingerprint(RUN, {}, columns)
    nan = dict(columns, score=[float("nan"), *list(columns["score"][1:])])
    none = dict(columns, score=[None, *list(columns["score"][1:])])
    assert ingest_fingerprint(RUN, {}, nan) == ingest_fingerprint(RUN, {}, none)
    negative_zero = dict(columns, duration_s=[-0.0] * 8)
    assert ingest_fingerprint(RUN, {}, negative_zero) == ingest_fingerprint(RUN, {}, columns)
    empty_text = dict(columns, reason=[""] * 8)
    assert ingest_fingerprint(RUN, {}, empty_text) != ingest_fingerprint(RUN, {}, columns)


def test_run_fields_and_identity_are_content() -> None:
    columns = _columns()
    reference = ingest_fingerprint(RUN, {}, columns)
    assert ingest_fingerprint(RUN | {"model": "other"}, {}, columns) != reference
    assert ingest_fingerprint(RUN, {"eval_id": "e1"}, columns) != reference
    assert ingest_fingerprint(RUN | {"started_at": "later"}, {}, columns) == reference
