"""The app in a real browser: Debian's chromium driven by Playwright, against `ablate app --users` on a free port.

One app serves every test of this module: an experiment whose reference version (applied from a
correction, as a listener could type it) holds Markdown, LaTeX, HTML and an image link, and a
users file with two leads, three annotators and a transcriber. Each login gets a fresh browser
profile. The tests cover the keyboard-only decision (counting keys), a reload that keeps the
draft and the session, roles, independent listeners, agreement on the results page, plain-text
rendering (no request leaves for the image), audio refused without a session, and the login
backoff. Set ABLATE_SCREENSHOTS=DIR to keep a 1400x900 screenshot of every page.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from adjudication_fixture import build_experiment, excuse
from app_server import app_command, free_port, serving, stop
from chromium_flags import CHROMIUM_ARGS

from toolkit.adjudication.apply import apply_decisions
from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.context import open_experiment
from toolkit.adjudication.users import add_user

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
ARGS = [*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"]
PASSWORD = "segredo123"
USERS = {
    "lia": "lead",
    "mara": "lead",
    "ana": "annotator",
    "beto": "annotator",
    "carla": "annotator",
    "tina": "transcriber",
}
VIEWPORT = {"width": 1400, "height": 900}


class _Pixel(http.server.BaseHTTPRequestHandler):
    """Counts every request: an image link rendered as an image would make the browser ask here."""

    hits: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the handler's protocol
        _Pixel.hits.append(self.path)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args) -> None:  # noqa: ANN002
        pass


@pytest.fixture(scope="module")
def pixel():
    server = http.server.HTTPServer(("127.0.0.1", 0), _Pixel)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()


@pytest.fixture(scope="module")
def app(tmp_path_factory, pixel):
    """`ablate app --users` on a free localhost port over a reference version holding hostile text."""
    root = tmp_path_factory.mktemp("browser")
    exp = build_experiment(root)
    hostile = f"**md** R$ 5 … R$ 10 ![x](http://127.0.0.1:{pixel}/pixel.png) <b>b</b> $x^2$"
    adjudication = open_experiment(exp)
    adjudication.decide(
        recording_id="reuniao", start=6.0, end=9.0, action="correct", annotator="setup", new_text=hostile
    )
    version = apply_decisions(adjudication, "setup").out_dir
    users = root / "users.json"
    for name, role in USERS.items():
        add_user(users, name, PASSWORD, role=role)
    excuse(exp, [name for name, role in USERS.items() if role == "annotator"])  # nobody transcribes these blind
    port = free_port()
    command, env = app_command(exp, users, port, "--manifest", str(version / "manifest.json"))
    with serving(command, port, env, root / "app.log") as server:  # the last test stops it itself
        yield {"url": f"http://127.0.0.1:{port}", "exp": exp, "root": root, "hostile": hostile, "server": server}


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as running:
        yield running


@contextmanager
def _browser(playwright, app, name: str):
    """A fresh chromium profile; every request that leaves the app is recorded."""
    profile = app["root"] / f"profile-{name}-{time.monotonic_ns()}"
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=ARGS, viewport=VIEWPORT
    )
    context.outside = []
    context.on(
        "request",
        lambda r: context.outside.append(r.url) if not r.url.startswith((app["url"], "blob:", "data:")) else None,
    )
    try:
        yield context
    finally:
        context.close()


def _login(context, app, name: str, landing: str = "Fila de revisão"):  # noqa: ANN001, ANN202
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(app["url"])
    page.get_by_label("Nome").fill(name)
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_label("Senha").press("Enter")
    page.get_by_role("heading", name=landing).wait_for(timeout=60000)
    deadline = time.monotonic() + 30  # the page trades its session token for the HttpOnly cookie
    while not any(c["name"].startswith("ablate_session_") and c["httpOnly"] for c in context.cookies()):
        assert time.monotonic() < deadline, "no session cookie"
        page.wait_for_timeout(100)
    return page


def _settled(page) -> None:  # noqa: ANN001
    """Wait until the page has finished its run (no placeholder left) and its audio has loaded."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton]') && [...document.querySelectorAll("
        "'[data-testid=ab-audio]')].every(a => a.readyState >= 1)",
        timeout=60000,
    )
    page.wait_for_timeout(1500)


