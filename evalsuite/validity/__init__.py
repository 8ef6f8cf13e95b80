"""Predictive validity: how well eval scores predicted the deployment results of model versions.

Its own stage: the unit is the model version, not the item (docs/design/validity.md). Pure
functions of per-model scores and deployment results; no store, no files. Public API::

    v = validity(x, y, se_x=se_x, rng=np.random.default_rng(seed))   # x: scores, y: results
    diff = compare_predictors(x_a, x_b, y, rng=rng, names=("suite", "mmlu"))
    report = validity_table(scores, results, metric="task_success", rng=rng)
    over_time = validity_over_time(x, y, order)                      # order: observation time

The same names stay importable from `evalsuite.analyse`, where they lived before.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.validity._compare import PredictorComparison, compare_predictors
    from evalsuite.validity._table import ValidityReport, validity_table
    from evalsuite.validity._time import ValidityOverTime, validity_over_time
    from evalsuite.validity._validity import Validity, validity
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._compare": ("PredictorComparison", "compare_predictors"),
            "._table": ("ValidityReport", "validity_table"),
            "._time": ("ValidityOverTime", "validity_over_time"),
            "._validity": ("Validity", "validity"),
        },
    )

__all__ = [
    "PredictorComparison",
    "Validity",
    "ValidityOverTime",
    "ValidityReport",
    "compare_predictors",
    "validity",
    "validity_over_time",
    "validity_table",
]
