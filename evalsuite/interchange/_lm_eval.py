"""Reading lm-evaluation-harness ``--log_samples`` output: one task's samples and its results.

lm-eval writes, per run, ``results_<date>.json`` (every task's aggregate metrics, their
direction in ``higher_is_better``, the model in ``model_name`` / ``config.model_args``) and,
per task, ``samples_<task>_<date>.jsonl`` (one line per document: ``doc_id``, ``doc``,
``filter``, ``filtered_resps``, the ``metrics`` it scored and each metric's value). The
results file of the same date is read beside the samples: it gives the model, the metric's
direction and the aggregate the samples must average to (docs/interchange.md, "lm-eval").
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.interchange._foreign import ForeignRows, check_mean

__all__ = ["read_lm_eval"]

_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T[0-9\-.:]+)\.jsonl$")
ID_FIELDS = ("id", "item_id", "task_id", "question_id", "sample_id")
"""Fields of a sample's ``doc`` that may hold the dataset's own id (tried with ``--suite``)."""


def _samples_file(path: Path) -> Path:
    if path.is_file():
        if not _SAMPLES.match(path.name):
            raise UsageError(
                f"{path}: not an lm-eval samples file; --format lm-eval reads "
                "samples_<task>_<date>.jsonl (lm_eval --log_samples), with the run's "
                "results_<date>.json beside it"
            )
        return path
    if not path.exists():
        raise NotFoundError(f"{path} does not exist (expected an lm-eval samples file)")
    found = sorted(p for p in path.rglob("samples_*.jsonl") if _SAMPLES.match(p.name))
    if len(found) != 1:
        listed = ", ".join(p.name for p in found[:10]) or "none"
        raise UsageError(
            f"{path}: --format lm-eval ingests one task's samples file at a time (a run per "
            f"task); found {len(found)} ({listed}). Name the samples_<task>_<date>.jsonl file"
        )
    return found[0]


def _results(samples: Path, date: str) -> tuple[Path, dict[str, Any]]:
    results = samples.with_name(f"results_{date}.json")
    if not results.is_file():
        raise NotFoundError(
            f"{samples}: its results file {results.name} is not beside it; lm-eval writes "
            "both into one folder. It gives the model, each metric's direction "
            "(higher_is_better) and the aggregate the samples are checked against"
        )
    try:
        data = json.loads(results.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ItemSourceError(f"{results}: not a readable lm-eval results file ({exc})") from None
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict):
        raise ItemSourceError(
            f"{results}: no 'results' object; not an lm-eval results_<date>.json file"
        )
    return results, data


def _model(results: Path, data: dict[str, Any]) -> str:
    config = data.get("config") or {}
    args = config.get("model_args") or ""
    if isinstance(args, dict):
        pretrained = args.get("pretrained") or args.get("model")
    else:
        pairs = dict(p.split("=", 1) for p in str(args).split(",") if "=" in p)
        pretrained = pairs.get("pretrained") or pairs.get("model")
    model = data.get("model_name") or pretrained
    if not model:
        raise ItemSourceError(
            f"{results}: neither model_name nor config.model_args pretrained=... names the "
            "model; the run cannot be attributed"
        )
    return str(model)


def _lines(samples: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    with samples.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ItemSourceError(f"{samples} line {number}: not JSON ({exc.msg})") from None
            if not isinstance(row, dict) or "doc_id" not in row:
                raise ItemSourceError(
                    f"{samples} line {number}: no doc_id; an lm-eval sample line has doc_id, "
                    "doc, filter, filtered_resps, metrics and each metric's value"
                )
            rows.append((number, row))
    if not rows:
        raise ItemSourceError(f"{samples}: no samples")
    return rows


def _metric(samples: Path, first: dict[str, Any], metric: str | None) -> tuple[str, str]:
    """(metric, filter): ``--metric NAME[,FILTER]``, else the first sample's first metric."""
    if metric is not None:
        name, _, filter_name = metric.partition(",")
        return name, filter_name or str(first.get("filter", "none"))
    metrics = first.get("metrics")
    if not isinstance(metrics, list) or not metrics:
        raise ItemSourceError(
            f"{samples} line 1: no 'metrics' list naming the sample's metrics; pass "
            "--metric NAME (e.g. --metric acc)"
        )
    return str(metrics[0]), str(first.get("filter", "none"))


