"""What a run prints off a terminal: plain progress lines, inspect's banner on stderr.

Issue 15: progress bars were cut when stderr was not a terminal, and inspect's banner
("inspect_ai v…", "hooks enabled") landed on stdout after the run's summary.
"""

from __future__ import annotations

import pytest

from evalsuite.run._runner import _check_model, _progress
from evalsuite.run._spec import RunSpec
from evalsuite.store import AttemptRecord


def _record(outcome: str) -> AttemptRecord:
    score = 0.0 if outcome == "limit" else (1.0 if outcome == "scored" else float("nan"))
    return AttemptRecord(item_id="a", epoch=1, stratum="s", outcome=outcome, score=score)


def test_progress_off_a_terminal_is_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = ["scored"] * 17 + ["limit", "harness_error", "scored"]
    with _progress(20, 0, "probe@1.0.0 dev", True) as advance:
        for outcome in outcomes:
            advance(_record(outcome))
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 10  # about every tenth of the run
    assert lines[0] == "probe@1.0.0 dev: 2/20 attempts · 0 harness errors · 0 limits"
    assert lines[-1] == "probe@1.0.0 dev: 20/20 attempts · 1 harness errors · 1 limits"
    assert "\x1b" not in err and "━" not in err


def test_inspect_banner_never_reaches_stdout(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from rich.console import Console

    def get_model(*_args: object, **_kwargs: object) -> None:
        # what inspect's get_model does on a fresh model in a fresh process: init_hooks prints
        # its banner with rich's print, whose console writes to whatever sys.stdout is then.
        # (A fresh Console stands in for rich's global one: an inspect eval run earlier in the
        # same test process may have bound that one to a stream of its own.)
        Console().print("[blue][bold]inspect_ai v0[/bold][/blue]\n- hooks enabled: 0")

    # get_model caches models, so a real call prints only the first time in a process
    monkeypatch.setattr("inspect_ai.model.get_model", get_model)
    _check_model(RunSpec(suite="probe", version="1.0.0", model="mockllm/model"))
    out, err = capsys.readouterr()
    assert "inspect_ai v0" not in out
    assert "inspect_ai v0" in err
