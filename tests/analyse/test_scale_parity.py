"""The column-wise analysis (docs/design/analysis-scale.md) gives the row-by-row numbers.

The oracle is the pandas implementation it replaced (tests/analyse/reference_analysis.py):
item tables, input hashes and report item rows must agree on small runs; the sign-flip
draws must be the exact null (an enumeration of every sign pattern, grouped by sum) and
their p-values the exact one, and scipy's permutation test's, within Monte Carlo error;
scale itself is measured by benchmarks/bench_analysis_scale.py, never here.
"""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import jinja2
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from evalsuite._core.layout import Layout
from evalsuite.analyse import score_run
from evalsuite.analyse._attempts import ItemTable, item_table
from evalsuite.analyse._paired import _exact_sign_flip, _sign_flip_null, sign_flip_p
from evalsuite.errors import UsageError
from evalsuite.report import AnalysisOptions, build_report, compare_payload, score_payload
from evalsuite.report._build import item_rows
from evalsuite.report._render import _item_rows
from evalsuite.service import fmt
from evalsuite.store import AttemptRecord, RunRecord, Store
from tests.analyse import reference_analysis as reference


def attempts(
    seed: int,
    *,
    n_items: int = 40,
    epochs: int = 4,
    clustered: bool = False,
    continuous: bool = False,
    run_id: str = "run-a",
    items: range | None = None,
) -> pd.DataFrame:
    """A shuffled attempts table: limits, harness errors, an all-error item, odd item ids."""
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for i in items if items is not None else range(n_items):
        for epoch in range(1, epochs + 1):
            outcome = str(rng.choice(["scored", "limit", "harness_error"], p=[0.85, 0.1, 0.05]))
            if i == 3:
                outcome = "harness_error"  # every epoch: the item is excluded
            value = float(rng.random()) if continuous else float(rng.random() < 0.6)
            rows.append(
                {
                    "run_id": run_id,
                    "item_id": f'it-{i}-é"\\' if i % 5 == 0 else f"it-{i:03d}",
                    "stratum": f"s{i % 3}",
                    "cluster": f"c{i % 7}" if clustered else None,
                    "epoch": epoch,
                    "outcome": outcome,
                    "limit_type": "time" if outcome == "limit" and rng.random() < 0.5 else None,
                    "score": {"scored": value, "limit": 0.0}.get(outcome, np.nan),
                    "item_hash": f"h{i}" if epoch > 1 else None,
                }
            )
    return pd.DataFrame(rows).sample(frac=1.0, random_state=seed).reset_index(drop=True)


def as_plain(table: ItemTable) -> dict[str, Any]:
    """An item table's fields as comparable Python values (missing labels as None)."""
    out: dict[str, Any] = {}
    for name in ItemTable.__dataclass_fields__:
        value = getattr(table, name)
        if isinstance(value, np.ndarray) and value.dtype.kind == "f":
            out[name] = value
        elif isinstance(value, np.ndarray):
            out[name] = [None if v is None or v != v else v for v in value.tolist()]
        else:
            out[name] = value.to_dict() if hasattr(value, "to_dict") else value
    return out


def assert_same_table(new: ItemTable, old: ItemTable) -> None:
    a, b = as_plain(new), as_plain(old)
    for name, value in a.items():
        if isinstance(value, np.ndarray):
            np.testing.assert_allclose(value, b[name], rtol=0, atol=1e-12, err_msg=name)
        else:
            assert value == b[name], name


@pytest.mark.parametrize("seed", range(6))
def test_item_table_matches_the_row_by_row_table(seed: int) -> None:
    frame = attempts(seed, clustered=seed % 2 == 1, continuous=seed % 3 == 2)
    planned = len(frame) + seed  # unrecorded attempts count as harness errors
    new = item_table(frame, planned=planned)
    assert_same_table(new, reference.item_table(frame, planned=planned))
    assert new.input_hash == reference.item_table(frame, planned=planned).input_hash
    assert new.health.n_items_excluded == 1


def test_item_table_is_the_same_from_categorical_columns() -> None:
    frame = attempts(11, clustered=True)
    coded = frame.astype({c: "category" for c in ("item_id", "stratum", "cluster", "outcome")})
    assert_same_table(item_table(coded), reference.item_table(frame))


