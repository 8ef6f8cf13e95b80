"""Sharded runs (docs/design/sharded-runs.md): N processes, one run, one look.

The shards' attempts must be exactly those of the same run made by one process; the run is
complete (and judged over all its attempts) only when every shard is; an interrupted shard
resumes alone; a holdout run split into shards spends one look; bad --shard, a missing
--run-id and shards started with other settings are refused before anything runs.
"""

from __future__ import annotations

import json
import re
import signal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from inspect_ai.log import read_eval_log

from evalsuite.errors import UsageError
from evalsuite.holdout import read_ledger
from evalsuite.run import EPISODE_KEY, Shard
from evalsuite.run._log_files import find_inspect_logs
from tests.helpers import SLOW_ON_POSTGRESQL, Project, finish, json_out, wait_until
from tests.pg import PgServer
from tests.run.conftest import STABLE, make_probe_project
from tests.run.processes import spawn
from tests.s3 import S3Server, s3_server

BASE = (
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
    "--no-progress",
    "--json",
)
PLANNED = 12  # 4 dev items x 3 epochs


@pytest.fixture(
    params=["sqlite", pytest.param("postgresql", marks=[pytest.mark.postgres, pytest.mark.slow])]
)
def backend(request: pytest.FixtureRequest) -> str | None:
    """The project's own SQLite store (None), and (slow) a new PostgreSQL database."""
    if request.param == "sqlite":
        return None
    server: PgServer = request.getfixturevalue("pg")
    return server.new_database()


def _project(tmp_path: Path, store_url: str | None = None) -> Project:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    project.store_url = store_url
    return project


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str]:
    """The same run made by one process: its project and run id."""
    project = _project(tmp_path_factory.mktemp("reference"))
    result = project.invoke(*BASE)
    assert result.exit_code == 0, result.stderr
    return project, json_out(result)["run_id"]


@pytest.fixture(scope="module")
def reference(reference_run: tuple[Project, str]) -> pd.DataFrame:
    """The attempts of the same run made by one process."""
    project, run_id = reference_run
    frame = project.store().attempts(run_id)[STABLE]
    assert len(frame) == PLANNED
    return frame


def _scores(project: Project, run_id: str) -> Any:
    """`evalsuite score RUN --json`: health, estimates, strata, pass@k (the run id left out)."""
    result = project.invoke("score", run_id, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(json.dumps(json_out(result)).replace(run_id, "<run>"))


def _logged(location: str) -> tuple[Counter[tuple[str, int]], list[str], list[str]]:
    """The inspect logs at `location`: their finished samples by (item, epoch), each log's
    status, and how each sample cut off by an interrupt ended (``status: error``)."""
    files = find_inspect_logs(location)
    assert files, f"no inspect logs at {location}"
    samples: Counter[tuple[str, int]] = Counter()
    statuses, cut_off = [], []
    for file in files:
        log = read_eval_log(file)
        statuses.append(log.status)
        for sample in log.samples or []:
            if sample.error is not None:
                cut_off.append(f"{log.status}: {sample.error.message}")
                continue
            episode = (sample.metadata or {})[EPISODE_KEY]
            samples[(episode["item_id"], int(episode["epoch"]))] += 1
    return samples, sorted(statuses), cut_off


def _planned(frame: pd.DataFrame) -> Counter[tuple[str, int]]:
    return Counter(zip(frame["item_id"], frame["epoch"].astype(int), strict=True))


def _together(
    project: Project,
    scratch: Path,
    commands: list[tuple[str, ...]],
    env: dict[str, str] | None = None,
) -> list[tuple[int, str, str]]:
    """Run CLI commands as processes that start their work within milliseconds."""
    scratch.mkdir(parents=True, exist_ok=True)
    go = scratch / "go"
    env = dict(env or {})
    if project.store_url:
        env["EVALSUITE_STORE"] = project.store_url
    ready = [scratch / f"ready-{n}" for n in range(len(commands))]
    procs = [
        spawn(project, *command, env=env, go=go, ready=r)
        for command, r in zip(commands, ready, strict=True)
    ]
    wait_until(  # a process that ended early counts: its exit code and stderr tell why
        lambda: all(r.exists() or p.poll() is not None for r, p in zip(ready, procs, strict=True)),
        "the shard processes are ready",
    )
    go.touch()
    outs = [finish(p) for p in procs]
    return [(p.returncode, out, err) for p, (out, err) in zip(procs, outs, strict=True)]


# the share of a shard ----------------------------------------------------------------------


def test_shares_are_disjoint_cover_the_plan_and_are_balanced() -> None:
    plan = list(range(23))
    for n in (1, 2, 3, 7, 23, 30):
        shares = [Shard(i, n).share(plan) for i in range(1, n + 1)]
        assert sorted(x for share in shares for x in share) == plan
        assert max(map(len, shares)) - min(map(len, shares)) <= 1
    assert Shard(2, 3).share(plan)[:3] == [1, 4, 7]  # every N-th from the I-th, in order


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3/2", "I must be between 1 and N (2)"),
        ("0/2", "JOB_COMPLETION_INDEX + 1"),
        ("1/0", "N, the number of shards, must be at least 1"),
        ("two/4", "--shard expects I/N"),
        ("2", "--shard expects I/N"),
        ("-1/2", "--shard expects I/N"),
        ("1/2/3", "--shard expects I/N"),
    ],
)
def test_a_bad_shard_says_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(UsageError, match=re.escape(expected)):
        Shard.parse(text)


