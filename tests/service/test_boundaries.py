"""No ``dict[str, Any]`` crosses the service layer's boundary (issue 30's acceptance).

Every public name of `evalsuite.api` and `evalsuite.service` is checked: a function's
parameters and return, a class's dataclass fields, and its public methods' and properties'
signatures. A value that really is JSON is a `JsonObject` (``dict[str, object]``); a read-only
input is a ``Mapping``; everything else is a typed result. Annotations are resolved with
`typing.get_type_hints` (so an alias of ``dict[str, Any]`` is caught too); a name only imported
for type checking falls back to the annotation's text.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import types
import typing
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import evalsuite.api
import evalsuite.service

ANY_DICT = re.compile(r"\bdict\[str,\s*(typing\.)?Any\]|\bDict\[str,\s*(typing\.)?Any\]")


def _namespace() -> dict[str, object]:
    """Names the service's annotations use under ``TYPE_CHECKING``, from their fronts."""
    import pandas as pd

    import evalsuite.analyse
    import evalsuite.guard
    import evalsuite.holdout
    import evalsuite.items
    import evalsuite.manifest
    import evalsuite.store
    import evalsuite.validity
    from evalsuite._core.jsonout import JsonObject
    from evalsuite._core.layout import Layout
    from evalsuite.audit._report import GraderAudit  # no inspect: the record only

    ns: dict[str, object] = {"pd": pd, "JsonObject": JsonObject, "Layout": Layout, "Path": Path}
    # the service's own names (its views annotate its results) and the grader audit's record
    ns |= {name: getattr(evalsuite.service, name) for name in evalsuite.service.__all__}
    ns["GraderAudit"] = GraderAudit
    for front in (
        evalsuite.analyse,
        evalsuite.guard,
        evalsuite.holdout,
        evalsuite.items,
        evalsuite.manifest,
        evalsuite.store,
        evalsuite.validity,
    ):
        for name in front.__all__:
            ns.setdefault(name, getattr(front, name))
    return ns


NAMESPACE = _namespace()


def _is_any_dict(tp: object) -> bool:
    """`tp` is ``dict[str, Any]``, or holds one (``list[dict[str, Any]] | None``, ...)."""
    if typing.get_origin(tp) is dict and typing.get_args(tp) == (str, Any):
        return True
    return any(_is_any_dict(arg) for arg in typing.get_args(tp))


def _offending(obj: Callable[..., object] | type, owner: str) -> Iterator[str]:
    try:
        hints = typing.get_type_hints(obj, localns=NAMESPACE)
    except (NameError, TypeError, AttributeError):
        hints = None
    if hints is not None:
        yield from (f"{owner}: {k}" for k, tp in hints.items() if _is_any_dict(tp))
        return
    raw = getattr(obj, "__annotations__", {}) or {}
    yield from (f"{owner}: {k} ({v})" for k, v in raw.items() if ANY_DICT.search(str(v)))


def _members(cls: type) -> Iterator[tuple[str, Callable[..., object]]]:
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, property) and member.fget is not None:
            yield name, member.fget
        elif isinstance(member, classmethod | staticmethod):
            yield name, member.__func__
        elif isinstance(member, types.FunctionType):
            yield name, member


def _problems(module: types.ModuleType) -> list[str]:
    found: list[str] = []
    for name in module.__all__:
        obj = getattr(module, name)
        if inspect.isclass(obj):
            if obj.__module__.startswith("evalsuite.errors"):
                continue
            found += _offending(obj, name) if dataclasses.is_dataclass(obj) else []
            for member, fn in _members(obj):
                found += _offending(fn, f"{name}.{member}")
        elif inspect.isfunction(obj):
            found += _offending(obj, name)
    return found


@pytest.mark.parametrize("module", [evalsuite.api, evalsuite.service], ids=lambda m: m.__name__)
def test_no_dict_of_any_crosses_the_boundary(module: types.ModuleType) -> None:
    assert _problems(module) == []


def test_the_check_sees_what_it_must_refuse() -> None:
    @dataclasses.dataclass
    class Leaky:
        payload: dict[str, Any]

        def rows(self) -> list[dict[str, Any]] | None:
            return None

    assert _is_any_dict(dict[str, Any]) and _is_any_dict(list[dict[str, Any]] | None)
    assert not _is_any_dict(dict[str, object]) and not _is_any_dict(typing.Mapping[str, Any])
    assert list(_offending(Leaky, "Leaky")) == ["Leaky: payload"]
    assert [p for _, fn in _members(Leaky) for p in _offending(fn, "Leaky.rows")] == [
        "Leaky.rows: return"
    ]


def test_most_annotations_resolve() -> None:
    """The text fallback is the exception: the check resolves what it reads."""
    resolved = failed = 0
    for name in evalsuite.service.__all__:
        obj = getattr(evalsuite.service, name)
        if inspect.isfunction(obj) or dataclasses.is_dataclass(obj):
            try:
                typing.get_type_hints(obj, localns=NAMESPACE)
                resolved += 1
            except (NameError, TypeError, AttributeError):
                failed += 1
    assert resolved > 5 * failed, (resolved, failed)
