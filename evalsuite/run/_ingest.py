"""`evalsuite ingest`: results produced elsewhere become runs like any other.

* ``--format inspect``: an inspect log file (``.json`` or ``.eval``) or a directory of them;
  one run per log, one attempt per (sample, epoch), classified by `_outcomes` exactly as a
  live run is. Logs written by `evalsuite run` keep their item ids and epochs. The header is
  read first, then the samples in batches, decoding only the fields used (`_log_reader`).
* ``--format csv`` / ``--format parquet``: a results table, the contract in `_ingest_csv`
  (columns ``model, item_id, epoch, score`` and optional ``stratum``, ``outcome``,
  ``limit_type``); one run per model. Read and checked in Arrow batches.

Rows stream into the store's bulk path (`Store.ingest_session`) as they are read: memory is
bounded by a batch, not the source. Everything of one ingest commits in one transaction, and
only once the whole source has been read and found valid; a bad row anywhere stores nothing.
Each run records its content fingerprint; content already stored is skipped and reported
(``again=True`` stores it anyway). A run with too many harness errors is stored and flagged
invalid, exactly as `evalsuite run` does (docs/design/ingest.md, docs/design/store-scale.md).

``--suite SUITE@X.Y.Z`` attaches either to a frozen manifest (`_Attach`, batch by batch): item
ids are checked against it, strata, clusters and item hashes come from it, the run's split is
its items' split, and the items of that split that are absent are planned and counted as not
run (docs/design/foreign-tasks.md, "Ingest into a frozen suite").
"""

from __future__ import annotations

import gc
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import pyarrow as pa

from evalsuite._core.display import show_id
from evalsuite._core.layout import Layout
from evalsuite.errors import HoldoutAccessError, ItemSourceError, NotFoundError, UsageError
from evalsuite.manifest import (
    Manifest,
    ManifestItem,
    frozen_versions,
    list_suite_names,
    load_manifest,
)
from evalsuite.run._ingest_csv import CsvOptions, Format, ResultsTable
from evalsuite.run._log_files import find_inspect_logs
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._run_id import new_run_id as _new_run_id
from evalsuite.store import IngestSession, RunRecord, RunTally, Store, attempt_table

if TYPE_CHECKING:
    from evalsuite.run._scores import ScoreRule

# inspect-ai (seconds of CPU to import) only where logs are read: a CSV or Parquet table
# needs none of it (docs/scale.md, "Ingest")

__all__ = [
    "CsvOptions",
    "IngestReport",
    "IngestSource",
    "IngestedRun",
    "SkippedRun",
    "ingest_checked_table",
    "ingest_csv",
    "ingest_inspect",
    "ingest_table",
]

IngestSource = Literal["inspect", "csv", "eee", "lm-eval", "helm"]
"""Where an ingested run's results came from (`RunRecord.source`)."""

INSPECT_BATCH_SAMPLES = 2_000
"""Samples of an inspect log converted and written per batch (with two processes reading,
each reads every other batch)."""


