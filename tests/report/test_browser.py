"""The report in a real browser: headless Chromium renders it offline, with every figure and
no console error; a screenshot is saved; the rendered page holds no holdout text."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, item_texts, load_holdout_items, load_manifest, resolve_key
from tests.helpers import REPO
from tests.report.conftest import Reported, report_dir

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARTIFACTS = REPO / ".evalsuite" / "test-artifacts"
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _require_browser() -> str:
    if CHROMIUM is None:
        if os.environ.get("EVALSUITE_REQUIRE_BROWSER"):
            pytest.fail(
                "Chromium is required here (EVALSUITE_REQUIRE_BROWSER is set) but is "
                "not installed: apt-get install chromium"
            )
        pytest.skip("no Chromium on this machine (.ci/run installs it)")
    return CHROMIUM


@pytest.mark.browser
def test_report_renders_in_headless_chromium(reported: Reported) -> None:
    executable = _require_browser()
    from playwright.sync_api import sync_playwright

    out = report_dir(
        reported,
        "browser",
        reported.faulty,
        reported.baseline,
        reported.candidate,
        reported.holdout,
    )
    page_url = (out / "index.html").resolve().as_uri()
    problems: list[str] = []
    requested: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on(
            "console",
            lambda m: (
                problems.append(f"console {m.type}: {m.text}")
                if m.type in ("error", "warning")
                else None
            ),
        )
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.on("request", lambda r: requested.append(r.url))
        page.goto(page_url, wait_until="load")
        figures = page.eval_on_selector_all(
            "figure[data-figure]",
            """els => els.map(e => {
                const svg = e.querySelector('svg');
                const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return [e.dataset.figure, box.width, box.height];
            })""",
        )
        banner = page.locator("#invalid-banner")
        banner_visible = banner.is_visible()
        rendered = page.inner_text("body") + page.content()
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        screenshot = ARTIFACTS / "report.png"
        page.screenshot(path=str(screenshot), full_page=True)
        browser.close()
    assert problems == []
    assert [u for u in requested if not u.startswith("file://")] == []
    names = {f[0] for f in figures}
    assert {"strata", "pass_k", "reliability", "comparison_0", "comparison_1"} <= names
    assert all(width > 100 and height > 100 for _, width, height in figures), figures
    assert banner_visible
    assert screenshot.stat().st_size > 20_000
    layout = Layout(reported.project.root)
    manifest = load_manifest(layout, "probe")
    key = resolve_key(
        "probe",
        manifest.key,
        manifest.canary,
        KeySpec(key_dir=reported.project.key_dir),
        create=False,
    )
    needles = [t for _, i in load_holdout_items(layout, manifest, key) for t in item_texts(i)]
    assert needles
    assert [n for n in needles if n in rendered] == []


def test_screenshot_artifacts_stay_out_of_git() -> None:
    assert ".evalsuite/" in (REPO / ".gitignore").read_text()
    assert Path(ARTIFACTS).is_relative_to(REPO / ".evalsuite")
