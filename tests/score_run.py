"""``ablate score`` run in-process as the score tests call it: input files named in one folder, JSON read back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolkit.cli import main


def file_options(folder: Path, **files: str) -> list[str]:
    """``--OPTION folder/NAME`` for each ``OPTION=NAME`` in order, so a test names its inputs once, on one line."""
    return [arg for option, name in files.items() for arg in (f"--{option}", str(folder / name))]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    """``ablate score ARGS --format json`` with exit 0 asserted; the JSON document it printed."""
    assert main(["score", *args, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)
