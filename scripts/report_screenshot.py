"""Save the first screen (1400×900) of a run's report.html as a PNG, in Debian's chromium.

    .venv/bin/python scripts/report_screenshot.py \
        experiments/demo/runs/holdout-*/report.html docs/img/report-first-screen.png

Used for the documentation's picture of the report; the tests check the same first screen.
"""

from __future__ import annotations

import sys
from pathlib import Path

from playwright.sync_api import sync_playwright

CHROMIUM = "/usr/bin/chromium"


def main(report: str, picture: str) -> None:
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = browser.new_page(viewport={"width": 1400, "height": 900})
        page.goto(Path(report).resolve().as_uri())
        page.screenshot(path=picture)
        browser.close()


if __name__ == "__main__":
    main(*sys.argv[1:3])
