"""SIGINT and SIGTERM part-way through a run: stored as interrupted, exit 130, resumable.

Real processes receive real signals; the resumed run must hold exactly the attempts of an
uninterrupted run with the same seed, and a resumed holdout run spends no second look.
"""

from __future__ import annotations

import asyncio
import gc
import json
import os
import signal
from pathlib import Path

import pandas as pd
import pytest

from evalsuite.errors import EvalsuiteError
from evalsuite.holdout import read_ledger
from tests.helpers import Project, finish, json_out
from tests.run.conftest import STABLE, make_probe_project
from tests.run.processes import spawn, store_of, wait_for_attempts

RUN = (
    "run",
    "probe@1.0.0",
    "--model",
    "fakeagent/x",
    "-M",
    "accuracy=0.6",
    "--epochs",
    "3",
    "--seed",
    "11",
    "--max-samples",
    "1",
    "--no-progress",
    "--json",
)
PLANNED = 12  # 4 dev items x 3 epochs
KEPT = 3  # the interrupted run is held after this many attempts (two model calls each)


def _uninterrupted(root: Path, args: tuple[str, ...]) -> pd.DataFrame:
    """The attempts of run `args` in a probe project of its own at `root`, never interrupted."""
    project = make_probe_project(root, n_per_stratum=4)
    result = project.invoke(*args)
    assert result.exit_code == 0, result.stderr
    frame = store_of(project).attempts(json_out(result)["run_id"])[STABLE]
    assert len(frame) == PLANNED
    return frame


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The attempts of the same run, never interrupted."""
    return _uninterrupted(tmp_path_factory.mktemp("reference"), RUN)


HOLDOUT = (*RUN, "--split", "holdout")


@pytest.fixture(scope="module")
def holdout_reference(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The attempts of the same holdout run, never interrupted (a project of its own, so that
    its look is not counted against the interrupted run's)."""
    return _uninterrupted(tmp_path_factory.mktemp("holdout-reference"), HOLDOUT)


def _interrupt(
    project: Project, sig: signal.Signals, *args: str, fresh: bool = False
) -> tuple[str, str]:
    """Signal a run process held by its fake model after `KEPT` attempts (its later model
    calls wait for a file, tests/run/fake_models.py): the signal lands mid-run every time,
    with no delay to wait out. The file is made afterwards, so the resumed run is not held."""
    gate = project.root.parent / f"{project.root.name}-gate"
    held = ("-M", f"hold_after={2 * KEPT}", "-M", f"hold_until={gate}")
    victim = spawn(project, *args, *held, fresh=fresh)
    run_id = wait_for_attempts(store_of(project), at_least=KEPT, proc=victim)
    victim.send_signal(sig)
    out, err = finish(victim)
    gate.touch()
    assert victim.returncode == 130, err
    assert f"interrupted ({sig.name})" in err
    assert f"evalsuite run --resume {run_id}" in err
    assert json.loads(out)["exit_code"] == 130
    return run_id, err


def _kept_attempts_finished(kept: pd.DataFrame) -> None:
    """Every attempt an interrupted run kept finished; cancellations are not harness errors."""
    assert len(kept) == KEPT
    assert set(kept["outcome"]) <= {"scored", "limit"}
    assert not kept["reason"].fillna("").str.contains("Cancelled|not run").any()


