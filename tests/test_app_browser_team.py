"""The lead's team page and the app's words in a real browser (Debian's chromium, Playwright, 1366x768).

One app (``ablate app --users``) serves the module: the fixture experiment with a gate verdict, a
blind transcription and decisions by two listeners, so every page has its tables and charts. The
tests: a lead adds, assigns and disables people on the team page, and a disabled login can neither
log in nor save; every page in pt-BR shows none of the English words the app once let through
and writes decimals with a comma; no page scrolls sideways or cuts a label at 1366x768.
Set ABLATE_SCREENSHOTS=DIR to keep a screenshot of the team page.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from adjudication_fixture import build_experiment, excuse, run_folder
from app_server import app_command, free_port, serving
from chromium_flags import CHROMIUM_ARGS

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.context import open_experiment
from toolkit.adjudication.store import DecisionStore
from toolkit.adjudication.users import add_user

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "segredo123"
USERS = {"lia": "lead", "mara": "lead", "ana": "annotator", "beto": "annotator", "tina": "transcriber"}
VIEWPORT = {"width": 1366, "height": 768}
PAGES = ("queue", "review", "blind", "conflicts", "results", "team", "stages")
# English the pt-BR pages once showed (Streamlit's own widget words, the gate table's texts, chart
# legends and the verdict); matched as whole words, case-sensitively where case tells them apart.
ENGLISH = (
    "Press Ctrl+Enter to submit form",
    "Choose an option",
    "speech",
    "(error)",
    "(substituted)",
    "arm",
    "None",
    "RETAIN BASELINE",
    "PROMOTE",
    "negation flips",
    "small set",
    "recording(s)",
    "reference words",
    "upper bound",
    "errors",
    "ref_words",
    "No results",
)
# Words only the English side of the catalogue uses (``app/i18n.py``): one on a Portuguese page is a
# string that did not go through the catalogue, or went through it untranslated. The fixture's own
# names (arms, the run) are data, not words of the app.
sys.path.insert(0, str(ROOT / "app"))
TEXT = pytest.importorskip("i18n", reason="the app's pages need streamlit (the app extra)").TEXT


def _words_of(text: str) -> set[str]:
    return set(re.findall(r"[^\W\d_]{4,}", text.lower()))


DATA = {"baseline", "windows", "tuning", "fixture", "vad"}
ENGLISH_ONLY = (
    set().union(*(_words_of(en) for _, en in TEXT.values())) - set().union(*(_words_of(pt) for pt, _ in TEXT.values()))
) - DATA
GATE = {
    "name": "new_negation_errors",
    "passed": False,
    "value": 1,
    "threshold": 0.0,
    "comparison": "<=",
    "instances": [{"recording": "entrevista", "time": 1.5}],
    "measures": "negation flips and insertions the baseline did not make",
    "applicable": True,
    "opportunities": 3,
    "note": "",
    "reason": "",
}
CAVEAT = (
    "tuning is 2 recording(s), 0.7 min, 24 reference words; a small pass cannot establish rare-failure "
    "reliability (new_name_errors: 0 failures in 40: exact one-sided 95% upper bound on the failure rate 7.2%)"
)


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """`ablate app --users` on a free port, over the fixture with a verdict, a blind transcription and decisions."""
    root = tmp_path_factory.mktemp("team")
    exp = build_experiment(root)
    run_folder(exp).write_gates(
        {
            "verdict": "RETAIN BASELINE",
            "challenger": "vad",
            "baseline": "baseline",
            "caveat": CAVEAT,
            "gates": [GATE, {**GATE, "name": "new_name_errors", "passed": True, "value": 0, "instances": []}],
            "holdout": {"recordings": 2, "minutes": 0.7, "reference_words": 24},
            "signature": "ablate-score:test",
            "split": "tuning",
        }
    )
    adjudication = open_experiment(exp)
    for who, action, text in (("ana", "keep", ""), ("beto", "correct", "eu não sei se o João vem mesmo")):
        adjudication.decide(recording_id="entrevista", start=1.0, end=4.0, action=action, annotator=who, new_text=text)
    transcripts = TranscriptStore(adjudication.store.path, exp)
    transcripts.save(
        recording_id="reuniao", annotator="ana", start=1.0, end=6.0, duration=20.0, text="a Maria chegou cedo hoje"
    )
    transcripts.save(  # what mara's blind page lists: times, a confirmed speech, an unresolved stretch
        recording_id="entrevista",
        annotator="mara",
        start=0.5,
        end=4.25,
        duration=20.0,
        text="eu não sei se o João vem",
        speech="speech",
        unresolved=(1.5, 2.25, "inaudível"),
    )
    users = root / "users.json"
    for name, role in USERS.items():
        add_user(users, name, PASSWORD, role=role)
    excuse(exp, [name for name, role in USERS.items() if role == "annotator"])
    port = free_port()
    command, env = app_command(exp, users, port)
    with serving(command, port, env, root / "app.log"):
        yield {"url": f"http://127.0.0.1:{port}", "exp": exp, "root": root, "users": users}


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    with sync_api.sync_playwright() as running:
        yield running


@contextmanager
def _browser(playwright: Any, app: dict[str, Any], name: str) -> Iterator[Any]:
    profile = app["root"] / f"profile-{name}-{time.monotonic_ns()}"
    context = playwright.chromium.launch_persistent_context(
        str(profile), executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT
    )
    try:
        yield context
    finally:
        context.close()


def _login(context: Any, app: dict[str, Any], name: str, landing: str = "Fila de revisão") -> Any:
    page = context.pages[0] if context.pages else context.new_page()
    page.goto(app["url"])
    page.get_by_label("Nome").fill(name)
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_label("Senha").press("Enter")
    page.get_by_role("heading", name=landing).wait_for(timeout=60000)
    deadline = time.monotonic() + 30  # the page trades its session token for the HttpOnly cookie
    while not any(c["name"].startswith("ablate_session_") for c in context.cookies()):
        assert time.monotonic() < deadline, "no session cookie"
        page.wait_for_timeout(100)
    return page


def _settled(page: Any) -> None:
    """The page has finished its run: no placeholder, spinner or stale element left, then a moment for charts."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton], [data-testid=stSpinner], [data-stale=true]')",
        timeout=120000,
    )
    page.wait_for_timeout(2500)


