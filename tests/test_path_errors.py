"""A path the CLI cannot use is a clear usage error (exit 2), never an "unexpected" crash.

`report --out DIR/sub` under a regular file, a store URL under a regular file and
`items --csv` into such a directory used to end with "unexpected NotADirectoryError ... report
it" and exit 1, as if evalsuite had a defect.
"""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from evalsuite.cli import cli
from evalsuite.cli._common import path_error_message
from tests.helpers import Project, json_out


def _project_with_a_run(tmp_path: Path) -> tuple[Project, str]:
    table = tmp_path / "results.csv"
    rows = [f"m,i{i},{e},{(i + e) % 2}" for i in range(4) for e in (1, 2)]
    table.write_text("model,item_id,epoch,score\n" + "\n".join(rows) + "\n", encoding="utf-8")
    project = Project(root=tmp_path, key_dir=tmp_path / "keys")
    ingested = json_out(project.invoke("ingest", str(table), "--format", "csv", "--json"))
    return project, ingested["runs"][0]["run_id"]


def test_a_report_directory_under_a_file_exits_2_naming_the_path(tmp_path: Path) -> None:
    project, run_id = _project_with_a_run(tmp_path)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory\n", encoding="utf-8")
    out = blocker / "report"
    result = project.invoke("report", run_id, "--out", str(out))
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert f"cannot use '{out}': Not a directory" in message
    assert "choose another path (e.g. --out" in message
    assert "unexpected" not in message
    as_json = project.invoke("report", run_id, "--out", str(out), "--json")
    assert as_json.exit_code == 2
    payload = json.loads(as_json.stdout)
    assert payload["exit_code"] == 2
    assert payload["error"] == "NotADirectoryError"
    assert blocker.read_text(encoding="utf-8") == "not a directory\n"


def test_a_store_under_a_file_exits_2_and_stores_nothing(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x\n", encoding="utf-8")
    table = tmp_path / "results.csv"
    table.write_text("model,item_id,epoch,score\nm,i0,1,1\n", encoding="utf-8")
    project = Project(
        root=tmp_path,
        key_dir=tmp_path / "keys",
        store_url=f"sqlite:///{blocker / 'store' / 'results.sqlite'}",
    )
    result = project.invoke("ingest", str(table), "--format", "csv")
    assert result.exit_code == 2
    message = " ".join(result.stderr.split())
    assert "cannot use '" in message and str(blocker) in message
    assert "EVALSUITE_STORE" in message
    assert blocker.read_text(encoding="utf-8") == "x\n"


def test_only_path_errors_are_usage_errors() -> None:
    missing = FileNotFoundError(errno.ENOENT, "No such file or directory", "/no/such")
    assert path_error_message(missing) == (
        "cannot use '/no/such': No such file or directory; check that the path (and each "
        "directory above it) exists, is of the right kind and is writable by you, or choose "
        "another path (e.g. --out, --root, EVALSUITE_STORE)"
    )
    full = OSError(errno.ENOSPC, "No space left on device", "/data/report.json")
    assert "free space on that disk" in (path_error_message(full) or "")
    # no file name, or an errno that is not about a path: left to the "unexpected" handler
    assert path_error_message(OSError(errno.ENOENT, "No such file or directory")) is None
    assert path_error_message(OSError(errno.EBADF, "Bad file descriptor", "/x")) is None


def test_an_empty_path_is_refused_not_read_as_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """click reads '' as '.': `report --out ''` wrote the report where the user stood."""
    (tmp_path / "project").mkdir()
    project, run_id = _project_with_a_run(tmp_path / "project")
    here = tmp_path / "cwd"
    here.mkdir()
    monkeypatch.chdir(here)
    for args in (
        ("report", run_id, "--out", ""),
        ("items", "fam@1.0.0", "--csv", ""),
        ("report", run_id, "--out", "", "--json"),
    ):
        result = project.invoke(*args)
        assert result.exit_code == 2, (args, result.output)
        assert "an empty path was given" in " ".join(result.output.split()), args
    payload = json.loads(result.stdout)  # the --json one: the error document
    assert payload["exit_code"] == 2
    assert list(here.iterdir()) == []
    root = CliRunner().invoke(cli, ["--root", "", "runs"])
    assert root.exit_code == 2 and "an empty path was given" in root.output
