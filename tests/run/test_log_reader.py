"""Ingest reads inspect logs lean (`evalsuite.run._log_reader`) yet row for row as inspect does.

The oracle is inspect's own reader (`read_eval_log`, every field validated): the attempt row
built from a lean sample must equal the row built from inspect's, in both log formats, for a
scored sample, a tool time limit, a tool fault, a message limit, a NaN score (a document
msgspec cannot decode, read by the standard library) and an error; in the older format inspect
migrates (``score`` before ``scores``, a score's ``unscored_reason`` in its metadata); with
the sample entries of an ``.eval`` compressed by zstd, deflate or not at all. A sample inspect
refuses is refused, and a corrupt entry is an error, never a row.
"""

from __future__ import annotations

import json
import math
import os
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pydantic
import pytest
import zipfile_zstd  # noqa: F401 (zstd entries, as inspect writes them)
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalSample, read_eval_log
from inspect_ai.model import ModelOutput, ModelUsage, get_model
from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import Generate, Solver, TaskState, solver, use_tools
from inspect_ai.tool import Tool, tool

from evalsuite._core.layout import Layout
from evalsuite.errors import UsageError
from evalsuite.run import (
    EPISODE_KEY,
    EpisodeSpec,
    ToolTimeLimit,
    _ingest,
    _log_reader,
    episode_setup,
    guarded_call,
)
from evalsuite.run._ingest import PROCESSES_VARIABLE, _attempt_row, _samples
from evalsuite.run._log_reader import (
    EVAL_SAMPLE_VALIDATORS,
    SAMPLE_FIELDS,
    LeanSample,
    LogBatches,
    LogReaderDied,
    _EntryReader,
    read_log_samples,
    sample_entries,
)
from evalsuite.run._scores import ScoreRule
from evalsuite.store import Store, default_store_url

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
        assert not hasattr(sample, "input")
        assert SECRET not in repr(sample)
        assert "big" not in (sample.metadata or {})


def test_a_file_that_is_not_a_log_raises(tmp_path: Path) -> None:
    bad = tmp_path / "bad.eval"
    bad.write_bytes(b"not a zip")
    with pytest.raises(Exception, match="zip"):
        list(read_log_samples(str(bad)))


def test_the_lean_model_is_inspects_sample_model_for_the_fields_read() -> None:
    """Every field is `EvalSample`'s own definition, and every validator of `EvalSample` is
    accounted for: a new one in a later inspect-ai fails here until the reader is reviewed."""
    decorators = EvalSample.__pydantic_decorators__
    assert set(decorators.model_validators) == EVAL_SAMPLE_VALIDATORS
    assert not decorators.field_validators
    assert not decorators.validators
    assert not decorators.root_validators
    read = [name for name in SAMPLE_FIELDS if name != "score"]
    assert set(LeanSample.model_fields) == set(read)
    for name in read:
        ours, inspects = LeanSample.model_fields[name], EvalSample.model_fields[name]
        assert ours.annotation == inspects.annotation
        assert ours.is_required() == inspects.is_required()
        assert repr(ours) == repr(inspects)


def _old_format(sample: dict[str, Any]) -> dict[str, Any]:
    """A sample as inspect wrote it before ``scores``: one ``score``, and the reason of an
    unscored grade in the score's metadata (both migrated by inspect's models)."""
    sample = dict(sample)
    scores = sample.pop("scores", None)
    if scores:
        (score,) = scores.values()
        score = dict(score)
        if sample["id"] == "item-0::1":
            score.pop("reason", None)
            score["metadata"] = {**(score.get("metadata") or {}), "unscored_reason": "refusal"}
        sample["score"] = score
    return sample


