"""The waveform view in a real browser: Debian's chromium driven by Playwright, against `ablate app --users`.

One app serves the module (the fixture experiment, one annotator and one transcriber). The
review page's player shows the clip's waveform and spectrogram with the stretch's span and
the word lanes; a click seeks the audio; keys alone select an interval and store it as
non-speech, which survives a reload and is in the listener's transcription TextGrid, where
the scorer reads it; a boundary moved with the keys or dragged with the mouse is stored too.
The blind page shows the waveform with the listener's own lane only. ABLATE_SCREENSHOTS=DIR
keeps a 1366x768 screenshot of the view.
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path

import pytest
from adjudication_fixture import build_experiment, excuse
from app_server import app_command, free_port, serving
from chromium_flags import CHROMIUM_ARGS

from toolkit.adjudication.marks import MarkStore
from toolkit.adjudication.users import add_user
from toolkit.core.transcripts import NONSPEECH
from toolkit.formats import read_reference

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "segredo123"
VIEWPORT = {"width": 1366, "height": 768}
# The waveform view's objects, reached through the player's root element (ablate.js keeps it there).
WAVE = "document.querySelector('.ab-player').player.wave"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    root = tmp_path_factory.mktemp("waveform")
    exp = build_experiment(root)
    users = root / "users.json"
    add_user(users, "ana", PASSWORD, role="annotator")
    add_user(users, "tina", PASSWORD, role="transcriber")
    excuse(exp, ["ana"])
    port = free_port()
    command, env = app_command(exp, users, port)
    with serving(command, port, env, root / "app.log"):
        yield {"url": f"http://127.0.0.1:{port}", "exp": exp, "root": root}


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as running:
        yield running


@contextmanager
def _page(playwright, app, name: str, landing: str):
    """A fresh chromium profile logged in as ``name``; every request that leaves the app is recorded."""
    profile = app["root"] / f"profile-{name}-{time.monotonic_ns()}"
    context = playwright.chromium.launch_persistent_context(
        str(profile),
        executable_path=str(CHROMIUM),
        headless=True,
        args=[*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"],
        viewport=VIEWPORT,
    )
    outside: list[str] = []
    context.on("request", lambda r: None if r.url.startswith((app["url"], "blob:", "data:")) else outside.append(r.url))
    try:
        page = context.pages[0] if context.pages else context.new_page()
        page.goto(app["url"])
        page.get_by_label("Nome").fill(name)
        page.get_by_label("Senha").fill(PASSWORD)
        page.get_by_label("Senha").press("Enter")
        page.get_by_role("heading", name=landing).wait_for(timeout=60000)
        deadline = time.monotonic() + 30
        while not any(c["name"].startswith("ablate_session_") for c in context.cookies()):
            assert time.monotonic() < deadline, "no session cookie"
            page.wait_for_timeout(100)
        yield page
        assert outside == []  # the waveform's scripts are the app's own: nothing is fetched elsewhere
    finally:
        context.close()


def _wave_ready(page) -> None:  # noqa: ANN001
    page.wait_for_function(
        "() => { const w = document.querySelector('[data-testid=ab-wave]'); return w && w.dataset.ready === 'true' }",
        timeout=60000,
    )


def _marks(page) -> list[dict]:  # noqa: ANN001
    return page.evaluate(f"{WAVE}.marks")


def _shot(page, name: str) -> None:  # noqa: ANN001
    folder = os.environ.get("ABLATE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.wait_for_timeout(1000)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def test_the_stretch_on_screen_a_click_seeks_and_keys_store_a_nonspeech_interval(playwright, app):
    with _page(playwright, app, "ana", "Fila de revisão") as page:
        page.goto(f"{app['url']}/review")
        page.get_by_test_id("ab-desk").wait_for(timeout=60000)
        _wave_ready(page)
        # the waveform and the spectrogram are drawn for the clip the player plays
        clip = page.evaluate(
            f"() => {{ const w = {WAVE}; const p = w.player;"
            " const r = w.regions.getRegions().find(x => x.id === 'ab-span'); const peaks = w.ws.exportPeaks()[0];"
            " return {recording: p.audio.recording, duration: w.ws.getDuration(), audio: p.sound.duration,"
            " clipStart: p.clipStart, stretch: [p.audio.start, p.audio.end], span: [r.start, r.end],"
            " peaks: peaks.length, loud: Math.max(...peaks.map(Math.abs))} }"
        )
        assert clip["duration"] == pytest.approx(clip["audio"], abs=0.05)
        stretch = [t - clip["clipStart"] for t in clip["stretch"]]
        assert clip["span"] == pytest.approx(stretch, abs=1e-3)  # the stretch's span, in the clip's own time
        assert clip["peaks"] > 100 and 0.15 < clip["loud"] < 0.3  # the decoded clip: the fixture turn is a 0.2 sine
        spectrum = page.get_by_test_id("ab-wave-spectrum").locator("canvas")
        assert spectrum.count() >= 1 and spectrum.first.bounding_box()["height"] > 30
        lanes = page.locator(".ab-lane")
        assert lanes.first.get_attribute("data-lane") == "referência"
        assert lanes.count() == 4  # the reference and the run's three arms, each with its timed words
        assert page.locator(".ab-lane[data-lane=vad] .ab-lane-word").count() > 0

        # a click on the waveform seeks the player's audio there
        box = page.get_by_test_id("ab-wave-canvas").bounding_box()
        page.mouse.click(box["x"] + 0.75 * box["width"], box["y"] + box["height"] / 2)
        page.wait_for_timeout(300)
        at = page.get_by_test_id("ab-audio").evaluate("a => a.currentTime")
        assert at == pytest.approx(0.75 * clip["duration"], abs=0.15)

        # keys alone: m, move the cursor 0.5 s back, m, x: a non-speech interval is stored
        page.locator("body").press("Escape")
        page.evaluate("document.activeElement && document.activeElement.blur()")
        page.keyboard.press("m")
        for _ in range(5):
            page.keyboard.press("ArrowLeft")
        page.keyboard.press("m")
        page.keyboard.press("x")
        page.wait_for_function(f"{WAVE}.marks.length === 1", timeout=15000)
        (mark,) = _marks(page)
        expected = (clip["clipStart"] + at - 0.5, clip["clipStart"] + at)
        assert mark["kind"] == NONSPEECH and (mark["start"], mark["end"]) == pytest.approx(expected, abs=0.02)
        assert page.locator("[data-testid=ab-mark][data-kind=nonspeech]").count() == 1

        # b picks its first boundary, three '.' move it 30 ms later: stored as a mark that replaces it
        page.keyboard.press("b")
        for _ in range(3):
            page.keyboard.press(".")
        page.wait_for_function(f"a => {WAVE}.marks[0].id !== a", arg=mark["id"], timeout=15000)
        (moved,) = _marks(page)
        assert moved["start"] == pytest.approx(mark["start"] + 0.03, abs=0.002) and moved["end"] == mark["end"]
        _shot(page, "waveform")

        # a reload keeps it: the store is the place of record
        page.reload()
        page.get_by_test_id("ab-desk").wait_for(timeout=60000)
        _wave_ready(page)
        assert [(m["id"], m["kind"]) for m in _marks(page)] == [(moved["id"], NONSPEECH)]
        assert page.locator("[data-testid=ab-mark][data-kind=nonspeech]").count() == 1

        # the mouse: dragging the mark's end handle 40 px to the right stores its new end
        handle = page.locator("[data-testid=ab-mark] [part~=region-handle-right]")
        hb = handle.bounding_box()
        page.mouse.move(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
        page.mouse.down()
        page.mouse.move(hb["x"] + 40, hb["y"] + hb["height"] / 2, steps=8)
        page.mouse.up()
        page.wait_for_function(f"a => {WAVE}.marks[0].id !== a", arg=moved["id"], timeout=15000)
        (dragged,) = _marks(page)
        assert dragged["end"] - moved["end"] == pytest.approx(40 / box["width"] * clip["duration"], abs=0.05)

        # w: a selection early in the stretch's turn times the turn's first word
        turn = page.evaluate(f"{WAVE}.wave.lanes[0].turns").pop(0)
        first_word = turn["text"].split()[0]
        at = turn["start"] + 0.1 - clip["clipStart"]
        page.mouse.click(box["x"] + at / clip["duration"] * box["width"], box["y"] + box["height"] / 2)
        page.evaluate("document.activeElement && document.activeElement.blur()")
        for key in ("m", "ArrowRight", "ArrowRight", "m", "w"):
            page.keyboard.press(key)
        page.wait_for_function(f"{WAVE}.marks.length === 2", timeout=15000)
        word = next(m for m in _marks(page) if m["kind"] == "word")
        assert word["label"] == first_word and word["end"] - word["start"] == pytest.approx(0.2, abs=0.02)
    # the listener's transcription TextGrid holds it, in the tier the scorer reads
    exported = read_reference(app["exp"] / "transcriptions" / "ana" / f"{clip['recording']}.TextGrid")
    assert [(i.start, i.end) for i in exported.nonspeech()] == [(dragged["start"], dragged["end"])]
    assert [(w.text, w.start, w.end) for w in exported.words] == [(first_word, word["start"], word["end"])]
    history = MarkStore(app["exp"] / "adjudication.sqlite").current(clip["recording"], "ana")
    assert [m.id for m in history] == [dragged["id"], word["id"]]


def _stored_marks(app) -> int:  # noqa: ANN001
    with sqlite3.connect(MarkStore(app["exp"] / "adjudication.sqlite").path) as connection:
        return connection.execute("SELECT count(*) FROM marks").fetchone()[0]


def test_marks_are_refused_without_a_session(app):
    before = _stored_marks(app)
    request = urllib.request.Request(
        f"{app['url']}/api/marks",
        data=json.dumps({"recording": "entrevista", "kind": "nonspeech", "start": 1, "end": 2}).encode(),
        method="POST",
    )
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=10)
    assert refused.value.code == 403
    assert _stored_marks(app) == before


def test_the_blind_page_shows_the_waveform_with_the_listeners_own_lane_only(playwright, app):
    with _page(playwright, app, "tina", "Transcrição às cegas") as page:
        _wave_ready(page)
        assert [lane.get_attribute("data-lane") for lane in page.locator(".ab-lane").all()] == ["sua transcrição"]
        assert page.locator(".ab-lane-word").count() == 0  # no words of any arm, nor of the reference
        page.keyboard.press("m")
        page.keyboard.press("ArrowRight")
        page.keyboard.press("m")
        page.keyboard.press("f")
        page.wait_for_function(f"{WAVE}.marks.length === 1", timeout=15000)
        assert _marks(page)[0]["kind"] == "speech"
