"""`make demo`: the main job end to end on the embedded defaults.

Evaluate two checkpoints (the offline reference agents `evalsuite/baseline` and
`evalsuite/improved`) on the frozen holdouts of the three example suites (`support`: a
customer-support desk; `records`: a records system with a stale cache and slow tools;
`repair`: code repair with hidden tests) with 2 epochs, measure them, compare them suite by
suite, and write one report of all six runs to `reports/demo/`.

The demo works in a scratch copy of the project (`.evalsuite/demo/`: the suites, manifests
and vaults, a fresh holdout ledger and store), so that running it again and again never
spends this repository's holdout budget or writes to its ledger. Every step is a real
`evalsuite` command line, as a user would type it, and the demo stops at the first failure.

The steps run in two worker processes, one per core (docs/design/run-speed.md, "The demo"):
each worker imports evalsuite and inspect once and runs the command lines it is handed one
after the other, in process (`evalsuite.cli.cli`, the console script's own entry point), with
its own stdout and stderr captured per step. Steps that do not depend on each other (the six
runs; then the read-only status, score, compare and report) are handed to whichever worker is
free, longest first; their output is printed in the demo's order, each with its wall time and
the CPU time it used.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import resource
import selectors
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]
WORKSPACE = ROOT / ".evalsuite" / "demo"
REPORT = ROOT / "reports" / "demo"
SUITES = ("support@4.0.0", "records@2.1.0", "repair@2.0.0")
"""The example suites, each run by both checkpoints on its holdout."""
KEY_DIR = ROOT / ".evalsuite" / "demo-keys"
"""The demo's own key directory (`EVALSUITE_KEY_DIR` of its workers), outside the workspace:
it holds the heads of the workspace's ledgers, which start empty in every demo (the shipped
suites use canary keys, so it holds no key)."""
ACTION_CACHE = "action-spaces.json"
"""`verify`'s action-space cache, in the workspace's state directory (`.evalsuite/`)."""
WORKERS = 2
"""Worker processes: one per core of the 2-core machine the time target is set on."""
WORKER = [sys.executable, str(Path(__file__).resolve()), "--worker"]
"""How a worker process is started, followed by `CLI` (it reads steps on stdin, answers on
stdout)."""
CLI = "evalsuite.cli:cli"
"""The command a worker runs each step with (`module:attribute`): the console script's own
click group, called with the step's arguments."""


@dataclass(frozen=True)
class Step:
    """One `evalsuite` command line of the demo."""

    title: str
    args: tuple[str, ...]
    weight: float = 1.0
    """Relative CPU cost: heavier steps are handed out first, so both workers end together."""


@dataclass(frozen=True)
class Done:
    """What a worker reports for one step."""

    code: int
    stdout: str
    stderr: str
    wall: float
    cpu: float
    """CPU seconds (user + system) of the worker and the child processes it waited for."""


# ---- the worker ---------------------------------------------------------------------------------


def _cli_callable(spec: str) -> Any:
    module, _, attribute = spec.partition(":")
    return getattr(__import__(module, fromlist=[attribute]), attribute)


def _cpu_now() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _capture_file() -> IO[bytes]:
    """An anonymous in-memory file for a step's output (never a path on disk)."""
    if hasattr(os, "memfd_create"):
        return os.fdopen(os.memfd_create("evalsuite-demo-step"), "w+b")
    return tempfile.TemporaryFile()


@contextlib.contextmanager
def _captured() -> Iterator[tuple[IO[bytes], IO[bytes]]]:
    """Point file descriptors 1 and 2 at fresh captures for the duration of a step.

    At the descriptor level, so that what the step's own child processes and any console
    bound to the original streams print is caught too.
    """
    out, err = _capture_file(), _capture_file()
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    os.dup2(out.fileno(), 1)
    os.dup2(err.fileno(), 2)
    try:
        yield out, err
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def _read(capture: IO[bytes]) -> str:
    capture.seek(0)
    text = capture.read().decode("utf-8", errors="replace")
    capture.close()
    return text


