"""`evalsuite ingest`: results produced elsewhere become runs like any other.

* ``--format inspect``: an inspect log file (``.json`` or ``.eval``) or a directory of them;
  one run per log, one attempt per (sample, epoch), classified by `_outcomes` exactly as a
  live run is. Logs written by `evalsuite run` keep their item ids and epochs.
* ``--format csv``: the contract in `_ingest_csv` (columns ``model, item_id, epoch, score``
  and optional ``stratum``, ``outcome``, ``limit_type``); one run per model.

``--suite SUITE@X.Y.Z`` attaches either to a frozen manifest (`attach_to_manifest`): item ids
are checked against it, strata, clusters and item hashes come from it, the run's split is its
items' split, and the items of that split that are absent are planned and counted as not run
(docs/design/foreign-tasks.md, "Ingest into a frozen suite").

Every source is read and checked in full before anything is stored. Each run is stored in
one transaction with its content fingerprint; content already stored is skipped and reported
(``again=True`` stores it anyway). A run with too many harness errors is stored and flagged
invalid, exactly as `evalsuite run` does (docs/design/ingest.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import pandas as pd
from inspect_ai.log import EvalLog, list_eval_logs, read_eval_log

from evalsuite._core.layout import Layout
from evalsuite.errors import HoldoutAccessError, ItemSourceError, NotFoundError
from evalsuite.manifest import Manifest, frozen_versions, list_suite_names, load_manifest
from evalsuite.run._episode import EPISODE_KEY
from evalsuite.run._ingest_csv import CsvOptions, read_results_csv
from evalsuite.run._outcomes import classify_sample
from evalsuite.run._provenance import collect_provenance
from evalsuite.run._runner import _new_run_id
from evalsuite.run._scores import ScoreRule
from evalsuite.store import AttemptRecord, RunRecord, Store, run_health

__all__ = [
    "Attached",
    "CsvOptions",
    "IngestReport",
    "IngestedRun",
    "SkippedRun",
    "attach_to_manifest",
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
    split: str | None = None
    """Set when the batch was attached with ``--suite`` (else found from its items)."""
    left_out: int = 0


@dataclass(frozen=True, slots=True)
class Attached:
    """Attempts attached to a frozen manifest (`attach_to_manifest`)."""

    records: list[AttemptRecord]
    """The attempts with the manifest's stratum, cluster and item hash."""
    split: str
    planned: int
    """Every item of the split × epochs: an absent (item, epoch) is counted as not run."""
    not_run: int
    left_out: int = 0
    """Attempts of the other split's items, left out because a split was asked for."""


_SHOWN = 10


def _some(ids: list[str]) -> str:
    shown = ", ".join(repr(i) for i in ids[:_SHOWN])
    return shown + (f" and {len(ids) - _SHOWN} more" if len(ids) > _SHOWN else "")


def attach_to_manifest(
    records: list[AttemptRecord],
    manifest: Manifest,
    *,
    epochs: int,
    origin: str,
    split: str | None = None,
) -> Attached:
    """Attach ingested attempts to a frozen manifest (``ingest --suite``).

    Args:
        records: The attempts as parsed from the log or CSV.
        manifest: The frozen manifest they are results of.
        epochs: The epochs each item was meant to have (the log's or the largest found).
        origin: The file they came from (for messages).
        split: Keep only the attempts of this split's items (``ingest --split dev``: a plain
            ``inspect eval`` of a task runs all its samples); the others are counted in
            ``left_out`` and never stored. Default: the attempts must all be of one split.

    Raises:
        ItemSourceError: an item id is not in the manifest, the attempts span both splits
            and no split was given, or a stratum given by the file disagrees with the
            manifest's.
        HoldoutAccessError: the attempts are of holdout items (only `evalsuite run --split
            holdout` looks at the holdout, so that the ledger counts each look).
    """
    items = {i.id: i for i in manifest.items}
    unknown = sorted({r.item_id for r in records} - set(items))
    if unknown:
        raise ItemSourceError(
            f"{origin}: {len(unknown)} item id(s) are not items of {manifest.ref}: "
            f"{_some(unknown)}. --suite attaches results of the suite's own items only; check "
            f"that the file holds results of {manifest.ref} (the ids listed in "
            f"manifests/{manifest.suite}/{manifest.version}.json), or ingest it without --suite"
        )
    left_out = 0
    if split is not None and split != "holdout":
        kept = [r for r in records if items[r.item_id].split == split]
        left_out = len(records) - len(kept)
        if not kept:
            raise ItemSourceError(
                f"{origin}: none of its {len(records)} attempts is of a {split} item of "
                f"{manifest.ref}; nothing to attach"
            )
        records = kept
    splits = sorted({items[r.item_id].split for r in records})
    if len(splits) > 1:
        counts = {s: sum(1 for r in records if items[r.item_id].split == s) for s in splits}
        raise ItemSourceError(
            f"{origin}: the results span the dev ({counts['dev']} attempts) and holdout "
            f"({counts['holdout']} attempts) items of {manifest.ref}; a run measures one "
            "split. Pass --split dev to attach the dev items' results (the holdout ones are "
            "left out, counted, and never stored)"
        )
    split = splits[0]
    if split == "holdout":
        raise HoldoutAccessError(
            f"{origin}: the results are of holdout items of {manifest.ref}. The holdout is "
            "looked at only by `evalsuite run --split holdout`, which the ledger counts; "
            "results made elsewhere cannot be attached to it. Ingest dev-split results"
        )
    clashes = sorted(
        {r.item_id for r in records if r.stratum != "all" and r.stratum != items[r.item_id].stratum}
    )
    if clashes:
        first = items[clashes[0]]
        wrong = next(r.stratum for r in records if r.item_id == first.id)
        raise ItemSourceError(
            f"{origin}: the stratum given for {len(clashes)} item(s) ({_some(clashes)}) is "
            f"not the one {manifest.ref} froze (e.g. {first.id!r}: {wrong!r} in the file, "
            f"{first.stratum!r} in the manifest). With --suite the strata come from the "
            "manifest: drop the stratum column (or --ignore-column it)"
        )
    attached = [
        replace(
            r,
            stratum=items[r.item_id].stratum,
            cluster=items[r.item_id].cluster,
            item_hash=items[r.item_id].hash,
        )
        for r in records
    ]
    planned = len(manifest.items_by_split(split)) * epochs
    return Attached(attached, split, planned, max(planned - len(attached), 0), left_out)


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
        split = batch.split or _split_of(manifest, records)
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
            split=split,
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
                suite=manifest.ref if manifest else None,
                split=split,
                left_out=batch.left_out,
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