@dataclass(frozen=True, slots=True)
class IngestedRun:
    """One run created by an ingest."""

    run_id: str
    model: str
    n_items: int
    epochs: int
    planned: int
    valid: bool
    error_rate: float = 0.0
    error_threshold: float = 0.05
    content_hash: str | None = None
    same_content_as: tuple[str, ...] = ()
    """Runs that already held this content (stored again because of ``--again``)."""
    suite: str | None = None
    """The frozen suite (``name@version``) the run is linked to, if any."""
    split: str | None = None
    left_out: int = 0
    """Attempts of the other split left out (``--suite`` with ``--split``)."""

    def to_dict(self) -> dict[str, Any]:
        """The `ingest --json` entry: run_id, model, n_items, epochs, then health and hash."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "n_items": self.n_items,
            "epochs": self.epochs,
            "planned": self.planned,
            "valid": self.valid,
            "error_rate": self.error_rate,
            "error_threshold": self.error_threshold,
            "content_hash": self.content_hash,
            "same_content_as": list(self.same_content_as),
            "suite": self.suite,
            "split": self.split,
            "left_out": self.left_out,
        }


@dataclass(frozen=True, slots=True)
class SkippedRun:
    """Content that was already stored, so no run was created for it."""

    model: str
    source: str
    """The log file or CSV it came from."""
    content_hash: str
    existing_run_ids: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        """The `ingest --json` ``skipped`` entry."""
        return {
            "model": self.model,
            "source": self.source,
            "content_hash": self.content_hash,
            "existing_run_ids": list(self.existing_run_ids),
        }


@dataclass(frozen=True, slots=True)
class IngestReport:
    """What one ingest stored, and what it skipped as already stored."""

    runs: list[IngestedRun] = field(default_factory=list)
    skipped: list[SkippedRun] = field(default_factory=list)

    @property
    def invalid(self) -> list[IngestedRun]:
        """Stored runs whose harness error rate is above their threshold."""
        return [r for r in self.runs if not r.valid]


_SHOWN = 10


def _some(ids: list[str]) -> str:
    shown = ", ".join(show_id(i) for i in ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


@dataclass(slots=True)
class _Attach:
    """Attach ingested attempts to a frozen manifest (``ingest --suite``), batch by batch.

    `split` keeps only the attempts of that split's items (``ingest --split dev``: a plain
    ``inspect eval`` of a task runs all its samples); the others are counted in `left_out`
    and never stored. Without it the attempts must all be of one split, and never of the
    holdout: only `evalsuite run --split holdout` looks at it, so that the ledger counts
    each look. Every refusal raises before the ingest commits: nothing is stored.
    """

    manifest: Manifest
    origin: str
    split: str | None = None
    left_out: int = 0
    sides: Counter[str] = field(default_factory=Counter)
    items: dict[str, ManifestItem] = field(init=False)
    """The manifest's items by id (built once, read by every batch)."""

    def __post_init__(self) -> None:
        self.items = {i.id: i for i in self.manifest.items}

    def batch(self, batch: pa.RecordBatch) -> pa.RecordBatch | None:
        """The batch with the manifest's stratum, cluster and item hash (None: nothing kept).

        Raises:
            ItemSourceError: an item id is not in the manifest, or a stratum given by the
                file disagrees with the manifest's.
        """
        manifest, items = self.manifest, self.items
        ids = batch.column("item_id").to_pylist()
        unknown = sorted(set(ids) - set(items))
        if unknown:
            raise ItemSourceError(
                f"{self.origin}: {len(unknown)} item id(s) are not items of {manifest.ref}: "
                f"{_some(unknown)}. --suite attaches results of the suite's own items only; "
                f"check that the file holds results of {manifest.ref} (the ids listed in "
                f"manifests/{manifest.suite}/{manifest.version}.json), or ingest it without "
                "--suite"
            )
        if self.split is not None and self.split != "holdout":
            keep = [items[i].split == self.split for i in ids]
            kept = batch.filter(pa.array(keep, type=pa.bool_()))
            self.left_out += batch.num_rows - kept.num_rows
            batch, ids = kept, [i for i, k in zip(ids, keep, strict=True) if k]
        if not ids:
            return None
        self.sides.update(items[i].split for i in ids)
        given = batch.column("stratum").to_pylist()
        clashes = sorted(
            {i for i, s in zip(ids, given, strict=True) if s not in (None, "all", items[i].stratum)}
        )
        if clashes:
            first = items[clashes[0]]
            wrong = next(s for i, s in zip(ids, given, strict=True) if i == first.id)
            raise ItemSourceError(
                f"{self.origin}: the stratum given for {len(clashes)} item(s) "
                f"({_some(clashes)}) is not the one {manifest.ref} froze (e.g. {first.id!r}: "
                f"{wrong!r} in the file, {first.stratum!r} in the manifest). With --suite the "
                "strata come from the manifest: drop the stratum column (or --ignore-column it)"
            )
        for name, values in (
            ("stratum", [items[i].stratum for i in ids]),
            ("cluster", [items[i].cluster for i in ids]),
            ("item_hash", [items[i].hash for i in ids]),
        ):
            index = batch.schema.get_field_index(name)
            column = pa.array(values, type=batch.schema.field(index).type)
            batch = batch.set_column(index, name, column)
        return batch

    def attached_split(self) -> str:
        """The one split the kept attempts are of, once every batch is read.

        Raises:
            ItemSourceError: no attempt was kept, or the attempts span both splits.
            HoldoutAccessError: the attempts are of holdout items.
        """
        ref = self.manifest.ref
        if not self.sides:
            raise ItemSourceError(
                f"{self.origin}: none of its attempts is of a {self.split} item of {ref}; "
                "nothing to attach"
            )
        if len(self.sides) > 1:
            raise ItemSourceError(
                f"{self.origin}: the results span the dev ({self.sides['dev']} attempts) and "
                f"holdout ({self.sides['holdout']} attempts) items of {ref}; a run measures "
                "one split. Pass --split dev to attach the dev items' results (the holdout ones "
                "are left out, counted, and never stored)"
            )
        split = next(iter(self.sides))
        if split == "holdout":
            raise HoldoutAccessError(
                f"{self.origin}: the results are of holdout items of {ref}. The holdout is "
                "looked at only by `evalsuite run --split holdout`, which the ledger counts; "
                "results made elsewhere cannot be attached to it. Ingest dev-split results"
            )
        return split


