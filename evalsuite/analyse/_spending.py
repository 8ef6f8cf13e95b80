"""Group-sequential boundaries: Lan-DeMets alpha spending and anytime-valid alternatives.

Two-sided, symmetric boundaries on the Z scale for looks at information fractions
``0 < t_1 < ... < t_K = 1`` (docs/design/sequential.md):

- `spending`: the Lan-DeMets (1983) spending functions. O'Brien-Fleming type, per side
  ``alpha/2 (t) = 2 - 2 Phi(z_{1-alpha/4} / sqrt(t))``; Pocock type
  ``alpha(t) = alpha log(1 + (e - 1) t)``.
- `gs_boundaries`: the critical values ``c_k`` with ``P_0(|Z_j| < c_j, j < k; |Z_k| >= c_k)
  = alpha(t_k) - alpha(t_{k-1})``, computed by the recursive numerical integration of
  Armitage, McPherson & Rowe (1969) on the score scale ``S_k = Z_k sqrt(t_k)``, whose
  increments are independent ``N(0, t_k - t_{k-1})`` (Jennison & Turnbull 2000, ch. 19).
- `constant_boundary`: the classical Pocock (``c_k = C``) and O'Brien-Fleming
  (``c_k = C sqrt(K / k)``) boundaries of Jennison & Turnbull (2000), Tables 2.1 and 2.3,
  for equally spaced looks: the constant C that spends exactly alpha.
- `mixture_cs_boundary`: the two-sided normal-mixture boundary of the asymptotic confidence
  sequence of Waudby-Smith, Arnold, Wu, Howard & Ramdas ("Time-uniform central limit theory
  and asymptotic confidence sequences", Annals of Statistics 2024, Theorem 2.2), valid at
  every sample size at once, expressed on the same Z scale.

The integration uses scipy's normal distribution and root finder; the tests compare the
boundaries with the published tables and with a Monte-Carlo check of the alpha they spend.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt
from scipy import optimize, stats

from evalsuite.errors import UsageError

__all__ = [
    "SPENDING_SHAPES",
    "Shape",
    "constant_boundary",
    "crossing_probability",
    "gs_boundaries",
    "mixture_cs_boundary",
    "spending",
]

Shape = Literal["obrien_fleming", "pocock"]
SPENDING_SHAPES: tuple[Shape, ...] = ("obrien_fleming", "pocock")

_GRID = 801
"""Points of the integration grid over each look's continuation region."""


