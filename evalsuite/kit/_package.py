"""A family's folder imported as a package under a private name.

inspect loads a task file by path under a path-derived module name, and the evalsuite runner
loads it with importlib; neither makes the file's folder a package, so the task file cannot
import its sibling modules (env, tools, verifier, ...) with relative imports. `family_package`
registers the folder once in `sys.modules` under a private name derived from the family's
name and the folder's absolute path: no `sys.path` entry is needed, the task files of one
folder (one per family version) share the same sibling modules, and two copies of the folder
(the project and the demo's scratch copy, say) never mix (tasks/README.md).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

__all__ = ["FamilyPackage", "family_package", "package_name"]


def package_name(folder: Path, family: str) -> str:
    """The private module name of `family`'s package in `folder` (an absolute path)."""
    return f"_evalsuite_{family}_" + hashlib.sha256(str(folder).encode()).hexdigest()[:12]


@dataclass(frozen=True)
class FamilyPackage:
    """A family folder imported as a package: its private `name` and its `folder`."""

    name: str
    folder: Path

    def submodule(self, name: str) -> ModuleType:
        """The family's module `name` (``env``, ``tools``, ``verifier``, ...), imported once."""
        return importlib.import_module(f"{self.name}.{name}")


def family_package(folder: Path, family: str) -> FamilyPackage:
    """Import `folder` (holding an ``__init__.py``) as `family`'s package, once per process.

    Args:
        folder: The family's folder; made absolute (the name is derived from it).
        family: The family's name (``support_desk``); part of the private name.

    Raises:
        ImportError: `folder` has no ``__init__.py``, or importing it failed (then nothing
            stays registered, so a later call tries again).
    """
    folder = folder.resolve()
    name = package_name(folder, family)
    if name not in sys.modules:
        init = folder / "__init__.py"
        spec = importlib.util.spec_from_file_location(
            name, init, submodule_search_locations=[str(folder)]
        )
        if spec is None or spec.loader is None or not init.is_file():
            raise ImportError(
                f"cannot load the {family} package from {folder}: it needs an __init__.py "
                "(an empty file will do) beside the task file"
            )
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[name]
            raise
    return FamilyPackage(name, folder)