@dataclass(slots=True)
class _Source:
    """One run being ingested: what it came from, and what its record needs."""

    run_id: str
    model: str
    source: IngestSource
    origin: str
    extra: dict[str, Any]
    identity: dict[str, str] = field(default_factory=dict)
    manifest: Manifest | None = None
    planned_epochs: int | None = None
    """inspect: the eval's configured epochs (planned = items x epochs, at least the rows)."""
    splits: set[str | None] = field(default_factory=set)
    attach: _Attach | None = None
    """Set by ``--suite`` for a source not linked to its manifest already."""


def _record(
    src: _Source, tally: RunTally, *, threshold: float, provenance: dict[str, Any]
) -> tuple[RunRecord, Any]:
    now = datetime.now(UTC)
    epochs = tally.max_epoch
    if src.source == "inspect":
        planned = max(tally.n_items * (src.planned_epochs or epochs), tally.rows)
    else:
        planned = tally.n_items * epochs
    extra, manifest = dict(src.extra), src.manifest
    split = None
    if src.attach is not None:
        split = src.attach.attached_split()
        epochs = max(epochs, src.planned_epochs or 0)
        planned = len(src.attach.manifest.items_by_split(split)) * epochs  # type: ignore[arg-type]
        extra["attached"] = src.attach.manifest.ref
        if src.attach.left_out:
            extra["left_out"] = src.attach.left_out
    elif manifest is not None and len(src.splits) == 1:
        split = next(iter(src.splits))
    health = tally.health.health(planned=planned, threshold=threshold, source=src.source)
    record = RunRecord(
        run_id=src.run_id,
        model=src.model,
        epochs=epochs,
        planned=planned,
        status="complete",
        source=src.source,
        started_at=extra.pop("started_at", None) or now.isoformat(),
        error_threshold=threshold,
        spec=extra,
        provenance=provenance,
        suite=manifest.suite if manifest else None,
        version=manifest.version if manifest else None,
        manifest_hash=manifest.manifest_hash if manifest else None,
        split=split,
        weights=dict(manifest.weights) if manifest else {},
        valid=health.valid,
        error_rate=health.error_rate,
        finished_at=now.isoformat(),
    )
    return record, health


def _finish(
    session: IngestSession,
    sources: list[_Source],
    report: IngestReport,
    *,
    root: Path,
    threshold: float,
    again: bool,
) -> None:
    """Store each source's run (or skip its content when already stored)."""
    provenance = collect_provenance(root)
    for src in sources:
        made: dict[str, Any] = {}

        def make(tally: RunTally, src: _Source = src, made: dict[str, Any] = made) -> RunRecord:
            record, health = _record(src, tally, threshold=threshold, provenance=provenance)
            made.update(record=record, health=health, tally=tally)
            return record

        stored = session.finish(src.run_id, make, identity=src.identity, again=again)
        if stored.run_id is None:
            report.skipped.append(
                SkippedRun(src.model, src.origin, stored.content_hash, stored.existing)
            )
            continue
        record, health, tally = made["record"], made["health"], made["tally"]
        report.runs.append(
            IngestedRun(
                run_id=stored.run_id,
                model=src.model,
                n_items=tally.n_items,
                epochs=record.epochs,
                planned=record.planned,
                valid=health.valid,
                error_rate=health.error_rate,
                error_threshold=threshold,
                content_hash=stored.content_hash,
                same_content_as=stored.existing,
                suite=src.manifest.ref if src.manifest else None,
                split=record.split,
                left_out=src.attach.left_out if src.attach else 0,
            )
        )


