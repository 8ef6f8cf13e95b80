"""The code_repair verifier, version 2 (repair@2.0.0): hidden calls run apart from their answers.

Version 1 ran the hidden unittest module in the process that imports the agent's module, so the
agent's code could patch unittest, walk the stack to the runner's nonce or the expected values,
or forge the report (issue 29). Version 2 never lets the agent's code near the answer:

1. the hidden tests are read here, in the verifier's process: each ``same(self, CALL, EXPECTED)``
   line gives a call expression and its expected value; the imports the tests make are kept;
2. only the imports and the call expressions go to the runner (``"calls"``), in the jail
   (`jail.py`: its own namespaces, no view of the project, the key directory or the store), a
   fresh process per verification;
3. the runner returns, per call, the raw result's type and ``repr`` (or the exception's);
4. this process compares them with the expected values: a call passes when the type is the
   expected value's builtin type and the ``repr`` is the expected ``repr`` (what version 1's
   ``same`` asserted). Score 1.0 only when every call passes.

Whatever the agent's code prints, patches or forges, it can only change its own results, and it
never sees what they are compared with. `evaluate_calls` is pure and table-tested.
"""

import ast
import json
from dataclasses import dataclass
from typing import Any

from inspect_ai.scorer import Score, Scorer, Target, accuracy, scorer, stderr
from inspect_ai.solver import TaskState
from inspect_ai.util import sandbox

from evalsuite.run import HarnessFault

from .workspace import VERIFY_TIMEOUT_S, repo_store, run_runner

PREFIX = "@@calls "


@dataclass(frozen=True, slots=True)
class HiddenCalls:
    """The hidden tests, split: what the runner gets (imports, calls) and what it never sees."""

    imports: list[str]
    calls: list[str]
    expected: list[Any]


def hidden_calls(tests: list[dict[str, str]]) -> HiddenCalls:
    """Parse the hidden unittest sources into imports, call expressions and expected values."""
    imports: list[str] = []
    calls: list[str] = []
    expected: list[Any] = []
    for test in tests:
        tree = ast.parse(test["source"])
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and node.module != "unittest":
                imports.append(ast.unparse(node))
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "same"
                and len(node.args) == 3
            ):
                calls.append(ast.unparse(node.args[1]))
                expected.append(ast.literal_eval(node.args[2]))
    return HiddenCalls(imports, calls, expected)


def read_results(stdout: str) -> list[dict[str, Any]] | None:
    """The runner's results line (None when the process never printed a well-formed one)."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(PREFIX):
            try:
                found = json.loads(line[len(PREFIX) :])
            except json.JSONDecodeError:
                return None
            return found if isinstance(found, list) else None
    return None


def matches(result: Any, expected: Any) -> bool:
    """One call's raw result against its expected value (exact builtin type and repr)."""
    kind = type(expected)
    return bool(
        isinstance(result, dict)
        and result.get("ok") is True
        and result.get("type") == f"{kind.__module__}.{kind.__qualname__}"
        and result.get("repr") == repr(expected)
    )


@dataclass(frozen=True, slots=True)
class CallsVerdict:
    """What the hidden calls showed."""

    expected: int
    passed_calls: int
    reported: bool
    timed_out: bool = False

    @property
    def passed(self) -> bool:
        return self.reported and not self.timed_out and self.passed_calls == self.expected

    def checks(self, test_writes: int, files_written: int) -> dict[str, Any]:
        return {
            "hidden_passed": self.passed_calls,
            "hidden_total": self.expected,
            "all_hidden_passed": self.passed,
            "timed_out": self.timed_out,
            "runner_report": self.reported,
            "test_files_edited": test_writes > 0,
            "files_written": files_written,
        }

    def explanation(self) -> str:
        if self.timed_out:
            return f"the hidden calls did not finish within {VERIFY_TIMEOUT_S}s"
        if not self.reported:
            return "the test process ended without returning the calls' results"
        return f"hidden calls: {self.passed_calls} of {self.expected} returned the expected value"


def evaluate_calls(stdout: str, expected: list[Any], *, timed_out: bool = False) -> CallsVerdict:
    """The verdict of one hidden-call run (pure)."""
    if timed_out:
        return CallsVerdict(len(expected), 0, False, True)
    results = read_results(stdout)
    if results is None or len(results) != len(expected):
        return CallsVerdict(len(expected), 0, False)
    passed = sum(matches(r, e) for r, e in zip(results, expected, strict=True))
    return CallsVerdict(len(expected), passed, True)


@scorer(metrics=[accuracy(), stderr()])
def repair_verifier_v2() -> Scorer:
    async def score(state: TaskState, target: Target) -> Score:
        key = json.loads(target.text)
        metadata = state.metadata or {}
        repo: dict[str, str] = metadata["repo"]
        box = sandbox()
        for path in metadata["test_files"]:
            await box.write_file(path, repo[path])
        hidden = hidden_calls(key["hidden_tests"])
        if len(hidden.calls) != int(key["hidden_count"]) or not hidden.calls:
            raise HarnessFault("code_repair item's hidden tests do not parse into its calls")
        request = {"imports": hidden.imports, "calls": hidden.calls}
        try:
            done = await run_runner(request, VERIFY_TIMEOUT_S)
        except TimeoutError:
            verdict = evaluate_calls("", hidden.expected, timed_out=True)
        except HarnessFault:
            raise
        except Exception as exc:  # the sandbox itself failed: the harness's fault
            raise HarnessFault(f"the hidden calls could not run: {type(exc).__name__}") from None
        else:
            verdict = evaluate_calls(done.stdout, hidden.expected)
        store = repo_store()
        return Score(
            value=1.0 if verdict.passed else 0.0,
            answer=f"{len(store.writes)} files written",
            explanation=verdict.explanation(),
            metadata=verdict.checks(store.test_writes, len(store.writes)),
        )

    return score