@pytest.mark.parametrize(
    ("change", "column"),
    [
        (lambda f: f.assign(epoch=f["epoch"].where(f.index != 4, f["epoch"].iloc[5])), None),
        (lambda f: f.assign(stratum=f["stratum"].where(f.index != 2, "other")), "stratum"),
        (lambda f: f.assign(cluster=f["cluster"].where(f.index != 7, "x")), "cluster"),
        (lambda f: f.assign(score=f["score"].where(f["outcome"] != "scored", 1.5)), None),
        (lambda f: f.assign(outcome=f["outcome"].where(f.index != 1, "oops")), None),
    ],
)
def test_item_table_refuses_what_the_row_by_row_table_refused(change: Any, column: Any) -> None:
    base = attempts(5, clustered=True)
    frame = change(base)
    if column is None and "epoch" in frame and frame.equals(base):
        pytest.fail("the change left the table as it was")
    with pytest.raises(UsageError) as old:
        reference.item_table(frame)
    with pytest.raises(UsageError) as new:
        item_table(frame)
    # the old message printed a duplicate epoch as numpy's repr, np.int64(3); now 3
    assert str(new.value) == re.sub(r"np\.int64\((\d+)\)", r"\1", str(old.value))


def stored(store: Store, frame: pd.DataFrame, run_id: str, planned: int) -> None:
    """Store `frame` as the attempts of a complete ingested run `run_id`."""
    store.create_run(
        RunRecord(
            run_id=run_id,
            model=run_id,
            epochs=4,
            planned=planned,
            status="complete",
            source="csv",
            started_at="2026-12-01T00:00:00+00:00",
        )
    )
    rows: list[dict[Any, Any]] = [
        {k: None if k != "score" and pd.isna(v) else v for k, v in r.items()}
        for r in frame.to_dict("records")
    ]
    store.record_attempts(
        run_id,
        [
            AttemptRecord(
                item_id=r["item_id"],
                epoch=int(r["epoch"]),
                stratum=r["stratum"],
                outcome=r["outcome"],
                score=float(r["score"]),
                item_hash=r["item_hash"],
                cluster=r["cluster"],
                limit_type=r["limit_type"],
            )
            for r in rows
        ],
    )


def test_store_columns_give_the_table_of_the_full_read(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'results.sqlite'}")
    frame = attempts(3, clustered=True)
    stored(store, frame, "run-a", len(frame) + 2)
    full = store.attempts("run-a")  # the row-by-row read
    columns = store.attempt_columns("run-a")
    assert isinstance(columns["item_id"].dtype, pd.CategoricalDtype)
    assert len(columns) == len(full)
    for name in columns.columns:
        left = columns[name].astype(object).where(columns[name].notna(), None).tolist()
        right = full[name].astype(object).where(full[name].notna(), None).tolist()
        assert left == right, name
    planned = len(frame) + 2
    assert_same_table(item_table(columns, planned=planned), item_table(full, planned=planned))
    with pytest.raises(UsageError, match="unknown attempt column"):
        store.attempt_columns("run-a", ["item_id", "nope"])


def two_stored_runs(tmp_path: Path) -> tuple[Store, pd.DataFrame, pd.DataFrame]:
    """A store holding runs "run-a" (seed 4) and "run-b" (seed 5), and their attempts."""
    store = Store(f"sqlite:///{tmp_path / 'results.sqlite'}")
    base, cand = attempts(4), attempts(5, run_id="run-b")
    stored(store, base, "run-a", len(base))
    stored(store, cand, "run-b", len(cand))
    return store, base, cand


def figures_not_rendered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The report's figures are built but not rendered to SVG (two thirds of a report's CPU
    here): the tests below count reads and item tables and compare numbers; the SVGs are
    tested with the report (tests/report)."""
    import matplotlib.pyplot as plt

    import evalsuite.report._build as build_module
    import evalsuite.report._items as items_module

    def unrendered(figure: Any, title: str) -> str:
        plt.close(figure)
        return f"<svg><title>{title}</title></svg>"

    for module in (build_module, items_module):
        monkeypatch.setattr(module, "to_svg", unrendered)


def test_score_compare_and_report_read_each_run_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One column-wise read per run and command; the full row-by-row read never."""
    store, base, _ = two_stored_runs(tmp_path)
    figures_not_rendered(monkeypatch)
    options = AnalysisOptions(seed=3)
    expected = score_run(store.attempts("run-a"), planned=len(base), rng=np.random.default_rng(3))
    reads: list[str] = []
    columnar = Store.attempt_columns

    def counted(self: Store, run_id: str, *args: Any) -> pd.DataFrame:
        reads.append(run_id)
        return columnar(self, run_id, *args)

    def refused(self: Store, run_id: str) -> pd.DataFrame:
        raise AssertionError(f"the analysis read every column of {run_id} row by row")

    monkeypatch.setattr(Store, "attempt_columns", counted)
    monkeypatch.setattr(Store, "attempts", refused)
    score = score_payload(store, "run-a", options)
    assert reads == ["run-a"]
    assert score["input_hash"] == expected.input_hash
    assert score["overall"] == expected.overall.to_dict()
    compare_payload(store, "run-a", "run-b", options, allow_invalid=True)
    assert reads == ["run-a", "run-a", "run-b"]
    report = build_report(store, Layout(tmp_path), ["run-a", "run-b"], options, validity=[])
    assert reads == ["run-a", "run-a", "run-b", "run-a", "run-b"]
    assert report.payload["runs"][0]["overall"] == expected.overall.to_dict()


