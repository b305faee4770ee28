"""The light install (no ``asr`` extra) collects every test not marked ``needs_model``, and runs a sample of
them from each part it serves: what ``docs/install.md`` tells a user to run. A module that imports a
recognizer library at its top, or calls into one while pytest collects it, would stop that run before any
test; code that reaches a recognizer, a model or Dask from the manifest, formats, scorer, report,
protocol or app would fail the sample."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


# One module per part of the light install: manifest, formats, scorer command, report and gates, protocol
# (the steps before a model is named), app pages. About 30 s on two cores.
SAMPLE = (
    "tests/test_manifest.py",
    "tests/test_formats.py",
    "tests/test_score_cli.py",
    "tests/test_gates.py",
    "tests/test_protocol.py",
    "tests/test_app_pages.py",
)


def _light_env() -> dict[str, str]:
    """The simulated light install (tests/light_install/sitecustomize.py) on this checkout, for every child."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "tests" / "light_install"), str(ROOT)])}


def _pytest(*args: str) -> subprocess.CompletedProcess[str]:
    """pytest in a fresh interpreter on the simulated light install."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args]
    return subprocess.run(command, cwd=ROOT, env=_light_env(), capture_output=True, text=True, timeout=600)


def _collect(*args: str) -> subprocess.CompletedProcess[str]:
    return _pytest("--collect-only", *args)


def test_the_light_install_collects_every_test_not_needing_a_model() -> None:
    light = _collect("-m", "not needs_model")
    assert light.returncode == 0, light.stdout[-2000:] + light.stderr[-2000:]
    assert "error" not in light.stdout.splitlines()[-1]
    assert "test_light_install.py::test_the_light_install_collects_every_test_not_needing_a_model" in light.stdout


def test_a_sample_of_each_part_runs_on_the_light_install() -> None:
    light = _pytest("-m", "not needs_model and not slow", *SAMPLE)
    assert light.returncode == 0, light.stdout[-3000:] + light.stderr[-2000:]
    assert " passed" in light.stdout.splitlines()[-1]


PROBE = """
import importlib.metadata, os
try:
    importlib.metadata.version("ctranslate2")
except importlib.metadata.PackageNotFoundError:
    print("no ctranslate2 metadata")
print(os.environ["ABLATE_CACHE"])
import ctranslate2
"""


def test_the_simulated_light_install_refuses_the_asr_extra() -> None:
    """The simulation itself: without it the checks above would pass on a full install for nothing. The
    extra's metadata is hidden too, and the machine cache (rebuilt model, CPU probes) is not the full
    install's: a real light install failed tests that blocking the imports alone let pass."""
    probe = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=_light_env(), capture_output=True, text=True, timeout=60
    )
    assert probe.returncode != 0 and "(light install)" in probe.stderr
    lines = probe.stdout.splitlines()
    assert lines[0] == "no ctranslate2 metadata" and Path(lines[1]).name == "ptbr-ablate-light-install"
