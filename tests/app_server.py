"""``ablate app`` as a real server for tests: started on a free port, healthy before use, stopped by SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What a test's own environment may hold that would make the app skip its login (AppTest sets these).
APP_LOGIN_VARIABLES = ("ABLATE_APP_ANNOTATOR", "ABLATE_APP_ROLE", "ABLATE_APP_LANG")


def app_command(exp: Path, users: Path, port: int, *extra: str) -> tuple[list[str], dict[str, str]]:
    """``ablate app EXP --users USERS`` on ``port`` (plus ``extra`` options) and its environment: this checkout
    on the path, no login variable left from the test's own environment."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for name in APP_LOGIN_VARIABLES:
        env.pop(name, None)
    command = [sys.executable, "-m", "toolkit", "app", str(exp), "--port", str(port), "--users", str(users), *extra]
    return command, env


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop(server: subprocess.Popen) -> int:
    """SIGTERM to the server's process group (as a service manager stops it); SIGKILL after 20 s. Its exit code."""
    if server.poll() is None:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
    return server.returncode


@contextmanager
def serving(
    command: list[str], port: int, env: dict[str, str], log: Path, cwd: Path | None = None
) -> Iterator[subprocess.Popen]:
    """Run ``command`` (an ``ablate app`` on ``port``) until ``/_stcore/health`` says ok; stop it on leaving."""
    with log.open("w") as output:
        server = subprocess.Popen(
            command, env=env, cwd=cwd, stdout=output, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            _wait_until_healthy(server, f"http://127.0.0.1:{port}", log)
            yield server
        finally:
            stop(server)


def _wait_until_healthy(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as answer:
                if answer.read().strip() == b"ok":
                    return
        except OSError:
            pass
        if server.poll() is not None or time.monotonic() > deadline:
            stop(server)
            pytest.fail(f"the app did not start: {log.read_text(encoding='utf-8')[-2000:]}")
        time.sleep(0.5)