# inspect logs --------------------------------------------------------------------------


def _log_paths(location: str) -> list[str]:
    """The logs at `location`: a log file, or a directory's logs; a path or any fsspec URL."""
    found = find_inspect_logs(location)
    if found is None:
        raise NotFoundError(f"{location} does not exist")
    if not found:
        raise NotFoundError(f"no inspect logs (.eval or .json) in {location}")
    return found


def _sample_key(sample: Any) -> tuple[str, int, int | None]:
    from evalsuite.run._episode import EPISODE_KEY

    spec = (sample.metadata or {}).get(EPISODE_KEY)
    if isinstance(spec, dict) and "item_id" in spec:
        return str(spec["item_id"]), int(spec["epoch"]), spec.get("seed")
    return str(sample.id), int(sample.epoch), None


def _find_manifest(layout: Layout, manifest_hash: str) -> Manifest | None:
    """The frozen manifest whose hash an evalsuite run put into the inspect task version."""
    for suite in list_suite_names(layout):
        for version in frozen_versions(layout, suite):
            manifest = load_manifest(layout, suite, version)
            if manifest.manifest_hash == manifest_hash:
                return manifest
    return None


def _attempt_row(
    sample: Any, items: dict[str, Any], rules: dict[str, ScoreRule], families: dict[str, str]
) -> dict[str, Any]:
    """One attempt row; the score picked by the item's family declaration (`rules`)."""
    from evalsuite.run._outcomes import classify_sample

    item_id, epoch, seed = _sample_key(sample)
    family = families.get(item_id)
    classified = classify_sample(sample, rule=rules.get(family) if family else None)
    metadata = sample.metadata or {}
    frozen = items.get(item_id)
    stratum = frozen.stratum if frozen else metadata.get("stratum")
    tokens = sum(u.total_tokens for u in (sample.model_usage or {}).values())
    checks = classified.checks
    return {
        "item_id": item_id,
        "epoch": epoch,
        "stratum": str(stratum) if stratum is not None else "all",
        "outcome": classified.outcome,
        "score": classified.score,
        "item_hash": frozen.hash if frozen else None,
        "cluster": frozen.cluster if frozen else None,
        "seed": seed,
        "limit_type": classified.limit_type,
        "reason": classified.reason,
        "retries": len(sample.error_retries or []),
        "duration_s": float(sample.total_time or 0.0),
        "tokens": int(tokens),
        "checks": json.dumps(checks, sort_keys=True) if checks else None,
    }


def _samples(log_path: str) -> Iterator[Any]:
    """Every sample of a log, with only the fields classification and the attempt row read.

    `evalsuite.run._log_reader`: an ``.eval`` log's sample entries one at a time, a ``.json``
    log's document whole; the transcripts (messages, events) are scanned, never built.
    """
    from evalsuite.run._log_reader import read_log_samples

    return read_log_samples(log_path)


PROCESSES_VARIABLE = "EVALSUITE_INGEST_PROCESSES"
"""Processes reading one ``.eval`` log (1 or 2; default 2 on a machine of 2 cores or more)."""


def ingest_processes() -> int:
    """The processes reading an ``.eval`` log: `PROCESSES_VARIABLE`, else 2 given 2 cores.

    Raises:
        UsageError: the variable is set to anything but 1 or 2.
    """
    value = os.environ.get(PROCESSES_VARIABLE)
    if value is None or value == "":
        return 2 if (os.cpu_count() or 1) >= 2 else 1
    if value.strip() not in ("1", "2"):
        raise UsageError(
            f"{PROCESSES_VARIABLE}={value!r}: expected 1 (read each inspect log in one "
            "process) or 2 (a second process reads every other batch of samples); unset it "
            "for the default"
        )
    return int(value)