@pytest.mark.parametrize("same_items", [False, True])
def test_report_item_rows_match_the_per_item_loop(same_items: bool) -> None:
    """Runs of different items (merged by id) and of the same items (the shortcut)."""
    frames = {
        "run-a": attempts(1, items=range(0, 30)),
        "run-b": attempts(2, items=range(10, 40), run_id="run-b", continuous=True),
        "run-c": attempts(3, items=range(5, 15), run_id="run-c").assign(item_hash=None),
    }
    if same_items:
        frames = {
            "run-a": attempts(1, items=range(0, 30)),
            "run-b": attempts(2, items=range(0, 30), run_id="run-b", continuous=True),
        }
    new, old = item_rows(frames), reference.item_rows(frames)
    assert [r["item_id"] for r in new] == [r["item_id"] for r in old]
    for a, b in zip(new, old, strict=True):
        assert a.keys() == b.keys()
        for key in ("item_id", "stratum", "item_hash", "epochs", "flip_rate"):
            assert a[key] == b[key], key
        assert a["difficulty"] == pytest.approx(b["difficulty"], abs=1e-12)
        assert list(a["means"]) == list(b["means"])
        assert list(a["means"].values()) == pytest.approx(list(b["means"].values()), abs=1e-12)


def template_env() -> jinja2.Environment:
    """The Jinja environment the report's item rows were rendered with before."""
    env = jinja2.Environment(
        autoescape=True, undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True
    )
    env.filters["fmt"] = fmt
    return env


def two_runs_item_rows() -> list[dict[str, Any]]:
    """The item rows of two runs sharing 30 items (seeds 1 and 2)."""
    frames = {"run-a": attempts(1, items=range(0, 30)), "run-b": attempts(2, run_id="run-b")}
    return item_rows(frames)


def test_report_html_item_rows_are_the_template_loops() -> None:
    env, rows = template_env(), two_runs_item_rows()
    rows[0] |= {"item_id": "<b>&'\"", "stratum": "s<1>", "item_hash": "sha256:" + "ab" * 20}
    rows[1] |= {"flip_rate": float("nan"), "item_hash": ""}
    payload = {"items": rows, "runs": [{"run_id": "run-a"}, {"run_id": "run-b"}]}
    loop = env.from_string(reference.ITEM_ROWS_TEMPLATE).render(p=payload)
    assert str(_item_rows(payload)) == loop.removesuffix("\n")


def test_report_html_item_rows_column_wise_are_the_template_loops() -> None:
    """Texts escaped in one call (and each alone when one holds a NUL), numbers of every kind."""
    env, rows = template_env(), two_runs_item_rows()
    rows[0] |= {"item_id": "a&b<c>'\"", "stratum": "s<&>", "item_hash": None}
    rows[1] |= {"difficulty": float("inf"), "flip_rate": -0.0, "means": {"run-a": True}}
    rows[2] |= {"difficulty": 1, "flip_rate": None, "item_hash": "<" * 30, "stratum": 7}
    rows[3] |= {"difficulty": "x<y", "flip_rate": float("-inf"), "means": {}}
    rows[4] |= {"stratum": "s<&>", "item_id": "\u00e9\U0001f600\n\t"}
    payload = {"items": rows, "runs": [{"run_id": "run-a"}, {"run_id": "run-b"}]}
    loop = env.from_string(reference.ITEM_ROWS_TEMPLATE).render(p=payload)
    assert str(_item_rows(payload)) == loop.removesuffix("\n")
    rows[5] |= {"item_id": "nul\0<x>"}  # the joined escape cannot split: each alone
    loop = env.from_string(reference.ITEM_ROWS_TEMPLATE).render(p=payload)
    assert str(_item_rows(payload)) == loop.removesuffix("\n")
    assert str(_item_rows({"items": [], "runs": [{"run_id": "run-a"}]})) == ""


