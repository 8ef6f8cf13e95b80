"""Measure the reference agents on the support suite's DEV items, through inspect `eval()`.

    .venv/bin/python -m tests.agents.calibrate [--seeds 11 12 13]

The task author's calibration check. It never touches the holdout: holdout numbers come only
from `evalsuite run --split holdout`, which counts against the budget and is ledgered.
Every run logs to ``memory://`` with realtime buffers and traces off.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from typing import Any


def _private_environment() -> str:
    """Point inspect's files at a private directory; set before inspect is imported."""
    private = tempfile.mkdtemp(prefix="evalsuite-calibrate-")
    tempfile.tempdir = private
    for var in ("XDG_DATA_HOME", "XDG_CACHE_HOME", "TMPDIR"):
        os.environ[var] = private
    os.environ["INSPECT_TRACE_LEVEL"] = "CRITICAL"
    os.environ["INSPECT_EVAL_CTL_SERVER"] = "false"
    return private


def measure(items: Sequence[dict[str, Any]], agent: str, seed: int) -> dict[str, float]:
    """Mean verifier score and status-only (ticket closed) rate of one agent, in memory."""
    from inspect_ai import eval

    from tests.tasks.support_helpers import SCORER, TASK, episode_samples, mean

    task = TASK.support_desk(dataset=episode_samples(items, seed=seed))
    (log,) = eval(
        task,
        model=f"evalsuite/{agent}",
        log_dir=f"memory://calibrate/{agent}-{seed}",
        log_format="json",
        log_realtime=False,
        display="none",
    )
    assert log.samples is not None and log.status == "success"
    scores = [s.scores[SCORER] for s in log.samples]  # type: ignore[index]
    return {
        "score": mean(float(s.value) for s in scores),  # type: ignore[arg-type]
        "closed": mean(float(s.metadata["ticket_closed"]) for s in scores),  # type: ignore[index]
    }


def calibrate(seeds: Sequence[int]) -> dict[str, dict[str, dict[str, float]]]:
    """split -> agent -> {score, closed, n}, averaged over `seeds`."""
    from evalsuite.agents import AGENTS
    from tests.tasks.support_helpers import dev_items, mean

    splits = {"dev": dev_items()}
    table: dict[str, dict[str, dict[str, float]]] = {}
    for split, items in splits.items():
        table[split] = {}
        for agent in AGENTS:
            runs = [measure(items, agent, seed) for seed in seeds]
            table[split][agent] = {
                "score": mean(r["score"] for r in runs),
                "closed": mean(r["closed"] for r in runs),
                "n": float(len(items)),
            }
    return table


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[11])
    args = parser.parse_args(argv)
    private = _private_environment()
    try:
        table = calibrate(args.seeds)
    finally:
        shutil.rmtree(private, ignore_errors=True)
    for split, agents in table.items():
        for agent, row in agents.items():
            sys.stdout.write(
                f"{split:8s} {agent:9s} n={int(row['n']):4d} score={row['score']:.3f} "
                f"status-only={row['closed']:.3f}\n"
            )


if __name__ == "__main__":
    main()
