"""A suite's default reusable-holdout mechanism: ``[holdout_mechanism]`` in the suite file.

Declared as ``[holdout_mechanism] name = "thresholdout" | "ladder"`` with optional parameters
(Thresholdout: ``threshold``, ``noise_scale``, ``budget``; the Ladder: ``step``). Frozen into
the manifest only when declared, so manifests frozen before it existed keep their hash; a
change of it needs a new major version (`freeze`). ``run --split holdout`` without
``--mechanism`` then answers with it (docs/design/reusable-holdout.md, "A suite's default").
The seed is never declared: it is drawn at the first answer and recorded in the ledger.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = ["HoldoutMechanismConfig"]

_THRESHOLDOUT_ONLY = ("threshold", "noise_scale", "budget")
_LADDER_ONLY = ("step",)


class HoldoutMechanismConfig(BaseModel):
    """``[holdout_mechanism]``: the mechanism that answers this suite's holdout runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Literal["thresholdout", "ladder"]
    threshold: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    """Thresholdout's ``T`` (default: the standard deviation of dev minus holdout at 0.5)."""
    noise_scale: float | None = Field(default=None, gt=0.0, allow_inf_nan=False)
    """Thresholdout's ``sigma`` (default: a quarter of the holdout's standard error at 0.5)."""
    budget: int | None = Field(default=None, ge=1)
    """Thresholdout's ``B`` (default: the suite's ``holdout_budget``)."""
    step: float | None = Field(default=None, gt=0.0, allow_inf_nan=False)
    """The Ladder's step (default: the MDE of two independent holdout runs at 0.5)."""

    @model_validator(mode="after")
    def _parameters_of_its_mechanism(self) -> HoldoutMechanismConfig:
        foreign = _LADDER_ONLY if self.name == "thresholdout" else _THRESHOLDOUT_ONLY
        wrong = [k for k in foreign if getattr(self, k) is not None]
        if wrong:
            allowed = _THRESHOLDOUT_ONLY if self.name == "thresholdout" else _LADDER_ONLY
            raise ValueError(
                f"{', '.join(wrong)} do(es) not apply to {self.name}: its parameters are "
                f"{', '.join(allowed)} (all optional); drop the others"
            )
        return self

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # undeclared parameters are left out: the manifest records what the suite file says
        data: dict[str, Any] = handler(self)
        return {k: v for k, v in data.items() if v is not None}
