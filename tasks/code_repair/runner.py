"""The code_repair test runner: run as ``python -I -c <this file's text>`` in the episode's sandbox.

It reads one JSON request from standard input, applies resource limits to its own process,
puts the working directory (the repository) on ``sys.path``, runs the requested unittest
modules and prints a short report. The request names the tests either as files on disk
(``"discover": "tests"``: the visible tests the agent runs) or as source text (``"tests"``:
the verifier's hidden tests, which reach the process only through standard input, never the
sandbox's disk). A request with a ``nonce`` also gets a machine-readable last line,
``@@result <nonce> <json>``; the nonce is fresh per verification, so output printed by the
code under test cannot pass for the runner's own report.

A request with ``"calls"`` (version 2's verifier) runs no tests at all: it imports the names
(``"imports"``: ``from pkg.mod import fn`` lines), evaluates each call expression and prints
one last line ``@@calls <json>``: per call its result's type (``module.qualname``) and
``repr``, or the exception's type and ``repr``. The expected values never reach this process;
the verifier compares in its own (docs/design/code_repair.md, "Isolation").

Standard library only (it runs in whatever Python the sandbox has). Plain ``unittest``: no
pytest start-up per call (docs/design/code_repair.md, "Cost").
"""

import io
import json
import os
import resource
import sys
import traceback
import types
import unittest

MAX_DETAIL = 1500


def _limit(cpu_s: int, memory_mb: int, file_mb: int) -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s))
    resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    resource.setrlimit(resource.RLIMIT_FSIZE, (file_mb << 20, file_mb << 20))


def _sources(request: dict) -> list:
    if "tests" in request:
        return [(t["name"], t["source"]) for t in request["tests"]]
    found = []
    folder = request.get("discover", "tests")
    if os.path.isdir(folder):
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if name.startswith("test") and name.endswith(".py") and os.path.isfile(path):
                with open(path, encoding="utf-8") as handle:
                    found.append((path, handle.read()))
    return found


def _kind(value: object) -> str:
    kind = type(value)
    return f"{kind.__module__}.{kind.__qualname__}"


def run_calls(request: dict) -> None:
    """Evaluate the request's calls with the agent's module; print their raw results."""
    namespace: dict = {}
    results = []
    try:
        exec(compile("\n".join(request.get("imports", [])), "<imports>", "exec"), namespace)
        failed = None
    except BaseException as exc:
        failed = {"ok": False, "type": _kind(exc), "repr": repr(exc)[:MAX_DETAIL]}
    out = sys.stdout
    for expression in request["calls"]:
        if failed is not None:
            results.append(failed)
            continue
        stream = io.StringIO()
        sys.stdout = stream
        try:
            value = eval(compile(expression, "<call>", "eval"), namespace)
            found = {"ok": True, "type": _kind(value), "repr": repr(value)}
        except BaseException as exc:
            found = {"ok": False, "type": _kind(exc), "repr": repr(exc)[:MAX_DETAIL]}
        finally:
            sys.stdout = out
        results.append(found)
    out.write("@@calls " + json.dumps(results, sort_keys=True) + "\n")
    out.flush()


def main() -> None:
    request = json.loads(sys.stdin.read())
    if "calls" in request:
        _limit(int(request.get("cpu_s", 10)), int(request.get("memory_mb", 1024)), 1)
        sys.path.insert(0, os.getcwd())
        run_calls(request)
        return
    nonce = request.get("nonce", "")
    _limit(int(request.get("cpu_s", 10)), int(request.get("memory_mb", 1024)), 1)
    sys.path.insert(0, os.getcwd())
    report = {"tests": 0, "passed": 0, "failed": 0, "errors": 0, "skipped": 0, "load_errors": 0}
    details = []
    for index, (name, source) in enumerate(_sources(request)):
        module = types.ModuleType(f"evalsuite_repair_tests_{index}")
        module.__file__ = name
        try:
            exec(compile(source, name, "exec"), module.__dict__)
        except BaseException:
            report["load_errors"] += 1
            details.append(f"ERROR loading {name}:\n{traceback.format_exc(limit=3)}")
            continue
        suite = unittest.defaultTestLoader.loadTestsFromModule(module)
        result = unittest.TestResult()
        stream = io.StringIO()
        saved = sys.stdout
        sys.stdout = stream
        try:
            suite.run(result)
        except BaseException:
            report["load_errors"] += 1
            details.append(f"ERROR running {name}:\n{traceback.format_exc(limit=3)}")
        finally:
            sys.stdout = saved
        report["tests"] += result.testsRun
        report["failed"] += len(result.failures)
        report["errors"] += len(result.errors)
        report["skipped"] += len(result.skipped)
        bad = len(result.failures) + len(result.errors) + len(result.skipped)
        report["passed"] += result.testsRun - bad
        for test, text in result.failures + result.errors:
            details.append(f"FAIL {test.id()}:\n{text}")
    out = sys.stdout
    out.write(
        f"Ran {report['tests']} tests: {report['passed']} passed, {report['failed']} failed, "
        f"{report['errors']} errors, {report['skipped']} skipped"
        + (f", {report['load_errors']} test files did not load" if report["load_errors"] else "")
        + "\n"
    )
    if not nonce:
        for detail in details:
            out.write(detail[:MAX_DETAIL] + "\n")
    else:
        out.write(f"@@result {nonce} {json.dumps(report, sort_keys=True)}\n")
    out.flush()


main()
