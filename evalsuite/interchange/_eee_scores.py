"""Every Eval Ever aggregates as scores from elsewhere: where means suffice.

`validity report --scores` correlates model means with deployment results; it needs no items,
so an aggregate record without per-sample results is usable there (ingest, which stores
attempts per item, refuses it). Each record is validated by the package's validator; each
of its results becomes a predictor named by its ``evaluation_name`` (and result id when the
record has several results of one name), with ``standard_error.value`` as its se.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pandas as pd

from evalsuite.errors import ItemSourceError, NotFoundError
from evalsuite.interchange._eee_package import eee_validator

__all__ = ["eee_scores"]


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
