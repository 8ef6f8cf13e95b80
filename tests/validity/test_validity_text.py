"""`validity report` in a terminal: tables within 100 columns, each caveat once, at the end."""

from __future__ import annotations

import re
from pathlib import Path

from tests.helpers import Project
from tests.validity.test_validity_cli import _alpacaeval_files, empty  # noqa: F401 - fixture

LEAKS = re.compile(r"\bNone\b|\bnan\b|\{'|\['|\[/?bold\]")


def test_validity_report_text_is_concise(empty: Project, tmp_path: Path) -> None:  # noqa: F811
    outcomes, scores = _alpacaeval_files(tmp_path)
    assert empty.invoke("validity", "import", str(outcomes)).exit_code == 0
    args = ("validity", "report", "--metric", "arena_elo", "--scores", str(scores))
    narrow = empty.invoke(*args)
    assert narrow.exit_code == 0, narrow.stderr
    lines = narrow.stdout.splitlines()
    table = [line for line in lines if line[:1] in "┏┃┡│└"]
    assert table and max(len(line) for line in table) <= 100
    assert "Kendall" not in narrow.stdout
    assert not LEAKS.search(narrow.stdout), LEAKS.search(narrow.stdout)
    if "caveats:" in lines:
        at = lines.index("caveats:")
        assert at > lines.index(table[-1])  # after the table
        caveats = lines[at + 1 :]
        assert len(caveats) == len(set(caveats))
    wide = empty.invoke(*args, "--wide")
    assert wide.exit_code == 0, wide.stderr
    assert "Kendall" in wide.stdout and "LOO error" in wide.stdout
