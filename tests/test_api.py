"""The Python API (`evalsuite.api`, exported lazily by `evalsuite`): issue 30, item 4.

``import evalsuite as es; es.score(RUN).mean`` works in a project with a stored run and returns
the object the command renders; `compare` the same for two runs; a bad run id raises a typed
error; ``import evalsuite`` loads none of it. The runs are the report tests' (real runs of
the probe suite through the CLI, made once per session: tests/report/conftest.py).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import evalsuite as es
from evalsuite._core.jsonout import dumps_json
from evalsuite.errors import IncomparableRunsError, NotFoundError
from evalsuite.service import comparison_view, score_view
from tests.helpers import REPO, Project, json_out
from tests.report.conftest import Reported
from tests.report.conftest import _build as build_report_runs
from tests.shared_build import build_once


@pytest.fixture(scope="module")
def reported(tmp_path_factory: pytest.TempPathFactory) -> Reported:
    """The report tests' runs (the same shared build: made once per session)."""
    root, runs = build_once(tmp_path_factory, "report-runs", build_report_runs)
    return Reported(
        project=Project(root=root / "project", key_dir=root / "keys"),
        reports=tmp_path_factory.mktemp("api-reports"),
        factory=tmp_path_factory,
        **runs,
    )


VIEW_FIELDS = ("headline", "gate_line", "caveats")
"""What the command's ``--json`` adds to a result's `to_dict()`: the view's sentences."""


def _json(value: Any) -> Any:
    """`value` as the command writes it (NaN -> null), read back."""
    return json.loads(dumps_json(value))


def test_score_is_the_result_the_command_renders(reported: Reported) -> None:
    project = reported.project
    result = es.score(reported.candidate, root=project.root)
    assert isinstance(result, es.ScoreResult)
    cli = json_out(project.invoke("score", reported.candidate, "--json"))
    assert _json(score_view(result).to_dict()) == cli
    assert _json(result.to_dict()) == {k: v for k, v in cli.items() if k not in VIEW_FIELDS}
    assert result.mean == cli["overall"]["mean"]
    assert list(result.interval) == cli["overall"]["ci"]
    assert (result.run_id, result.model, result.valid) == (cli["run_id"], cli["model"], True)
    # a unique prefix of the id is enough, as for the command
    prefix = reported.candidate[:-1]
    assert es.score(prefix, root=project.root).run_id == reported.candidate


def test_the_one_liner_of_the_readme_works_in_a_project(reported: Reported) -> None:
    root = reported.project.root
    code = f"import evalsuite as es; print(es.score({reported.candidate!r}).mean)"
    out = subprocess.run(
        [sys.executable, "-c", code],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": str(root)},
    )
    expected = json_out(reported.project.invoke("score", reported.candidate, "--json"))
    assert float(out.stdout) == pytest.approx(expected["overall"]["mean"], abs=0, rel=1e-15)


def test_compare_is_the_result_the_command_renders(reported: Reported) -> None:
    project = reported.project
    result = es.compare(reported.baseline, reported.candidate, root=project.root)
    assert isinstance(result, es.ComparisonResult)
    cli = json_out(project.invoke("compare", reported.baseline, reported.candidate, "--json"))
    assert _json(comparison_view(result).to_dict()) == cli
    assert (result.baseline, result.candidate) == (reported.baseline, reported.candidate)
    assert result.diff == cli["diff"] and list(result.interval) == cli["ci"]
    assert result.verdict == cli["verdict"] and result.gate is None
    # a gate: judged, not recorded in the store (the command records the one it is asked)
    gated = es.compare(reported.baseline, reported.candidate, root=project.root, margin=0.05)
    assert gated.gate is not None and gated.gate.status in ("PASS", "FAIL", "INCONCLUSIVE")
    assert gated.to_dict()["gate"]["margin"] == 0.05
    assert "gate" not in cli


def test_a_bad_run_id_is_a_typed_error_that_says_what_to_do(reported: Reported) -> None:
    root = reported.project.root
    with pytest.raises(
        NotFoundError, match=r"no run 'no-such-run' in the store .*`evalsuite runs` lists"
    ):
        es.score("no-such-run", root=root)
    with pytest.raises(NotFoundError, match="no-such-run"):
        es.compare(reported.baseline, "no-such-run", root=root)
    with pytest.raises(IncomparableRunsError, match="same run"):
        es.compare(reported.baseline, reported.baseline, root=root)
    assert NotFoundError.exit_code == 2  # the command's usage error


def test_a_missing_project_is_named(tmp_path: Path) -> None:
    with pytest.raises(NotFoundError, match=r"project directory .*does not exist"):
        es.score("r", root=tmp_path / "absent")


def test_the_store_is_found_as_the_command_finds_it(
    reported: Reported, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = reported.project
    url = es.open_project(project.root).store_url
    assert url.startswith("sqlite:///") and url.endswith(".evalsuite/results.sqlite")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # EVALSUITE_STORE, as for the command (the only environment variable the API reads)
    monkeypatch.setenv("EVALSUITE_STORE", url)
    assert es.open_project(elsewhere).store_url == url
    assert es.score(reported.candidate, root=elsewhere).run_id == reported.candidate
    monkeypatch.delenv("EVALSUITE_STORE")
    with pytest.raises(NotFoundError, match="no run"):
        es.score(reported.candidate, root=elsewhere)
    # or given: a URL, or an open store
    assert es.score(reported.candidate, root=elsewhere, store=url).mean == pytest.approx(
        es.score(reported.candidate, root=elsewhere, store=project.store()).mean
    )


def test_make_report_writes_the_report_and_returns_its_results(
    reported: Reported, tmp_path: Path
) -> None:
    out = tmp_path / "report"
    report = es.make_report(
        [reported.baseline, reported.candidate], out=out, root=reported.project.root
    )
    assert (out / "index.html").is_file() and (out / "report.md").is_file()
    assert [s.run_id for s in report.scores] == [reported.baseline, reported.candidate]
    (comparison,) = report.comparisons
    assert isinstance(comparison, es.ComparisonResult)
    assert json.loads((out / "report.json").read_text())["comparisons"][0]["diff"] == (
        comparison.diff
    )


def test_importing_evalsuite_loads_no_use_case() -> None:
    code = (
        "import json, sys, evalsuite as es; before = sorted(sys.modules); es.score; "
        "print(json.dumps([before, sorted(sys.modules)]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    before, after = (set(m) for m in json.loads(out.stdout))
    heavy = {"numpy", "pandas", "sqlalchemy", "scipy", "evalsuite.api", "evalsuite.service"}
    assert not before & heavy, before & heavy
    assert {"evalsuite.api", "evalsuite.service._score"} <= after  # loaded on first use
    assert sorted(es.__all__) == es.__all__ == sorted(set(es.__all__))
    assert set(es.__all__) <= set(dir(es))
