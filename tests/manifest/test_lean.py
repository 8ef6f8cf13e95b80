"""The pydantic-free readers agree with the models (docs/design/startup.md).

`read_manifest_summary` and `load_suite_summary` accept only plainly valid files and hand
every other one to `read_manifest` / `load_suite`; so on every file, shipped or altered, they
return what the models hold or raise exactly the models' error.
"""

from __future__ import annotations

import copy
import functools
import json
import shutil
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalsuite._core.layout import Layout
from evalsuite.errors import EvalsuiteError
from evalsuite.manifest import (
    Manifest,
    _lean,
    audit_status,
    compute_manifest_hash,
    list_suite_names,
    load_manifest_summary,
    load_suite,
    load_suite_summary,
    read_manifest,
    read_manifest_summary,
)

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = sorted(
    p for p in (ROOT / "manifests").glob("*/*.json") if p.stem.count(".") == 2 and "-" not in p.stem
)


def _expected(manifest: Manifest) -> dict[str, Any]:
    return {
        "suite": manifest.suite,
        "version": manifest.version,
        "manifest_hash": manifest.manifest_hash,
        "frozen_at": manifest.frozen_at,
        "weights": manifest.weights,
        "n_items": len(manifest.items),
        "n_dev": len(manifest.items_by_split("dev")),
        "n_holdout": len(manifest.items_by_split("holdout")),
        "strata": manifest.strata(),
        "audited_hash": manifest.audited_hash(),
        "audit": manifest.audit.model_dump() if manifest.audit else None,
    }


def _model_view(path: Path, check_hash: bool) -> dict[str, Any]:
    return _expected(read_manifest(path, check_hash=check_hash))


def _summary(path: Path, check_hash: bool = True) -> dict[str, Any]:
    s = read_manifest_summary(path, check_hash=check_hash)
    return {
        "suite": s.suite,
        "version": s.version,
        "manifest_hash": s.manifest_hash,
        "frozen_at": s.frozen_at,
        "weights": s.weights,
        "n_items": s.n_items,
        "n_dev": s.count("dev"),
        "n_holdout": s.count("holdout"),
        "strata": s.strata(),
        "audited_hash": s.audited_hash(),
        "audit": None
        if s.audit is None
        else {
            "status": s.audit.status,
            "file": s.audit.file,
            "content_hash": s.audit.content_hash,
            "reason": s.audit.reason,
        },
    }


def test_the_shipped_manifests_are_read_without_the_models_and_agree() -> None:
    assert len(SHIPPED) >= 5
    for path in SHIPPED:
        raw = json.loads(path.read_text(encoding="utf-8"))
        assert _lean._MANIFEST(raw), f"{path} is not read on the fast path"
        assert _summary(path) == _expected(read_manifest(path)), path


def _outcome(read: Callable[[], Any]) -> Any:
    try:
        return ("ok", read())
    except EvalsuiteError as exc:
        return (type(exc).__name__, str(exc))


def _rehash(raw: dict[str, Any]) -> dict[str, Any]:
    raw["manifest_hash"] = compute_manifest_hash(raw)
    return raw


