"""Frozen manifests and suite files read without pydantic, for the commands that list them.

`runs`, `suites` and the audit status every command shows need a few facts of a manifest
(its hash, items per split and stratum, weights, audit stamp) and of a suite file (its
description and families). Validating with the pydantic models costs more CPU than these
commands may spend in all (docs/design/startup.md). So this module checks the JSON (or TOML)
strictly against the same schema with plain Python, and hands every file it does not accept
as plainly valid to the full readers (`read_manifest`, `load_suite`): they then either raise
their usual error or return the model, from which the summary is taken. What it accepts is a
subset of what the models accept, with the same content: a file whose record differs from
the model's (a missing default, an integer where a float is kept, a null optional field) is
never summarised from its raw JSON. `tests/manifest/test_lean.py` checks both readers agree on
the shipped manifests and suite files and on altered copies of them.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalsuite._core.layout import Layout
from evalsuite.manifest._catalog import manifest_path
from evalsuite.manifest._names import NAME_PATTERN
from evalsuite.manifest._score_decl import check_score_bounds, check_score_selector
from evalsuite.manifest._task_ref import check_run_args, check_task_args, check_task_reference

__all__ = [
    "ManifestSummary",
    "StampSummary",
    "SuiteSummary",
    "load_manifest_summary",
    "load_suite_summary",
    "read_manifest_summary",
]


_MANIFEST_FORMAT = "evalsuite-manifest/1"
_UNHASHED = ("frozen_at", "note", "manifest_hash")

Check = Callable[[Any], bool]


@dataclass(frozen=True, slots=True)
class StampSummary:
    """A manifest's audit stamp (the fields of `evalsuite.manifest.AuditStamp`)."""

    status: str
    file: str | None
    content_hash: str | None
    reason: str | None


@dataclass(frozen=True, slots=True)
class ManifestSummary:
    """What listing commands need of a frozen manifest (docs/design/startup.md).

    Attributes:
        suite, version, manifest_hash, frozen_at, weights: as in the manifest.
        audit: the audit stamp (None: none recorded).
        item_splits: (split, stratum) of every item, in manifest order.
    """

    suite: str
    version: str
    manifest_hash: str
    frozen_at: str
    weights: dict[str, float]
    audit: StampSummary | None
    item_splits: tuple[tuple[str, str], ...]
    _content: dict[str, Any] = field(repr=False, compare=False)

    @property
    def ref(self) -> str:
        """``suite@version``."""
        return f"{self.suite}@{self.version}"

    @property
    def n_items(self) -> int:
        """Items in the manifest."""
        return len(self.item_splits)

    def count(self, split: str) -> int:
        """Items on one side of the split."""
        return sum(1 for s, _ in self.item_splits if s == split)

    def strata(self) -> dict[str, dict[str, int]]:
        """Stratum -> {"dev": n, "holdout": n} (as `Manifest.strata`)."""
        out: dict[str, dict[str, int]] = {}
        for split, stratum in self.item_splits:
            counts = out.setdefault(stratum, {"dev": 0, "holdout": 0})
            counts[split] += 1
        return dict(sorted(out.items()))

    @property
    def holdout_mechanism(self) -> dict[str, Any] | None:
        """The suite's default reusable-holdout mechanism (None: none declared)."""
        value = self._content.get("holdout_mechanism")
        return dict(value) if value is not None else None

    def record(self) -> dict[str, Any]:
        """The manifest's record as the model would write it (checked strictly; not a copy)."""
        return self._content

    def audited_hash(self) -> str:
        """The hash of everything but the audit stamp (as `Manifest.audited_hash`)."""
        from evalsuite._core.hashing import content_hash

        return content_hash(
            {k: v for k, v in self._content.items() if k != "audit" and k not in _UNHASHED}
        )


@dataclass(frozen=True, slots=True)
class SuiteSummary:
    """What `suites` needs of a suite file: its name, description and family names."""

    name: str
    description: str
    families: tuple[str, ...]


# --- strict checks: exact JSON types, exact key sets --------------------------------------


def _is(kind: type) -> Check:
    return lambda v: type(v) is kind


def _optional(check: Check) -> Check:
    return lambda v: v is None or check(v)


def _list_of(check: Check) -> Check:
    return lambda v: type(v) is list and all(check(x) for x in v)


def _dict_of(check: Check) -> Check:
    return lambda v: type(v) is dict and all(type(k) is str and check(x) for k, x in v.items())