def test_report_builds_each_run_s_item_table_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The score and the comparison of a report share one item table per run, same numbers."""
    store, _, _ = two_stored_runs(tmp_path)
    figures_not_rendered(monkeypatch)
    options = AnalysisOptions(seed=3)
    layout = Layout(tmp_path)
    alone = compare_payload(store, "run-a", "run-b", options, allow_invalid=True, layout=layout)
    scored = score_payload(store, "run-b", options, layout=layout)
    built: list[str] = []

    def counted(frame: pd.DataFrame, **kwargs: Any) -> ItemTable:
        table = item_table(frame, **kwargs)
        built.append(table.run_id)
        return table

    import evalsuite.analyse._compare as compare_module
    import evalsuite.analyse._score as score_module
    import evalsuite.report._build as build_module

    for module in (compare_module, score_module, build_module):
        monkeypatch.setattr(module, "item_table", counted, raising=False)
    report = build_report(store, layout, ["run-a", "run-b"], options, validity=[])
    assert sorted(built) == ["run-a", "run-b"]
    comparison = report.payload["comparisons"][0]
    for key, value in alone.items():  # as JSON: NaN equals NaN
        assert json.dumps(comparison[key]) == json.dumps(value), key
    assert report.payload["runs"][1]["overall"] == scored["overall"]
    assert report.payload["runs"][1]["harness"] == scored["harness"]


def scipy_p(d: np.ndarray, n_resamples: int, rng: np.random.Generator) -> float:
    """The sign-flip p-value of the method before packed bits: scipy's own test."""
    result = stats.permutation_test(
        (d,),
        lambda x, axis: np.sum(x, axis=axis),
        permutation_type="samples",
        vectorized=True,
        n_resamples=n_resamples,
        alternative="two-sided",
        rng=rng,
        batch=1000,
    )
    return min(1.0, float(result.pvalue))


def exact_null(units: np.ndarray) -> dict[int, float]:
    """Exact distribution of sum(±v_i) (fair independent signs) for integer values v_i."""
    reach = int(np.abs(units).sum())
    probs = np.zeros(2 * reach + 1)
    probs[reach] = 1.0
    for v in np.abs(units):
        if v:
            probs = 0.5 * (np.roll(probs, int(v)) + np.roll(probs, -int(v)))
    return {k - reach: float(q) for k, q in enumerate(probs) if q > 0}


