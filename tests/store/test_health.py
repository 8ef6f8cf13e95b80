"""Harness error reasons: grouped, counted, with an example and what to do (issue 11.4)."""

from __future__ import annotations

import math

import pandas as pd

from evalsuite.store import error_groups, run_health


def _frame(rows: list[tuple[str, int, str, str | None]]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "item_id": [r[0] for r in rows],
            "epoch": [r[1] for r in rows],
            "outcome": [r[2] for r in rows],
            "reason": [r[3] for r in rows],
            "score": [math.nan if r[2] == "harness_error" else 1.0 for r in rows],
            "limit_type": [None] * len(rows),
            "retries": [0] * len(rows),
        }
    )


def test_reasons_that_differ_only_in_numbers_are_one_group_with_the_first_example() -> None:
    frame = _frame(
        [
            ("a", 1, "scored", None),
            ("b", 1, "harness_error", "HarnessFault: injected fault in tool 3"),
            ("c", 2, "harness_error", "HarnessFault: injected fault in tool 7"),
            ("d", 1, "harness_error", "ConnectionError: cannot reach api.example.com"),
        ]
    )
    groups = error_groups(frame, planned=4)
    assert [(g.kind, g.count) for g in groups] == [("HarnessFault", 2), ("ConnectionError", 1)]
    first = groups[0]
    assert first.message == "HarnessFault: injected fault in tool 3"
    assert (first.example_item, first.example_epoch) == ("b", 1)
    assert "environment" in first.advice
    assert "network" in groups[1].advice


def test_planned_attempts_without_a_row_are_a_not_run_group_telling_to_resume() -> None:
    frame = _frame([("a", 1, "scored", None)])
    groups = error_groups(frame, planned=3)
    assert len(groups) == 1
    assert groups[0].count == 2
    assert groups[0].kind == "not run"
    assert groups[0].example_item is None
    assert "--resume" in groups[0].advice


def test_only_the_most_frequent_groups_are_kept_most_frequent_first() -> None:
    rows = [(f"i{n}", 1, "harness_error", f"Kind{'ABCDEFG'[n % 7]}: boom") for n in range(70)]
    rows += [(f"j{n}", 1, "harness_error", "KindA: boom") for n in range(5)]
    groups = error_groups(_frame(rows), planned=75, top=3)
    assert len(groups) == 3
    assert groups[0].message == "KindA: boom"
    assert groups[0].count == 15
    assert [g.count for g in groups] == sorted((g.count for g in groups), reverse=True)


def test_run_health_carries_the_top_errors_and_a_clean_run_has_none() -> None:
    clean = run_health(_frame([("a", 1, "scored", None)]), planned=1, threshold=0.05)
    assert clean.top_errors == []
    broken = run_health(
        _frame([("a", 1, "harness_error", "TimeoutError: tool took 31 s")]),
        planned=1,
        threshold=0.05,
    )
    assert broken.to_dict()["top_errors"][0]["kind"] == "TimeoutError"
    assert "--tool-timeout" in broken.top_errors[0].advice


def test_a_frame_with_outcomes_and_reasons_only_still_groups() -> None:
    # ingest judges health before rows have ids or epochs attached
    frame = pd.DataFrame({"outcome": ["harness_error", "scored"], "reason": ["Boom: x", None]})
    (group,) = error_groups(frame, planned=2)
    assert (group.kind, group.count, group.example_item, group.example_epoch) == (
        "Boom",
        1,
        None,
        None,
    )


def test_health_counted_batch_by_batch_equals_run_health_top_errors_included() -> None:
    """The bulk ingest path (HealthCounts over batches) judges a run as run_health does."""
    import pyarrow as pa

    from evalsuite.store import HealthCounts

    rows = [("a", 1, "scored", None), ("a", 2, "limit", None)]
    rows += [(f"i{n}", 1, "harness_error", f"TimeoutError: tool {n} timed out") for n in range(7)]
    rows += [("z", 3, "harness_error", "ConnectionError: cannot reach the API")]
    frame = _frame(rows)
    counts = HealthCounts()
    schema = pa.schema(
        [
            ("item_id", pa.string()),
            ("epoch", pa.int64()),
            ("outcome", pa.string()),
            ("reason", pa.string()),
            ("score", pa.float64()),
            ("limit_type", pa.string()),
            ("retries", pa.int64()),
        ]
    )
    for start in range(0, len(frame), 3):  # batches that split the groups
        part = frame.iloc[start : start + 3]
        counts.add(pa.Table.from_pandas(part, schema=schema, preserve_index=False))
    expected = run_health(frame, planned=len(frame) + 2, threshold=0.05)
    got = counts.health(planned=len(frame) + 2, threshold=0.05)
    assert got == expected
    assert [(g.kind, g.count) for g in got.top_errors] == [
        ("TimeoutError", 7),
        ("not run", 2),
        ("ConnectionError", 1),
    ]
    assert (got.top_errors[0].example_item, got.top_errors[0].example_epoch) == ("i0", 1)
