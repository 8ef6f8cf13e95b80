"""Issue 7 acceptance through the command line: outcomes, validity report, report section."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.validity.test_validity_published import PUBLISHED  # figures and their sources

DATA = Path(__file__).resolve().parents[1] / "data" / "alpacaeval"


@pytest.fixture
def empty(tmp_path: Path) -> Project:
    (tmp_path / "p").mkdir()
    return Project(root=tmp_path / "p", key_dir=tmp_path / "keys")


def _alpacaeval_files(tmp_path: Path) -> tuple[Path, Path]:
    frame = pd.read_csv(DATA / "benchmarks_at_241e1f6.csv")
    frame.columns = [c.split("\n")[0].strip() for c in frame.columns]
    outcomes = frame[["Model", "Arena Elo"]].dropna()
    outcomes.columns = ["model", "value"]
    outcomes = outcomes.assign(metric="arena_elo", source="Chatbot Arena, Feb 2 2024")
    scores = (
        frame.drop(columns=["Arena Elo", "AlpacaEval 2.0", "AlpacaEval 1.0"])
        .melt(id_vars="Model", var_name="benchmark", value_name="score")
        .dropna()
    )
    scores = scores.rename(columns={"Model": "model"})
    outcomes_path, scores_path = tmp_path / "elo.csv", tmp_path / "scores.csv"
    outcomes.to_csv(outcomes_path, index=False)
    scores.to_csv(scores_path, index=False)
    return outcomes_path, scores_path


def test_alpacaeval_rank_correlations_with_arena(empty: Project, tmp_path: Path) -> None:
    outcomes, scores = _alpacaeval_files(tmp_path)
    first = json_out(empty.invoke("validity", "import", str(outcomes), "--json"))
    assert first["added"] == first["rows"] > 30
    again = json_out(empty.invoke("validity", "import", str(outcomes), "--json"))
    assert again["added"] == 0  # a re-import adds nothing twice
    result = empty.invoke(
        "validity", "report", "--metric", "arena_elo", "--scores", str(scores), "--json"
    )
    assert result.exit_code == 0, result.stderr
    payload = json_out(result)
    by_name = {p["name"]: p for p in payload["predictors"]}
    for name, published in PUBLISHED.items():
        assert by_name[name]["n"] >= 24, name
        assert round(by_name[name]["spearman"], 2) == published, name
        low, high = by_name[name]["spearman_ci"]
        assert low < by_name[name]["spearman"] < high
    top = [
        c
        for c in payload["comparisons"]
        if {c["name_a"], c["name_b"]} == {"LC AlpacaEval 2.0", "MT-bench"}
    ]
    assert top
    assert top[0]["verdict"] == "not distinguishable"
    assert {"metric", "n_models", "predictors"} <= set(payload)
    for key in (
        "name",
        "n",
        "spearman",
        "spearman_ci",
        "kendall",
        "kendall_ci",
        "pearson",
        "pearson_ci",
        "disattenuated",
        "deming_slope",
        "deming_slope_ci",
        "loo_error",
    ):
        assert key in payload["predictors"][0], key


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("model,metric,value\nm,succ,abc\n", "row 2: value 'abc' is not a number"),
        ("model,metric,value,se\nm,succ,0.5,-1\n", "row 2: se must be >= 0"),
        ("model,metric,value\n,succ,0.5\n", "row 2: missing model"),
        ("model,metric,value,se,n\nm,succ,0.5,0.1,10\n", "give se or n, not both"),
        ("model,metric,value,observed_at\nm,succ,0.5,yesterday\n", "not an ISO date"),
        ("model,metric,value,colour\nm,succ,0.5,red\n", "unknown column(s) ['colour']"),
    ],
)
def test_bad_outcome_rows_are_named_and_nothing_is_stored(
    empty: Project, tmp_path: Path, content: str, message: str
) -> None:
    path = tmp_path / "o.csv"
    good = (
        "fine,succ,0.7\n"
        if content.count("\n") and content.startswith("model,metric,value\n")
        else ""
    )
    path.write_text(content + good)
    result = empty.invoke("validity", "import", str(path))
    assert result.exit_code == 2
    assert message in result.stderr
    from evalsuite._core.layout import Layout
    from evalsuite.store import Store, default_store_url

    assert Store(default_store_url(Layout(empty.root).state)).outcomes().empty


def test_validity_from_stored_runs_round_trips_into_the_report(tmp_path: Path) -> None:
    # 10 dev items at one epoch: the runs are seeded, so the figures are fixed; their Spearman
    # correlation with the outcomes is 0.97 (0.8 asserted), with five models (M < 10 flagged)
    project = make_probe_project(tmp_path, n_per_stratum=10)
    runs = {}
    for i, accuracy in enumerate((0.3, 0.45, 0.6, 0.75, 0.9)):
        model = f"fakeagent/v{i}"
        out = json_out(
            project.invoke(
                "run",
                "probe@1.0.0",
                "--model",
                model,
                "-M",
                f"accuracy={accuracy}",
                "--epochs",
                "1",
                "--json",
                "--no-progress",
            )
        )
        runs[model] = out["run_id"]
        add = project.invoke(
            "validity",
            "add",
            "--model",
            model,
            "--metric",
            "prod_success",
            "--value",
            str(0.2 + 0.7 * accuracy),
            "--n",
            "400",
            "--observed-at",
            f"2026-0{i + 1}-15",
            "--source",
            "dashboard",
        )
        assert add.exit_code == 0, add.stderr
    duplicate = project.invoke(
        "validity",
        "add",
        "--model",
        "fakeagent/v0",
        "--metric",
        "prod_success",
        "--value",
        str(0.2 + 0.7 * 0.3),
        "--n",
        "400",
        "--observed-at",
        "2026-01-15",
        "--source",
        "dashboard",
        "--json",
    )
    assert json_out(duplicate)["added"] == 0
    payload = json_out(
        project.invoke(
            "validity", "report", "--suite", "probe@1.0.0", "--metric", "prod_success", "--json"
        )
    )
    main = next(p for p in payload["predictors"] if p["name"] == "probe@1.0.0")
    assert main["n"] == 5
    assert main["spearman"] > 0.8
    assert any("stratum" in p["name"] for p in payload["predictors"])
    assert any("fewer than" in f or "M < 10" in f or "models" in f for f in main["flags"])
    out = tmp_path / "rep"
    report = project.invoke("report", runs["fakeagent/v0"], runs["fakeagent/v4"], "--out", str(out))
    assert report.exit_code == 0, report.stderr
    saved = json.loads((out / "report.json").read_text())
    assert saved["validity"][0]["metric"] == "prod_success"
    assert saved["validity"][0]["predictors"] == payload["predictors"]
    html = (out / "index.html").read_text()
    assert "Predictive validity: prod_success" in html
    assert 'data-figure="validity_0"' in html
    assert 'data-figure="validity_time_0"' in html


def test_validity_report_needs_a_source_of_scores(empty: Project) -> None:
    result = empty.invoke("validity", "report", "--metric", "x")
    assert result.exit_code == 2
    assert "give --suite" in result.stderr
