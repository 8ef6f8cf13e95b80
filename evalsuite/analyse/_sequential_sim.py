"""Simulations behind docs/design/sequential.md: suites, comparisons, fixed baselines.

Every function takes an explicit `np.random.Generator`; `benchmarks/bench_adaptive.py` and
`tests/analyse/test_sequential_sim.py` repeat them. A suite is a list of items, each either a
true solve rate (simulated) or an array of recorded trials (resampled with replacement).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from scipy import stats

from evalsuite.analyse._adaptive_final import final_paired_test
from evalsuite.analyse._sequential import SequentialComparison, SequentialDesign

__all__ = [
    "SUITES",
    "ComparisonOutcome",
    "Suite",
    "fixed_mde",
    "make_suite",
    "simulate_comparison",
]

FloatArray = npt.NDArray[np.float64]

SUITES = (
    "beta(0.5,0.5) x100",
    "beta(0.5,0.5) x300",
    "beta(2,2) x100",
    "beta(2,2) x300",
    "60% always/never x100",
    "tau-bench airline x50",
)
"""The suites of the benchmark and the acceptance checks (issue 31)."""


@dataclass(frozen=True, slots=True)
class Suite:
    """A suite's items: true solve rates, and (resampled suites) the recorded trials."""

    name: str
    p: FloatArray
    trials: tuple[FloatArray, ...] | None = None

    @property
    def n_items(self) -> int:
        """Items in the suite."""
        return int(self.p.size)

    def draw(self, epochs: int, rng: np.random.Generator, lift: float = 0.0) -> FloatArray:
        """An items x epochs table of 0/1 scores.

        `lift` turns each failure into a success with that probability (a candidate whose
        solve rates are ``p + lift (1 - p)``).
        """
        if self.trials is None:
            y = (rng.random((self.n_items, epochs)) < self.p[:, None]).astype(float)
        else:
            y = np.stack([rng.choice(t, epochs) for t in self.trials]).astype(float)
        if lift > 0:
            y = np.maximum(y, (rng.random(y.shape) < lift).astype(float))
        return y


def make_suite(
    name: str, rng: np.random.Generator, tau_trials: Sequence[FloatArray] | None = None
) -> Suite:
    """One of `SUITES`: Beta difficulties drawn from `rng`, or the tau-bench trials given."""
    if name.startswith("tau-bench"):
        if tau_trials is None:
            raise ValueError("the tau-bench suite needs its trials")
        trials = tuple(np.asarray(t, dtype=float) for t in tau_trials)
        return Suite(name, np.array([t.mean() for t in trials]), trials)
    n = int(name.rsplit("x", 1)[1])
    if name.startswith("60%"):
        p = rng.beta(2.0, 2.0, n)
        u = rng.random(n)
        p[u < 0.3] = 0.0
        p[(u >= 0.3) & (u < 0.6)] = 1.0
        return Suite(name, p)
    a = 0.5 if "0.5" in name else 2.0
    return Suite(name, rng.beta(a, a, n))


def fixed_mde(suite: Suite, epochs: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """MDE of the full fixed paired design with equal models: ``(z_{1-a/2} + z_power) se``.

    ``se^2 = 2 mean_j p_j (1 - p_j) / (E N)`` (both runs E epochs, no spread of true
    differences between items).
    """
    v = float(np.mean(suite.p * (1 - suite.p)))
    z = stats.norm.isf(alpha / 2) + stats.norm.ppf(power)
    return float(z * math.sqrt(2 * v / (epochs * suite.n_items)))


@dataclass(frozen=True, slots=True)
class ComparisonOutcome:
    """One simulated comparison: the full fixed run's verdict and the sequential one."""

    fixed: str
    sequential: str
    calls: int
    budget: int
    truth: float
    """The true mean difference of the suite's items."""
    look: int
    """The look the sequential run stopped at (1-based)."""
    looks: int
    """The looks its design plans."""

    @property
    def interim(self) -> bool:
        """The sequential run stopped at a look before the last."""
        return self.look < self.looks

    @property
    def early(self) -> bool:
        """The sequential run stopped before the full run's calls."""
        return self.calls < self.budget

    @property
    def agree(self) -> bool:
        """Same verdict (``futile`` counts as ``undecided``)."""
        seq = "undecided" if self.sequential == "futile" else self.sequential
        return seq == self.fixed


def simulate_comparison(
    suite: Suite,
    design: SequentialDesign,
    rng: np.random.Generator,
    *,
    delta: float = 0.0,
    baseline_epochs: int | None = None,
) -> ComparisonOutcome:
    """The full fixed run's paired t and the sequential comparison, on the same attempts.

    The baseline's stored run has `baseline_epochs` (default the design's) epochs per item;
    the candidate's full run is one items x E table; the sequential comparison takes item j's
    attempts from row j in order (first its first-stage epochs, then the rest), so that when
    it extends every item it holds the full run's data. ``delta`` is the true mean
    difference: the candidate lifts failures by ``delta / (1 - mean p)``.
    """
    e = design.epochs
    mean_p = float(suite.p.mean())
    lift = delta / (1 - mean_p) if delta > 0 else 0.0
    base = suite.draw(baseline_epochs or e, rng).mean(axis=1)
    table = suite.draw(e, rng, lift=lift)
    n = suite.n_items
    fixed = final_paired_test(
        table.mean(axis=1) - base, np.full(n, 1 / n), alpha=design.alpha, margin=design.margin
    ).verdict
    seq = SequentialComparison(base, design, rng=rng)
    used = np.zeros(n, dtype=np.int64)
    while (requests := seq.next_round()) is not None:
        scores: list[list[float | None]] = []
        for item, k in requests:
            scores.append(table[item, used[item] : used[item] + k].tolist())
            used[item] += k
        seq.observe(scores)
    truth = float(np.mean(suite.p + lift * (1 - suite.p) - suite.p))
    planned = int(design.look_sizes(n).size)
    return ComparisonOutcome(
        fixed, str(seq.verdict), seq.calls, seq.budget, truth, len(seq.looks), planned
    )