@pytest.mark.parametrize(
    ("n_class", "n_rare", "zeros"),
    [(0, 12, 0), (150, 0, 5), (200, 40, 30), (64, 63, 1)],
)
def test_sign_flip_draws_are_fair_independent_signs(n_class: int, n_rare: int, zeros: int) -> None:
    """The drawn null (popcount classes, byte tables, zeros skipped) is the exact null.

    Values in tenths, so the exact distribution of the signed sum is an integer convolution
    (every one of the 2^n sign patterns, grouped by sum); the drawn sums' frequencies are
    checked against it by a chi-square test, and every one-sided tail by its binomial error.
    """
    rng = np.random.default_rng(n_class + n_rare)
    classes = np.repeat([3, -2, 7], n_class // 3 + 1)[:n_class]  # >= 64 units: popcount
    rare = rng.integers(-10, 11, n_rare)
    rare[rare == 0] = 1
    tenths = rng.permutation(np.concatenate([classes, rare, np.zeros(zeros, int)]))
    draws = 200_000
    null = _sign_flip_null(tenths / 10.0, draws, np.random.default_rng(5))
    drawn = np.rint(null * 10).astype(int)
    assert np.allclose(drawn / 10, null, atol=1e-9)  # sums of tenths, rounding only
    exact = exact_null(tenths)
    keys = np.array(sorted(exact))
    probs = np.array([exact[k] for k in keys])
    assert set(np.unique(drawn)) <= set(keys.tolist())
    counts = np.array([np.count_nonzero(drawn == k) for k in keys])
    big = probs * draws >= 5  # chi-square cells with enough expected counts; the rest pooled
    observed = np.append(counts[big], counts[~big].sum())
    expected = np.append(probs[big], probs[~big].sum()) * draws
    keep = expected > 0
    chi = stats.chisquare(observed[keep], expected[keep])
    assert chi.pvalue > 1e-4, chi
    for k in keys[:: max(1, len(keys) // 25)]:
        p = float(probs[keys <= k].sum())
        assert abs(np.mean(drawn <= k) - p) < 5 * np.sqrt(p * (1 - p) / draws) + 1e-12


@pytest.mark.parametrize(("n", "decimals"), [(21, 1), (301, 1), (77, 2), (400, 3)])
def test_sign_flip_p_is_the_exact_p_within_monte_carlo_error(n: int, decimals: int) -> None:
    """Drawn p-values against the exact p over every sign pattern (2^n), grouped by sum."""
    d = np.round(np.random.default_rng(n).normal(0.03, 0.3, n).clip(-1, 1), decimals)
    draws = 20_000
    p, exact = sign_flip_p(d, None, n_resamples=draws, rng=np.random.default_rng(3))
    assert not exact
    units = np.rint(d * 10**decimals).astype(int)  # integers: the exact null by convolution
    null = exact_null(units)
    observed = int(units.sum())
    greater = sum(q for k, q in null.items() if k >= observed)
    less = sum(q for k, q in null.items() if k <= observed)
    reference_p = min(1.0, 2 * min(greater, less))
    if n <= 24:
        assert reference_p == pytest.approx(_exact_sign_flip(d), abs=1e-12)
    assert abs(p - reference_p) < 5 * np.sqrt(2 * reference_p / draws) + 2 / draws


@pytest.mark.parametrize(
    ("n", "continuous", "shift"),
    [(3000, False, 0.012), (6000, False, 0.005), (1001, True, 0.02)],
)
def test_sign_flip_p_agrees_with_scipys_within_monte_carlo_error(
    n: int, continuous: bool, shift: float
) -> None:
    """Large n: the packed-bit draws against scipy's permutation test (the method before)."""
    data = np.random.default_rng(n).normal(shift, 0.3, n).clip(-1, 1)
    d = data if continuous else np.round(data, 1)
    draws = 2999
    ours, _ = sign_flip_p(d, None, n_resamples=draws, rng=np.random.default_rng(7))
    theirs = scipy_p(d, draws, np.random.default_rng(7))
    assert 0.02 < theirs < 0.98  # a p-value whose Monte Carlo error matters
    # each p is twice a tail proportion q ~ p / 2 of `draws` patterns (variance
    # 4 q (1 - q) / draws); two independent estimates: their difference has twice that
    q = theirs / 2
    assert abs(ours - theirs) < 5 * np.sqrt(2 * 4 * q * (1 - q) / draws)


def test_sign_flip_p_is_reproducible_from_the_seed() -> None:
    d = np.round(np.random.default_rng(0).normal(0.01, 0.3, 5000).clip(-1, 1), 1)
    one = sign_flip_p(d, None, n_resamples=999, rng=np.random.default_rng(4))
    two = sign_flip_p(d, None, n_resamples=999, rng=np.random.default_rng(4))
    other = sign_flip_p(d, None, n_resamples=999, rng=np.random.default_rng(5))
    assert one == two
    assert one != other


def test_sign_flip_p_memory_is_bounded() -> None:
    """20,000 units: scipy's batches of index arrays took 640 MB; the packed bits a few MB."""
    d = np.round(np.random.default_rng(0).normal(0.0, 0.3, 20_000).clip(-1, 1), 1)
    tracemalloc.start()
    try:
        sign_flip_p(d, None, n_resamples=999, rng=np.random.default_rng(1))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MiB"


def test_stratum_cluster_codes_are_the_codes_of_the_key_texts() -> None:
    """Unclustered units ranked without a text per item: the codes `cluster_codes` gives the
    texts ``f"{stratum}\\x1f{position}"``, with strata that are prefixes of others, hold
    characters below and above the separator, non-BMP text, the empty text; and with a
    stratum holding the separator, or clusters, through the texts themselves."""
    from evalsuite.analyse._estimates import stratum_cluster_codes
    from evalsuite.analyse._intervals import cluster_codes

    rng = np.random.default_rng(5)
    choices = [
        ["a", "ab", "a\x01", "a b", "", "é", "z\U0001f600", "b", "a0", "10", "9"],
        ["s0", "s1", "s2"],
        ["x\x1fy", "x", "x\x1f"],  # the separator itself: the texts' path
    ]
    for pool in choices:
        for n in (0, 1, 7, 130, 2500):
            strata = np.asarray(rng.choice(np.array(pool, dtype=object), n), dtype=object).astype(
                str
            )
            unique, inverse = np.unique(strata, return_inverse=True)
            names = [str(h) for h in unique]
            expected = cluster_codes([f"{s}\x1f{i}" for i, s in enumerate(strata)], n)
            got = stratum_cluster_codes(strata, inverse.reshape(-1), names, None)
            assert got.dtype == np.intp and got.tolist() == expected.tolist(), (pool, n)
            clusters = rng.choice(np.array(["c1", "c2", None], dtype=object), n)
            assert (
                stratum_cluster_codes(strata, inverse.reshape(-1), names, clusters).tolist()
                == cluster_codes(
                    [f"{s}\x1f{c}" for s, c in zip(strata, clusters, strict=True)], n
                ).tolist()
            )
