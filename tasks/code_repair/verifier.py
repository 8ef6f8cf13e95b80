"""The code_repair verifier: the item's hidden tests, run on the agent's final files.

After the agent's last turn the verifier

1. restores the visible test files from the item (an edited, emptied or skipped test file
   cannot help: the hidden tests do not read it, and the final state holds the original);
2. sends the hidden tests to the runner through standard input, with a fresh nonce: they
   never touch the sandbox's disk, and were not there while the agent worked;
3. scores 1.0 only when every hidden test ran and passed (none failed, errored, was skipped
   or failed to load) and the runner's own report (the nonce line) came back.

The hidden tests compare type and ``repr`` of each result (an object that claims to equal
everything fails), cover the visible cases, and add cases the visible test does not show
(hard-coding the visible expected values fails). The agent's code running too long is a
failed attempt (score 0, ``timed_out``); a sandbox that cannot run the tests at all is a
harness fault. `evaluate` is pure and table-tested; `Score.metadata` holds numbers and flags
only (no test text: holdout tests must not reach the store).
"""

import json
import secrets
from dataclasses import dataclass
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from evalsuite.run import HarnessFault

from .workspace import VERIFY_TIMEOUT_S, repo_store, run_runner


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the hidden-test run showed."""

    expected: int
    report: dict[str, int] | None
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        r = self.report
        return bool(
            r is not None
            and not self.timed_out
            and r.get("load_errors", 1) == 0
            and r.get("tests") == self.expected
            and r.get("passed") == self.expected
        )

    def checks(self, test_writes: int, files_written: int) -> dict[str, Any]:
        r = self.report or {}
        return {
            "hidden_passed": int(r.get("passed", 0)),
            "hidden_total": self.expected,
            "all_hidden_passed": self.passed,
            "timed_out": self.timed_out,
            "runner_report": self.report is not None,
            "test_files_edited": test_writes > 0,
            "files_written": files_written,
        }

    def explanation(self) -> str:
        if self.timed_out:
            return f"the hidden tests did not finish within {VERIFY_TIMEOUT_S}s"
        if self.report is None:
            return "the test process ended without the runner's report"
        r = self.report
        return (
            f"hidden tests: {r.get('passed', 0)} of {self.expected} passed "
            f"({r.get('failed', 0)} failed, {r.get('errors', 0)} errors, "
            f"{r.get('skipped', 0)} skipped, {r.get('load_errors', 0)} did not load)"
        )


def read_report(stdout: str, nonce: str) -> dict[str, int] | None:
    """The runner's report line for `nonce` (None when the process never printed it)."""
    prefix = f"@@result {nonce} "
    for line in reversed(stdout.splitlines()):
        if line.startswith(prefix):
            try:
                found = json.loads(line[len(prefix) :])
            except json.JSONDecodeError:
                return None
            return found if isinstance(found, dict) else None
    return None


def evaluate(stdout: str, nonce: str, expected: int, *, timed_out: bool = False) -> Verdict:
    """The verdict of one hidden-test run (pure)."""
    return Verdict(expected, None if timed_out else read_report(stdout, nonce), timed_out)


@scorer(metrics=[accuracy(), stderr()])
def repair_verifier() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        key = json.loads(target.text)
        metadata = state.metadata or {}
        repo: dict[str, str] = metadata["repo"]
        box = sandbox()
        for path in metadata["test_files"]:
            await box.write_file(path, repo[path])
        nonce = secrets.token_hex(16)
        request = {"nonce": nonce, "tests": key["hidden_tests"]}
        try:
            done = await run_runner(request, VERIFY_TIMEOUT_S)
        except TimeoutError:
            verdict = evaluate("", nonce, int(key["hidden_count"]), timed_out=True)
        except HarnessFault:
            raise
        except Exception as exc:  # the sandbox itself failed: the harness's fault
            raise HarnessFault(f"the hidden tests could not run: {type(exc).__name__}") from None
        else:
            verdict = evaluate(done.stdout, nonce, int(key["hidden_count"]))
        store = repo_store()
        return Score(
            value=1.0 if verdict.passed else 0.0,
            answer=f"{len(store.writes)} files written",
            explanation=verdict.explanation(),
            metadata=verdict.checks(store.test_writes, len(store.writes)),
        )

    return score
