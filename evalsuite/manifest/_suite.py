"""Suite files: `tasks/<suite>.toml` declares families, strata, weights, split and canary."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evalsuite._core.layout import Layout
from evalsuite._core.validation import describe_validation_error
from evalsuite.errors import NotFoundError, SuiteConfigError
from evalsuite.manifest._family_fields import FamilyFieldChecks
from evalsuite.manifest._judge_config import JudgeConfig
from evalsuite.manifest._mechanism_decl import HoldoutMechanismConfig
from evalsuite.manifest._names import NAME_PATTERN as _NAME
from evalsuite.manifest._names import list_suite_names
from evalsuite.manifest._paths import escaping_paths
from evalsuite.manifest._task_ref import check_task_reference

__all__ = ["FamilyConfig", "SuiteConfig", "list_suite_names", "load_suite"]


class FamilyConfig(FamilyFieldChecks):
    """One task family of a suite."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    """Family name; it is the value of the `family` stratum key."""
    version: int = Field(ge=1)
    """Environment/verifier version; bump it whenever scores could move."""
    task: str
    """The inspect task: a file relative to `tasks/` (``file.py@task_name``), a module path
    (``mypkg.evals:triage``) or a registry name (``inspect_evals/gsm8k``); see
    docs/design/foreign-tasks.md."""
    items: str | None = None
    """Item source relative to `tasks/`: JSONL, Parquet, or a saved HF dataset directory.
    Without it, `freeze` takes the items from the task's own dataset."""
    task_args: dict[str, Any] | None = None
    """Arguments the task is built with (frozen into the manifest: they can change what is
    measured)."""
    run_args: list[str] | None = None
    """Task arguments that may be set at run time with ``-T`` because they do not change what
    is measured (e.g. ``["sandbox"]``); every other task argument is frozen."""
    score: str | None = None
    """Which score counts when the task's scorer returns a dict or the task has several
    scorers: ``"utility"`` (a key), ``"match"`` (a scorer) or ``"scorer/key"``; the others are
    kept as secondary metrics. Default: the single scorer's single value
    (docs/design/scorers.md)."""
    score_bounds: tuple[float, float] | None = None
    """``[low, high]`` scale of a numeric score, mapped linearly to [0, 1]; a value outside
    it is a harness error, never clipped. Default: numbers must already be in [0, 1]."""
    judge: JudgeConfig | None = None
    """The model judge the family's scorer asks, when it is model-graded: frozen with the
    family (docs/design/judge-audit.md)."""

    @field_validator("task")
    @classmethod
    def _check_task(cls, value: str) -> str:
        return check_task_reference(value)

    @field_validator("items")
    @classmethod
    def _check_items(cls, value: str | None) -> str | None:
        # An absolute path (even one inside the project today) or a Windows separator would be
        # frozen into the manifest as written: the version then fails `verify` once the project
        # is cloned or moved elsewhere (docs/design/holdout-governance.md, section 10).
        if value is not None and (
            value.startswith(("/", "~")) or "\\" in value or re.match(r"^[A-Za-z]:", value)
        ):
            raise ValueError(
                f"items {value!r} must be a path relative to tasks/ ('myfamily/items.jsonl'; "
                "no '/' or '~' at its start, no drive letter, no backslash): the manifest "
                "records it as written, and an absolute path stops matching once the project is "
                "cloned or moved"
            )
        return value

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "family name must be lowercase letters, digits, '_' or '-' "
                f"and start with a letter (got {value!r})"
            )
        return value


class SuiteConfig(BaseModel):
    """A suite declaration (docs/architecture.md, "Suite files")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    canary: str = Field(min_length=16)
    """Canary string, unique per suite; embedded in payloads and exported files."""
    holdout_fraction: float = Field(gt=0.0, lt=1.0)
    stratify_by: list[str] = Field(min_length=1)
    """Metadata keys whose values, joined by '/', name an item's stratum."""
    key: Literal["random", "canary"] = "random"
    """Vault key: random (kept outside the project) or derived from the public canary."""
    cluster_by: str | None = None
    """Metadata key whose value groups items that share a source (clustered intervals)."""
    holdout_budget: int = Field(default=3, ge=1)
    """Holdout runs allowed per model family and suite version before `run` refuses."""
    holdout_mechanism: HoldoutMechanismConfig | None = None
    """``[holdout_mechanism]``: the reusable-holdout mechanism that answers holdout runs made
    without ``--mechanism`` (docs/design/reusable-holdout.md); frozen only when declared."""
    families: list[FamilyConfig] = Field(min_length=1)
    weights: dict[str, float] | None = None
    """Deployment share of each stratum; default: the item shares."""

    @field_validator("name")
    @classmethod
    def _check_name(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(
                "suite name must be lowercase letters, digits, '_' or '-' "
                f"and start with a letter (got {value!r})"
            )
        return value

    @field_validator("stratify_by")
    @classmethod
    def _check_strata(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"stratify_by lists a key twice: {value}")
        return value

    @property
    def path_hint(self) -> str:
        """Where this suite is declared, for messages."""
        return f"tasks/{self.name}.toml"

    def family(self, name: str) -> FamilyConfig:
        """The family called `name`."""
        for family in self.families:
            if family.name == name:
                return family
        raise NotFoundError(f"suite {self.name!r} has no family {name!r}")


def load_suite(layout: Layout, name: str) -> SuiteConfig:
    """Read and validate `tasks/<name>.toml`.

    Raises:
        NotFoundError: no such suite file (the message lists the suites that exist).
        SuiteConfigError: the file is not TOML, has unknown or missing keys, or is
            inconsistent; or a family's item source or task file leads out of the project
            (symlinks resolved; `escaping_paths`).
    """
    path = layout.suite_file(name)
    if not path.is_file():
        known = ", ".join(list_suite_names(layout)) or "none"
        raise NotFoundError(
            f"no suite {name!r}: {path} does not exist (suites in {layout.tasks}: {known})"
        )
    config = _parse_suite_file(path, name)
    escaping = escaping_paths(layout, config.families)
    if escaping:
        raise SuiteConfigError(
            "; ".join(e.message(config.path_hint) for e in escaping) + ". Nothing was read."
        )
    return config


def _parse_suite_file(path: Path, name: str) -> SuiteConfig:
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SuiteConfigError(f"{path}: not valid TOML: {exc}") from None
    try:
        config = SuiteConfig.model_validate(raw)
    except ValidationError as exc:
        allowed = list(SuiteConfig.model_fields)
        if any(str(p["loc"][0]) == "families" for p in exc.errors() if p["loc"]):
            allowed = allowed + [f"families.{f}" for f in FamilyConfig.model_fields]
        if any(str(p["loc"][0]) == "holdout_mechanism" for p in exc.errors() if p["loc"]):
            allowed = allowed + [
                f"holdout_mechanism.{f}" for f in HoldoutMechanismConfig.model_fields
            ]
        problems = describe_validation_error(exc, allowed=allowed, show_input=True)
        raise SuiteConfigError(f"{path}: " + "; ".join(problems)) from None
    if config.name != name:
        raise SuiteConfigError(
            f"{path}: name = {config.name!r} but the file is named {name!r}.toml; "
            "make them the same"
        )
    names = [f.name for f in config.families]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise SuiteConfigError(f"{path}: family declared more than once: {duplicates}")
    return config