def _attempts_from_log(
    log: EvalLog, manifest: Manifest | None, scoring: Manifest | None = None
) -> list[AttemptRecord]:
    """One attempt per sample; scores picked by the family's declaration in `scoring`.

    `scoring` (the linked manifest, or the one ``--suite`` names) says which score counts
    for each item's family (a dict value, several scorers; docs/design/scorers.md), as a
    live run of the suite would.
    """
    items = {i.id: i for i in manifest.items} if manifest else {}
    rules: dict[str, ScoreRule] = {}
    families: dict[str, str] = {}
    if scoring is not None:
        rules = {f.name: ScoreRule.of_family(f, scoring.suite) for f in scoring.families}
        families = {i.id: i.family for i in scoring.items}
    records = []
    for sample in log.samples or []:
        item_id, epoch, seed = _sample_key(sample)
        family = families.get(item_id)
        classified = classify_sample(sample, rule=rules.get(family) if family else None)
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
    suite: Manifest | None = None,
    split: str | None = None,
) -> IngestReport:
    """Store every inspect log under `path` as a run (one per log).

    A log written by `evalsuite run` carries the manifest hash as its task version; when that
    manifest is frozen in this project, the run is linked to it (suite, version, item hashes,
    strata and weights), so it compares with live runs on the same manifest. Any other log
    (a plain ``inspect eval`` of the suite's task) is linked to `suite` when given, through
    `attach_to_manifest` (`split` keeps one split's items). Every log is read before any
    is stored; a log whose content is already stored is skipped (see the module).
    """
    batches = []
    layout = Layout(root)
    for log_path in _log_paths(path):
        try:
            log = read_eval_log(str(log_path))
        except Exception as exc:
            raise ItemSourceError(f"{log_path}: not a readable inspect log ({exc})") from None
        manifest = _find_manifest(layout, str(log.eval.task_version))
        if suite is not None and manifest is not None and manifest.ref != suite.ref:
            raise ItemSourceError(
                f"{log_path}: evalsuite wrote this log for {manifest.ref}, not {suite.ref}; "
                "it attaches itself to its own manifest. Drop --suite, or give "
                f"--suite {manifest.ref}"
            )
        records = _attempts_from_log(log, manifest, manifest or suite)
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
        kept_split, left_out = None, 0
        if suite is not None and manifest is None:
            epochs = max(log.eval.config.epochs or epochs, epochs)
            attached = attach_to_manifest(
                records, suite, epochs=epochs, origin=str(log_path), split=split
            )
            records, planned, manifest = attached.records, attached.planned, suite
            kept_split, left_out = attached.split, attached.left_out
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
                    **({"attached": suite.ref} if kept_split is not None and suite else {}),
                    **({"left_out": left_out} if left_out else {}),
                },
                identity={"eval_id": log.eval.eval_id},
                manifest=manifest,
                split=kept_split,
                left_out=left_out,
            )
        )
    return _store_batches(store, batches, root=root, threshold=error_threshold, again=again)


# CSV -----------------------------------------------------------------------------------


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
    """Store a results CSV as one run per model (the contract: `_ingest_csv.CSV_COLUMNS`).

    The whole file is checked first; every bad row is named by its line and nothing is
    stored unless all rows are valid. With `suite`, each model's attempts are attached to
    that frozen manifest (`attach_to_manifest`) before anything is stored.
    """
    batches = []
    for model, parsed in read_results_csv(path, options).items():
        records = parsed
        epochs = max(r.epoch for r in records)
        items = {r.item_id for r in records}
        planned = len(items) * epochs
        kept_split, left_out = None, 0
        if suite is not None:
            attached = attach_to_manifest(
                records, suite, epochs=epochs, origin=str(path), split=split
            )
            records, planned = attached.records, attached.planned
            kept_split, left_out = attached.split, attached.left_out
        batches.append(
            _Batch(
                model=model,
                source="csv",
                origin=str(path),
                records=records,
                epochs=epochs,
                planned=planned,
                extra={
                    "file": str(path),
                    "columns": dict(options.columns),
                    "ignored_columns": list(options.ignore),
                    "epoch_base": options.epoch_base,
                    **({"attached": suite.ref} if suite else {}),
                    **({"left_out": left_out} if left_out else {}),
                },
                manifest=suite,
                split=kept_split,
                left_out=left_out,
            )
        )
    return _store_batches(store, batches, root=root, threshold=options.error_threshold, again=again)
