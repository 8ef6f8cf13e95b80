"""An adaptive run's stopping rule and budget (docs/design/adaptive.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalsuite.analyse._adaptive_final import FINAL_METHOD
from evalsuite.analyse._confseq import BET_RULES, BETTING_METHOD, TARGET_METHOD
from evalsuite.errors import UsageError

__all__ = ["DEFAULT_MAX_EPOCHS", "AdaptiveRule"]

DEFAULT_MAX_EPOCHS = 5
"""Budget when none is given: the attempts of a fixed 5-epoch run (N items x 5)."""


@dataclass(frozen=True, slots=True)
class AdaptiveRule:
    """An adaptive run's stopping rule and budget, fixed before the run starts.

    Attributes:
        target_halfwidth: stop when the suite score's interval is at most +-H (or None).
        versus: run id of a stored run to compare with (or None); stop at a verdict.
        margin: with `versus`: a difference inside +-margin is "no difference".
        max_epochs: budget as attempts of a fixed run: at most ``max_epochs x items`` calls.
        max_calls: budget in attempts (model calls); the smaller budget applies.
        alpha: 1 - confidence level of the confidence sequence.
        seed: seed of the item order and the draws (recorded with the run).
        mix: gamma, the share of each round drawn by deployment weight alone.
        round_share: draws per round after the pilot, as a share of the items.
        prior_strength: k of the item predictions (sum + k/2) / (attempts + k).
        final_share: with `versus`: the share of alpha spent by the final paired t at the
            budget; the confidence sequence spends the rest (a union bound:
            ``alpha_sequence + alpha_final = alpha``).
        bets: the confidence sequence's bets: ``plugin`` (Waudby-Smith & Ramdas' predictable
            plug-in schedule) or ``target`` (tuned to reach `target_halfwidth` soonest); None:
            ``target`` for a --target-halfwidth run, ``plugin`` with --versus.
        truncation: c, the cap on every bet's share of the capital at risk (< 1).
        estimand: with `target_halfwidth`: what the interval covers, ``suite_items`` (the
            suite's own items) or ``item_population`` (the population they were drawn
            from); `run --adaptive` runs the few-stage design for it (`_target_design`).
    """

    target_halfwidth: float | None = None
    versus: str | None = None
    margin: float = 0.02
    max_epochs: int | None = None
    max_calls: int | None = None
    alpha: float = 0.05
    seed: int = 0
    mix: float = 0.3
    round_share: float = 0.25
    prior_strength: float = 1.0
    final_share: float = 0.9
    bets: str | None = None
    truncation: float = 0.9
    estimand: str = "suite_items"

    def __post_init__(self) -> None:
        if self.target_halfwidth is None and self.versus is None:
            raise UsageError(
                "--adaptive needs a target: --target-halfwidth H (stop when the interval is "
                "at most +-H) or --versus RUN (stop at a verdict against a stored run)"
            )
        if self.target_halfwidth is not None and not 0 < self.target_halfwidth < 0.5:
            raise UsageError(
                f"--target-halfwidth must be in (0, 0.5), e.g. 0.03 (got {self.target_halfwidth})"
            )
        if not 0 <= self.margin < 1:
            raise UsageError(f"--margin must be in [0, 1), e.g. 0.02 (got {self.margin})")
        if self.max_epochs is not None and self.max_epochs < 1:
            raise UsageError(f"--max-epochs must be at least 1 (got {self.max_epochs})")
        if self.max_calls is not None and self.max_calls < 1:
            raise UsageError(f"--max-calls must be at least 1 (got {self.max_calls})")
        if self.estimand not in ("suite_items", "item_population"):
            raise UsageError(
                f"--estimand must be items (the suite's own items) or population (the "
                f"population they were drawn from) (got {self.estimand})"
            )
        if self.estimand != "suite_items" and self.target_halfwidth is None:
            raise UsageError(
                "--estimand population applies to --target-halfwidth; --versus compares on "
                "the item population already (docs/design/sequential.md)"
            )
        self._check_settings()

    def _check_settings(self) -> None:
        """The plan and bet settings (the flags are checked in `__post_init__`)."""
        if not 0 < self.alpha < 1:
            raise UsageError(f"alpha must be in (0, 1) (got {self.alpha})")
        if not 0 < self.mix <= 1:
            raise UsageError(f"mix must be in (0, 1] (got {self.mix})")
        if not self.prior_strength > 0:
            raise UsageError(f"prior_strength must be positive (got {self.prior_strength})")
        if not 0 < self.truncation < 1:
            raise UsageError(f"truncation must be in (0, 1) (got {self.truncation})")
        if self.bets is not None and self.bets not in BET_RULES:
            raise UsageError(f"bets must be one of {', '.join(BET_RULES)} (got {self.bets})")
        if self.bet_rule == "target" and self.target_halfwidth is None:
            raise UsageError("bets 'target' need --target-halfwidth (the width they aim at)")
        if not 0 < self.final_share < 1:
            raise UsageError(f"final_share must be in (0, 1) (got {self.final_share})")
        if not self.round_share > 0:
            raise UsageError(f"round_share must be positive (got {self.round_share})")

    @property
    def bet_rule(self) -> str:
        """The bets the run's sequence places (`bets`, or its default)."""
        if self.bets is not None:
            return self.bets
        return "target" if self.versus is None else "plugin"

    @property
    def alpha_final(self) -> float:
        """With `versus`: the alpha of the final paired t at the budget."""
        return self.alpha * self.final_share

    @property
    def alpha_sequence(self) -> float:
        """With `versus`: the alpha of the confidence sequence (alpha - `alpha_final`)."""
        return self.alpha - self.alpha_final

    @property
    def method(self) -> str:
        """The method the run's intervals and verdict use."""
        base = BETTING_METHOD if self.bet_rule == "plugin" else TARGET_METHOD
        if self.versus is None:
            return base
        return f"{base}_wor+{FINAL_METHOD}"

    @property
    def full_epochs(self) -> int:
        """The epochs of the full fixed run on every item: ``max_epochs`` (default 5)."""
        return self.max_epochs or DEFAULT_MAX_EPOCHS

    def budget(self, n_items: int) -> int:
        """Most attempts the run may make: the smaller of the two budgets (default 5 x N)."""
        limits = []
        if self.max_epochs is not None:
            limits.append(self.max_epochs * n_items)
        if self.max_calls is not None:
            limits.append(self.max_calls)
        return min(limits) if limits else DEFAULT_MAX_EPOCHS * n_items

    def to_dict(self) -> dict[str, Any]:
        """The rule as recorded in the run's spec and the holdout ledger."""
        out: dict[str, Any] = {
            "target_halfwidth": self.target_halfwidth,
            "versus": self.versus,
            "margin": self.margin,
            "max_epochs": self.max_epochs,
            "max_calls": self.max_calls,
            "alpha": self.alpha,
            "seed": self.seed,
            "mix": self.mix,
            "round_share": self.round_share,
            "prior_strength": self.prior_strength,
            "bets": self.bet_rule,
            "truncation": self.truncation,
            "method": self.method,
        } | (
            {
                "final_share": self.final_share,
                "alpha_sequence": self.alpha_sequence,
                "alpha_final": self.alpha_final,
            }
            if self.versus is not None
            else {}
        )
        return out | self._estimand_field()

    def _estimand_field(self) -> dict[str, Any]:
        """With a target half-width: the estimand its interval covers (issue 31)."""
        return {"estimand": self.estimand} if self.target_halfwidth is not None else {}

    def describe(self) -> str:
        """One line: the stopping rule and budget."""
        target = (
            f"interval at most +-{self.target_halfwidth:g}"
            if self.target_halfwidth is not None
            else f"a verdict against run {self.versus} (margin {self.margin:g})"
        )
        split = (
            f" (sequence {self.alpha_sequence:g}, final paired t {self.alpha_final:g})"
            if self.versus is not None
            else ""
        )
        return f"stop at {target}; confidence {1 - self.alpha:.0%}{split}; method {self.method}"
