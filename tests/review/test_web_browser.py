"""The review app in a real browser (headless Chromium), served by `evalsuite review`.

One project holds a dev run of the improved offline agent on each shipped family (support,
records, repair, arith, answers) and a baseline run of support. For each family the command
serves its runs;
the browser searches, filters, labels 10 attempts with the keyboard only, reloads, and finds
the labels both on the page and in the store. The support case saves the list and transcript
screenshots (`scripts/review_screenshots.py` writes the ones in docs/images from the same
steps).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.conftest import copy_project
from tests.helpers import REPO, Project, json_out
from tests.report.test_browser import ARTIFACTS, FLAGS, _require_browser

FIRST_TOOL = """async (run) => {
  const item = document.querySelector('#list tbody td:nth-child(2)').textContent;
  const query = new URLSearchParams({run, item, epoch: 1});
  const shown = await (await fetch('api/attempt?' + query)).json();
  const called = shown.transcript.messages.find((m) => m.tool_calls);
  return called ? called.tool_calls[0].function : 'ANSWER';
}"""
"""The name of a tool the first listed attempt called (asked of the app's own API); for a
family without tools (arith, answers), a word of every final answer."""

FAMILIES = {
    "support": "support@4.0.0",
    "records": "records@2.1.0",
    "repair": "repair@2.0.0",
    "arith": "arith@2.0.0",
    "answers": "answers@1.0.0",
}
LABELS = 10


@dataclass
class Reviewed:
    project: Project
    runs: dict[str, list[str]]
    """suite -> its run ids (the improved agent's first)."""


def make_runs(root: Path, *, limit: int = 6, epochs: int = 2) -> Reviewed:
    """A project copy with the runs the browser reviews (dev split, offline agents)."""
    project = copy_project(root)
    runs: dict[str, list[str]] = {}
    for suite, ref in FAMILIES.items():
        models = ["evalsuite/improved"] + (["evalsuite/baseline"] if suite == "support" else [])
        for model in models:
            result = project.invoke(
                "run", ref, "--split", "dev", "--model", model, "--limit", str(limit),
                "--epochs", str(epochs), "--no-progress", "--json",
            )  # fmt: skip
            assert result.exit_code == 0, result.stderr
            runs.setdefault(suite, []).append(json_out(result)["run_id"])
    return Reviewed(project=project, runs=runs)


@dataclass
class Served:
    url: str
    process: subprocess.Popen[str]


def serve(project: Project, run_ids: list[str], who: str = "browser-test") -> Served:
    """`evalsuite review RUN ... --port 0` in a process of its own; its URL once it serves."""
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "EVALSUITE_KEY_DIR": str(project.key_dir),
        "HOME": str(project.root.parent),
    }
    process = subprocess.Popen(
        [sys.executable, "-c", "from evalsuite.cli import main; main()", "--root",
         str(project.root), "review", *run_ids, "--port", "0", "--who", who],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    assert process.stdout is not None
    for line in process.stdout:
        found = re.search(r"review app at (http://127\.0\.0\.1:\d+/)", line)
        if found:
            return Served(url=found.group(1), process=process)
    process.wait(timeout=10)
    error = process.stderr.read() if process.stderr else ""
    raise AssertionError(f"the review app did not start: {error}")


def stop(served: Served) -> None:
    served.process.terminate()
    served.process.wait(timeout=10)


@pytest.fixture(scope="module")
def reviewed(tmp_path_factory: pytest.TempPathFactory) -> Reviewed:
    # made before the browser starts: playwright runs an event loop, inspect needs its own
    return make_runs(tmp_path_factory.mktemp("review") / "project")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    executable = _require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=executable, args=FLAGS)
        yield launched
        launched.close()


def wait_ready(page: Any) -> None:
    page.wait_for_selector("body[data-ready='1']")


def shown(page: Any) -> None:
    """Wait until the page shows what its address says (each view marks it when drawn)."""
    page.wait_for_function("document.body.dataset.shown === location.hash")


def total(page: Any) -> int:
    shown(page)
    return int(page.evaluate("document.body.dataset.total"))


def label_with_keys(page: Any, count: int, n_modes: int) -> list[tuple[str, str, int, str]]:
    """Open the first attempt and label `count` attempts with keys only; what was saved."""
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash.startsWith('#/a/')")
    shown(page)
    saved = []
    for i in range(count):
        saves = int(page.evaluate("document.body.dataset.saves || '0'"))
        page.keyboard.press(str(1 + i % min(n_modes, 9)))
        page.wait_for_function(f"Number(document.body.dataset.saves || 0) > {saves}")
        if i == 0:  # a note too, on the first: n, the text, Enter saves it
            page.keyboard.press("n")
            page.keyboard.type("looked at this one first")
            page.keyboard.press("Enter")
            page.wait_for_function(f"Number(document.body.dataset.saves || 0) > {saves + 1}")
        run, item, epoch, modes = re.match(
            r"(.+?)\x1f(.+?)\x1f(\d+)\|(.*)", page.evaluate("document.body.dataset.saved")
        ).groups()  # type: ignore[union-attr]
        saved.append((run, item, int(epoch), modes))
        if i < count - 1:
            current = page.url
            page.keyboard.press("j")
            page.wait_for_function(f"location.href !== {json.dumps(current)}")
            shown(page)
    return saved


def review_family(browser: Any, reviewed: Reviewed, suite: str, shots: Path | None) -> None:
    """The acceptance steps on one family's runs (screenshots into `shots` when given)."""
    from evalsuite._core.layout import Layout
    from evalsuite.review import load_labels, suite_taxonomy

    project, run_ids = reviewed.project, reviewed.runs[suite]
    modes = suite_taxonomy(Layout(project.root), suite).modes
    served = serve(project, run_ids)
    problems: list[str] = []
    requested: list[str] = []
    try:
        # bypass_csp: the test waits with evaluated expressions, which the page's CSP forbids
        page = browser.new_page(viewport={"width": 1360, "height": 900}, bypass_csp=True)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("request", lambda r: requested.append(r.url))
        page.on("dialog", lambda d: (problems.append(f"dialog: {d.message}"), d.dismiss()))
        page.goto(served.url)
        wait_ready(page)
        everything = total(page)
        assert everything == 12 * len(run_ids)
        # search: "/" focuses the box, Enter runs it over messages, tool calls and results
        page.keyboard.press("/")
        tool = page.evaluate(FIRST_TOOL, run_ids[0])
        page.keyboard.type(tool)
        page.keyboard.press("Enter")
        page.wait_for_function("location.hash.includes('q=')")
        found = total(page)
        assert 0 < found <= everything
        # filter: one run, epoch 2
        page.select_option("#f-run", run_ids[0])
        page.wait_for_function("location.hash.includes('run=')")
        page.select_option("#f-epoch", "2")
        page.wait_for_function("location.hash.includes('epoch=2')")
        assert 0 < total(page) <= 6
        # label 10 attempts of the first run with the keyboard, from the unfiltered run list
        page.goto(served.url + "#/?run=" + run_ids[0])
        page.reload()
        wait_ready(page)
        saved = label_with_keys(page, LABELS, len(modes))
        if shots is not None:
            page.screenshot(path=str(shots / "review-transcript.png"))
        assert len({(r, i, e) for r, i, e, _ in saved}) == LABELS
        # reload: the labels are on the page and in the store
        page.goto(served.url + "#/?mode=*")
        page.reload()
        wait_ready(page)
        assert total(page) == LABELS
        chips = page.locator("#list tbody tr td:nth-child(7)").all_inner_texts()
        assert all(c.strip() for c in chips)
        stored = {(x.item_id, x.epoch): x for x in load_labels(project.store(), run_ids[0])}
        assert len(stored) == LABELS
        for run, item, epoch, shown in saved:
            label = stored[(item, epoch)]
            assert run == run_ids[0] and ",".join(label.modes) == shown
            assert label.who == "browser-test" and label.taxonomy_version
        assert sum(1 for x in stored.values() if x.note == "looked at this one first") == 1
        if shots is not None:  # the list with the labels on it
            page.goto(served.url + "#/")
            page.reload()
            wait_ready(page)
            page.screenshot(path=str(shots / "review-list.png"))
        page.close()
    finally:
        stop(served)
    assert problems == []
    assert [u for u in requested if not u.startswith(served.url)] == []


@pytest.mark.slow  # about a minute: three families' runs, then the browser
@pytest.mark.browser
@pytest.mark.parametrize("suite", list(FAMILIES))
def test_review_app_search_filter_label_reload(
    reviewed: Reviewed, browser: Any, suite: str
) -> None:
    shots = None
    if suite == "support":
        shots = ARTIFACTS / "review"
        shots.mkdir(parents=True, exist_ok=True)
    review_family(browser, reviewed, suite, shots)
    if shots is not None:
        assert (shots / "review-list.png").stat().st_size > 10_000
        assert (shots / "review-transcript.png").stat().st_size > 10_000


@pytest.mark.slow  # shares the runs above
@pytest.mark.browser
def test_the_static_site_lists_searches_and_shows_a_transcript_offline(
    reviewed: Reviewed, browser: Any, tmp_path: Path
) -> None:
    run_ids = reviewed.runs["records"]
    out = tmp_path / "site"
    result = reviewed.project.invoke("review", *run_ids, "--out", str(out), "--json")
    assert result.exit_code == 0, result.stderr
    page = browser.new_page(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    problems: list[str] = []
    requested: list[str] = []
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("request", lambda r: requested.append(r.url))
    page.goto((out / "index.html").resolve().as_uri())
    wait_ready(page)
    assert total(page) == 12
    tool = page.evaluate(
        "() => DATA.transcripts[DATA.rows[0].id].messages.find((m) => m.tool_calls)"
        ".tool_calls[0].function"
    )
    page.keyboard.press("/")
    page.keyboard.type(tool)
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash.includes('q=')")
    assert 0 < total(page) <= 12
    page.keyboard.press("Enter")
    page.wait_for_function("location.hash.startsWith('#/a/')")
    shown(page)
    assert page.locator("#main-pane .msg.tool").count() > 0
    assert page.locator("#labeller input[type=checkbox]:disabled").count() > 0  # read-only
    page.close()
    assert problems == []
    assert [u for u in requested if not u.startswith("file://")] == []
