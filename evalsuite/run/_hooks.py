"""Stream finished samples into the store while inspect runs (so a killed run can resume).

inspect hooks are process-global and their exceptions are swallowed, so the hook only hands
each finished sample to the active `SampleSink`; the runner reconciles against the returned
logs afterwards, which makes a failed hook write harmless.
"""

from __future__ import annotations

from typing import Protocol

from inspect_ai.hooks import Hooks, SampleEnd, hooks
from inspect_ai.log import EvalSample

__all__ = ["SampleSink", "active_sink"]


class SampleSink(Protocol):
    """Receives every finished sample of the running evalsuite run."""

    def accept(self, sample: EvalSample) -> None:
        """Record one finished sample."""


_ACTIVE: list[SampleSink] = []


class active_sink:  # a context manager that reads like a function
    """Make `sink` receive finished samples for the duration of a ``with`` block."""

    def __init__(self, sink: SampleSink) -> None:
        self.sink = sink

    def __enter__(self) -> SampleSink:
        _ACTIVE.append(self.sink)
        return self.sink

    def __exit__(self, *exc: object) -> None:
        _ACTIVE.remove(self.sink)


@hooks(name="evalsuite_attempts", description="Streams finished samples into the store.")
class _AttemptHooks(Hooks):
    def enabled(self) -> bool:
        return bool(_ACTIVE)

    async def on_sample_end(self, data: SampleEnd) -> None:
        for sink in list(_ACTIVE):
            sink.accept(data.sample)