def test_bad_shard_options_are_refused_before_anything_runs(tmp_path: Path) -> None:
    project = _project(tmp_path)
    cases = [
        (("--shard", "3/2", "--run-id", "r1"), "I must be between 1 and N (2)"),
        (("--shard", "0/2", "--run-id", "r1"), "count from 1"),
        (("--shard", "x", "--run-id", "r1"), "--shard expects I/N"),
        (("--shard", "1/2"), "--shard 1/2 needs --run-id"),
        (("--shard", "1/2", "--run-id", "bad id/.."), "cannot name a run"),
        (("--resume", "r1", "--run-id", "r1"), "give no --run-id"),
    ]
    for extra, message in cases:
        result = project.invoke(*BASE, *extra)
        assert result.exit_code == 2, (extra, result.stderr)
        assert message in result.stderr, (extra, result.stderr)
    assert project.store().list_runs() == []  # nothing stored


# shards in turn, in process ----------------------------------------------------------------


def test_shards_in_turn_fill_one_run_equal_to_an_unsharded_one(
    tmp_path: Path, reference: pd.DataFrame
) -> None:
    project = _project(tmp_path)
    store = project.store()
    first = project.invoke(*BASE, "--run-id", "job-7", "--shard", "1/3")
    assert first.exit_code == 0, first.stderr
    out = json_out(first)
    assert (out["run_id"], out["shard"], out["run_complete"]) == ("job-7", "1/3", False)
    assert out["shards_complete"] == 1
    assert out["harness"]["planned"] == 4  # its share, not the run
    run = store.get_run("job-7")
    assert (run.status, run.planned, run.valid) == ("running", PLANNED, None)
    assert run.spec["shards"] == 3
    assert len(store.attempts("job-7")) == 4
    text = project.invoke(
        *[a for a in BASE if a != "--json"], "--run-id", "job-7", "--shard", "2/3"
    )
    assert text.exit_code == 0, text.stderr
    assert "shard 2/3 done" in text.stdout
    assert "2 of 3 shards complete" in text.stdout
    assert store.get_run("job-7").status == "running"

    last = project.invoke(*BASE, "--run-id", "job-7", "--shard", "3/3")
    assert last.exit_code == 0, last.stderr
    out = json_out(last)
    assert (out["run_complete"], out["shards_complete"]) == (True, 3)
    assert out["harness"]["planned"] == PLANNED  # the whole run's health
    run = store.get_run("job-7")
    assert (run.status, run.valid) == ("complete", True)
    assert [s.status for s in store.shards("job-7")] == ["complete"] * 3
    pd.testing.assert_frame_equal(store.attempts("job-7")[STABLE], reference)
    score = json_out(project.invoke("score", "job-7", "--json"))
    assert score["harness"]["planned"] == PLANNED

    again = project.invoke(*BASE, "--run-id", "job-7", "--shard", "2/3")  # a job retry
    assert again.exit_code == 0, again.stderr
    assert json_out(again)["run_complete"] is True
    pd.testing.assert_frame_equal(store.attempts("job-7")[STABLE], reference)


