"""Checks of the family fields a suite file declares and a manifest records, in one place."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, field_validator

from evalsuite.manifest._score_decl import check_score_bounds, check_score_selector
from evalsuite.manifest._task_ref import check_run_args, check_task_args

__all__ = ["FamilyFieldChecks"]


class FamilyFieldChecks(BaseModel):
    """Validators of `task_args`, `run_args`, `score` and `score_bounds` (mixed in)."""

    @field_validator("task_args", check_fields=False)
    @classmethod
    def _check_task_args(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        return check_task_args(value)

    @field_validator("run_args", check_fields=False)
    @classmethod
    def _check_run_args(cls, value: list[str] | None) -> list[str] | None:
        return check_run_args(value)

    @field_validator("score", check_fields=False)
    @classmethod
    def _check_score(cls, value: str | None) -> str | None:
        return check_score_selector(value)

    @field_validator("score_bounds", check_fields=False)
    @classmethod
    def _check_bounds(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        return check_score_bounds(value)
