"""`evalsuite ingest`: results produced elsewhere become runs like any other.

* ``--format inspect``: an inspect log file (``.json`` or ``.eval``) or a directory of them;
  one run per log, one attempt per (sample, epoch), classified by `_outcomes` exactly as a
  live run is. Logs written by `evalsuite run` keep their item ids and epochs.
* ``--format csv``: columns ``model, item_id, epoch, score`` and optional ``stratum``,
  ``outcome``; one run per model. ``--column target=source`` renames columns (e.g. the
  tau-bench trials: ``item_id=task_id``, ``epoch=trial``, ``score=reward``), ``--model``
  names the model when the file has no model column, ``--epoch-base 0`` accepts files that
  count epochs from 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from evalsuite._core.layout import Layout
from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.manifest import Manifest, frozen_versions, list_suite_names, load_manifest
from evalsuite.run._episode import EPISODE_KEY
from evalsuite.run._outcomes import classify_sample
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._runner import _new_run_id
from evalsuite.store import AttemptRecord, RunRecord, Store, run_health

__all__ = ["CsvOptions", "IngestedRun", "ingest_csv", "ingest_inspect"]

_CSV_REQUIRED = ("item_id", "epoch", "score")
_OUTCOMES = ("scored", "limit", "harness_error")


@dataclass(frozen=True, slots=True)
class IngestedRun:
    """One run created by an ingest."""

    run_id: str
    model: str
    n_items: int
    epochs: int
    planned: int
    valid: bool

    def to_dict(self) -> dict[str, Any]:
        """The `ingest --json` entry (DESIGN.md: run_id, model, n_items, epochs)."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "n_items": self.n_items,
            "epochs": self.epochs,
            "planned": self.planned,
            "valid": self.valid,
        }


@dataclass(frozen=True, slots=True)
class CsvOptions:
    """How to read a results CSV."""

    columns: Mapping[str, str]
    """evalsuite column -> column in the file."""
    model: str | None = None
    epoch_base: Literal[0, 1] = 1
    error_threshold: float = 0.05


@dataclass(frozen=True, slots=True)
class _Batch:
    """Attempts of one ingested run and what is known about them."""

    model: str
    source: Literal["inspect", "csv"]
    records: list[AttemptRecord]
    epochs: int
    planned: int
    extra: dict[str, Any]
    manifest: Manifest | None = None


def _store_run(store: Store, batch: _Batch, *, root: Path, threshold: float) -> IngestedRun:
    now = datetime.now(UTC)
    model, source, records = batch.model, batch.source, batch.records
    epochs, planned, extra, manifest = (
        batch.epochs,
        batch.planned,
        dict(batch.extra),
        (batch.manifest),
    )
    record = RunRecord(
        run_id=_new_run_id(now),
        model=model,
        epochs=epochs,
        planned=planned,
        status="running",
        source=source,
        started_at=extra.pop("started_at", None) or now.isoformat(),
        error_threshold=threshold,
        spec=extra,
        provenance=collect_provenance(root),
        suite=manifest.suite if manifest else None,
        version=manifest.version if manifest else None,
        manifest_hash=manifest.manifest_hash if manifest else None,
        split=_split_of(manifest, records),
        weights=dict(manifest.weights) if manifest else {},
    )
    store.create_run(record)
    try:
        store.record_attempts(record.run_id, records)
        health = run_health(store.attempts(record.run_id), planned=planned, threshold=threshold)
        store.update_run(
            record.run_id,
            status="complete",
            valid=health.valid,
            error_rate=health.error_rate,
            finished_at=now.isoformat(),
        )
    except BaseException:
        store.delete_run(record.run_id)  # nothing half-written
        raise
    return IngestedRun(
        run_id=record.run_id,
        model=model,
        n_items=len({r.item_id for r in records}),
        epochs=epochs,
        planned=planned,
        valid=health.valid,
    )


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
    path: Path, store: Store, *, root: Path, error_threshold: float = 0.05
) -> list[IngestedRun]:
    """Store every inspect log under `path` as a run (one per log).

    A log written by `evalsuite run` carries the manifest hash as its task version; when that
    manifest is frozen in this project, the run is linked to it (suite, version, item hashes,
    strata and weights), so it compares with live runs on the same manifest.
    """
    runs = []
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
        epochs = max(r.epoch for r in records)
        items = {r.item_id for r in records}
        planned = max(len(items) * (log.eval.config.epochs or epochs), len(records))
        runs.append(
            _store_run(
                store,
                _Batch(
                    model=log.eval.model,
                    source="inspect",
                    records=records,
                    epochs=epochs,
                    planned=planned,
                    extra={
                        "log": str(log_path),
                        "task": log.eval.task,
                        "task_version": str(log.eval.task_version),
                        "log_status": log.status,
                        "started_at": log.eval.created,
                    },
                    manifest=manifest,
                ),
                root=root,
                threshold=error_threshold,
            )
        )
    return runs