def _record(required: Mapping[str, Check], optional: Mapping[str, Check] | None = None) -> Check:
    """A dict with every `required` key, `optional` keys when they pass, nothing else."""
    optional = optional or {}

    def check(v: Any) -> bool:
        if type(v) is not dict or not required.keys() <= v.keys():
            return False
        for key, value in v.items():
            if key in required:
                if not required[key](value):
                    return False
            elif key not in optional or not optional[key](value):
                return False
        return True

    return check


def _accepted(validator: Callable[[Any], Any], value: Any) -> bool:
    """`validator` accepts `value` and returns it unchanged."""
    try:
        return bool(validator(value) == value)
    except (ValueError, TypeError):
        return False


def _bounds(number: Check) -> Check:
    """``score_bounds``: two numbers that `check_score_bounds` accepts, kept as they are."""

    def check(v: Any) -> bool:
        return _list_of(number)(v) and len(v) == 2 and _accepted(_bounds_list, v)

    return check


def _bounds_list(v: list[float]) -> list[float] | None:
    bounds = check_score_bounds((v[0], v[1]))
    return None if bounds is None else list(bounds)


_STR, _INT, _FLOAT = _is(str), _is(int), _is(float)
_FILE_RECORD = _record({"path": _STR, "sha256": _STR})
_ITEM = _record(
    {
        "id": _STR,
        "hash": _STR,
        "stratum": _STR,
        "split": lambda v: v in ("dev", "holdout") and type(v) is str,
        "family": _STR,
        "cluster": _optional(_STR),
    }
)
_FAMILY_FIELDS: dict[str, Check] = {
    "items": _STR,
    "task_args": lambda v: type(v) is dict and _accepted(check_task_args, v),
    "run_args": lambda v: _list_of(_STR)(v) and _accepted(check_run_args, v),
    "score": lambda v: type(v) is str and _accepted(check_score_selector, v),
}
"""Family fields a suite file declares and a manifest records (their validators, run as the
models run them)."""


def _judge_model(v: Any) -> bool:
    return type(v) is str and len(v) >= 3 and "/" in v.strip("/") and not v.startswith("/")


def _judge(number: Check) -> Check:
    """A plainly valid ``[families.judge]`` (as `JudgeConfig`; anything else: pydantic)."""
    return _record(
        {"model": _judge_model, "prompt": lambda v: type(v) is str and len(v) >= 1},
        {
            "version": _STR,
            "config": lambda v: type(v) is dict and all(type(k) is str for k in v),
            "labels": _list_of(_STR),
            "scale": lambda v: v in ("binary", "categorical", "ordinal") and type(v) is str,
            "floor": lambda v: number(v) and -1.0 < v <= 1.0,
            "consistency_floor": lambda v: number(v) and 0.0 <= v <= 1.0,
        },
    )


_MANIFEST_FAMILY = _record(
    {"name": _STR, "version": _INT, "task": _STR},
    {
        **_FAMILY_FIELDS,
        "score_bounds": _bounds(_FLOAT),
        "tools": _dict_of(_STR),
        "judge": _judge(_FLOAT),
    },
)


def _stamp(v: Any) -> bool:
    fields = {
        "status": lambda s: s in ("passed", "skipped") and type(s) is str,
        "file": _optional(_STR),
        "content_hash": _optional(_STR),
        "reason": _optional(_STR),
    }
    if not _record(fields)(v) or len(v) != len(fields):
        return False
    if v["status"] == "passed":
        return bool(v["file"] and v["content_hash"])
    return bool(v["reason"] and v["reason"].strip())


def _mechanism_record(value: Any, number: Any) -> bool:
    """Whether `value` is plainly a valid ``holdout_mechanism`` (as `HoldoutMechanismConfig`).

    `number` checks a float field (a manifest keeps floats; a suite file may write ``1``).
    """
    if type(value) is not dict or value.get("name") not in ("thresholdout", "ladder"):
        return False
    allowed = (
        ("threshold", "noise_scale", "budget") if value["name"] == "thresholdout" else ("step",)
    )
    if any(k != "name" and k not in allowed for k in value):
        return False
    for key in ("threshold", "noise_scale", "step"):
        if key in value:
            v = value[key]
            if not number(v) or not math.isfinite(v) or v < 0 or (key != "threshold" and v == 0):
                return False
    budget = value.get("budget", 1)
    return type(budget) is int and budget >= 1


