"""Item analysis of one suite version: statistics, IRT, flags and the saturation watch.

`analyse_items` takes the attempts of every stored run of the version (with each run's
``model``) and returns an `ItemAnalysis`, whose `to_dict` is the ``items --json`` payload
(docs/cli.md, ``items``). Flags and the rules behind them: docs/design/items.md. No database
is loaded here: the caller reads the store (`evalsuite.items._load`).
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm, pearsonr, spearmanr

from evalsuite.items._discrimination import judgement, negative_p_values
from evalsuite.items._irt import IrtFit, fit_2pl
from evalsuite.items._saturation import DEFAULT_SATURATION, stratum_watch
from evalsuite.items._stats import cell_table, item_table

__all__ = [
    "FDR",
    "FLAGS",
    "MIN_IRT_MODELS",
    "ItemAnalysis",
    "ItemRow",
    "ModelRow",
    "SeparationTest",
    "StratumWatch",
    "analyse_items",
]

FLAGS = ("dead", "flaky", "harness-suspect", "negatively-discriminating", "leaky")
"""Every flag an item can carry (the names are a contract: `items --json`)."""
MIN_IRT_MODELS = 8
"""The 2PL model is fitted only when at least this many models ran the version."""
MIN_DEAD_MODELS = 2
"""An item is called dead only when at least this many models scored it."""
FDR = 0.05
"""False discovery rate of the flaky, harness-error and negative-discrimination flags
(Benjamini-Hochberg over items)."""


def _num(value: Any) -> float | None:
    """A finite float, or None (JSON null) for NaN and missing values."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True, slots=True)
class ItemRow:
    """One item's statistics and flags (``items --json``'s ``items[]``; docs/cli.md).

    Rates and statistics are None (JSON null) where they are not defined.
    """

    item_id: str
    stratum: str
    models: int
    planned: int
    solve_rate: float | None
    solve_ci: tuple[float | None, float | None]
    harness_errors: int
    harness_error_rate: float | None
    limits: int
    limit_rate: float | None
    item_rest_r: float | None
    item_rest_ci: tuple[float | None, float | None]
    irt_a: float | None
    irt_a_se: float | None
    irt_b: float | None
    negative_q: float | None
    flip_models: int
    multi_epoch_models: int
    flip_expected: float | None
    epoch_variance: float | None
    noise_variance: float | None
    flaky_q: float | None
    harness_error_q: float | None
    seed_flip_models: tuple[str, ...]
    stratum_watched: bool
    flags: tuple[str, ...]
    """In `FLAGS` order."""
    flag_reasons: dict[str, str]
    """flag -> why the item carries it."""

    def to_dict(self) -> dict[str, object]:
        """The item's JSON (today's field names and order)."""
        return {
            "item_id": self.item_id,
            "stratum": self.stratum,
            "models": self.models,
            "planned": self.planned,
            "solve_rate": self.solve_rate,
            "solve_ci": list(self.solve_ci),
            "harness_errors": self.harness_errors,
            "harness_error_rate": self.harness_error_rate,
            "limits": self.limits,
            "limit_rate": self.limit_rate,
            "item_rest_r": self.item_rest_r,
            "item_rest_ci": list(self.item_rest_ci),
            "irt_a": self.irt_a,
            "irt_a_se": self.irt_a_se,
            "irt_b": self.irt_b,
            "negative_q": self.negative_q,
            "flip_models": self.flip_models,
            "multi_epoch_models": self.multi_epoch_models,
            "flip_expected": self.flip_expected,
            "epoch_variance": self.epoch_variance,
            "noise_variance": self.noise_variance,
            "flaky_q": self.flaky_q,
            "harness_error_q": self.harness_error_q,
            "seed_flip_models": list(self.seed_flip_models),
            "stratum_watched": self.stratum_watched,
            "flags": list(self.flags),
            "flag_reasons": dict(self.flag_reasons),
        }


