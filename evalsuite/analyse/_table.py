"""The interval type of every result, and the fields mixin that turns one into data."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, NamedTuple, cast

import pandas as pd

__all__ = ["Interval", "IntervalFields"]


class Interval(NamedTuple):
    """A confidence interval; both ends are NaN when it is undefined."""

    low: float
    high: float


class IntervalFields:
    """Mixin for frozen result dataclasses with a ``ci`` field.

    Gives a JSON-ready `to_dict` with ``ci`` as ``[low, high]`` and a one-row `to_frame` with
    ``ci_low`` and ``ci_high``.
    """

    __slots__ = ()

    ci: Interval

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields (NaN kept; the CLI writes it as null); `ci` is ``[low, high]``."""
        out = asdict(cast(Any, self))
        out["ci"] = [self.ci.low, self.ci.high]
        return out

    def to_frame(self) -> pd.DataFrame:
        """One row with every field, the interval split into ``ci_low`` and ``ci_high``."""
        row = self.to_dict()
        low, high = row.pop("ci")
        return pd.DataFrame([{**row, "ci_low": low, "ci_high": high}])