def run_in_process(command: Any, args: Sequence[str]) -> Done:
    """Run one command line in this process, as the console script would; capture its output.

    `command` is called as a click group is (``command(args, prog_name=...)``); the exit code
    is that of the `SystemExit` it ends with (0 when it returns).
    """
    started, cpu = time.perf_counter(), _cpu_now()
    with _captured() as (out, err):
        try:
            command(list(args), prog_name="evalsuite")
            code = 0
        except SystemExit as stop:
            if stop.code is None or isinstance(stop.code, int):
                code = stop.code or 0
            else:
                print(stop.code, file=sys.stderr)
                code = 1
        except BaseException as exc:  # a step's failure is reported, never raised
            print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
            code = 1
    return Done(
        code=code,
        stdout=_read(out),
        stderr=_read(err),
        wall=time.perf_counter() - started,
        cpu=_cpu_now() - cpu,
    )


def worker(spec: str, steps: IO[str], answers: IO[str]) -> None:
    """Run each command line read from `steps` (a JSON list per line), answer one JSON line.

    The first answer (before any step) is the CPU the worker spent starting up: Python and
    the command line's imports.
    """
    command = _cli_callable(spec)  # imported before the first step is timed
    answers.write(json.dumps({"startup_cpu": _cpu_now()}) + "\n")
    answers.flush()
    for line in steps:
        done = run_in_process(command, json.loads(line))
        answers.write(json.dumps(done.__dict__) + "\n")
        answers.flush()


def _worker_main(spec: str) -> None:
    # the answers keep the original stdout; anything printed between steps goes to stderr
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    sys.stdout.flush()
    os.dup2(2, 1)
    worker(spec, sys.stdin, answers)


# ---- the coordinator ----------------------------------------------------------------------------


def _pipe(stream: IO[str] | None) -> IO[str]:
    if stream is None:
        raise RuntimeError("a demo worker was started without its pipes")
    return stream


@dataclass
class Worker:
    """A worker process, and the step it is running (if any)."""

    proc: subprocess.Popen[str]
    startup_cpu: float = 0.0
    current: int | None = None
    done: list[int] = field(default_factory=list)

    @classmethod
    def start(cls) -> Worker:
        """Start a worker process (`WORKER` with `CLI`), talking over its stdin and stdout."""
        proc = subprocess.Popen(
            [*WORKER, CLI], text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=1
        )
        return cls(proc)

    def send(self, index: int, args: Sequence[str]) -> None:
        """Hand the worker step number `index`, the command line `args`."""
        self.current = index
        _pipe(self.proc.stdin).write(json.dumps(list(args)) + "\n")
        _pipe(self.proc.stdin).flush()

    def receive(self) -> dict[str, Any]:
        """The worker's next answer; stops the demo if the worker died."""
        line = _pipe(self.proc.stdout).readline()
        if not line:
            code = self.proc.wait()
            sys.exit(f"a demo worker stopped unexpectedly (exit {code})")
        answer: dict[str, Any] = json.loads(line)
        return answer

    def stop(self) -> None:
        """Close the worker's input (it exits when its steps end); kill it after 5 s."""
        if self.proc.poll() is None:
            if self.proc.stdin is not None:
                with contextlib.suppress(OSError):
                    self.proc.stdin.close()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