def _shot(page, name: str) -> None:  # noqa: ANN001
    """A 1400x900 screenshot into $ABLATE_SCREENSHOTS, once the page has settled."""
    folder = os.environ.get("ABLATE_SCREENSHOTS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        _settled(page)
        page.screenshot(path=str(Path(folder) / f"{name}.png"))


def _desk(page, app):  # noqa: ANN001, ANN202
    page.goto(f"{app['url']}/review")
    page.get_by_test_id("ab-desk").wait_for(timeout=60000)
    return page


def _position(page) -> str:  # noqa: ANN001
    return page.get_by_test_id("ab-position").inner_text()


def _flash(page) -> str:  # noqa: ANN001
    flash = page.get_by_test_id("ab-flash")
    return flash.inner_text() if flash.count() else ""


def _saved(page, before: str) -> dict:  # noqa: ANN001
    """Wait for the desk to report a newly saved decision (a flash other than ``before``)."""
    page.wait_for_function(
        "b => { const f = document.querySelector('[data-testid=ab-flash]');"
        " return f && f.innerText.includes('gravada') && f.innerText !== b }",
        arg=before,
        timeout=30000,
    )
    flash = page.get_by_test_id("ab-flash")
    return {"text": flash.inner_text(), "server_ms": float(flash.get_attribute("data-server-ms") or "nan")}


def _export(app) -> list[dict]:  # noqa: ANN001
    """Every decision but the one the fixture made to plant the hostile reference."""
    out = subprocess.run(
        [sys.executable, "-m", "toolkit", "decisions", "export", str(app["exp"]), "--format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    return [row for row in json.loads(out.stdout) if row["annotator"] != "setup"]


class _Keys:
    """The keyboard, counting every key pressed outside typed text."""

    def __init__(self, page) -> None:  # noqa: ANN001
        self.page = page
        self.pressed: list[str] = []

    def press(self, key: str) -> None:
        self.pressed.append(key)
        self.page.keyboard.press(key)

    def edit(self, text: str) -> None:
        """A text edit: typing (the characters are the edit, not key presses)."""
        self.page.keyboard.type(text)


def test_keyboard_only_keep_and_correction_a_reload_keeps_draft_and_session(playwright, app):
    with _browser(playwright, app, "ana") as context:
        page = _desk(_login(context, app, "ana"), app)
        assert _position(page) == "1 / 12"
        _shot(page, "review")
        # play the stretch with the keyboard; the player stays in view after scrolling
        page.wait_for_function("document.querySelector('[data-testid=ab-audio]').readyState >= 1", timeout=30000)
        duration = page.get_by_test_id("ab-audio").evaluate("a => a.duration")
        assert 6.5 < duration < 7.5  # the 1-4 s stretch with 3 s of context each side, clamped at 0 s
        page.keyboard.press("Space")
        page.wait_for_function("document.querySelector('[data-testid=ab-audio]').currentTime > 0.2", timeout=20000)
        page.keyboard.press("Space")
        page.evaluate("document.querySelector('[data-testid=stMain]').scrollTo(0, 10000)")
        box = page.get_by_test_id("ab-play").bounding_box()
        assert box is not None and 0 <= box["y"] < VIEWPORT["height"]

        keys = _Keys(page)
        keys.press("1")
        keys.press("Enter")
        keep = _saved(page, "")
        assert keys.pressed == ["1", "Enter"] and "Manter a referência" in keep["text"]
        assert _position(page) == "2 / 12"  # saved and moved on to the next stretch open for ana

        keys = _Keys(page)
        keys.press("2")  # Correct: the cursor goes to the end of the text, the edit begins
        keys.edit(" mesmo")
        keys.press("Enter")
        correction = _saved(page, keep["text"])
        assert keys.pressed == ["2", "Enter"] and "Corrigir" in correction["text"]

        # an edit under Keep asks before anything is stored
        page.keyboard.press("1")
        page.get_by_test_id("ab-text").focus()
        page.keyboard.type(" talvez")
        page.keyboard.press("Escape")
        page.keyboard.press("Enter")
        page.get_by_test_id("ab-ask").wait_for()
        assert len(_export(app)) == 2
        page.keyboard.press("Escape")

        # a draft survives a reload, and so does the session and the place in the queue
        position = _position(page)
        page.keyboard.press("j")
        page.wait_for_function(f"document.querySelector('[data-testid=ab-position]').innerText !== '{position}'")
        position = _position(page)
        page.keyboard.press("2")
        page.keyboard.type(" rascunho")
        page.wait_for_timeout(1200)  # the draft is sent 0.4 s after the last change
        page.reload()
        page.get_by_test_id("ab-desk").wait_for(timeout=60000)
        assert page.get_by_label("Senha").count() == 0
        assert _position(page) == position
        assert page.get_by_test_id("ab-text").input_value().endswith(" rascunho")
        assert page.get_by_test_id("ab-restored").count() == 1
        assert context.outside == []
    rows = _export(app)
    assert [(r["annotator"], r["action"]) for r in rows] == [("ana", "keep"), ("ana", "correct")]
    assert rows[1]["new_text"].endswith(" mesmo")
    print(f"server time per decision: keep {keep['server_ms']} ms, correction {correction['server_ms']} ms")


def test_independent_listeners_and_a_lead_who_settles_and_applies(playwright, app):
    with _browser(playwright, app, "carla") as context:
        page = _desk(_login(context, app, "carla"), app)
        page.get_by_role("combobox", name="Trecho").click()
        page.get_by_role("option").filter(has_text="entre braços").filter(has_text="14,50–14,90").click()
        page.wait_for_function("document.querySelector('[data-testid=ab-position]').innerText.startsWith('6 ')")
        page.keyboard.press("2")
        page.keyboard.type("dão")  # "mercado" becomes "mercadodão": a correction of the turn
        page.keyboard.press("Enter")
        _saved(page, "")
    with _browser(playwright, app, "beto") as context:
        page = _desk(_login(context, app, "beto"), app)
        page.get_by_role("combobox", name="Trecho").click()
        page.get_by_role("option").filter(has_text="entre braços").filter(has_text="14,50–14,90").click()
        page.wait_for_function("document.querySelector('[data-testid=ab-position]').innerText.startsWith('6 ')")
        assert "Outro ouvinte já decidiu" in page.get_by_test_id("ab-hidden").inner_text()
        assert "mercadodão" not in page.get_by_test_id("ab-desk").inner_text()  # carla's text stays hidden
        _shot(page, "review_second_listener")
        page.keyboard.press("1")
        page.keyboard.press("Enter")
        _saved(page, "")
        page.keyboard.press("k")
        page.wait_for_function("document.querySelector('[data-testid=ab-position]').innerText.startsWith('6 ')")
        assert "mercadodão" in page.get_by_test_id("ab-history").inner_text()  # now that beto decided
        links = [link.inner_text() for link in page.get_by_test_id("stSidebarNav").get_by_role("link").all()]
        assert "Conflitos e aplicação" not in links
    with _browser(playwright, app, "tina") as context:
        page = _login(context, app, "tina", landing="Transcrição às cegas")
        assert page.get_by_test_id("stSidebarNav").count() == 0  # one page: no navigation at all
        assert "mercador" not in page.get_by_test_id("stMain").inner_text()
        page.get_by_test_id("ab-play").wait_for(timeout=60000)  # the stretches are cut (Silero ran once)
        _shot(page, "blind")
        page.goto(f"{app['url']}/review")
        page.get_by_role("heading", name="Transcrição às cegas").wait_for(timeout=30000)
    with _browser(playwright, app, "lia") as context:
        page = _login(context, app, "lia")
        _shot(page, "queue_lead")
        page.goto(f"{app['url']}/conflicts")
        page.get_by_role("heading", name="Conflitos e aplicação").wait_for(timeout=30000)
        apply = page.get_by_role("button", name="Aplicar as decisões")
        assert apply.is_disabled()
        page.get_by_test_id("stRadio").filter(has_text="mercadodão").first.wait_for(timeout=30000)  # each side named
        _shot(page, "conflicts")
        for settled_text, choice in (
            ("mercadodão", "Como beto: Manter a referência"),  # carla and beto disagree
            ("João vem mesmo", "Como ana: Corrigir"),  # ana's keep and correction of one turn
        ):
            form = page.get_by_test_id("stForm").filter(has_text=settled_text).first
            form.get_by_text(choice).click()
            form.get_by_role("button", name="Resolver este trecho").click()
            page.get_by_text("Resolvido com a decisão").wait_for(timeout=30000)
        page.get_by_role("button", name="Aplicar as decisões").click()
        applied = page.get_by_text("references/v002-").first
        applied.wait_for(timeout=30000)
        assert str(app["exp"]) not in page.get_by_test_id("stMain").inner_text()
    settled = [r for r in _export(app) if r["role"] == "settlement"]
    assert [(r["annotator"], r["action"]) for r in settled] == [("lia", "keep"), ("lia", "correct")]
    versions = sorted(p.name for p in (app["exp"] / "references").iterdir())
    assert len(versions) == 2 and versions[1].startswith("v002-")


def test_agreement_is_measured_on_the_results_page(playwright, app):
    transcripts = TranscriptStore(app["exp"] / "adjudication.sqlite", app["exp"])
    # two listeners whose blind pass of reuniao is open (a closed pass, as the annotators' here, takes no segment)
    for who, text in (("tina", "a Maria chegou cedo hoje"), ("davi", "a Maria chegou muito cedo")):
        transcripts.save(recording_id="reuniao", annotator=who, start=1.0, end=4.0, duration=20.0, text=text)
    with _browser(playwright, app, "mara") as context:
        page = _login(context, app, "mara")
        page.goto(f"{app['url']}/results")
        page.get_by_text("κ indefinido").wait_for(timeout=60000)  # the last line of the page
        text = page.get_by_test_id("stMain").inner_text()
        assert "WER entre ouvintes 40,0% em 1 trecho(s)" in text  # 2 errors over tina's 5 words
        assert "trecho(s) com dois ouvintes" in text  # decisions: 2 stretches decided by two listeners
        _shot(page, "results")
        page.get_by_text("Concordância entre ouvintes").scroll_into_view_if_needed()
        _shot(page, "results_agreement")
        page.goto(f"{app['url']}/conflicts")
        page.get_by_text("WER entre ouvintes 40,0%").wait_for(timeout=60000)


def test_text_is_shown_as_typed_nothing_is_fetched_and_audio_needs_a_session(playwright, app, pixel):
    hostile = app["hostile"]
    with _browser(playwright, app, "stranger") as context:
        page = context.new_page()
        for path in ("/api/audio?recording=entrevista&start=1&end=4&context=3", "/media/anything.wav"):
            assert page.request.get(app["url"] + path).status == 403
        assert page.request.put(app["url"] + "/api/draft", data="{}").status == 403
    with _browser(playwright, app, "mara") as context:
        page = _desk(_login(context, app, "mara"), app)
        assert page.request.get(app["url"] + "/api/audio?recording=entrevista&start=1&end=4&context=3").status == 200
        page.get_by_role("combobox", name="Trecho").click()
        page.get_by_role("option", name="reuniao").first.click()
        page.wait_for_function("document.querySelector('[data-testid=ab-desk]').innerText.includes('R$ 10')")
        reference = page.get_by_test_id("ab-reference").inner_text()
        assert reference == hostile
        _shot(page, "review_plain_text")
        page.goto(f"{app['url']}/queue")
        page.get_by_role("heading", name="Fila de revisão").wait_for()
        for where in ("review", "conflicts", "results", "queue", "blind"):
            page.goto(f"{app['url']}/{where}")
            page.get_by_test_id("stMain").get_by_role("heading").first.wait_for(timeout=60000)
            _settled(page)
            main = page.get_by_test_id("stMain")
            assert main.locator("strong:has-text('md'), b:has-text('b'), img, .katex").count() == 0, where
        assert context.outside == [] and _Pixel.hits == []


def _try_password(page, password: str) -> str:  # noqa: ANN001
    page.get_by_label("Nome").fill("carla")
    page.get_by_label("Senha").fill(password)
    page.get_by_label("Senha").press("Enter")
    page.wait_for_timeout(1200)  # the answer of this try, not the message of the one before
    return " ".join(e.inner_text() for e in page.get_by_test_id("stAlertContentError").all())


def test_wrong_passwords_make_the_next_try_wait(playwright, app):
    with _browser(playwright, app, "lockout") as context:
        page = context.new_page()
        page.goto(app["url"])
        wait = 0.0
        for _ in range(10):  # the first tries are free, then each must wait twice as long as the one before
            answer = _try_password(page, "errada-de-novo")
            held = re.search(r"Espere ([\d,]+) s", answer)  # a decimal comma, in Portuguese
            wait = float(held.group(1).replace(",", ".")) if held else 0.0
            if wait >= 2.0:
                break
            page.wait_for_timeout(1000 * wait + 100)
        assert wait >= 2.0, "wrong passwords were never held back"
        assert "Tentativas demais" in _try_password(page, PASSWORD)  # the right one, while the name waits
        assert page.get_by_role("heading", name="Fila de revisão").count() == 0
        _shot(page, "login_backoff")


def test_a_stopped_server_is_reported_as_such_not_as_a_missing_internet(playwright, app):
    """Runs last: it stops the module's app."""
    with _browser(playwright, app, "offline") as context:
        page = _login(context, app, "ana")
        stop(app["server"])
        dialog = page.get_by_role("dialog")
        dialog.get_by_text("O servidor do app não responde").wait_for(timeout=60000)
        assert "internet" not in dialog.inner_text() and "streamlit run" not in dialog.inner_text()
        assert "Sem conexão com o app" in dialog.inner_text()
        _shot(page, "server_stopped")
