"""Sampling for labelling and the saturation of new modes (docs/review.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from evalsuite.cli import cli
from evalsuite.errors import UsageError
from evalsuite.review import AttemptLabel, propose, saturation
from evalsuite.store import Store
from tests.review.conftest import make_run
from tests.review.test_review_cli import TOY


def _attempts() -> pd.DataFrame:
    rows = []
    for k in range(40):
        stratum = "a" if k < 20 else "b"
        outcome, score = ("scored", 1.0)
        if k % 4 == 0:
            outcome, score = ("scored", 0.0)
        if k in (5, 25):
            outcome, score = ("harness_error", float("nan"))
        if k == 9:
            outcome, score = ("limit", 0.0)
        rows.append(
            {"item_id": f"i{k:02d}", "epoch": 1, "stratum": stratum, "outcome": outcome}
            | {"score": score}
        )
    return pd.DataFrame(rows)


def test_propose_stratifies_failures_adds_a_random_share_and_skips_labelled() -> None:
    frame = _attempts()
    labelled = [AttemptLabel("r", "i00", 1, ("x",))]
    found = propose("r", frame, labelled, n=12, seed=3)
    rows = found.attempts
    assert len(rows) == 12 and found.seed == 3 and found.already_labelled == 1
    assert "i00#1" not in {r["attempt"] for r in rows}
    failures = [r for r in rows if r["why"].startswith("failure")]
    assert len(failures) == 9 and len(rows) - len(failures) == 3  # 25% random
    # every failing group is represented: (a, scored), (a, harness_error), (a, limit),
    # (b, scored), (b, harness_error)
    groups = {(r["stratum"], r["outcome"]) for r in failures}
    assert groups == {("a", "scored"), ("a", "harness_error"), ("a", "limit")} | {
        ("b", "scored"),
        ("b", "harness_error"),
    }
    assert all(r["outcome"] != "scored" or r["score"] < 1 for r in failures)
    # the same seed proposes the same attempts; another seed other ones
    assert propose("r", frame, labelled, n=12, seed=3).attempts == rows
    assert propose("r", frame, labelled, n=12, seed=4).attempts != rows
    assert found.failures == 12  # 10 zero scores + 2 harness errors + 1 limit - 1 labelled


def test_propose_takes_everything_when_asked_for_more() -> None:
    found = propose("r", _attempts(), [], n=500, seed=0)
    assert len(found.attempts) == 40
    assert len({r["attempt"] for r in found.attempts}) == 40
    with pytest.raises(UsageError, match="at least 1"):
        propose("r", _attempts(), [], n=0, seed=0)


def test_saturation_counts_new_modes_in_the_last_labels() -> None:
    def lab(*modes: str) -> AttemptLabel:
        return AttemptLabel("r", "i", 1, modes)

    history = [lab("a"), lab("a", "b"), lab(), lab("b"), lab("c"), lab("a"), lab("b")]
    got = saturation(history, k=3)
    assert got["curve"] == [1, 2, 2, 2, 3, 3, 3]
    assert (got["modes_seen"], got["new_in_last_k"], got["saturated"]) == (3, 1, False)
    assert saturation(history, k=2)["saturated"] is True
    assert saturation(history[:1], k=2)["saturated"] is False  # fewer labels than k


def test_review_propose_on_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "tasks" / "taxonomies").mkdir(parents=True)
    (tmp_path / "tasks" / "taxonomies" / "toy.toml").write_text(TOY, encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'store.sqlite'}"
    monkeypatch.setenv("EVALSUITE_STORE", url)
    make_run(
        Store(url),
        "r1",
        {(f"i{k}", 1): ("scored", float(k % 2)) for k in range(10)},
    )
    result = CliRunner().invoke(
        cli, ["--root", str(tmp_path), "review", "r1", "--propose", "4", "--seed", "5", "--json"]
    )
    assert result.exit_code == 0, result.output
    found = json.loads(result.output)["proposals"][0]
    assert found["seed"] == 5 and found["proposed"] == 4 and found["random_share"] == 0.25
    assert found["saturation"]["labels"] == 0
    both = CliRunner().invoke(cli, ["--root", str(tmp_path), "review", "r1", "--stats", "--scan"])
    assert both.exit_code == 2 and "give one of --scan, --stats and --propose" in both.output