def test_an_empty_share_is_not_judged_and_says_so(tmp_path: Path) -> None:
    """More shards than attempts: a share with nothing to run is neither valid nor invalid."""
    project = _project(tmp_path)
    shards = PLANNED + 1
    empty = project.invoke(*BASE, "--run-id", "wide", "--shard", f"{shards}/{shards}")
    assert empty.exit_code == 0, empty.stderr
    out = json_out(empty)
    assert out["harness"]["planned"] == 0 and out["run_complete"] is False
    assert out["valid"] is None
    text = project.invoke(
        *[a for a in BASE if a != "--json"], "--run-id", "wide", "--shard", f"1/{shards}"
    )
    assert text.exit_code == 0, text.stderr
    assert "this shard's share: 1 attempts" in text.stdout
    again = project.invoke(
        *[a for a in BASE if a != "--json"], "--run-id", "wide2", "--shard", f"{shards}/{shards}"
    )
    message = " ".join(again.stdout.split())
    assert "this shard's share is empty" in message and "nan" not in message
    assert project.store().get_run("wide").valid is None  # the run is judged when complete


def test_shards_with_other_settings_cannot_join_the_run(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert project.invoke(*BASE, "--run-id", "j", "--shard", "1/2").exit_code == 0
    epochs = [a if a != "3" else "2" for a in BASE]
    other = project.invoke(*epochs, "--run-id", "j", "--shard", "2/2")
    assert other.exit_code == 2
    assert "epochs: the run has 3, this shard has 2" in other.stderr
    model = [a if a != "fakeagent/x" else "fakeagent/y" for a in BASE]
    other = project.invoke(*model, "--run-id", "j", "--shard", "2/2")
    assert other.exit_code == 2
    assert "model: the run has 'fakeagent/x', this shard has 'fakeagent/y'" in other.stderr
    other = project.invoke(*BASE, "--run-id", "j", "--shard", "2/2", "--log-dir", "s3://b/j")
    assert other.exit_code == 2  # one shared log directory: another is refused
    assert "log_dir: the run has None, this shard has 's3://b/j'" in other.stderr
    other = project.invoke(*BASE, "--run-id", "j", "--shard", "2/3")
    assert other.exit_code == 2
    assert "split into 2 shards" in other.stderr
    plain = project.invoke(*BASE, "--run-id", "j")
    assert plain.exit_code == 2
    assert "already exists" in plain.stderr
    # only the first shard's attempts are stored; the run is still open
    assert len(project.store().attempts("j")) == 6
    assert project.store().get_run("j").status == "running"
    # per-process settings may differ
    ok = project.invoke(*BASE, "--max-samples", "2", "--run-id", "j", "--shard", "2/2")
    assert ok.exit_code == 0, ok.stderr
    assert project.store().get_run("j").status == "complete"


def test_resume_of_a_sharded_run_names_its_shard(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert project.invoke(*BASE, "--run-id", "k", "--shard", "1/2").exit_code == 0
    no_shard = project.invoke("run", "--resume", "k", "--no-progress")
    assert no_shard.exit_code == 2
    assert "evalsuite run --resume k --shard I/2" in no_shard.stderr
    wrong = project.invoke("run", "--resume", "k", "--shard", "1/4", "--no-progress")
    assert wrong.exit_code == 2
    assert "not 4" in wrong.stderr
    resumed = project.invoke("run", "--resume", "k", "--shard", "2/2", "--json", "--no-progress")
    assert resumed.exit_code == 0, resumed.stderr
    assert json_out(resumed)["run_complete"] is True
    assert project.store().get_run("k").status == "complete"


# shards as processes at once, on SQLite and PostgreSQL -------------------------------------


@SLOW_ON_POSTGRESQL  # three run processes on PostgreSQL: `make slow` (docs/design/test-speed.md)
def test_shard_processes_at_once_fill_one_run(
    tmp_path: Path,
    store_url: str,
    reference: pd.DataFrame,
    reference_run: tuple[Project, str],
) -> None:
    project = _project(tmp_path, store_url)
    # two processes race as three would (the run row, each shard's row, the completion); each
    # shard process costs about 5 s of CPU, so two, not three (docs/design/test-speed.md)
    shards = 2
    commands = [
        (*BASE, "--run-id", "array-1", "--shard", f"{i}/{shards}") for i in range(1, shards + 1)
    ]
    finished = _together(project, tmp_path / "race", commands)
    assert [code for code, _, _ in finished] == [0] * shards, [e[-600:] for _, _, e in finished]
    outs = [json.loads(out) for _, out, _ in finished]
    assert sum(o["run_complete"] for o in outs) >= 1  # at least one shard saw the run whole
    store = project.store()
    assert [r.run_id for r in store.list_runs()] == ["array-1"]
    run = store.get_run("array-1")
    assert (run.status, run.valid, run.planned) == ("complete", True, PLANNED)
    pd.testing.assert_frame_equal(store.attempts("array-1")[STABLE], reference)
    # health, estimates, strata and pass@k: those of the run made by one process
    assert _scores(project, "array-1") == _scores(*reference_run)
    # one shared log directory holds every shard's inspect logs, every attempt once
    samples, statuses, cut_off = _logged(str(project.root / ".evalsuite" / "logs" / "array-1"))
    assert (samples, statuses, cut_off) == (_planned(reference), ["success"] * shards, [])


# one shared inspect log directory at any fsspec URL -----------------------------------------


@pytest.fixture(scope="module")
def s3() -> Iterator[S3Server]:
    """A local S3 server (moto) that the shard processes share, as a bucket would be."""
    with s3_server() as server:
        yield server


@pytest.mark.slow
@pytest.mark.postgres
def test_shard_processes_share_one_s3_log_directory_and_one_postgresql_store(
    tmp_path: Path,
    pg: PgServer,
    s3: S3Server,
    reference: pd.DataFrame,
    reference_run: tuple[Project, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import fsspec

    for name, value in s3.env.items():
        monkeypatch.setenv(name, value)
    fsspec.filesystem("s3", skip_instance_cache=True).mkdir("evalsuite-logs")  # the bucket
    logs = "s3://evalsuite-logs/runs/array-s3"
    project = _project(tmp_path, pg.new_database())
    commands = [
        (*BASE, "--run-id", "array-s3", "--shard", f"{i}/3", "--log-dir", logs) for i in (1, 2, 3)
    ]
    finished = _together(project, tmp_path / "race", commands, env=s3.env)
    assert [code for code, _, _ in finished] == [0] * 3, [e[-600:] for _, _, e in finished]
    run = project.store().get_run("array-s3")
    assert (run.status, run.valid, run.planned) == ("complete", True, PLANNED)
    pd.testing.assert_frame_equal(project.store().attempts("array-s3")[STABLE], reference)
    assert _scores(project, "array-s3") == _scores(*reference_run)
    assert not (project.root / ".evalsuite" / "logs").exists()  # nothing written locally

    # complete: every attempt of the run is one sample of the shards' logs in the bucket
    samples, statuses, cut_off = _logged(logs)
    assert (samples, statuses, cut_off) == (_planned(reference), ["success"] * 3, [])

    # readable: evalsuite/replay answers the same items from the bucket, with the same scores
    replay = project.invoke(
        "run", "probe@1.0.0", "--model", "evalsuite/replay", "-M", f"log={logs}",
        "--epochs", "3", "--seed", "11", "--no-progress", "--json",
    )  # fmt: skip
    assert replay.exit_code == 0, replay.stderr
    out = json_out(replay)
    assert (out["valid"], out["harness"]["harness_errors"]) == (True, 0)
    replayed = project.store().attempts(out["run_id"])
    recorded = project.store().attempts("array-s3")
    assert replayed[["item_id", "epoch", "outcome", "score"]].equals(
        recorded[["item_id", "epoch", "outcome", "score"]]
    )


def test_shards_share_a_file_url_log_directory(
    tmp_path: Path, reference: pd.DataFrame, reference_run: tuple[Project, str]
) -> None:
    project = _project(tmp_path)
    shared = tmp_path / "shared logs"  # a space: the URL is not a plain path
    logs = shared.as_uri() + "/job-9"
    for i in (1, 2, 3):
        result = project.invoke(*BASE, "--run-id", "job-9", "--shard", f"{i}/3", "--log-dir", logs)
        assert result.exit_code == 0, result.stderr
    assert project.store().get_run("job-9").status == "complete"
    assert _scores(project, "job-9") == _scores(*reference_run)
    assert len(list((shared / "job-9").glob("*.json"))) == 3
    samples, statuses, cut_off = _logged(logs)
    assert (samples, statuses, cut_off) == (_planned(reference), ["success"] * 3, [])
    replay = project.invoke(
        "run", "probe@1.0.0", "--model", "evalsuite/replay", "-M", f"log={logs}",
        "--epochs", "3", "--seed", "11", "--no-progress", "--json",
    )  # fmt: skip
    assert replay.exit_code == 0, replay.stderr
    assert json_out(replay)["harness"]["harness_errors"] == 0


def _one_look(project: Project) -> None:
    """The sharded holdout run ho-1 is complete and spent exactly one look."""
    ledger = read_ledger(project.root / "holdout" / "probe" / "ACCESS.jsonl")
    assert [(e.kind, e.run_id) for e in ledger] == [("access", "ho-1")]
    status = json_out(project.invoke("holdout", "status", "probe@1.0.0", "--json"))
    assert status["families"] == [
        {"model_family": "fakeagent/x", "runs": 1, "remaining": 2, "run_ids": ["ho-1"]}
    ]
    assert project.store().get_run("ho-1").status == "complete"
    assert project.invoke("verify", "probe").exit_code == 0  # ledger and store agree


def test_a_holdout_run_in_shards_in_turn_spends_one_look(tmp_path: Path) -> None:
    """The shards one after another in this process: the fast stand-in, in `make test`, of
    the shards at once in processes below (`make slow`)."""
    project = _project(tmp_path)
    holdout = (*BASE, "--split", "holdout")
    for i in (1, 2, 3):
        result = project.invoke(*holdout, "--run-id", "ho-1", "--shard", f"{i}/3")
        assert result.exit_code == 0, result.stderr
    _one_look(project)


@pytest.mark.slow  # three run processes at once, 23 s of CPU (docs/design/test-speed.md)
def test_a_holdout_run_in_shards_spends_one_look(tmp_path: Path, backend: str | None) -> None:
    project = _project(tmp_path, backend)
    holdout = (*BASE, "--split", "holdout")
    commands = [(*holdout, "--run-id", "ho-1", "--shard", f"{i}/3") for i in (1, 2, 3)]
    finished = _together(project, tmp_path / "race", commands)
    assert [code for code, _, _ in finished] == [0, 0, 0], [e[-600:] for _, _, e in finished]
    _one_look(project)


def test_a_sharded_holdout_run_without_its_ledger_access_is_refused(tmp_path: Path) -> None:
    project = _project(tmp_path)
    holdout = (*BASE, "--split", "holdout")
    assert project.invoke(*holdout, "--run-id", "ho-2", "--shard", "1/2").exit_code == 0
    ledger = project.root / "holdout" / "probe" / "ACCESS.jsonl"
    ledger.write_text("")  # the access is gone
    refused = project.invoke(*holdout, "--run-id", "ho-2", "--shard", "2/2")
    assert refused.exit_code == 3
    # the head recorded outside the project says so first (docs/design/holdout-governance.md)
    assert "the newest entries were deleted" in refused.stderr
    for head in (project.key_dir / "ledger-heads").rglob("probe.json"):
        head.unlink()  # on a machine that never appended: the shard's own check refuses
    refused = project.invoke(*holdout, "--run-id", "ho-2", "--shard", "2/2")
    assert refused.exit_code == 3
    assert "no access in the ledger" in refused.stderr
    assert ledger.read_text() == ""  # no new look was taken
    assert len(project.store().attempts("ho-2")) == 6


# an interrupted shard resumes alone --------------------------------------------------------


def test_an_interrupted_shard_resumes_alone_and_completes_the_run(
    tmp_path: Path, backend: str | None, reference: pd.DataFrame
) -> None:
    project = _project(tmp_path, backend)
    store = project.store()
    logs = f"file://{tmp_path}/logs/r-int"  # one shared log directory, as a URL
    # the shard process's fake model holds its calls after the fourth (two attempts) until
    # `gate` exists (tests/run/fake_models.py): the SIGINT lands mid-shard every time, with no
    # delay to wait out; every shard takes the same settings, and the gate is open by the time
    # the other shard and the resume run
    gate = tmp_path / "gate"
    held = ("-M", "hold_after=4", "-M", f"hold_until={gate}")
    slow = (*BASE, *held, "--max-samples", "1", "--log-dir", logs)
    env = {"EVALSUITE_STORE": backend} if backend else None
    victim = spawn(project, *slow, "--run-id", "r-int", "--shard", "1/2", env=env)
    wait_until(
        lambda: store.find_run("r-int") and len(store.attempt_keys("r-int")) >= 2,
        "the shard stored two attempts",
        proc=victim,
    )
    victim.send_signal(signal.SIGINT)
    _out, err = finish(victim)
    gate.touch()
    assert victim.returncode == 130, err
    assert "shard 1/2 of run r-int was interrupted (SIGINT)" in err
    assert "--resume r-int --shard 1/2" in err
    assert [s.status for s in store.shards("r-int")] == ["interrupted"]

    other = project.invoke(*slow, "--run-id", "r-int", "--shard", "2/2")
    assert other.exit_code == 0, other.stderr
    assert json_out(other)["run_complete"] is False  # shard 1 is not done
    assert store.get_run("r-int").status == "interrupted"

    again = project.invoke(*slow, "--run-id", "r-int", "--shard", "1/2")  # the same command
    assert again.exit_code == 0, again.stderr
    assert json_out(again)["run_complete"] is True
    assert store.get_run("r-int").status == "complete"
    pd.testing.assert_frame_equal(store.attempts("r-int")[STABLE], reference)
    # the interrupted eval's log keeps what it finished (and, as errors, the samples the
    # interrupt cut off); the resumed eval logs the rest: every attempt finished once
    samples, statuses, cut_off = _logged(logs)
    assert samples == _planned(reference), "an attempt is missing from the logs, or twice"
    assert statuses == ["cancelled", "success", "success"]
    assert set(cut_off) <= {"cancelled: CancelledError()"}, cut_off
    # and they replay into a run with the same results (a cut-off sample is not replayed)
    replay = project.invoke(
        "run", "probe@1.0.0", "--model", "evalsuite/replay", "-M", f"log={logs}",
        "--epochs", "3", "--seed", "11", "--no-progress", "--json",
    )  # fmt: skip
    assert replay.exit_code == 0, replay.stderr
    replayed = store.attempts(json_out(replay)["run_id"])
    columns = ["item_id", "epoch", "outcome", "score"]
    assert replayed[columns].equals(store.attempts("r-int")[columns])
