"""Exit codes of refusals that are not tampering: incomparable runs are a usage error."""

from __future__ import annotations

import json
from pathlib import Path

from evalsuite.errors import IncomparableRunsError, IntegrityError, UsageError
from tests.helpers import json_out
from tests.run.conftest import make_probe_project


def test_incomparable_runs_are_a_usage_error() -> None:
    assert issubclass(IncomparableRunsError, UsageError)
    assert not issubclass(IncomparableRunsError, IntegrityError)
    assert IncomparableRunsError.exit_code == 2


def test_comparing_runs_of_different_splits_exits_2_and_names_comparable_runs(
    tmp_path: Path,
) -> None:
    project = make_probe_project(tmp_path, n_per_stratum=4)
    run = ("run", "probe@1.0.0", "--model", "fakeagent/x", "--no-progress", "--json")
    dev_a = json_out(project.invoke(*run))["run_id"]
    dev_b = json_out(project.invoke(*run, "--seed", "1"))["run_id"]
    held = json_out(project.invoke(*run, "--split", "holdout"))["run_id"]
    result = project.invoke("compare", dev_a, held)
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "same suite version (same manifest hash) and split" in message
    assert f"{dev_a} (probe@1.0.0 dev): {dev_b}" in message
    assert f"{held} (probe@1.0.0 holdout): no other stored run" in message
    assert project.invoke("compare", dev_a, dev_b).exit_code == 0


def test_a_run_compared_with_itself_exits_2_and_says_what_to_name(tmp_path: Path) -> None:
    """A run paired with itself differs by 0 on every item: refused, not reported as
    "not detectably different" with an MDE of 0."""
    from tests.helpers import Project

    table = tmp_path / "results.csv"
    rows = [f"m{m},i{i},{e},{(i + e + m) % 2}" for m in (1, 2) for i in range(6) for e in (1, 2)]
    table.write_text("model,item_id,epoch,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    project = Project(root=tmp_path, key_dir=tmp_path / "keys")
    ingested = json_out(project.invoke("ingest", str(table), "--format", "csv", "--json"))
    first, second = (run["run_id"] for run in ingested["runs"])
    result = project.invoke("compare", first, first)
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"BASELINE and CANDIDATE are the same run {first}" in message
    assert "`evalsuite runs` lists them" in message
    assert project.invoke("compare", first, second).exit_code == 0
    twice = project.invoke("report", first, second, first, "--out", str(tmp_path / "r"))
    assert twice.exit_code == 2
    assert f"run {first} is named twice" in " ".join(twice.stderr.split())
    assert not (tmp_path / "r").exists()


def test_a_root_that_does_not_exist_is_a_usage_error(tmp_path: Path) -> None:
    """`--root` naming no directory was taken as an empty project ("no suites", exit 0)."""
    from click.testing import CliRunner

    from evalsuite.cli import cli

    missing = tmp_path / "no-such-project"
    for command in (["suites"], ["verify"], ["runs"]):
        result = CliRunner().invoke(cli, ["--root", str(missing), *command])
        assert result.exit_code == 2, command
        assert f"Directory '{missing}' does not exist" in result.output
    assert not missing.exists()


def test_a_command_line_click_refuses_gives_the_json_error_document_with_json(
    tmp_path: Path,
) -> None:
    """A bad value, unknown option or missing argument printed only click's usage text on
    stderr, even with `--json`: a caller parsing stdout got nothing. Now stdout holds the
    same error document as every other error (docs/cli.md), and the exit code stays 2."""
    from click.testing import CliRunner

    from evalsuite.cli import cli

    runner = CliRunner()
    cases = {
        ("runs", "--limit", "0", "--json"): "Invalid value for '--limit'",
        ("score", "x", "--level", "2", "--json"): "Invalid value for '--level'",
        ("score", "x", "--no-such-flag", "--json"): "No such option '--no-such-flag'",
        ("score", "--json"): "Missing argument 'RUN_ID'",
        ("holdout", "status", "--json"): "Missing argument 'REF'",
        ("no-such-command", "--json"): "No such command 'no-such-command'",
    }
    for args, message in cases.items():
        result = runner.invoke(cli, ["--root", str(tmp_path), *args])
        assert result.exit_code == 2, args
        payload = json.loads(result.stdout)
        assert payload["error"] == "UsageError" and payload["exit_code"] == 2, args
        assert message in payload["message"], (args, payload)
        assert message in result.stderr  # click's usage text as before
    missing = tmp_path / "no-such-project"
    result = runner.invoke(cli, ["--root", str(missing), "runs", "--json"])
    assert result.exit_code == 2
    assert "does not exist" in json.loads(result.stdout)["message"]
    # without --json stdout stays empty
    plain = runner.invoke(cli, ["--root", str(tmp_path), "runs", "--limit", "0"])
    assert plain.exit_code == 2 and plain.stdout == ""


def test_ctrl_c_outside_a_run_exits_130_with_the_json_error_document() -> None:
    """Ctrl-C in any command but `run` (an ingest of a large file, a report) printed click's
    "Aborted!" and exited 1, the code of a bug, with no JSON under `--json`."""
    import click
    from click.testing import CliRunner

    from evalsuite.cli._common import handle_errors, json_option

    @click.command()
    @json_option
    @handle_errors
    def interrupted(as_json: bool) -> None:
        raise KeyboardInterrupt

    result = CliRunner().invoke(interrupted, ["--json"])
    assert result.exit_code == 130
    payload = json.loads(result.stdout)
    assert payload == {
        "error": "Interrupted",
        "message": payload["message"],
        "exit_code": 130,
    }
    assert "interrupted (SIGINT)" in payload["message"] and "Aborted" not in result.output
    plain = CliRunner().invoke(interrupted, [])
    assert plain.exit_code == 130 and "interrupted (SIGINT)" in plain.stderr


def test_a_margin_of_one_or_more_is_refused() -> None:
    """A difference of two scores lies in [-1, 1], so a margin of 1 passed every gate, however
    much worse the candidate: `compare` and `report` refuse it (exit 2)."""
    from click.testing import CliRunner

    from evalsuite.cli import cli

    for command in (["compare", "a", "b", "--gate", "noninferior"], ["report", "a", "b"]):
        for margin in ("1", "1.5"):
            result = CliRunner().invoke(cli, [*command, "--margin", margin])
            assert result.exit_code == 2, (command, margin, result.output)
            assert "--margin" in result.output and "0<x<1" in result.output
