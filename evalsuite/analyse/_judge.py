"""Auditing a model judge against human labels: agreement, position and length bias (issue 33).

A judge is a grader like any other; these are the measurements `docs/design/judge-audit.md`
gates its scores on. Every function takes one row per judged attempt, with the item it
belongs to, and every interval is a bootstrap over items (an item's attempts stay together:
the item is the unit of analysis, docs/methods.md), drawn from the caller's generator.

- `agreement`: Cohen's kappa (binary or categorical labels; statsmodels' `cohens_kappa` for
  the estimate) or Krippendorff's alpha (ordinal labels; the `krippendorff` package), with
  the raw agreement, the base rate and, for binary labels, the judge's true- and
  false-positive rates and the confusion matrix. Raw agreement misleads: at a 90/10 base rate
  a judge that agrees 90% of the time can have a kappa of about 0.44.
- `position_consistency`: a pairwise judge asked both orders of each pair; a verdict that
  flips with the order is a tie (Zheng et al. 2023, "Judging LLM-as-a-Judge with MT-Bench and
  Chatbot Arena", NeurIPS: GPT-4 kept its verdict in about 65% of swaps).
- `length_bias`: the judge's score against the answer's length with the human label held
  fixed (least squares with item-clustered standard errors); Dubois et al. 2024,
  "Length-Controlled AlpacaEval", COLM.
- `shared_family`: the judge and a judged model from the same family (self-preference;
  Panickssery et al. 2024, "LLM Evaluators Recognize and Favor Their Own Generations").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalsuite.analyse._table import Interval
from evalsuite.errors import UsageError

__all__ = [
    "Agreement",
    "LengthBias",
    "PositionConsistency",
    "agreement",
    "length_bias",
    "model_family",
    "position_consistency",
    "shared_family",
]

Scale = Literal["binary", "categorical", "ordinal"]
N_BOOT = 2000
"""Item-bootstrap resamples for the agreement and consistency intervals."""


def _item_codes(items: Sequence[str], n: int, what: str) -> npt.NDArray[np.intp]:
    if len(items) != n:
        raise UsageError(f"{what}: {len(items)} item ids for {n} labels; give one per label")
    _, codes = np.unique(np.asarray(items, dtype=object).astype(str), return_inverse=True)
    return codes.astype(np.intp)


def _resample_rows(codes: npt.NDArray[np.intp], rng: np.random.Generator) -> npt.NDArray[np.intp]:
    """Row indices of one item-bootstrap resample: whole items drawn with replacement."""
    n_items = int(codes.max()) + 1
    order = np.argsort(codes, kind="stable")
    starts = np.searchsorted(codes[order], np.arange(n_items))
    ends = np.searchsorted(codes[order], np.arange(n_items), side="right")
    drawn = rng.integers(0, n_items, n_items)
    return np.concatenate([order[starts[i] : ends[i]] for i in drawn])


def _percentile(values: npt.NDArray[np.float64], level: float) -> Interval:
    finite = values[np.isfinite(values)]
    if finite.size < 0.9 * values.size:  # mostly undefined resamples: no honest interval
        return Interval(math.nan, math.nan)
    lo, hi = np.quantile(finite, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(lo), float(hi))


def _kappa_from_table(table: npt.NDArray[np.float64]) -> float:
    """Cohen's kappa of a confusion table (rows: human, columns: judge)."""
    total = table.sum()
    if total == 0:
        return math.nan
    observed = np.trace(table) / total
    expected = float((table.sum(axis=0) * table.sum(axis=1)).sum()) / total**2
    return math.nan if expected == 1 else float((observed - expected) / (1 - expected))


