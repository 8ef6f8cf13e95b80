"""`evalsuite ingest`: results produced elsewhere become runs like any other.

* ``--format inspect``: an inspect log file (``.json`` or ``.eval``) or a directory of them;
  one run per log, one attempt per (sample, epoch), classified by `_outcomes` exactly as a
  live run is. Logs written by `evalsuite run` keep their item ids and epochs.
* ``--format csv``: the contract in `_ingest_csv` (columns ``model, item_id, epoch, score``
  and optional ``stratum``, ``outcome``, ``limit_type``); one run per model.

Every source is read and checked in full before anything is stored. Each run is stored in
one transaction with its content fingerprint; content already stored is skipped and reported
(``again=True`` stores it anyway). A run with too many harness errors is stored and flagged
invalid, exactly as `evalsuite run` does (docs/design/ingest.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from evalsuite._core.layout import Layout
from evalsuite.errors import ItemSourceError, NotFoundError
from evalsuite.manifest import Manifest, frozen_versions, list_suite_names, load_manifest
from evalsuite.run._episode import EPISODE_KEY
from evalsuite.run._ingest_csv import CsvOptions, read_results_csv
from evalsuite.run._outcomes import classify_sample
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._runner import _new_run_id
from evalsuite.store import AttemptRecord, RunRecord, Store, run_health

__all__ = [
    "CsvOptions",
    "IngestReport",
    "IngestedRun",
    "SkippedRun",
    "ingest_csv",
    "ingest_inspect",
]


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


@dataclass(frozen=True, slots=True)
class _Batch:
    """Attempts of one ingested run and what is known about them."""

    model: str
    source: Literal["inspect", "csv"]
    origin: str
    records: list[AttemptRecord]
    epochs: int
    planned: int
    extra: dict[str, Any]
    identity: dict[str, str] = field(default_factory=dict)
    manifest: Manifest | None = None


def _health_frame(records: list[AttemptRecord]) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "outcome": [r.outcome for r in records],
            "limit_type": [r.limit_type for r in records],
            "reason": [r.reason for r in records],
            "retries": [r.retries for r in records],
        }
    )


def _store_batches(
    store: Store, batches: list[_Batch], *, root: Path, threshold: float, again: bool
) -> IngestReport:
    report = IngestReport()
    provenance = collect_provenance(root)
    for batch in batches:
        now = datetime.now(UTC)
        records, manifest, extra = batch.records, batch.manifest, dict(batch.extra)
        health = run_health(_health_frame(records), planned=batch.planned, threshold=threshold)
        record = RunRecord(
            run_id=_new_run_id(now),
            model=batch.model,
            epochs=batch.epochs,
            planned=batch.planned,
            status="complete",
            source=batch.source,
            started_at=extra.pop("started_at", None) or now.isoformat(),
            error_threshold=threshold,
            spec=extra,
            provenance=provenance,
            suite=manifest.suite if manifest else None,
            version=manifest.version if manifest else None,
            manifest_hash=manifest.manifest_hash if manifest else None,
            split=_split_of(manifest, records),
            weights=dict(manifest.weights) if manifest else {},
            valid=health.valid,
            error_rate=health.error_rate,
            finished_at=now.isoformat(),
        )
        stored = store.add_ingested_run(record, records, identity=batch.identity, again=again)
        if stored.run_id is None:
            report.skipped.append(
                SkippedRun(batch.model, batch.origin, stored.content_hash, stored.existing)
            )
            continue
        report.runs.append(
            IngestedRun(
                run_id=stored.run_id,
                model=batch.model,
                n_items=len({r.item_id for r in records}),
                epochs=batch.epochs,
                planned=batch.planned,
                valid=health.valid,
                error_rate=health.error_rate,
                error_threshold=threshold,
                content_hash=stored.content_hash,
                same_content_as=stored.existing,
            )
        )
    return report


def _split_of(manifest: Manifest | None, records: list[AttemptRecord]) -> str | None:
    if manifest is None:
        return None
    sides = {i.id: i.split for i in manifest.items}
    found = {sides.get(r.item_id) for r in records}
    return found.pop() if len(found) == 1 else None


# inspect logs --------------------------------------------------------------------------


def _log_paths(path: Path) -> list[Path]:
    if path.is_file():
        return [path]
    if path.is_dir():
        found = [Path(info.name.removeprefix("file://")) for info in list_eval_logs(str(path))]
        if not found:
            raise NotFoundError(f"no inspect logs (.eval or .json) in {path}")
        return sorted(found)
    raise NotFoundError(f"{path} does not exist")


def _sample_key(sample: Any) -> tuple[str, int, int | None]:
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


def _attempts_from_log(log: EvalLog, manifest: Manifest | None) -> list[AttemptRecord]:
    items = {i.id: i for i in manifest.items} if manifest else {}
    records = []
    for sample in log.samples or []:
        item_id, epoch, seed = _sample_key(sample)
        classified = classify_sample(sample)
        metadata = sample.metadata or {}
        frozen = items.get(item_id)
        stratum = frozen.stratum if frozen else metadata.get("stratum")
        tokens = sum(u.total_tokens for u in (sample.model_usage or {}).values())
        records.append(
            AttemptRecord(
                item_id=item_id,
                epoch=epoch,
                stratum=str(stratum) if stratum is not None else "all",
                outcome=classified.outcome,
                score=classified.score,
                item_hash=frozen.hash if frozen else None,
                cluster=frozen.cluster if frozen else None,
                seed=seed,
                limit_type=classified.limit_type,
                reason=classified.reason,
                retries=len(sample.error_retries or []),
                duration_s=float(sample.total_time or 0.0),
                tokens=int(tokens),
                checks=classified.checks,
            )
        )
    return records


def ingest_inspect(
    path: Path,
    store: Store,
    *,
    root: Path,
    error_threshold: float = 0.05,
    again: bool = False,
) -> IngestReport:
    """Store every inspect log under `path` as a run (one per log).

    A log written by `evalsuite run` carries the manifest hash as its task version; when that
    manifest is frozen in this project, the run is linked to it (suite, version, item hashes,
    strata and weights), so it compares with live runs on the same manifest. Every log is read
    before any is stored; a log whose content is already stored is skipped (see the module).
    """
    batches = []
    layout = Layout(root)
    for log_path in _log_paths(path):
        try:
            log = read_eval_log(str(log_path))
        except Exception as exc:
            raise ItemSourceError(f"{log_path}: not a readable inspect log ({exc})") from None
        manifest = _find_manifest(layout, str(log.eval.task_version))
        records = _attempts_from_log(log, manifest)
        if not records:
            raise ItemSourceError(f"{log_path}: the log holds no samples")
        if len({(r.item_id, r.epoch) for r in records}) < len(records):
            raise ItemSourceError(
                f"{log_path}: two samples of the log are the same (item, epoch); a log holds "
                "one sample per attempt. Ingest the logs of one eval separately"
            )
        epochs = max(r.epoch for r in records)
        items = {r.item_id for r in records}
        planned = max(len(items) * (log.eval.config.epochs or epochs), len(records))
        batches.append(
            _Batch(
                model=log.eval.model,
                source="inspect",
                origin=str(log_path),
                records=records,
                epochs=epochs,
                planned=planned,
                extra={
                    "log": str(log_path),
                    "eval_id": log.eval.eval_id,
                    "task": log.eval.task,
                    "task_version": str(log.eval.task_version),
                    "log_status": log.status,
                    "started_at": log.eval.created,
                },
                identity={"eval_id": log.eval.eval_id},
                manifest=manifest,
            )
        )
    return _store_batches(store, batches, root=root, threshold=error_threshold, again=again)


# CSV -----------------------------------------------------------------------------------


def ingest_csv(
    path: Path, store: Store, *, root: Path, options: CsvOptions, again: bool = False
) -> IngestReport:
    """Store a results CSV as one run per model (the contract: `_ingest_csv.CSV_COLUMNS`).

    The whole file is checked first; every bad row is named by its line and nothing is
    stored unless all rows are valid.
    """
    batches = []
    for model, records in read_results_csv(path, options).items():
        epochs = max(r.epoch for r in records)
        items = {r.item_id for r in records}
        batches.append(
            _Batch(
                model=model,
                source="csv",
                origin=str(path),
                records=records,
                epochs=epochs,
                planned=len(items) * epochs,
                extra={
                    "file": str(path),
                    "columns": dict(options.columns),
                    "ignored_columns": list(options.ignore),
                    "epoch_base": options.epoch_base,
                },
            )
        )
    return _store_batches(store, batches, root=root, threshold=options.error_threshold, again=again)
