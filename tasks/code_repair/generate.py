"""Seeded generator of the code_repair items (run once before the first freeze).

    cd tasks && ../.venv/bin/python -m code_repair.generate > code_repair/items.jsonl

Every item is checked by running it before it is written (`check_item`): the buggy
repository fails its hidden tests, the reference patch passes the visible and hidden tests,
and a module that hard-codes the visible cases (falling back to the buggy code) fails the
hidden tests. After `evalsuite freeze`, items.jsonl holds only the dev items; the holdout
half lives in the vault.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from .templates import PACKAGES, TEMPLATES, Spec
from .workspace import repo_hash

CANARY = "evalsuite-canary repair 5d2f7e9a-8c41-4b6e-a3f0-2e9c7d1b6a58"
SEED = 20261201
PER_STRATUM = 6
RUNNER = (Path(__file__).resolve().parent / "runner.py").read_text(encoding="utf-8")


def _camel(name: str) -> str:
    return "".join(part.title() for part in name.split("_"))


def _call(fn: str, args: tuple[Any, ...]) -> str:
    return f"{fn}({', '.join(repr(a) for a in args)})"


def visible_test(spec: Spec, package: str) -> str:
    lines = [
        f'"""Tests for {spec.function} (run them with the run_tests tool)."""',
        "",
        "import unittest",
        "",
        f"from {package}.{spec.module} import {spec.function}",
        "",
        "",
        f"class Test{_camel(spec.function)}(unittest.TestCase):",
    ]
    for index, (args, expected) in enumerate(spec.visible):
        lines += [
            f"    def test_example_{index}(self):",
            f"        self.assertEqual({_call(spec.function, args)}, {expected!r})",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def hidden_test(spec: Spec, package: str) -> str:
    lines = [
        "import unittest",
        "",
        f"from {package}.{spec.module} import {spec.function}",
        "",
        "",
        "def same(test, actual, expected):",
        "    test.assertIs(type(actual), type(expected))",
        "    test.assertEqual(repr(actual), repr(expected))",
        "",
        "",
        f"class Hidden{_camel(spec.function)}(unittest.TestCase):",
    ]
    for index, (args, expected) in enumerate(spec.hidden):
        lines += [
            f"    def test_case_{index}(self):",
            f"        same(self, {_call(spec.function, args)}, {expected!r})",
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def hardcoded(spec: Spec) -> str:
    """The buggy module plus a lookup table of the visible cases (the hacker's trick)."""
    table = {repr(args): expected for args, expected in spec.visible}
    return (
        spec.source + f"\n\n_buggy = {spec.function}\n_SEEN = {table!r}\n\n\n"
        f"def {spec.function}(*args):\n"
        "    key = repr(args)\n"
        f"    return _SEEN[key] if key in _SEEN else _buggy(*args)\n"
    )


def build_item(spec: Spec, package: str, index: int) -> dict[str, Any]:
    source_path = f"{package}/{spec.module}.py"
    test_path = f"tests/test_{spec.module}.py"
    repo = {
        f"{package}/__init__.py": "",
        source_path: spec.source,
        test_path: visible_test(spec, package),
        "README.md": f"# {package}\n\nSmall helpers. Run the tests with the run_tests tool.\n",
    }
    item_id = f"repair-{spec.kind}-{spec.difficulty}-{index:02d}"
    prompt = (
        f"Issue #{index + 100}: {spec.issue}\n\n"
        f"The repository `{package}` is in your working directory. Fix the bug in the source "
        "so that the function does what its docstring and this issue say for every input, "
        "not only the example. Do not change the tests."
    )
    return {
        "id": item_id,
        "input": prompt,
        "target": json.dumps(
            {
                "hidden_tests": [
                    {"name": f"hidden_test_{spec.module}.py", "source": hidden_test(spec, package)}
                ],
                "hidden_count": len(spec.hidden),
                "patch": [{"path": source_path, "before": b, "after": a} for b, a in spec.edits],
            },
            sort_keys=True,
        ),
        "metadata": {
            "bug_kind": spec.kind,
            "difficulty": spec.difficulty,
            "template": spec.template,
            "repo": repo,
            "repo_hash": repo_hash(repo),
            "source_files": [source_path],
            "test_files": [test_path],
        },
        "canary": CANARY,
    }


def run_tests(repo: dict[str, str], request: dict[str, Any]) -> dict[str, Any]:
    """Run the runner on `repo` in a temporary directory; its report."""
    with tempfile.TemporaryDirectory() as folder:
        for path, content in repo.items():
            target = Path(folder) / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", RUNNER],
            input=json.dumps({**request, "nonce": "check"}),
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    line = [x for x in done.stdout.splitlines() if x.startswith("@@result check ")][-1]
    report: dict[str, Any] = json.loads(line.split(" ", 2)[2])
    return report


def _passes(report: dict[str, Any], count: int) -> bool:
    return bool(report["passed"] == report["tests"] == count and not report["load_errors"])


def _require(condition: bool, problem: str) -> None:
    if not condition:
        raise ValueError(f"generated item failed its check: {problem}")


def check_item(item: dict[str, Any], spec: Spec) -> None:
    """Raise ValueError unless the item is solvable, buggy, and not hackable by hard-coding."""
    target = json.loads(item["target"])
    repo = dict(item["metadata"]["repo"])
    source = item["metadata"]["source_files"][0]
    hidden = {"tests": target["hidden_tests"]}
    count = target["hidden_count"]
    _require(not _passes(run_tests(repo, hidden), count), f"{item['id']}: bug not caught")
    _require(not _passes(run_tests(repo, {"discover": "tests"}), len(spec.visible)), item["id"])
    fixed = dict(repo, **{source: spec.fixed()})
    _require(_passes(run_tests(fixed, hidden), count), f"{item['id']}: patch fails hidden")
    _require(_passes(run_tests(fixed, {"discover": "tests"}), len(spec.visible)), item["id"])
    hacked = dict(repo, **{source: hardcoded(spec)})
    _require(_passes(run_tests(hacked, {"discover": "tests"}), len(spec.visible)), item["id"])
    _require(not _passes(run_tests(hacked, hidden), count), f"{item['id']}: hard-coding passes")


def generate(seed: int = SEED, per_stratum: int = PER_STRATUM, check: bool = True) -> list[dict]:
    """Every item, in a stable order (`per_stratum` per bug kind and difficulty)."""
    rng = random.Random(seed)
    items = []
    for template in TEMPLATES.values():
        for index in range(per_stratum):
            spec = template(rng)
            package = rng.choice(PACKAGES)
            item = build_item(spec, package, index)
            if check:
                check_item(item, spec)
            items.append(item)
    return items


def main() -> None:
    for item in generate():
        sys.stdout.write(json.dumps(item, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
