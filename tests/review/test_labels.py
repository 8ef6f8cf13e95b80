"""Taxonomy files and labels in the store (docs/review.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import NotFoundError, UsageError
from evalsuite.review import (
    AttemptLabel,
    label_history,
    load_labels,
    load_taxonomy,
    save_label,
    suite_taxonomy,
)
from evalsuite.store import Store
from tests.review.conftest import TAXONOMY, make_run

ROOT = Path(__file__).resolve().parents[2]


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_shipped_taxonomies_load_for_every_suite() -> None:
    layout = Layout(ROOT)
    for suite in ("answers", "arith", "support", "records", "repair"):
        taxonomy = suite_taxonomy(layout, suite)
        assert taxonomy.suite == suite and taxonomy.version == "1"
        assert 4 <= len(taxonomy.modes) <= 8
        assert "tool_fault" in taxonomy.harness_modes()


def test_a_taxonomy_file_round_trips(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        'suite = "toy"\nversion = 2\n[[modes]]\nname = "a"\nkind = "model"\n'
        'definition = "x"\n[[modes]]\nname = "b"\nkind = "harness"\ndefinition = "y"\n'
        'scanner = "tool_errors"\n',
    )
    taxonomy = load_taxonomy(path)
    assert taxonomy.version == "2" and taxonomy.names == ("a", "b")
    assert taxonomy.harness_modes() == ("b",) and taxonomy.mode("b").scanner == "tool_errors"


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('suite = "toy"\nversion = "1"\n', "no failure modes"),
        ('suite = "toy"\n[[modes]]\nname="a"\nkind="model"\ndefinition="x"\n', "version"),
        (
            'suite = "toy"\nversion = "1"\n[[modes]]\nname="a"\nkind="oops"\ndefinition="x"\n',
            "expected 'model'",
        ),
        (
            'suite = "toy"\nversion = "1"\n[[modes]]\nname="A b"\nkind="model"\ndefinition="x"\n',
            "not a lower-case identifier",
        ),
        (
            'suite = "toy"\nversion = "1"\n[[modes]]\nname="a"\nkind="model"\ndefinition="x"\n'
            '[[modes]]\nname="a"\nkind="model"\ndefinition="y"\n',
            "declared twice",
        ),
        ('suite = "toy"\nversion = "1"\nmodes = [1]\n', "not a table"),
        ('suite = "toy"\nversion = "1"\ncolour = 1\n', "unknown top-level keys"),
        ("suite = [", "not a valid TOML"),
    ],
)
def test_a_malformed_taxonomy_is_refused_with_the_reason(
    tmp_path: Path, text: str, says: str
) -> None:
    with pytest.raises(UsageError, match=says):
        load_taxonomy(_write(tmp_path, text))


def test_a_missing_taxonomy_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"nope\.toml"):
        load_taxonomy(tmp_path / "nope.toml")
    with pytest.raises(UsageError, match="not of 'toy'"):
        suite_taxonomy(Layout(ROOT), "toy", ROOT / "tasks" / "taxonomies" / "arith.toml")


def test_labels_are_saved_with_history_and_the_latest_is_current(store: Store) -> None:
    make_run(store, "r1", {("i1", 1): ("scored", 0.0), ("i2", 1): ("scored", 1.0)})
    save_label(store, AttemptLabel("r1", "i1", 1, ("tool_loop",), who="ann"), taxonomy=TAXONOMY)
    save_label(
        store,
        AttemptLabel("r1", "i1", 1, ("tool_fault", "tool_loop"), note="tool 500", who="bob"),
        taxonomy=TAXONOMY,
    )
    save_label(store, AttemptLabel("r1", "i2", 1, (), note="fine"), taxonomy=TAXONOMY)
    labels = {x.key: x for x in load_labels(store, "r1")}
    assert labels[("i1", 1)].modes == ("tool_fault", "tool_loop")
    assert labels[("i1", 1)].who == "bob" and labels[("i1", 1)].note == "tool 500"
    assert labels[("i1", 1)].taxonomy_version == "1"
    assert labels[("i1", 1)].at.endswith("Z") and labels[("i2", 1)].modes == ()
    assert labels[("i2", 1)].who  # the login name or $EVALSUITE_LABELLER
    history = [x for x in label_history(store, "r1") if x.item_id == "i1"]
    assert [x.who for x in history] == ["ann", "bob"]


def test_a_bad_label_is_refused_and_nothing_is_saved(store: Store) -> None:
    make_run(store, "r1", {("i1", 1): ("scored", 0.0)})
    with pytest.raises(UsageError, match=r"unknown failure mode 'nonsense'.*tool_fault"):
        save_label(store, AttemptLabel("r1", "i1", 1, ("nonsense",)), taxonomy=TAXONOMY)
    with pytest.raises(NotFoundError, match="no attempt of item 'i9'"):
        save_label(store, AttemptLabel("r1", "i9", 1, ("tool_loop",)), taxonomy=TAXONOMY)
    with pytest.raises(NotFoundError):
        save_label(store, AttemptLabel("r9", "i1", 1, ("tool_loop",)), taxonomy=TAXONOMY)
    with pytest.raises(UsageError, match="taxonomy version 0"):
        save_label(
            store,
            AttemptLabel("r1", "i1", 1, ("tool_loop",), taxonomy_version="0"),
            taxonomy=TAXONOMY,
        )
    with pytest.raises(UsageError, match="needs the taxonomy version"):
        save_label(store, AttemptLabel("r1", "i1", 1, ("tool_loop",)))
    assert load_labels(store, "r1") == []


def test_findings_and_scan_records_round_trip_and_a_rescan_replaces(store: Store) -> None:
    make_run(store, "r1", {("i1", 1): ("scored", 0.0), ("i2", 1): ("scored", 1.0)})
    scan = {"scan_location": "scans/scan_id=a", "scanned_at": "2026-01-01T00:00:00Z"}
    row = {"value": "true", "explanation": "x"} | scan
    rows = [row | {"item_id": "i1", "epoch": 1}, row | {"item_id": "i2", "epoch": 1}]
    assert store.replace_findings("r1", "tool_errors", rows, scan=scan | {"transcripts": 2}) == 2
    store.replace_findings("r1", "refusal", [], scan=scan | {"transcripts": 2})
    assert [(r["scanner"], r["item_id"]) for r in store.finding_rows("r1")] == [
        ("tool_errors", "i1"),
        ("tool_errors", "i2"),
    ]
    later = scan | {"scan_location": "scans/scan_id=b", "transcripts": 2}
    store.replace_findings("r1", "tool_errors", rows[:1], scan=later)
    assert [r["item_id"] for r in store.finding_rows("r1")] == ["i1"]
    records = {r["scanner"]: r for r in store.scan_records("r1")}
    assert records["tool_errors"]["flagged"] == 1 and records["refusal"]["flagged"] == 0
    assert records["tool_errors"]["scan_location"] == "scans/scan_id=b"
    store.delete_run("r1")
    assert store.finding_rows("r1") == [] and store.scan_records("r1") == []
