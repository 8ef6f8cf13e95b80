"""Data strings reach the terminal escaped (issue 28, points 16 and 18): a model name with
control characters cannot clear the screen, an unknown id that is not ASCII is shown with its
code points (docs/design/terminal-output.md)."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import Project, json_out, make_project

EVIL = "\x1b[2J\x1b[31mEVIL"


def _no_escape_byte(*texts: str) -> None:
    for text in texts:
        assert "\x1b" not in text and "\x07" not in text, repr(text[:300])


def test_a_model_name_with_control_characters_is_escaped_in_ingest_and_score(
    tmp_path: Path,
) -> None:
    project = Project(root=tmp_path / "p", key_dir=tmp_path / "keys")
    project.root.mkdir()
    csv = tmp_path / "r.csv"
    csv.write_text(
        f"model,item_id,epoch,score,stratum\n{EVIL},\x1b]0;title\x07q1,1,1,s\x1b[1m\n"
        f"{EVIL},q2,1,0,s\x1b[1m\n",
        encoding="utf-8",
    )
    ingest = project.invoke("ingest", str(csv), "--format", "csv")
    assert ingest.exit_code == 0, ingest.stderr
    _no_escape_byte(ingest.stdout, ingest.stderr)
    assert "\\x1b[2J\\x1b[31mEVIL" in ingest.stdout
    run_id = json_out(project.invoke("runs", "--json"))[0]["run_id"]
    assert json_out(project.invoke("runs", "--json"))[0]["model"] == EVIL  # data kept as is
    for args in (("score", run_id), ("runs",), ("score", run_id, "--wide")):
        result = project.invoke(*args)
        assert result.exit_code == 0, result.stderr
        _no_escape_byte(result.stdout, result.stderr)
        assert "\\x1b[2J\\x1b[31mEVIL" in result.stdout


def test_an_unknown_id_that_is_not_ascii_is_shown_with_its_code_points(tmp_path: Path) -> None:
    project = make_project(tmp_path)
    assert project.invoke("freeze", "demo", "--version", "1.0.0").exit_code == 0
    csv = tmp_path / "r.csv"
    csv.write_text("model,item_id,epoch,score\nm,\u0430dd-000,1,1\n", encoding="utf-8")
    result = project.invoke("ingest", str(csv), "--format", "csv", "--suite", "demo@1.0.0")
    assert result.exit_code == 2
    assert "'\u0430dd-000' (not ASCII: U+0430 CYRILLIC SMALL LETTER A at 1)" in result.stderr
    result = project.invoke("score", "2026\u0430")
    assert result.exit_code == 2
    assert "U+0430 CYRILLIC SMALL LETTER A at 5" in result.stderr
    result = project.invoke("score", "\x1b[2J")
    assert result.exit_code == 2
    _no_escape_byte(result.stdout, result.stderr)


def test_a_model_name_that_looks_like_rich_markup_prints_as_written(tmp_path: Path) -> None:
    """``[/]`` made ``ingest`` fail with an 'unexpected MarkupError' after the run was stored,
    and ``[bold]m[/bold]`` printed as ``m``: data is never read as markup."""
    project = Project(root=tmp_path / "p", key_dir=tmp_path / "keys")
    project.root.mkdir()
    for name in ("[/]", "[bold]m[/bold]", "m[/red]"):
        csv = tmp_path / "r.csv"
        csv.write_text(
            f"model,item_id,epoch,score,stratum\n{name},q1,1,1,[red]s\n{name},q2,1,0,[red]s\n",
            encoding="utf-8",
        )
        ingest = project.invoke("ingest", str(csv), "--format", "csv")
        assert ingest.exit_code == 0, ingest.stderr
        assert f": {name}, 2 items" in ingest.stdout
        run_id = ingest.stdout.split()[1].rstrip(":")
        score = project.invoke("score", run_id, "--wide")
        assert score.exit_code == 0, score.stderr
        assert f"{name} (run {run_id})" in score.stdout
        assert "[red]s" in score.stdout
