"""The app in a real browser: Debian's chromium driven by Playwright, against `ablate app` on a free port.

Opens the app, plays a span, submits a decision and finds it in `ablate decisions export`; then two
browser contexts (two annotators) submit decisions at the same time and none is lost.
"""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from adjudication_fixture import build_experiment

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--autoplay-policy=no-user-gesture-required",
]
ROUNDS = 4


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture
def app(tmp_path):
    """`ablate app` on a fresh experiment, on a free localhost port; stopped (its process group) afterwards."""
    exp = build_experiment(tmp_path)
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ABLATE_APP_ANNOTATOR", None)
    log = (tmp_path / "app.log").open("w")
    server = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "app", str(exp), "--port", str(port)],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    break
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            server.kill()
            pytest.fail(f"the app did not start: {(tmp_path / 'app.log').read_text()[-2000:]}")
        time.sleep(0.5)
    try:
        yield url, exp
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        log.close()


def _export(exp: Path) -> list[dict]:
    out = subprocess.run(
        [sys.executable, "-m", "toolkit", "decisions", "export", str(exp), "--format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def _sign_in(page, url: str, name: str) -> None:  # noqa: ANN001 - playwright page
    page.goto(url)
    page.get_by_label("Your name").fill(name)
    page.get_by_role("button", name="Start").click()
    page.get_by_role("heading", name="Review queue").wait_for()
    page.get_by_role("link", name="Span review").click()
    page.get_by_role("heading", name="Span review").wait_for()
    page.get_by_role("button", name="Save decision").wait_for()


def _last_saved(page) -> str:  # noqa: ANN001
    saved = page.get_by_text(re.compile(r"Saved decision #\d+"))
    return saved.first.inner_text() if saved.count() else ""


def test_play_decide_export_and_two_annotators_at_once(app):
    url, exp = app
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            ana = browser.new_context().new_page()
            _sign_in(ana, url, "Ana")
            audio = ana.locator("audio").first
            audio.wait_for(state="attached")
            ana.wait_for_function("document.querySelector('audio').readyState >= 1", timeout=20000)
            duration = audio.evaluate("a => a.duration")
            assert 6.5 < duration < 7.5  # the 1-4 s span with 3 s of context each side, clamped at 0 s
            audio.evaluate("a => a.play()")
            ana.wait_for_function("document.querySelector('audio').currentTime > 0.3", timeout=20000)

            ana.get_by_text("Mark unresolved", exact=True).click()
            ana.get_by_label(re.compile("^Note")).fill("inaudível")
            ana.get_by_role("button", name="Save decision").click()
            ana.get_by_text("Saved decision #1 (unresolved) as first listener.").wait_for()
            [row] = _export(exp)
            assert (row["annotator"], row["action"], row["note"], row["recording_id"], row["start"], row["end"]) == (
                "Ana",
                "unresolved",
                "inaudível",
                "entrevista",
                1.0,
                4.0,
            )

            beto = browser.new_context().new_page()
            _sign_in(beto, url, "Beto")
            for _ in range(ROUNDS):
                before = (_last_saved(ana), _last_saved(beto))
                ana.get_by_role("button", name="Save decision").click()
                beto.get_by_role("button", name="Save decision").click()
                for page, previous in zip((ana, beto), before):
                    page.wait_for_function(
                        "previous => [...document.querySelectorAll('[data-testid=stAlertContentSuccess]')]"
                        ".some(e => e.innerText.includes('Saved decision #') && e.innerText !== previous)",
                        arg=previous,
                        timeout=30000,
                    )
        finally:
            browser.close()
    rows = _export(exp)
    assert len(rows) == 1 + 2 * ROUNDS
    assert sorted(r["annotator"] for r in rows) == ["Ana"] * (1 + ROUNDS) + ["Beto"] * ROUNDS
    assert {r["role"] for r in rows if r["annotator"] == "Beto"} == {"second"}
    assert len({r["id"] for r in rows}) == len(rows)
