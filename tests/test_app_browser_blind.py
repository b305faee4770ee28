"""Blindness per recording, blind drafts, plain-text addresses, the stretch alone, saving while the server is down,
and a neutral settling box: Debian's chromium driven by Playwright against `ablate app --users` on a free port.

One app serves the module, over an experiment whose arms say a word of their own in each recording
("mercador", "obrigado" in entrevista; "cedinho" in reuniao). Ana (annotator) has finished her blind
pass of reuniao and not of entrevista, so nothing the server sends her (every websocket frame, every
HTTP answer, on every page and route) may hold entrevista's model words, while reuniao's still
reach her. The last test stops the app and starts it again on the same port and store.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest
from adjudication_fixture import ARM_TEXT, TURNS, build_experiment
from app_server import app_command, free_port, serving, stop
from chromium_flags import CHROMIUM_ARGS

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import BlindPasses
from toolkit.adjudication.context import open_experiment
from toolkit.adjudication.queue import build_queue
from toolkit.adjudication.stretches import CACHE_FOLDER, recording_stretches, vad_config
from toolkit.adjudication.users import Login, add_user
from toolkit.audio.vad import SAMPLE_RATE
from toolkit.pipeline.cache import ResultCache, unenhanced_lineage, vad_key, write_vad_entry
from toolkit.pipeline.measure import measure
from toolkit.runs.folder import RunFolder

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
ARGS = [*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"]
PASSWORD = "segredo123"
USERS = {"lia": "lead", "mara": "lead", "ana": "annotator", "beto": "annotator", "tina": "transcriber"}
VIEWPORT = {"width": 1400, "height": 900}
BLIND_WORDS = ("mercador", "obrigado")  # only the arms say these, in entrevista (ana's blind pass is open)
SEEN_WORD = "cedinho"  # only an arm says this, in reuniao (ana's blind pass is finished)
ADDRESS = "http://exemplo.com/caminho"


@pytest.fixture(scope="module")
def app(tmp_path_factory):
    """`ablate app --users` over the experiment; ana finished reuniao blind, two listeners disagree twice."""
    root = tmp_path_factory.mktemp("blind-browser")
    said = {**ARM_TEXT, "vad": {**ARM_TEXT["vad"], ("reuniao", 1): "nós vamos votar amanhã cedinho"}}
    exp = build_experiment(root, arm_text=said)
    adj = open_experiment(exp)
    _speech_regions_cached(adj)
    transcripts = TranscriptStore(adj.store.path, exp)
    entry = adj.entry("reuniao")
    for stretch in recording_stretches(adj.experiment, entry).items:
        transcripts.save(
            recording_id="reuniao", annotator="ana", start=stretch.start, end=stretch.end, duration=entry.duration
        )
    BlindPasses(adj.store.path).finish(
        "reuniao", Login("ana", "annotator"), transcripts, recording_stretches(adj.experiment, entry).items
    )
    for who, text in (("ana", "a Maria chegou cedo hoje"), ("beto", "a Maria chegou muito cedo")):
        transcripts.save(recording_id="entrevista", annotator=who, start=6.0, end=9.0, duration=20.0, text=text)
    for who, action, text in (("ana", "correct", f"eu não sei {ADDRESS}"), ("beto", "keep", "")):
        adj.decide(recording_id="entrevista", start=1.0, end=4.0, action=action, annotator=who, new_text=text)
    users = root / "users.json"
    for name, role in USERS.items():
        add_user(users, name, PASSWORD, role=role)
    port = free_port()
    command, env = app_command(exp, users, port)
    with serving(command, port, env, root / "app.log") as server:
        state = {"url": f"http://127.0.0.1:{port}", "exp": exp, "root": root, "server": server, "port": port}
        state.update(command=command, env=env)
        yield state
        stop(state["server"])


def _speech_regions_cached(adj) -> None:  # noqa: ANN001
    """The fixture's turns are tones Silero does not call speech: put the turns in the experiment's VAD
    cache as its speech regions (as a run would have), so the blind page cuts several stretches."""
    cache = ResultCache(adj.experiment.folder / CACHE_FOLDER)
    for entry in adj.manifest.recordings:
        key = vad_key(unenhanced_lineage(entry.sha256, SAMPLE_RATE), vad_config(adj.experiment))
        with measure() as spent:
            regions = [(start, end) for start, end, _ in TURNS[entry.id]]
        write_vad_entry(cache, key, regions, spent)


@pytest.fixture(scope="module")
def playwright():
    with sync_api.sync_playwright() as running:
        yield running


@contextmanager
def _browser(playwright, app, name: str):
    """A fresh chromium profile that keeps every websocket frame and HTTP answer body the server sent."""
    profile = app["root"] / f"profile-{name}-{time.monotonic_ns()}"
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=ARGS, viewport=VIEWPORT
    )
    context.received = []

    def keep_frames(socket) -> None:  # noqa: ANN001
        socket.on("framereceived", lambda frame: context.received.append(_text(frame)))

    def keep_body(response) -> None:  # noqa: ANN001
        try:
            context.received.append(_text(response.body()))
        except Exception:  # noqa: BLE001 - a redirect or a body already gone has nothing to keep
            pass

    context.on("page", lambda page: page.on("websocket", keep_frames))
    context.on("response", keep_body)
    try:
        yield context
    finally:
        context.close()


def _text(payload: bytes | str) -> str:
    return payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload


def _login(context, app, name: str, landing: str = "Fila de revisão"):  # noqa: ANN001, ANN202
    page = context.pages[0] if context.pages else context.new_page()
    page.on("websocket", lambda socket: socket.on("framereceived", lambda f: context.received.append(_text(f))))
    page.goto(app["url"])
    page.get_by_label("Nome").fill(name)
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_label("Senha").press("Enter")
    page.get_by_role("heading", name=landing).wait_for(timeout=60000)
    deadline = time.monotonic() + 30
    while not any(c["name"].startswith("ablate_session_") and c["httpOnly"] for c in context.cookies()):
        assert time.monotonic() < deadline, "no session cookie"
        page.wait_for_timeout(100)
    return page


def _settled(page) -> None:  # noqa: ANN001
    """The page has finished its run (no placeholder, no running indicator) and its audio has loaded."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton]') && [...document.querySelectorAll("
        "'[data-testid=ab-audio]')].every(a => a.readyState >= 1)",
        timeout=90000,
    )
    page.wait_for_timeout(2500)


