"""`run`'s options in headed groups (issue 30, "Thin CLI"): `--help` shows each group, every
option keeps its name, default and type, argv becomes the service's typed `RunRequest`, and a
malformed KEY=VALUE pass-through is refused with exit 2, with or without --resume."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

import evalsuite.service
from evalsuite.cli import cli
from evalsuite.cli._common import GroupedCommand, option_group
from evalsuite.cli._run_cmds import run_cmd
from evalsuite.errors import UsageError
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
)

GROUPS: dict[str, list[str]] = {
    "Run plan": ["--split", "--epochs", "--seed", "--limit", "--run-id", "--resume"],
    "Model and generation": [
        "--model",
        "-M",
        "--model-base-url",
        "--temperature",
        "--max-tokens",
        "--max-connections",
        "-G",
    ],
    "Limits and harness health": [
        "--message-limit",
        "--time-limit",
        "--token-limit",
        "--tool-timeout",
        "--max-retries",
        "--error-threshold",
    ],
    "Inspect pass-through": [
        "-T",
        "--sandbox",
        "--log-dir",
        "--max-samples",
        "--max-subprocesses",
        "--max-sandboxes",
        "--max-tasks",
        "--no-sandbox-cleanup",
    ],
    "Holdout governance": ["--purpose", "--model-family", "--override-reason", "--key-file"],
    "Reusable holdout": [
        "--mechanism",
        "--dev-run",
        "--threshold",
        "--noise-scale",
        "--mechanism-budget",
        "--mechanism-seed",
        "--ladder-step",
    ],
    "Adaptive": [
        "--adaptive",
        "--target-halfwidth",
        "--versus",
        "--margin",
        "--max-epochs",
        "--max-calls",
        "--estimand",
    ],
    "Shards": ["--shard"],
    "Fault injection": ["--inject-faults", "--fault-kind", "--fault-mode"],
    "Executor": ["--executor", "--address", "--shards"],
    "Output and other options": ["--no-progress", "--scan", "--json", "--help"],
}

# every option `run` took before its options were grouped (main at 720881b): name, flag,
# default, is_flag, multiple, type; the CLI contract (docs/cli.md) is that none changes
BEFORE: list[tuple[str, str, object, bool, bool, str]] = [
    ("model", "--model", None, False, False, "STRING"),
    ("model_arg", "-M", None, False, True, "STRING"),
    ("split", "--split", "dev", False, False, "Choice(['dev', 'holdout'])"),
    ("epochs", "--epochs", 1, False, False, "<IntRange x>=1>"),
    ("seed", "--seed", 0, False, False, "<IntRange x>=0>"),
    ("fault_rate", "--inject-faults", 0.0, False, False, "<FloatRange 0<=x<=1>"),
    ("fault_kind", "--fault-kind", "error", False, False, "Choice(['error', 'hang'])"),
    (
        "fault_mode",
        "--fault-mode",
        "persistent",
        False,
        False,
        "Choice(['persistent', 'transient'])",
    ),
    ("tool_timeout", "--tool-timeout", 30.0, False, False, "<FloatRange x>0>"),
    ("max_retries", "--max-retries", 2, False, False, "<IntRange 0<=x<=10>"),
    ("error_threshold", "--error-threshold", 0.05, False, False, "<FloatRange 0<=x<=1>"),
    ("message_limit", "--message-limit", None, False, False, "<IntRange x>=1>"),
    ("time_limit", "--time-limit", None, False, False, "<IntRange x>=1>"),
    ("token_limit", "--token-limit", None, False, False, "<IntRange x>=1>"),
    ("max_samples", "--max-samples", None, False, False, "<IntRange x>=1>"),
    ("limit_items", "--limit", None, False, False, "<IntRange x>=1>"),
    ("task_arg", "-T", None, False, True, "STRING"),
    ("temperature", "--temperature", None, False, False, "FLOAT"),
    ("max_tokens", "--max-tokens", None, False, False, "<IntRange x>=1>"),
    ("max_connections", "--max-connections", None, False, False, "<IntRange x>=1>"),
    ("generate_arg", "-G", None, False, True, "STRING"),
    ("sandbox", "--sandbox", None, False, False, "STRING"),
    ("log_dir", "--log-dir", None, False, False, "STRING"),
    ("model_base_url", "--model-base-url", None, False, False, "STRING"),
    ("max_subprocesses", "--max-subprocesses", None, False, False, "<IntRange x>=1>"),
    ("max_sandboxes", "--max-sandboxes", None, False, False, "<IntRange x>=1>"),
    ("max_tasks", "--max-tasks", None, False, False, "<IntRange x>=1>"),
    ("no_sandbox_cleanup", "--no-sandbox-cleanup", None, True, False, "BOOL"),
    ("purpose", "--purpose", None, False, False, "STRING"),
    ("model_family", "--model-family", None, False, False, "STRING"),
    ("override_reason", "--override-reason", None, False, False, "STRING"),
    ("resume", "--resume", None, False, False, "STRING"),
    ("run_id", "--run-id", None, False, False, "STRING"),
    ("shard_text", "--shard", None, False, False, "STRING"),
    ("adaptive", "--adaptive", None, True, False, "BOOL"),
    ("target_halfwidth", "--target-halfwidth", None, False, False, "<FloatRange 0<x<0.5>"),
    ("versus", "--versus", None, False, False, "STRING"),
    ("margin", "--margin", 0.02, False, False, "<FloatRange 0<=x<1>"),
    ("max_epochs", "--max-epochs", None, False, False, "<IntRange x>=1>"),
    ("max_calls", "--max-calls", None, False, False, "<IntRange x>=1>"),
    ("no_progress", "--no-progress", None, True, False, "BOOL"),
    ("key_file", "--key-file", None, False, False, "PathParam"),
    ("as_json", "--json", None, True, False, "BOOL"),
]

# options added since, each with the issue that added it (docs/cli.md, "run")
ADDED: list[tuple[str, str, object, bool, bool, str]] = [
    # issue 36, docs/design/reusable-holdout.md
    ("mechanism", "--mechanism", None, False, False, "Choice(['thresholdout', 'ladder', 'none'])"),
    ("dev_run", "--dev-run", None, False, False, "STRING"),
    ("threshold", "--threshold", None, False, False, "FLOAT"),
    ("noise_scale", "--noise-scale", None, False, False, "FLOAT"),
    ("mechanism_budget", "--mechanism-budget", None, False, False, "INT"),
    ("mechanism_seed", "--mechanism-seed", None, False, False, "INT"),
    ("ladder_step", "--ladder-step", None, False, False, "FLOAT"),
    # issue 31, docs/design/sequential.md ("--target-halfwidth")
    ("estimand", "--estimand", None, False, False, "Choice(['items', 'population'])"),
    # issue 32, docs/review.md
    ("scan", "--scan", None, True, False, "BOOL"),
    # issue 35, docs/scale.md, "Runs on a Ray cluster"
    ("executor", "--executor", "local", False, False, "Choice(['local', 'ray'])"),
    ("address", "--address", None, False, False, "STRING"),
    ("shards_n", "--shards", None, False, False, "<IntRange x>=1>"),
]


def _type(param: click.Parameter) -> str:
    return (
        type(param.type).__name__ if type(param.type).__name__ == "PathParam" else str(param.type)
    )


def _default(param: click.Parameter) -> object:
    default = param.default
    return None if default is None or type(default).__name__ == "Sentinel" else default


def test_every_option_keeps_its_name_flag_default_and_type() -> None:
    options = {
        p.name: (p.name, p.opts[0], _default(p), p.is_flag, p.multiple, _type(p))
        for p in run_cmd.params
        if isinstance(p, click.Option)
    }
    assert sorted(options.values(), key=str) == sorted(BEFORE + ADDED, key=str)
    assert [p.name for p in run_cmd.params if isinstance(p, click.Argument)] == ["ref"]


def test_help_shows_every_option_under_its_group_heading() -> None:
    out = CliRunner().invoke(cli, ["run", "--help"], terminal_width=200).output
    headings = [line[:-1] for line in out.splitlines() if line.endswith(":") and line[0] != " "]
    assert headings[-len(GROUPS) :] == list(GROUPS)
    sections = {}
    for heading, following in zip(GROUPS, [*list(GROUPS)[1:], None], strict=True):
        text = out.split(f"\n{heading}:\n", 1)[1]
        sections[heading] = text.split(f"\n{following}:\n", 1)[0] if following else text
    for heading, flags in GROUPS.items():
        listed = [line.split()[0].rstrip(",") for line in sections[heading].splitlines()]
        listed = [word for word in listed if word.startswith("-")]
        assert listed == flags or (heading.startswith("Output") and "-h" in listed), heading
    assert "[REF]" not in out.split("Run plan:", 1)[1]  # the argument is in the usage line


class Captured(Exception):
    """Raised by the stand-in for `execute_run`, with the request it was given."""


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> list[RunRequest]:
    requests: list[RunRequest] = []

    def fake(request: RunRequest, **kwargs: Any) -> None:
        requests.append(request)
        raise UsageError("captured")

    monkeypatch.setattr(evalsuite.service, "execute_run", fake)
    return requests


def _invoke(tmp_path: Path, *argv: str) -> Any:
    return CliRunner().invoke(
        cli,
        ["--root", str(tmp_path), "run", *argv],
        env={"EVALSUITE_KEY_DIR": str(tmp_path / "keys")},
        catch_exceptions=False,
    )


def test_argv_becomes_the_typed_request(tmp_path: Path, captured: list[RunRequest]) -> None:
    key = tmp_path / "k.key"
    key.write_bytes(b"x" * 32)
    result = _invoke(
        tmp_path,
        "s@1.0.0", "--model", "m/x", "-M", "accuracy=0.7", "-M", "name=plain",
        "--split", "holdout", "--epochs", "3", "--seed", "7", "--limit", "4", "--run-id", "r-1",
        "--model-base-url", "http://h/v1", "--temperature", "0.5", "--max-tokens", "9",
        "--max-connections", "2", "-G", "top_p=0.9",
        "--message-limit", "5", "--time-limit", "6", "--token-limit", "7",
        "--tool-timeout", "1.5", "--max-retries", "3", "--error-threshold", "0.1",
        "-T", "queue=x", "--sandbox", "docker:c.yaml", "--log-dir", "logs",
        "--max-samples", "2", "--max-subprocesses", "3", "--max-sandboxes", "4",
        "--max-tasks", "5", "--no-sandbox-cleanup",
        "--purpose", "rc", "--model-family", "fam", "--override-reason", "why",
        "--key-file", str(key),
        "--shard", "2/3",
        "--inject-faults", "0.2", "--fault-kind", "hang", "--fault-mode", "transient",
        "--no-progress",
    )  # fmt: skip
    assert result.exit_code == 2 and "captured" in result.stderr
    assert captured == [
        RunRequest(
            ref="s@1.0.0",
            plan=RunPlan("holdout", 3, 7, limit_items=4, run_id="r-1", resume=None),
            model=ModelOptions(
                model="m/x",
                model_args={"accuracy": 0.7, "name": "plain"},
                model_base_url="http://h/v1",
                temperature=0.5,
                max_tokens=9,
                max_connections=2,
                generate={"top_p": 0.9},
            ),
            harness=HarnessOptions(5, 6, 7, tool_timeout=1.5, max_retries=3, error_threshold=0.1),
            inspect=InspectOptions(
                task_args={"queue": "x"},
                sandbox="docker:c.yaml",
                log_dir="logs",
                max_samples=2,
                max_subprocesses=3,
                max_sandboxes=4,
                max_tasks=5,
                sandbox_cleanup=False,
            ),
            governance=GovernanceOptions("rc", "fam", "why", key_file=key),
            adaptive=AdaptiveOptions(),
            shards=ShardOptions(Shard(2, 3)),
            faults=FaultOptions(0.2, "hang", "transient"),
            progress=False,
        )
    ]


def test_defaults_and_the_adaptive_group(tmp_path: Path, captured: list[RunRequest]) -> None:
    result = _invoke(
        tmp_path, "s@1.0.0", "--model", "m/x", "--json", "--adaptive",
        "--target-halfwidth", "0.1", "--versus", "r-0", "--margin", "0.05",
        "--max-epochs", "4", "--max-calls", "99",
    )  # fmt: skip
    assert result.exit_code == 2
    (request,) = captured
    assert request.adaptive == AdaptiveOptions(True, 0.1, "r-0", 0.05, 4, 99)
    assert request.plan == RunPlan() and request.harness == HarnessOptions()
    assert request.inspect == InspectOptions() and request.faults == FaultOptions()
    assert request.governance == GovernanceOptions() and request.shards == ShardOptions()
    assert request.model == ModelOptions(model="m/x")
    assert request.progress is False  # --json shows no progress


@pytest.mark.parametrize("resume", [False, True])
@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["-M", "accuracy"], "-M expects KEY=VALUE (got 'accuracy')"),
        (["-M", "=0.7"], "-M expects KEY=VALUE (got '=0.7')"),
        (["-M", "api-key=x"], "got key 'api-key' in 'api-key=x'"),
        (["-M", "api-key=x"], "did you mean api_key?"),
        (["-M", "a b=1"], "KEY a name of letters, digits and underscores"),
        (["-M", "a=1", "-M", "a=2"], "-M a=... is given twice"),
        (["-T", "queue"], "-T expects KEY=VALUE"),
        (["-T", "q=1", "-T", "q=2"], "-T q=... is given twice"),
        (["-G", "top_p"], "-G expects KEY=VALUE"),
        (["-G", "top-p=0.9"], "did you mean top_p?"),
        (["--shard", "2-3"], "--shard expects I/N"),
    ],
)
def test_a_malformed_pass_through_is_refused_with_exit_2(
    tmp_path: Path, captured: list[RunRequest], args: list[str], words: str, resume: bool
) -> None:
    head = ["--resume", "r-x"] if resume else ["s@1.0.0", "--model", "m/x"]
    result = _invoke(tmp_path, *head, *args, "--json")
    assert result.exit_code == 2, result.output
    assert words in " ".join(result.stderr.split())
    assert '"exit_code": 2' in result.stdout  # --json: the error as JSON too
    assert captured == []  # refused while parsing, before the use case
    assert not (tmp_path / ".evalsuite").exists()  # nothing stored, no store made


def test_a_malformed_sandbox_is_refused_before_anything_runs(tmp_path: Path) -> None:
    for sandbox in (":compose.yaml", "docker:", " "):
        result = _invoke(tmp_path, "s@1.0.0", "--model", "m/x", "--sandbox", sandbox)
        assert result.exit_code == 2
        assert "--sandbox expects TYPE or TYPE:CONFIG" in " ".join(result.stderr.split())


def test_resume_refuses_model_arguments_it_would_ignore(tmp_path: Path) -> None:
    result = _invoke(tmp_path, "--resume", "r-x", "-M", "accuracy=0.7")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "drop model_args" in message and "runs as it was started" in message


def test_option_group_passes_one_object_and_heads_its_options() -> None:
    seen: list[object] = []

    @click.command(cls=GroupedCommand)
    @click.option("--plain")
    @option_group(
        "Pair",
        "pair",
        lambda a, b: (a, b),
        click.option("--a", default="1"),
        click.option("--b", default="2"),
    )
    def command(plain: str | None, pair: tuple[str, str]) -> None:
        seen.append((plain, pair))

    result = CliRunner().invoke(command, ["--b", "x", "--plain", "p"])
    assert result.exit_code == 0, result.output
    assert seen == [("p", ("1", "x"))]
    out = CliRunner().invoke(command, ["--help"]).output
    assert out.index("Pair:") < out.index("--a") < out.index("--b") < out.index("Output")
    assert out.index("Output and other options:") < out.index("--plain")
