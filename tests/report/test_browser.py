"""The report in a real browser: headless Chromium renders it offline, with every figure and
no console error; a screenshot is saved; the rendered page holds no holdout text.

The report is the demo's on a smaller scale: baseline and improved on the `support` holdout,
plus a run with injected faults, so that the invalid-run banner shows too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from evalsuite._core.layout import Layout
from evalsuite.manifest import KeySpec, item_texts, load_holdout_items, load_manifest, resolve_key
from tests.e2e.conftest import copy_project
from tests.helpers import REPO, Project, json_out

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


def _demo_like_report(tmp_path: Path) -> tuple[Project, Path]:
    project = copy_project(tmp_path / "project")
    runs = []
    for model, extra in (
        ("evalsuite/baseline", ()),
        ("evalsuite/improved", ()),
        ("evalsuite/improved", ("--inject-faults", "0.3")),
    ):
        result = project.invoke(
            "run", "support@1.0.0", "--split", "holdout", "--model", model, "--limit", "36",
            "--epochs", "2", "--no-progress", "--json", "--override-reason", "browser test",
            *extra,
        )  # fmt: skip
        assert result.exit_code in (0, 5), result.stderr
        runs.append(json_out(result)["run_id"])
    out = tmp_path / "report"
    # 36 of the holdout items: partial runs, compared only because we ask for it
    result = project.invoke("report", *runs, "--allow-partial", "--out", str(out))
    assert result.exit_code == 0, result.stderr
    return project, out


def _holdout_texts(project: Project) -> list[str]:
    layout = Layout(project.root)
    manifest = load_manifest(layout, "support")
    keys = KeySpec(key_dir=project.key_dir)
    key = resolve_key("support", manifest.key, manifest.canary, keys, create=False)
    return [
        t for _, i in load_holdout_items(layout, manifest, key) for t in item_texts(i)
        if len(t) >= 12
    ]  # fmt: skip


@pytest.mark.slow  # about 50 s: `make slow`, which CI runs after `make test`
@pytest.mark.browser
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    executable = _require_browser()
    from playwright.sync_api import sync_playwright

    project, out = _demo_like_report(tmp_path)
    problems: list[str] = []
    requested: list[str] = []

    def on_console(message: object) -> None:
        kind = getattr(message, "type", "")
        if kind in ("error", "warning"):
            problems.append(f"console {kind}: {getattr(message, 'text', '')}")

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=FLAGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", on_console)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
        page.on("request", lambda r: requested.append(r.url))
        page.goto((out / "index.html").resolve().as_uri(), wait_until="load")
        figures = page.eval_on_selector_all(
            "figure[data-figure]",
            """els => els.map(e => {
                const svg = e.querySelector('svg');
                const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
                return [e.dataset.figure, box.width, box.height];
            })""",
        )
        banner_visible = page.locator("#invalid-banner").is_visible()
        partial_visible = page.locator("#partial-banner").is_visible()
        sections = {s: page.locator(f"#{s}").is_visible() for s in ("runs", "comparisons")}
        health_tables = page.locator("table.health").count()
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
    assert partial_visible
    assert sections == {"runs": True, "comparisons": True}
    assert health_tables == 3
    assert screenshot.stat().st_size > 20_000
    needles = _holdout_texts(project)
    assert needles
    assert [n for n in needles if n in rendered] == []


def test_screenshot_artifacts_stay_out_of_git() -> None:
    assert ".evalsuite/" in (REPO / ".gitignore").read_text()
    assert Path(ARTIFACTS).is_relative_to(REPO / ".evalsuite")