def _set(path: tuple[Any, ...], value: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(raw: dict[str, Any]) -> dict[str, Any]:
        target = raw
        for key in path[:-1]:
            target = target[key]
        target[path[-1]] = value
        return raw

    return change


def _drop(path: tuple[Any, ...]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def change(raw: dict[str, Any]) -> dict[str, Any]:
        target = raw
        for key in path[:-1]:
            target = target[key]
        del target[path[-1]]
        return raw

    return change


# Each alteration, applied to a shipped manifest (re-hashed or not): the readers must agree.
ALTERATIONS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "unknown top-level key": _set(("extra",), 1),
    "unknown item key": _set(("items", 0, "text"), "x"),
    "unknown family key": _set(("families", 0, "colour"), "red"),
    "item without cluster (a default)": _drop(("items", 0, "cluster")),
    "item split not dev/holdout": _set(("items", 0, "split"), "test"),
    "item id a number": _set(("items", 0, "id"), 7),
    "integer weight": _set(("weights", "__new__"), 1),
    "integer holdout fraction": _set(("holdout_fraction",), 1),
    "string holdout budget": _set(("holdout_budget",), "3"),
    "boolean holdout budget": _set(("holdout_budget",), True),
    "family version a float": _set(("families", 0, "version"), 1.0),
    "null audit (left out by the model)": _set(("audit",), None),
    "passed audit without file": _set(("audit",), {"status": "passed", "file": None}),
    "skipped audit with a reason": _set(
        ("audit",), {"status": "skipped", "file": None, "content_hash": None, "reason": "r"}
    ),
    "skipped audit, blank reason": _set(
        ("audit",), {"status": "skipped", "file": None, "content_hash": None, "reason": " "}
    ),
    "null score (left out by the model)": _set(("families", 0, "score"), None),
    "bad score selector": _set(("families", 0, "score"), "/x"),
    "score bounds as integers": _set(("families", 0, "score_bounds"), [0, 10]),
    "score bounds as floats": _set(("families", 0, "score_bounds"), [0.0, 10.0]),
    "score bounds reversed": _set(("families", 0, "score_bounds"), [10.0, 0.0]),
    "task args not a name": _set(("families", 0, "task_args"), {"not a name": 1}),
    "task args": _set(("families", 0, "task_args"), {"level": 2}),
    "run args twice": _set(("families", 0, "run_args"), ["a", "a"]),
    "key not random/canary": _set(("key",), "other"),
    "other format": _set(("format",), "evalsuite-manifest/2"),
    "no format (a default)": _drop(("format",)),
    "no note": _drop(("note",)),
    "missing fingerprints": _drop(("fingerprints",)),
    "diff without changed": _drop(("diff", "changed")),
    "parent with extra key": _set(("parent",), {"version": "1", "manifest_hash": "h", "x": 1}),
    "dev items recorded": _set(("dev_items",), {"path": "p", "sha256": "h"}),
    "not a dict": lambda raw: [raw],
}


@pytest.mark.parametrize("rehash", [True, False], ids=["rehashed", "stale hash"])
@pytest.mark.parametrize("name", sorted(ALTERATIONS))
def test_an_altered_manifest_reads_as_the_model_reads_it(
    tmp_path: Path, name: str, rehash: bool
) -> None:
    source = SHIPPED[-1]
    raw = json.loads(source.read_text(encoding="utf-8"))
    altered = ALTERATIONS[name](copy.deepcopy(raw))
    if rehash and isinstance(altered, dict):
        altered = _rehash(altered)
    path = tmp_path / source.name
    path.write_text(json.dumps(altered), encoding="utf-8")
    for check in (True, False):
        model = _outcome(functools.partial(_model_view, path, check))
        lean = _outcome(functools.partial(_summary, path, check))
        assert lean == model, (name, check)


def test_unreadable_and_missing_manifests_raise_the_models_errors(tmp_path: Path) -> None:
    bad = tmp_path / "1.0.0.json"
    bad.write_text("{not json", encoding="utf-8")
    assert _outcome(lambda: read_manifest_summary(bad)) == _outcome(lambda: read_manifest(bad))
    missing = tmp_path / "2.0.0.json"
    assert _outcome(lambda: read_manifest_summary(missing)) == _outcome(
        lambda: read_manifest(missing)
    )
    assert _outcome(lambda: read_manifest_summary(missing))[0] == "NotFoundError"


def test_audit_status_is_the_same_from_a_summary_and_from_the_model() -> None:
    layout = Layout(ROOT)
    for path in SHIPPED:
        suite, version = path.parent.name, path.name.removesuffix(".json")
        summary = load_manifest_summary(layout, suite, version)
        assert audit_status(layout, summary) == audit_status(layout, read_manifest(path))


# --- suite files ----------------------------------------------------------------------------


def _suite_outcome(layout: Layout, name: str, lean: bool) -> Any:
    if lean:
        return _outcome(lambda: tuple(vars_of(load_suite_summary(layout, name))))
    return _outcome(
        lambda: (lambda c: (c.name, c.description, tuple(f.name for f in c.families)))(
            load_suite(layout, name)
        )
    )


def vars_of(summary: _lean.SuiteSummary) -> tuple[str, str, tuple[str, ...]]:
    return (summary.name, summary.description, summary.families)


def test_the_shipped_suite_files_are_read_without_the_models_and_agree() -> None:
    layout = Layout(ROOT)
    names = list_suite_names(layout)
    assert len(names) >= 2
    for name in names:
        raw = tomllib.loads(layout.suite_file(name).read_text(encoding="utf-8"))
        assert _lean._SUITE(raw), f"{name} is not read on the fast path"
        assert _suite_outcome(layout, name, True) == _suite_outcome(layout, name, False)


SUITE_ALTERATIONS: dict[str, tuple[str, str]] = {
    "unknown key": ("", "colour = 'red'\n"),
    "no description (a default)": ("description", ""),
    "short canary": ("canary", 'canary = "short"\n'),
    "fraction 1": ("holdout_fraction", "holdout_fraction = 1.0\n"),
    "fraction as integer": ("holdout_fraction", "holdout_fraction = 0\n"),
    "stratum key twice": ("stratify_by", 'stratify_by = ["family", "family"]\n'),
    "no strata": ("stratify_by", "stratify_by = []\n"),
    "budget 0": ("", "holdout_budget = 0\n"),
    "key other": ("", 'key = "other"\n'),
    "bad name": ("name", 'name = "Bad Name"\n'),
    "other name": ("name", 'name = "other"\n'),
}


@pytest.mark.parametrize("name", sorted(SUITE_ALTERATIONS))
def test_an_altered_suite_file_reads_as_the_model_reads_it(tmp_path: Path, name: str) -> None:
    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    layout = Layout(tmp_path)
    path = layout.suite_file("arith")
    drop, add = SUITE_ALTERATIONS[name]
    head, sep, tail = path.read_text(encoding="utf-8").partition("[[families]]")
    lines = [
        line for line in head.splitlines(keepends=True) if not drop or not line.startswith(drop)
    ]
    path.write_text("".join(lines) + add + sep + tail, encoding="utf-8")
    assert _suite_outcome(layout, "arith", True) == _suite_outcome(layout, "arith", False)


@pytest.mark.parametrize(
    "family",
    [
        "version = 0\n",
        "version = 1.5\n",
        'task = "not a reference"\n',
        'score = "a b"\n',
        "score_bounds = [10, 0]\n",
        "score_bounds = [0, 10]\n",
        "run_args = ['x', 'x']\n",
        "tools = { a = 'b' }\n",
        'name = "Bad"\n',
    ],
)
def test_an_altered_family_reads_as_the_model_reads_it(tmp_path: Path, family: str) -> None:
    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    layout = Layout(tmp_path)
    path = layout.suite_file("arith")
    text = path.read_text(encoding="utf-8")
    key = family.split(" ", 1)[0]
    head, sep, tail = text.partition("[[families]]")
    body = "".join(line for line in tail.splitlines(keepends=True) if not line.startswith(key))
    path.write_text(head + sep + "\n" + family + body, encoding="utf-8")
    assert _suite_outcome(layout, "arith", True) == _suite_outcome(layout, "arith", False)


def test_a_missing_or_broken_suite_file_raises_the_models_errors(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "tasks", tmp_path / "tasks")
    layout = Layout(tmp_path)
    layout.suite_file("arith").write_text("name = [", encoding="utf-8")
    for name in ("arith", "nonesuch"):
        lean = _suite_outcome(layout, name, True)
        assert lean == _suite_outcome(layout, name, False)
        assert lean[0] in ("SuiteConfigError", "NotFoundError")
