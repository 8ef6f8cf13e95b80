"""Open stored runs for review: records, attempts, taxonomy, labels, the holdout rule.

`open_review` is what ``evalsuite review RUN [RUN ...]`` calls before it serves the app or
writes it as a site (docs/review-app.md).

The holdout rule: a holdout run's transcripts exist only in memory during the run (its logs
go to ``memory://``), and nothing here writes one to disk: the index keeps a holdout run's
store rows but no transcript text, and the live server reads a holdout transcript, should a
log of one exist, into memory only when it is opened. A run whose exact holdout score is
sealed behind a reusable-holdout mechanism's answer (a ledger ``answer`` with no ``reveal``)
is refused outright, since the list shows every attempt's score. A static site (``--out``)
holds a holdout run's attempt rows (ids, outcomes, scores, the store's reasons, which never
hold item text) only with ``--include-holdout-attempts``, which records an ``export`` entry
in the suite's ledger before anything is written (as `evalsuite export
--include-holdout-samples` does), and never a transcript of one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalsuite.errors import HoldoutAccessError, NotFoundError, UsageError
from evalsuite.review._web._app import AppSetup, ModeInfo, ReviewApp
from evalsuite.review._web._index import ReviewIndex

if TYPE_CHECKING:
    from evalsuite._core.layout import Layout
    from evalsuite.store import RunRecord, Store

__all__ = ["ReviewOptions", "index_path", "ledger_allows", "open_review"]

INDEX_NAME = "review-index.sqlite"


@dataclass(frozen=True, slots=True)
class ReviewOptions:
    """How to open the runs."""

    who: str
    """Who labels (``--who``; default the login name)."""
    taxonomy: Path | None = None
    """A taxonomy file other than the suite's own (``--taxonomy``)."""
    static: bool = False
    """For a static site (``--out``): read-only, and the holdout rule for files applies."""
    include_holdout: bool = False
    """A static site may hold holdout runs' attempt rows (``--include-holdout-attempts``):
    each such run's export is recorded in its suite's ledger first."""
    key_dir: Path | None = None
    """Where the ledgers' heads are anchored (``EVALSUITE_KEY_DIR``), for that record."""


def index_path(store_url: str, state_dir: Path) -> Path:
    """The index file beside the store: next to a SQLite file, else in ``.evalsuite/``."""
    from evalsuite.store import sqlite_file

    database = sqlite_file(store_url)
    return (database.parent if database is not None else state_dir) / INDEX_NAME


def _ledger_kinds(layout: Layout, record: RunRecord) -> list[str]:
    from evalsuite.holdout import read_ledger

    path = layout.ledger_file(record.suite or "")
    if not record.suite or not path.is_file():
        return []
    return [e.kind for e in read_ledger(path) if e.run_id == record.run_id]


def ledger_allows(layout: Layout, record: RunRecord, options: ReviewOptions) -> str | None:
    """None when the run may be reviewed this way; else why not (see the module docstring)."""
    if record.split != "holdout":
        return None
    kinds = _ledger_kinds(layout, record)
    if "answer" in kinds and "reveal" not in kinds:
        return (
            f"run {record.run_id}'s exact holdout score is sealed behind a reusable-holdout "
            "mechanism's answer, and the review shows every attempt's score; "
            f'`evalsuite holdout reveal {record.run_id} --reason "..."` records a reveal first'
        )
    if options.static and not options.include_holdout:
        return (
            f"run {record.run_id} is a holdout run: a static site writes its attempts (ids, "
            "outcomes, scores; never a transcript) only with --include-holdout-attempts, which "
            "records the export in the holdout ledger; or review it live (`evalsuite review "
            "RUN` without --out writes nothing)"
        )
    return None


def _record_export(layout: Layout, record: RunRecord, key_dir: Path | None) -> None:
    from datetime import UTC, datetime

    from evalsuite.holdout import anchor_file, record_export

    if key_dir is None:
        raise UsageError(
            f"writing holdout run {record.run_id}'s attempts is recorded in the holdout ledger, "
            "whose head is anchored in the key directory: give the key directory "
            "(EVALSUITE_KEY_DIR)"
        )
    suite = str(record.suite)
    record_export(
        layout.ledger_file(suite),
        run_id=record.run_id,
        suite=suite,
        version=str(record.version),
        manifest_hash=str(record.manifest_hash),
        model=record.model,
        reason="a static review site (review --out with --include-holdout-attempts): item "
        "ids, outcomes and scores, never a transcript",
        at=datetime.now(UTC).isoformat(),
        anchor=anchor_file(key_dir, layout.root, suite),
    )