# CSV -----------------------------------------------------------------------------------


def _read_csv(path: Path, options: CsvOptions) -> pd.DataFrame:
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist")
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise ItemSourceError(f"{path}: not a readable CSV ({exc})") from None
    frame.columns = [str(c).strip() for c in frame.columns]
    rename = {source: target for target, source in options.columns.items()}
    missing_sources = sorted(s for s in rename if s not in frame.columns)
    if missing_sources:
        raise UsageError(
            f"{path}: --column names columns that are not in the file: "
            f"{missing_sources} (columns: {list(frame.columns)})"
        )
    frame = frame.rename(columns=rename)
    if "model" not in frame.columns:
        if options.model is None:
            raise UsageError(f"{path} has no 'model' column; pass --model NAME")
        frame["model"] = options.model
    elif options.model is not None:
        raise UsageError(f"{path} has a 'model' column; do not pass --model as well")
    absent = [c for c in _CSV_REQUIRED if c not in frame.columns]
    if absent:
        raise ItemSourceError(
            f"{path}: missing column(s) {absent}; expected model, item_id, epoch, score "
            f"(optional stratum, outcome); found {list(frame.columns)}. Map other names with "
            "--column item_id=<name>"
        )
    return frame


def _parse_row(number: int, row: Mapping[str, str], options: CsvOptions) -> AttemptRecord:
    where = f"row {number}"
    item_id = row["item_id"].strip()
    if not item_id:
        raise ItemSourceError(f"{where}: empty item_id")
    try:
        epoch = int(row["epoch"]) + (1 - options.epoch_base)
    except ValueError:
        raise ItemSourceError(f"{where}: epoch {row['epoch']!r} is not an integer") from None
    if epoch < 1:
        raise ItemSourceError(
            f"{where}: epoch {row['epoch']} is below {options.epoch_base}; epochs are 1-based "
            "(pass --epoch-base 0 if this file counts from 0)"
        )
    outcome = (row.get("outcome") or "scored").strip() or "scored"
    if outcome not in _OUTCOMES:
        raise ItemSourceError(f"{where}: outcome {outcome!r} is not one of {list(_OUTCOMES)}")
    text = row["score"].strip()
    if outcome == "harness_error":
        if text:
            raise ItemSourceError(
                f"{where}: a harness_error row must leave score empty "
                "(harness errors are excluded, never scored)"
            )
        score = math.nan
    else:
        try:
            score = float(text)
        except ValueError:
            raise ItemSourceError(f"{where}: score {text!r} is not a number") from None
        if not (math.isfinite(score) and 0.0 <= score <= 1.0):
            raise ItemSourceError(
                f"{where}: score {text} is outside [0, 1]; rescale it first (evalsuite never clips)"
            )
        if outcome == "limit" and score != 0.0:
            raise ItemSourceError(f"{where}: a limit row scores 0 (got {text})")
    stratum = (row.get("stratum") or "").strip() or "all"
    return AttemptRecord(
        item_id=item_id,
        epoch=epoch,
        stratum=stratum,
        outcome=outcome,  # type: ignore[arg-type]  # checked above
        score=score,
        limit_type="custom" if outcome == "limit" else None,
        reason="ingested from CSV",
    )


def ingest_csv(path: Path, store: Store, *, root: Path, options: CsvOptions) -> list[IngestedRun]:
    """Store a results CSV as one run per model; every bad row is named (1-based data row)."""
    frame = _read_csv(path, options)
    by_model: dict[str, list[AttemptRecord]] = {}
    seen: dict[tuple[str, str, int], int] = {}
    for number, raw in enumerate(frame.to_dict(orient="records"), start=2):
        row = {str(k): str(v) for k, v in raw.items()}
        record = _parse_row(number, row, options)
        model = str(row["model"]).strip()
        key = (model, record.item_id, record.epoch)
        if key in seen:
            raise ItemSourceError(
                f"row {number}: duplicate (model, item_id, epoch) {key}, first at row {seen[key]}"
            )
        seen[key] = number
        by_model.setdefault(model, []).append(record)
    if not by_model:
        raise ItemSourceError(f"{path}: no data rows")
    runs = []
    for model, records in sorted(by_model.items()):
        epochs = max(r.epoch for r in records)
        items = {r.item_id for r in records}
        runs.append(
            _store_run(
                store,
                _Batch(
                    model=model,
                    source="csv",
                    records=records,
                    epochs=epochs,
                    planned=len(items) * epochs,
                    extra={
                        "file": str(path),
                        "columns": dict(options.columns),
                        "epoch_base": options.epoch_base,
                    },
                ),
                root=root,
                threshold=options.error_threshold,
            )
        )
    return runs