def _open(page: Any, app: dict[str, Any], where: str) -> None:
    """Open a page by its address (the queue, the default page, is the app's root: Streamlit ignores its path)."""
    page.goto(f"{app['url']}/{'' if where == 'queue' else where}")
    page.get_by_test_id("stMain").get_by_role("heading").first.wait_for(timeout=60000)
    _settled(page)


def _choose(page: Any, form: Any, index: int, option: str) -> None:
    """Pick ``option`` in the form's ``index``-th select box with the keyboard (typed, then Enter)."""
    form.get_by_test_id("stSelectbox").nth(index).click()
    page.keyboard.type(option)
    page.get_by_role("option", name=option, exact=True).wait_for(timeout=30000)
    page.keyboard.press("Enter")


def _words(page: Any) -> str:
    """Every word the page shows: its text, tooltips, placeholders, chart text (SVG) and table cells
    (the grid draws on a canvas, so its cells are read from the copy Streamlit keeps for screen readers).
    Not the labels only screen readers read (``aria-label``): Streamlit and Vega write their own in English."""
    return page.evaluate(
        """() => {
        const parts = [document.body.innerText];
        for (const e of document.querySelectorAll('[placeholder],[title]'))
            for (const a of ['placeholder', 'title']) parts.push(e.getAttribute(a) || '');
        for (const e of document.querySelectorAll('svg text, [role=gridcell], [role=columnheader]'))
            parts.push(e.textContent);
        return parts.join('\\n');
    }"""
    )


def test_a_lead_adds_assigns_and_disables_people_and_a_disabled_login_can_neither_log_in_nor_save(playwright, app):
    with _browser(playwright, app, "ana") as ana_context:
        ana = _login(ana_context, app, "ana")
        ana.goto(f"{app['url']}/review")  # her desk stays open while the lead disables her
        ana.get_by_test_id("ab-desk").wait_for(timeout=60000)
        with _browser(playwright, app, "lia") as context:
            page = _login(context, app, "lia")
            _open(page, app, "team")
            assert page.get_by_role("heading", name="Equipe", exact=True).count() == 1
            add = page.get_by_test_id("stForm").filter(has_text="Adicionar uma pessoa")
            add.get_by_label("Nome").fill("davi")
            add.get_by_label("Senha", exact=True).fill(PASSWORD)
            add.get_by_role("button", name="Adicionar").click()
            page.get_by_text("Login de davi (anotador(a)) gravado.").wait_for(timeout=30000)

            assign = page.get_by_test_id("stForm").filter(has_text="Atribuir")
            _choose(page, assign, 0, "ana")
            _choose(page, assign, 1, "reuniao")
            assign.get_by_role("button", name="Atribuir").click()
            page.get_by_text("reuniao (inteira) atribuído a ana.").wait_for(timeout=30000)

            state = page.get_by_test_id("stForm").filter(has_text="Desativar ou reativar")
            _choose(page, state, 0, "ana")
            state.get_by_role("button", name="Desativar").click()
            page.get_by_text("ana foi desativado(a)").wait_for(timeout=30000)
            _settled(page)
            history = _words(page)
            assert "desativado" in history and "atribuído: reuniao" in history
            if os.environ.get("ABLATE_SCREENSHOTS"):
                folder = Path(os.environ["ABLATE_SCREENSHOTS"])
                folder.mkdir(parents=True, exist_ok=True)
                page.set_viewport_size({"width": 1366, "height": 1150})  # the people, the forms, the assignments
                page.get_by_test_id("stMain").evaluate("m => m.scrollTo(0, 0)")
                page.wait_for_timeout(1000)
                page.screenshot(path=str(folder / "team.png"))
        # ana's open desk can no longer save (refused on the server), and the next page logs her out
        ana.keyboard.press("1")
        ana.keyboard.press("Enter")
        ana.get_by_label("Senha").wait_for(timeout=60000)  # the save's page run found the login disabled
        assert [d.annotator for d in DecisionStore(app["exp"] / "adjudication.sqlite").decisions()].count("ana") == 1
        ana.goto(app["url"])
        ana.get_by_label("Senha").wait_for(timeout=60000)  # and a new page asks for a login
        assert ana.get_by_role("heading", name="Fila de revisão").count() == 0
        ana.get_by_label("Nome").fill("ana")
        ana.get_by_label("Senha").fill(PASSWORD)
        ana.get_by_label("Senha").press("Enter")
        ana.get_by_text("Nome ou senha incorretos.").wait_for(timeout=30000)
        assert ana.request.get(f"{app['url']}/api/audio?recording=reuniao&start=1&end=2&context=0").status == 403
    with _browser(playwright, app, "davi") as context:  # the new login works, and sees its assignment first
        page = _login(context, app, "davi")
        assert "atribuído" not in _words(page)  # nothing assigned to davi
    users = app["users"].read_text(encoding="utf-8")
    assert '"ana"' in users and '"disabled": true' in users  # disabled, never deleted


