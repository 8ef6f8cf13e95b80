"""The family-package loader and the parts a family's versions share (evalsuite.kit)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from inspect_ai import Task, task
from inspect_ai.tool import Tool, tool

from evalsuite.kit import (
    FamilyParts,
    Limits,
    Probe,
    Trivial,
    family_of_task,
    family_package,
    null_policy,
    package_name,
)

ROOT = Path(__file__).resolve().parents[2]


def _folder(tmp_path: Path, name: str = "fam") -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "__init__.py").write_text("LOADS = []\n")
    (folder / "env.py").write_text(
        "from . import LOADS\nLOADS.append('env')\nfrom .data import VALUE\n"
    )
    (folder / "data.py").write_text("VALUE = 42\n")
    return folder


def test_a_folder_is_imported_once_under_a_name_derived_from_its_path(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    first = family_package(folder, "fam")
    second = family_package(folder / ".." / "fam", "fam")  # the same folder, another spelling
    assert first == second
    assert first.name == package_name(folder.resolve(), "fam")
    assert first.name.startswith("_evalsuite_fam_")
    env = first.submodule("env")
    assert env.VALUE == 42  # relative imports work: the folder is a package
    assert second.submodule("env") is env
    assert sys.modules[first.name].LOADS == ["env"]  # imported once


def test_two_copies_of_a_folder_never_share_modules(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    one = family_package(_folder(tmp_path / "a"), "fam")
    other = family_package(_folder(tmp_path / "b"), "fam")
    assert one.name != other.name
    assert one.submodule("data") is not other.submodule("data")


def test_the_private_names_of_the_shipped_families_are_unchanged() -> None:
    """The name is the one each task file derived itself before the loader was shared."""
    import hashlib

    for family in ("support_desk", "records_desk", "code_repair"):
        folder = ROOT / "tasks" / family
        expected = f"_evalsuite_{family}_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]
        assert package_name(folder, family) == expected


def test_a_folder_without_init_is_refused_with_what_to_do(tmp_path: Path) -> None:
    folder = tmp_path / "bare"
    folder.mkdir()
    with pytest.raises(ImportError, match=r"needs an __init__\.py"):
        family_package(folder, "bare")
    assert package_name(folder.resolve(), "bare") not in sys.modules


def test_a_failing_package_leaves_nothing_registered_and_loads_once_fixed(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    (folder / "__init__.py").write_text("raise RuntimeError('broken')\n")
    with pytest.raises(RuntimeError, match="broken"):
        family_package(folder, "broken")
    assert package_name(folder.resolve(), "broken") not in sys.modules
    (folder / "__init__.py").write_text("LOADS = []\n")
    assert family_package(folder, "broken").submodule("data").VALUE == 42


@tool
def ping() -> Tool:
    async def execute() -> str:
        """Answer pong."""
        return "pong"

    return execute


@task
def parts_task(dataset: object = None) -> Task:
    return Task(dataset=[])


def test_family_parts_build_each_version_with_fresh_tools() -> None:
    made: list[int] = []

    def tools() -> list[Tool]:
        made.append(1)
        return [ping()]

    trivial = [Trivial("lazy", null_policy, "doing little")]
    probes = [Probe("claim", null_policy, "claiming")]
    parts = FamilyParts(
        name="parts",
        tools=tools,
        oracle=null_policy,
        every_answer=null_policy,
        trivial=trivial,
        probes=probes,
    )
    limits = Limits(time_s=60, messages=10, tokens=1000)
    one = parts.family(parts_task, 1, limits)
    two = parts.family(parts_task, 2, Limits(time_s=30, messages=5, tokens=500))
    assert (one.name, one.version, one.limits, one.task) == ("parts", 1, limits, parts_task)
    assert two.version == 2 and two.limits.time_s == 30
    assert len(made) == 2 and one.tools[0].tool is not two.tools[0].tool  # made anew
    assert [d.on_timeout for d in one.tools] == ["harness_error"]
    assert list(one.trivial) == trivial and list(one.probes) == probes
    assert one.leak_surface is None and one.leak_secrets is None
    assert family_of_task(parts_task) is None  # parts are not a kit: the task file declares one
