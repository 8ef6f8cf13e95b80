"""A synthetic stored run with its inspect log, for the review app's tests and benchmark.

The store rows go through `Store.create_run` and `Store.record_attempts`, as the runner's;
the log is a JSON document in inspect's log format (the fields the review app reads: each
sample's id, epoch, messages with tool calls and tool results, output, scores with the
grader's explanation, store, and the runner's episode spec in the metadata), written where
`evalsuite run` writes a run's logs (``.evalsuite/logs/<run_id>/``). Seeded: the same
arguments give the same run.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from evalsuite.store import AttemptRecord, RunRecord, Store

__all__ = ["WORDS", "synthetic_run"]

WORDS = ("refund", "cancel", "address", "invoice", "warranty", "delivery", "password", "upgrade")


def _sample(run_id: str, item: str, epoch: int, rng: random.Random, word: str) -> dict[str, Any]:
    calls = rng.randint(1, 4)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a support agent."},
        {"role": "user", "content": f"Customer asks about {word} for order {item}."},
    ]
    for n in range(calls):
        call_id = f"call_{n}"
        messages.append(
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": call_id,
                        "function": "lookup_order",
                        "arguments": {"order_id": f"{item}-{n}"},
                        "type": "function",
                    }
                ],
            }
        )
        messages.append(
            {
                "role": "tool",
                "content": f"order {item}-{n}: status shipped, ref Z{rng.randint(0, 10**6)}",
                "tool_call_id": call_id,
                "function": "lookup_order",
            }
        )
    completion = f"Ticket closed: {word} handled."
    messages.append({"role": "assistant", "content": completion})
    return {
        "id": f"{item}::{epoch}",
        "epoch": epoch,
        "input": f"Customer asks about {word}.",
        "target": "",
        "messages": messages,
        "output": {
            "model": "synthetic",
            "choices": [
                {"message": {"role": "assistant", "content": completion}, "stop_reason": "stop"}
            ],
            "completion": completion,
        },
        "scores": {"verifier": {"value": 1.0, "explanation": f"{word} handled per policy"}},
        "metadata": {
            "evalsuite": {
                "item_id": item,
                "epoch": epoch,
                "seed": rng.randint(0, 2**31),
                "token": f"{run_id}::{item}::{epoch}",
            }
        },
        "store": {"EpisodeState:tool_calls": calls},
    }


def synthetic_run(
    root: Path,
    store: Store,
    run_id: str,
    *,
    items: int,
    epochs: int = 1,
    seed: int = 0,
    split: str = "dev",
    suite: str = "support",
    write_log: bool = True,
) -> RunRecord:
    """Store run `run_id` of `items` x `epochs` attempts, and (unless told not) its log.

    Every third attempt fails (score 0) and every seventh ends on a time limit; the item's
    word (`WORDS`, by item number) is in its messages, so a search for it finds it.
    """
    rng = random.Random(seed)
    record = RunRecord(
        run_id=run_id,
        model="evalsuite/synthetic",
        epochs=epochs,
        planned=items * epochs,
        status="complete",
        source="evalsuite",
        started_at="2026-12-06T00:00:00+00:00",
        suite=suite,
        version="4.0.0",
        split=split,
        valid=True,
        error_rate=0.0,
    )
    store.create_run(record)
    attempts, samples = [], []
    for i in range(items):
        item = f"item-{i:05d}"
        word = WORDS[i % len(WORDS)]
        for epoch in range(1, epochs + 1):
            n = i * epochs + epoch
            limit = n % 7 == 0
            score = 0.0 if limit or n % 3 == 0 else 1.0
            attempts.append(
                AttemptRecord(
                    item_id=item,
                    epoch=epoch,
                    stratum=f"support_desk/{word}",
                    outcome="limit" if limit else "scored",
                    score=score,
                    limit_type="time" if limit else None,
                    reason="time limit (60s)" if limit else "graded",
                    tokens=100 + i,
                    duration_s=1.0,
                )
            )
            if write_log:
                samples.append(_sample(run_id, item, epoch, rng, word))
    store.record_attempts(run_id, attempts)
    if write_log:
        logs = root / ".evalsuite" / "logs" / run_id
        logs.mkdir(parents=True, exist_ok=True)
        document = {
            "version": 2,
            "status": "success",
            "eval": {"task": "synthetic"},
            "samples": samples,
        }
        (logs / "2026-12-06T00-00-00-00-00_synthetic.json").write_text(
            json.dumps(document), encoding="utf-8"
        )
    return record