def _seen(context, since: int = 0) -> str:
    return "\n".join(context.received[since:])


def _blind_key(app) -> str:  # noqa: ANN001
    """A queue item of entrevista (a guessed address for a recording still blind to ana)."""
    queue = build_queue(RunFolder(app["exp"] / "runs" / "tuning-fixture"))
    return next(item.key for item in queue.items if item.recording_id == "entrevista" and item.timed)


def test_an_annotator_sees_no_model_output_of_a_recording_until_her_blind_pass_is_closed(playwright, app):
    with _browser(playwright, app, "lia-pages") as context:  # every page the app serves, from a lead's menu
        page = _login(context, app, "lia")
        _settled(page)
        links = page.get_by_test_id("stSidebarNav").get_by_role("link").all()
        paths = sorted({link.get_attribute("href").rsplit("/", 1)[-1] or "queue" for link in links})
        assert {"queue", "review", "blind", "results", "conflicts"} <= set(paths)
        assert all(word in _seen(context) for word in BLIND_WORDS)  # the check sees model words where sent
    key = _blind_key(app)
    addresses = [f"/{path}" for path in paths] + [
        f"/review?run=tuning-fixture&item={key}",
        f"/queue?run=tuning-fixture&item={key}",
        "/results?run=tuning-fixture",
        "/blind?recording=entrevista&at=0",
    ]
    with _browser(playwright, app, "ana") as context:
        page = _login(context, app, "ana")
        _settled(page)
        assert SEEN_WORD in _seen(context)  # reuniao's model output reaches her: her pass there is finished
        for address in addresses:
            before = len(context.received)
            page.goto(app["url"] + address)
            page.get_by_test_id("stMain").get_by_role("heading").first.wait_for(timeout=60000)
            _settled(page)
            shown = _seen(context, before)
            assert not [w for w in BLIND_WORDS if w in shown], address
            if address.startswith(("/queue", "/review")):
                assert SEEN_WORD in shown, address
        text = page.get_by_test_id("stMain").inner_text()
        assert "Transcrição às cegas" in text
        routes = [
            "/api/audio?recording=entrevista&start=1&end=4&context=3",
            "/api/audio?recording=entrevista&start=1&end=4&context=0",
            "/media/anything.wav",
            "/_stcore/health",
            "/_stcore/host-config",
            "/_stcore/metrics",
            "/_stcore/agent/openapi.json",
            "/_stcore/upload_file/x/y",
            "/component/anything",
            "/auth/login",
            "/static/anything",
        ]
        for route in routes:
            answer = page.request.get(app["url"] + route)
            body = answer.body().decode("utf-8", "replace")
            assert not [w for w in BLIND_WORDS if w in body], route
        for route, data in (("/api/draft", "{}"), ("/api/blind-draft", "{}"), ("/_stcore/agent/interact", "{}")):
            body = page.request.put(app["url"] + route, data=data).body().decode("utf-8", "replace")
            body += page.request.post(app["url"] + route, data=data).body().decode("utf-8", "replace")
            assert not [w for w in BLIND_WORDS if w in body], route
        assert not [w for w in BLIND_WORDS if w in _seen(context)]
        links = [link.inner_text() for link in page.get_by_test_id("stSidebarNav").get_by_role("link").all()]
        assert "Conflitos e aplicação" not in links
    with _browser(playwright, app, "lia-excuses") as context:  # a lead excuses ana from entrevista
        page = _login(context, app, "lia")
        page.goto(app["url"] + "/stages")
        page.get_by_role("heading", name="Transcrição às cegas: equipe").wait_for(timeout=60000)
        _settled(page)
        form = page.get_by_test_id("stForm")
        form.get_by_role("combobox").first.click()
        page.get_by_role("option", name="ana").click()
        form.get_by_role("combobox").nth(1).click()
        page.get_by_role("option", name="entrevista").click()
        page.keyboard.press("Escape")
        form.get_by_role("button", name="Dispensar").click()
        page.get_by_text("ana dispensado(a) de entrevista").wait_for(timeout=30000)
    with _browser(playwright, app, "ana-excused") as context:
        page = _login(context, app, "ana")
        _settled(page)
        assert all(word in _seen(context) for word in BLIND_WORDS)


