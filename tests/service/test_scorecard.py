"""The scorecard (`evalsuite.service.scorecard`): names or ids, badges, the interval's text,
and one adapter reading the comparison payload (docs/design/result-model.md, decision 6)."""

from __future__ import annotations

import ast
import copy
import inspect
import math
from pathlib import Path
from typing import Any

import pytest

from evalsuite.service import (
    AnalysisOptions,
    Scorecard,
    comparison_view,
    scorecard,
)
from evalsuite.service import _scorecard as module
from tests.service.test_views import WEIGHTS, _store


def _run(run_id: str, model: str | None, **facts: Any) -> dict[str, Any]:
    base = {"run_id": run_id, "model": model, "suite": "support", "version": "2.0.0"}
    base |= {"split": "holdout", "valid": True, "status": "complete", "partial": False}
    return base | facts


def _comparison(
    base: dict[str, Any],
    cand: dict[str, Any],
    *,
    diff: float = 0.224,
    ci: tuple[float, float] = (0.133, 0.314),
    weighted: dict[str, Any] | None = None,
    gate: dict[str, Any] | None = None,
    audit: tuple[str, str] = ("passed", "passed"),
) -> dict[str, Any]:
    """A comparison payload as the report holds it (the view's headline added)."""
    return {
        "baseline": base["run_id"],
        "candidate": cand["run_id"],
        "runs": {"baseline": base, "candidate": cand},
        "diff": diff,
        "ci": list(ci),
        "level": 0.95,
        "weighted": weighted or {"weights": {}, "reason": "no weights"},
        "gate": gate,
        "audit": {
            role: {"status": state, "detail": f"{state} at freeze", "marker": None}
            for role, state in zip(("baseline", "candidate"), audit, strict=True)
        },
        "headline": f"On support, {cand['model']} vs {base['model']}.",
        "gate_line": None,
    }


def test_names_where_unique_among_a_suites_runs_else_ids() -> None:
    a, b = _run("r1", "acme/base"), _run("r2", "acme/sft")
    other_suite = [
        _run("r3", "acme/base", suite="records"),
        _run("r4", "acme/sft", suite="records"),
    ]
    card = scorecard([_comparison(a, b), _comparison(*other_suite)])
    # the same two models on two suites: each suite's row names them (the suite column
    # tells the suites apart)
    assert [(r.baseline.label, r.candidate.label) for r in card.rows] == [
        ("acme/base", "acme/sft"),
        ("acme/base", "acme/sft"),
    ]
    assert card.rows[0].candidate.run_id == "r2" and card.rows[0].candidate.model == "acme/sft"
    # two runs of one model on one suite (a rerun, the faulty run beside the good one):
    # those runs by id, the unique one still by name
    rerun = _run("r5", "acme/sft")
    card = scorecard([_comparison(a, b), _comparison(a, rerun)])
    assert [(r.baseline.label, r.candidate.label) for r in card.rows] == [
        ("acme/base", "r2"),
        ("acme/base", "r5"),
    ]
    # one model against itself (run-to-run noise): ids; an unknown model: its id
    same = scorecard([_comparison(_run("n1", "m"), _run("n2", "m"))]).rows[0]
    assert (same.baseline.label, same.candidate.label) == ("n1", "n2")
    unknown = scorecard([_comparison(_run("u1", None), _run("u2", "m"))]).rows[0]
    assert (unknown.baseline.label, unknown.candidate.label) == ("u1", "m")


def test_the_difference_is_the_headlines_with_its_interval() -> None:
    a, b = _run("r1", "base"), _run("r2", "cand")
    row = scorecard([_comparison(a, b)]).rows[0]
    assert (row.difference, row.interval, row.basis) == ("+0.224", "[+0.133, +0.314]", "overall")
    assert row.difference_text == "+0.224 [+0.133, +0.314]"
    weighted = {"weights": {"s": 1.0}, "diff": -0.05, "ci": [-0.1, 0.0]}
    row = scorecard([_comparison(a, b, weighted=weighted)]).rows[0]
    assert (row.difference, row.interval) == ("−0.050", "[−0.100, +0.000]")
    assert row.basis == "deployment-weighted"
    assert row.difference_text == "−0.050 [−0.100, +0.000] weighted"
    # weights whose comparison is undefined: the unweighted difference, said so
    undefined = {"weights": {"s": 1.0}, "diff": math.nan, "ci": [math.nan, math.nan]}
    row = scorecard([_comparison(a, b, weighted=undefined)]).rows[0]
    assert (row.difference, row.basis) == ("+0.224", "unweighted")
    # an undefined difference or interval is n/a, never nan
    row = scorecard([_comparison(a, b, diff=math.nan, ci=(math.nan, math.nan))]).rows[0]
    assert (row.difference, row.interval, row.difference_text) == ("n/a", "n/a", "n/a")
    assert scorecard([_comparison(a, b)]).level == "95%"


