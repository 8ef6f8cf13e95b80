"""Reading Every Eval Ever records: an aggregate JSON with its per-sample JSONL sidecar.

Each aggregate is validated by the `every-eval-ever` package's own validator, then checked
against its sidecar (checksum, row count, evaluation and model ids) and its samples against
its aggregate score; any disagreement refuses the whole ingest, the field named
(docs/interchange.md, "Every Eval Ever -> evalsuite").
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path, PurePosixPath
from typing import Any

from evalsuite.errors import ItemSourceError, NotFoundError, UsageError
from evalsuite.interchange._eee_package import eee_validator
from evalsuite.interchange._foreign import ForeignRows, check_mean

__all__ = ["EVALSUITE_KEYS", "read_eee"]

EVALSUITE_KEYS = ("evalsuite_suite", "evalsuite_version", "evalsuite_manifest_hash")
"""`source_data.additional_details` keys an evalsuite export writes (the frozen suite)."""

_SHOWN = 10


def _aggregates(path: Path) -> list[Path]:
    if path.is_dir():
        found = sorted(p for p in path.rglob("*.json") if p.is_file())
        if not found:
            raise NotFoundError(
                f"no Every Eval Ever aggregate (.json) files in {path}; give an aggregate "
                "file or a directory holding them (each beside its _samples.jsonl)"
            )
        return found
    if not path.exists():
        raise NotFoundError(f"{path} does not exist (expected an Every Eval Ever .json record)")
    if path.name.endswith(".jsonl"):
        raise UsageError(
            f"{path} is a per-sample sidecar; ingest its aggregate record (the .json file "
            "whose detailed_evaluation_results.file_path names it), which is read with it"
        )
    return [path]


def _errors(report: Any) -> str:
    shown = [f"{e.get('loc', '?')}: {e.get('msg', e)}" for e in report.errors[:_SHOWN]]
    more = len(report.errors) - len(shown)
    return "\n  ".join(shown) + (f"\n  ... and {more} more" if more > 0 else "")


def _sidecar(path: Path, detail: dict[str, Any]) -> Path:
    """The sidecar beside the aggregate that ``file_path`` names (by its file name)."""
    declared = str(detail.get("file_path", ""))
    candidate = path.parent / PurePosixPath(declared).name
    if candidate.is_file():
        return candidate
    sibling = path.with_name(f"{path.stem}_samples.jsonl")
    if sibling.is_file():
        return sibling
    raise NotFoundError(
        f"{path}: detailed_evaluation_results.file_path names {declared!r}, which is not "
        f"beside the record ({candidate.name} or {sibling.name} in {path.parent}); keep the "
        "sidecar in the record's folder, or ingest a record without "
        "detailed_evaluation_results"
    )


def _check_sidecar(path: Path, sidecar: Path, detail: dict[str, Any]) -> None:
    checksum = detail.get("checksum")
    if checksum:
        algorithm = str(detail.get("hash_algorithm") or "sha256")
        digest = hashlib.new(algorithm, sidecar.read_bytes()).hexdigest()
        if digest != checksum:
            raise ItemSourceError(
                f"{path}: detailed_evaluation_results.checksum is {checksum}, but "
                f"{sidecar.name} hashes ({algorithm}) to {digest}: the sidecar is not the "
                "one the record was written with; nothing was stored. Ingest the record with "
                "its own sidecar"
            )
    report = eee_validator().validate_instance_file(sidecar)
    if not report.valid:
        raise ItemSourceError(
            f"{sidecar}: not a valid Every Eval Ever sample file; nothing was stored:\n  "
            + _errors(report)
        )
    total = detail.get("total_rows")
    if isinstance(total, int) and total != report.line_count:
        raise ItemSourceError(
            f"{path}: detailed_evaluation_results.total_rows is {total}, but {sidecar.name} "
            f"holds {report.line_count} rows; nothing was stored. Ingest the record with its "
            "own, complete sidecar"
        )


def _result_key(result: dict[str, Any]) -> str:
    return str(result.get("evaluation_result_id") or result["evaluation_name"])


def _pick(
    path: Path, data: dict[str, Any], rows: list[tuple[int, dict[str, Any]]], metric: str | None
) -> int:
    """The index of the evaluation result to ingest: `metric`, else the first with samples."""
    results = data["evaluation_results"]
    keys = [_result_key(r) for r in results]
    if metric is not None:
        for index, result in enumerate(results):
            config = result["metric_config"]
            names = {keys[index], result["evaluation_name"], config.get("metric_name"),
                     config.get("metric_id")}  # fmt: skip
            if metric in names:
                return index
        raise UsageError(
            f"{path}: --metric {metric!r} is not one of its evaluation_results ({keys}); "
            "give an evaluation_result_id, evaluation_name or metric_name of the record"
        )
    linked = {str(r.get("evaluation_result_id") or r["evaluation_name"]) for _, r in rows}
    for index, key in enumerate(keys):
        if key in linked:
            return index
    raise ItemSourceError(
        f"{path}: none of its samples names one of its evaluation_results ({keys}) by "
        "evaluation_result_id or evaluation_name; nothing to ingest"
    )


def _direction(path: Path, index: int, result: dict[str, Any]) -> None:
    config = result["metric_config"]
    where = f"{path}: evaluation_results[{index}].metric_config"
    if config.get("lower_is_better") is not False:
        raise ItemSourceError(
            f"{where}.lower_is_better is {config.get('lower_is_better')!r}; evalsuite scores "
            "are in [0, 1] with higher better. Ingest a metric where higher is better (pick "
            "it with --metric), or convert the scores first"
        )
    for name, bound in (("min_score", 0.0), ("max_score", 1.0)):
        value = config.get(name)
        if value is not None and (
            (name == "min_score" and value < bound) or (name == "max_score" and value > bound)
        ):
            raise ItemSourceError(
                f"{where}.{name} is {value}; evalsuite scores are in [0, 1]. Rescale the "
                "scores to [0, 1] first (evalsuite never clips)"
            )


def _sample_rows(sidecar: Path) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    with sidecar.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                rows.append((number, json.loads(line)))
    return rows


def _read_one(path: Path, rows: ForeignRows, metric: str | None) -> None:
    validator = eee_validator()
    report = validator.validate_aggregate(path)
    if not report.valid:
        raise ItemSourceError(
            f"{path}: not a valid Every Eval Ever aggregate record; nothing was stored:\n  "
            + _errors(report)
        )
    data = json.loads(path.read_text(encoding="utf-8"))
    detail = data.get("detailed_evaluation_results")
    if detail is None:
        raise ItemSourceError(
            f"{path}: the record has no per-sample results (detailed_evaluation_results is "
            "absent). evalsuite stores a run as attempts per item, which comparisons pair "
            "item by item, so an aggregate alone cannot be ingested. Ingest the record with "
            "its _samples.jsonl sidecar; where means suffice, `evalsuite validity report "
            "--scores RECORD` reads it as it is"
        )
    sidecar = _sidecar(path, detail)
    _check_sidecar(path, sidecar, detail)
    samples = _sample_rows(sidecar)
    model = str(data["model_info"]["id"])
    for number, sample in samples:
        for name, expected in (("evaluation_id", data["evaluation_id"]), ("model_id", model)):
            if sample[name] != expected:
                raise ItemSourceError(
                    f"{sidecar} line {number}: {name} is {sample[name]!r}, not the record's "
                    f"{expected!r}; a sidecar holds the samples of its own record only"
                )
    index = _pick(path, data, samples, metric)
    result = data["evaluation_results"][index]
    _direction(path, index, result)
    key = _result_key(result)
    chosen = [
        (n, s)
        for n, s in samples
        if str(s.get("evaluation_result_id") or s["evaluation_name"]) == key
    ]
    if model in rows.extra:
        raise ItemSourceError(
            f"{path}: a second record of model {model!r} in one ingest; ingest each "
            "record of a model separately (one run each)"
        )
    details = result["source_data"].get("additional_details") or {}
    if details.get("evalsuite_manifest_hash"):
        manifest_hash = str(details["evalsuite_manifest_hash"])
        if rows.manifest_hash not in (None, manifest_hash):
            raise ItemSourceError(
                f"{path}: exported by evalsuite from another suite version (manifest hash "
                f"{manifest_hash}) than the records before it ({rows.manifest_hash}); ingest "
                "the records of each suite version separately"
            )
        rows.manifest_hash = manifest_hash
    scored_items, scored = [], []
    for number, sample in chosen:
        meta = sample.get("metadata") or {}
        outcome = str(meta.get("evalsuite_outcome") or "scored")
        score = float(sample["evaluation"]["score"])
        ids = tuple(
            dict.fromkeys(
                [
                    str(meta.get("evalsuite_item_id") or sample["sample_id"]),
                    str(sample["sample_id"]),
                ]
            )
        )
        epoch = meta.get("epoch")
        rows.add(
            model,
            ids,
            None if outcome == "harness_error" else score,
            f"{sidecar.name} line {number}",
            epoch=int(epoch) if isinstance(epoch, int | str) and str(epoch).isdigit() else None,
            sample_hash=sample.get("sample_hash"),
            outcome=outcome,
            limit_type=meta.get("evalsuite_limit_type") or None,
            stratum=meta.get("evalsuite_stratum") or None,
        )
        if outcome != "harness_error":
            scored.append(score)
            scored_items.append(ids[0])
    check_mean(
        float(result["score_details"]["score"]),
        scored,
        scored_items,
        where=str(path),
        field_name=f"evaluation_results[{index}].score_details.score",
    )
    rows.extra[model] = {
        "file": str(path),
        "samples": str(sidecar),
        "format": "eee",
        "evaluation_id": data["evaluation_id"],
        "schema_version": data["schema_version"],
        "metric": key,
        "eval_library": dict(data["eval_library"]),
        "source_name": data["source_metadata"].get("source_name"),
    }


def read_eee(path: Path, *, metric: str | None = None) -> ForeignRows:
    """Every record at `path` (an aggregate file, or a directory of them) as `ForeignRows`.

    Raises:
        UsageError: the package is missing, or `path` names a sidecar; ItemSourceError: a
            schema violation, a checksum or row-count mismatch, a metric where lower is
            better, an aggregate without samples or one that disagrees with them (the field
            named); NotFoundError: no record, or a sidecar not beside its record.
    """
    rows = ForeignRows("eee", path)
    for aggregate in _aggregates(path):
        _read_one(aggregate, rows, metric)
    return rows
