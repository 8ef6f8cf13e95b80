"""The distribution functions of `_dist` are scipy.stats' own, bit for bit, edge cases included."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from evalsuite.analyse import _dist

PROBABILITIES = [
    0.0, 1e-300, 1e-12, 0.0005, 0.005, 0.025, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95,
    0.975, 0.995, 0.9995, 1 - 1e-12, 1.0, -0.1, 1.1, math.nan, math.inf, -math.inf, -0.0,
]  # fmt: skip
POINTS = [
    -math.inf, -1e300, -40.0, -8.5, -3.0, -1.96, -1.0, -0.25, -0.0, 0.0, 1e-9, 0.5, 1.0, 1.96,
    2.5, 6.0, 40.0, 1e300, math.inf, math.nan,
]  # fmt: skip
DFS = [0.5, 1.0, 2.0, 3.0, 4.5, 9.0, 29.0, 99.0, 1e4, 1e7, math.inf, 0.0, -1.0, math.nan]
NCPS = [0.0, 0.5, 1.0, 2.8, 5.0, 12.0, 40.0, -1.5, math.nan]


def _same(ours: float, theirs: object) -> bool:
    """Equal as doubles, bit for bit (NaN equal to NaN, 0.0 not -0.0)."""
    value = float(theirs)  # type: ignore[arg-type]
    assert type(ours) is float
    return np.float64(ours).tobytes() == np.float64(value).tobytes() or (
        math.isnan(ours) and math.isnan(value)
    )


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_t_and_normal_are_scipy_s_bit_for_bit() -> None:
    for q, df in itertools.product(PROBABILITIES, DFS):
        assert _same(_dist.t_ppf(q, df), stats.t.ppf(q, df)), (q, df)
        assert _same(_dist.t_isf(q, df), stats.t.isf(q, df)), (q, df)
    for x, df in itertools.product(POINTS, DFS):
        assert _same(_dist.t_sf(x, df), stats.t.sf(x, df)), (x, df)
    for q in PROBABILITIES:
        assert _same(_dist.norm_ppf(q), stats.norm.ppf(q)), q
        assert _same(_dist.norm_isf(q), stats.norm.isf(q)), q
    for x in POINTS:
        assert _same(_dist.norm_cdf(x), stats.norm.cdf(x)), x
        assert _same(_dist.norm_sf(x), stats.norm.sf(x)), x


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_noncentral_t_is_scipy_s_bit_for_bit() -> None:
    for x, df, nc in itertools.product(POINTS, DFS, NCPS):
        assert _same(_dist.nct_sf(x, df, nc), stats.nct.sf(x, df, nc)), (x, df, nc)
        assert _same(_dist.nct_cdf(x, df, nc), stats.nct.cdf(x, df, nc)), (x, df, nc)


def test_score_compare_and_power_do_not_import_scipy_stats() -> None:
    """The modules of the scoring path load without scipy.stats (about 1 s of CPU)."""
    code = (
        "import sys\n"
        "import evalsuite.analyse._intervals, evalsuite.analyse._paired\n"
        "import evalsuite.analyse._power, evalsuite.analyse._compare\n"
        "import evalsuite.analyse._reliability, evalsuite.analyse._bootstrap\n"
        "import evalsuite.analyse._weighted_diff, evalsuite.analyse._estimates\n"
        "import evalsuite.analyse._score, evalsuite.service._payloads\n"
        "from evalsuite.analyse._power import t_power, mde_from_se\n"
        "t_power(2.5, 40.0, alpha=0.05); mde_from_se(0.01, 99.0, alpha=0.05, power=0.8)\n"
        "print('scipy.stats' in sys.modules)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "False"
