"""Stretch-review benchmark: server time per decision, keyboard only, on the demo experiment in chromium.

Copies the demo experiment (after ``make demo``: its corpus and run folders, not its decision
store) to a scratch folder, starts ``ablate app --users`` there on a free port, logs an annotator
in with Debian's chromium (Playwright) and, on the run with the most arms (the demo's tuning run:
eight), keeps stretch after stretch of the queue with two keys (``1``, ``Enter``). The app
measures, per decision, the server time from receiving the save to having the next stretch ready
(store the decision, find the next open stretch, align every arm there, read the draft); the
page carries it and this script reads it. Target: at most 0.3 s per decision. Also printed: the
wall time a listener waits per decision in the browser.
Run: ``.venv/bin/python benchmarks/bench_app_decisions.py [--experiment experiments/demo] [--decisions N]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from chromium_flags import CHROMIUM_ARGS  # noqa: E402

TARGET_S = 0.3


def _copy(experiment: Path, target: Path) -> Path:
    """The demo's inputs and runs, without its decisions; run records pointed at the copied manifest."""
    shutil.copytree(experiment, target, ignore=shutil.ignore_patterns("adjudication.sqlite*", "cache", "references"))
    for record_path in (target / "runs").glob("*/run.json"):
        record = json.loads(record_path.read_text(encoding="utf-8"))
        manifest = Path(record["manifest"]["path"])
        if manifest.is_absolute() and experiment.resolve() in manifest.resolve().parents:
            record["manifest"]["path"] = str(target / manifest.resolve().relative_to(experiment.resolve()))
            record_path.write_text(json.dumps(record), encoding="utf-8")
    return target


def _start(experiment: Path, users: Path, log: Path) -> tuple[subprocess.Popen, str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    server = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "app", str(experiment), "--port", str(port), "--users", str(users)],
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return server, url
        except OSError:
            time.sleep(0.5)
    server.kill()
    raise SystemExit(f"the app did not start: {log.read_text()[-2000:]}")


def largest_run(experiment: Path) -> str:
    """The experiment's run folder with the most arms (the tuning run): the most words on each review page."""
    return max(
        (p.parent for p in (experiment / "runs").glob("*/run.json")),
        key=lambda folder: len(json.loads((folder / "run.json").read_text(encoding="utf-8"))["config"]["arms"]),
    ).name


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--experiment", type=Path, default=ROOT / "experiments" / "demo")
    parser.add_argument("--decisions", type=int, default=30)
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
        run = largest_run(experiment)
        users = root / "users.json"
        add_user(users, "bench", "segredo123")
        passes = BlindPasses(experiment / "adjudication.sqlite")
        for entry in open_experiment(experiment).manifest.recordings:  # decisions, not blind transcription
            passes.excuse(entry.id, "bench", Login("bench-lead", LEAD))
        server, url = _start(experiment, users, root / "app.log")
        server_s, waits = [], []
        try:
            with sync_playwright() as playwright:
                context = playwright.chromium.launch_persistent_context(
                    str(root / "profile"),
                    executable_path="/usr/bin/chromium",
                    headless=True,
                    args=CHROMIUM_ARGS,
                    viewport={"width": 1400, "height": 900},
                )
                page = context.new_page()
                page.goto(url)
                page.get_by_label("Nome").fill("bench")
                page.get_by_label("Senha").fill("segredo123")
                page.get_by_label("Senha").press("Enter")
                page.get_by_role("heading", name="Fila de revisão").wait_for(timeout=120000)
                while not any(c["name"].startswith("ablate_session_") for c in context.cookies()):
                    page.wait_for_timeout(100)  # the session cookie, so the next page load stays logged in
                page.goto(f"{url}/review?run={run}")
                page.get_by_test_id("ab-desk").wait_for(timeout=120000)
                total = page.get_by_test_id("ab-position").inner_text().split("/")[1].strip()
                before = ""
                for _ in range(min(args.decisions, int(total))):
                    begin = time.perf_counter()
                    page.keyboard.press("1")
                    page.keyboard.press("Enter")
                    page.wait_for_function(
                        "b => { const f = document.querySelector('[data-testid=ab-flash]');"
                        " return f && f.innerText !== b && f.dataset.serverMs }",
                        arg=before,
                        timeout=120000,
                    )
                    waits.append(time.perf_counter() - begin)
                    flash = page.get_by_test_id("ab-flash")
                    before = flash.inner_text()
                    server_s.append(float(flash.get_attribute("data-server-ms") or "nan") / 1000)
                context.close()
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)
    first = server_s[0]
    print("per decision (s):", " ".join(f"{x:.2f}" for x in server_s))
    server_s.sort()
    p95 = server_s[min(len(server_s) - 1, round(0.95 * (len(server_s) - 1)))]
    print(f"{len(server_s)} keep decisions (keys 1, Enter) on run {run} of {args.experiment.name}, {total} stretches")
    print(
        f"server time per decision: median {statistics.median(server_s):.3f} s, p95 {p95:.3f} s, "
        f"max {server_s[-1]:.3f} s, the first (cold caches) {first:.3f} s; target {TARGET_S} s"
    )
    print(f"wall time in the browser per decision: median {statistics.median(waits):.3f} s, max {max(waits):.3f} s")
    return 0 if statistics.median(server_s) <= TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