@dataclass(frozen=True, slots=True)
class ModelRow:
    """One model of the analysis (``items --json``'s ``models[]``)."""

    model: str
    runs: tuple[str, ...]
    items: int
    attempts: int
    mean: float | None
    ability: float | None
    """The 2PL ability (None: not fitted)."""
    ability_sd: float | None
    deterministic: bool

    def to_dict(self) -> dict[str, object]:
        """The model's JSON (today's field names and order)."""
        return {
            "model": self.model,
            "runs": list(self.runs),
            "items": self.items,
            "attempts": self.attempts,
            "mean": self.mean,
            "ability": self.ability,
            "ability_sd": self.ability_sd,
            "deterministic": self.deterministic,
        }


@dataclass(frozen=True, slots=True)
class SeparationTest:
    """The test of equal scores across models in one stratum."""

    method: str
    statistic: float
    df: int
    p_value: float
    alpha: float
    null: str

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "method": self.method,
            "statistic": self.statistic,
            "df": self.df,
            "p_value": self.p_value,
            "alpha": self.alpha,
            "null": self.null,
        }


@dataclass(frozen=True, slots=True)
class StratumWatch:
    """The saturation watch of one stratum (``items --json``'s ``strata[]``)."""

    stratum: str
    items: int
    models: int
    scores: dict[str, float]
    best_model: str
    best_score: float
    threshold: float
    spread: float | None
    noise_floor: float | None
    saturated: bool
    no_separation: bool | None
    separation: SeparationTest | None
    watch: bool
    reasons: tuple[str, ...]
    noise_floor_note: str | None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> StratumWatch:
        """From a `stratum_watch` entry."""
        test = d["separation"]
        return cls(
            stratum=str(d["stratum"]),
            items=int(d["items"]),
            models=int(d["models"]),
            scores={str(k): float(v) for k, v in d["scores"].items()},
            best_model=str(d["best_model"]),
            best_score=float(d["best_score"]),
            threshold=float(d["threshold"]),
            spread=_opt(d["spread"]),
            noise_floor=_opt(d["noise_floor"]),
            saturated=bool(d["saturated"]),
            no_separation=None if d["no_separation"] is None else bool(d["no_separation"]),
            separation=None if test is None else SeparationTest(**test),
            watch=bool(d["watch"]),
            reasons=tuple(d["reasons"]),
            noise_floor_note=d["noise_floor_note"],
        )

    def to_dict(self) -> dict[str, object]:
        """The stratum's JSON (today's field names and order)."""
        return {
            "stratum": self.stratum,
            "items": self.items,
            "models": self.models,
            "scores": dict(self.scores),
            "best_model": self.best_model,
            "best_score": self.best_score,
            "threshold": self.threshold,
            "spread": self.spread,
            "noise_floor": self.noise_floor,
            "saturated": self.saturated,
            "no_separation": self.no_separation,
            "separation": None if self.separation is None else self.separation.to_dict(),
            "watch": self.watch,
            "reasons": list(self.reasons),
            "noise_floor_note": self.noise_floor_note,
        }


