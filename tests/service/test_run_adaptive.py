"""`service.run_adaptive`: the adaptive run's driver, with the round runner as a parameter.

The runner here is `run_suite` on the offline `fakeagent` (no command line in between), so
the test shows what the service needs of the caller: one call per round and one to finish.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.analyse import AdaptiveRule
from evalsuite.errors import IncomparableRunsError, IntegrityError
from evalsuite.manifest import KeySpec
from evalsuite.report import render_view_html, render_view_markdown
from evalsuite.run import RunResult, RunSpec, run_suite
from evalsuite.service import (
    AdaptiveResult,
    AdaptiveRunResult,
    RoundStep,
    adaptive_result,
    adaptive_view,
    run_adaptive,
)
from evalsuite.store import Store
from tests.helpers import Project
from tests.run.conftest import make_probe_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return make_probe_project(tmp_path_factory.mktemp("service-adaptive"), n_per_stratum=6)


def _spec() -> RunSpec:
    return RunSpec(
        suite="probe", version="1.0.0", model="fakeagent/x", model_args={"accuracy": 0.6}
    )


def _runner(project: Project, steps: list[RoundStep]) -> Callable[[RoundStep], RunResult]:
    keys = KeySpec(key_dir=project.key_dir)
    layout = Layout(project.root)

    def run_round(step: RoundStep) -> RunResult:
        steps.append(step)
        return run_suite(
            layout,
            _spec().model_copy(update=dict(step.spec_update)),
            keys=keys,
            store=project.store(),
            progress=False,
            run_id=step.run_id,
            resume=step.resume,
            attempts=list(step.attempts),
            finish=step.finish,
        )

    return run_round


def test_run_adaptive_returns_a_typed_result_kept_in_the_store(project: Project) -> None:
    steps: list[RoundStep] = []
    rule = AdaptiveRule(target_halfwidth=0.3, max_epochs=3, seed=0)
    store = project.store()
    done = run_adaptive(
        Layout(project.root),
        _spec(),
        rule,
        store=store,
        run_round=_runner(project, steps),
        run_id="adaptive-1",
    )
    assert isinstance(done, AdaptiveRunResult) and isinstance(done.adaptive, AdaptiveResult)
    found = done.adaptive
    assert done.run.run.run_id == found.run_id == "adaptive-1"
    # one call per round, then one that finishes the run with no new attempt
    assert len(steps) == len(found.rounds) + 1
    assert steps[0].run_id == "adaptive-1" and steps[0].resume is None
    assert all(s.resume == "adaptive-1" and s.run_id is None for s in steps[1:])
    assert [s.finish for s in steps] == [False] * len(found.rounds) + [True]
    assert steps[-1].attempts == steps[-2].attempts
    # the rule as given, with the method of the design that runs it (issue 31: few-stage)
    assert steps[0].spec_update == {
        "adaptive": rule.to_dict() | {"method": found.method},
        "epochs": 1,
    }
    # the typed result: rounds, calls, interval
    assert found.items == 6 and found.rounds[0].attempts == 12  # the pilot: every item twice
    assert found.calls == sum(r.attempts for r in found.rounds) == len(steps[-1].attempts)
    assert found.calls <= found.budget == 3 * 6
    assert found.ci is not None and found.ci[0] is not None and found.ci[1] is not None
    assert found.ci[0] <= (found.estimate or 0.0) <= found.ci[1]
    assert found.stop_reason and found.versus is None
    assert store.get_run("adaptive-1").status == "complete"
    assert len(store.attempts("adaptive-1")) == found.calls
    # kept in the store: read back, it is the same result, and its JSON is the summary
    again = adaptive_result(store, Layout(project.root), "adaptive-1")
    assert again == found and again.to_dict() == found.to_dict() == store.adaptive("adaptive-1")
    # one view: the headline's numbers are those of the table's last round
    view = adaptive_view(found)
    last = view.tables[0].rows[-1]
    assert last[5] in view.headline and f"{found.calls} of {found.budget}" in view.headline
    assert f"Stopped: {found.stop_reason}." in render_view_markdown(view)
    assert 'data-view="adaptive"' in render_view_html(view)
    assert set(found.to_dict()) <= set(view.to_dict())  # JSON: every field, plus the sentences


def test_run_adaptive_versus_a_run_of_another_split_is_refused_before_any_round(
    project: Project,
) -> None:
    steps: list[RoundStep] = []
    base = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--split", "holdout",
        "--purpose", "test", "--no-progress", "--json",
    )  # fmt: skip
    assert base.exit_code == 0, base.stderr
    base_id = json.loads(base.stdout)["run_id"]
    rule = AdaptiveRule(versus=base_id, seed=0)
    with pytest.raises(IncomparableRunsError, match="compare runs of the same suite version"):
        run_adaptive(
            Layout(project.root),
            _spec(),
            rule,
            store=project.store(),
            run_round=_runner(project, steps),
        )
    assert steps == []


def test_an_old_run_without_a_stored_summary_is_an_integrity_error(tmp_path: Path) -> None:

    store = Store(f"sqlite:///{tmp_path / 'results.sqlite'}")
    with pytest.raises(IntegrityError, match="adaptive run gone: its rounds summary"):
        adaptive_result(store, Layout(tmp_path), "gone")


def test_versus_with_a_target_halfwidth_is_refused_before_any_round(project: Project) -> None:
    from evalsuite.errors import UsageError

    steps: list[RoundStep] = []
    rule = AdaptiveRule(target_halfwidth=0.1, versus="some-run", seed=0)
    with pytest.raises(UsageError, match="give one of them"):
        run_adaptive(
            Layout(project.root),
            _spec(),
            rule,
            store=project.store(),
            run_round=_runner(project, steps),
        )
    assert steps == []
