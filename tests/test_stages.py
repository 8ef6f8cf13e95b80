"""The stages match the concepts (docs/architecture.md): validity and the guard are stages of
their own, their names still import from where they lived, there is one `Health` and one
`jsonable`, and the statistics load no database."""

from __future__ import annotations

import ast
import functools
import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import evalsuite
import evalsuite.analyse as analyse
import evalsuite.guard as guard_stage
import evalsuite.holdout as holdout
import evalsuite.validity as validity_stage
from evalsuite.analyse import score_run
from evalsuite.cli import cli
from evalsuite.errors import ItemSourceError
from evalsuite.store import Health, read_outcomes_file, run_health

VALIDITY_COMMANDS = ("add", "import", "report")

PACKAGE = Path(evalsuite.__file__).parent


@functools.cache
def _every_definition() -> Counter[tuple[type[ast.AST], str]]:
    """(node type, name) of every class and function defined anywhere in evalsuite/, counted;
    each file parsed once (it was parsed once per kind: about 2 s of CPU each time)."""
    names: Counter[tuple[type[ast.AST], str]] = Counter()
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names.update(
            (type(n), n.name)
            for n in ast.walk(tree)
            if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        )
    return names


def _definitions(kind: type[ast.AST]) -> Counter[str]:
    """How often each name is defined as a class (or function) anywhere in evalsuite/."""
    return Counter(
        {name: n for (node, name), n in _every_definition().items() if issubclass(node, kind)}
    )


def test_validity_is_its_own_stage_and_analyse_no_longer_re_exports_it() -> None:
    assert validity_stage.__all__ == sorted(validity_stage.__all__)
    public = {n for n in dir(validity_stage) if not n.startswith("_")}
    assert set(validity_stage.__all__) == public - {"TYPE_CHECKING", "lazy_exports"}
    for name in validity_stage.__all__:
        assert name not in analyse.__all__, name
        with pytest.raises(AttributeError):
            getattr(analyse, name)
        assert getattr(validity_stage, name).__module__.startswith("evalsuite.validity."), name
    assert not list((PACKAGE / "analyse").glob("_validity*.py"))


def test_the_guard_is_apart_from_the_holdout_and_holdout_no_longer_re_exports_it() -> None:
    assert not set(guard_stage.__all__) & set(holdout.__all__)
    for name in guard_stage.__all__:
        with pytest.raises(AttributeError):
            getattr(holdout, name)
    modules = {p.stem for p in (PACKAGE / "holdout").glob("_*.py")} - {"__init__"}
    # vault access, ledger (its head anchored outside, its git tracking), budget, and the
    # reusable holdout's mechanisms, their simulation and their ledgered answers (issue 36)
    assert modules == {
        "_anchor",
        "_answers",
        "_budget",
        "_governance",
        "_ledger",
        "_mechanism",
        "_mechanism_sim",
        "_tracking",
    }


def test_one_health_class_and_one_jsonable() -> None:
    assert _definitions(ast.ClassDef)["Health"] == 1
    assert _definitions(ast.FunctionDef)["jsonable"] == 1


def test_the_statistics_and_the_store_build_the_same_health() -> None:
    y = np.array([[1.0, 0.0], [np.nan, np.nan], [0.0, 1.0]])
    frame = pd.DataFrame(
        {
            "run_id": "r",
            "item_id": np.repeat(["a", "b", "c"], 2),
            "stratum": "all",
            "cluster": None,
            "epoch": np.tile([1, 2], 3),
            "outcome": np.where(np.isnan(y.ravel()), "harness_error", "scored"),
            "limit_type": None,
            "score": np.nan_to_num(y.ravel()),
            "reason": np.where(np.isnan(y.ravel()), "TimeoutError: slow", None),
            "retries": 0,
        }
    )
    counted = score_run(frame, planned=8, rng=np.random.default_rng(0)).health
    judged = run_health(frame, planned=8, threshold=0.05)
    assert type(counted) is type(judged) is Health
    for field in ("planned", "scored", "limits", "harness_errors", "recorded", "unrecorded"):
        assert getattr(counted, field) == getattr(judged, field), field
    assert counted.error_rate == judged.error_rate == 4 / 8
    # what each computation knows; the score --json "harness" block keeps its keys
    assert (counted.threshold, counted.valid) == (None, None)
    assert (judged.threshold, judged.valid) == (0.05, False)
    assert set(counted.to_dict()) == {
        "planned",
        "recorded",
        "scored",
        "limits",
        "limits_by_type",
        "harness_errors",
        "unrecorded",
        "error_rate",
        "n_items",
        "n_items_excluded",
    }
    assert counted.n_items_excluded == 1
    assert judged.to_dict()["errors_by_kind"] == {"TimeoutError": 2, "not run": 2}


