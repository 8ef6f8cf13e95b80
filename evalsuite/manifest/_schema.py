"""The frozen manifest: its schema (unknown keys rejected) and its own hash."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from evalsuite._core.hashing import content_hash
from evalsuite._core.validation import describe_validation_error
from evalsuite.errors import ManifestTamperedError, NotFoundError
from evalsuite.manifest._family_fields import FamilyFieldChecks
from evalsuite.manifest._judge_config import JudgeConfig
from evalsuite.manifest._mechanism_decl import HoldoutMechanismConfig
from evalsuite.manifest._split import Split

__all__ = [
    "MANIFEST_FORMAT",
    "AuditStamp",
    "FileRecord",
    "Manifest",
    "ManifestDiff",
    "ManifestFamily",
    "ManifestItem",
    "ParentRef",
    "compute_manifest_hash",
    "read_manifest",
]

MANIFEST_FORMAT = "evalsuite-manifest/1"
_UNHASHED = ("frozen_at", "note", "manifest_hash")
_OPTIONAL_FAMILY_FIELDS = (
    "items",
    "task_args",
    "run_args",
    "score",
    "score_bounds",
    "tools",
    "judge",
)
"""Family fields recorded only when declared (absent from manifests frozen before them)."""
_OPTIONAL_FIELDS = ("audit", "holdout_mechanism")
"""Manifest fields recorded only when set (absent from manifests frozen before them)."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ManifestItem(_Frozen):
    """What a manifest keeps of an item: never its text."""

    id: str
    hash: str
    stratum: str
    split: Split
    family: str
    cluster: str | None = None


class ManifestFamily(_Frozen, FamilyFieldChecks):
    """A family as frozen: name, version, where its task and items live, and which score counts.

    ``score`` and ``score_bounds`` (docs/design/scorers.md), ``task_args`` and ``run_args``
    (docs/design/foreign-tasks.md) are left out of the record when not declared, so that
    manifests frozen before they existed keep their hash; so is ``items`` for a family whose
    items were taken from its task's own dataset.
    """

    name: str
    version: int
    task: str
    items: str | None = None
    task_args: dict[str, Any] | None = None
    run_args: list[str] | None = None
    score: str | None = None
    score_bounds: tuple[float, float] | None = None
    tools: dict[str, str] | None = None
    """The action space frozen with the family: tool name -> hash of the schema a model is
    shown (docs/design/grader-audit.md); ``{}`` for a family without tools, absent for a
    family without a kit or a manifest frozen before action spaces were recorded."""
    judge: JudgeConfig | None = None
    """The family's model judge as declared (docs/design/judge-audit.md); absent when the
    family is not model-graded."""

    @model_serializer(mode="wrap")
    def _omit_undeclared(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for optional in _OPTIONAL_FAMILY_FIELDS:
            if data.get(optional) is None:
                data.pop(optional, None)
        return data


class ParentRef(_Frozen):
    """The version a manifest was derived from."""

    version: str
    manifest_hash: str


class ManifestDiff(_Frozen):
    """Item ids that changed against the parent version."""

    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)


class FileRecord(_Frozen):
    """A file frozen beside the manifest, by path (relative to the project) and hash."""

    path: str
    sha256: str


class AuditStamp(_Frozen):
    """What `freeze` recorded about the grader audit (docs/design/grader-audit.md).

    ``passed``: the dev-split audit ran and every check held; its results are in ``file``
    and hash to ``content_hash``. ``skipped``: frozen with ``--skip-audit --reason``.
    """

    status: Literal["passed", "skipped"]
    file: str | None = None
    """The audit results beside the manifest, relative to the project."""
    content_hash: str | None = None
    """Hash of the audit results' hashed content (see `evalsuite.audit.AuditFile`)."""
    reason: str | None = None
    """Why the audit was skipped."""

    @model_validator(mode="after")
    def _consistent(self) -> AuditStamp:
        if self.status == "passed" and not (self.file and self.content_hash):
            raise ValueError("a passed audit records its file and content_hash")
        if self.status == "skipped" and not (self.reason and self.reason.strip()):
            raise ValueError("a skipped audit records its reason")
        return self


