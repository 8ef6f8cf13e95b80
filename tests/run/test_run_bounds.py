"""What bounds a run (issue 28): its planned attempts, the limits its episodes run under, and
limits an agent's own loop swallowed (docs/design/run-limits.md)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from evalsuite.run import _spec
from tests.helpers import (
    Project,
    finish,
    json_out,
    make_items,
    suite_toml,
    wait_until,
    write_jsonl,
)
from tests.run.conftest import make_probe_project
from tests.run.processes import spawn, store_of


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Project:
    """A frozen probe project shared by the refusals below (they store nothing)."""
    return make_probe_project(tmp_path_factory.mktemp("bounds"), n_per_stratum=2)


def test_a_billion_epochs_is_refused_at_once_naming_the_cap(probe: Project) -> None:
    start = time.perf_counter()
    result = probe.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "1000000000", "--json",
    )  # fmt: skip
    elapsed = time.perf_counter() - start
    assert result.exit_code == 2, result.stderr
    assert "--epochs 1,000,000,000 is above the cap of 1,000 epochs per item" in result.stderr
    assert "ingest" in result.stderr  # why: the cap ingest applies too
    assert json_out(result)["error"] == "UsageError"
    assert elapsed < 5  # refused before anything is planned (it took 90 s and 1.35 GB)
    assert store_of(probe).list_runs() == []


@pytest.mark.parametrize("model", ["fakeagent/x[/]", "fakeagent/[bold]x", "fakeagent/x\x1b[2J"])
def test_a_model_name_inspect_would_read_as_markup_is_refused_before_the_run(
    probe: Project, model: str
) -> None:
    """``x[/]`` failed inspect's display after every attempt ran (the run stored interrupted;
    on the holdout a look spent): refused first, nothing stored."""
    result = probe.invoke("run", "probe@1.0.0", "--model", model, "--epochs", "1")
    assert result.exit_code == 2, result.stderr
    assert "may not contain square brackets or control characters" in result.stderr
    assert "\x1b" not in result.stderr
    assert store_of(probe).list_runs() == []


def test_planned_attempts_above_the_cap_are_refused_before_planning(
    probe: Project, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_spec, "MAX_PLANNED_ATTEMPTS", 10)  # 2 dev items x 6 epochs = 12
    result = probe.invoke("run", "probe@1.0.0", "--model", "fakeagent/x", "--epochs", "6")
    assert result.exit_code == 2, result.stderr
    assert "2 items x 6 epochs = 12 planned attempts, above the cap of 10" in result.stderr
    assert "--limit" in result.stderr
    assert store_of(probe).list_runs() == []


def test_epochs_at_the_cap_pass_the_check() -> None:
    _spec.check_plan_size(_spec.MAX_EPOCHS, 1)  # the cap itself is allowed
    with pytest.raises(Exception, match="above the cap"):
        _spec.check_plan_size(_spec.MAX_EPOCHS + 1)


SWALLOWING_TASK = '''
from inspect_ai import Task, task
from inspect_ai.model import ChatMessageUser, get_model
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver


@solver
def chatty():
    """An agent loop like inspect_evals' tau2 user simulator: it catches every exception,
    inspect's LimitExceededError included, and returns normally."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for _ in range(30):
            try:
                state.output = await get_model().generate(state.messages)
                state.messages.append(state.output.message)
                state.messages.append(ChatMessageUser(content="go on"))
            except Exception:
                pass
        return state

    return solve


@scorer(metrics=[accuracy()])
def lenient():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value="C")  # passes whatever the model did, as tau2's did for 40%

    return score


@task
def fam(dataset=None{limit_arg}):
    return Task(dataset=list(dataset or []), solver=chatty(), scorer=lenient(){limits})
'''


def _swallowing_project(root: Path, limits: str = ", message_limit=6") -> Project:
    """A frozen suite of one family whose agent loop swallows inspect's limit errors."""
    (root / "tasks" / "fam").mkdir(parents=True)
    (root / "tasks" / "fam" / "task.py").write_text(
        SWALLOWING_TASK.replace("{limit_arg}", "").replace("{limits}", limits)
    )
    write_jsonl(root / "tasks" / "fam" / "items.jsonl", make_items(n_per_stratum=2))
    (root / "tasks" / "demo.toml").write_text(suite_toml())
    project = Project(root=root, key_dir=root.parent / "keys")
    frozen = project.invoke("freeze", "demo", "--version", "1.0.0", "--skip-audit", "--reason", "t")
    assert frozen.exit_code == 0, frozen.stderr
    return project


@pytest.mark.parametrize("split", ["dev", "holdout"])
def test_a_limit_the_agent_loop_swallowed_is_a_limit_not_a_score(
    tmp_path: Path, split: str
) -> None:
    project = _swallowing_project(tmp_path / "project")
    result = project.invoke(
        "run", "demo@1.0.0", "--model", "mockllm/model", "--split", split, "--no-progress",
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    # today: 4 scored, 0 limits, mean 1.0 for a model that did nothing
    assert out["harness"]["limits"] == out["harness"]["planned"] == 2
    assert out["mean"] == 0.0
    frame = store_of(project).attempts(out["run_id"])
    assert set(frame["outcome"]) == {"limit"}
    assert set(frame["limit_type"]) == {"message"}
    assert set(frame["score"]) == {0.0}
    assert frame["reason"].str.contains("caught by the agent's own loop").all()


SLOW_TO_CANCEL_TASK = '''
import os
import time
from pathlib import Path

