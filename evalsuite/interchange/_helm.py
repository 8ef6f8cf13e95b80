"""Reading a HELM run directory: its run spec, per-instance stats and scenario state.

``run_spec.json`` names the run and, in ``adapter_spec.model``, the model; each entry of
``per_instance_stats.json`` holds one instance's stats for one train trial (``instance_id``,
``train_trial_index``, ``stats`` of ``{name: {name, split}, count, sum, mean, ...}``);
``scenario_state.json``'s ``request_states`` hold each request and its result (a failed
request is a harness error). Perturbed instances (a ``perturbation``) are left out: they are
other items. ``stats.json``, when beside them, gives the aggregate the instances must average
to (docs/interchange.md, "HELM").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from evalsuite.errors import ItemSourceError, NotFoundError
from evalsuite.interchange._foreign import ForeignRows, check_mean

__all__ = ["HIGHER_IS_BETTER", "read_helm"]

HIGHER_IS_BETTER = (
    "exact_match",
    "quasi_exact_match",
    "prefix_exact_match",
    "quasi_prefix_exact_match",
    "classification_micro_f1",
    "classification_macro_f1",
    "f1_score",
    "rouge_l",
    "ifeval_strict_accuracy",
    "chain_of_thought_correctness",
    "math_equiv",
    "math_equiv_chain_of_thought",
)
"""HELM's core metrics scored in [0, 1], higher better (the Every Eval Ever converter's list,
``every_eval_ever/converters/helm/metrics.py``); any other metric's direction is unknown."""
DEFAULT_METRIC = "exact_match"


def _load(path: Path) -> Any:
    if not path.is_file():
        raise NotFoundError(
            f"{path} does not exist; a HELM run directory holds run_spec.json, "
            "per_instance_stats.json and scenario_state.json"
        )
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ItemSourceError(f"{path}: not readable JSON ({exc})") from None


def _known(path: Path, metric: str) -> None:
    if metric.split("@", 1)[0] not in HIGHER_IS_BETTER:
        raise ItemSourceError(
            f"{path}: the direction of HELM metric {metric!r} is unknown (HELM's files do "
            "not state it); nothing was stored. evalsuite ingests HELM's metrics in [0, 1] "
            f"where higher is better: {', '.join(HIGHER_IS_BETTER)} (pick one with --metric)"
        )


def _failed(state_file: Path, states: Any) -> set[tuple[str, int]]:
    """(instance id, trial) of the requests whose result failed (harness errors)."""
    if not isinstance(states, dict) or not isinstance(states.get("request_states"), list):
        raise ItemSourceError(
            f"{state_file}: no request_states list; not a HELM scenario_state.json"
        )
    failed = set()
    for state in states["request_states"]:
        instance = state.get("instance") or {}
        result = state.get("result")
        if instance.get("perturbation"):
            continue
        if not isinstance(result, dict) or result.get("success") is False:
            failed.add((str(instance.get("id")), int(state.get("train_trial_index", 0))))
    return failed


def _stat(entry: dict[str, Any], metric: str) -> dict[str, Any] | None:
    for stat in entry.get("stats") or []:
        name = stat.get("name") or {}
        if name.get("name") == metric and not name.get("perturbation"):
            return dict(stat)
    return None


def _value(stats_file: Path, index: int, stat: dict[str, Any], metric: str) -> float:
    value = stat.get("mean")
    if value is None and stat.get("count"):
        value = stat.get("sum", 0) / stat["count"]
    if not isinstance(value, int | float):
        raise ItemSourceError(
            f"{stats_file}: entry {index} ({metric}): no numeric mean (or sum and count)"
        )
    return float(value)


def _declared(directory: Path, metric: str, split: str | None) -> float | None:
    """The aggregate ``stats.json`` reports for `metric` on `split` (None: no file)."""
    path = directory / "stats.json"
    if not path.is_file():
        return None
    for stat in _load(path):
        name = stat.get("name") or {}
        if (
            name.get("name") == metric
            and name.get("split") == split
            and not name.get("perturbation")
            and isinstance(stat.get("mean"), int | float)
        ):
            return float(stat["mean"])
    return None


def read_helm(path: Path, *, metric: str | None = None) -> ForeignRows:
    """A HELM run directory as `ForeignRows`: one attempt per (instance, train trial).

    Raises:
        NotFoundError: a file of the run is missing; ItemSourceError: a metric of unknown
            direction, an instance without the metric, or instances whose mean is not
            ``stats.json``'s; nothing is stored.
    """
    directory = path if path.is_dir() else path.parent
    spec = _load(directory / "run_spec.json")
    stats_file = directory / "per_instance_stats.json"
    entries = _load(stats_file)
    failed = _failed(directory / "scenario_state.json", _load(directory / "scenario_state.json"))
    adapter = spec.get("adapter_spec") or {}
    model = adapter.get("model") or adapter.get("model_deployment")
    if not model:
        raise ItemSourceError(
            f"{directory / 'run_spec.json'}: adapter_spec.model is missing; the run cannot "
            "be attributed to a model"
        )
    name = metric or DEFAULT_METRIC
    _known(stats_file, name)
    if not isinstance(entries, list):
        raise ItemSourceError(f"{stats_file}: expected a list of per-instance entries")
    rows = ForeignRows("helm", path)
    scores, items, splits = [], [], set()
    for index, entry in enumerate(entries):
        if entry.get("perturbation"):
            continue
        instance = str(entry.get("instance_id"))
        trial = int(entry.get("train_trial_index", 0))
        place = f"{stats_file.name} entry {index} (instance {instance}, trial {trial})"
        if (instance, trial) in failed:
            rows.add(str(model), (instance,), None, place, epoch=trial + 1, outcome="harness_error")
            continue
        stat = _stat(entry, name)
        if stat is None:
            raise ItemSourceError(
                f"{stats_file}: {place} has no {name!r} stat; pick a metric every instance "
                "has with --metric"
            )
        score = _value(stats_file, index, stat, name)
        splits.add((stat.get("name") or {}).get("split"))
        rows.add(str(model), (instance,), score, place, epoch=trial + 1)
        scores.append(score)
        items.append(instance)
    declared = _declared(directory, name, next(iter(splits)) if len(splits) == 1 else None)
    if declared is not None:
        check_mean(declared, scores, items, where=str(directory / "stats.json"), field_name=name)
    rows.extra[str(model)] = {
        "run_dir": str(directory),
        "format": "helm",
        "run": spec.get("name"),
        "metric": name,
    }
    return rows