def _direction(results: Path, data: dict[str, Any], task: str, metric: str) -> None:
    stated = (data.get("higher_is_better") or {}).get(task, {}).get(metric)
    if stated is True:
        return
    if stated is False:
        raise ItemSourceError(
            f"{results}: higher_is_better.{task}.{metric} is false; evalsuite scores are in "
            "[0, 1] with higher better. Ingest a metric where higher is better (--metric)"
        )
    raise ItemSourceError(
        f"{results}: higher_is_better.{task}.{metric} is missing, so the direction of "
        f"{metric} is unknown; nothing was stored. Ingest the results file lm-eval wrote "
        "(it states every metric's direction), or a metric whose direction it states"
    )


def _score(samples: Path, number: int, row: dict[str, Any], metric: str) -> float:
    value = row.get(metric)
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float):
        return float(value)
    raise ItemSourceError(
        f"{samples} line {number}: {metric} is {value!r}, not a number; the sample has "
        f"{sorted(k for k, v in row.items() if isinstance(v, int | float))} as numbers "
        "(pick one with --metric)"
    )


def _ids(row: dict[str, Any]) -> tuple[str, ...]:
    doc: dict[str, Any] = row["doc"] if isinstance(row.get("doc"), dict) else {}
    found = [str(row["doc_id"])]
    found += [str(doc[f]) for f in ID_FIELDS if isinstance(doc.get(f), str | int)]
    return tuple(dict.fromkeys(found))


def read_lm_eval(path: Path, *, metric: str | None = None) -> ForeignRows:
    """One task's lm-eval samples (a file, or a folder holding one) as `ForeignRows`.

    Each document is one attempt, its item the ``doc_id`` (or, with ``--suite``, a ``doc``
    id field that is an item of the suite).

    Raises:
        UsageError: not a samples file, or a folder of several; NotFoundError: the results
            file is not beside it; ItemSourceError: a metric of unknown or lower-is-better
            direction, a non-numeric score, or samples whose mean is not the results'
            aggregate (the field named); nothing is stored.
    """
    samples = _samples_file(path)
    match = _SAMPLES.match(samples.name)
    assert match is not None  # noqa: S101 (checked by _samples_file)
    task, date = match["task"], match["date"]
    results, data = _results(samples, date)
    if task not in data["results"]:
        raise ItemSourceError(
            f"{results}: results has no task {task!r} (it has {sorted(data['results'])}); "
            f"{samples.name} is not from this run"
        )
    model = _model(results, data)
    lines = _lines(samples)
    name, filter_name = _metric(samples, lines[0][1], metric)
    _direction(results, data, task, name)
    rows = ForeignRows("lm-eval", path)
    scores, items = [], []
    for number, row in lines:
        if str(row.get("filter", "none")) != filter_name:
            continue
        score = _score(samples, number, row, name)
        ids = _ids(row)
        rows.add(model, ids, score, f"{samples.name} line {number}")
        scores.append(score)
        items.append(ids[0])
    key = f"{name},{filter_name}"
    declared = data["results"][task].get(key)
    if not isinstance(declared, int | float):
        raise ItemSourceError(
            f"{results}: results.{task} has no {key!r} value to check the samples against "
            f"(it has {sorted(data['results'][task])}); pick a metric it reports (--metric)"
        )
    check_mean(
        float(declared), scores, items, where=str(results), field_name=f"results.{task}.{key}"
    )
    rows.extra[model] = {
        "file": str(samples),
        "results": str(results),
        "format": "lm-eval",
        "task": task,
        "metric": key,
        "lm_eval_version": data.get("lm_eval_version"),
        "git_hash": data.get("git_hash"),
    }
    return rows
