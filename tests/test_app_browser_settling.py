"""A lead settles conflicts in a real browser (Debian's chromium, Playwright), against `ablate app --users`.

Each test serves its own copy of the fixture experiment, with listeners' decisions saved through the
API: two listeners who disagree on a whole turn and on a stretch inside it (demo04's 21.52-24.61 s and
21.84-22.00 s, here on the fixture's first turn) leave one lead able to settle everything and apply;
a third listener of one stretch is named the third on the lead's page and in the export.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from adjudication_fixture import build_experiment
from app_server import app_command, free_port, serving
from chromium_flags import CHROMIUM_ARGS

from toolkit.adjudication.context import open_experiment
from toolkit.adjudication.users import add_user

sync_api = pytest.importorskip("playwright.sync_api", reason="playwright is in the dev extra (scripts/setup.sh)")
CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip("Debian's chromium is not installed (scripts/setup.sh installs it)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[1]
PASSWORD = "segredo123"
USERS = {"lia": "lead", "ana": "annotator", "beto": "annotator", "carla": "annotator"}
VIEWPORT = {"width": 1366, "height": 768}
TURN = "eu não sei se o João vem"  # the fixture's first turn of "entrevista", 1-4 s
WIDE, NARROW = (1.0, 4.0), (1.5, 2.0)  # the whole turn and a word inside it, as demo04's two stretches


@contextmanager
def _app(root: Path, decisions: list[tuple[str, float, float, str, str]]) -> Iterator[dict[str, Any]]:
    """`ablate app --users` on a free port over a fresh fixture experiment holding ``decisions``
    (annotator, start, end, action, text on "entrevista"), saved through the API as listeners."""
    exp = build_experiment(root)
    adjudication = open_experiment(exp)
    for who, start, end, action, text in decisions:
        adjudication.decide(
            recording_id="entrevista", start=start, end=end, action=action, annotator=who, new_text=text
        )
    users = root / "users.json"
    for name, role in USERS.items():
        add_user(users, name, PASSWORD, role=role)
    port = free_port()
    command, env = app_command(exp, users, port)
    with serving(command, port, env, root / "app.log"):
        yield {"url": f"http://127.0.0.1:{port}", "exp": exp, "root": root}


@pytest.fixture(scope="module")
def playwright() -> Iterator[Any]:
    with sync_api.sync_playwright() as running:
        yield running


@contextmanager
def _conflicts_page(playwright: Any, app: dict[str, Any]) -> Iterator[Any]:
    """The lead lia, logged in in a fresh chromium profile, on the conflicts page."""
    context = playwright.chromium.launch_persistent_context(
        str(app["root"] / "profile-lia"),
        executable_path=str(CHROMIUM),
        headless=True,
        args=CHROMIUM_ARGS,
        viewport=VIEWPORT,
    )
    try:
        page = context.new_page()
        page.goto(app["url"])
        page.get_by_label("Nome").fill("lia")
        page.get_by_label("Senha").fill(PASSWORD)
        page.get_by_label("Senha").press("Enter")
        page.get_by_role("heading", name="Fila de revisão").wait_for(timeout=60000)
        deadline = time.monotonic() + 30  # the page trades its session token for the HttpOnly cookie
        while not any(c["name"].startswith("ablate_session_") for c in context.cookies()):
            assert time.monotonic() < deadline, "no session cookie"
            page.wait_for_timeout(100)
        page.goto(f"{app['url']}/conflicts")
        page.get_by_role("heading", name="Conflitos e aplicação").wait_for(timeout=60000)
        _settled(page)
        yield page
    finally:
        context.close()


def _settled(page: Any) -> None:
    """The page has finished its run: no placeholder, spinner or stale element left."""
    page.wait_for_function(
        "() => !document.querySelector('[data-testid=stSkeleton], [data-testid=stSpinner], [data-stale=true]')",
        timeout=120000,
    )
    page.wait_for_timeout(1500)


def _export(app: dict[str, Any]) -> list[dict[str, Any]]:
    """Every decision as `ablate decisions export --format json` writes it."""
    out = subprocess.run(
        [sys.executable, "-m", "toolkit", "decisions", "export", str(app["exp"]), "--format", "json"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_one_lead_settles_two_listeners_on_overlapping_stretches_and_applies(playwright, tmp_path):
    decisions = [  # as on demo04: ana and beto disagree on the whole turn and on a word inside it
        ("ana", *WIDE, "keep", ""),
        ("beto", *WIDE, "unresolved", ""),
        ("ana", *NARROW, "correct", "eu não sei se o João vem?"),
        ("beto", *NARROW, "keep", ""),
    ]
    with _app(tmp_path, decisions) as app, _conflicts_page(playwright, app) as page:
        apply = page.get_by_role("button", name="Aplicar as decisões")
        assert apply.is_disabled()
        settled = []
        for _ in range(4):  # the team's only lead settles every conflict the page shows, as on the demo
            form = page.get_by_test_id("stForm").filter(has_text="Resolver este trecho").first
            if not form.count():
                break
            button = form.get_by_role("button", name="Resolver este trecho")
            assert button.is_enabled(), f"lia may not settle a conflict after settling {settled}"
            # 'Não resolvido' for the whole turn, 'Manter' for the word inside it
            for choice in ("Como beto: Não resolvido", "Como beto: Manter a referência"):
                option = form.get_by_text(choice)
                if option.count():
                    break
            option.click()
            button.click()
            page.get_by_text("Resolvido com a decisão").wait_for(timeout=30000)
            _settled(page)
            settled.append(choice)
        assert apply.is_enabled(), f"Apply stays disabled after lia settled {settled}"
        apply.click()
        page.get_by_text("references/v001-").first.wait_for(timeout=60000)
    [version] = (app["exp"] / "references").iterdir()  # the first version of the references
    assert (version / "manifest.json").is_file()
    rows = [r for r in _export(app) if r["role"] == "settlement"]
    assert [(r["annotator"], r["action"], r["start"], r["end"]) for r in rows] == [("lia", "unresolved", *WIDE)]


def test_a_third_listener_is_named_third_on_the_leads_page_and_in_the_export(playwright, tmp_path):
    decisions = [
        ("ana", *WIDE, "keep", ""),
        ("beto", *WIDE, "correct", "eu não sei se o João vem mesmo"),
        ("carla", *WIDE, "unresolved", ""),
    ]
    with _app(tmp_path, decisions) as app, _conflicts_page(playwright, app) as page:
        cells = page.evaluate(  # the grid draws on a canvas; its cells are in the copy kept for screen readers
            "() => [...document.querySelectorAll('[role=row]')].map("
            "r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.textContent.trim()))"
        )
        roles = {row[1]: row[2] for row in cells if len(row) > 2 and row[1] in ("ana", "beto", "carla")}
        assert roles == {
            "ana": "primeiro(a) ouvinte",
            "beto": "segundo(a) ouvinte",
            "carla": "terceiro(a) ouvinte",
        }, cells
    exported = {r["annotator"]: r["role"] for r in _export(app)}
    assert exported == {"ana": "first", "beto": "second", "carla": "third"}
