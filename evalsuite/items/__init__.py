"""Item analysis of a suite version: difficulty, discrimination, flakiness, flags, saturation.

Usage::

    analysis = item_analysis(store, layout, "support", "2.0.0")
    analysis.to_dict()      # the ``evalsuite items --json`` payload

The statistics (`analyse_items`, `fit_2pl`) take DataFrames and arrays and load no database;
`item_analysis` reads the store. See docs/design/items.md.
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.items._analysis import (
        FLAGS,
        MIN_IRT_MODELS,
        ItemAnalysis,
        ItemRow,
        ModelRow,
        SeparationTest,
        StratumWatch,
        analyse_items,
    )
    from evalsuite.items._irt import IrtFit, fit_2pl, simulate_2pl
    from evalsuite.items._load import analysed_runs, item_analysis, version_runs
    from evalsuite.items._saturation import DEFAULT_SATURATION, stratum_watch
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._analysis": (
                "FLAGS",
                "MIN_IRT_MODELS",
                "ItemAnalysis",
                "ItemRow",
                "ModelRow",
                "SeparationTest",
                "StratumWatch",
                "ItemRow",
                "ModelRow",
                "SeparationTest",
                "StratumWatch",
                "analyse_items",
            ),
            "._irt": ("IrtFit", "fit_2pl", "simulate_2pl"),
            "._load": ("analysed_runs", "item_analysis", "version_runs"),
            "._saturation": ("DEFAULT_SATURATION", "stratum_watch"),
        },
    )

__all__ = [
    "DEFAULT_SATURATION",
    "FLAGS",
    "MIN_IRT_MODELS",
    "IrtFit",
    "ItemAnalysis",
    "ItemRow",
    "ModelRow",
    "SeparationTest",
    "StratumWatch",
    "analyse_items",
    "analysed_runs",
    "fit_2pl",
    "item_analysis",
    "simulate_2pl",
    "stratum_watch",
    "version_runs",
]
