"""`evalsuite export`: stored runs as Every Eval Ever records, or as results tables.

``--format eee`` writes, per run, an aggregate record in the package's datastore layout
(``DIR/data/<suite>/<developer>/<model>/<uuid>.json``) with the run's mean, its interval and
pass@k / pass^k (the project's own analyses, `evalsuite.analyse.score_run`) in the uncertainty
fields, and the suite's name, version and manifest hash; beside it the per-attempt sidecar
(``<uuid>_samples.jsonl``) for dev runs. Both are validated by the package's own validator
before the command succeeds. ``--format csv`` / ``parquet`` write the results-table contract
that ``ingest`` reads. A holdout run exports its aggregate only, unless
``--include-holdout-samples`` is given: then each run's export is recorded in the suite's
holdout ledger before anything is written. Item text is never exported: evalsuite stores
results, not items (docs/interchange.md, "evalsuite -> Every Eval Ever").
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from evalsuite.errors import EvalsuiteError, UsageError
from evalsuite.interchange._eee_package import eee_schema_version, eee_validator, repo_file_path

if TYPE_CHECKING:
    from evalsuite.analyse import Estimate, RunScore
    from evalsuite.store import RunRecord, Store

__all__ = ["TABLE_COLUMNS", "ExportRequest", "ExportedRun", "export_runs"]

ExportFormat = Literal["eee", "csv", "parquet"]
TABLE_COLUMNS = ("model", "item_id", "epoch", "score", "stratum", "outcome", "limit_type")
"""The results-table contract `ingest --format csv` reads, in its order."""
PRIMARY = "score"
"""The ``evaluation_result_id`` of the run's mean (the one the samples belong to)."""


@dataclass(frozen=True, slots=True)
class ExportRequest:
    """What `evalsuite export` is asked to write."""

    run_ids: tuple[str, ...]
    format: ExportFormat
    out: Path
    include_holdout_samples: bool = False
    level: float = 0.95
    seed: int = 0