def _conflicts(context, app):  # noqa: ANN001, ANN202
    page = _login(context, app, "mara")
    page.goto(app["url"] + "/conflicts")
    page.get_by_role("heading", name="Conflitos e aplicação").wait_for(timeout=60000)
    _settled(page)
    page.get_by_test_id("stRadio").filter(has_text="exemplo").first.wait_for(timeout=30000)
    return page


def test_a_typed_address_on_the_conflicts_page_is_plain_text(playwright, app):
    with _browser(playwright, app, "mara-links") as context:
        main = _conflicts(context, app).get_by_test_id("stMain")
        assert ADDRESS in main.inner_text().replace("\u2060", "")  # shown, as typed
        outside = main.locator("a[href^='http']:not([href*='127.0.0.1'])")
        assert outside.count() == 0, outside.first.get_attribute("href")


def test_the_settling_box_of_a_transcription_conflict_starts_empty(playwright, app):
    with _browser(playwright, app, "mara-settle") as context:
        page = _conflicts(context, app)
        transcribed = page.get_by_test_id("stForm").filter(has_text="Usar o texto de").first
        assert transcribed.get_by_role("textbox").first.input_value() == ""  # neither ana's nor beto's words first


def _played_past(page) -> float:  # noqa: ANN001
    """How far past the stretch's end (recording seconds) any audio element of the player got."""
    return page.evaluate(
        """end => Math.max(...[...document.querySelectorAll('audio')].map(a => {
            const start = Number(a.dataset.clipStart || 0); let last = 0;
            for (let i = 0; i < a.played.length; i++) last = Math.max(last, a.played.end(i));
            return a.played.length ? start + last - end : -Infinity; }))""",
        4.0,
    )


def test_the_stretch_alone_stops_at_the_stretch_end_even_on_a_busy_page(playwright, app):
    with _browser(playwright, app, "lia-player") as context:
        page = _login(context, app, "lia")
        page.goto(app["url"] + "/review?run=tuning-fixture")
        page.get_by_test_id("ab-desk").wait_for(timeout=60000)
        _settled(page)
        assert "1,00–4,00" in page.get_by_test_id("ab-desk").inner_text()  # the stretch 1-4 s
        # the page's own work (Streamlit redrawing a long page) holds the main thread 250 ms at a time
        page.evaluate("setInterval(() => { const t = performance.now(); while (performance.now() - t < 250) {} }, 260)")
        page.keyboard.press("s")
        page.wait_for_function("[...document.querySelectorAll('audio')].some(a => !a.paused)", timeout=10000)
        page.wait_for_function("[...document.querySelectorAll('audio')].every(a => a.paused)", timeout=20000)
        past = _played_past(page)
        # the stretch alone is a clip cut at the stretch (times to 1 ms in its address) and ends with its
        # samples, so no frame or timer decides the stop: 5 ms covers the rounding of the clip's edges
        assert past <= 0.005, f"played {past:.3f} s past the stretch"