@dataclass
class Pool:
    """Two workers; `run` hands a group of independent steps to whichever worker is free."""

    size: int = WORKERS
    workers: list[Worker] = field(default_factory=list)
    timings: list[tuple[str, float, float]] = field(default_factory=list)
    """(title, wall s, CPU s) of every step, in the demo's order."""

    def __enter__(self) -> Pool:
        self.workers = [Worker.start() for _ in range(self.size)]
        for w in self.workers:
            w.startup_cpu = float(w.receive()["startup_cpu"])
        return self

    def __exit__(self, *exc: object) -> None:
        for w in self.workers:
            w.stop()

    def kill(self) -> None:
        """Stop every worker now (a step failed)."""
        for w in self.workers:
            if w.proc.poll() is None:
                w.proc.kill()
                w.proc.wait()

    def run(
        self, steps: Sequence[Step], on_done: Callable[[int, Done], None] | None = None
    ) -> list[str]:
        """Run `steps` (independent of each other); print each in order; stop at a failure.

        Returns every step's stdout, in the order of `steps`. `on_done(index, done)` is
        called as each step finishes (in the order they finish).
        """
        order = sorted(range(len(steps)), key=lambda i: -steps[i].weight)
        results: dict[int, Done] = {}
        printed = 0
        selector = selectors.DefaultSelector()
        for w in self.workers:
            selector.register(_pipe(w.proc.stdout), selectors.EVENT_READ, w)
        try:
            idle = list(self.workers)
            while printed < len(steps):
                while idle and order:
                    index = order.pop(0)
                    idle.pop(0).send(index, steps[index].args)
                for key, _ in selector.select():
                    w = key.data
                    answer, index = w.receive(), w.current
                    if index is None:
                        sys.exit("a demo worker answered a step it was not given")
                    results[index] = Done(**answer)
                    if on_done is not None:
                        on_done(index, results[index])
                    w.done.append(index)
                    w.current = None
                    idle.append(w)
                while printed in results:
                    self._print(steps[printed], results[printed])
                    printed += 1
        finally:
            selector.close()
        return [results[i].stdout for i in range(len(steps))]

    def _print(self, step: Step, done: Done) -> None:
        print(f"\n== {step.title}\n$ evalsuite {shlex.join(step.args[2:])}", flush=True)
        sys.stdout.write(done.stdout)
        sys.stderr.write(done.stderr)
        print(f"(exit {done.code}, {done.wall:.1f} s wall, {done.cpu:.1f} s CPU)", flush=True)
        self.timings.append((step.title, done.wall, done.cpu))
        if done.code != 0:
            self.kill()
            sys.exit(done.code)


def command(*args: str) -> tuple[str, ...]:
    """A step's command line: `evalsuite --root WORKSPACE ARGS...` without the program name."""
    return ("--root", str(WORKSPACE), *args)


def fresh_workspace() -> None:
    """Copy the suites, manifests and vaults; leave ledgers and results behind.

    The one thing kept from the previous demo is `verify`'s action-space cache (a digest of
    the task files, the family kit, the installed packages and Python, per family whose
    tools agreed with the frozen ones): with it, `verify` checks the tools without importing
    inspect and every task module again, and any change to what the digest covers runs the
    full check (docs/design/run-speed.md, "The demo").
    """
    cache = WORKSPACE / ".evalsuite" / ACTION_CACHE
    kept = cache.read_bytes() if cache.is_file() else None
    if WORKSPACE.exists():
        shutil.rmtree(WORKSPACE)
    if KEY_DIR.exists():  # the ledgers start empty: so do the heads recorded of them
        shutil.rmtree(KEY_DIR)
    ignore = shutil.ignore_patterns("__pycache__", "*.lock", "ACCESS.jsonl")
    for part in ("tasks", "manifests", "holdout"):
        shutil.copytree(ROOT / part, WORKSPACE / part, ignore=ignore)
    if kept is not None:
        cache.parent.mkdir(parents=True)
        cache.write_bytes(kept)


EPOCHS = 2
"""Epochs of every holdout run: two attempts per item are enough for everything the demo
shows (pass^k, run-to-run noise and reliability need two); a third cost about 38 s of CPU and
27 s of wall time on the idle 2-core machine (docs/design/run-speed.md, "The demo")."""
RUN_WEIGHT = {"support": 5.0, "records": 5.0, "repair": 4.0}
CHECK_WEIGHT = 9.0
"""`suites` and `verify` are handed out before any run (they are light, but go first)."""
"""The runs' relative CPU (docs/design/run-speed.md): handed out heaviest first."""


