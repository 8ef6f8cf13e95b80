"""Wall time of `evalsuite run` against a bare inspect `eval()` of the same task and agent.

    .venv/bin/python benchmarks/bench_run_overhead.py [--epochs 2] [--repeats 3]

Both run the `support` suite's dev items with `evalsuite/improved` in this one process,
alternately, `--repeats` times; the medians are compared. The bare eval gets the same log
settings (JSON log in a temporary directory, no realtime buffer, no display) and the same
per-(item, epoch) episodes; evalsuite adds verification, planning, the results store, the
outcome classification and the health check. Target: ratio <= 1.10.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("INSPECT_TRACE_LEVEL", "CRITICAL")


def _project(tmp: Path) -> Path:
    root = tmp / "project"
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(
            ROOT / part,
            root / part,
            ignore=shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl"),
        )
    return root


def bare_eval(root: Path, epochs: int, log_dir: Path) -> float:
    """inspect eval() of the support_desk task on the same (item, epoch) episodes."""
    from inspect_ai import eval as inspect_eval

    from evalsuite._core.layout import Layout
    from evalsuite.manifest import load_manifest, load_suite, load_suite_items
    from evalsuite.run import (
        EPISODE_KEY,
        EpisodeSpec,
        RunSpec,
        item_to_sample,
        load_task_function,
        plan_attempts,
    )

    layout = Layout(root)
    manifest = load_manifest(layout, "support", "1.0.0")
    spec = RunSpec(suite="support", version="1.0.0", model="evalsuite/improved", epochs=epochs)
    payloads = {
        e.item.id: e.item.payload() for e in load_suite_items(layout, load_suite(layout, "support"))
    }
    samples = []
    for attempt in plan_attempts(manifest.items_by_split("dev"), spec):
        episode = EpisodeSpec(item_id=attempt.item.id, epoch=attempt.epoch, seed=attempt.seed)
        samples.append(
            item_to_sample(
                payloads[attempt.item.id],
                sample_id=attempt.sample_id,
                extra={EPISODE_KEY: episode.model_dump()},
            )
        )
    task = load_task_function(layout, "support", manifest.families[0])(dataset=samples)
    started = time.perf_counter()
    logs = inspect_eval(
        task,
        model="evalsuite/improved",
        log_dir=str(log_dir),
        log_format="json",
        log_realtime=False,
        display="none",
        log_level="error",
    )
    elapsed = time.perf_counter() - started
    assert logs[0].status == "success", logs[0].status
    return elapsed


def evalsuite_run(root: Path, epochs: int) -> float:
    """The same through `run_suite` (verify, plan, store, classify, health)."""
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import KeySpec
    from evalsuite.run import RunSpec, run_suite
    from evalsuite.store import Store, default_store_url

    layout = Layout(root)
    store = Store(default_store_url(layout.state))
    spec = RunSpec(suite="support", version="1.0.0", model="evalsuite/improved", epochs=epochs)
    started = time.perf_counter()
    result = run_suite(
        layout, spec, keys=KeySpec(key_dir=root / "keys"), store=store, progress=False
    )
    elapsed = time.perf_counter() - started
    assert result.health.valid
    return elapsed


def main() -> None:
    """Measure both, alternately, and print the medians and their ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-run-") as tmp:
        root = _project(Path(tmp))
        bare_eval(root, 1, Path(tmp) / "warmup")  # imports and first-call costs
        bare, ours = [], []
        for i in range(args.repeats):
            bare.append(bare_eval(root, args.epochs, Path(tmp) / f"bare-{i}"))
            ours.append(evalsuite_run(root, args.epochs))
            print(
                f"repeat {i + 1}: bare eval {bare[-1]:.2f} s, evalsuite run {ours[-1]:.2f} s",
                flush=True,
            )
    b, o = statistics.median(bare), statistics.median(ours)
    episodes = 108 * args.epochs
    print(f"episodes per run: {episodes} (support dev, {args.epochs} epochs, evalsuite/improved)")
    print(f"bare inspect eval(): median {b:.2f} s ({episodes / b:.1f} episodes/s)")
    print(f"evalsuite run:       median {o:.2f} s ({episodes / o:.1f} episodes/s)")
    print(f"ratio evalsuite/bare: {o / b:.3f} (target <= 1.10)")


if __name__ == "__main__":
    main()