def test_badges_for_the_gate_validity_and_audit() -> None:
    a, b = _run("r1", "base"), _run("r2", "cand")
    row = scorecard([_comparison(a, b)]).rows[0]
    assert (row.gate.label, row.gate.tone) == ("no gate", "neutral")
    assert (row.validity.label, row.validity.tone) == ("valid", "good")
    assert (row.audit.label, row.audit.tone) == ("passed", "good")
    assert row.audit.detail == "passed at freeze"

    gate = {"status": "PASS", "margin": 0.02, "passed": True}
    row = scorecard([_comparison(a, b, gate=gate)]).rows[0]
    assert (row.gate.label, row.gate.tone) == ("PASS", "good")
    assert "margin 0.02" in row.gate.detail
    failed = scorecard([_comparison(a, b, gate=gate | {"status": "FAIL"})]).rows[0].gate
    assert (failed.label, failed.tone) == ("FAIL", "bad")
    # the weighted gate disagrees: both shown, the worse tone
    weighted = {"weights": {"s": 1.0}, "diff": 0.1, "ci": [-0.2, 0.4]}
    weighted["gate"] = {"status": "INCONCLUSIVE"}
    mixed = scorecard([_comparison(a, b, gate=gate, weighted=weighted)]).rows[0].gate
    assert (mixed.label, mixed.tone) == ("PASS · weighted INCONCLUSIVE", "warn")

    invalid = _run("r2", "cand", valid=False)
    partial = _run("r1", "base", partial=True)
    row = scorecard([_comparison(partial, invalid)]).rows[0]
    assert (row.validity.label, row.validity.tone) == ("INVALID, PARTIAL", "bad")
    assert "candidate" in row.validity.detail and "baseline" in row.validity.detail
    running = _run("r2", "cand", status="running", valid=False)
    row = scorecard([_comparison(a, running)]).rows[0]
    assert (row.validity.label, row.validity.tone) == ("NOT COMPLETE", "warn")  # not INVALID

    row = scorecard([_comparison(a, b, audit=("failed", "failed"))]).rows[0]
    assert (row.audit.label, row.audit.tone) == ("FAILED", "bad")
    row = scorecard([_comparison(a, b, audit=("passed", "unaudited"))]).rows[0]
    assert (row.audit.label, row.audit.tone) == ("baseline passed · candidate UNAUDITED", "warn")
    assert row.audit.detail == "baseline: passed at freeze; candidate: unaudited at freeze"


def test_a_pair_not_compared_is_a_row_that_says_so() -> None:
    card = scorecard([{"baseline": "r1", "candidate": "r2", "skipped": "different suites"}])
    row = card.rows[0]
    assert (row.baseline.label, row.candidate.label) == ("r1", "r2")
    assert row.difference_text == "not compared"
    assert {row.gate.tone, row.validity.tone, row.audit.tone} == {"neutral"}
    assert row.sentence == "r2 vs r1: not compared (different suites)"


def test_built_from_the_typed_result_and_its_view_alike(tmp_path: Path) -> None:
    from evalsuite.service import compare

    (tmp_path / ".evalsuite").mkdir()
    store = _store(tmp_path, weights=WEIGHTS)
    options = AnalysisOptions(seed=1, margin=0.05)
    result = compare(store, "run-a", "run-b", options, allow_invalid=True)
    payload = result.to_dict()
    view = comparison_view(result)
    typed, viewed = scorecard([result]), scorecard([view.to_dict()])
    assert typed == viewed  # the typed result is worded by its view, as the report's is
    with pytest.raises(TypeError, match="bare payload"):
        scorecard([payload])
    row = viewed.rows[0]
    assert (row.baseline.label, row.candidate.label) == ("base-model", "cand-model")
    assert row.sentence == view.headline and row.gate_line == view.gate_line
    assert row.basis == "deployment-weighted"
    assert row.gate.label.startswith(payload["gate"]["status"])
    # JSON-ready, every text already formatted
    data = viewed.to_dict()
    assert data["columns"][3] == "difference (95% CI)"
    assert data["rows"][0]["baseline"] == {
        "run_id": "run-a",
        "model": "base-model",
        "label": "base-model",
    }
    assert "nan" not in repr(data) and "None" not in repr(data["rows"][0]["gate"])
    table = viewed.table()
    assert [c.name for c in table.columns] == data["columns"]
    assert table.rows[0][:3] == ("ingested runs (no manifest)", "base-model", "cand-model")


def test_the_payload_is_read_in_one_place() -> None:
    """Only `_read_comparison` touches a payload: re-pointing it at a typed result is enough."""
    tree = ast.parse(inspect.getsource(module))
    # the module's functions and methods (a function nested in one is part of it)
    tops = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    tops += [
        m
        for n in tree.body
        if isinstance(n, ast.ClassDef)
        for m in n.body
        if isinstance(m, ast.FunctionDef)
    ]
    readers = {
        node.name
        for node in tops
        for inner in ast.walk(node)
        if (isinstance(inner, ast.Name) and inner.id == "payload")
        or (isinstance(inner, ast.arg) and inner.arg == "payload")
    }
    assert readers == {"_read_comparison"}
    frozen = [Scorecard, module.ScorecardRow, module.ScorecardRun, module.Badge]
    assert all(cls.__dataclass_params__.frozen for cls in frozen)  # type: ignore[attr-defined]


def test_the_scorecard_does_not_change_the_payload() -> None:
    a, b = _run("r1", "base"), _run("r2", "cand")
    payload = _comparison(a, b, gate={"status": "PASS", "margin": 0.02})
    before = copy.deepcopy(payload)
    scorecard([payload])
    assert payload == before


@pytest.mark.parametrize("tone", ["good", "bad", "warn", "neutral"])
def test_badge_to_dict(tone: str) -> None:
    badge = module.Badge("x", tone, "why")  # type: ignore[arg-type]
    assert badge.to_dict() == {"label": "x", "tone": tone, "detail": "why"}
