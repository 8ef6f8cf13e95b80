"""Toy projects for the grader audit's tests: families built from `toy_family/task.py`."""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import CANARY, Project, write_jsonl
from tests.shared_build import build_once

TEMPLATE = Path(__file__).parent / "toy_family" / "task.py"


def toy_items(family: str, per_op: int = 2) -> list[dict[str, Any]]:
    """Items of one toy family: set or add to a counter (`per_op` of each)."""
    items = []
    for op in ("set", "add"):
        for i in range(per_op):
            key = f"k_{op}_{i}"
            start = {key: i + 1, f"spare_{op}_{i}": 7}
            value = 10 + i if op == "set" else i + 1 + 3
            verb = f"set counter {key} to {value}" if op == "set" else f"add 3 to counter {key}"
            items.append(
                {
                    "id": f"{family}-{op}-{i:03d}",
                    "input": f"Ticket for {family}: please {verb} and then say DONE. "
                    "Nothing else in the store may change.",
                    "target": json.dumps({"key": key, "value": value}),
                    "metadata": {"op": op, "start": start},
                }
            )
    return items


def toy_source(name: str, plant: str = "none") -> str:
    """The toy task file for family `name` with failure `plant`."""
    text = TEMPLATE.read_text(encoding="utf-8")
    text = text.replace('NAME = "fam"', f'NAME = "{name}"', 1)
    return text.replace('PLANT = "none"', f'PLANT = "{plant}"', 1)


def toy_project(
    root: Path, families: Sequence[tuple[str, str]], *, suite: str = "toy", per_op: int = 2
) -> Project:
    """A project whose suite has one toy family per (name, plant)."""
    tasks = root / "project" / "tasks"
    tasks.mkdir(parents=True)
    lines = [
        f'name = "{suite}"',
        'description = "grader audit test suite"',
        f'canary = "{CANARY}"',
        "holdout_fraction = 0.5",
        'stratify_by = ["family", "op"]',
        'key = "canary"',
    ]
    for name, plant in families:
        (tasks / name).mkdir()
        (tasks / name / "task.py").write_text(toy_source(name, plant), encoding="utf-8")
        write_jsonl(tasks / name / "items.jsonl", toy_items(name, per_op))
        lines += [
            "",
            "[[families]]",
            f'name = "{name}"',
            "version = 1",
            f'task = "{name}/task.py@fam"',
            f'items = "{name}/items.jsonl"',
        ]
    (tasks / f"{suite}.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return Project(root=root / "project", key_dir=root / "keys")


def change_write_schema(project: Project, family: str) -> None:
    """Give the family's ``write`` tool another parameter (after a freeze)."""
    path = project.root / "tasks" / family / "task.py"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "    async def execute(key: str, value: int) -> str:",
        '    async def execute(key: str, value: int, note: str = "") -> str:',
    ).replace(
        "            value: Its new value.\n",
        "            value: Its new value.\n            note: Why (optional).\n",
    )
    path.write_text(text, encoding="utf-8")


def _freeze_solo(root: Path) -> dict[str, Any]:
    project = toy_project(root, [("fam", "none")], suite="solo")
    project.audit = True
    result = project.invoke("freeze", "solo", "--version", "1.0.0", "--json")
    assert result.exit_code == 0, result.stderr
    return {"freeze": json.loads(result.stdout)}


def frozen_solo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Project, dict[str, Any]]:
    """The one-family suite ``solo`` frozen with its grader audit, once a session, read-only.

    Returns the project (tests must not write to it: `copy_of_frozen_solo` gives one to
    change) and the ``freeze --json`` output. Built by `tests.shared_build.build_once`, so
    both xdist workers share one freeze with its audit (docs/design/test-speed.md).
    """
    root, built = build_once(tmp_path_factory, "frozen-solo", _freeze_solo)
    return Project(root=root / "project", key_dir=root / "keys"), built


def copy_of_frozen_solo(tmp_path_factory: pytest.TempPathFactory, tmp_path: Path) -> Project:
    """A copy of `frozen_solo`'s project and keys in `tmp_path`, the test's own to change:
    what ``freeze solo --version 1.0.0`` with the audit leaves, without paying the audit."""
    shared, _ = frozen_solo(tmp_path_factory)
    shutil.copytree(shared.root, tmp_path / "project")
    if shared.key_dir.exists():
        shutil.copytree(shared.key_dir, tmp_path / "keys")
    return Project(root=tmp_path / "project", key_dir=tmp_path / "keys", audit=True)


CODE_TEMPLATE = Path(__file__).parent / "toy_code" / "task.py"
JAIL = Path(__file__).resolve().parents[2] / "tasks" / "code_repair" / "jail.py"


