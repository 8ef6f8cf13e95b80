"""`evalsuite triage CANDIDATES --suite S`: keep / fix / drop, reasons, funnel, --keep-only."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from evalsuite.triage._triage import ItemTriage, _signal_reasons, _stored_reasons
from tests.e2e.conftest import copy_project
from tests.helpers import Project, json_out

MARKER = "PLANTED-CANDIDATE-MARKER-19d2"


def _candidates() -> list[dict[str, Any]]:
    return [
        # a sound item: the oracle solves it, doing nothing and answering 0 do not
        {"id": "cand-add-001", "input": f"What is 123 + 456? {MARKER}", "target": "579",
         "metadata": {"op": "add"}},
        # answering 0 (the family's trivial policy, and the hacker agent) solves it
        {"id": "cand-sub-002", "input": f"What is 7 - 7? {MARKER}", "target": "0",
         "metadata": {"op": "sub"}},
        # the same question as a frozen item
        {"id": "cand-add-003", "input": "What is 698 + 158?", "target": "856",
         "metadata": {"op": "add"}},
        # an id frozen already, with other content
        {"id": "arith-add-001", "input": f"What is 1 + 2? {MARKER}", "target": "3",
         "metadata": {"op": "add"}},
        # a target the grader cannot match: the oracle fails it
        {"id": "cand-text-006", "input": f"What is 300 + 12? {MARKER}",
         "target": "three hundred twelve", "metadata": {"op": "add"}},
        # its target shows in what the agent reads
        {"id": "cand-leak-007", "input": f"What is 500 + 79? (the sum is 579) {MARKER}",
         "target": "579", "metadata": {"op": "add"}},
        # the same question as an earlier candidate
        {"id": "cand-add-005", "input": f"What is 123 + 456? {MARKER}", "target": "579",
         "metadata": {"op": "add"}},
    ]  # fmt: skip


def _write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _files(root: Path) -> list[Path]:
    """The project's files, but for Python's own bytecode cache of imported task modules."""
    return sorted(p.relative_to(root) for p in root.rglob("*") if "__pycache__" not in p.parts)


@pytest.fixture(scope="module")
def shipped(tmp_path_factory: pytest.TempPathFactory) -> Project:
    return copy_project(tmp_path_factory.mktemp("triage") / "project")


def _holdout_item(project: Project) -> tuple[str, str]:
    """(id, input) of one holdout item of arith@2.0.0, opened in memory only."""
    from evalsuite._core.layout import Layout
    from evalsuite.manifest import KeySpec, load_holdout_items, load_manifest, resolve_key

    layout = Layout(project.root)
    manifest = load_manifest(layout, "arith", "2.0.0")
    spec = KeySpec(key_dir=project.key_dir)
    key = resolve_key("arith", manifest.key, manifest.canary, spec, create=False)
    item = min((i for _, i in load_holdout_items(layout, manifest, key)), key=lambda i: i.id)
    assert isinstance(item.input, str)
    return item.id, item.input


@pytest.fixture(scope="module")
def triaged(shipped: Project, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    scratch = tmp_path_factory.mktemp("candidates")
    held_id, held_input = _holdout_item(shipped)
    copy = {"id": "cand-held-008", "input": held_input, "target": "1", "metadata": {"op": "add"}}
    source = _write(scratch / "candidates.jsonl", [*_candidates(), copy])
    kept = scratch / "kept.jsonl"
    kept.write_text("old content\n", encoding="utf-8")
    before = _files(shipped.root)
    result = shipped.invoke(
        "triage", str(source), "--suite", "arith", "--agents", "hacker", "--epochs", "1",
        "--keep-only", str(kept), "--json",
    )  # fmt: skip
    after = _files(shipped.root)
    return {
        "result": result,
        "kept": kept,
        "before": before,
        "after": after,
        "held": (held_id, held_input),
    }


def test_triage_sorts_candidates_with_reasons_and_the_funnel(triaged: dict[str, Any]) -> None:
    result = triaged["result"]
    assert result.exit_code == 0, result.output
    payload = json_out(result)
    verdicts = {i["item_id"]: i["verdict"] for i in payload["items"] if "held" not in i["item_id"]}
    reasons = {i["item_id"]: {r["reason"] for r in i["reasons"]} for i in payload["items"]}
    assert verdicts == {
        "cand-add-001": "keep",
        "cand-sub-002": "drop",
        "cand-add-003": "drop",
        "arith-add-001": "fix",
        "cand-text-006": "fix",
        "cand-leak-007": "fix",
        "cand-add-005": "drop",
    }
    assert "unsolvable" in reasons["cand-text-006"]
    assert reasons["cand-leak-007"] == {"leaky"}
    assert reasons["cand-sub-002"] == {"trivially-solved"}
    assert reasons["cand-add-003"] == {"duplicate"}
    assert reasons["arith-add-001"] == {"id-taken"}
    assert reasons["cand-add-005"] == {"duplicate"}
    detail = next(i for i in payload["items"] if i["item_id"] == "cand-add-005")["reasons"][0]
    assert "candidate cand-add-001" in detail["detail"]
    assert payload["funnel"] == {"candidates": 8, "keep": 1, "fix": 3, "drop": 4}
    assert payload["reasons"]["duplicate"] == 3 and payload["reasons"]["leaky"] == 1
    assert payload["reasons"]["unsolvable"] == 1 and payload["reasons"]["trivially-solved"] == 1
    assert payload["against"] == "arith@2.0.0"
    assert {"fingerprints", "grader audit", "leak audit", "reference agents"} <= set(
        payload["sources"]
    )


def test_keep_only_writes_the_kept_items_ready_for_freeze(triaged: dict[str, Any]) -> None:
    lines = triaged["kept"].read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == ["cand-add-001"]
    # nothing is written into the project
    assert triaged["before"] == triaged["after"]


def test_triage_never_prints_a_candidates_text(triaged: dict[str, Any]) -> None:
    assert MARKER not in triaged["result"].output


def test_a_copy_of_a_holdout_item_is_named_by_id_never_by_text(triaged: dict[str, Any]) -> None:
    held_id, held_input = triaged["held"]
    payload = json_out(triaged["result"])
    row = next(i for i in payload["items"] if i["item_id"] == "cand-held-008")
    assert row["verdict"] == "drop"
    assert (
        row["reasons"][0]["detail"] == f"same input text as holdout item {held_id} of arith@2.0.0"
    )
    assert held_input not in triaged["result"].output


def test_triage_text_output_shows_the_funnel(shipped: Project, tmp_path: Path) -> None:
    # no audit needed: both are sorted by their fingerprint and id alone
    source = _write(tmp_path / "c.jsonl", _candidates()[2:4])
    done = shipped.invoke("triage", str(source), "--suite", "arith", "--agents", "none")
    assert done.exit_code == 0, done.output
    assert "funnel: 2 candidates -> 0 kept" in done.output
    assert "duplicate: 1" in done.output and "id-taken: 1" in done.output
    assert MARKER not in done.output


def _missing(d: Path) -> Path:
    return d / "missing.jsonl"


def _repeated(d: Path) -> Path:
    return _write(d / "c.jsonl", [_candidates()[0], _candidates()[0]])


def _empty(d: Path) -> Path:
    return _write(d / "c.jsonl", [])


def _malformed(d: Path) -> Path:
    (d / "c.jsonl").write_text("{nope\n", encoding="utf-8")
    return d / "c.jsonl"


def _unknown_family(d: Path) -> Path:
    (d / "x").mkdir()
    _write(d / "x" / "other.jsonl", _candidates()[:1])
    return d / "x"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (_missing, "no candidates at"),
        (_repeated, "duplicate item id"),
        (_empty, "no candidate item"),
        (_malformed, "c.jsonl"),
        (_unknown_family, "no family 'other'"),
    ],
)
def test_triage_refuses_bad_candidates_and_leaves_keep_only_alone(
    shipped: Project, tmp_path: Path, make: Callable[[Path], Path], expected: str
) -> None:
    out = tmp_path / "kept.jsonl"
    out.write_text("untouched\n", encoding="utf-8")
    path = make(tmp_path)
    done = shipped.invoke(
        "triage", str(path), "--suite", "arith", "--agents", "none", "--keep-only", str(out)
    )
    assert done.exit_code == 2, done.output
    assert expected in " ".join(done.output.split())
    assert out.read_text(encoding="utf-8") == "untouched\n"


def test_triage_refuses_an_unknown_suite_and_a_directory_as_keep_only(
    shipped: Project, tmp_path: Path
) -> None:
    source = _write(tmp_path / "c.jsonl", _candidates()[2:3])
    unknown = shipped.invoke("triage", str(source), "--suite", "nosuch", "--agents", "none")
    assert unknown.exit_code == 2 and "no suite 'nosuch'" in unknown.output
    folder = shipped.invoke(
        "triage", str(source), "--suite", "arith", "--agents", "none", "--keep-only", str(tmp_path)
    )
    assert folder.exit_code == 2 and "is a directory" in folder.output


class _Run:
    def __init__(self, run_id: str, model: str) -> None:
        self.run_id, self.model = run_id, model


class _Store:
    """The two store calls triage makes, over fixed attempts."""

    def __init__(self, frames: dict[str, tuple[str, pd.DataFrame]]) -> None:
        self.frames = frames

    def get_run(self, run_id: str) -> _Run:
        return _Run(run_id, self.frames[run_id][0])

    def attempt_columns(self, run_id: str, columns: Any) -> pd.DataFrame:
        return self.frames[run_id][1][list(columns)]


def _attempts(rows: list[tuple[str, str, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"item_id": i, "item_hash": h, "epoch": 1, "outcome": o, "score": s}
            for i, h, o, s in rows
        ]
    )


def test_stored_runs_decide_no_signal_and_skip_other_content() -> None:
    rows = {i: ItemTriage(i, "f", "f/x") for i in ("easy", "hard", "mixed", "changed")}
    hashes = {"easy": "h1", "hard": "h2", "mixed": "h3", "changed": "h4"}
    r1 = [
        ("easy", "h1", "scored", 1.0),
        ("hard", "h2", "scored", 0.0),
        ("mixed", "h3", "scored", 1.0),
        ("changed", "old", "scored", 1.0),
    ]
    r2 = [
        ("easy", "h1", "scored", 1.0),
        ("hard", "h2", "limit", 0.0),
        ("mixed", "h3", "scored", 0.0),
        ("changed", "h4", "harness_error", float("nan")),
    ]
    store = _Store({"r1": ("model-a", _attempts(r1)), "r2": ("model-b", _attempts(r2))})
    line = _stored_reasons(store, ("r1", "r2"), rows, hashes)  # type: ignore[arg-type]
    _signal_reasons(rows)
    assert [r for r, _ in rows["easy"].reasons] == ["no-signal"]
    assert [r for r, _ in rows["hard"].reasons] == ["no-signal"]
    assert rows["mixed"].reasons == [] and rows["mixed"].verdict == "keep"
    # the attempt of other content is left out; the harness error is a reason to fix
    assert rows["changed"].models == {}
    assert [r for r, _ in rows["changed"].reasons] == ["harness-error"]
    assert rows["changed"].verdict == "fix"
    assert "1 item(s) stored with other content were left out" in line
