from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import load_manifest
from evalsuite.run import RunSpec, plan_attempts
from evalsuite.store import Store, default_store_url
from tests.helpers import Project, json_out
from tests.run.conftest import STABLE


def _run(project: Project, *args: str) -> dict:
    result = project.invoke("run", "probe@1.0.0", "--json", "--no-progress", *args)
    assert result.exit_code in (0, 5), result.stderr
    return json_out(result)


def _attempts(project: Project, run_id: str) -> pd.DataFrame:
    return Store(default_store_url(Layout(project.root).state)).attempts(run_id)


def test_one_attempt_per_planned_item_and_epoch(probe_project: Project) -> None:
    out = _run(probe_project, "--model", "fakeagent/x", "--epochs", "2", "-M", "accuracy=0.7")
    frame = _attempts(probe_project, out["run_id"])
    assert len(frame) == 20 * 2
    assert out["harness"]["planned"] == 40
    assert out["valid"] is True
    assert set(frame["epoch"]) == {1, 2}
    assert frame["seed"].nunique() == 40
    assert set(frame["outcome"]) == {"scored"}
    assert 0.5 < out["mean"] < 0.9
    # the manifest hash became the inspect task version, and provenance was stored
    run = Store(default_store_url(Layout(probe_project.root).state)).get_run(out["run_id"])
    assert run.manifest_hash == load_manifest(Layout(probe_project.root), "probe").manifest_hash
    assert run.provenance["packages"]["inspect-ai"]
    assert run.spec["epochs"] == 2


def test_same_seed_reproduces_the_attempts_and_another_seed_changes_them(
    probe_project: Project,
) -> None:
    # six items of two epochs: seeds are per (item, epoch), so two epochs check both
    args = ("--model", "fakeagent/x", "--epochs", "2", "--limit", "6", "-M", "accuracy=0.6")
    a = _attempts(probe_project, _run(probe_project, *args, "--seed", "11")["run_id"])
    b = _attempts(probe_project, _run(probe_project, *args, "--seed", "11")["run_id"])
    c = _attempts(probe_project, _run(probe_project, *args, "--seed", "12")["run_id"])
    pd.testing.assert_frame_equal(a[STABLE], b[STABLE])
    assert not a["score"].equals(c["score"])


def test_injected_faults_are_counted_as_harness_errors_never_scored(
    probe_project: Project,
) -> None:
    layout = Layout(probe_project.root)
    # the first 10 items x 2 epochs; seed 2's 2% plan injects one fault in these 20 episodes
    # (5%: not above the 5% threshold, so the run stays valid; seed 0's injects none)
    args = ("--model", "fakeagent/x", "--epochs", "2", "--limit", "10", "-M", "accuracy=0.7")
    args = (*args, "--seed", "2")
    clean = _run(probe_project, *args)
    out = _run(probe_project, *args, "--inject-faults", "0.02")
    manifest = load_manifest(layout, "probe")
    spec = RunSpec(suite="probe", version="1.0.0", model="x", epochs=2, fault_rate=0.02, seed=2)
    first_ten = sorted(manifest.items_by_split("dev"), key=lambda i: i.id)[:10]
    injected = {p.key for p in plan_attempts(first_ten, spec) if p.fault != "none"}
    frame = _attempts(probe_project, out["run_id"])
    errors = frame[frame["outcome"] == "harness_error"]
    assert injected, "the 2% plan of seed 2 should inject at least one fault in 20 episodes"
    assert set(zip(errors["item_id"], errors["epoch"], strict=True)) == injected
    assert errors["score"].isna().all()
    assert (errors["retries"] == 2).all()
    assert errors["reason"].str.startswith("HarnessFault: injected fault").all()
    assert out["valid"] is True
    assert out["harness"]["harness_errors"] == len(injected)
    assert out["harness"]["errors_by_kind"] == {"HarnessFault": len(injected)}
    # the score over scored attempts is the fault-free run's score on the same attempts
    merged = frame.merge(_attempts(probe_project, clean["run_id"]), on=["item_id", "epoch"])
    kept = merged[merged["outcome_x"] == "scored"]
    assert len(frame) == 20 and len(kept) == 20 - len(injected)
    assert (kept["score_x"] == kept["score_y"]).all()


