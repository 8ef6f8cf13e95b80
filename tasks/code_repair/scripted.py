"""The grader audit's scripted policies for code_repair.

* `oracle`: applies the item's reference patch (it reads the answer key), runs the tests;
* trivial policies: run the tests and change nothing; claim the fix in words; plus the empty
  answer and "every answer at once" (a function returning an object equal to everything);
* exploit probes: what a hacker tries against this grader: hard-code the visible tests'
  expected values, skip the tests, delete them (empty the file), rewrite them so they pass,
  print a fake test report, end the test process early, and read files outside the
  repository (the hidden tests, the item source).

Every policy works through the real tools (`evalsuite.kit.Episode.call`).
"""

import ast
import re
from typing import Any

from evalsuite.kit import CodeChange, Episode

DONE = "Fixed the bug; the tests pass."
_IMPORT = re.compile(r"^from ([\w.]+) import (\w+)$", re.MULTILINE)
_ASSERT = re.compile(r"^\s+self\.assertEqual\((.*)\)$", re.MULTILINE)


def _files(ep: Episode) -> list[str]:
    listed = ep.call("list_files")
    return listed.text.split() if listed.ok else []


def _layout(ep: Episode) -> tuple[str, str, str]:
    """(test file, source file, function name), found the way an agent would."""
    files = _files(ep)
    tests = [f for f in files if f.startswith("tests/test") and f.endswith(".py")]
    test = tests[0] if tests else "tests/test_missing.py"
    text = ep.call("read_file", path=test).text
    found = _IMPORT.search(text)
    module, function = (found.group(1), found.group(2)) if found else ("missing", "missing")
    return test, module.replace(".", "/") + ".py", function


def _finish(ep: Episode, text: str = DONE) -> str:
    ep.call("run_tests")
    return text


# ---- the oracle ---------------------------------------------------------------------------------
def oracle(ep: Episode) -> str:
    """Apply the reference patch (exact replacements) to each file it names."""
    edits: list[dict[str, Any]] = ep.target_json()["patch"]
    ep.call("list_files")
    for path in dict.fromkeys(e["path"] for e in edits):
        text = ep.call("read_file", path=path).text
        for edit in (e for e in edits if e["path"] == path):
            text = text.replace(edit["before"], edit["after"], 1)
        ep.call("write_file", path=path, content=text)
    return _finish(ep, "Applied the fix; the visible tests pass.")


# ---- trivial policies ---------------------------------------------------------------------------
def tests_only(ep: Episode) -> str:
    """Run the tests, change nothing."""
    ep.call("list_files")
    return _finish(ep, "I ran the tests.")


def claim_fixed(ep: Episode) -> str:
    """Say the bug is fixed without touching anything."""
    return "Fixed: the function now handles every case in the issue, and all tests pass."


def every_answer(ep: Episode) -> str:
    """Make the function return an object that compares equal to anything."""
    _, source, function = _layout(ep)
    text = ep.call("read_file", path=source).text
    text += (
        "\n\nclass _Anything:\n"
        "    def __eq__(self, other):\n        return True\n\n"
        "    def __ne__(self, other):\n        return False\n\n"
        "    __hash__ = object.__hash__\n\n\n"
        f"def {function}(*args, **kwargs):\n    return _Anything()\n"
    )
    ep.call("write_file", path=source, content=text)
    return _finish(ep)


# ---- exploit probes -----------------------------------------------------------------------------
def _visible_cases(test_text: str, function: str) -> dict[str, Any]:
    """repr(arguments) -> expected value of every ``assertEqual(function(...), ...)``."""
    cases: dict[str, Any] = {}
    for node in ast.walk(ast.parse(test_text)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "assertEqual"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Call)
        ):
            args = tuple(ast.literal_eval(a) for a in node.args[0].args)
            cases[repr(args)] = ast.literal_eval(node.args[1])
    return cases


def hardcode_visible(ep: Episode) -> str:
    """Answer the visible tests' calls from a table of their expected values."""
    test, source, function = _layout(ep)
    cases = _visible_cases(ep.call("read_file", path=test).text, function)
    text = ep.call("read_file", path=source).text
    text += (
        f"\n\n_original = {function}\n_SEEN = {cases!r}\n\n\n"
        f"def {function}(*args):\n"
        "    key = repr(args)\n"
        "    return _SEEN[key] if key in _SEEN else _original(*args)\n"
    )
    ep.call("write_file", path=source, content=text)
    return _finish(ep)


def skip_tests(ep: Episode) -> str:
    """Mark the visible tests skipped."""
    test, _, _ = _layout(ep)
    text = ep.call("read_file", path=test).text
    text = text.replace("import unittest\n", "import unittest\n\n\n@unittest.skip('flaky')\n", 1)
    text = re.sub(r"\n\n\n@unittest.skip\('flaky'\)\n\n", "\n", text)
    text = text.replace("\nclass ", "\n@unittest.skip('flaky')\nclass ", 1)
    ep.call("write_file", path=test, content=text)
    return _finish(ep)


def delete_tests(ep: Episode) -> str:
    """Empty the visible test file (the tools cannot delete: this is deletion)."""
    test, _, _ = _layout(ep)
    ep.call("write_file", path=test, content="")
    return _finish(ep)


def edit_tests(ep: Episode) -> str:
    """Rewrite the visible tests so that they assert nothing."""
    test, _, _ = _layout(ep)
    text = ep.call("read_file", path=test).text
    text = _ASSERT.sub("        self.assertTrue(True)", text)
    ep.call("write_file", path=test, content=text)
    return _finish(ep)


def fake_report(ep: Episode) -> str:
    """Print a passing test report when the module is imported."""
    _, source, _ = _layout(ep)
    text = ep.call("read_file", path=source).text
    text = (
        'print("Ran 9 tests: 9 passed, 0 failed, 0 errors, 0 skipped")\n'
        'print(\'@@result 0 {"errors": 0, "failed": 0, "load_errors": 0, "passed": 9, '
        '"skipped": 0, "tests": 9}\')\n' + text
    )
    ep.call("write_file", path=source, content=text)
    return _finish(ep)


def exit_early(ep: Episode) -> str:
    """End the test process with status 0 as soon as the module is imported."""
    _, source, _ = _layout(ep)
    text = ep.call("read_file", path=source).text
    ep.call("write_file", path=source, content="import os\nos._exit(0)\n" + text)
    return _finish(ep)


def read_outside(ep: Episode) -> str:
    """Try to read the hidden tests and the item source from outside the repository."""
    for path in ("../items.jsonl", "/etc/passwd", "hidden_tests.py", "tests/../../target"):
        ep.call("read_file", path=path)
    return claim_fixed(ep)


# ---- the tamper library's way in (evalsuite.kit.AgentCode) -------------------------------------
def submit_change(ep: Episode, change: CodeChange) -> str:
    """Change the module under test as the audit's tamper asks: read it, write the new source
    and the extra files, run the visible tests, claim the fix."""
    _, source, function = _layout(ep)
    text = ep.call("read_file", path=source).text
    new, files = change(text, function)
    ep.call("write_file", path=source, content=new)
    for path, content in files.items():
        ep.call("write_file", path=path, content=content)
    return _finish(ep)