@dataclass(slots=True)
class ItemAnalysis:
    """The item analysis of one suite version (see `to_dict` for the JSON contract)."""

    suite: str
    version: str
    level: float
    threshold: float
    runs: list[dict[str, Any]]
    models: tuple[ModelRow, ...]
    items: tuple[ItemRow, ...]
    strata: tuple[StratumWatch, ...]
    irt: dict[str, Any]
    leak_audit: dict[str, Any]
    deterministic: list[str]
    notes: list[str] = field(default_factory=list)
    left_out: list[dict[str, str]] = field(default_factory=list)
    """Stored runs of the version not analysed, each with ``run_id``, ``model``, ``status``
    and ``reason`` (not complete, or invalid without ``--allow-invalid``)."""
    negative_discrimination: dict[str, Any] = field(default_factory=dict)

    @property
    def flag_counts(self) -> dict[str, int]:
        """How many items carry each flag."""
        return {f: sum(f in i.flags for i in self.items) for f in FLAGS}

    @property
    def watched_strata(self) -> list[StratumWatch]:
        """Strata the saturation watch names (saturated, or not separating the models)."""
        return [s for s in self.strata if s.watch]

    def to_dict(self) -> dict[str, Any]:
        """The ``items --json`` payload."""
        return {
            "suite": self.suite,
            "version": self.version,
            "level": self.level,
            "saturation_threshold": self.threshold,
            "runs": self.runs,
            "left_out": self.left_out,
            "models": [m.to_dict() for m in self.models],
            "n_items": len(self.items),
            "flag_counts": self.flag_counts,
            "items": [i.to_dict() for i in self.items],
            "strata": [s.to_dict() for s in self.strata],
            "saturation": {
                "threshold": self.threshold,
                "watched": [s.stratum for s in self.watched_strata],
            },
            "irt": self.irt,
            "negative_discrimination": self.negative_discrimination,
            "leak_audit": self.leak_audit,
            "deterministic_models": self.deterministic,
            "methods": {
                "difficulty": "solve rate: mean over models of each model's mean score on the "
                "item; Wilson interval with the models as units (conservative for fractional "
                "means)",
                "discrimination": "item-rest correlation across models (Pearson; Fisher-z "
                f"interval); 2PL IRT when at least {MIN_IRT_MODELS} models ran the version",
                "flaky": "flips across a model's attempts against each model's own flip rate: "
                f"exact Poisson-binomial tail, Benjamini-Hochberg over items at {FDR}",
                "harness-suspect": "a deterministic agent scored differently at one seed, or "
                "harness errors above the version's rate (one-sided binomial, "
                f"Benjamini-Hochberg at {FDR})",
                "negatively-discriminating": "one-sided test of an item-rest correlation "
                f"below 0 (Fisher z), Benjamini-Hochberg over items at {FDR}; 'too few models "
                "to judge' when a reversed median item would be flagged with power below 0.8",
                "dead": f"every model (at least {MIN_DEAD_MODELS}) scores 1, or every one 0",
                "leaky": "named by the stored leak audit (`evalsuite audit --leaks`)",
                "noise_floor": "root mean square over models of the standard error of a "
                "model's stratum score from run-to-run (epoch) noise (a description)",
                "no_separation": "test of equal scores across models, the items as strata "
                "(generalised Cochran-Mantel-Haenszel mean score statistic, chi-square; "
                "Cochran's Q for one 0/1 attempt per model and item), not rejected at alpha = "
                "1 - level",
            },
            "notes": self.notes,
        }


def _fit_irt(
    cells: pd.DataFrame, items: pd.DataFrame, models: list[str], level: float
) -> IrtFit | None:
    if len(models) < MIN_IRT_MODELS:
        return None
    k = cells.pivot(index="model", columns="item_id", values="k").reindex(
        index=models, columns=items.index
    )
    n = cells.pivot(index="model", columns="item_id", values="n").reindex(
        index=models, columns=items.index
    )
    return fit_2pl(k.fillna(0.0).to_numpy(float), n.fillna(0).to_numpy(float), level=level)


def _irt_summary(fit: IrtFit | None, n_models: int, models: pd.DataFrame) -> dict[str, Any]:
    if fit is None:
        return {
            "fitted": False,
            "min_models": MIN_IRT_MODELS,
            "reason": f"{n_models} model(s) ran this version; the 2PL model is fitted from "
            f"{MIN_IRT_MODELS}: discrimination is the item-rest correlation alone",
        }
    raw = models["mean"].to_numpy(float)
    check: dict[str, Any] = {}
    if np.ptp(raw) > 0 and np.ptp(fit.theta) > 0:
        check = {
            "pearson": float(pearsonr(fit.theta, raw)[0]),
            "spearman": float(spearmanr(fit.theta, raw)[0]),
        }
    return (
        {"fitted": True, "min_models": MIN_IRT_MODELS}
        | fit.describe()
        | {"ability_vs_raw_score": check}
    )


def _dead(row: pd.Series) -> str | None:
    models = int(row["models"])
    if models < MIN_DEAD_MODELS:
        return None
    rate = float(row["solve_rate"])
    if rate == 1.0:
        return f"all {models} models score 1 on every scored attempt"
    if rate == 0.0:
        return f"none of {models} models scores above 0 on any attempt"
    return None


