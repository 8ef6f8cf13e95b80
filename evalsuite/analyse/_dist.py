"""The few distribution functions the scoring path needs, without importing scipy.stats.

Importing ``scipy.stats`` costs about 1 s of CPU (its distributions and their docstrings),
more than everything `score` does with a run's 500,000 attempts once they are read
(docs/design/analysis-scale.md, "Fifth pass"). `score`, `compare` and `report` need only the
t, normal and noncentral t distributions, at scalar arguments; each function here returns
exactly what ``scipy.stats.<dist>.<method>(x, *shape)`` returns for a scalar (as a float):
the same special function (``scipy.special``, the functions scipy.stats calls for these
distributions) behind the same rules for the support's ends, out-of-range arguments and
NaN. tests/analyse/test_dist.py compares every function with scipy.stats bit for bit on a
grid that includes those edge cases. Anything else (beta, F, binomial quantiles, the
bootstrap) still comes from scipy.stats, imported where it is used.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import special

__all__ = [
    "nct_cdf",
    "nct_sf",
    "norm_cdf",
    "norm_isf",
    "norm_ppf",
    "norm_sf",
    "t_isf",
    "t_ppf",
    "t_sf",
]

try:  # the noncentral t's survival function scipy.stats uses (Boost's); see `nct_sf`
    from scipy.special._ufuncs import _nct_sf as _boost_nct_sf
except ImportError:  # pragma: no cover - another scipy: ask scipy.stats itself
    _boost_nct_sf = None

_NAN = math.nan
_INF = math.inf


def _quantile(q: float, ok: bool, low: float, high: float, inner: float | None) -> float:
    """Scipy's ``ppf``/``isf`` rules: NaN outside [0, 1] or bad shapes, the ends at 0 and 1."""
    if not ok or math.isnan(q) or q < 0.0 or q > 1.0:
        return _NAN
    if q == 0.0:
        return low
    if q == 1.0:
        return high
    # scipy's ``* scale + loc``, which makes -0.0 0.0
    return float(_NAN if inner is None else inner) * 1.0 + 0.0


def _probability(x: float, ok: bool, below: float, above: float) -> float | None:
    """Scipy's ``cdf``/``sf`` rules on the real line: None means "compute it"."""
    if not ok or math.isnan(x):
        return _NAN
    if x == -_INF:
        return below
    if x == _INF:
        return above
    return None


def _t_ok(df: float) -> bool:
    return df > 0


def t_ppf(q: float, df: float) -> float:
    """``scipy.stats.t.ppf(q, df)``."""
    ok = _t_ok(df)
    inner = special.stdtrit(df, q) if ok and 0.0 < q < 1.0 else None
    return _quantile(q, ok, -_INF, _INF, inner)


def t_isf(q: float, df: float) -> float:
    """``scipy.stats.t.isf(q, df)``."""
    ok = _t_ok(df)
    inner = -special.stdtrit(df, q) if ok and 0.0 < q < 1.0 else None
    return _quantile(q, ok, _INF, -_INF, inner)


def t_sf(x: float, df: float) -> float:
    """``scipy.stats.t.sf(x, df)``."""
    fixed = _probability(x, _t_ok(df), 1.0, 0.0)
    return fixed if fixed is not None else float(special.stdtr(df, -x))


def norm_ppf(q: float) -> float:
    """``scipy.stats.norm.ppf(q)``."""
    inner = special.ndtri(q) if 0.0 < q < 1.0 else None
    return _quantile(q, True, -_INF, _INF, inner)


def norm_isf(q: float) -> float:
    """``scipy.stats.norm.isf(q)``."""
    inner = -special.ndtri(q) if 0.0 < q < 1.0 else None
    return _quantile(q, True, _INF, -_INF, inner)


def norm_cdf(x: float) -> float:
    """``scipy.stats.norm.cdf(x)``."""
    fixed = _probability(x, True, 0.0, 1.0)
    return fixed if fixed is not None else float(special.ndtr(x))


def norm_sf(x: float) -> float:
    """``scipy.stats.norm.sf(x)``."""
    fixed = _probability(x, True, 1.0, 0.0)
    return fixed if fixed is not None else float(special.ndtr(-x))


def _nct_ok(df: float, nc: float) -> bool:
    return bool(df > 0 and nc == nc)


def nct_cdf(x: float, df: float, nc: float) -> float:
    """``scipy.stats.nct.cdf(x, df, nc)``."""
    fixed = _probability(x, _nct_ok(df, nc), 0.0, 1.0)
    return fixed if fixed is not None else float(special.nctdtr(df, nc, x))


def nct_sf(x: float, df: float, nc: float) -> float:
    """``scipy.stats.nct.sf(x, df, nc)``."""
    fixed = _probability(x, _nct_ok(df, nc), 1.0, 0.0)
    if fixed is not None:
        return fixed
    if _boost_nct_sf is None:  # pragma: no cover - another scipy
        from scipy import stats

        return float(stats.nct.sf(x, df, nc))
    with np.errstate(over="ignore"):
        return float(np.clip(_boost_nct_sf(x, df, nc), 0, 1))