@contextmanager
def _frozen_heap() -> Iterator[None]:
    """The objects alive now left out of garbage collection's scans until the end.

    A log's samples make garbage by the million (decoded documents, models, rows), and every
    collection of the oldest generation would scan the modules loaded so far too (inspect-ai,
    pyarrow, SQLAlchemy: some 200,000 objects): about a third of an ingest's CPU for small
    samples (docs/scale.md, "Ingest"). `gc.freeze` moves them to a permanent generation, in
    a forked second reader too; nothing the ingest makes is left uncollected.
    """
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _stream_log(session: IngestSession, src: _Source, log_path: str) -> None:
    """Write every sample of one log into the session, `INSPECT_BATCH_SAMPLES` at a time.

    Scores are picked by the declarations of the linked manifest (or the one ``--suite``
    names): which score counts for each item's family (a dict value, several scorers;
    docs/design/scorers.md), as a live run of the suite would. The samples are read,
    validated and turned into attempt rows batch by batch, by one process or two
    (`ingest_processes`, `_log_reader.LogBatches`); this process writes every batch, in the
    log's order.
    """
    from evalsuite.run._log_reader import LogBatches, LogReaderDied
    from evalsuite.run._scores import ScoreRule

    manifest = src.manifest if src.attach is None else None
    scoring = src.manifest
    items = {i.id: i for i in manifest.items} if manifest else {}
    sides = {i.id: i.split for i in manifest.items} if manifest else {}
    rules: dict[str, ScoreRule] = {}
    families: dict[str, str] = {}
    if scoring is not None:
        rules = {f.name: ScoreRule.of_family(f, scoring.suite) for f in scoring.families}
        families = {i.id: i.family for i in scoring.items}

    def convert(samples: list[Any]) -> pa.Table:
        rows = [_attempt_row(sample, items, rules, families) for sample in samples]
        return attempt_table({name: [row[name] for row in rows] for name in rows[0]})

    def write(table: pa.Table) -> None:
        src.splits.update(sides.get(item) for item in table.column("item_id").to_pylist())
        if src.attach is None:
            session.add(src.run_id, table)
        else:
            attached = src.attach.batch(table.combine_chunks().to_batches()[0])
            if attached is not None:
                session.add(src.run_id, attached)

    processes = ingest_processes()
    try:
        with LogBatches(
            log_path, convert, size=INSPECT_BATCH_SAMPLES, processes=processes
        ) as batches:
            for table in batches:
                write(table)
    except (ItemSourceError, NotFoundError, HoldoutAccessError, LogReaderDied):
        raise
    except Exception as exc:
        raise ItemSourceError(f"{log_path}: not a readable inspect log ({exc})") from None


def ingest_inspect(
    path: Path | str,
    store: Store,
    *,
    root: Path,
    error_threshold: float = 0.05,
    again: bool = False,
    suite: Manifest | None = None,
    split: str | None = None,
) -> IngestReport:
    """Store every inspect log under `path` (a path or any fsspec URL) as a run (one per log).

    A log written by `evalsuite run` carries the manifest hash as its task version; when that
    manifest is frozen in this project, the run is linked to it (suite, version, item hashes,
    strata and weights), so it compares with live runs on the same manifest. Any other log
    (a plain ``inspect eval`` of the suite's task) is linked to `suite` when given (`_Attach`;
    `split` keeps one split's items). Every log is read before anything commits; a log whose
    content is already stored is skipped (see the module).
    """
    from inspect_ai.log import read_eval_log

    import evalsuite.run._log_reader  # noqa: F401 (imported before the heap is frozen)

    layout = Layout(root)
    report = IngestReport()
    sources = []
    with _frozen_heap(), store.ingest_session() as session:
        for log_path in _log_paths(str(path)):
            try:
                log = read_eval_log(str(log_path), header_only=True)
            except Exception as exc:
                raise ItemSourceError(f"{log_path}: not a readable inspect log ({exc})") from None
            linked = _find_manifest(layout, str(log.eval.task_version))
            if suite is not None and linked is not None and linked.ref != suite.ref:
                raise ItemSourceError(
                    f"{log_path}: evalsuite wrote this log for {linked.ref}, not {suite.ref}; "
                    "it attaches itself to its own manifest. Drop --suite, or give "
                    f"--suite {linked.ref}"
                )
            attach = None
            if suite is not None and linked is None:
                attach = _Attach(suite, str(log_path), split)
            src = _Source(
                run_id=_new_run_id(datetime.now(UTC)),
                model=log.eval.model,
                source="inspect",
                origin=str(log_path),
                extra={
                    "log": str(log_path),
                    "eval_id": log.eval.eval_id,
                    "task": log.eval.task,
                    "task_version": str(log.eval.task_version),
                    "log_status": log.status,
                    "started_at": log.eval.created,
                },
                identity={"eval_id": log.eval.eval_id},
                manifest=linked or suite,
                planned_epochs=log.eval.config.epochs,
                attach=attach,
            )
            _stream_log(session, src, log_path)
            if attach is not None:
                attach.attached_split()  # refuse a log of both splits or of the holdout now
            if src.run_id not in session.tallies:
                raise ItemSourceError(f"{log_path}: the log holds no samples")
            if session.close_writes():
                raise ItemSourceError(
                    f"{log_path}: two samples of the log are the same (item, epoch); a log "
                    "holds one sample per attempt. Ingest the logs of one eval separately"
                )
            sources.append(src)
        _finish(session, sources, report, root=root, threshold=error_threshold, again=again)
    return report


