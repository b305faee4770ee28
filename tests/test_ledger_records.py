"""The test-openings ledger's lines as typed records: written as the plain JSON writer wrote them, read back
strictly; a damaged line is one error naming the ledger and the line."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.core.errors import InputError
from toolkit.protocol.ledger import Opening, claim, ledger_path, machine_ledger_path
from toolkit.protocol.state import ProtocolError

openings = st.builds(
    Opening,
    st.text(max_size=12),
    st.text(max_size=8),
    st.sampled_from(["holdout", "challenge"]),
    st.text(max_size=6),
    st.text(max_size=8),
    st.lists(st.text(max_size=8), max_size=3).map(tuple),
)
OPENING = Opening("/exp", "rec1", "holdout", "vad", "ab" * 32, ("cd" * 32,))


def _claimed(tmp_path: Path, opening: Opening) -> Path:
    """Fresh ledgers (beside the manifest and the machine's) holding ``opening``; returns the one beside it."""
    path = ledger_path(tmp_path / "manifest.json")
    path.unlink(missing_ok=True)
    machine_ledger_path().unlink(missing_ok=True)
    claim(tmp_path / "manifest.json", opening)
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(opening=openings)
def test_a_line_is_what_the_plain_writer_wrote_and_reads_back(tmp_path: Path, opening: Opening) -> None:
    path = _claimed(tmp_path, opening)
    line = path.read_bytes()
    stamped = replace(opening, time=json.loads(line)["time"])
    assert line == (json.dumps(asdict(stamped), sort_keys=True) + "\n").encode("utf-8")  # before its record
    assert stamped.line() == line
    claim(tmp_path / "manifest.json", opening)  # read back: the same opening again is already claimed
    assert path.read_bytes() == line
    if opening.content:
        with pytest.raises(ProtocolError, match=re.escape(f"opened on {stamped.time} by experiment")):
            claim(tmp_path / "manifest.json", replace(opening, record=opening.record + "x"))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda o: o.update(content="cd"), "line 1.content must be a list, not str"),
        (lambda o: o.pop("record"), "line 1.record is missing"),
        (lambda o: o.update(content=[1]), "line 1.content[0] must be str, not 1"),
        (lambda o: o.update(note="x"), "line 1 has unknown key(s) note"),
    ],
)
def test_a_damaged_line_is_one_error_naming_the_ledger_and_the_line(tmp_path: Path, change: Any, message: str) -> None:
    path = _claimed(tmp_path, OPENING)
    data = json.loads(path.read_bytes())
    change(data)
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as error:
        claim(tmp_path / "manifest.json", OPENING)
    assert str(error.value) == f"{path}: {message}"


@pytest.mark.parametrize("line", [b"[1, 2]\n", b'{"experiment": \n', b"\xff\n"])
def test_a_line_that_is_no_json_object_is_named(tmp_path: Path, line: bytes) -> None:
    path = ledger_path(tmp_path / "manifest.json")
    path.write_bytes(line)
    with pytest.raises(InputError) as error:
        claim(tmp_path / "manifest.json", OPENING)
    assert str(error.value).startswith(f"{path}: line 1 ") and "\n" not in str(error.value)