def test_injected_faults_share_one_message_and_one_traceback(probe_project: Project) -> None:
    """Every injected fault of a tool and mode has one text; the item, epoch and retries are
    the attempt's own fields. inspect renders each distinct traceback text once per process
    (rich, about 0.1 s of CPU each), so faults whose texts differed by item, epoch and try
    were each rendered anew (docs/design/run-speed.md, "Cold first run")."""
    from inspect_ai.log import read_eval_log

    out = _run(probe_project, "--model", "fakeagent/x", "--limit", "3", "--inject-faults", "1")
    frame = _attempts(probe_project, out["run_id"])
    errors = frame[frame["outcome"] == "harness_error"]
    assert len(errors) == 3
    assert set(errors["reason"]) == {
        "HarnessFault: injected fault: tool 'lookup' failed (persistent fault)"
    }
    assert (errors["retries"] == 2).all() and errors["item_id"].is_unique
    logs = list((probe_project.root / ".evalsuite" / "logs" / out["run_id"]).glob("*.json"))
    samples = read_eval_log(str(logs[0])).samples or []
    failed = [s for s in samples if s.error is not None]
    assert sorted(str(s.id).split("::")[0] for s in failed) == sorted(errors["item_id"])
    tracebacks = {e.traceback for s in failed for e in [s.error, *(s.error_retries or [])] if e}
    assert len(tracebacks) == 1  # one text for all 3 tries of every faulty attempt


def test_ten_percent_faults_make_the_run_invalid_with_exit_5(probe_project: Project) -> None:
    # the first 10 items x 2 epochs: seed 4's 10% plan injects 2 faults in 20 episodes (10%)
    result = probe_project.invoke(
        "run",
        "probe@1.0.0",
        "--model",
        "fakeagent/x",
        "--epochs",
        "2",
        "--limit",
        "10",
        "--seed",
        "4",
        "--inject-faults",
        "0.10",
        "--no-progress",
        "--json",
    )
    assert result.exit_code == 5
    out = json_out(result)
    assert out["valid"] is False
    assert out["harness"]["planned"] == 20
    assert out["harness"]["error_rate"] > 0.05
    assert "is invalid" in result.stderr


def test_transient_faults_are_retried_and_recover(probe_project: Project) -> None:
    # the first 10 items x 2 epochs: the default seed's 20% plan faults 6 of the 20 episodes
    out = _run(
        probe_project,
        "--model",
        "fakeagent/x",
        "--epochs",
        "2",
        "--limit",
        "10",
        "--inject-faults",
        "0.2",
        "--fault-mode",
        "transient",
    )
    frame = _attempts(probe_project, out["run_id"])
    assert len(frame) == 20 and set(frame["outcome"]) == {"scored"}
    assert (frame["retries"] > 0).sum() == out["harness"]["retried"] > 0


def test_a_hang_becomes_a_harness_error_not_a_default_value(probe_project: Project) -> None:
    out = _run(
        probe_project,
        "--model",
        "fakeagent/x",
        "--limit",
        "8",  # the default seed's 25% plan hangs 2 of the first 8 items
        "--inject-faults",
        "0.25",
        "--fault-kind",
        "hang",
        "--tool-timeout",
        "0.2",
        "--max-retries",
        "0",
    )
    frame = _attempts(probe_project, out["run_id"])
    hung = frame[frame["outcome"] == "harness_error"]
    assert len(hung) > 0
    assert hung["reason"].str.contains("did not answer within 0.2s").all()
    assert hung["score"].isna().all()


def test_a_low_message_limit_gives_labelled_limit_attempts(probe_project: Project) -> None:
    args = ("-M", "loop=true", "--message-limit", "4", "--limit", "10")
    out = _run(probe_project, "--model", "fakeagent/x", *args)
    frame = _attempts(probe_project, out["run_id"])
    assert len(frame) == 10 and set(frame["outcome"]) == {"limit"}
    assert set(frame["limit_type"]) == {"message"}
    assert (frame["score"] == 0.0).all()
    assert out["harness"]["limits_by_type"] == {"message": 10}
    assert out["valid"] is True