def _suspect(row: pd.Series) -> str | None:
    suspect = []
    if row["seed_flip_models"]:
        suspect.append(
            "deterministic agent(s) " + ", ".join(row["seed_flip_models"]) + " scored "
            "differently at one seed: the environment or grader is not reproducible"
        )
    if row["error_q"] == row["error_q"] and row["error_q"] < FDR:
        suspect.append(
            f"{int(row['errors'])} of {int(row['planned'])} attempts were harness errors "
            f"({row['harness_error_rate']:.1%}), above the version's rate "
            f"(q = {row['error_q']:.3g})"
        )
    return "; ".join(suspect) if suspect else None


def _negative(row: pd.Series, level: float) -> str | None:
    if not (row["negative_q"] == row["negative_q"] and row["negative_q"] < FDR):
        return None
    negative = []
    if row["item_rest_r"] == row["item_rest_r"]:
        negative.append(
            f"item-rest correlation {row['item_rest_r']:.2f} "
            f"[{row['item_rest_ci_lo']:.2f}, {row['item_rest_ci_hi']:.2f}] over "
            f"{int(row['item_rest_n'])} models"
        )
    if row["irt_a"] == row["irt_a"] and row["irt_a"] < 0:
        z = float(norm.ppf(0.5 + level / 2))
        upper = row["irt_a"] + z * row["irt_a_se"]
        negative.append(f"IRT discrimination {row['irt_a']:.2f} (upper bound {upper:.2f})")
    return (
        "; ".join(negative)
        + f" (q = {row['negative_q']:.3g} over the items): stronger models fail it more, "
        "look for a wrong key or a grader bug"
    )


def _flags(
    row: pd.Series, *, level: float, leaks: Mapping[str, str]
) -> tuple[list[str], dict[str, str]]:
    """The item's flags (in `FLAGS` order) and the reason of each."""
    reasons: dict[str, str | None] = {
        "dead": _dead(row),
        "flaky": None,
        "harness-suspect": _suspect(row),
        "negatively-discriminating": _negative(row, level),
        "leaky": leaks.get(str(row.name)),
    }
    if row["flaky_q"] == row["flaky_q"] and row["flaky_q"] < FDR:
        reasons["flaky"] = (
            f"flips across attempts in {int(row['flip_models'])} of "
            f"{int(row['multi_epoch_models'])} models where {row['flip_expected']:.2f} are "
            f"expected from each model's own flip rate (q = {row['flaky_q']:.3g}); epoch "
            f"variance {row['within_var']:.3f} against the models' usual {row['noise_var']:.3f}"
        )
    given = {f: r for f, r in reasons.items() if r is not None}
    return [f for f in FLAGS if f in given], given


