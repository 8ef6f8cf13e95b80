"""`service.validity_report`: the validity use case returns a typed result; report/ only renders.

The store here holds ingested attempts tables and deployment results (no inspect run).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalsuite._core.jsonout import dumps_json
from evalsuite.cli import cli
from evalsuite.errors import UsageError
from evalsuite.service import (
    AnalysisOptions,
    ValidityPoint,
    ValidityResult,
    validity_report,
    validity_results,
    validity_view,
)
from evalsuite.store import Store, make_outcome, outcome_fingerprint
from evalsuite.validity import ValidityReport
from tests.analyse.test_scale_parity import attempts, stored

MODELS = {"m0": 0.2, "m1": 0.35, "m2": 0.5, "m3": 0.8}
"""Model -> its deployment result (success rate)."""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".evalsuite").mkdir()
    store = Store(f"sqlite:///{tmp_path / '.evalsuite' / 'results.sqlite'}")
    for i, (model, value) in enumerate(MODELS.items()):
        run_id = f"run-{model}"
        frame = attempts(10 + i, run_id=run_id)
        stored(store, frame, run_id, len(frame))
        store.update_run(
            run_id, model=model, suite="demo", version="1.0.0", split="dev", valid=True
        )
        outcome = make_outcome(
            {"model": model, "metric": "success", "value": value, "n": 200,
             "observed_at": f"2026-0{i + 1}-01"}
        )  # fmt: skip
        store.add_outcomes([(outcome, outcome_fingerprint(outcome))])
    return tmp_path


def _store(project: Path) -> Store:
    return Store(f"sqlite:///{project / '.evalsuite' / 'results.sqlite'}")


def test_validity_report_is_typed_and_its_json_is_the_cli_contract(project: Path) -> None:
    store = _store(project)
    result = validity_report(
        store, metric="success", options=AnalysisOptions(seed=3), suite="demo", version="1.0.0"
    )
    assert isinstance(result, ValidityResult) and isinstance(result.report, ValidityReport)
    assert result.metric == "success" and result.main_predictor == "demo@1.0.0"
    assert result.source == "runs of demo@1.0.0" and result.analysis_seed == 3
    assert result.runs is not None and result.runs.split == "dev"
    assert dict(result.runs.used) == {m: f"run-{m}" for m in MODELS}
    assert result.models_with_outcome == tuple(sorted(MODELS))
    assert all(isinstance(p, ValidityPoint) for p in result.points)
    assert sorted(p.model for p in result.points) == sorted(MODELS)
    assert {p.model: p.y for p in result.points} == MODELS
    assert (
        result.statements
        and result.statements[0] == result.report.predictor("demo@1.0.0").statement
    )
    # the JSON: the payload `validity report --json` printed before, field for field
    payload = result.to_dict()
    assert list(payload)[:6] == ["metric", "n_models", "level", "predictors", "comparisons",
                                 "notes"]  # fmt: skip
    for key in ("source", "analysis_seed", "models_with_outcome", "models_with_scores", "split",
                "runs_used", "partial_runs", "partial_runs_left_out", "statements",
                "main_predictor", "points", "over_time"):  # fmt: skip
        assert key in payload, key
    out = CliRunner().invoke(
        cli,
        ["--root", str(project), "validity", "report", "--suite", "demo@1.0.0",
         "--metric", "success", "--seed", "3", "--json"],
    )  # fmt: skip
    assert out.exit_code == 0, out.output
    printed = json.loads(out.stdout)
    assert printed == json.loads(dumps_json(validity_view(result).to_dict()))  # NaN: null
    assert set(payload) <= set(printed) and printed["headline"].startswith("Over 4 models")


def test_the_view_of_the_result_and_of_its_json_are_one_view(project: Path) -> None:
    result = validity_report(
        _store(project), metric="success", options=AnalysisOptions(seed=3), suite="demo",
        version="1.0.0",
    )  # fmt: skip
    typed, stored_form = validity_view(result), validity_view(result.to_dict())
    assert typed.headline == stored_form.headline and typed.tables == stored_form.tables
    assert typed.caveats == stored_form.caveats


def test_validity_results_are_the_reports_sections(project: Path) -> None:
    store = _store(project)
    runs = [{"suite": "demo", "version": "1.0.0", "split": "dev", "manifest": {"x": 1}}]
    sections = validity_results(store, runs, AnalysisOptions(seed=3))
    assert [s.main_predictor for s in sections] == ["demo@1.0.0"]
    assert validity_results(store, [], AnalysisOptions(seed=3)) == []


def test_a_validity_report_needs_a_suite_version_or_a_scores_file(project: Path) -> None:
    with pytest.raises(UsageError, match="give --suite"):
        validity_report(_store(project), metric="success", options=AnalysisOptions())


def test_scores_from_a_file_have_no_runs(project: Path, tmp_path: Path) -> None:
    path = tmp_path / "scores.csv"
    path.write_text(
        "model,benchmark,score\n"
        + "".join(f"{m},bench,{v * 0.9 + 0.01 * i}\n" for i, (m, v) in enumerate(MODELS.items()))
    )
    result = validity_report(
        _store(project), metric="success", options=AnalysisOptions(seed=1), scores_file=path
    )
    assert result.runs is None and result.main_predictor == "bench"
    payload = result.to_dict()
    assert "runs_used" not in payload and payload["source"] == "scores file"
