"""CPU of one in-process `evalsuite run` of a small dev suite: what is fixed, what is per attempt.

    .venv/bin/python benchmarks/bench_run_cost.py [--repeats 3]

The test suite's probe project (tests/run/conftest.py: 40 items, 20 of them dev, the fake
tool-using agent `fakeagent/x`) is run on its dev split, one epoch, through the CLI's entry
point in this one process, after a warm-up run (imports, inspect's entry points and the other
once-per-process costs are not counted). Two sizes (2 and 20 dev items) separate the cost a
run pays once from the cost per attempt. CPU seconds (user + system of this process), not
wall time: the machine may be shared.

Baseline measured in the same run: the same runs with the attempts upsert built anew at
every store write, as before the statement was cached (docs/design/run-speed.md, "Per-run
fixed cost"); runs of the two variants alternate, and medians are compared. Also printed:
the CPU of each stage of a 20-item run.
"""

from __future__ import annotations

import argparse
import collections
import functools
import os
import resource
import statistics
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("INSPECT_TRACE_LEVEL", "CRITICAL")


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@contextmanager
def uncached_upsert() -> Iterator[None]:
    """The store as before: the attempts upsert built anew at every write."""
    from evalsuite.store._store import Store

    cached = Store._upsert_statement
    Store._upsert_statement = Store._build_upsert_statement  # type: ignore[method-assign]
    try:
        yield
    finally:
        Store._upsert_statement = cached  # type: ignore[method-assign]


def run_cpu(project: Any) -> float:
    from tests.helpers import json_out

    started = cpu()
    result = project.invoke(
        "run", "probe@1.0.0", "--model", "fakeagent/x", "--json", "--no-progress"
    )
    spent = cpu() - started
    assert result.exit_code == 0, result.stderr
    assert json_out(result)["valid"] is True
    return spent


def stages(project: Any) -> dict[str, float]:
    """CPU per stage of one run (functions of the runner and the store, timed in place)."""
    import evalsuite.run._runner as runner
    from evalsuite.store._store import Store

    spent: dict[str, float] = collections.defaultdict(float)
    patched: list[tuple[Any, str, Any]] = []

    def timed(owner: Any, name: str, label: str) -> None:
        original = getattr(owner, name)

        @functools.wraps(original)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            started = cpu()
            try:
                return original(*args, **kwargs)
            finally:
                spent[label] += cpu() - started

        patched.append((owner, name, original))
        setattr(owner, name, wrapper)

    for name, label in [
        ("_preflight", "checks: model, manifest verification, task functions, scorers"),
        ("collect_provenance", "provenance"),
        ("_open_items", "item payloads (dev file; the vault for holdout)"),
        ("_build_tasks", "plan -> inspect tasks"),
        ("_execute", "inspect eval() (the attempts, with the store writes of the hook)"),
        ("_record_never_ran", "after the eval: attempts that never ran"),
        ("run_health", "health"),
    ]:
        timed(runner, name, label)
    timed(Store, "record_attempts", "  of which: store writes of attempts (in the hook)")
    timed(Store, "create_run", "store: run row")
    timed(Store, "attempts", "store: attempts read back for health and mean")
    try:
        spent["the whole command"] = run_cpu(project)
    finally:
        for owner, name, original in reversed(patched):
            setattr(owner, name, original)
    return dict(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    import tests.run.fake_models  # noqa: F401  (registers the fake providers)
    from tests.run.conftest import make_probe_project

    tmp = Path(tempfile.mkdtemp(prefix="bench-run-cost-"))
    made = iter(range(10_000))

    def project(per_stratum: int) -> Any:
        return make_probe_project(tmp / f"p{next(made)}", n_per_stratum=per_stratum)

    run_cpu(project(20))  # warm-up: imports, inspect's entry points, once-per-process scans
    sizes = {2: 2, 20: 20}  # dev items -> items per stratum (half of each goes to dev)
    results: dict[tuple[str, int], list[float]] = collections.defaultdict(list)
    for _ in range(args.repeats):
        for dev, per_stratum in sizes.items():
            with uncached_upsert():
                results[("baseline", dev)].append(run_cpu(project(per_stratum)))
            results[("now", dev)].append(run_cpu(project(per_stratum)))
    med = {key: statistics.median(values) for key, values in results.items()}
    print(f"CPU s per in-process dev run (median of {args.repeats}; machine possibly shared)")
    print(f"{'dev attempts':>12} {'baseline':>9} {'now':>9} {'now/baseline':>13}")
    for dev in sizes:
        base, now = med[("baseline", dev)], med[("now", dev)]
        print(f"{dev:>12} {base:>9.3f} {now:>9.3f} {now / base:>13.2f}")
    for variant in ("baseline", "now"):
        small, large = med[(variant, 2)], med[(variant, 20)]
        per_attempt = (large - small) / 18
        fixed = small - 2 * per_attempt
        print(f"{variant}: fixed per run {fixed:.3f} s, per attempt {per_attempt * 1000:.1f} ms")
    print("\nCPU s per stage of one 20-attempt dev run (now):")
    for label, seconds in sorted(stages(project(20)).items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:7.3f}  {label}")


if __name__ == "__main__":
    main()