def _pdf(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The standard normal density (numpy's exp: scipy's overhead dominates on a grid)."""
    out: npt.NDArray[np.float64] = np.exp(-0.5 * x * x) / math.sqrt(2 * math.pi)
    return out


def _check_times(times: npt.ArrayLike) -> npt.NDArray[np.float64]:
    t = np.asarray(times, dtype=float)
    if t.ndim != 1 or t.size == 0:
        raise UsageError("group-sequential boundaries need at least one look")
    if (np.diff(t) <= 0).any() or t[0] <= 0 or t[-1] > 1 + 1e-12:
        raise UsageError("information fractions must increase strictly within (0, 1]")
    return t


def _check_alpha(alpha: float) -> None:
    if not 0 < alpha < 1:
        raise UsageError(f"alpha must be in (0, 1) (got {alpha})")


def spending(shape: Shape, t: npt.ArrayLike, alpha: float) -> npt.NDArray[np.float64]:
    """The alpha spent by information fraction `t` (Lan & DeMets 1983), two-sided.

    ``obrien_fleming``: each side spends ``2 - 2 Phi(z_{1-alpha/4} / sqrt(t))`` (the one-sided
    function at alpha/2, as gsDesign's ``sfLDOF`` and rpact do for a symmetric two-sided
    test), so the two sides together ``4 - 4 Phi(z_{1-alpha/4} / sqrt(t))``; ``pocock``:
    ``alpha log(1 + (e - 1) t)``. Both equal alpha at t = 1.
    """
    _check_alpha(alpha)
    tt = np.clip(np.asarray(t, dtype=float), 1e-300, 1.0)
    if shape == "obrien_fleming":
        z = stats.norm.isf(alpha / 4)
        out: npt.NDArray[np.float64] = 4 * stats.norm.sf(z / np.sqrt(tt))
        return out
    if shape == "pocock":
        return np.asarray(alpha * np.log1p((math.e - 1) * tt), dtype=float)
    raise UsageError(f"spending shape must be one of {', '.join(SPENDING_SHAPES)} (got {shape})")


class _Recursion:
    """The sub-density of the score ``S_k`` on the continuation region, look after look."""

    def __init__(self) -> None:
        self.t_prev = 0.0
        self.grid: npt.NDArray[np.float64] | None = None  # points of S_{k-1}
        self.weights: npt.NDArray[np.float64] | None = None  # density x quadrature weight

    def exit_probability(self, t: float, b: float) -> float:
        """P(reach this look, |S_k| >= b sqrt(t)): the alpha a boundary b spends at look k."""
        s = b * math.sqrt(t)
        if self.grid is None or self.weights is None:
            return float(2 * stats.norm.sf(b))
        sd = math.sqrt(t - self.t_prev)
        upper = stats.norm.sf((s - self.grid) / sd)
        lower = stats.norm.cdf((-s - self.grid) / sd)
        return float(self.weights @ (upper + lower))

    def advance(self, t: float, b: float) -> None:
        """Condition on |S_k| < b sqrt(t) and move to look k."""
        s = b * math.sqrt(t)
        grid = np.linspace(-s, s, _GRID)
        h = grid[1] - grid[0]
        simpson = np.ones(_GRID)
        simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
        simpson *= h / 3
        if self.grid is None or self.weights is None:
            density = stats.norm.pdf(grid, scale=math.sqrt(t))
        else:
            sd = math.sqrt(t - self.t_prev)
            kernel = _pdf((grid[:, None] - self.grid[None, :]) / sd) / sd
            density = kernel @ self.weights
        self.grid, self.weights, self.t_prev = grid, density * simpson, t


def gs_boundaries(
    times: npt.ArrayLike, alpha: float = 0.05, shape: Shape = "obrien_fleming"
) -> npt.NDArray[np.float64]:
    """Two-sided Z boundaries ``c_1..c_K`` spending alpha by the Lan-DeMets `shape`.

    Look k rejects when ``|Z_k| >= c_k``. A look that may spend no alpha (the spending
    increment is below 1e-15) gets an infinite boundary. The looks may be unequally spaced
    and need not reach t = 1 (a trial stopped early uses the alpha spent so far).

    Raises:
        UsageError: times not strictly increasing in (0, 1], alpha or shape out of range.
    """
    t = _check_times(times)
    _check_alpha(alpha)
    cumulative = spending(shape, t, alpha)
    out = np.empty(t.size)
    rec = _Recursion()
    spent = 0.0
    for k, tk in enumerate(t.tolist()):
        target = float(cumulative[k]) - spent
        if target <= 1e-15:
            out[k] = math.inf
            rec.advance(tk, 40.0)
            continue

        def excess(b: float, tk: float = tk, target: float = target) -> float:
            return rec.exit_probability(tk, b) - target

        b = float(optimize.brentq(excess, 1e-6, 40.0, xtol=1e-10))
        out[k] = b
        spent += rec.exit_probability(tk, b)
        rec.advance(tk, b)
    return out


def crossing_probability(
    boundaries: npt.ArrayLike, times: npt.ArrayLike, drift: float = 0.0
) -> float:
    """P(|Z_k| >= c_k at some look) when ``E[S_k] = drift * t_k`` (0: the alpha spent).

    ``drift`` is the expected Z statistic at t = 1. By the same recursion as
    `gs_boundaries`; with drift it gives the power of the boundaries.
    """
    t = _check_times(times)
    c = np.asarray(boundaries, dtype=float)
    if c.shape != t.shape:
        raise UsageError("one boundary per look")
    total = 0.0
    grid: npt.NDArray[np.float64] | None = None
    weights: npt.NDArray[np.float64] | None = None
    t_prev = 0.0
    for tk, ck in zip(t.tolist(), c.tolist(), strict=True):
        s = min(ck, 40.0) * math.sqrt(tk)
        mean_step = drift * (tk - t_prev)
        sd = math.sqrt(tk - t_prev)
        if grid is None or weights is None:
            total += float(
                stats.norm.sf((s - drift * tk) / sd) + stats.norm.cdf((-s - drift * tk) / sd)
            )
        else:
            centre = grid + mean_step
            total += float(
                weights @ (stats.norm.sf((s - centre) / sd) + stats.norm.cdf((-s - centre) / sd))
            )
        new = np.linspace(-s, s, _GRID)
        h = new[1] - new[0]
        simpson = np.ones(_GRID)
        simpson[1:-1:2], simpson[2:-1:2] = 4.0, 2.0
        simpson *= h / 3
        if grid is None or weights is None:
            density = stats.norm.pdf(new, loc=drift * tk, scale=sd)
        else:
            kernel = _pdf((new[:, None] - grid[None, :] - mean_step) / sd) / sd
            density = kernel @ weights
        grid, weights, t_prev = new, density * simpson, tk
    return total


def constant_boundary(
    looks: int, alpha: float = 0.05, shape: Shape = "pocock"
) -> npt.NDArray[np.float64]:
    """Classical boundaries for `looks` equally spaced looks spending exactly alpha.

    ``pocock``: ``c_k = C``; ``obrien_fleming``: ``c_k = C sqrt(K / k)`` (Jennison &
    Turnbull 2000, Tables 2.1 and 2.3 give C).
    """
    if looks < 1:
        raise UsageError("at least one look")
    _check_alpha(alpha)
    k = np.arange(1, looks + 1)
    t = k / looks
    scale = np.ones(looks) if shape == "pocock" else np.sqrt(looks / k)

    def excess(c: float) -> float:
        return crossing_probability(c * scale, t) - alpha

    c = float(optimize.brentq(excess, 1.5, 5.0, xtol=1e-6))
    return np.asarray(c * scale, dtype=float)


def mixture_cs_boundary(
    n: npt.ArrayLike, n_opt: float, alpha: float = 0.05
) -> npt.NDArray[np.float64]:
    """Z-scale boundary of the two-sided normal-mixture asymptotic confidence sequence.

    The sequence is ``mean_n +- sigma_n sqrt(2 (n rho^2 + 1) / (n^2 rho^2) log(sqrt(n rho^2
    + 1) / alpha))`` (Waudby-Smith et al. 2024, Theorem 2.2), valid at every n at once;
    divided by ``sigma_n / sqrt(n)`` it is ``sqrt(2 (n rho^2 + 1) / (n rho^2) log(sqrt(n
    rho^2 + 1) / alpha))``. ``rho`` is tuned to be tightest at ``n_opt`` samples:
    ``rho^2 = (-2 log alpha + log(1 - 2 log alpha)) / n_opt`` (their eq. 2.6).
    """
    _check_alpha(alpha)
    if n_opt <= 0:
        raise UsageError("n_opt must be positive")
    nn = np.asarray(n, dtype=float)
    la = -2 * math.log(alpha)
    rho2 = (la + math.log(1 + la)) / n_opt
    v = nn * rho2 + 1
    return np.asarray(np.sqrt(2 * v / (nn * rho2) * np.log(np.sqrt(v) / alpha)), dtype=float)
