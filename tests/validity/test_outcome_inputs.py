"""A deployment result's standard error is given or derivable, never silently undefined."""

from __future__ import annotations

import pytest

from evalsuite.errors import ItemSourceError
from evalsuite.store._outcomes_io import make_outcome


def test_n_derives_the_se_of_a_rate_only() -> None:
    """`--n` with a value outside [0, 1] was stored, and the report's SE came out NaN."""
    fields = {"model": "m", "metric": "task_success", "n": 200}
    assert make_outcome({**fields, "value": 0.75}).n == 200
    for value in (1.5, -0.1, 37.0):
        with pytest.raises(ItemSourceError, match="n gives the standard error of a rate"):
            make_outcome({**fields, "value": value}, where="row 4")
    kept = make_outcome({"model": "m", "metric": "latency_s", "value": 37.0, "se": 1.2})
    assert (kept.value, kept.se, kept.n) == (37.0, 1.2, None)
