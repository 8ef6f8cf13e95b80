"""The built-in scanners' signatures, and a scan through Inspect Scout of a run with faults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from inspect_ai.event import SampleLimitEvent, ToolEvent
from inspect_ai.model import (
    ChatMessageAssistant,
    ChatMessageTool,
    ChatMessageUser,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.tool import ToolCall, ToolCallError
from inspect_scout import Transcript

from evalsuite._core.layout import Layout
from evalsuite.review import (
    BUILTIN_SCANNERS,
    AttemptLabel,
    attempt_of_transcript,
    llm_mode_scanner,
    save_label,
    scan_run,
    signature,
    suite_taxonomy,
)
from tests.helpers import Project, json_out
from tests.run.conftest import make_probe_project
from tests.shared_build import build_once


def _call(function: str, **arguments: Any) -> ToolCall:
    return ToolCall(id=f"c{len(arguments)}", function=function, arguments=arguments)


def _transcript(*messages: Any, events: list[Any] | None = None, **info: Any) -> Transcript:
    return Transcript(transcript_id="t", messages=list(messages), events=events or [], **info)


ASK = ChatMessageUser(content="Refund order O-1.")


def _flags(transcript: Transcript) -> set[str]:
    return {name for name in BUILTIN_SCANNERS if signature(name, transcript) is not None}


def test_a_clean_episode_is_flagged_by_none() -> None:
    clean = _transcript(
        ASK,
        ChatMessageAssistant(content="", tool_calls=[_call("get_order", order_id="O-1")]),
        ChatMessageTool(content='{"id": "O-1"}', function="get_order"),
        ChatMessageAssistant(content="Ticket T-1: closed."),
        success=True,
    )
    assert _flags(clean) == set()


def test_each_signature_flags_its_own_episode() -> None:
    error = _transcript(ASK, error="HarnessFault(\"injected fault: tool 'x' failed\")")
    timeout = ToolEvent(
        id="e",
        function="search",
        arguments={},
        error=ToolCallError("timeout", "the tool timed out after 30 s"),
    )
    timed = _transcript(ASK, ChatMessageAssistant(content="Done."), events=[timeout], success=True)
    handled = ToolEvent(
        id="e", function="get_order", arguments={}, error=ToolCallError("unknown", "no order O-9")
    )
    ordinary = _transcript(ASK, ChatMessageAssistant(content="No such order."), events=[handled])
    empty = _transcript(ASK, ChatMessageAssistant(content=""))
    loop = _transcript(
        ASK,
        *[ChatMessageAssistant(content="", tool_calls=[_call("search", q="a")]) for _ in range(3)],
        ChatMessageAssistant(content="Could not find it."),
    )
    limit = _transcript(
        ASK,
        ChatMessageAssistant(content="Still looking"),
        events=[SampleLimitEvent(type="message", message="message limit 10", limit=10)],
    )
    claim = _transcript(
        ASK,
        ChatMessageAssistant(content="", tool_calls=[_call("get_order", order_id="O-1")]),
        ChatMessageAssistant(content="I have refunded the order successfully."),
        score=0.0,
    )
    backed = _transcript(
        ASK,
        ChatMessageAssistant(content="I have refunded the order successfully."),
        events=[ToolEvent(id="r", function="refund_order", arguments={})],
        score=0.0,
    )
    refusal = _transcript(
        ASK, ChatMessageAssistant(content="I'm sorry, but I can't help with that.")
    )
    assert _flags(error) == {"tool_errors"}
    assert _flags(timed) == {"tool_errors"}
    assert _flags(ordinary) == set()  # a ToolError the episode is meant to handle
    assert _flags(empty) == {"empty_completion"}
    assert _flags(loop) == {"repeated_tool_call"}
    assert _flags(limit) == {"limit_reached"}
    assert _flags(_transcript(ASK, ChatMessageAssistant(content="x"), limit="token")) == {
        "limit_reached"
    }
    assert _flags(claim) == {"unbacked_success_claim"}
    assert _flags(backed) == set()  # a state-changing call succeeded
    assert "refusal" in _flags(refusal)


def test_transcripts_map_to_attempts() -> None:
    assert attempt_of_transcript("item-3::2", 1) == ("item-3", 2)
    assert attempt_of_transcript("item-3", 4) == ("item-3", 4)
    assert attempt_of_transcript("a::b", None) == ("a::b", 1)


# a run of the probe family with injected tool faults, scanned through Scout ----------------


def _build(root: Path) -> dict[str, str]:
    project = make_probe_project(root, n_per_stratum=5)
    (root / "project" / "tasks" / "taxonomies").mkdir()
    (root / "project" / "tasks" / "taxonomies" / "probe.toml").write_text(
        'suite = "probe"\nversion = "1"\n[[modes]]\nname = "tool_fault"\nkind = "harness"\n'
        'scanner = "tool_errors"\ndefinition = "A tool failed."\n[[modes]]\n'
        'name = "wrong_value"\nkind = "model"\ndefinition = "Answered the wrong value."\n',
        encoding="utf-8",
    )
    # `run --scan`: Scout scans the run's transcripts when it ends (as `review RUN --scan`)
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "-M", "accuracy=0.9", "--epochs", "2",
        "--inject-faults", "0.4", "--max-retries", "0", "--seed", "3", "--scan",
        "--no-progress", "--json",
    )  # fmt: skip
    assert result.exit_code in (0, 5), result.stderr
    payload = json_out(result)
    (root / "scan.json").write_text(json.dumps({"scans": [payload["scan"]]}), encoding="utf-8")
    return {"run_id": str(payload["run_id"])}


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, str, dict[str, Any]]:
    root, built = build_once(tmp_path_factory, "review-faulty-probe", _build)
    project = Project(root=root / "project", key_dir=root / "keys")
    return project, built["run_id"], json.loads((root / "scan.json").read_text())


def test_scout_finds_every_injected_fault_and_ties_it_to_its_attempt(
    faulty: tuple[Project, str, dict[str, Any]],
) -> None:
    project, run_id, scan = faulty
    store = project.store()
    frame = store.attempts(run_id)
    faults = {
        (str(i), int(e))
        for i, e, r in zip(frame["item_id"], frame["epoch"], frame["reason"], strict=True)
        if r and "injected fault" in str(r)
    }
    assert faults, "the seed must inject at least one fault"
    report = scan["scans"][0]
    flagged = {(x["item_id"], x["epoch"]) for x in report["flagged"]["tool_errors"]}
    assert flagged == faults  # recall 1, precision 1
    assert report["transcripts"] == len(frame)
    clean_flags = {n: c for n, c in report["counts"].items() if n != "tool_errors"}
    assert clean_flags == dict.fromkeys(clean_flags, 0)
    # where Scout puts them: scans/ beside the logs, the findings in the store
    assert Path(report["location"]).is_relative_to(project.root / ".evalsuite" / "scans")
    assert (Path(report["location"]) / "_scan.json").is_file()
    rows = store.finding_rows(run_id)
    assert {(r["item_id"], r["epoch"]) for r in rows if r["scanner"] == "tool_errors"} == faults
    assert set(BUILTIN_SCANNERS) <= {s["scanner"] for s in store.scan_records(run_id)}


def test_scanner_precision_and_recall_against_labels_in_stats_and_report(
    faulty: tuple[Project, str, dict[str, Any]], tmp_path: Path
) -> None:
    project, run_id, _ = faulty
    store = project.store()
    frame = store.attempts(run_id)
    taxonomy = suite_taxonomy(Layout(project.root), "probe")
    # the labeller marks two faults as tool faults and misses nothing else; one clean attempt
    # is labelled a tool fault by mistake (a false positive for the labels, so a miss for
    # the scanner's recall) and two clean attempts get no mode
    errors = frame[frame["outcome"] == "harness_error"].sort_values(["item_id", "epoch"])
    clean = frame[frame["outcome"] == "scored"].sort_values(["item_id", "epoch"])
    for item, epoch in zip(errors["item_id"][:2], errors["epoch"][:2], strict=True):
        save_label(
            store, AttemptLabel(run_id, item, int(epoch), ("tool_fault",)), taxonomy=taxonomy
        )
    items, epochs = list(clean["item_id"]), list(clean["epoch"])
    save_label(
        store, AttemptLabel(run_id, items[0], int(epochs[0]), ("tool_fault",)), taxonomy=taxonomy
    )
    for k in (1, 2):
        save_label(store, AttemptLabel(run_id, items[k], int(epochs[k]), ()), taxonomy=taxonomy)
    result = project.invoke("review", run_id, "--stats", "--json")
    assert result.exit_code == 0, result.stderr
    run = json.loads(result.stdout)["runs"][0]
    check = next(c for c in run["scanner_checks"] if c["scanner"] == "tool_errors")
    assert (check["true_positives"], check["false_positives"], check["false_negatives"]) == (
        2,
        0,
        1,
    )
    assert check["precision"] == 1.0 and check["recall"] == pytest.approx(2 / 3)
    tool_fault = next(m for m in run["modes"] if m["mode"] == "tool_fault")
    assert tool_fault["count"] == 3 and run["labelled"] == 5
    # the harness mode re-classifies the mislabelled clean attempt (the others already were)
    assert [r["item_id"] for r in run["reclassified"]["reclassified"]] == [items[0]]
    assert run["reclassified"]["error_rate_after"] > run["reclassified"]["error_rate_before"]
    text = project.invoke("review", run_id, "--stats")
    assert text.exit_code == 0 and "precision 1.000, recall 0.667" in text.stdout
    # the report's "why it failed" section, after the verdict, carries the re-classification
    out = tmp_path / "report"
    made = project.invoke("report", run_id, "--out", str(out))
    assert made.exit_code == 0, made.stderr
    why = json.loads((out / "report.json").read_text())["why_it_failed"]
    reviewed = why["runs"][0]
    assert reviewed["reclassified"] == run["reclassified"]
    assert reviewed["top_modes"][0]["mode"] == "tool_fault"
    example = reviewed["top_modes"][0]["examples"][0]
    assert example["log"] == f".evalsuite/logs/{run_id}" and example["sample_id"].endswith("::1")
    markdown = (out / "report.md").read_text()
    assert markdown.index("## Answer") < markdown.index("## Why it failed")
    assert "re-classify 1 attempts as harness errors" in markdown
    html = (out / "index.html").read_text()
    assert html.index('id="answer"') < html.index('id="why-it-failed"')
    assert f'data-reclassified="{run_id}"' in html


def test_an_llm_scanner_runs_through_scout_with_mockllm(
    faulty: tuple[Project, str, dict[str, Any]], tmp_path: Path
) -> None:
    project, run_id, _ = faulty
    store = project.store()

    prompts: list[str] = []

    def answer(input: list[Any], *_: Any) -> ModelOutput:
        prompts.append("".join(m.text for m in input))
        output = ModelOutput.from_content(model="mockllm", content="ANSWER: yes")
        output.usage = ModelUsage(input_tokens=100, output_tokens=3, total_tokens=103)
        return output

    model = get_model("mockllm/model", custom_outputs=answer)
    taxonomy = suite_taxonomy(Layout(project.root), "probe")
    scanner = llm_mode_scanner(taxonomy.mode("tool_fault"), model)
    report = scan_run(
        store, Layout(project.root), run_id, {"llm_tool_fault": scanner}, scans_dir=tmp_path
    )
    frame = store.attempts(run_id)
    every = {(str(i), int(e)) for i, e in zip(frame["item_id"], frame["epoch"], strict=True)}
    # the model was asked once per transcript, about the mode's definition, and said yes
    assert len(prompts) == len(frame) and all("A tool failed." in p for p in prompts)
    assert set(report.flagged["llm_tool_fault"]) == every
    assert Path(report.location).is_relative_to(tmp_path)
    record = next(r for r in store.scan_records(run_id) if r["scanner"] == "llm_tool_fault")
    assert record["flagged"] == len(frame) == record["transcripts"]


TEAM_SCANNER = """
from inspect_scout import Result, Scanner, Transcript, scanner


@scanner(messages="all")
def alpha_items() -> Scanner[Transcript]:
    async def scan(transcript: Transcript) -> Result:
        return Result(value=str(transcript.task_id).startswith("alpha"))

    return scan
"""


def test_a_teams_own_scout_scanner_runs_unchanged(
    faulty: tuple[Project, str, dict[str, Any]], tmp_path: Path
) -> None:
    project, run_id, _ = faulty
    file = tmp_path / "team_scanners.py"
    file.write_text(TEAM_SCANNER, encoding="utf-8")
    result = project.invoke(
        "review", run_id, "--scan", "--scanner-file", str(file), "--scans", str(tmp_path / "s"),
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)["scans"][0]
    assert report["scanners"] == ["alpha_items"]  # only the team's scanner: no built-ins
    frame = project.store().attempts(run_id)
    alpha = {
        (str(i), int(e))
        for i, e in zip(frame["item_id"], frame["epoch"], strict=True)
        if str(i).startswith("alpha")
    }
    assert {(x["item_id"], x["epoch"]) for x in report["flagged"]["alpha_items"]} == alpha
    missing = project.invoke("review", run_id, "--scan", "--scanner-file", "nope.py")
    assert missing.exit_code == 2 and "no file nope.py" in missing.stderr