def _rewrite_eval(
    source: str, target: Path, change: Callable[[dict[str, Any]], dict[str, Any]], method: int
) -> str:
    """The .eval log `source` with every sample entry changed and compressed by `method`."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            data = old.read(info)
            if info.filename.startswith("samples/"):
                data = json.dumps(change(json.loads(data))).encode()
            new.writestr(info.filename, data, compress_type=method)
    return str(target)


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_an_older_log_format_is_migrated_as_inspect_migrates_it(
    tmp_path: Path, log_format: str
) -> None:
    location = _log(tmp_path, log_format)
    if log_format == "json":
        document = json.loads(Path(location).read_text())
        document["samples"] = [_old_format(sample) for sample in document["samples"]]
        location = str(tmp_path / "old.json")
        Path(location).write_text(json.dumps(document))
    else:
        location = _rewrite_eval(location, tmp_path / "old.eval", _old_format, 93)
    lean = _rows(_samples(location))
    full = _rows(read_eval_log(location).samples or [])
    assert lean == full
    # the migrated reason counts: a refusal with the verifier's value is scored
    assert lean["item-0"]["outcome"] == "scored"
    assert lean["item-0"]["reason"] == "half  right,\nsee notes"
    assert lean["item-1"]["limit_type"] == "tool_time"


@pytest.mark.parametrize(
    "method", [zipfile.ZIP_DEFLATED, zipfile.ZIP_STORED, 93], ids=["deflate", "stored", "zstd"]
)
def test_sample_entries_are_the_bytes_zipfile_reads(tmp_path: Path, method: int) -> None:
    location = _rewrite_eval(_log(tmp_path, "eval"), tmp_path / "copy.eval", dict, method)
    with zipfile.ZipFile(location) as archive:
        infos = [i for i in archive.infolist() if i.filename.startswith("samples/")]
        expected = [archive.read(i) for i in infos]
    with open(location, "rb") as handle:
        assert list(sample_entries(handle)) == expected
        # zstd and deflate entries are read from their offsets, the others by zipfile
        direct = [_EntryReader(handle).read(info) for info in infos]
        assert direct == (expected if method != zipfile.ZIP_STORED else [None] * len(infos))
    assert len(expected) == len(KINDS)
    full = _rows(read_eval_log(location).samples or [])
    assert _rows(_samples(location)) == full


@pytest.mark.parametrize("method", [zipfile.ZIP_DEFLATED, 93], ids=["deflate", "zstd"])
def test_a_corrupt_entry_is_an_error_not_a_row(tmp_path: Path, method: int) -> None:
    location = _rewrite_eval(_log(tmp_path, "eval"), tmp_path / "copy.eval", dict, method)
    blob = bytearray(Path(location).read_bytes())
    name = b"samples/item-2::1_epoch_1.json"
    central = blob.rfind(name) - 46  # the name follows a 46-byte central directory header
    assert blob[central : central + 4] == b"PK\x01\x02"
    blob[central + 16] ^= 0x01  # one bit of the entry's CRC-32
    Path(location).write_bytes(bytes(blob))
    with pytest.raises(zipfile.BadZipFile, match="CRC"):
        list(read_log_samples(location))


@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_a_sample_inspect_refuses_is_refused(tmp_path: Path, log_format: str) -> None:
    def bad(sample: dict[str, Any]) -> dict[str, Any]:
        if sample["id"] == "item-0::1":
            sample["model_usage"] = {"mockllm/model": {"input_tokens": "many"}}
        return sample

    location = _log(tmp_path, log_format)
    if log_format == "json":
        document = json.loads(Path(location).read_text())
        document["samples"] = [bad(sample) for sample in document["samples"]]
        location = str(tmp_path / "bad.json")
        Path(location).write_text(json.dumps(document))
    else:
        location = _rewrite_eval(location, tmp_path / "bad.eval", bad, 93)
    with pytest.raises(pydantic.ValidationError, match="input_tokens"):
        read_eval_log(location)
    with pytest.raises(pydantic.ValidationError, match="input_tokens"):
        list(read_log_samples(location))


@pytest.fixture
def forkable(monkeypatch: pytest.MonkeyPatch) -> None:
    """A second process is forked even beside the threads pytest-xdist and inspect's eval
    leave running (the one-thread check protects the CLI; the forked reader takes no lock
    those threads hold)."""
    if sys.platform != "linux":
        pytest.skip("the second reading process is forked on Linux only")
    monkeypatch.setattr(_log_reader, "_forkable", lambda: True)


def _ids(samples: list[Any]) -> list[tuple[str, int, str, int]]:
    """What `LogBatches` gives back: the sample ids and the process that read them."""
    return [(str(s.id), s.epoch, _outcomes(s), os.getpid()) for s in samples]


def _outcomes(sample: Any) -> str:
    return _attempt_row(sample, {}, {}, {})["outcome"]  # type: ignore[no-any-return]


@pytest.mark.usefixtures("forkable")
@pytest.mark.parametrize("size", [1, 2, 4])
def test_two_processes_give_the_batches_one_gives_in_the_logs_order(
    tmp_path: Path, size: int
) -> None:
    location = _log(tmp_path, "eval")
    with LogBatches(location, _ids, size=size, processes=1) as batches:
        one = list(batches)
    with LogBatches(location, _ids, size=size, processes=2) as batches:
        two = list(batches)
    strip = [[row[:3] for row in batch] for batch in two]
    assert strip == [[row[:3] for row in batch] for batch in one]
    order = [str(sample.id) for sample in read_log_samples(location)]
    assert [row[0] for batch in one for row in batch] == order
    assert sorted(order) == [f"item-{n}::1" for n in range(6)]
    # every other batch was read by another process
    readers = [{row[3] for row in batch} for batch in two]
    assert readers[0] == {os.getpid()}
    assert os.getpid() not in readers[1]
    assert [len(batch) for batch in two] == [len(batch) for batch in one]


@pytest.mark.usefixtures("forkable")
@pytest.mark.parametrize("bad", ["item-1::1", "item-4::1"])
def test_an_error_of_the_second_process_is_raised_where_one_process_raises_it(
    tmp_path: Path, bad: str
) -> None:
    def refused(sample: dict[str, Any]) -> dict[str, Any]:
        if sample["id"] == bad:
            sample["epoch"] = "first"
        return sample

    original = _log(tmp_path, "eval")
    order = [str(sample.id) for sample in read_log_samples(original)]
    location = _rewrite_eval(original, tmp_path / "bad.eval", refused, 93)
    errors = []
    for processes in (1, 2):
        got: list[Any] = []
        with (
            pytest.raises(Exception, match="epoch") as raised,
            LogBatches(location, _ids, size=1, processes=processes) as batches,
        ):
            got.extend(batches)
        errors.append((str(raised.value), [row[0] for batch in got for row in batch]))
    assert errors[0] == errors[1]
    assert errors[0][1] == order[: order.index(bad)]


@pytest.mark.usefixtures("forkable")
def test_a_second_process_that_dies_is_an_error_not_a_short_log(tmp_path: Path) -> None:
    parent = os.getpid()

    def dies(samples: list[Any]) -> list[Any]:
        if os.getpid() != parent:
            os._exit(3)
        return _ids(samples)

    location = _log(tmp_path, "eval")
    with (
        pytest.raises(LogReaderDied, match="exit code 3"),
        LogBatches(location, dies, size=2, processes=2) as batches,
    ):
        list(batches)


@pytest.mark.usefixtures("forkable")
def test_leaving_early_stops_the_second_process(tmp_path: Path) -> None:
    location = _log(tmp_path, "eval")
    with LogBatches(location, _ids, size=1, processes=2) as batches:
        next(iter(batches))
        process = batches._process
        assert process is not None
    assert batches._process is None
    assert not process.is_alive()


@pytest.mark.usefixtures("forkable")
def test_ingest_by_two_processes_stores_what_one_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    location = _log(tmp_path, "eval")
    monkeypatch.setattr(_ingest, "INSPECT_BATCH_SAMPLES", 2)
    stored = {}
    for processes in ("1", "2"):
        monkeypatch.setenv(PROCESSES_VARIABLE, processes)
        root = tmp_path / f"root-{processes}"
        root.mkdir()
        store = Store(default_store_url(Layout(root).state))
        (run,) = _ingest.ingest_inspect(location, store, root=root).runs
        frame = store.attempts(run.run_id).drop(columns=["run_id"], errors="ignore")
        stored[processes] = (run.content_hash, frame.sort_values("item_id").to_dict("records"))
    assert stored["1"][0] == stored["2"][0]
    assert str(stored["1"][1]) == str(stored["2"][1])  # NaN scores compare as text
    assert len(stored["1"][1]) == len(KINDS)


@pytest.mark.parametrize("value", ["3", "two", "0"])
def test_a_bad_process_count_is_refused(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(PROCESSES_VARIABLE, value)
    with pytest.raises(UsageError, match=f"{PROCESSES_VARIABLE}='{value}': expected 1"):
        _ingest.ingest_processes()


def test_the_default_is_two_processes_given_two_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PROCESSES_VARIABLE, raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert _ingest.ingest_processes() == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert _ingest.ingest_processes() == 1
    monkeypatch.setenv(PROCESSES_VARIABLE, "1")
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert _ingest.ingest_processes() == 1


def test_a_second_process_is_forked_beside_idle_anyio_workers_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import threading

    main = threading.main_thread()

    def threads(*names: str) -> None:
        others = [threading.Thread(name=name) for name in names]
        monkeypatch.setattr(threading, "enumerate", lambda: [main, *others])

    threads("AnyIO worker thread")
    assert _log_reader._forkable() == (sys.platform == "linux")
    threads("AnyIO worker thread", "uploader")
    assert not _log_reader._forkable()


def test_a_zstd_entry_of_several_frames_is_read_by_zipfile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """inspect starts a new zstd frame every 200 MiB of an entry; the one-call
    decompression reads one frame, so such an entry is left to zipfile (inspect's
    decompressor), never cut short."""
    import inspect_ai._util.zipfile as inspect_zip

    monkeypatch.setattr(inspect_zip, "_MAX_INPUT_PER_FRAME", 1024)
    location = _rewrite_eval(_log(tmp_path, "eval"), tmp_path / "frames.eval", dict, 93)
    with zipfile.ZipFile(location) as archive:
        infos = [i for i in archive.infolist() if i.filename.startswith("samples/")]
        expected = [archive.read(i) for i in infos]
    assert all(len(raw) > 1024 for raw in expected)
    with open(location, "rb") as handle:
        assert [_EntryReader(handle).read(info) for info in infos] == [None] * len(infos)
        assert list(sample_entries(handle)) == expected
    assert _rows(_samples(location)) == _rows(read_eval_log(location).samples or [])


_WRITES_THEN_READS = """
import os, sys
from evalsuite.run._log_reader import LogBatches
sys.stdout.write("written before the fork;")
with LogBatches(sys.argv[1], lambda samples: os.getpid(), size=1, processes=2) as batches:
    readers = set(batches)
print(len(readers))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the second process is forked on Linux")
def test_what_was_written_before_the_fork_is_written_once(tmp_path: Path) -> None:
    """The forked reader flushes the standard streams it inherits when it ends; what this
    process had yet to write is flushed before the fork (by multiprocessing), not twice."""
    import subprocess

    location = _log(tmp_path, "eval")
    done = subprocess.run(
        [sys.executable, "-c", _WRITES_THEN_READS, location],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "written before the fork;2\n"
