"""Annotator time, keyboard only, on the demo: seconds per adjudicated stretch and per audio minute of blind
transcription, with a simulated listener in Debian's chromium (Playwright) against ``ablate app --users``.

The listener is simulated, not measured: per reviewed stretch it presses ``s`` (the stretch alone), waits
the stretch's length (listening once at 1x), thinks ``THINK_S``, then keeps it (``1``, ``Enter``) or, on
every ``CORRECT_EVERY``-th stretch, corrects it (``2``, types ``CORRECTION`` at ``KEY_S`` per character,
``Enter``). Per blind stretch it presses space (play with context), waits the stretch's length plus its
context, thinks ``THINK_S``, moves to the text field (one Tab-like focus, counted as a key), types the
stretch's reference words at ``KEY_S`` per character and saves with Ctrl+Enter. What the figures add to
the simulated time is the app's own: loading, saving, moving on. Printed: the simulated and the measured
seconds, per stretch and per audio minute.
Run: ``.venv/bin/python benchmarks/bench_annotator_time.py [--experiment experiments/demo] [--stretches N]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from bench_app_decisions import _copy, _start, largest_run  # noqa: E402
from chromium_flags import CHROMIUM_ARGS  # noqa: E402

THINK_S = 1.0  # reading the desk (or the typed line) before the decision, per stretch
KEY_S = 0.2  # per typed character: 5 characters a second, about 60 words a minute
CORRECT_EVERY = 3  # one stretch in three is corrected, the others kept
CORRECTION = " mesmo"
PASSWORD = "segredo123"


def _login(context, url: str, landing: str):  # noqa: ANN001, ANN202 - Playwright objects
    page = context.new_page()
    page.goto(url)
    page.get_by_label("Nome").fill("bench")
    page.get_by_label("Senha").fill(PASSWORD)
    page.get_by_label("Senha").press("Enter")
    page.get_by_role("heading", name=landing).wait_for(timeout=120000)
    while not any(c["name"].startswith("ablate_session_") for c in context.cookies()):
        page.wait_for_timeout(100)
    return page


def _review(page, url: str, run: str, count: int) -> tuple[float, float, int]:  # noqa: ANN001
    """Measured and simulated seconds over ``count`` reviewed stretches of ``run``."""
    page.goto(f"{url}/review?run={run}")
    page.get_by_test_id("ab-desk").wait_for(timeout=120000)
    page.wait_for_function("document.querySelector('[data-testid=ab-audio]').readyState >= 1", timeout=120000)
    measured = simulated = 0.0
    before = ""
    done = 0
    for k in range(count):
        begin = time.perf_counter()
        where = page.locator(".ab-where").inner_text()  # "demo01 · 21,52–24,61 s"
        start, end = (float(x.replace(".", "").replace(",", ".")) for x in where.split(" · ")[-1][:-2].split("–"))
        stretch = end - start
        page.keyboard.press("s")
        page.wait_for_timeout(1000 * (stretch + THINK_S))
        wait = stretch + THINK_S
        if k % CORRECT_EVERY == CORRECT_EVERY - 1:
            page.keyboard.press("2")
            page.keyboard.type(CORRECTION, delay=1000 * KEY_S)
            wait += KEY_S * len(CORRECTION)
        else:
            page.keyboard.press("1")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "b => { const f = document.querySelector('[data-testid=ab-flash]'); return f && f.innerText !== b"
            " && document.querySelector('[data-testid=ab-audio]').readyState >= 1 }",
            arg=before,
            timeout=120000,
        )
        before = page.get_by_test_id("ab-flash").inner_text()
        measured += time.perf_counter() - begin
        simulated += wait
        done += 1
    return measured, simulated, done


def _blind(
    page, url: str, reference: dict[str, list[tuple[float, float, str]]], count: int
) -> tuple[float, float, float]:  # noqa: ANN001
    """Measured and simulated seconds, and audio seconds, over ``count`` blind stretches of the first recording."""
    page.goto(f"{url}/blind")
    page.get_by_test_id("ab-play").wait_for(timeout=300000)
    recording = next(iter(reference))
    measured = simulated = audio = 0.0
    for _ in range(count):
        page.get_by_test_id("ab-audio").wait_for(state="attached", timeout=120000)
        page.wait_for_function("document.querySelector('[data-testid=ab-audio]').readyState >= 1", timeout=120000)
        begin = time.perf_counter()
        start = float(page.get_by_label("Início (s)").input_value())
        end = float(page.get_by_label("Fim (s)").input_value())
        clip = page.evaluate("document.querySelector('[data-testid=ab-audio]').duration")
        said = " ".join(text for s, e, text in reference[recording] if s < end and e > start)
        page.keyboard.press("Space")
        page.wait_for_timeout(1000 * (clip + THINK_S))
        page.get_by_label("O que foi dito").focus()  # one key (Tab) in the model
        page.keyboard.type(said, delay=1000 * KEY_S)
        page.keyboard.press("Control+Enter")
        page.get_by_test_id("stAlertContentSuccess").filter(has_text="Gravado").wait_for(timeout=120000)
        page.wait_for_function("document.querySelector('[data-testid=ab-audio]').readyState >= 1", timeout=120000)
        measured += time.perf_counter() - begin
        simulated += clip + THINK_S + KEY_S * len(said)
        audio += end - start
    return measured, simulated, audio


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", type=Path, default=ROOT / "experiments" / "demo")
    parser.add_argument("--stretches", type=int, default=9, help="stretches reviewed, and blind stretches typed")
    args = parser.parse_args()
    if not (args.experiment / "runs").is_dir():
        print(f"{args.experiment}/runs is missing: run `make demo` (or `ablate demo`) first", file=sys.stderr)
        return 2
    from playwright.sync_api import sync_playwright

    from toolkit.adjudication.blindness import BlindPasses
    from toolkit.adjudication.context import open_experiment
    from toolkit.adjudication.users import LEAD, Login, add_user

    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        experiment = _copy(args.experiment, root / "exp")
        adjudication = open_experiment(experiment)
        reference = {
            e.id: [(u.start, u.end, u.text) for u in adjudication.reference(e.id).utterances]
            for e in adjudication.manifest.recordings
        }
        run = largest_run(experiment)
        users = root / "users.json"
        add_user(users, "bench", PASSWORD, by="bench_annotator_time.py")
        server, url = _start(experiment, users, root / "app.log")
        try:
            with sync_playwright() as playwright:
                context = playwright.chromium.launch_persistent_context(
                    str(root / "profile"),
                    executable_path="/usr/bin/chromium",
                    headless=True,
                    args=[*CHROMIUM_ARGS, "--autoplay-policy=no-user-gesture-required"],
                    viewport={"width": 1366, "height": 768},
                )
                page = _login(context, url, "Fila de revisão")
                # the afternoon's order: blind first; then a lead excuses the rest of the pass, so the
                # review pages show the arms (blindness per recording withholds them until then)
                typed, blind_model, audio = _blind(page, url, reference, args.stretches)
                passes = BlindPasses(adjudication.store.path)
                for entry in adjudication.manifest.recordings:
                    passes.excuse(entry.id, "bench", Login("bench_annotator_time.py", LEAD))
                reviewed, review_model, done = _review(page, url, run, args.stretches)
                print(
                    f"review, run {run}: {done} stretches, {reviewed / done:.1f} s per stretch measured "
                    f"({review_model / done:.1f} s of it simulated listening, thinking and typing)",
                    flush=True,
                )
                context.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    print(f"model: think {THINK_S} s per stretch, {KEY_S} s per character, 1 correction in {CORRECT_EVERY}")
    print(
        f"blind: {args.stretches} stretches, {audio:.1f} s of audio, {typed / (audio / 60):.0f} s per audio minute "
        f"measured ({blind_model / (audio / 60):.0f} s simulated); {typed / args.stretches:.1f} s per stretch"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
