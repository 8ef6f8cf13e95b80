"""The `run` use case (issue 30): `plan_run` turns a typed `RunRequest` into the runner's spec
and refuses what does not go together; `execute_run` runs it through the runner (the probe
family's offline fake agent, as tests/run do) or hands an adaptive one to the injected
runner; importing the service (or the report) loads no inspect."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.manifest import KeySpec
from evalsuite.run import Shard
from evalsuite.service import (
    AdaptiveOptions,
    FaultOptions,
    GovernanceOptions,
    HarnessOptions,
    InspectOptions,
    ModelOptions,
    RunPlan,
    RunRequest,
    ShardOptions,
    execute_run,
    plan_run,
)
from evalsuite.store import Store, default_store_url
from tests.helpers import Project
from tests.run.conftest import make_probe_project  # registers the fake agent models too


@pytest.fixture
def probe_project(tmp_path: Path) -> Project:
    return make_probe_project(tmp_path, n_per_stratum=4)


def _request(**changes: Any) -> RunRequest:
    base: dict[str, Any] = {"ref": "probe@1.0.0", "model": ModelOptions("fakeagent/x")}
    return RunRequest(**(base | changes))


def test_the_spec_takes_every_group() -> None:
    planned = plan_run(
        _request(
            plan=RunPlan("holdout", 3, 7, limit_items=4, run_id="r-1"),
            model=ModelOptions(
                "m/x",
                model_args={"accuracy": 0.7},
                model_base_url="http://h/v1",
                temperature=0.5,
                generate={"top_p": 0.9},
            ),
            harness=HarnessOptions(5, 6, 7, tool_timeout=1.5, max_retries=3, error_threshold=0.1),
            inspect=InspectOptions(
                task_args={"q": 1}, sandbox="docker:c.yaml", max_samples=2, sandbox_cleanup=False
            ),
            governance=GovernanceOptions("rc", "fam", "why"),
            shards=ShardOptions(Shard(1, 2)),
            faults=FaultOptions(0.2, "hang", "transient"),
        )
    )
    spec = planned.spec
    assert (spec.suite, spec.version, spec.model, spec.split) == (
        "probe",
        "1.0.0",
        "m/x",
        "holdout",
    )
    assert (spec.epochs, spec.seed, spec.limit_items) == (3, 7, 4)
    assert spec.model_args == {"accuracy": 0.7} and spec.model_base_url == "http://h/v1"
    assert spec.generate_config == {"top_p": 0.9, "temperature": 0.5}
    assert (spec.message_limit, spec.time_limit, spec.token_limit) == (5, 6, 7)
    assert (spec.tool_timeout, spec.max_retries, spec.error_threshold) == (1.5, 3, 0.1)
    assert spec.task_args == {"q": 1} and spec.sandbox == "docker:c.yaml"
    assert spec.max_samples == 2 and spec.sandbox_cleanup is False
    assert (spec.purpose, spec.model_family, spec.override_reason) == ("rc", "fam", "why")
    assert (spec.fault_rate, spec.fault_kind, spec.fault_mode) == (0.2, "hang", "transient")
    assert (planned.run_id, planned.shard, planned.resume, planned.rule) == (
        "r-1",
        Shard(1, 2),
        None,
        None,
    )


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"ref": None}, "give SUITE@X.Y.Z and --model, or --resume RUN_ID"),
        ({"ref": "probe"}, "give the exact version to run, e.g. probe@1.0.0"),
        ({"plan": RunPlan(resume="r-1", run_id="r-2")}, "give no --run-id with it"),
        ({"plan": RunPlan(resume="r-1")}, "give no SUITE or --model"),
        ({"shards": ShardOptions(Shard(1, 2))}, "--shard 1/2 needs --run-id ID"),
        ({"adaptive": AdaptiveOptions(versus="r-0")}, "--versus only apply to adaptive runs"),
        (
            {"adaptive": AdaptiveOptions(True, 0.1), "plan": RunPlan(epochs=2)},
            "--adaptive plans its own attempts in rounds; drop --epochs",
        ),
        (
            {"model": ModelOptions("m", temperature=0.1, generate={"temperature": 0.2})},
            "--temperature and -G temperature=... both given",
        ),
        ({"model": ModelOptions("m", generate={"seed": 1})}, "'seed' is not allowed in a run"),
        ({"inspect": InspectOptions(sandbox=":x")}, "--sandbox expects TYPE or TYPE:CONFIG"),
    ],
)
def test_what_does_not_go_together_is_refused(changes: dict[str, Any], words: str) -> None:
    with pytest.raises(UsageError) as caught:
        plan_run(_request(**changes))
    assert words in str(caught.value)


RESUMED = RunPlan(resume="r-1")


@pytest.mark.parametrize(
    ("request_", "dropped"),
    [
        (RunRequest(plan=RESUMED, model=ModelOptions(model_args={"a": 1})), "model_args"),
        (RunRequest(plan=RESUMED, inspect=InspectOptions(log_dir="x")), "log_dir"),
        (RunRequest(plan=RESUMED, model=ModelOptions(max_tokens=3)), "generate_config"),
    ],
)
def test_resume_refuses_settings_of_its_own(request_: RunRequest, dropped: str) -> None:
    with pytest.raises(UsageError, match=f"drop {dropped}"):
        plan_run(request_)


def test_a_plain_resume_is_planned() -> None:
    planned = plan_run(RunRequest(plan=RunPlan(resume="r-1"), shards=ShardOptions(Shard(2, 2))))
    assert (planned.resume, planned.shard, planned.rule) == ("r-1", Shard(2, 2), None)


def _keys(project: Project) -> KeySpec:
    return KeySpec(key_dir=project.key_dir, key_file=None, project=project.root)


def _store(project: Project) -> Store:
    return Store(default_store_url(Layout(project.root).state))


def test_execute_run_runs_and_stores_the_request(probe_project: Project) -> None:
    request = _request(
        plan=RunPlan(epochs=2, seed=3, limit_items=4),
        model=ModelOptions("fakeagent/x", model_args={"accuracy": 0.7}),
        progress=False,
    )
    outcome = execute_run(
        request,
        layout=Layout(probe_project.root),
        keys=_keys(probe_project),
        store=_store(probe_project),
    )
    result = outcome.result
    assert outcome.adaptive is None and outcome.invalid is None
    assert result.health.planned == 8 and result.health.valid
    stored = _store(probe_project).get_run(result.run.run_id)
    assert stored.spec["model_args"] == {"accuracy": 0.7}
    assert (stored.spec["epochs"], stored.spec["seed"], stored.spec["limit_items"]) == (2, 3, 4)
    assert len(_store(probe_project).attempts(result.run.run_id)) == 8


def test_an_invalid_run_says_why_it_exits_5(probe_project: Project) -> None:
    request = _request(
        plan=RunPlan(limit_items=4),
        faults=FaultOptions(rate=1.0),
        harness=HarnessOptions(max_retries=0),
        progress=False,
    )
    outcome = execute_run(
        request,
        layout=Layout(probe_project.root),
        keys=_keys(probe_project),
        store=_store(probe_project),
    )
    assert outcome.invalid is not None and outcome.invalid.exit_code == 5
    assert "100.0% harness errors > 5%" in str(outcome.invalid)


def test_an_adaptive_request_goes_to_the_injected_runner(tmp_path: Path) -> None:
    calls: list[tuple[Any, ...]] = []

    def runner(layout: Layout, spec: Any, rule: Any, **kwargs: Any) -> tuple[Any, dict[str, Any]]:
        calls.append((spec, rule, kwargs))
        return "result", {"rounds": []}

    request = _request(
        adaptive=AdaptiveOptions(True, target_halfwidth=0.1, max_calls=9),
        plan=RunPlan(seed=4, run_id="r-a"),
        progress=False,
    )
    layout = Layout(tmp_path)
    keys = KeySpec(key_dir=tmp_path, key_file=None, project=tmp_path)
    store: Any = object()
    with pytest.raises(UsageError, match="pass run_adaptive= to execute_run"):
        execute_run(request, layout=layout, keys=keys, store=store)
    outcome = execute_run(
        request, layout=layout, keys=keys, store=store, run_adaptive=runner, stop_within_s=2.0
    )
    assert outcome.adaptive == {"rounds": []} and outcome.result == "result"
    ((spec, rule, kwargs),) = calls
    assert spec.model == "fakeagent/x" and rule.target_halfwidth == 0.1
    assert (rule.max_calls, rule.seed) == (9, 4)
    assert kwargs["run_id"] == "r-a" and kwargs["stop_within_s"] == 2.0
    assert kwargs["progress"] is False and kwargs["store"] is store


def test_importing_the_service_and_the_report_loads_no_inspect() -> None:
    # the harness contract lets service/ call the runner's front inside the function that
    # runs (pyproject.toml); what it keeps is that nothing is loaded by importing them
    probe = (
        "import json, sys\n"
        "import evalsuite.service as s, evalsuite.report\n"
        "s.RunRequest, s.execute_run, s.plan_run, s.comparison_view\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    ).stdout
    modules = set(json.loads(out))
    assert "evalsuite.service._run" in modules
    assert not {m for m in modules if m.split(".")[0] == "inspect_ai"}
    assert not {m for m in modules if m.startswith("evalsuite.run")}