@dataclass(frozen=True, slots=True)
class Agreement:
    """How well a judge agrees with human labels of the same attempts."""

    statistic: Literal["cohen_kappa", "krippendorff_alpha"]
    value: float
    interval: Interval
    """Item-bootstrap percentile interval at `level`."""
    level: float
    n_labels: int
    n_items: int
    raw_agreement: float
    categories: tuple[str, ...]
    confusion: tuple[tuple[int, ...], ...]
    """Counts: rows are the human label, columns the judge's, in `categories` order."""
    base_rate: float | None
    """Binary labels: the share of attempts the humans labelled positive (the last category)."""
    true_positive_rate: float | None
    false_positive_rate: float | None
    seed_note: str
    """How the interval was drawn (resamples; the generator is the caller's, recorded there)."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "statistic": self.statistic,
            "value": self.value,
            "interval": [self.interval.low, self.interval.high],
            "level": self.level,
            "n_labels": self.n_labels,
            "n_items": self.n_items,
            "raw_agreement": self.raw_agreement,
            "categories": list(self.categories),
            "confusion": [list(row) for row in self.confusion],
            "base_rate": self.base_rate,
            "true_positive_rate": self.true_positive_rate,
            "false_positive_rate": self.false_positive_rate,
            "interval_method": self.seed_note,
        }


def agreement(  # noqa: PLR0913 - the labels, their items and how to summarise them
    human: Sequence[object],
    judge: Sequence[object],
    items: Sequence[str],
    *,
    scale: Scale,
    rng: np.random.Generator,
    level: float = 0.95,
    n_boot: int = N_BOOT,
    order: Sequence[object] | None = None,
) -> Agreement:
    """Agreement of `judge` with `human` labels, one pair per attempt.

    Args:
        human: The human label of each attempt.
        judge: The judge's label of the same attempts.
        items: The item of each attempt (the bootstrap resamples items).
        scale: ``binary`` or ``categorical`` (Cohen's kappa) or ``ordinal`` (Krippendorff's
            alpha, ordinal metric; labels must be numbers or follow `order`).
        rng: The generator of the item bootstrap.
        level: Confidence level of the interval.
        n_boot: Bootstrap resamples.
        order: The categories in order (binary: negative first; ordinal: low to high).
            Default: the labels sorted.

    Raises:
        UsageError: unequal lengths, fewer than two items, a label outside `order`, or a
            binary scale with more than two categories.
    """
    n = len(human)
    if len(judge) != n:
        raise UsageError(f"{n} human labels but {len(judge)} judge labels; give one pair each")
    if n == 0:
        raise UsageError("no labelled attempts: label some attempts first")
    codes = _item_codes(items, n, "agreement")
    if int(codes.max()) + 1 < 2:
        raise UsageError("agreement needs labels on at least two items")
    seen = sorted({str(v) for v in [*human, *judge]}, key=_sort_key)
    categories = tuple(str(c) for c in order) if order is not None else tuple(seen)
    unknown = sorted(set(seen) - set(categories))
    if unknown:
        raise UsageError(f"labels {unknown} are not among the declared categories {categories}")
    if scale == "binary" and len(categories) > 2:
        raise UsageError(f"a binary scale has two labels, these have {len(categories)}")
    index = {c: k for k, c in enumerate(categories)}
    h = np.array([index[str(v)] for v in human], dtype=np.intp)
    j = np.array([index[str(v)] for v in judge], dtype=np.intp)
    k = len(categories)
    table = np.zeros((k, k), dtype=np.int64)
    np.add.at(table, (h, j), 1)
    value = _statistic(h, j, k, scale)
    boot = np.empty(n_boot)
    for b in range(n_boot):
        rows = _resample_rows(codes, rng)
        boot[b] = _statistic(h[rows], j[rows], k, scale, fast=True)
    binary = scale == "binary" and k == 2
    positives = table[1].sum() if binary else 0
    negatives = table[0].sum() if binary else 0
    return Agreement(
        statistic="krippendorff_alpha" if scale == "ordinal" else "cohen_kappa",
        value=value,
        interval=_percentile(boot, level),
        level=level,
        n_labels=n,
        n_items=int(codes.max()) + 1,
        raw_agreement=float(np.trace(table) / n),
        categories=categories,
        confusion=tuple(tuple(int(x) for x in row) for row in table),
        base_rate=float(positives / n) if binary else None,
        true_positive_rate=float(table[1, 1] / positives) if binary and positives else None,
        false_positive_rate=float(table[0, 1] / negatives) if binary and negatives else None,
        seed_note=f"percentile of {n_boot} item-bootstrap resamples",
    )


def _sort_key(label: str) -> tuple[int, float, str]:
    try:
        return (0, float(label), label)
    except ValueError:
        return (1, 0.0, label)


def _statistic(
    h: npt.NDArray[np.intp], j: npt.NDArray[np.intp], k: int, scale: Scale, *, fast: bool = False
) -> float:
    if scale == "ordinal":
        import krippendorff

        data = np.vstack([h, j]).astype(np.float64)
        if np.unique(data).size < 2:
            return math.nan
        return float(
            krippendorff.alpha(
                reliability_data=data,
                level_of_measurement="ordinal",
                value_domain=list(range(k)),
            )
        )
    table = np.zeros((k, k), dtype=np.float64)
    np.add.at(table, (h, j), 1.0)
    if fast:
        return _kappa_from_table(table)
    from statsmodels.stats.inter_rater import cohens_kappa

    if math.isnan(_kappa_from_table(table)):  # undefined: one category only
        return math.nan
    return float(cohens_kappa(table, return_results=True).kappa)


@dataclass(frozen=True, slots=True)
class PositionConsistency:
    """A pairwise judge asked both orders of each pair."""

    consistency: float
    """Share of pairs whose verdict names the same answer in both orders."""
    interval: Interval
    level: float
    n_pairs: int
    resolved: tuple[str, ...]
    """The verdict per pair: ``first``/``second`` (the answer shown first in the first
    order), or ``tie`` when the verdict flipped with the order or was a tie."""

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "consistency": self.consistency,
            "interval": [self.interval.low, self.interval.high],
            "level": self.level,
            "n_pairs": self.n_pairs,
            "ties_from_flips": sum(1 for r in self.resolved if r == "tie"),
        }


Verdict = Literal["first", "second", "tie"]


def position_consistency(
    forward: Sequence[Verdict],
    backward: Sequence[Verdict],
    items: Sequence[str],
    *,
    rng: np.random.Generator,
    level: float = 0.95,
    n_boot: int = N_BOOT,
) -> PositionConsistency:
    """Verdicts on each pair in both orders; a verdict that flips with the order is a tie.

    `forward[i]` names the winner as shown (``first``/``second``) when answer A was shown
    first; `backward[i]` the same when B was. Consistent: forward ``first`` with backward
    ``second`` (A both times), forward ``second`` with backward ``first`` (B both times), or
    a tie both times.
    """
    n = len(forward)
    if len(backward) != n:
        raise UsageError(f"{n} forward verdicts but {len(backward)} backward; one pair each")
    if n == 0:
        raise UsageError("no pairs judged in both orders")
    allowed = {"first", "second", "tie"}
    bad = sorted({str(v) for v in [*forward, *backward]} - allowed)
    if bad:
        raise UsageError(f"verdicts {bad} are not first, second or tie")
    codes = _item_codes(items, n, "position_consistency")
    swap = {"first": "second", "second": "first", "tie": "tie"}
    same = np.array([f == swap[b] for f, b in zip(forward, backward, strict=True)])
    resolved = tuple(f if ok else "tie" for f, ok in zip(forward, same, strict=True))
    boot = np.empty(n_boot)
    for b in range(n_boot):
        boot[b] = same[_resample_rows(codes, rng)].mean()
    return PositionConsistency(
        consistency=float(same.mean()),
        interval=_percentile(boot, level),
        level=level,
        n_pairs=n,
        resolved=resolved,
    )


@dataclass(frozen=True, slots=True)
class LengthBias:
    """The judge's score per doubling of the answer's length, at a fixed human label."""

    slope_per_doubling: float
    interval: Interval
    level: float
    p_value: float
    n: int
    flagged: bool
    """The interval excludes 0 and the slope is at least `min_effect` in size."""
    min_effect: float

    def to_dict(self) -> dict[str, object]:
        """JSON form."""
        return {
            "slope_per_doubling": self.slope_per_doubling,
            "interval": [self.interval.low, self.interval.high],
            "level": self.level,
            "p_value": self.p_value,
            "n": self.n,
            "flagged": self.flagged,
            "min_effect": self.min_effect,
        }


def length_bias(
    judge_score: Sequence[float],
    length: Sequence[float],
    human: Sequence[object],
    items: Sequence[str],
    *,
    level: float = 0.95,
    min_effect: float = 0.02,
) -> LengthBias:
    """Regress the judge's score on log2(length) with one intercept per human label.

    Ordinary least squares with standard errors clustered by item (statsmodels). A judge
    without length bias has slope 0 once the human label is held fixed: longer correct
    answers are not better correct answers.
    """
    import statsmodels.api as sm

    n = len(judge_score)
    if not (len(length) == len(human) == n):
        raise UsageError("judge scores, lengths and human labels differ in number; one each")
    lengths = np.asarray(length, dtype=np.float64)
    if n < 3 or np.any(lengths <= 0):
        raise UsageError("length bias needs at least 3 attempts with positive answer lengths")
    codes = _item_codes(items, n, "length_bias")
    labels = np.asarray([str(v) for v in human], dtype=object)
    dummies = [(labels == c).astype(np.float64) for c in sorted(set(labels))]
    x = np.column_stack([np.log2(lengths), *dummies])
    y = np.asarray(judge_score, dtype=np.float64)
    fit = sm.OLS(y, x).fit(cov_type="cluster", cov_kwds={"groups": codes})
    lo, hi = fit.conf_int(alpha=1 - level)[0]
    slope = float(fit.params[0])
    flagged = bool((lo > 0 or hi < 0) and abs(slope) >= min_effect)
    return LengthBias(
        slope_per_doubling=slope,
        interval=Interval(float(lo), float(hi)),
        level=level,
        p_value=float(fit.pvalues[0]),
        n=n,
        flagged=flagged,
        min_effect=min_effect,
    )


_FAMILIES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("openai", ("gpt-", "o1", "o3", "o4", "chatgpt", "davinci")),
    ("anthropic", ("claude",)),
    ("google", ("gemini", "gemma", "palm", "bison")),
    ("meta", ("llama",)),
    ("mistral", ("mistral", "mixtral", "codestral", "ministral")),
    ("alibaba", ("qwen",)),
    ("deepseek", ("deepseek",)),
    ("xai", ("grok",)),
    ("cohere", ("command",)),
    ("microsoft", ("phi-",)),
)


def model_family(model: str) -> str | None:
    """The family of an inspect model name (``provider/model``), or None when unknown.

    Told from the model's own name, not the provider serving it (``openrouter/anthropic/
    claude-3.5`` and ``bedrock/anthropic.claude-3`` are both ``anthropic``).
    """
    name = model.lower()
    for family, prefixes in _FAMILIES:
        for part in name.replace(".", "/").split("/"):
            if part == family or any(part.startswith(p) for p in prefixes):
                return family
    return None


def shared_family(judge: str, judged: str) -> bool:
    """Whether a judge and a judged model belong to one family (self-preference risk)."""
    family = model_family(judge)
    return family is not None and family == model_family(judged)
