"""``evalsuite/replay``: answer each sample with the output recorded in an earlier inspect log.

``--model evalsuite/replay -M log=PATH`` (a log file, or a directory searched recursively; a
local path or any fsspec URL, such as the shared ``--log-dir`` of a sharded run) scores a new
grader on old outputs without calling a model. Each generate call of a sample returns the next
model output recorded for that sample (its model events before scoring, in order), so
tool-calling transcripts replay turn by turn. Nothing is guessed:

* samples are matched by sample id and epoch; logs written by ``evalsuite run`` name their
  samples ``<item>::<epoch>`` and match by item id and that epoch;
* the sample's input must hash to the recorded input, or the attempt fails;
* before each turn the conversation so far (tool results included) must equal what the
  recorded turn was given, or the attempt fails naming the turn and the message;
* a sample with no recording, a recording that ended in an error, or one with fewer turns
  than are asked for fails.

A failure is an exception in the sample (evalsuite records a harness error with the reason),
never an answer. See docs/design/scorers.md ("Offline models").
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from inspect_ai.event import ModelEvent, SpanBeginEvent
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.model import (
    ChatCompletionChoice,
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    ModelAPI,
    ModelOutput,
    ModelUsage,
)
from inspect_ai.solver._task_state import sample_state  # the running sample: id, epoch, input
from inspect_ai.tool import ToolChoice, ToolInfo
from inspect_ai.util import store

from evalsuite._core.hashing import content_hash
from evalsuite.run import find_inspect_logs

__all__ = ["Recording", "ReplayError", "ReplayModel", "input_hash", "load_recordings", "sample_key"]

_EVALSUITE_ID = re.compile(r"^(?P<item>.+)::(?P<epoch>\d+)$")
_TURN: Final = "evalsuite_replay:turn"
"""Sample-store key: model turns replayed so far in this sample (fresh on every retry)."""


class ReplayError(RuntimeError):
    """A sample cannot be answered from the recording (a harness error, never an answer)."""


@dataclass(frozen=True, slots=True)
class _Turn:
    input: tuple[tuple[Any, ...], ...]
    output: ModelOutput


@dataclass(slots=True)
class Recording:
    """What one recorded sample (item × epoch) holds for replay."""

    source: str
    sample_id: str
    epoch: int
    input_hash: str
    turns: list[_Turn] = field(default_factory=list)
    problem: str | None = None
    """Why this recording cannot be replayed (it ended in an error), or None."""


def sample_key(sample_id: str | int, epoch: int) -> tuple[str, int]:
    """(item id, epoch); ``<item>::<epoch>`` ids (evalsuite runs, epoch 1) are split."""
    match = _EVALSUITE_ID.match(str(sample_id))
    if match and epoch == 1:
        return match["item"], int(match["epoch"])
    return str(sample_id), epoch


def input_hash(value: str | Sequence[ChatMessage]) -> str:
    """Content hash of a sample input (a string, or messages by role and text)."""
    if isinstance(value, str):
        return content_hash(value)
    return content_hash([[m.role, m.text] for m in value])


def _canonical(message: ChatMessage) -> tuple[Any, ...]:
    """What must match for a conversation to be the recorded one (ids left out)."""
    if isinstance(message, ChatMessageAssistant):
        calls = tuple(
            (c.id, c.function, content_hash(c.arguments)) for c in message.tool_calls or []
        )
        return ("assistant", message.text, calls)
    if isinstance(message, ChatMessageTool):
        error = message.error.message if message.error else None
        return ("tool", message.tool_call_id, message.function, message.text, error)
    return (message.role, message.text)


def _label(canonical: tuple[Any, ...]) -> str:
    if canonical[0] == "tool":
        return f"the result of tool call {canonical[1]!r} ({canonical[2]})"
    return f"the {canonical[0]} message"


def _first_difference(
    actual: Sequence[tuple[Any, ...]], recorded: Sequence[tuple[Any, ...]]
) -> str | None:
    for index, (mine, theirs) in enumerate(zip(actual, recorded, strict=False)):
        if mine != theirs:
            return f"message {index + 1} ({_label(theirs)}) differs from the recording"
    if len(actual) != len(recorded):
        return (
            f"the conversation has {len(actual)} messages where the recording has {len(recorded)}"
        )
    return None


def _turns_from_events(sample: EvalSample) -> list[_Turn] | None:
    """Model calls made while solving (before the scorers span), or None without events."""
    if not sample.events:
        return None
    turns = []
    for event in sample.events:
        if isinstance(event, SpanBeginEvent) and event.type == "scorers":
            break
        if isinstance(event, ModelEvent) and event.error is None:
            turns.append(_Turn(tuple(_canonical(m) for m in event.input), event.output))
    return turns


def _turns_from_messages(sample: EvalSample) -> list[_Turn]:
    """Fallback for logs without events: each assistant message, after what preceded it."""
    turns = []
    for index, message in enumerate(sample.messages):
        if isinstance(message, ChatMessageAssistant):
            stop = "tool_calls" if message.tool_calls else "stop"
            output = ModelOutput(
                model=message.model or "replay",
                choices=[ChatCompletionChoice(message=message, stop_reason=stop)],
            )
            turns.append(_Turn(tuple(_canonical(m) for m in sample.messages[:index]), output))
    return turns


def _recording(sample: EvalSample, source: str) -> Recording:
    key = sample_key(sample.id, sample.epoch)
    recording = Recording(
        source=source, sample_id=key[0], epoch=key[1], input_hash=input_hash(sample.input)
    )
    if sample.error is not None:
        message = (sample.error.message or "").strip().splitlines()
        recording.problem = (
            f"the recorded attempt of item {key[0]!r} epoch {key[1]} ended in an error "
            f"({message[0][:200] if message else 'no message'}), so it has no output to replay"
        )
        return recording
    turns = _turns_from_events(sample)
    recording.turns = turns if turns is not None else _turns_from_messages(sample)
    return recording


def _log_files(location: str) -> list[str]:
    files = find_inspect_logs(location)
    if files is None:
        raise ValueError(
            f"evalsuite/replay: log {location!r} does not exist; give -M log= an inspect log "
            "file or a directory of logs, as a path or any fsspec URL (e.g. "
            ".evalsuite/logs/<run_id>, or the run's --log-dir such as s3://bucket/logs/<run_id>)"
        )
    return files


def load_recordings(path: Path | str) -> dict[tuple[str, int], Recording]:
    """Every recorded sample of the log(s) at `path` (a path or an fsspec URL), by (item, epoch).

    Where two logs record the same (item, epoch), the one that did not end in an error is
    kept; two clean recordings of one (item, epoch) are refused (which one to replay?).

    Raises:
        ValueError: no such path, no log in it, or an (item, epoch) recorded twice.
    """
    files = _log_files(str(path))
    recordings: dict[tuple[str, int], Recording] = {}
    for file in files:
        log = read_eval_log(file, resolve_attachments="core")
        for sample in log.samples or []:
            new = _recording(sample, file)
            key = (new.sample_id, new.epoch)
            old = recordings.get(key)
            if old is not None and old.problem is None and new.problem is None:
                raise ValueError(
                    f"evalsuite/replay: item {key[0]!r} epoch {key[1]} is recorded in both "
                    f"{old.source} and {file}; give -M log= a file or a directory with one "
                    "recording of each sample"
                )
            if old is None or old.problem is not None:
                recordings[key] = new
    if not recordings:
        raise ValueError(
            f"evalsuite/replay: no recorded sample in {path} ({len(files)} inspect log(s) "
            "found); give -M log= the log of an earlier run of the same items"
        )
    return recordings


class ReplayModel(ModelAPI):
    """``evalsuite/replay -M log=PATH``: the recorded outputs of an earlier log, turn by turn."""

    def __init__(
        self,
        model_name: str,
        base_url: str | None = None,
        api_key: str | None = None,
        config: GenerateConfig = GenerateConfig(),  # noqa: B008 (inspect's own signature)
        log: str | None = None,
        **model_args: Any,
    ) -> None:
        super().__init__(model_name, base_url, api_key, [], config)
        if model_args:
            raise ValueError(
                f"evalsuite/replay takes only -M log=PATH (got {', '.join(sorted(model_args))})"
            )
        if not log:
            raise ValueError(
                "evalsuite/replay needs -M log=PATH: the inspect log file (or a directory of "
                "logs) of an earlier run of the same items"
            )
        self.log = str(log)
        self.recordings = load_recordings(self.log)

    def max_connections(self) -> int:
        """No remote service: allow plenty of concurrent samples."""
        return 256

    def recording(self) -> Recording:
        """The recording of the running sample (matched by id, epoch and input hash)."""
        state = sample_state()
        if state is None:
            raise ReplayError("evalsuite/replay answers inspect samples only: no sample is running")
        item, epoch = sample_key(state.sample_id, state.epoch)
        found = self.recordings.get((item, epoch))
        if found is None:
            raise ReplayError(
                f"no recorded output for item {item!r} epoch {epoch} in {self.log} (the log "
                "does not hold this sample); replay a log of a run of the same items and epochs"
            )
        if found.problem is not None:
            raise ReplayError(found.problem)
        actual = input_hash(state.input)
        if actual != found.input_hash:
            raise ReplayError(
                f"the input of item {item!r} epoch {epoch} hashes to {actual[:19]}…, but the "
                f"recorded input in {found.source} to {found.input_hash[:19]}…: the log is of "
                "other items (or another version of them), so its output would be a wrong answer"
            )
        return found

    async def generate(
        self,
        input: list[ChatMessage],
        tools: list[ToolInfo],
        tool_choice: ToolChoice,
        config: GenerateConfig,
    ) -> ModelOutput:
        """The next recorded output of this sample, after checking the conversation so far."""
        found = self.recording()
        turn = int(store().get(_TURN, 0))
        where = f"item {found.sample_id!r} epoch {found.epoch}"
        if turn >= len(found.turns):
            raise ReplayError(
                f"{where}: model turn {turn + 1} was asked for, but the recording in "
                f"{found.source} has {len(found.turns)} turn(s)"
            )
        recorded = found.turns[turn]
        problem = _first_difference([_canonical(m) for m in input], recorded.input)
        if problem:
            raise ReplayError(
                f"{where}: the conversation diverged from the recording at model turn "
                f"{turn + 1}: {problem}"
            )
        store().set(_TURN, turn + 1)
        output = recorded.output.model_copy(deep=True)
        if output.usage is None:
            output.usage = ModelUsage(input_tokens=0, output_tokens=0, total_tokens=0)
        return output