@dataclass(frozen=True, slots=True)
class ExportedRun:
    """One run written by an export."""

    run_id: str
    model: str
    split: str | None
    files: tuple[str, ...]
    samples: bool
    """Per-attempt rows were written (False: a holdout run's aggregate only)."""
    ledgered: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The `export --json` entry."""
        return {
            "run_id": self.run_id,
            "model": self.model,
            "split": self.split,
            "files": list(self.files),
            "samples": self.samples,
            "ledgered": self.ledgered,
        }


def _finite(value: float) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


def _strings(mapping: dict[str, Any]) -> dict[str, str]:
    return {k: str(v) for k, v in mapping.items() if v is not None}


def _uncertainty(estimate: Estimate) -> dict[str, Any]:
    out: dict[str, Any] = {"num_samples": int(estimate.n_items)}
    se = _finite(estimate.se)
    if se is not None:
        out["standard_error"] = {"value": se, "method": f"evalsuite {estimate.variance}"}
    low, high = _finite(estimate.ci.low), _finite(estimate.ci.high)
    if low is not None and high is not None:
        out["confidence_interval"] = {
            "lower": low,
            "upper": high,
            "confidence_level": float(estimate.level),
            "method": f"evalsuite {estimate.method} (item-clustered: items are the unit)",
        }
    return out


def _metric(
    name: str, description: str, *, k: int | None = None, details: dict[str, Any] | None = None
) -> dict[str, Any]:
    config: dict[str, Any] = {
        "evaluation_description": description,
        "metric_id": f"evalsuite.{name}",
        "metric_name": name,
        "lower_is_better": False,
        "score_type": "continuous",
        "min_score": 0.0,
        "max_score": 1.0,
    }
    if k is not None:
        config["metric_parameters"] = {"k": k}
    if details:
        config["additional_details"] = _strings(details)
    return config


def _results(record: RunRecord, estimates: RunScore, source: dict[str, Any]) -> list[Any]:
    name = f"{record.suite}@{record.version}" if record.suite else f"evalsuite run {record.run_id}"
    common = {"evaluation_name": name, "source_data": source}
    if record.started_at:
        common["evaluation_timestamp"] = record.started_at
    overall = estimates.overall
    results: list[dict[str, Any]] = [
        {
            "evaluation_result_id": PRIMARY,
            **common,
            "metric_config": _metric(
                "mean",
                "mean of item means (limits score 0, harness errors excluded)",
                details={"interval_method": overall.method, "variance": overall.variance},
            ),
            "score_details": {
                "score": float(overall.mean),
                "details": _strings(
                    {
                        "n_items": overall.n_items,
                        "n_clusters": overall.n_clusters,
                        "epochs": record.epochs,
                        "planned": record.planned,
                    }
                ),
                "uncertainty": _uncertainty(overall),
            },
        }
    ]
    for pk in estimates.pass_k:
        for label, estimate, text in (
            (f"pass@{pk.k}", pk.pass_at_k, "unbiased pass@k (Chen et al. 2021)"),
            (f"pass^{pk.k}", pk.pass_hat_k, "unbiased pass^k (Yao et al. 2024)"),
        ):
            if not math.isfinite(estimate.mean):
                continue
            results.append(
                {
                    "evaluation_result_id": label,
                    **common,
                    "metric_config": _metric(label.replace(str(pk.k), "k"), text, k=pk.k),
                    "score_details": {
                        "score": float(estimate.mean),
                        "uncertainty": _uncertainty(estimate),
                    },
                }
            )
    return results


def _sample(row: Any, *, evaluation_id: str, model: str, name: str, version: str) -> dict[str, Any]:
    score = None if pd.isna(row.score) else float(row.score)
    meta = {
        "evalsuite_item_id": str(row.item_id),
        "epoch": int(row.epoch),
        "evalsuite_outcome": str(row.outcome),
        "evalsuite_stratum": str(row.stratum),
    }
    if isinstance(row.limit_type, str) and row.limit_type:
        meta["evalsuite_limit_type"] = row.limit_type
    if isinstance(row.cluster, str) and row.cluster:
        meta["evalsuite_cluster"] = row.cluster
    sample: dict[str, Any] = {
        "schema_version": version,
        "evaluation_id": evaluation_id,
        "model_id": model,
        "evaluation_name": name,
        "evaluation_result_id": PRIMARY,
        "sample_id": str(row.item_id),
        "interaction_type": "single_turn",
        # item text never leaves evalsuite's store (results, not items): raw input is empty
        "input": {"raw": "", "reference": []},
        "output": {"raw": []},
        "answer_attribution": [],
        "evaluation": {"score": score if score is not None else 0.0, "is_correct": score == 1.0},
        "metadata": meta,
    }
    if isinstance(row.item_hash, str) and row.item_hash:
        sample["sample_hash"] = row.item_hash
    if row.outcome == "harness_error":
        sample["error"] = "harness_error (excluded from the score; its 0.0 is a placeholder)"
    return sample


def _file_uuid(run_id: str) -> str:
    """A UUID4 of the run id: exporting a run again writes the same paths."""
    return str(uuid.UUID(bytes=hashlib.sha256(run_id.encode()).digest()[:16], version=4))


def _validate(out: Path, repo_paths: list[str]) -> None:
    validator = eee_validator()
    available = frozenset(repo_paths)

    def read(path: str) -> str:
        return (out / path).read_text(encoding="utf-8")

    for path in repo_paths:
        report = validator.validate_file(
            out / path,
            repo_path=path,
            available_files=available,
            read_repo_file=read,
            run_semantic_checks=True,
        )
        if not report.valid:
            problems = "; ".join(f"{e.get('loc')}: {e.get('msg')}" for e in report.errors[:5])
            raise EvalsuiteError(
                f"{out / path}: the Every Eval Ever validator refuses evalsuite's export "
                f"({problems}); this is a bug in evalsuite's export, please report it"
            )


def _write_eee(
    record: RunRecord, attempts: pd.DataFrame, estimates: RunScore, out: Path, samples: bool
) -> list[str]:
    version = eee_schema_version()
    now = datetime.now(UTC)
    from evalsuite._core.version import __version__

    name = f"{record.suite}@{record.version}" if record.suite else f"evalsuite run {record.run_id}"
    evaluation_id = f"{name}/{record.model}/{record.run_id}"
    source = {
        "dataset_name": record.suite or "evalsuite results",
        "source_type": "other",
        "additional_details": _strings(
            {
                "evalsuite_suite": record.suite,
                "evalsuite_version": record.version,
                "evalsuite_manifest_hash": record.manifest_hash,
                "evalsuite_split": record.split,
                "evalsuite_run_id": record.run_id,
                "evalsuite_run_source": record.source,
            }
        ),
    }
    developer = record.model.split("/")[0] if "/" in record.model else "unattributed"
    file_uuid = _file_uuid(record.run_id)
    collection = record.suite or "evalsuite"
    aggregate_path = repo_file_path(collection, record.model, developer, f"{file_uuid}.json")
    sidecar_path = aggregate_path[: -len(".json")] + "_samples.jsonl"
    aggregate: dict[str, Any] = {
        "schema_version": version,
        "evaluation_id": evaluation_id,
        "evaluation_timestamp": record.started_at,
        "retrieved_timestamp": str(int(now.timestamp())),
        "source_metadata": {
            "source_name": "evalsuite",
            "source_type": "evaluation_run",
            "source_organization_name": "evalsuite",
            "evaluator_relationship": "other",
        },
        "eval_library": {"name": "evalsuite", "version": __version__},
        "model_info": {
            "name": record.model,
            "id": record.model,
            "developer": developer,
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": _results(record, estimates, source),
    }
    target = out / aggregate_path
    target.parent.mkdir(parents=True, exist_ok=True)
    written = [aggregate_path]
    if samples:
        lines = [
            json.dumps(
                _sample(
                    row, evaluation_id=evaluation_id, model=record.model, name=name, version=version
                ),
                allow_nan=False,
                sort_keys=True,
            )
            for row in attempts.itertuples(index=False)
        ]
        content = ("\n".join(lines) + "\n").encode("utf-8")
        (out / sidecar_path).write_bytes(content)
        aggregate["detailed_evaluation_results"] = {
            "format": "jsonl",
            "file_path": sidecar_path,
            "hash_algorithm": "sha256",
            "checksum": hashlib.sha256(content).hexdigest(),
            "total_rows": len(lines),
        }
        written.append(sidecar_path)
    target.write_text(json.dumps(aggregate, indent=2, allow_nan=False) + "\n", encoding="utf-8")
    _validate(out, written)
    return [str(out / p) for p in written]


def _write_table(record: RunRecord, attempts: pd.DataFrame, out: Path, fmt: str) -> list[str]:
    frame = pd.DataFrame(
        {
            "model": record.model,
            "item_id": attempts["item_id"].astype(str),
            "epoch": attempts["epoch"].astype(int),
            "score": attempts["score"].astype(float),
            "stratum": attempts["stratum"].astype(str),
            "outcome": attempts["outcome"].astype(str),
            "limit_type": attempts["limit_type"].where(attempts["limit_type"].notna(), ""),
        },
        columns=list(TABLE_COLUMNS),
    )
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{record.run_id}.{fmt}"
    if fmt == "csv":
        frame["score"] = [("" if pd.isna(s) else repr(float(s))) for s in frame["score"]]
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, index=False)
    return [str(path)]


def export_runs(
    request: ExportRequest,
    *,
    store: Store,
    ledger: Callable[[RunRecord], None] | None = None,
) -> list[ExportedRun]:
    """Write every run of `request` (all checked before the first file is written).

    Args:
        request: The runs, the format and where.
        store: The results store.
        ledger: Records a holdout run's samples export in its suite's ledger (called before
            that run's files are written); required with ``include_holdout_samples``.

    Raises:
        UsageError: a holdout run as a table without ``--include-holdout-samples``, or no
            runs; NotFoundError: an unknown run; every refusal leaves nothing written.
    """
    from evalsuite.analyse import score_run

    if not request.run_ids:
        raise UsageError("export needs at least one RUN id (evalsuite runs lists them)")
    records = [store.get_run(run_id) for run_id in request.run_ids]
    for record in records:
        holdout = record.split == "holdout"
        if holdout and request.format != "eee" and not request.include_holdout_samples:
            raise UsageError(
                f"run {record.run_id} is a holdout run: a {request.format} table is its "
                "per-item results, which leave evalsuite only with --include-holdout-samples "
                "(recorded in the holdout ledger). Export its aggregate with --format eee, "
                "or pass --include-holdout-samples"
            )
    if request.format == "eee":
        eee_schema_version()  # the package is there before anything is written
    read = []  # every run read and scored before the first file is written
    for record in records:
        attempts = store.attempts(record.run_id)
        estimates = None
        if request.format == "eee":
            estimates = score_run(
                attempts,
                weights=record.weights or None,
                planned=record.planned,
                level=request.level,
                rng=np.random.default_rng(request.seed),
            )
            if not math.isfinite(estimates.overall.mean):
                raise UsageError(
                    f"run {record.run_id} has no usable attempt "
                    f"({estimates.overall.note or 'no mean'}): an Every Eval Ever record needs "
                    "a score; nothing was written. Export it as a table (--format csv) to see "
                    "its attempts"
                )
        read.append((record, attempts, estimates))
    exported = []
    for record, attempts, estimates in read:
        holdout = record.split == "holdout"
        samples = not holdout or request.include_holdout_samples
        ledgered = False
        if holdout and samples:
            if ledger is None:
                raise UsageError("a holdout run's samples export needs the holdout ledger")
            ledger(record)
            ledgered = True
        if estimates is not None:
            files = _write_eee(record, attempts, estimates, request.out, samples)
        else:
            files = _write_table(record, attempts, request.out, request.format)
        exported.append(
            ExportedRun(record.run_id, record.model, record.split, tuple(files), samples, ledgered)
        )
    return exported
