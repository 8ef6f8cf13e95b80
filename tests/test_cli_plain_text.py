"""No raw Python or rich markup reaches the terminal (issue 15)."""

from __future__ import annotations

import pytest

from evalsuite.cli._common import handle_errors
from evalsuite.service._stage_views import _checked


def test_an_error_message_shows_no_rich_tags(capsys: pytest.CaptureFixture[str]) -> None:
    @handle_errors
    def boom(as_json: bool = False) -> None:
        raise RuntimeError("[bold]ERROR[/bold]: notification=True requires [x, y]")

    with pytest.raises(SystemExit) as exit_info:
        boom()
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "[bold]" not in err and "[/bold]" not in err
    assert "ERROR: notification=True requires [x, y]" in err  # other brackets kept


def test_leak_audit_counts_read_as_words() -> None:
    assert _checked({"dev": 108, "holdout": 96}) == "108 dev and 96 holdout items"
