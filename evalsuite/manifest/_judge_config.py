"""A family's model judge, declared in the suite file and hashed into the manifest (issue 33).

A judge is a grader: the model, its version, its prompt and its decoding settings decide the
score as much as the items do. Declared under the family::

    [[families]]
    name = "answers"
    ...
    [families.judge]
    model = "openai/gpt-4o-2024-08-06"
    prompt = "Grade the answer against the reference. Reply GRADE: C or GRADE: I."
    config = { temperature = 0.0, max_tokens = 64, seed = 7 }
    scale = "binary"
    floor = 0.6

Everything declared is frozen with the family (`FamilyConfig` is dumped into the manifest), so
a changed judge is a changed manifest: `verify` reports it and a new version is needed. The
audit against human labels (`evalsuite audit SUITE@X.Y.Z --judge --labels FILE`) measures it
and compares the agreement's lower bound with `floor` (docs/design/judge-audit.md).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

__all__ = ["JudgeConfig"]


class JudgeConfig(BaseModel):
    """The judge a family's scorer asks, and how much agreement with humans it must show."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field(min_length=3)
    """The judge as an inspect model name (``provider/model``), pinned to a dated version
    where the provider has one."""
    version: str | None = None
    """The judge's version when the model name does not carry it (a checkpoint, a date)."""
    prompt: str = Field(min_length=1)
    """The grading prompt (template) exactly as the scorer sends it."""
    config: dict[str, Any] | None = None
    """Decoding settings the scorer uses (temperature, max_tokens, seed, ...)."""
    labels: list[str] | None = None
    """The judge's labels in order (binary: negative first, e.g. ``["I", "C"]``; ordinal: low
    to high). Default: as they sort."""
    scale: Literal["binary", "categorical", "ordinal"] = "binary"
    """The judge's labels: binary or categorical (Cohen's kappa) or ordinal (Krippendorff's
    alpha)."""
    floor: float = Field(default=0.6, gt=-1.0, le=1.0)
    """The agreement with human labels the judge must show: the audit fails when the lower end
    of the agreement's interval is below it."""
    consistency_floor: float = Field(default=0.8, ge=0.0, le=1.0)
    """A pairwise judge's position consistency (the same winner with the answers swapped)
    must reach this at the lower end of its interval."""

    @model_serializer(mode="wrap")
    def _omit_undeclared(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # the manifest records what was declared: the hash must not depend on how the
        # record is dumped (freeze dumps without None, a loaded manifest with)
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}

    @field_validator("model")
    @classmethod
    def _check_model(cls, value: str) -> str:
        if "/" not in value or value.startswith("/") or value.endswith("/"):
            raise ValueError(
                f"judge model {value!r} must be an inspect model name 'provider/model', "
                "e.g. 'openai/gpt-4o-2024-08-06'"
            )
        return value
