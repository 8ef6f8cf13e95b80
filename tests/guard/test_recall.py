"""Recall and precision of the guard on light edits of frozen items, planted in real text.

The battery (`tests/guard/battery.py`) runs on synthetic holdout-like items
(`tests/guard/synthetic.py`: templated support tickets, word problems and bare sums, frozen
in a throwaway project, half of them holdout) and on a sample of the shipped suites' public
dev items. No shipped holdout text is used here (`benchmarks/bench_guard_recall.py` measures
every shipped item); only counts and item ids reach an assertion message.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.guard.battery import (
    SYNTHETIC,
    TARGET_KINDS,
    WHOLE_KINDS,
    BatteryItem,
    Tally,
    run_battery,
    shipped_items,
)
from tests.guard.synthetic import freeze_synthetic, synthetic_records, topic_similar
from tests.helpers import REPO

TARGET = 0.98
STRICT = 0.4
"""A threshold above the overlaps that chance gives templated text (0.20 to 0.31 measured)
and below those of the edits with a target (0.46 at least)."""


@dataclass(frozen=True)
class _Synthetic:
    """The frozen synthetic project, its items and the topic-similar text (read only)."""

    root: Path
    items: list[BatteryItem]
    similar: list[str]


@pytest.fixture(scope="module")
def synthetic_project(tmp_path_factory: pytest.TempPathFactory) -> _Synthetic:
    """Frozen once for both thresholds below (a freeze is most of a battery's cost)."""
    records = synthetic_records(11)
    project = freeze_synthetic(tmp_path_factory.mktemp("recall"), records, SYNTHETIC)
    items = shipped_items(project.root, key_dir=project.key_dir)
    assert len(items) == len(records)
    assert {i.split for i in items} == {"dev", "holdout"}
    similar = topic_similar(12, 400, [str(r["input"]) for r in records])
    return _Synthetic(project.root, items, similar)


def _synthetic(frozen: _Synthetic, threshold: float | None) -> Tally:
    return run_battery(
        frozen.root,
        frozen.items,
        seed=13,
        n_clean=600,
        topic_similar=frozen.similar,
        threshold=threshold,
    )


@pytest.fixture(scope="module")
def synthetic(synthetic_project: _Synthetic) -> Tally:
    return _synthetic(synthetic_project, None)


@pytest.fixture(scope="module")
def synthetic_strict(synthetic_project: _Synthetic) -> Tally:
    return _synthetic(synthetic_project, STRICT)


KNOWN_COPIES = (
    ("records-0024", "records-v2-0056"),
    ("records-0053", "records-v2-0070"),
    ("records-v2-0060", "records-0191"),
    ("records-v2-0157", "records-0022"),
    ("records-v2-0180", "records-0012"),
)
"""Requests of records' version 1 and version 2 that repeat each other (same company, same
template; the guard finds every pair). The first two are records@2.0.0 holdout items, retired
in records@2.1.0; the last three are records@1.0.0 holdout items (superseded) that records@2.0.0
dev requests repeat. `freeze` now refuses new items like these (docs/guard.md, "Before a
freeze"); `test_the_known_copies_are_all_there_are` keeps this list exact."""
BORDERLINE = (("records-0042", "records-v2-0124"),)
"""Two public dev requests on one template (close a finished case) that are not copies: with
chat-template markers or JSON escaping, a copy of either reaches the guard's threshold on the
other (6 of the 7,116 documents of the full battery over every shipped dev item, measured
2026-12-05); verbatim, neither flags the other. Both are public, so no holdout is at stake."""


@pytest.fixture(scope="module")
def shipped_dev() -> Tally:
    items = shipped_items(REPO, splits=("dev",))
    return run_battery(
        REPO, items, sample=60, n_clean=300, seed=7, known_copies=KNOWN_COPIES + BORDERLINE
    )


def _assert_recall(
    tally: Tally, groups: set[str], minimum: int, unchecked: frozenset[str] = frozenset()
) -> None:
    assert {g for g, _ in tally.planted} == groups | unchecked
    for group in groups:
        for kind in WHOLE_KINDS if "whole" in group else TARGET_KINDS:
            planted, found = tally.planted[group, kind], tally.found[group, kind]
            assert planted >= minimum, (group, kind, planted)
            missed = [m for m in tally.missed if m[:2] == (group, kind)][:5]
            assert found / planted >= TARGET, (group, kind, found, planted, missed)


def test_every_edit_kind_of_holdout_like_items_is_found(synthetic: Tally) -> None:
    """Case, punctuation, white space, a changed word, markdown, chat templates, JSON
    escaping, reflowing, and partial copies (70% head, 60% window) of templated items."""
    groups = {"synth ticket (in text)", "synth problem (in text)", "synth sum (whole document)"}
    _assert_recall(synthetic, groups, minimum=60)


def test_shared_template_text_flags_no_other_item_and_clean_text_nothing(
    synthetic: Tally,
) -> None:
    """Tickets share greetings, policy sentences and sign-offs, word problems their frame: a
    copy of one flags no other item, and real text flags nothing.

    Fresh tickets on the same templates (other people, same products, dates and amounts)
    can share, by chance, a few runs of template and detail with an item: at the default
    threshold a small share of them is flagged (docs/design/guard-normalisation.md)."""
    assert sum(synthetic.wrong.values()) == 0, dict(synthetic.wrong)
    assert synthetic.clean_documents == 1000
    assert synthetic.topic_documents == 400
    assert synthetic.clean_flagged - synthetic.topic_flagged == 0
    assert synthetic.topic_flagged / synthetic.topic_documents <= 0.03


def test_a_stricter_threshold_flags_no_topic_similar_text_and_keeps_recall(
    synthetic_strict: Tally,
) -> None:
    groups = {"synth ticket (in text)", "synth problem (in text)", "synth sum (whole document)"}
    _assert_recall(synthetic_strict, groups, minimum=60)
    assert sum(synthetic_strict.wrong.values()) == 0
    assert synthetic_strict.topic_documents == 400
    assert synthetic_strict.clean_flagged == 0


def test_shipped_dev_items_are_found_and_flag_no_other(shipped_dev: Tally) -> None:
    groups = {
        "answers (in text)",
        "answers (whole document)",
        "arith (in text)",
        "arith (whole document)",
        "records (in text)",
        "support (in text)",
    }
    # a repair item's text is mostly its answer (the reference patch): a copy of the issue
    # text alone holds under the threshold's share of the item's evidence, and is found for
    # about a third of the items (a known limit: docs/guard.md, "Threshold")
    _assert_recall(shipped_dev, groups, minimum=10, unchecked=frozenset({"repair (in text)"}))
    assert sum(shipped_dev.wrong.values()) == 0, shipped_dev.wrong_hits
    assert shipped_dev.clean_flagged == 0


def test_the_known_copies_are_all_there_are() -> None:
    """Every shipped dev item's prompt, screened whole: the only other items it finds are its
    own copies in other versions (same id) and the pairs `KNOWN_COPIES` lists."""
    from evalsuite._core.layout import Layout
    from evalsuite.guard import load_index, screen_documents

    items = shipped_items(REPO, splits=("dev",))
    same = {(i.item_id, j.item_id) for i in items for j in items if i.prompt == j.prompt}
    hits = screen_documents([(i.item_id, i.prompt) for i in items], load_index(Layout(REPO)))
    pairs = {
        (h.document, str(h.item_id))
        for h in hits
        if h.item_id != h.document and (h.document, h.item_id) not in same
    }
    dev = {i.item_id for i in items}  # the documents screened: a holdout item is never one
    both = {*KNOWN_COPIES, *((b, a) for a, b in KNOWN_COPIES)}
    assert pairs == {(a, b) for a, b in both if a in dev}