def test_a_low_time_limit_gives_time_limit_attempts(probe_project: Project) -> None:
    out = _run(
        probe_project,
        "--model",
        "fakeagent/x",
        "-M",
        "delay=1.5",
        "--time-limit",
        "1",
        "--limit",
        "4",
    )
    frame = _attempts(probe_project, out["run_id"])
    assert set(frame["outcome"]) == {"limit"}
    assert set(frame["limit_type"]) == {"time"}


def test_a_drifted_manifest_refuses_to_run_with_exit_3(probe_project: Project) -> None:
    path = probe_project.root / "tasks/probe/items.jsonl"
    path.write_text(path.read_text().replace("alpha 0", "alpha O", 1))
    result = probe_project.invoke("run", "probe@1.0.0", "--model", "fakeagent/x")
    assert result.exit_code == 3
    assert "does not verify, refusing to run" in result.stderr
    assert (
        not (probe_project.root / ".evalsuite" / "results.sqlite").exists()
        or not Store(default_store_url(Layout(probe_project.root).state)).list_runs()
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("run", "probe@1.0.0", "--model", "nosuchprovider/x"), "cannot use model"),
        (("run", "probe", "--model", "fakeagent/x"), "give the exact version"),
        (("run", "probe@9.9.9", "--model", "fakeagent/x"), "not frozen"),
        (("run", "--model", "fakeagent/x"), "give SUITE@X.Y.Z and --model"),
        (("run", "--resume", "nope"), "no run 'nope'"),
    ],
)
def test_bad_run_arguments(probe_project: Project, args: tuple[str, ...], message: str) -> None:
    result = probe_project.invoke(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert ".." not in result.stderr.replace("...", "")  # one sentence ends once


def test_runs_lists_runs(probe_project: Project) -> None:
    out = _run(probe_project, "--model", "fakeagent/x", "--limit", "2")
    listed = json_out(probe_project.invoke("runs", "--json"))
    assert [r["run_id"] for r in listed] == [out["run_id"]]
    assert listed[0]["suite"] == "probe"
    assert listed[0]["valid"] is True
    assert math.isclose(listed[0]["error_rate"], 0.0)


def test_store_path_can_be_any_sqlalchemy_url(probe_project: Project, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from evalsuite.cli import cli

    url = f"sqlite:///{tmp_path / 'elsewhere.sqlite'}"
    result = CliRunner().invoke(
        cli,
        [
            "--root",
            str(probe_project.root),
            "run",
            "probe@1.0.0",
            "--model",
            "fakeagent/x",
            "--limit",
            "2",
            "--json",
        ],
        env={"EVALSUITE_STORE": url},
    )
    assert result.exit_code == 0, result.stderr
    assert len(Store(url).list_runs()) == 1


def test_holdout_attempts_keep_no_free_text_from_the_verifier(probe_project: Project) -> None:
    out = _run(probe_project, "--model", "fakeagent/x", "--split", "holdout", "--limit", "4")
    frame = _attempts(probe_project, out["run_id"])
    assert set(frame["outcome"]) == {"scored"}
    assert frame["reason"].isna().all()
    assert frame["checks"].notna().all()  # the verifier's boolean sub-checks stay
    dev = _attempts(
        probe_project, _run(probe_project, "--model", "fakeagent/x", "--limit", "4")["run_id"]
    )
    assert dev["reason"].notna().all()


def test_redaction_happens_before_truncation() -> None:
    from evalsuite.manifest import Item
    from evalsuite.run._runner import _Redactor

    secret = "the secret holdout sentence that must never be stored"
    redact = _Redactor([Item(id="i", input=secret, target="t")], active=True)
    message = "x" * 480 + secret
    assert secret[:10] not in redact(message)[:500]
    assert "[holdout text redacted]" in redact(message)
    assert _Redactor([Item(id="i", input=secret, target="t")], active=False)(message) == message