# SIGINT on a dev run (about 10 s of CPU: a run process): `make slow`. In `make test` a real
# SIGINT reaches a real run process in test_an_interrupted_holdout_run_resumes_without_a_second_look
# (the same checks of the interrupted run, resumed to the uninterrupted run's attempts) and in
# tests/run/test_shards.py::test_an_interrupted_shard_resumes_alone_and_completes_the_run; the
# dev run resumed to the uninterrupted attempts is the SIGTERM variant (docs/design/test-speed.md)
@pytest.mark.parametrize(
    "sig",
    [pytest.param(signal.SIGINT, marks=pytest.mark.slow), signal.SIGTERM],
    ids=["SIGINT", "SIGTERM"],
)
def test_a_signalled_run_is_interrupted_and_resumes_to_the_uninterrupted_attempts(
    tmp_path: Path, sig: signal.Signals, reference: pd.DataFrame
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    store = store_of(project)
    # the SIGINT variant (`make slow`) starts a fresh interpreter: a real start-up, then a
    # real signal; the others are forked by the tests' zygote (tests/zygote.py)
    run_id, _ = _interrupt(project, sig, *RUN, fresh=sig == signal.SIGINT)
    run = store.get_run(run_id)
    assert run.status == "interrupted"
    assert run.valid is None  # not judged: it is not finished
    _kept_attempts_finished(store.attempts(run_id))
    listed = json_out(project.invoke("runs", "--json"))
    assert [(r["run_id"], r["status"]) for r in listed] == [(run_id, "interrupted")]

    resumed = project.invoke("run", "--resume", run_id, "--json", "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    assert json_out(resumed)["resumed"] is True
    assert store.get_run(run_id).status == "complete"
    pd.testing.assert_frame_equal(store.attempts(run_id)[STABLE], reference)


def test_an_interrupted_holdout_run_resumes_without_a_second_look(
    tmp_path: Path, holdout_reference: pd.DataFrame
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    store = store_of(project)
    run_id, err = _interrupt(project, signal.SIGINT, *HOLDOUT)
    assert "spends no further look" in err
    run = store.get_run(run_id)
    assert (run.status, run.valid) == ("interrupted", None)
    _kept_attempts_finished(store.attempts(run_id))
    resumed = project.invoke("run", "--resume", run_id, "--json", "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    assert json_out(resumed)["resumed"] is True
    assert store.get_run(run_id).status == "complete"
    frame = store.attempts(run_id)
    assert len(frame) == PLANNED
    assert set(frame["outcome"]) == {"scored"}
    pd.testing.assert_frame_equal(frame[STABLE], holdout_reference)
    ledger = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    assert [(e.run_id, e.resumed) for e in ledger] == [(run_id, False), (run_id, True)]
    status = json_out(project.invoke("holdout", "status", "probe@1.0.0", "--json"))
    assert status["families"] == [
        {"model_family": "fakeagent/x", "runs": 1, "remaining": 2, "run_ids": [run_id]}
    ]
    assert project.invoke("verify", "probe").exit_code == 0


def test_run_interrupted_is_in_the_exception_tree_with_exit_130() -> None:
    from evalsuite.errors import RunInterrupted
    from evalsuite.run import RunInterrupted as reexported

    assert reexported is RunInterrupted
    assert issubclass(RunInterrupted, EvalsuiteError)
    assert RunInterrupted.exit_code == 130


@pytest.mark.slow  # three run processes (about 7 s)
def test_sigterm_during_a_resume_stops_it_again_quietly_and_it_still_completes(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    """A resumed run interrupted in turn: exit 130 again, only evalsuite's own message on
    stderr (issue 28 saw a stray ``JsonChange(`` line: the source line Python's warning about
    a coroutine the cancellation left unawaited printed), and a third start completes it."""
    project = make_probe_project(tmp_path, n_per_stratum=4)
    store = store_of(project)
    run_id, first = _interrupt(project, signal.SIGINT, *RUN)
    gate = project.root.parent / f"{project.root.name}-gate"
    gate.unlink()  # the resumed run (its stored -M hold_until) is held again after 3 attempts
    victim = spawn(project, "run", "--resume", run_id, "--no-progress", "--json")
    wait_for_attempts(store, at_least=2 * KEPT, proc=victim)
    victim.send_signal(signal.SIGTERM)
    out, err = finish(victim)
    gate.touch()
    assert victim.returncode == 130, err
    assert json.loads(out)["exit_code"] == 130
    assert "interrupted (SIGTERM)" in err and f"evalsuite run --resume {run_id}" in err
    for stderr in (first, err):
        assert "JsonChange(" not in stderr
        assert "never awaited" not in stderr
    assert store.get_run(run_id).status == "interrupted"
    assert len(store.attempts(run_id)) == 2 * KEPT
    resumed = project.invoke("run", "--resume", run_id, "--json", "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    pd.testing.assert_frame_equal(store.attempts(run_id)[STABLE], reference)


def test_a_signal_silences_the_warnings_of_coroutines_its_cancellation_leaves_unstarted(
    recwarn: pytest.WarningsRecorder,
) -> None:
    """Issue 28 saw a stray ``JsonChange(`` line on SIGTERM during a resume: Python's
    "coroutine ... was never awaited" warning, for a coroutine of inspect's task groups that the
    cancellation left unstarted, prints the source line running when it is collected. After
    a signal those coroutines are expected; before one, the warning stays."""
    from evalsuite.run._runner import _SignalGuard

    async def main() -> None:
        pending = asyncio.sleep(0)  # started by nobody, as a cancelled task group leaves it
        os.kill(os.getpid(), signal.SIGTERM)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            del pending  # collected during the cancellation
            raise

    with _SignalGuard() as guard, pytest.raises(asyncio.CancelledError):
        asyncio.run(main())
    assert guard.name() == "SIGTERM"
    assert [str(w.message) for w in recwarn if "never awaited" in str(w.message)] == []
    _ = asyncio.sleep(0)  # outside a signalled run the warning is Python's as ever
    del _
    gc.collect()
    assert any("never awaited" in str(w.message) for w in recwarn)
