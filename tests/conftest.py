"""Each test opens test data in its own machine openings ledger (toolkit.protocol.ledger), never in the user's:
the constructed corpora of many tests share their audio content, and one test's opening must not refuse another's.
A test starts with what session- and module-wide fixtures opened, so their experiments still gate."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from toolkit.protocol.ledger import MACHINE_LEDGER_ENV


@pytest.fixture(scope="session", autouse=True)
def session_openings(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The machine ledger of the fixtures built once per session or module."""
    path = tmp_path_factory.mktemp("session-openings") / "test-openings.jsonl"
    before = os.environ.get(MACHINE_LEDGER_ENV)
    os.environ[MACHINE_LEDGER_ENV] = str(path)
    yield path
    if before is None:
        os.environ.pop(MACHINE_LEDGER_ENV, None)
    else:
        os.environ[MACHINE_LEDGER_ENV] = before


@pytest.fixture(autouse=True)
def machine_openings(session_openings: Path, tmp_path_factory: pytest.TempPathFactory, monkeypatch) -> Path:
    """This test's machine ledger: a copy of the session's."""
    own = tmp_path_factory.mktemp("openings") / "test-openings.jsonl"
    if session_openings.is_file():
        shutil.copyfile(session_openings, own)
    monkeypatch.setenv(MACHINE_LEDGER_ENV, str(own))
    return own
