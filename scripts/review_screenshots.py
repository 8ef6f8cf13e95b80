"""Write docs/images/review-list.png and review-transcript.png from a real review session.

The same steps as the browser test (tests/review/test_web_browser.py) on the support runs:
dev runs of the offline improved and baseline agents in a throwaway copy of the project,
`evalsuite review` serving them, headless Chromium searching, filtering and labelling 10
attempts with the keyboard; the list is captured first, the transcript after the labels.

Run: ``PYTHONPATH=. .venv/bin/python scripts/review_screenshots.py`` (needs `chromium`).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from tests.report.test_browser import FLAGS, _require_browser
from tests.review.test_web_browser import make_runs, review_family

IMAGES = Path(__file__).resolve().parents[1] / "docs" / "images"


def main() -> None:
    """Make the runs, review them in Chromium, save the two screenshots."""
    from playwright.sync_api import sync_playwright

    executable = _require_browser()
    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        reviewed = make_runs(Path(tmp) / "project")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=executable, args=FLAGS)
            review_family(browser, reviewed, "support", IMAGES)
            browser.close()
    for name in ("review-list.png", "review-transcript.png"):
        print(IMAGES / name)


if __name__ == "__main__":
    main()
