"""The light install (no ``asr`` extra) collects every test not marked ``needs_model``: what
``docs/install.md`` tells a user to run. A module that imports a recognizer library at its top, or calls
into one while pytest collects it, would stop that run before any test."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _collect(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests" / "light_install")}
    command = [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)


def test_the_light_install_collects_every_test_not_needing_a_model() -> None:
    light = _collect("-m", "not needs_model")
    assert light.returncode == 0, light.stdout[-2000:] + light.stderr[-2000:]
    assert "error" not in light.stdout.splitlines()[-1]
    assert "test_light_install.py::test_the_light_install_collects_every_test_not_needing_a_model" in light.stdout


def test_the_simulated_light_install_refuses_the_asr_extra() -> None:
    """The simulation itself: without it the check above would pass on a full install for nothing."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests" / "light_install")}
    probe = subprocess.run(
        [sys.executable, "-c", "import ctranslate2"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60
    )
    assert probe.returncode != 0 and "(light install)" in probe.stderr