def _taxonomy(
    layout: Layout, records: Sequence[RunRecord], path: Path | None
) -> tuple[Any, list[str]]:
    from evalsuite.review._taxonomy import load_taxonomy, suite_taxonomy, taxonomy_path

    if path is not None:
        return load_taxonomy(path), []
    suites = sorted({r.suite for r in records if r.suite})
    if not suites:
        return None, ["these runs name no suite, so no taxonomy applies: only notes can be saved"]
    if len(suites) > 1:
        raise UsageError(
            f"the runs are of several suites ({', '.join(suites)}); review one suite's runs at "
            "a time (labels are made against one suite's taxonomy)"
        )
    try:
        return suite_taxonomy(layout, suites[0]), []
    except NotFoundError:
        return None, [
            f"suite {suites[0]} has no taxonomy file ({taxonomy_path(layout, suites[0])}): only "
            "notes can be saved; write the file to label failure modes (docs/review-app.md)"
        ]


def _labels(store: Store, run_ids: Sequence[str]) -> dict[tuple[str, str, int], dict[str, Any]]:
    from evalsuite.review._labels import load_labels

    found: dict[tuple[str, str, int], dict[str, Any]] = {}
    for run_id in run_ids:
        for label in load_labels(store, run_id):
            found[(label.run_id, label.item_id, label.epoch)] = label.to_dict()
    return found


def _findings(store: Store, run_ids: Sequence[str]) -> dict[tuple[str, str, int], list[str]]:
    """The scanners that flagged each attempt, from the scans stored by `review --scan`."""
    found: dict[tuple[str, str, int], list[str]] = {}
    for run_id in run_ids:
        for row in store.finding_rows(run_id):
            key = (run_id, str(row["item_id"]), int(row["epoch"]))
            found.setdefault(key, []).append(str(row["scanner"]))
    return found


def open_review(
    store: Store,
    layout: Layout,
    store_url: str,
    run_ids: Sequence[str],
    options: ReviewOptions,
    findings: Mapping[tuple[str, str, int], Sequence[str]] | None = None,
) -> ReviewApp:
    """Open `run_ids` (unique prefixes, as `Store.get_run` takes them) for review.

    `findings` ((run, item, epoch) -> scanner names): None reads the findings of the scans
    stored by ``review --scan`` (`Store.finding_rows`).

    Raises:
        UsageError: no run named, runs of several suites, a malformed taxonomy.
        NotFoundError: an unknown run.
        HoldoutAccessError: a holdout run the ledger does not allow (exit 7).
        ValueError: a run's log is not a readable inspect log.
    """
    if not run_ids:
        raise UsageError("name the runs to review: evalsuite review RUN [RUN ...]")
    records: list[RunRecord] = []
    for run_id in run_ids:
        record = store.get_run(run_id)
        if record.run_id in {r.run_id for r in records}:
            raise UsageError(f"run {record.run_id} is named twice")
        refused = ledger_allows(layout, record, options)
        if refused is not None:
            raise HoldoutAccessError(refused)
        records.append(record)
    if options.static:
        for record in records:
            if record.split == "holdout":
                _record_export(layout, record, options.key_dir)
    taxonomy, notes = _taxonomy(layout, records, options.taxonomy)
    attempts = {r.run_id: store.attempts(r.run_id) for r in records}
    modes = [
        ModeInfo(name=m.name, definition=m.definition, kind=m.kind)
        for m in (taxonomy.modes if taxonomy is not None else ())
    ]
    version = taxonomy.version if taxonomy is not None else ""
    if any(r.split == "holdout" for r in records):
        notes.append(
            "holdout runs: their transcripts are never written to disk; they are shown only "
            "where a log exists, read into memory, and search does not reach them"
        )
    saver = None
    if not options.static:
        saver = _saver(store, taxonomy, options.who)
    index = ReviewIndex(index_path(store_url, layout.state))
    ids = [r.run_id for r in records]
    setup = AppSetup(
        modes=modes,
        taxonomy_version=version,
        who=options.who,
        labels=_labels(store, [r.run_id for r in records]),
        findings=dict(findings) if findings is not None else _findings(store, ids),
        saver=saver,
        notes=notes,
    )
    return ReviewApp.open(index, records, attempts, layout.state, setup)


def _saver(store: Store, taxonomy: Any, who: str) -> Any:
    from evalsuite.review._labels import AttemptLabel, now_utc, save_label

    version = taxonomy.version if taxonomy is not None else "none"

    def save(
        run_id: str, item_id: str, epoch: int, modes: Sequence[str], note: str
    ) -> dict[str, Any]:
        label = AttemptLabel(
            run_id=run_id,
            item_id=item_id,
            epoch=epoch,
            modes=tuple(modes),
            note=note,
            who=who,
            at=now_utc(),
            taxonomy_version=version,
        )
        save_label(store, label, taxonomy=taxonomy)
        return label.to_dict()

    return save