import anyio
from inspect_ai import Task, task
from inspect_ai.scorer import Score, Target, accuracy, scorer
from inspect_ai.solver import Generate, TaskState, solver


@solver
def stubborn():
    """Waits (while $HOLD_DIR is set); cancelled, it takes two minutes to give up, as inspect
    did logging the cancelled samples of tau2_airline (gigabytes of transcript)."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        hold = os.environ.get("HOLD_DIR")
        if hold:
            Path(hold, str(state.sample_id)).touch()
            try:
                await anyio.sleep(3600)
            except BaseException:
                time.sleep(120)
                raise
        return await generate(state)

    return solve


@scorer(metrics=[accuracy()])
def answered():
    async def score(state: TaskState, target: Target) -> Score:
        return Score(value=1.0 if state.output.completion else 0.0)

    return score


@task
def fam(dataset=None):
    return Task(dataset=list(dataset or []), solver=stubborn(), scorer=answered(), time_limit=7200)
'''


# SIGINT (about 5 s: the zygote's first fork in a session) in `make slow`, like
# tests/run/test_interrupt.py's; SIGTERM in `make test`
@pytest.mark.parametrize(
    "sig",
    [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGTERM],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signal_stops_a_run_within_seconds_however_slow_inspect_is_to_cancel(
    tmp_path: Path, sig: signal.Signals
) -> None:
    root = tmp_path / "project"
    (root / "tasks" / "fam").mkdir(parents=True)
    (root / "tasks" / "fam" / "task.py").write_text(SLOW_TO_CANCEL_TASK)
    write_jsonl(root / "tasks" / "fam" / "items.jsonl", make_items(n_per_stratum=2))
    (root / "tasks" / "demo.toml").write_text(suite_toml())
    project = Project(root=root, key_dir=tmp_path / "keys")
    frozen = project.invoke("freeze", "demo", "--version", "1.0.0", "--skip-audit", "--reason", "t")
    assert frozen.exit_code == 0, frozen.stderr
    held = tmp_path / "held"
    held.mkdir()
    victim = spawn(
        project, "run", "demo@1.0.0", "--model", "mockllm/model", "--no-progress", "--json",
        env={"HOLD_DIR": str(held), "EVALSUITE_STOP_WITHIN": "1"},
    )  # fmt: skip
    wait_until(lambda: any(held.iterdir()), "a sample started", proc=victim)
    signalled = time.monotonic()
    victim.send_signal(sig)
    out, err = finish(victim, timeout_s=30)
    stopped_after = time.monotonic() - signalled
    assert victim.returncode == 130, err
    assert stopped_after < 6, stopped_after  # was: no answer in 15 s, to SIGINT or SIGTERM
    assert json.loads(out) == {
        "error": "RunInterrupted",
        "message": json.loads(out)["message"],
        "exit_code": 130,
    }
    assert f"interrupted ({sig.name})" in err
    assert "still finishing its cancelled samples 1 s after the signal" in err
    (run,) = store_of(project).list_runs()
    assert run.status == "interrupted"  # was left "running"
    assert f"evalsuite run --resume {run.run_id}" in err
    resumed = project.invoke("run", "--resume", run.run_id, "--no-progress", "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json_out(resumed)["harness"]["scored"] == 2
    assert store_of(project).get_run(run.run_id).status == "complete"


def test_a_task_without_limits_is_refused_unless_the_run_sets_one(tmp_path: Path) -> None:
    """inspect_evals' tau2_airline declares no limit: without --message-limit it ran past 10
    minutes and 7 GB. A family no limit bounds is refused, naming the options."""
    project = _swallowing_project(tmp_path / "project", limits="")
    refused = project.invoke("run", "demo@1.0.0", "--model", "mockllm/model", "--json")
    assert refused.exit_code == 2, refused.stderr
    assert json_out(refused)["error"] == "UsageError"
    assert "family 'fam' (fam/task.py) declares no message, token or time limit" in refused.stderr
    assert "--message-limit N, --token-limit N or --time-limit SECONDS" in refused.stderr
    assert store_of(project).list_runs() == []
    bounded = project.invoke(
        "run", "demo@1.0.0", "--model", "mockllm/model", "--message-limit", "6", "--json",
        "--no-progress",
    )  # fmt: skip
    assert bounded.exit_code == 0, bounded.stderr
    assert json_out(bounded)["harness"]["limits"] == 2  # the run's limit, swallowed, is found