class Manifest(_Frozen):
    """A frozen, versioned suite (docs/architecture.md, "Data model": Manifest)."""

    format: Literal["evalsuite-manifest/1"] = "evalsuite-manifest/1"
    suite: str
    version: str
    description: str
    frozen_at: str
    note: str | None = None
    parent: ParentRef | None
    diff: ManifestDiff
    split_salt: str
    holdout_fraction: float
    canary: str
    key: Literal["random", "canary"]
    key_id: str
    """Public id of the vault key (a hash of it), to tell which key a vault needs."""
    stratify_by: list[str]
    cluster_by: str | None
    holdout_budget: int
    holdout_mechanism: HoldoutMechanismConfig | None = None
    """The suite's default reusable-holdout mechanism; left out of the record when the suite
    declares none, so manifests frozen before it existed keep their hash."""
    weights: dict[str, float]
    families: list[ManifestFamily]
    items: list[ManifestItem]
    vault: FileRecord | None
    fingerprints: FileRecord
    dev_items: FileRecord | None = None
    """The dev items taken from tasks' own datasets (families without an item source),
    frozen beside the manifest; left out of the record when no family has such items, so
    manifests frozen before it existed keep their hash (docs/design/foreign-tasks.md)."""
    manifest_hash: str
    audit: AuditStamp | None = None
    """The grader audit made at freeze, or its skip (absent from earlier manifests)."""

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for optional in _OPTIONAL_FIELDS:
            if data.get(optional, 0) is None:
                data.pop(optional, None)
        # the dev items taken from tasks' own datasets: left out when no family has such
        # items, so manifests frozen before they existed keep their hash
        if data.get("dev_items", "absent") is None:
            data.pop("dev_items")
        return data

    def audited_hash(self) -> str:
        """The hash of everything but the audit stamp: what the freeze-time audit ran on."""
        return compute_manifest_hash(
            {k: v for k, v in self.model_dump(mode="json").items() if k != "audit"}
        )

    def hashed_content(self) -> dict[str, Any]:
        """Everything the manifest hash covers (all but freeze time, note and the hash)."""
        return self.model_dump(mode="json", exclude=set(_UNHASHED))

    def items_by_split(self, split: Split) -> list[ManifestItem]:
        """Items on one side of the split, in manifest (id) order."""
        return [item for item in self.items if item.split == split]

    def strata(self) -> dict[str, dict[str, int]]:
        """Stratum -> {"dev": n, "holdout": n}."""
        out: dict[str, dict[str, int]] = {}
        for item in self.items:
            counts = out.setdefault(item.stratum, {"dev": 0, "holdout": 0})
            counts[item.split] += 1
        return dict(sorted(out.items()))

    @property
    def ref(self) -> str:
        """``suite@version``."""
        return f"{self.suite}@{self.version}"


def compute_manifest_hash(content: dict[str, Any]) -> str:
    """Hash of a manifest's content, ignoring the unhashed fields if present."""
    return content_hash({k: v for k, v in content.items() if k not in _UNHASHED})


def read_manifest(path: Path, *, check_hash: bool = True) -> Manifest:
    """Load a manifest, validate its schema and (by default) its own hash.

    Raises:
        NotFoundError: the file does not exist.
        ManifestTamperedError: the file is not valid JSON, does not match the schema, or no
            longer hashes to its recorded hash.
    """
    if not path.is_file():
        raise NotFoundError(f"manifest not found: {path}")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ManifestTamperedError(
            f"{path}: not valid JSON ({exc.msg}, line {exc.lineno}); manifests are written "
            "by `evalsuite freeze` and must not be edited. Restore it from version control."
        ) from None
    try:
        manifest = Manifest.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(describe_validation_error(exc, allowed=list(Manifest.model_fields)))
        raise ManifestTamperedError(
            f"{path}: does not match the manifest schema ({problems}). Manifests must not be "
            "edited; restore the file from version control."
        ) from None
    if check_hash:
        actual = compute_manifest_hash(manifest.model_dump(mode="json"))
        if actual != manifest.manifest_hash:
            raise ManifestTamperedError(
                f"{path} hashes to {actual} but records {manifest.manifest_hash}: it was edited "
                "after freezing. Manifests are immutable; restore it from version control and "
                "freeze a new version for any change."
            )
    return manifest