_MANIFEST = _record(
    {
        "format": lambda v: v == _MANIFEST_FORMAT,
        "suite": _STR,
        "version": _STR,
        "description": _STR,
        "frozen_at": _STR,
        "parent": _optional(_record({"version": _STR, "manifest_hash": _STR})),
        "diff": _record(
            {"added": _list_of(_STR), "removed": _list_of(_STR), "changed": _list_of(_STR)}
        ),
        "split_salt": _STR,
        "holdout_fraction": _FLOAT,
        "canary": _STR,
        "key": lambda v: v in ("random", "canary") and type(v) is str,
        "key_id": _STR,
        "stratify_by": _list_of(_STR),
        "cluster_by": _optional(_STR),
        "holdout_budget": _INT,
        "weights": _dict_of(_FLOAT),
        "families": _list_of(_MANIFEST_FAMILY),
        "items": _list_of(_ITEM),
        "vault": _optional(_FILE_RECORD),
        "fingerprints": _FILE_RECORD,
        "manifest_hash": _STR,
    },
    # recorded only when set (a null one is left out of the model's record: not plainly valid)
    {
        "note": _optional(_STR),
        "audit": _stamp,
        "dev_items": _FILE_RECORD,
        "holdout_mechanism": lambda v: _mechanism_record(v, _FLOAT),
    },
)


def _summary(content: dict[str, Any]) -> ManifestSummary:
    stamp = content.get("audit")
    return ManifestSummary(
        suite=content["suite"],
        version=content["version"],
        manifest_hash=content["manifest_hash"],
        frozen_at=content["frozen_at"],
        weights=dict(content["weights"]),
        audit=None if stamp is None else StampSummary(**stamp),
        item_splits=tuple((i["split"], i["stratum"]) for i in content["items"]),
        _content=content,
    )


def read_manifest_summary(path: Path, *, check_hash: bool = True) -> ManifestSummary:
    """`read_manifest(path, check_hash=...)`, summarised; pydantic only for an unusual file.

    Raises:
        NotFoundError, ManifestTamperedError: as `read_manifest` (which raises them).
    """
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = None
    if _MANIFEST(raw):
        from evalsuite._core.hashing import content_hash

        if not check_hash or (
            content_hash({k: v for k, v in raw.items() if k not in _UNHASHED})
            == raw["manifest_hash"]
        ):
            return _summary(raw)
    from evalsuite.manifest._schema import read_manifest

    manifest = read_manifest(path, check_hash=check_hash)
    return _summary(manifest.model_dump(mode="json"))


def load_manifest_summary(
    layout: Layout, suite: str, version: str | None = None, *, check_hash: bool = True
) -> ManifestSummary:
    """`load_manifest(layout, suite, version, check_hash=...)`, summarised.

    Raises:
        NotFoundError, ManifestTamperedError: as `load_manifest`.
    """
    return read_manifest_summary(manifest_path(layout, suite, version), check_hash=check_hash)


# --- suite files ----------------------------------------------------------------------------


def _name(v: Any) -> bool:
    return type(v) is str and NAME_PATTERN.match(v) is not None


def _number(v: Any) -> bool:
    return type(v) in (int, float)


_SUITE_FAMILY = _record(
    {
        "name": _name,
        "version": lambda v: type(v) is int and v >= 1,
        "task": lambda v: type(v) is str and _accepted(check_task_reference, v),
    },
    {**_FAMILY_FIELDS, "score_bounds": _bounds(_number), "judge": _judge(_number)},
)
_SUITE = _record(
    {
        "name": _name,
        "canary": lambda v: type(v) is str and len(v) >= 16,
        "holdout_fraction": lambda v: type(v) is float and 0.0 < v < 1.0,
        "stratify_by": lambda v: _list_of(_STR)(v) and 0 < len(v) == len(set(v)),
        "families": lambda v: _list_of(_SUITE_FAMILY)(v) and len(v) > 0,
    },
    {
        "description": _STR,
        "key": lambda v: v in ("random", "canary") and type(v) is str,
        "cluster_by": _STR,
        "holdout_budget": lambda v: type(v) is int and v >= 1,
        "holdout_mechanism": lambda v: _mechanism_record(v, _number),
        "weights": _dict_of(_number),
    },
)


def load_suite_summary(layout: Layout, name: str) -> SuiteSummary:
    """`load_suite(layout, name)`, summarised; pydantic only for an unusual file.

    Raises:
        NotFoundError, SuiteConfigError: as `load_suite` (which raises them).
    """
    path = layout.suite_file(name)
    raw: dict[str, Any] | None
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raw = None
    if raw is not None and _SUITE(raw) and raw["name"] == name:
        families = tuple(f["name"] for f in raw["families"])
        if len(set(families)) == len(families):
            return SuiteSummary(name, raw.get("description", ""), families)
    from evalsuite.manifest._suite import load_suite

    config = load_suite(layout, name)
    return SuiteSummary(config.name, config.description, tuple(f.name for f in config.families))
