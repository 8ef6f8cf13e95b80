"""Every Eval Ever aggregates as scores from elsewhere: where means suffice.

`validity report --scores` correlates model means with deployment results; it needs no items,
so an aggregate record without per-sample results is usable there (ingest, which stores
attempts per item, refuses it). Each record is validated by the package's validator; each
of its results becomes a predictor named by its ``evaluation_name`` (and result id when the
record has several results of one name), with ``standard_error.value`` as its se.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from evalsuite.errors import ItemSourceError, NotFoundError
from evalsuite.interchange._eee_package import eee_validator

__all__ = ["eee_aggregate_rows", "eee_scores"]


def _records(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*.json") if p.is_file())
        if not found:
            raise NotFoundError(f"no Every Eval Ever aggregate (.json) files in {path}")
        return found
    if not path.is_file():
        raise NotFoundError(f"{path} does not exist")
    return [path]


def _rows(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    results = data["evaluation_results"]
    names = [str(r["evaluation_name"]) for r in results]
    rows = []
    for index, result in enumerate(results):
        config = result["metric_config"]
        if config.get("lower_is_better") is not False:
            raise ItemSourceError(
                f"{path}: evaluation_results[{index}].metric_config.lower_is_better is "
                f"{config.get('lower_is_better')!r}; validity predictors are scores where "
                "higher is better. Drop that result from the record, or pass a CSV of the "
                "scores you mean (--scores FILE.csv)"
            )
        name = names[index]
        if names.count(name) > 1:
            name = f"{name}/{result.get('evaluation_result_id') or index}"
        details = result["score_details"]
        error = ((details.get("uncertainty") or {}).get("standard_error") or {}).get("value")
        rows.append(
            {
                "model": str(data["model_info"]["id"]),
                "predictor": name,
                "score": float(details["score"]),
                "se": float(error) if isinstance(error, int | float) else math.nan,
            }
        )
    return rows


def eee_scores(path: Path) -> pd.DataFrame:
    """model, predictor, score, se of every result of the records at `path` (file or folder).

    Raises:
        UsageError: the package is missing; NotFoundError: no record; ItemSourceError: a
            schema violation (the field named) or a result where lower is better.
    """
    validator = eee_validator()
    rows: list[dict[str, Any]] = []
    for record in _records(path):
        report = validator.validate_aggregate(record)
        if not report.valid:
            problems = "\n  ".join(f"{e.get('loc')}: {e.get('msg')}" for e in report.errors[:10])
            raise ItemSourceError(
                f"{record}: not a valid Every Eval Ever aggregate record:\n  {problems}"
            )
        rows += _rows(record, json.loads(record.read_text(encoding="utf-8")))
    frame = pd.DataFrame(rows, columns=["model", "predictor", "score", "se"])
    twice = frame[frame.duplicated(["model", "predictor"], keep=False)]
    if not twice.empty:
        first = twice.iloc[0]
        raise ItemSourceError(
            f"{path}: two records give {first['model']!r} a score on {first['predictor']!r}; "
            "keep one record per model and evaluation"
        )
    return frame


def eee_aggregate_rows(path: Path) -> tuple[list[dict[str, Any]], list[Path]]:
    """The results of the records at `path` that hold no per-sample results, as store rows.

    Each row: model, benchmark (the predictor name), score, se, format ``eee``, source (the
    file), detail (evaluation id, schema version, source name, the result's metric id) and a
    fingerprint (sha256 of the record's bytes with the benchmark name), so that storing the
    same record twice adds nothing.

    Returns:
        (rows, records with samples): the second lists the records that do hold samples
        (those are runs: `read_eee`).

    Raises:
        UsageError: the package is missing; NotFoundError: no record; ItemSourceError: a
            schema violation (the field named) or a result where lower is better.
    """
    validator = eee_validator()
    rows: list[dict[str, Any]] = []
    with_samples: list[Path] = []
    for record in _records(path):
        raw = record.read_bytes()
        try:
            data = json.loads(raw)
        except ValueError:
            data = None  # the validator names what is wrong with it
        if isinstance(data, dict) and data.get("detailed_evaluation_results") is not None:
            with_samples.append(record)  # a run: `read_eee` validates it, once
            continue
        report = validator.validate_aggregate(record)
        if not report.valid or not isinstance(data, dict):
            problems = "\n  ".join(f"{e.get('loc')}: {e.get('msg')}" for e in report.errors[:10])
            raise ItemSourceError(
                f"{record}: not a valid Every Eval Ever aggregate record; nothing was "
                f"stored:\n  {problems}"
            )
        digest = hashlib.sha256(raw).hexdigest()
        for row, result in zip(_rows(record, data), data["evaluation_results"], strict=True):
            se = row["se"]
            rows.append(
                {
                    "model": row["model"],
                    "benchmark": row["predictor"],
                    "score": row["score"],
                    "se": None if math.isnan(se) else se,
                    "format": "eee",
                    "source": str(record),
                    "detail": {
                        "evaluation_id": data.get("evaluation_id"),
                        "schema_version": data.get("schema_version"),
                        "source_name": (data.get("source_metadata") or {}).get("source_name"),
                        "evaluation_result_id": result.get("evaluation_result_id"),
                        "record_sha256": digest,
                    },
                    "fingerprint": "sha256:"
                    + hashlib.sha256(f"{digest}\n{row['predictor']}".encode()).hexdigest(),
                }
            )
    return rows, with_samples
