"""Ingest reads inspect logs lean (`evalsuite.run._log_reader`) yet row for row as inspect does.

The oracle is inspect's own reader (`read_eval_log`, every field validated): the attempt row
built from a lean sample must equal the row built from inspect's, in both log formats, for a
scored sample, a tool time limit, a tool fault, a message limit, a NaN score (a document
msgspec cannot decode, read by the standard library) and an error.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, tool

from evalsuite.run import EPISODE_KEY, EpisodeSpec, ToolTimeLimit, episode_setup, guarded_call
from evalsuite.run._ingest import _attempt_row, _samples
from evalsuite.run._log_reader import read_log_samples
from evalsuite.run._scores import ScoreRule

SECRET = "PLANTED-ITEM-TEXT-7f3a"


@tool(name="lookup")
def _lookup() -> Tool:
    async def execute(query: str) -> str:
        """Look something up; what happens is named by the query.

        Args:
            query: ``limit`` (a model-bound timeout), ``fault`` (a tool fault), else found.
        """

        async def work() -> str:
            if query in ("limit", "fault"):
                raise ToolTimeLimit(12.0, 8.0)
            return "found"

        on_timeout: Any = "limit" if query == "limit" else "harness_error"
        return await guarded_call("lookup", work, on_timeout=on_timeout)

    return execute


def _outputs(messages: list[Any], *_: Any) -> ModelOutput:
    kind = str(messages[0].text).split()[0]
    if kind == "loop" or len(messages) < 3:
        out = ModelOutput.for_tool_call("mockllm/model", "lookup", {"query": kind})
    else:
        out = ModelOutput.from_content("mockllm/model", "done")
    out.usage = ModelUsage(input_tokens=3, output_tokens=2, total_tokens=5)
    return out


@solver
def _loop() -> Solver:
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        return await generate(state, tool_calls="loop")

    return solve


@scorer(metrics=[mean()])
def _grade() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        kind = state.input_text.split()[0]
        if kind == "nan":
            return Score(value=math.nan, explanation="no value")
        if kind == "boom":
            raise RuntimeError("grader exploded")
        return Score(
            value=0.5,
            explanation="half  right,\nsee notes",  # whitespace kept as written
            metadata={"ok": True, "note": "x" * 2000, "nested": {"a": 1}},
        )

    return score


KINDS = ("fine", "limit", "fault", "loop", "nan", "boom")


def _log(tmp_path: Path, log_format: str) -> str:
    samples = []
    for n, kind in enumerate(KINDS):
        spec = EpisodeSpec(item_id=f"item-{n}", epoch=1, seed=n)
        samples.append(
            Sample(
                id=f"item-{n}::1",
                input=f"{kind} {SECRET}",
                metadata={EPISODE_KEY: spec.model_dump(), "stratum": "s", "big": "y" * 5000},
            )
        )
    task = Task(
        dataset=samples,
        setup=[episode_setup()],
        solver=[use_tools(_lookup()), _loop()],
        scorer=_grade(),
        message_limit=8,
    )
    model = get_model("mockllm/model", custom_outputs=_outputs)
    (log,) = inspect_eval(
        task,
        model=model,
        log_dir=str(tmp_path / log_format),
        display="none",
        log_format=log_format,  # type: ignore[arg-type]
        fail_on_error=False,
    )
    return str(log.location)


def _rows(samples: Any) -> dict[str, dict[str, Any]]:
    rows = {}
    for sample in samples:
        row = _attempt_row(sample, {}, {}, {})
        rows[row["item_id"]] = {
            k: ("nan" if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()
        }
    return rows


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_lean_samples_give_the_rows_inspects_reader_gives(tmp_path: Path, log_format: str) -> None:
    location = _log(tmp_path, log_format)
    lean = _rows(_samples(location))
    full = _rows(read_eval_log(location).samples or [])
    assert lean == full
    outcomes = {row["item_id"]: (row["outcome"], row["limit_type"]) for row in lean.values()}
    assert outcomes == {
        "item-0": ("scored", None),
        "item-1": ("limit", "tool_time"),
        "item-2": ("harness_error", None),
        "item-3": ("limit", "message"),
        "item-4": ("harness_error", None),
        "item-5": ("harness_error", None),
    }
    assert lean["item-0"]["reason"] == "half  right,\nsee notes"
    assert lean["item-0"]["tokens"] == 10


def test_a_tool_time_limit_is_ingested_as_the_labelled_limit_a_live_run_records(
    tmp_path: Path,
) -> None:
    """The reader before this one left the sample store out, where the episode records a
    tool time limit: the attempt was ingested as scored 0.5 instead of a `tool_time` limit."""
    location = _log(tmp_path, "eval")
    (sample,) = [s for s in _samples(location) if s.id == "item-1::1"]
    row = _attempt_row(sample, {}, {"f": ScoreRule()}, {})
    assert (row["outcome"], row["score"], row["limit_type"]) == ("limit", 0.0, "tool_time")
    assert row["reason"] == "tool time limit: lookup (8s)"


def test_the_item_text_is_not_decoded(tmp_path: Path) -> None:
    location = _log(tmp_path, "eval")
    for sample in read_log_samples(location):
        assert sample.input == ""
        assert SECRET not in repr(sample)
        assert "big" not in (sample.metadata or {})


def test_a_file_that_is_not_a_log_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"not a zip")
    with pytest.raises(Exception, match="zip"):
        list(read_log_samples(str(bad)))