def analyse_items(  # noqa: PLR0913 - the inputs of one analysis, each named
    attempts: pd.DataFrame,
    *,
    suite: str,
    version: str,
    runs: Sequence[Mapping[str, Any]] = (),
    deterministic: Collection[str] = (),
    leaks: Mapping[str, str] | None = None,
    leak_audit: Mapping[str, Any] | None = None,
    level: float = 0.95,
    threshold: float = DEFAULT_SATURATION,
) -> ItemAnalysis:
    """The item analysis of one suite version from its attempts.

    Args:
        attempts: Attempts of every run (columns `evalsuite.items._stats.ITEM_COLUMNS`, with
            ``model`` the run's model; runs of one model are pooled as more attempts).
        suite: Suite name.
        version: Frozen version.
        runs: The runs read (shown in the output; ``run_id``, ``model`` and so on).
        deterministic: Models whose attempts at one seed must agree (reference agents).
        leaks: item id -> reason, from the stored leak audit.
        leak_audit: The stored leak audit's status (shown in the output).
        level: Confidence level of every interval.
        threshold: Saturation threshold of the best model's stratum score.
    """
    cells = cell_table(attempts, deterministic)
    items = item_table(cells, level=level)
    scored = cells.loc[cells["n"] > 0]
    per_model = scored.groupby("model").agg(
        items=("item_id", "size"), attempts=("n", "sum"), mean=("mean", "mean")
    )
    model_names = [str(m) for m in per_model.index]
    fit = _fit_irt(cells, items, model_names, level)
    items["irt_a"] = fit.a if fit is not None else np.nan
    items["irt_a_se"] = fit.a_se if fit is not None else np.nan
    items["irt_b"] = fit.b if fit is not None else np.nan
    rest_r = items["item_rest_r"].to_numpy(float)
    p_neg, items["negative_q"] = negative_p_values(rest_r, items["item_rest_n"].to_numpy(float))
    negative = judgement(rest_r, p_neg, models=len(model_names), fdr=FDR)
    strata = stratum_watch(cells, threshold, alpha=1 - level)
    watched = {s["stratum"] for s in strata if s["watch"]}
    leaks = leaks or {}
    rows: list[ItemRow] = []
    for item_id, row in items.iterrows():
        flags, reasons = _flags(row, level=level, leaks=leaks)
        rows.append(
            ItemRow(
                item_id=str(item_id),
                stratum=str(row["stratum"]),
                models=int(row["models"]),
                planned=int(row["planned"]),
                solve_rate=_num(row["solve_rate"]),
                solve_ci=(_num(row["solve_ci_lo"]), _num(row["solve_ci_hi"])),
                harness_errors=int(row["errors"]),
                harness_error_rate=_num(row["harness_error_rate"]),
                limits=int(row["limits"]),
                limit_rate=_num(row["limit_rate"]),
                item_rest_r=_num(row["item_rest_r"]),
                item_rest_ci=(_num(row["item_rest_ci_lo"]), _num(row["item_rest_ci_hi"])),
                irt_a=_num(row["irt_a"]),
                irt_a_se=_num(row["irt_a_se"]),
                irt_b=_num(row["irt_b"]),
                negative_q=_num(row["negative_q"]),
                flip_models=int(row["flip_models"]),
                multi_epoch_models=int(row["multi_epoch_models"]),
                flip_expected=_num(row["flip_expected"]),
                epoch_variance=_num(row["within_var"]),
                noise_variance=_num(row["noise_var"]),
                flaky_q=_num(row["flaky_q"]),
                harness_error_q=_num(row["error_q"]),
                seed_flip_models=tuple(row["seed_flip_models"]),
                stratum_watched=str(row["stratum"]) in watched,
                flags=tuple(flags),
                flag_reasons=reasons,
            )
        )
    models_out: list[ModelRow] = []
    runs_by_model: dict[str, list[str]] = {}
    for r in runs:
        runs_by_model.setdefault(str(r["model"]), []).append(str(r["run_id"]))
    for i, (model, m) in enumerate(per_model.iterrows()):
        models_out.append(
            ModelRow(
                model=str(model),
                runs=tuple(runs_by_model.get(str(model), [])),
                items=int(m["items"]),
                attempts=int(m["attempts"]),
                mean=_num(m["mean"]),
                ability=_num(fit.theta[i]) if fit is not None else None,
                ability_sd=_num(fit.theta_sd[i]) if fit is not None else None,
                deterministic=str(model) in set(deterministic),
            )
        )
    notes = []
    if any(len(v) > 1 for v in runs_by_model.values()):
        notes.append(
            "models with several runs are pooled: their runs' attempts count as more epochs"
        )
    for s in strata:
        notes += [f"stratum {s['stratum']}: {reason}" for reason in s["reasons"]]
    if not negative["judged"]:
        notes.append(f"negatively-discriminating: {negative['reason']}")
    if fit is not None and not fit.converged:
        notes.append(
            f"the 2PL fit did not converge in {fit.iterations} iterations (largest last change "
            f"{fit.max_change:.2g}): read its parameters with care"
        )
    return ItemAnalysis(
        suite=suite,
        version=version,
        level=level,
        threshold=threshold,
        runs=[dict(r) for r in runs],
        models=tuple(models_out),
        items=tuple(rows),
        strata=tuple(StratumWatch.from_dict(s) for s in strata),
        irt=_irt_summary(fit, len(model_names), per_model),
        leak_audit=dict(leak_audit or {"status": "not given"}),
        deterministic=sorted(set(deterministic) & set(model_names)),
        notes=notes,
        negative_discrimination=negative | {"fdr": FDR},
    )