def toy_code_items(per_op: int = 2) -> list[dict[str, Any]]:
    """Items of the toy code family: fix ``double`` (adds one) or ``square`` (doubles)."""
    items = []
    for op, wrong, right in (("double", "x + 1", "x * 2"), ("square", "x * 2", "x * x")):
        for i in range(per_op):
            cases = [[[n], eval(right, {"x": n})] for n in (i + 3, i + 7, -i - 2)]
            items.append(
                {
                    "id": f"code-{op}-{i:03d}",
                    "input": f"mod.{op} is wrong: it computes {wrong}. Fix it.",
                    "target": json.dumps({"function": op, "cases": cases}),
                    "metadata": {"op": op, "module": f"def {op}(x):\n    return {wrong}\n"},
                }
            )
    return items


def toy_code_project(root: Path, mode: str, *, suite: str = "toyc") -> Project:
    """A project whose suite has the toy code family, its grader running code `mode`-wise."""
    family = root / "project" / "tasks" / "code"
    family.mkdir(parents=True)
    text = CODE_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace('MODE = "inprocess"', f'MODE = "{mode}"', 1)
    text = text.replace('JAIL = ""', f"JAIL = {str(JAIL)!r}", 1)
    (family / "task.py").write_text(text, encoding="utf-8")
    write_jsonl(family / "items.jsonl", toy_code_items())
    lines = [
        f'name = "{suite}"',
        'description = "tamper library test suite"',
        f'canary = "{CANARY}"',
        "holdout_fraction = 0.5",
        'stratify_by = ["family", "op"]',
        'key = "canary"',
        "",
        "[[families]]",
        'name = "code"',
        "version = 1",
        'task = "code/task.py@code"',
        'items = "code/items.jsonl"',
    ]
    (root / "project" / "tasks" / f"{suite}.toml").write_text("\n".join(lines) + "\n")
    return Project(root=root / "project", key_dir=root / "keys")


RED_TEMPLATE = Path(__file__).parent / "toy_redteam" / "task.py"
_NAMES = (
    "Ada Byron", "Alan Turing", "Grace Hopper", "Edsger Dijkstra", "Barbara Liskov",
    "Donald Knuth", "Frances Allen", "John Backus", "Radia Perlman", "Ken Thompson",
    "Karen Jones", "Tony Hoare", "Niklaus Wirth", "Leslie Lamport",
)  # fmt: skip


def toy_redteam_items(plant: str, count: int = 12) -> list[dict[str, Any]]:
    """Items of the red-team toy family (`toy_redteam/task.py`) for `plant`."""
    items = []
    for i in range(count):
        if plant in ("positional", "hidden"):
            older, newer = f"P-{31000 + 977 * i}", f"P-{52000 + 613 * i}"
            name = _NAMES[i % len(_NAMES)]
            contacts = {
                older: {"name": name, "created": 2000 + i},
                newer: {"name": name, "created": 2030 + i},
            }
            if plant == "positional":
                text = f"Contacts {older} and {newer} belong to {name}. Merge the newer record "
                text += "into the older one."
            else:
                text = f"{name} has two contact records (ids not to hand). Merge the newer "
                text += "record into the older one."
            target = {"survivor": older, "duplicate": newer}
            start = {"contacts": contacts, "orders": {}}
            metadata = {"op": "merge", "name": name, "start": start}
        else:
            order = f"O-{4100 + 37 * i}"
            status = ("expired", "final_sale", "used")[i % 3]
            text = f"Please refund order {order}, thanks."
            target = {"reason": status}
            start = {"contacts": {}, "orders": {order: {"status": status}}}
            metadata = {"op": "decline", "order": order, "start": start}
        items.append(
            {
                "id": f"red-{i:03d}",
                "input": text,
                "target": json.dumps(target),
                "metadata": metadata,
            }
        )
    return items


def toy_redteam_project(
    root: Path, plant: str, *, references: Sequence[str] = (), count: int = 12
) -> Project:
    """A one-family suite ``red`` with the red-team toy family planted `plant`."""
    family = root / "project" / "tasks" / "red"
    family.mkdir(parents=True)
    text = RED_TEMPLATE.read_text(encoding="utf-8")
    text = text.replace('PLANT = "positional"', f'PLANT = "{plant}"', 1)
    text = text.replace(
        "REFERENCES: tuple[str, ...] = ()", f"REFERENCES: tuple[str, ...] = {tuple(references)!r}"
    )
    (family / "task.py").write_text(text, encoding="utf-8")
    write_jsonl(family / "items.jsonl", toy_redteam_items(plant, count))
    lines = [
        'name = "red"',
        'description = "adversarial audit test suite"',
        f'canary = "{CANARY}"',
        "holdout_fraction = 0.2",
        'stratify_by = ["family", "op"]',
        'key = "canary"',
        "",
        "[[families]]",
        'name = "red"',
        "version = 1",
        'task = "red/task.py@red"',
        'items = "red/items.jsonl"',
    ]
    (root / "project" / "tasks" / "red.toml").write_text("\n".join(lines) + "\n")
    return Project(root=root / "project", key_dir=root / "keys")