_PROBE = """
import json, sys
import numpy as np, pandas as pd
import evalsuite.analyse as analyse, evalsuite.validity as validity
for stage in (analyse, validity):
    for name in stage.__all__:
        getattr(stage, name)
y = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]])
frame = pd.DataFrame({
    "run_id": "r", "item_id": np.repeat(["a", "b", "c"], 2), "stratum": "all",
    "cluster": None, "epoch": np.tile([1, 2], 3), "outcome": "scored", "limit_type": None,
    "score": y.ravel(),
})
analyse.score_run(frame, rng=np.random.default_rng(0))
print(json.dumps(sorted(sys.modules)))
"""


def test_the_statistics_load_no_database() -> None:
    # every public name of both statistics stages, and a scored run: no SQLAlchemy, no Store
    out = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True
    ).stdout
    modules = set(json.loads(out))
    assert "evalsuite.validity._table" in modules  # the probe did load the stages
    assert not {m for m in modules if m.split(".")[0] == "sqlalchemy"}
    assert "evalsuite.store._store" not in modules


def test_the_validity_commands_say_deployment_result_not_outcome() -> None:
    # "outcome" is an attempt's (docs/contributing.md, "Words"); flags and --json stay
    runner = CliRunner()
    for argv in (["validity", "--help"], *[["validity", c, "--help"] for c in VALIDITY_COMMANDS]):
        out = runner.invoke(cli, argv, terminal_width=200).output
        assert "outcome" not in out.lower(), argv
    assert "deployment result" in runner.invoke(cli, ["validity", "add", "--help"]).output


def test_a_missing_deployment_result_is_named_so(tmp_path: Path) -> None:
    empty = tmp_path / "results.csv"
    empty.write_text("model,metric,value\n", encoding="utf-8")
    with pytest.raises(ItemSourceError, match="no deployment result rows"):
        read_outcomes_file(empty)


def test_fronts_and_acyclic_modules_are_contracts_lint_imports_checks() -> None:
    """Issue 30: other packages import a package's front, never its private modules, and no
    package's modules import each other in a circle. `make test` runs `lint-imports`; this
    keeps the two contracts (and their one exception) from being dropped unnoticed."""
    import tomllib

    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = {c["type"]: c for c in config["tool"]["importlinter"]["contracts"]}
    assert contracts["private_modules"]["packages_with_private_modules"] == ["evalsuite"]
    assert contracts["private_modules"]["ignore_imports"] == [
        "evalsuite.analyse._attempts -> evalsuite.store._health"
    ]
    assert set(contracts["acyclic_siblings"]["ancestors"]) == {"evalsuite", "evalsuite.*"}
    assert "ignore_imports" not in contracts["acyclic_siblings"]
    for layers in (c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers"):
        assert "ignore_imports" not in layers  # the deprecated re-exports are gone


def test_no_package_imports_another_packages_private_module() -> None:
    """The same rule as the `private_modules` contract, read from the source: an import of
    `evalsuite.<package>._<module>` from outside `<package>` (bar `_core`, the shared kernel)."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).parts
        own = parts[0] if len(parts) > 1 else None
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("evalsuite."):
                target = node.module.split(".")  # type: ignore[union-attr]
                private = any(p.startswith("_") for p in target[2:])
                if target[1] not in (own, "_core") and private:
                    offenders.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.module}")
    assert offenders == ["analyse/_attempts.py:25 evalsuite.store._health"]


def test_numbers_are_formatted_in_one_module() -> None:
    """Issue 30: `service/_format.py` is the one place a number becomes text. No renderer
    (report/, cli/, service/) defines its own number formatter beside it."""
    formatter = re.compile(r"^\s*def _?(fmt|pct|ci|num|percent|signed)\w*\(", re.M)
    found = [
        f"{path.relative_to(PACKAGE)}: {m.group(0).strip()}"
        for package in ("report", "cli", "service")
        for path in (PACKAGE / package).rglob("*.py")
        if path.name != "_format.py"
        for m in formatter.finditer(path.read_text(encoding="utf-8"))
    ]
    assert found == []
