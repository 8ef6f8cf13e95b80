"""Statistics of stored attempts: estimates with intervals, paired comparisons, reliability.

Predictive validity (model versions against their deployment results) is its own stage,
`evalsuite.validity` (its names are no longer re-exported here).

Pure functions of the attempts DataFrame (docs/design/attempts.md); the item is the unit of
analysis. Interval decisions: docs/design/intervals.md. Public API::

    score = score_run(attempts, weights=weights, rng=np.random.default_rng(seed))
    comparison = compare_runs(baseline, candidate, gate=Gate(margin=0.02), rng=rng)
    rel = reliability(attempts)
    n = items_needed(VarianceComponents(0.0087, 0.177, 0.171), delta=0.03, epochs=3)
    seq = SequentialComparison(baseline_item_means, SequentialDesign(margin=0.03, seed=7))
    plan = population_target(pilot_item_means, pilot_epochs, 0.03)   # or an honest refusal
"""

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evalsuite.analyse._adaptive import AdaptiveRule, AdaptiveRun, Versus
    from evalsuite.analyse._attempts import ItemTable, item_table
    from evalsuite.analyse._bootstrap import N_RESAMPLES
    from evalsuite.analyse._compare import Comparison, Gate, GateResult, StratumDiff, compare_runs
    from evalsuite.analyse._corrected import CorrectedScore, ScoreEstimate, corrected_score
    from evalsuite.analyse._estimand import (
        Estimand,
        PopulationTarget,
        estimand_text,
        population_target,
    )
    from evalsuite.analyse._estimates import StratumEstimate, estimate_mean, stratified_mean
    from evalsuite.analyse._intervals import Estimate, check_level
    from evalsuite.analyse._judge import (
        Agreement,
        LengthBias,
        PositionConsistency,
        agreement,
        length_bias,
        model_family,
        position_consistency,
        shared_family,
    )
    from evalsuite.analyse._paired import PairedDiff, paired_difference
    from evalsuite.analyse._passk import PassK, pass_at_k, pass_hat_k
    from evalsuite.analyse._power import VarianceComponents, epochs_needed, items_needed, mde
    from evalsuite.analyse._reliability import Reliability, reliability
    from evalsuite.analyse._score import RunScore, score_run
    from evalsuite.analyse._secondary import SecondaryEstimate, secondary_estimates
    from evalsuite.analyse._sequential import (
        SequentialComparison,
        SequentialDesign,
        SequentialLook,
    )
    from evalsuite.analyse._table import Interval
    from evalsuite.analyse._target_design import TargetDesign, TargetOutcome
    from evalsuite.analyse._weighted_diff import WeightedDiff, weighted_difference
else:
    from evalsuite._core.lazy import lazy_exports

    __getattr__, __dir__ = lazy_exports(
        __name__,
        {
            "._attempts": (
                "ItemTable",
                "item_table",
            ),
            "._compare": (
                "Comparison",
                "Gate",
                "GateResult",
                "StratumDiff",
                "compare_runs",
            ),
            "._estimates": (
                "StratumEstimate",
                "estimate_mean",
                "stratified_mean",
            ),
            "._intervals": (
                "Estimate",
                "check_level",
            ),
            "._paired": (
                "PairedDiff",
                "paired_difference",
            ),
            "._passk": (
                "PassK",
                "pass_at_k",
                "pass_hat_k",
            ),
            "._power": (
                "VarianceComponents",
                "epochs_needed",
                "items_needed",
                "mde",
            ),
            "._reliability": (
                "Reliability",
                "reliability",
            ),
            "._score": (
                "RunScore",
                "score_run",
            ),
            "._secondary": (
                "SecondaryEstimate",
                "secondary_estimates",
            ),
            "._table": ("Interval",),
            "._target_design": (
                "TargetDesign",
                "TargetOutcome",
            ),
            "._weighted_diff": (
                "WeightedDiff",
                "weighted_difference",
            ),
            "._adaptive": (
                "AdaptiveRule",
                "AdaptiveRun",
                "Versus",
            ),
            "._bootstrap": ("N_RESAMPLES",),
            "._sequential": (
                "SequentialComparison",
                "SequentialDesign",
                "SequentialLook",
            ),
            "._judge": (
                "Agreement",
                "LengthBias",
                "PositionConsistency",
                "agreement",
                "length_bias",
                "model_family",
                "position_consistency",
                "shared_family",
            ),
            "._corrected": (
                "CorrectedScore",
                "ScoreEstimate",
                "corrected_score",
            ),
            "._estimand": (
                "Estimand",
                "PopulationTarget",
                "estimand_text",
                "population_target",
            ),
        },
    )

__all__ = [
    "N_RESAMPLES",
    "AdaptiveRule",
    "AdaptiveRun",
    "Agreement",
    "Comparison",
    "CorrectedScore",
    "Estimand",
    "Estimate",
    "Gate",
    "GateResult",
    "Interval",
    "ItemTable",
    "LengthBias",
    "PairedDiff",
    "PassK",
    "PopulationTarget",
    "PositionConsistency",
    "Reliability",
    "RunScore",
    "ScoreEstimate",
    "SecondaryEstimate",
    "SequentialComparison",
    "SequentialDesign",
    "SequentialLook",
    "StratumDiff",
    "StratumEstimate",
    "TargetDesign",
    "TargetOutcome",
    "VarianceComponents",
    "Versus",
    "WeightedDiff",
    "agreement",
    "check_level",
    "compare_runs",
    "corrected_score",
    "epochs_needed",
    "estimand_text",
    "estimate_mean",
    "item_table",
    "items_needed",
    "length_bias",
    "mde",
    "model_family",
    "paired_difference",
    "pass_at_k",
    "pass_hat_k",
    "population_target",
    "position_consistency",
    "reliability",
    "score_run",
    "secondary_estimates",
    "shared_family",
    "stratified_mean",
    "weighted_difference",
]