def run_holdout(suite: str, model: str) -> Step:
    """`model` on the holdout of `suite` with `EPOCHS` epochs (`run_id` reads its id)."""
    return Step(
        f"Run {model} on the {suite} holdout, {EPOCHS} epochs",
        command(
            "run",
            suite,
            "--split",
            "holdout",
            "--model",
            model,
            "--epochs",
            str(EPOCHS),
            "--seed",
            "1",
            "--purpose",
            "make demo",
            "--no-progress",
        ),
        weight=RUN_WEIGHT.get(suite.split("@")[0], 1.0),
    )


def reference_labels(run: str) -> Path:
    """The answers run's reference labels (tasks/answers/reference_labels.py), in the workspace.

    The family's answers are checkable exactly, so the check stands in for a person's label
    of each attempt; the judge audit compares the judge's verdicts with them.
    """
    path = WORKSPACE / "answers-labels.csv"
    done = subprocess.run(
        [sys.executable, "tasks/answers/reference_labels.py", f".evalsuite/logs/{run}"],
        cwd=WORKSPACE,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.exit(f"could not label the answers run {run}: {done.stderr.strip()[-500:]}")
    path.write_text(done.stdout, encoding="utf-8")
    print(f"\n== Reference labels of {run}: {path.relative_to(ROOT)}", flush=True)
    return path


def run_id(out: str) -> str:
    """The run id that `evalsuite run` printed."""
    match = re.search(r"^run (\S+)", out, re.MULTILINE)
    if match is None:
        sys.exit("could not read the run id from `evalsuite run`")
    return match.group(1)


def read_only_steps(ids: Sequence[str]) -> list[Step]:
    """Status, score, compare and report of the six runs (baseline, improved per suite)."""
    pairs = list(zip(ids[::2], ids[1::2], strict=True))
    return [
        *(
            Step(
                f"Holdout use of {suite} against its budget",
                command("holdout", "status", suite),
                weight=0.2,
            )
            for suite in SUITES
        ),
        Step(
            f"Estimates of the improved checkpoint on {SUITES[0]}",
            command("score", pairs[0][1]),
            weight=1.0,
        ),
        *(
            Step(
                f"Is improved really better than baseline on {suite}? (paired by item)",
                command("compare", baseline, improved, "--gate", "noninferior", "--margin", "0.02"),
                weight=1.0,
            )
            for suite, (baseline, improved) in zip(SUITES, pairs, strict=True)
        ),
        Step(
            "Report: all six runs, compared suite by suite",
            command("report", *ids, "--out", str(REPORT)),
            weight=2.0,
        ),
    ]


CHROMIUM_INSTALL = "apt-get install chromium"
"""How to install the browser that takes the report's first screen (Debian, Ubuntu)."""


def find_chromium() -> str | None:
    """Chromium's path (``chromium`` or ``chromium-browser`` on PATH), or None."""
    return shutil.which("chromium") or shutil.which("chromium-browser")


def first_screen_line(shot: Path, chromium: str | None, codes: Sequence[int | None]) -> str:
    """The demo's last word on the screenshot: where it is, or that it was skipped and why."""
    if shot.exists():
        return f"first screen: {shot}"
    if chromium is None:
        return (
            "first screen: SKIPPED, no first-screen.png was written: the screenshot is taken "
            "by headless Chromium, and no `chromium` or `chromium-browser` is on PATH. The "
            f"report itself is complete. To get the screenshot, install Chromium "
            f"(`{CHROMIUM_INSTALL}`, as root) and run `make demo` again"
        )
    code = next((c for c in codes if c), None)
    how = f"exited with code {code}" if code is not None else "wrote no file"
    return (
        f"first screen: SKIPPED, no first-screen.png was written: Chromium ({chromium}) {how}. "
        "The report itself is complete; open it in a browser, or run "
        f"`{chromium} --headless --screenshot=first-screen.png {REPORT / 'index.html'}` to "
        "see Chromium's error"
    )


def screenshot(chromium: str | None) -> subprocess.Popen[bytes] | None:
    """Start headless Chromium on the report's first screen (1400 x 900), if installed."""
    shot = REPORT / "first-screen.png"
    shot.unlink(missing_ok=True)
    if chromium is None:
        return None
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]
    args = ["--window-size=1400,900", f"--screenshot={shot}", (REPORT / "index.html").as_uri()]
    return subprocess.Popen(
        [chromium, *flags, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def print_timings(timings: Sequence[tuple[str, float, float]], startup: float) -> None:
    """Each step's wall and CPU time, one line each, and the workers' start-up."""
    print("\nsteps (wall, CPU):")
    print(f"  {'worker start-up (imports), both workers':<72} {'':>8} {startup:7.1f} s")
    for title, wall, cpu in timings:
        print(f"  {title[:72]:<72} {wall:7.1f} s {cpu:7.1f} s")


def main() -> None:
    """Run the demo steps in order."""
    started = time.perf_counter()
    fresh_workspace()
    os.environ["EVALSUITE_KEY_DIR"] = str(KEY_DIR)  # the workers inherit it
    print(f"demo workspace: {WORKSPACE} (a scratch copy; the repository's ledger is untouched)")
    chromium: list[subprocess.Popen[bytes] | None] = []
    browser = find_chromium()
    with Pool() as pool:
        # the checks and the six runs are independent of each other: the checks go first (a
        # failed verify stops the demo), beside the first run; every run verifies its own
        # suite version again before it starts
        checks = [
            Step("Suites and their frozen versions", command("suites"), weight=CHECK_WEIGHT),
            Step(
                "Verify every frozen suite: dev items, holdout vaults, manifest hashes",
                command("verify"),
                weight=CHECK_WEIGHT,
            ),
        ]
        runs = [
            run_holdout(suite, model)
            for suite in SUITES
            for model in ("evalsuite/baseline", "evalsuite/improved")
        ]
        judged = Step(
            "Run improved on the dev split of answers (graded by its declared judge)",
            command(
                "run",
                "answers@1.0.0",
                "--model",
                "evalsuite/improved",
                "--epochs",
                str(EPOCHS),
                "--seed",
                "1",
                "--no-progress",
            ),
            weight=1.0,
        )
        outs = pool.run([*checks, *runs, judged])[len(checks) :]
        ids, answers = [run_id(out) for out in outs[:-1]], run_id(outs[-1])
        labels = reference_labels(answers)
        pool.run(
            [
                Step(
                    "Audit the answers judge against reference labels of that run's attempts",
                    command("audit", "answers@1.0.0", "--judge", "--labels", str(labels)),
                    weight=1.0,
                )
            ]
        )
        steps = [
            Step(
                "Estimates on answers (dev): the judge passed its audit, so no mark",
                command("score", answers),
                weight=0.5,
            ),
            *read_only_steps(ids),
        ]
        last = len(steps) - 1  # the report: its first screen is taken while the rest runs

        def report_written(index: int, done: Done) -> None:
            if index == last and done.code == 0:
                chromium.append(screenshot(browser))

        pool.run(steps, on_done=report_written)
        startup = sum(w.startup_cpu for w in pool.workers)
    print(f"\nreport: {REPORT / 'index.html'}")
    shot = REPORT / "first-screen.png"
    for proc in chromium:
        if proc is not None:
            try:
                proc.wait(timeout=180)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    codes = [proc.returncode for proc in chromium if proc is not None]
    print(first_screen_line(shot, browser, codes))
    print(f"explore: evalsuite --root {WORKSPACE.relative_to(ROOT)} runs")
    print_timings(pool.timings, startup)
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = resource.getrusage(resource.RUSAGE_SELF)
    cpu = used.ru_utime + used.ru_stime + own.ru_utime + own.ru_stime
    print(
        f"demo finished in {time.perf_counter() - started:.1f} s "
        f"({cpu:.0f} s of CPU in its {os.cpu_count()}-core machine)"
    )


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        _worker_main(sys.argv[2] if len(sys.argv) > 2 else CLI)
    else:
        main()
