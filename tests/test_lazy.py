"""`evalsuite._core.lazy.lazy_exports`: one submodule per name, every package's map holds."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import evalsuite
from evalsuite._core.lazy import lazy_exports


def test_a_name_listed_under_two_submodules_is_refused() -> None:
    with pytest.raises(ValueError, match=re.escape("'f' is listed under both '._a' and '._b'")):
        lazy_exports("pkg", {"._a": ("f", "g"), "._b": ("f",)})


def test_every_package_front_loads_and_resolves_each_public_name() -> None:
    for info in pkgutil.walk_packages(evalsuite.__path__, "evalsuite."):
        if not info.ispkg:
            continue
        package = importlib.import_module(info.name)  # its lazy map is checked here
        for name in getattr(package, "__all__", ()):
            assert getattr(package, name) is not None, (info.name, name)
