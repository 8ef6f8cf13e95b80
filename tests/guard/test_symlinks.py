"""Symbolic links in a screened directory: every file once, loops and escapes skipped, listed.

The guard runs in a thread of its own with a timeout, so that a regression (a walk that
follows a loop) fails the test instead of hanging it (the thread, a daemon, is left to spin
until the session ends). It ran in a child process before: the same command and the same
timeout, plus a second of CPU importing the CLI each time (docs/design/test-speed.md).
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from evalsuite.cli import cli
from evalsuite.guard._readers import find_sources
from tests.guard.conftest import Frozen
from tests.helpers import WAIT_S, write_jsonl

TIMEOUT = WAIT_S  # a followed loop never ends; a loaded machine only slows the guard


def guard_json(root: Path, *paths: Path) -> tuple[int, dict[str, Any]]:
    args = ["--root", str(root), "guard", *map(str, paths), "--json"]
    done: list[Result] = []
    worker = threading.Thread(
        target=lambda: done.append(CliRunner().invoke(cli, args, catch_exceptions=False)),
        daemon=True,
    )
    worker.start()
    worker.join(TIMEOUT)
    if worker.is_alive():
        pytest.fail(f"guard did not finish within {TIMEOUT} s (a symlink loop followed?)")
    assert done, "the guard raised in its thread (its traceback is printed above)"
    return done[0].exit_code, json.loads(done[0].stdout)


@pytest.fixture
def tree(frozen: Frozen, tmp_path: Path) -> dict[str, Path]:
    """corpus/ with a leak, a loop back to the top (twice), a self-loop, a dangling link, a
    link out of the tree, a second name for a file and one for a directory."""
    item_id, text = sorted(frozen.holdout.items())[0]
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    write_jsonl(corpus / "a.jsonl", [{"text": "clean"}, {"text": "intro " + text}])
    (corpus / "sub" / "b.txt").write_text("clean text only", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    write_jsonl(outside / "leak.jsonl", [{"text": text}])
    (corpus / "sub" / "up").symlink_to("..")
    (corpus / "sub" / "up2").symlink_to("../..", target_is_directory=True)
    (corpus / "sub" / "again").symlink_to("..")
    (corpus / "self").symlink_to("self")
    (corpus / "dangling.jsonl").symlink_to("missing.jsonl")
    (corpus / "out").symlink_to(outside, target_is_directory=True)
    (corpus / "alias.jsonl").symlink_to("a.jsonl")
    (corpus / "sub-alias").symlink_to("sub", target_is_directory=True)
    return {"corpus": corpus, "outside": outside, "item": Path(item_id)}


def test_links_are_resolved_once_and_escapes_and_loops_skipped(
    frozen: Frozen, tree: dict[str, Path]
) -> None:
    corpus = tree["corpus"]
    code, report = guard_json(frozen.root, corpus)
    assert code == 4  # the leak in a.jsonl, whatever was skipped
    assert [(h["document"], h["item_id"]) for h in report["contaminated"]] == [
        (f"{corpus / 'a.jsonl'}:2", str(tree["item"]))
    ]
    assert report["documents_scanned"] == 3  # a.jsonl (2 records) and sub/b.txt, once each
    reasons = {
        Path(d["path"]).relative_to(corpus).as_posix(): d["reason"]
        for d in report["skipped_details"]
    }
    assert reasons.keys() == {
        "alias.jsonl",
        "dangling.jsonl",
        "out",
        "self",
        "sub-alias",
        "sub/again",
        "sub/up",
        "sub/up2",
    }
    assert reasons["alias.jsonl"] == f"same file as {corpus / 'a.jsonl'}"
    assert reasons["dangling.jsonl"] == "dangling symlink (-> missing.jsonl)"
    assert reasons["out"].startswith("symlink leaves the scanned directory")
    assert reasons["self"] == "symlink loop"
    assert reasons["sub-alias"] == f"directory already scanned as {corpus / 'sub'}"
    assert reasons["sub/up"].startswith("symlink loop") and "a parent" in reasons["sub/up"]
    assert reasons["sub/again"].startswith("symlink loop")
    assert reasons["sub/up2"].startswith("symlink leaves the scanned directory")
    assert sorted(report["skipped"]) == sorted(d["path"] for d in report["skipped_details"])


def test_a_loop_of_links_ends_and_reads_each_document_once(frozen: Frozen, tmp_path: Path) -> None:
    item_id, text = sorted(frozen.holdout.items())[1]
    corpus = tmp_path / "loops"
    (corpus / "sub").mkdir(parents=True)
    write_jsonl(corpus / "a.jsonl", [{"text": text}])
    for name in ("x", "y"):  # two ways back up: 2**40 paths for a walk that follows them
        (corpus / "sub" / name).symlink_to("..")
    code, report = guard_json(frozen.root, corpus)
    assert code == 4
    assert report["documents_scanned"] == 1
    assert [(h["document"], h["item_id"]) for h in report["contaminated"]] == [
        (f"{corpus / 'a.jsonl'}:1", item_id)
    ]
    assert [Path(d["path"]).name for d in report["skipped_details"]] == ["x", "y"]


def test_skipped_links_do_not_change_the_exit_code(frozen: Frozen, tmp_path: Path) -> None:
    corpus = tmp_path / "clean"
    corpus.mkdir()
    (corpus / "a.txt").write_text("nothing to see", encoding="utf-8")
    (corpus / "gone.txt").symlink_to("nowhere.txt")
    (corpus / "loop").symlink_to(".")
    code, report = guard_json(frozen.root, corpus)
    assert code == 0
    assert report["contaminated"] == [] and report["documents_scanned"] == 1
    assert {d["reason"].split(" (")[0] for d in report["skipped_details"]} == {
        "dangling symlink",
        "symlink loop",
    }


def test_links_inside_the_tree_are_followed_under_their_own_name(tmp_path: Path) -> None:
    corpus = tmp_path / "c"
    (corpus / ".hidden").mkdir(parents=True)
    (corpus / ".hidden" / "x.txt").write_text("x", encoding="utf-8")
    (corpus / "shown").symlink_to(".hidden", target_is_directory=True)
    (corpus / "y.txt").write_text("y", encoding="utf-8")
    sources, skipped = find_sources([corpus])
    assert [s.path for s in sources] == [corpus / "y.txt", corpus / "shown" / "x.txt"]
    assert skipped == []
    # a file named twice, or through a link, is read once
    (corpus / "z.txt").symlink_to("y.txt")
    sources, skipped = find_sources([corpus / "y.txt", corpus / "z.txt", corpus])
    assert [s.path for s in sources] == [corpus / "y.txt", corpus / "shown" / "x.txt"]
    assert [s.path for s in skipped] == [corpus / "z.txt", corpus / "y.txt", corpus / "z.txt"]
    assert {s.reason for s in skipped} == {f"same file as {corpus / 'y.txt'}"}


def test_a_named_link_is_followed(frozen: Frozen, tmp_path: Path) -> None:
    target = tmp_path / "real"
    target.mkdir()
    (target / "a.txt").write_text("hello", encoding="utf-8")
    os.symlink(target, tmp_path / "named", target_is_directory=True)
    sources, skipped = find_sources([tmp_path / "named"])
    assert [s.path for s in sources] == [tmp_path / "named" / "a.txt"] and skipped == []
