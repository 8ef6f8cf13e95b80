"""The one formatter module (`evalsuite/service/_format.py`): times to the minute in UTC, and
no private formatter anywhere else (docs/design/result-model.md, decision 2)."""

from __future__ import annotations

import ast
from datetime import UTC, date, datetime, timedelta, timezone
from pathlib import Path

import pytest

from evalsuite.service import fmt_time
from tests.helpers import REPO

PACKAGE = REPO / "evalsuite"
FORMAT_MODULE = PACKAGE / "service" / "_format.py"


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("2026-12-05T17:10:32.424573+00:00", "2026-12-05 17:10 UTC"),  # what the store keeps
        ("2026-12-05T17:10:59.999999+00:00", "2026-12-05 17:10 UTC"),  # cut, never rounded up
        ("2026-12-05T19:10:32+02:00", "2026-12-05 17:10 UTC"),  # another zone, in UTC
        ("2026-12-05T00:30:00-01:00", "2026-12-05 01:30 UTC"),
        ("2026-12-31T23:59:59.9-00:30", "2027-01-01 00:29 UTC"),  # across a year, in UTC
        ("2026-12-05T17:10:32Z", "2026-12-05 17:10 UTC"),
        ("2026-12-05T17:10:32", "2026-12-05 17:10 UTC"),  # no zone: the store writes UTC
        ("2026-12-05 17:10:32.5", "2026-12-05 17:10 UTC"),
        ("2026-12-05", "2026-12-05"),  # a date stays a date, no invented midnight
        (None, "n/a"),
        ("", "n/a"),
        ("not a time", "not a time"),  # a text that is not a time is shown as written
    ],
)
def test_fmt_time_is_to_the_minute_in_utc(value: str | None, shown: str) -> None:
    assert fmt_time(value) == shown


def test_fmt_time_takes_datetimes_and_dates() -> None:
    moment = datetime(2026, 12, 5, 17, 10, 32, 424573, tzinfo=UTC)
    assert fmt_time(moment) == "2026-12-05 17:10 UTC"
    east = moment.astimezone(timezone(timedelta(hours=5, minutes=30)))
    assert fmt_time(east) == "2026-12-05 17:10 UTC"
    assert fmt_time(moment.replace(tzinfo=None)) == "2026-12-05 17:10 UTC"
    assert fmt_time(date(2026, 12, 5)) == "2026-12-05"


def _formatters(path: Path) -> list[str]:
    """Functions of `path` that format for a reader: a name like a formatter's, returning str."""
    names = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        returns = ast.unparse(node.returns) if node.returns else ""
        name = node.name.lstrip("_")
        if returns == "str" and (
            name.startswith(("fmt", "format_", "pct", "percent"))
            or name in ("ci", "num", "number", "time", "when", "stamp")
        ):
            names.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name}")
    return names


def test_no_formatter_outside_the_one_module() -> None:
    """Numbers and times are worded in `service/_format.py` only; nowhere a private copy."""
    assert len(_formatters(FORMAT_MODULE)) >= 5  # the check finds formatters where they are
    found = [
        name
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != FORMAT_MODULE
        for name in _formatters(path)
    ]
    assert found == [], found
    # a time shown to a reader is written by `fmt_time`: no `strftime` anywhere else but
    # the run id (a name, not a time shown: run/_run_id.py)
    allowed = {FORMAT_MODULE, PACKAGE / "run" / "_run_id.py"}
    stray = [
        str(path.relative_to(REPO))
        for path in sorted(PACKAGE.rglob("*.py"))
        if path not in allowed and ".strftime(" in path.read_text(encoding="utf-8")
    ]
    assert stray == [], stray