def test_an_assigned_recording_comes_first_in_the_annotators_queue(playwright, app):
    with _browser(playwright, app, "mara") as context:
        page = _login(context, app, "mara")
        _open(page, app, "team")
        assign = page.get_by_test_id("stForm").filter(has_text="Atribuir")
        _choose(page, assign, 0, "beto")
        _choose(page, assign, 1, "reuniao")
        assign.get_by_role("button", name="Atribuir").click()
        page.get_by_text("reuniao (inteira) atribuído a beto.").wait_for(timeout=30000)
    with _browser(playwright, app, "beto") as context:
        page = _login(context, app, "beto")
        _settled(page)
        page.get_by_role("button", name="Próximo trecho aberto para você").click()
        page.get_by_test_id("ab-desk").wait_for(timeout=60000)
        assert "reuniao" in page.get_by_test_id("ab-desk").inner_text()


@pytest.mark.parametrize("where", PAGES)
def test_every_page_speaks_portuguese_with_decimal_commas(playwright, app, where):
    with _browser(playwright, app, f"words-{where}") as context:
        page = _login(context, app, "mara")
        _open(page, app, where)
        last = {"results": "Concordância entre ouvintes", "blind": "Sua transcrição de"}.get(where)
        if last:  # the end of the page: everything above it has been drawn
            page.get_by_text(last).first.wait_for(timeout=120000)
            _settled(page)
        words = _words(page)
        found = [w for w in ENGLISH if re.search(rf"(?<![\w(]){re.escape(w)}(?![\w)])", words)]
        found += [w for w in ENGLISH if w.startswith("(") and w in words]
        data = re.sub(r"\w*_\w*|\S+\.(json|html|csv|TextGrid)\b", " ", words)  # gate names, files: data
        found += sorted(_words_of(data) & ENGLISH_ONLY)
        assert not found, f"{where}: English on a pt-BR page: {found}"
        decimals = re.findall(r"(?<![\w.])\d+\.\d+(?![\w.])", words)  # 0.25, 12.5 (not versions, hashes or files)
        assert not decimals, f"{where}: decimal points on a pt-BR page: {decimals[:10]}"


@pytest.mark.parametrize("where", PAGES)
def test_nothing_scrolls_sideways_or_is_cut_at_1366x768(playwright, app, where):
    with _browser(playwright, app, f"layout-{where}") as context:
        page = _login(context, app, "lia")
        _open(page, app, where)
        grids = where != "results"  # the results' tables of figures may scroll inside their grid; no page does
        wide = page.evaluate(
            """grids => { const out = [];
            const s = document.scrollingElement; if (s.scrollWidth > s.clientWidth) out.push('page ' + s.scrollWidth);
            for (const e of document.querySelectorAll('[data-testid=stMain] *')) {
                const style = getComputedStyle(e);
                if (['auto', 'scroll'].includes(style.overflowX) && e.scrollWidth > e.clientWidth + 1
                    && (grids || !e.closest('[data-testid=stDataFrame]')))
                    out.push('scrolls: ' + (e.closest('[data-testid]') || e).getAttribute('data-testid'));
                if (style.textOverflow === 'ellipsis' && e.scrollWidth > e.clientWidth + 1 && e.innerText.trim())
                    out.push('cut: ' + e.innerText.trim().slice(0, 60));
            }
            return out; }""",
            grids,
        )
        assert not wide, f"{where} at 1366x768: {wide}"