def _blind_text(page):  # noqa: ANN001, ANN202
    return page.get_by_test_id("stForm").get_by_role("textbox").first


def _blind_stretch(context, app) -> tuple:  # noqa: ANN001
    """Tina on the blind page, on reuniao's last stretch, with text typed: the page and its address."""
    page = _login(context, app, "tina", landing="Transcrição às cegas")
    _settled(page)
    page.get_by_role("combobox", name="Gravação").click()
    page.get_by_role("option", name="reuniao").click()
    page.wait_for_function("location.search.includes('recording=reuniao')", timeout=30000)
    _settled(page)
    before = page.evaluate("location.search")
    page.get_by_role("combobox", name="Trecho").click()
    page.get_by_role("option").last.click()
    page.wait_for_function("b => location.search !== b", arg=before, timeout=30000)
    _settled(page)
    _blind_text(page).fill("a Maria chegou")
    page.keyboard.type(" cedo")
    page.wait_for_timeout(1500)  # the draft goes 0.4 s after the last change
    return page, page.evaluate("location.search")


def test_the_blind_page_keeps_its_draft_and_position_over_a_reload(playwright, app):
    with _browser(playwright, app, "tina") as context:
        page, where = _blind_stretch(context, app)
        page.reload()
        _settled(page)
        assert page.evaluate("location.search") == where
        assert _blind_text(page).input_value() == "a Maria chegou cedo"
        assert page.get_by_text("Rascunho recuperado").count() == 1


def test_a_save_while_the_server_is_down_is_reported_and_goes_through_once_after_a_restart(playwright, app):
    """Runs last: it stops the app and starts it again on the same port and store. The desk's save while
    the server is down says it was not saved and keeps the form; after the restart it is stored exactly
    once, and the blind page opens again on the stretch and text of the latest draft."""
    with _browser(playwright, app, "lia-desk") as desk:
        lia = _login(desk, app, "lia")
        lia.goto(app["url"] + "/review?run=tuning-fixture")
        lia.get_by_test_id("ab-desk").wait_for(timeout=60000)
        _settled(lia)
        lia.keyboard.press("1")
        lia.keyboard.press("Enter")  # one save before the outage: the desk's version count moves on
        lia.wait_for_function("document.querySelector('[data-testid=ab-flash]')?.innerText.includes('gravada')")
        lia.keyboard.press("2")
        lia.keyboard.type(" durante a queda")
        lia.wait_for_timeout(1000)
        stop(app["server"])
        lia.keyboard.press("Enter")
        lia.get_by_test_id("ab-save-error").wait_for(timeout=20000)
        assert "NÃO foi gravada" in lia.get_by_test_id("ab-save-error").inner_text()
        assert lia.get_by_test_id("ab-save").inner_text() != "Gravando…"
        assert lia.get_by_test_id("ab-text").input_value().endswith(" durante a queda")

        with serving(app["command"], app["port"], app["env"], app["root"] / "app-again.log") as server:
            app["server"] = server
            lia.wait_for_function("() => !document.querySelector('[role=dialog]')", timeout=90000)  # reconnected
            assert lia.get_by_test_id("ab-text").input_value().endswith(" durante a queda")
            lia.get_by_test_id("ab-text").press("Enter")
            lia.wait_for_function(
                "document.querySelector('[data-testid=ab-flash]')?.innerText.includes('Corrigir')", timeout=60000
            )
            with _browser(playwright, app, "tina-again") as context:  # no address: the latest draft's place
                page = _login(context, app, "tina", landing="Transcrição às cegas")
                _settled(page)
                assert "recording=reuniao" in page.evaluate("location.search")
                assert _blind_text(page).input_value() == "a Maria chegou cedo"
    export = [sys.executable, "-m", "toolkit", "decisions", "export", str(app["exp"]), "--format", "json"]
    rows = json.loads(subprocess.run(export, env=app["env"], capture_output=True, text=True, check=True).stdout)
    mine = [(row["action"], row["new_text"]) for row in rows if row["annotator"] == "lia"]
    # exactly once each: the browser sends its last save again when it reconnects, and that stores nothing
    assert len(mine) == 2 and mine[1][0] == "correct" and mine[1][1].endswith(" durante a queda"), mine