# results tables (CSV, Parquet) ---------------------------------------------------------


def ingest_table(  # noqa: PLR0913 (the options of `ingest`, one each)
    path: Path,
    store: Store,
    *,
    root: Path,
    options: CsvOptions,
    fmt: Format = "csv",
    again: bool = False,
    suite: Manifest | None = None,
    split: str | None = None,
) -> IngestReport:
    """Store a results table (CSV or Parquet) as one run per model (`_ingest_csv.CSV_COLUMNS`).

    The whole file is checked, in batches, as it is written into one transaction; every bad
    row is named by its line (or row) and nothing is stored unless all rows are valid. With
    `suite`, each model's attempts are attached to that frozen manifest (`_Attach`).
    """
    extra = {
        "file": str(path),
        "format": fmt,
        "columns": dict(options.columns),
        "ignored_columns": list(options.ignore),
        "epoch_base": options.epoch_base,
    }
    return ingest_checked_table(
        ResultsTable(path, options, fmt),
        store,
        root=root,
        source="csv",
        extra=lambda _: extra,
        again=again,
        suite=suite,
        split=split,
    )


def ingest_checked_table(  # noqa: PLR0913 (the options of `ingest`, one each)
    table: ResultsTable,
    store: Store,
    *,
    root: Path,
    source: IngestSource,
    extra: Callable[[str], dict[str, Any]],
    again: bool = False,
    suite: Manifest | None = None,
    split: str | None = None,
) -> IngestReport:
    """Store the rows of a `ResultsTable` as one run per model, recorded as from `source`.

    The table's rows come from a file (`ingest_table`) or from another format's reader
    (`evalsuite.interchange`: Every Eval Ever, lm-eval, HELM); `extra(model)` is the run
    spec's record of where that model's rows came from. Same checks, same one transaction.
    """
    report = IngestReport()
    sources: dict[str, _Source] = {}
    origin = str(table.path)
    with store.ingest_session() as session:
        for model, batch in table.batches():
            src = sources.get(model)
            if src is None:
                src = sources[model] = _Source(
                    run_id=_new_run_id(datetime.now(UTC)),
                    model=model,
                    source=source,
                    origin=origin,
                    extra=dict(extra(model)),
                    manifest=suite,
                    attach=_Attach(suite, origin, split) if suite is not None else None,
                )
            if src.attach is not None:
                attached = src.attach.batch(batch)
                if attached is None:
                    continue
                batch = attached
            session.add(src.run_id, batch)
        table.raise_problems(duplicates=session.close_writes())
        ordered = [sources[m] for m in sorted(sources)]
        _finish(
            session, ordered, report, root=root, threshold=table.options.error_threshold,
            again=again,
        )  # fmt: skip
    return report


def ingest_csv(
    path: Path,
    store: Store,
    *,
    root: Path,
    options: CsvOptions,
    again: bool = False,
    suite: Manifest | None = None,
    split: str | None = None,
) -> IngestReport:
    """Store a results CSV as one run per model (`ingest_table` with ``fmt="csv"``)."""
    return ingest_table(
        path, store, root=root, options=options, fmt="csv", again=again, suite=suite, split=split
    )
