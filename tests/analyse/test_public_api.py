"""The analyse stage's front door, its import boundary, and its result-object protocol."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import evalsuite.analyse as analyse
import evalsuite.validity as validity_stage

PACKAGE = Path(analyse.__file__).parent
# the store's Health is the one health record shared with the runner and reports
ALLOWED = (
    "evalsuite.analyse",
    "evalsuite.errors",
    "evalsuite._core",
    "evalsuite.store",
)


def test_all_lists_exactly_the_public_names() -> None:
    # the package loads its names lazily (evalsuite._core.lazy): dir() lists every name it
    # exports, loaded or not; the lazy mechanism's own two names are not part of the API
    public = {n for n in dir(analyse) if not n.startswith("_")} - {"TYPE_CHECKING", "lazy_exports"}
    assert set(analyse.__all__) == public
    assert all(getattr(analyse, name) is not None for name in analyse.__all__)
    # in ruff's order (RUF022): constants, then classes, then functions, each alphabetical
    kind = {True: 0, False: 1}
    order = sorted(analyse.__all__, key=lambda n: (kind[n.isupper()], not n[0].isupper(), n))
    assert order == analyse.__all__


def test_imports_stay_inside_the_allowed_boundary() -> None:
    for path in PACKAGE.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            for name in names:
                assert not name.startswith("inspect_ai"), f"{path.name} imports {name}"
                if name.startswith("evalsuite"):
                    assert name.startswith(ALLOWED), f"{path.name} imports {name}"


def test_every_public_callable_is_documented() -> None:
    for name in analyse.__all__:
        obj = getattr(analyse, name)
        doc = inspect.getdoc(obj) or ""
        assert len(doc) > 40, name
    for func in (
        analyse.estimate_mean,
        analyse.score_run,
        analyse.compare_runs,
        analyse.reliability,
        analyse.paired_difference,
        analyse.stratified_mean,
    ):
        doc = inspect.getdoc(func) or ""
        assert "Notes:" in doc or "References:" in doc, func.__name__


def test_result_objects_follow_the_protocol() -> None:
    for name in (
        "Estimate",
        "RunScore",
        "Comparison",
        "Reliability",
        "PassK",
        "PairedDiff",
        "StratumEstimate",
        "validity.Validity",
        "validity.PredictorComparison",
        "validity.ValidityOverTime",
        "validity.ValidityReport",
    ):
        module, _, attr = name.rpartition(".")
        cls = getattr(validity_stage if module else analyse, attr)
        for method in ("conf_int", "to_dict", "to_frame"):
            assert callable(getattr(cls, method, None)), f"{name}.{method}"
        # the view models of evalsuite.service are the one rendering of a result
        # (docs/design/result-model.md): no second, hand-formatted table here
        assert not hasattr(cls, "summary"), name
        assert cls.__dataclass_params__.frozen, name
        assert hasattr(cls, "__slots__"), name
