"""The terminal shows the report's scorecard: `compare` leads with its row, `report` prints every
row before the files it wrote (docs/design/result-model.md, decision 6).

The store is built from attempts tables (no inspect run): `run-a` (base-model), `run-b`
(cand-model) and `run-c` (cand-model again).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from evalsuite.cli import cli
from evalsuite.cli._views import print_scorecard
from evalsuite.service import Badge, Scorecard, ScorecardRow, ScorecardRun
from tests.analyse.test_scale_parity import attempts, stored
from tests.service.test_views import LEAKS, WEIGHTS, _store

TABLE_RULE = "─"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".evalsuite").mkdir()
    store = _store(tmp_path, weights=WEIGHTS)
    rerun = attempts(6, run_id="run-c")
    stored(store, rerun, "run-c", len(rerun))
    store.update_run("run-c", model="cand-model", error_threshold=0.5, weights=WEIGHTS)
    return tmp_path


def _invoke(project: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["--root", str(project), *args])
    return result.exit_code, result.stdout


def _card_lines(text: str) -> list[str]:
    """The scorecard's lines: from its title to the blank line after its rows."""
    lines = text.splitlines()
    start = lines.index("scorecard")
    end = next(i for i in range(start + 3, len(lines)) if not lines[i].strip())
    return lines[start:end]


def test_compare_leads_with_its_scorecard_row(project: Path) -> None:
    code, text = _invoke(
        project, "compare", "run-a", "run-b", "--gate", "noninferior", "--margin", "0.05"
    )
    assert code in (0, 6), text
    assert text.splitlines()[0] == "scorecard"  # before any alert, title or headline
    card = _card_lines(text)
    header = next(line for line in card if "suite" in line)
    for column in ("baseline", "candidate", "difference (95% CI)", "gate", "validity", "audit"):
        assert column in header
    body = "\n".join(card[card.index(header) + 2 :])
    assert "base-model" in body and "cand-model" in body  # names: each model once here
    assert "run-a" not in body and "run-b" not in body
    assert "weighted" in body and "[" in body  # the headline's difference with its interval
    assert any(word in body for word in ("PASS", "FAIL", "INCONCLUSIVE"))
    # these ingested runs exceed their harness error threshold, and have no audited suite
    assert "INVALID" in body and "UNAUDITED" in body
    assert max(len(line) for line in card) <= 100
    # the full view follows, unchanged: the headline after the scorecard
    assert text.index("On ingested runs") > text.index(card[-1])
    assert not LEAKS.search(text), LEAKS.search(text)


def test_compare_json_is_unchanged(project: Path) -> None:
    code, text = _invoke(project, "compare", "run-a", "run-b", "--json")
    assert code == 0, text
    payload = json.loads(text)
    assert "scorecard" not in payload and "headline" in payload  # the contract, no new key


def test_report_prints_the_scorecard_before_the_files(project: Path) -> None:
    out = project / "out"
    code, text = _invoke(project, "report", "run-a", "run-b", "run-c", "--out", str(out))
    assert code == 0, text
    card = _card_lines(text)
    rows = [line for line in card[3:] if line.strip()]
    # run-b and run-c are both cand-model: told apart by id; base-model by name
    assert any("base-model" in r and "run-b" in r for r in rows)
    assert any("base-model" in r and "run-c" in r for r in rows)
    assert text.index("scorecard") < text.index(f"html     {out / 'index.html'}")
    assert max(len(line) for line in card) <= 100
    # --json is the report's payload, with the scorecard in it
    code, text = _invoke(project, "report", "run-a", "run-b", "--out", str(out), "--json")
    assert code == 0, text
    data = json.loads(text)
    assert data["scorecard"]["rows"][0]["candidate"]["label"] == "cand-model"


def _row(**overrides: object) -> ScorecardRow:
    fields: dict[str, object] = {
        "suite": "support@2.0.0 holdout",
        "baseline": ScorecardRun("r1", "vllm/acme-sft-1200rl", "vllm/acme-sft-1200rl"),
        "candidate": ScorecardRun("r2", "vllm/acme-sft-2400rl", "vllm/acme-sft-2400rl"),
        "difference": "+0.270",
        "interval": "[+0.167, +0.373]",
        "basis": "deployment-weighted",
        "gate": Badge("PASS · weighted INCONCLUSIVE", "warn"),
        "validity": Badge("INVALID, PARTIAL", "bad"),
        "audit": Badge("baseline passed · candidate UNAUDITED", "warn"),
        "sentence": "s",
        "gate_line": None,
    }
    return ScorecardRow(**(fields | overrides))  # type: ignore[arg-type]


def _printed(card: Scorecard, width: int = 160) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, highlight=False, markup=False, soft_wrap=True)
    print_scorecard(console, card)
    return buffer.getvalue()


def test_long_names_stay_whole_within_100_columns() -> None:
    """Names of 20 characters each fit whole beside the difference and short badges."""
    plain = {"gate": Badge("PASS", "good"), "validity": Badge("valid", "good")}
    card = Scorecard(
        (_row(**plain, audit=Badge("passed", "good")), _row(suite="ingested runs (no manifest)"))
    )
    text = _printed(Scorecard(card.rows[:1]))
    assert max(len(line) for line in text.splitlines()) <= 100
    lines = text.splitlines()
    rule = next(i for i, line in enumerate(lines) if TABLE_RULE in line)
    row = lines[rule + 1]
    for cell in ("vllm/acme-sft-1200rl", "vllm/acme-sft-2400rl", "+0.270 weighted"):
        assert cell in row, row  # each on its row's first line, whole
    assert "[+0.167, +0.373]" in lines[rule + 2]
    # long badges beside long names: still 100 columns; a badge's words whole, nothing cut
    text = _printed(card)
    assert max(len(line) for line in text.splitlines()) <= 100
    assert "…" not in text
    for word in ("INCONCLUSIVE", "UNAUDITED", "INVALID,", "PARTIAL", "[+0.167,"):
        assert word in text.split(), word


def test_the_scorecard_is_plain_text_and_absent_without_comparisons() -> None:
    markup = ScorecardRun("r1", "[bold]m[/bold]", "[bold]m[/bold]")
    assert "[bold]m[/bold]" in _printed(Scorecard((_row(baseline=markup),)), width=100)
    assert _printed(Scorecard(())) == ""  # no comparison, no scorecard
