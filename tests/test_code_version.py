"""Results are reused on configuration and code: each step's key holds a digest of the code that computes it."""

from __future__ import annotations

import shutil
from pathlib import Path

from toolkit.pipeline.code_version import PACKAGE, STEP_SOURCES, code_digest, source_digest


def test_a_digest_changes_with_the_steps_code_and_only_with_it(tmp_path: Path) -> None:
    copy = tmp_path / "toolkit"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    before = {step: source_digest(copy, sources) for step, sources in STEP_SOURCES.items()}
    assert before == {step: code_digest(step) for step in STEP_SOURCES}  # the installed code, measured the same way
    runner = copy / "pipeline" / "runner.py"
    runner.write_text(runner.read_text(encoding="utf-8") + "\n# a change to the pipeline around the recognizer\n")
    after = {step: source_digest(copy, sources) for step, sources in STEP_SOURCES.items()}
    assert after["arm"] != before["arm"]  # arm results are made again
    assert after["decode"] == before["decode"]  # decodes are still reused
    backend = copy / "asr" / "faster_whisper_backend.py"
    backend.write_text(backend.read_text(encoding="utf-8").replace("\n", "\r\n"))  # line endings are no change
    assert source_digest(copy, STEP_SOURCES["decode"]) == before["decode"]
    backend.write_text(backend.read_text(encoding="utf-8") + "\n# a recognizer change\n")
    assert source_digest(copy, STEP_SOURCES["decode"]) != before["decode"]


def test_every_step_names_existing_sources() -> None:
    for sources in STEP_SOURCES.values():
        assert all((PACKAGE / source).exists() for source in sources), sources
