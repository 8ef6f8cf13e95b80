"""A command that only reads never creates a store: a mistyped path leaves nothing behind.

Before, `runs`, `score`, `compare`, `report`, `items`, `triage --runs` and `validity report`
opened the store with `Store`, which creates a SQLite file (and its directories) wherever
``EVALSUITE_STORE`` or ``--root`` pointed, then said "no runs stored yet".
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from evalsuite.cli import cli
from evalsuite.store import Store
from tests.helpers import json_out


def invoke(root: Path, url: str, *args: str) -> Result:
    return CliRunner().invoke(
        cli, ["--root", str(root), *args], env={"EVALSUITE_STORE": url}, catch_exceptions=False
    )


@pytest.fixture
def typo(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "no" / "such" / "results.sqlite"
    return path, f"sqlite:///{path}"


@pytest.mark.parametrize(
    "args",
    [
        ("runs",),
        ("runs", "--json"),
        ("score", "20261202-000000-abcdef"),
        ("compare", "20261202-000000-abcdef", "20261202-000000-fedcba"),
        ("report", "20261202-000000-abcdef"),
        ("validity", "report", "--metric", "x"),
    ],
)
def test_a_command_that_only_reads_creates_no_store(
    tmp_path: Path, typo: tuple[Path, str], args: tuple[str, ...]
) -> None:
    path, url = typo
    result = invoke(tmp_path, url, *args)
    assert not path.parent.parent.exists(), "the store's directory was created"
    if args == ("runs",):
        assert result.exit_code == 0
        assert "no runs stored yet" in result.output
        assert f"no results store at {url}" in " ".join(result.output.split())
    elif args == ("runs", "--json"):
        assert result.exit_code == 0 and json_out(result) == []
    elif args[0] == "validity":  # its own usage check still comes first
        assert result.exit_code == 2 and "give --suite" in result.stderr
    else:
        assert result.exit_code == 2
        message = " ".join(result.stderr.split())
        assert "no run '20261202-000000-abcdef'" in message
        assert f"no results store at {url}" in message and "EVALSUITE_STORE" in message


def test_a_command_that_writes_still_creates_the_store(
    tmp_path: Path, typo: tuple[Path, str]
) -> None:
    path, url = typo
    table = tmp_path / "results.csv"
    table.write_text("model,item_id,epoch,score\nm,a,1,1\nm,b,1,0\n", encoding="utf-8")
    assert invoke(tmp_path, url, "ingest", str(table), "--format", "csv").exit_code == 0
    assert path.is_file()
    listed = invoke(tmp_path, url, "runs")
    assert listed.exit_code == 0 and "no results store" not in listed.output


def test_the_empty_store_in_memory_is_one_store_across_connections(tmp_path: Path) -> None:
    store = Store(f"sqlite:///{tmp_path / 'absent.sqlite'}", create=False)
    assert store.missing
    assert store.list_runs() == [] and store.count_runs() == 0  # schema seen by every read
    assert not (tmp_path / "absent.sqlite").exists()
    assert not Store(f"sqlite:///{tmp_path / 'made.sqlite'}").missing
