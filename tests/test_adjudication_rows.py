"""Every table of the store file is read as its record: a row damaged by another tool is one line naming the file.

SQLite keeps text in a REAL column (and bytes in a TEXT one), so a store edited outside the toolkit can hold rows that
would fail far from where they were read. Each case below writes real rows through the toolkit,
damages one copy of a row with the sqlite3 module, and reads it back through the toolkit.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from adjudication_fixture import decide

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import BlindPasses
from toolkit.adjudication.drafts import BlindDrafts, Draft, Drafts
from toolkit.adjudication.marks import MarkStore
from toolkit.adjudication.rows import LEFT_AS_IT_WAS
from toolkit.adjudication.sessions import Sessions
from toolkit.adjudication.store import DecisionStore
from toolkit.adjudication.team import Assignments
from toolkit.adjudication.users import Login
from toolkit.cli import main
from toolkit.core.errors import InputError


def _decisions(path: Path) -> Callable[[], Any]:
    store = DecisionStore(path)
    decide(store, "ana")
    return store.span_states


def _applications(path: Path) -> Callable[[], Any]:
    store = DecisionStore(path)
    decide(store, "ana")
    store.record_application(
        annotator="lia", out_dir="references/v2", previous_manifest_sha256="a", manifest_sha256="b", decision_ids=[1]
    )
    return store.export


def _meta(path: Path) -> Callable[[], Any]:
    DecisionStore(path)
    return lambda: DecisionStore(path)


def _transcripts(path: Path) -> TranscriptStore:
    return TranscriptStore(path, path.parent)


def _segments(path: Path) -> Callable[[], Any]:
    _transcripts(path).save(recording_id="rec", annotator="ana", start=0.0, end=2.0, duration=10.0, text="eu sei")
    return lambda: _transcripts(path).segments("rec", "ana")


def _settlements(path: Path) -> Callable[[], Any]:
    _transcripts(path).settle(recording_id="rec", start=0.0, end=2.0, duration=10.0, text="eu sei", lead="lia")
    return lambda: _transcripts(path).settlements("rec")


def _drafts(path: Path) -> Callable[[], Any]:
    Drafts(path).save("ana", "rec", 1.0, 2.0, Draft("correct", "eu sei", ""))
    return lambda: Drafts(path).load("ana", "rec", 1.0, 2.0)


def _sessions(path: Path) -> Callable[[], Any]:
    token = Sessions(path).open(Login("ana", "annotator"))
    return lambda: Sessions(path).login(token)


def _login_tries(path: Path) -> Callable[[], Any]:
    Sessions(path).record_try("ana", "127.0.0.1", ok=False)
    return lambda: Sessions(path).refusal("ana", "127.0.0.1")


def _blind_drafts(path: Path) -> Callable[[], Any]:
    BlindDrafts(path).save("ana", "rec", 1.0, 2.0, {"text": "eu sei"})
    return lambda: BlindDrafts(path).load("ana", "rec", 1.0, 2.0)


def _saved_forms(path: Path) -> Callable[[], Any]:
    Drafts(path).mark_saved("token-1", 1)
    return lambda: Drafts(path).saved_as("token-1")


def _marks(path: Path) -> Callable[[], Any]:
    MarkStore(path).add(recording_id="rec", annotator="ana", kind="nonspeech", start=1.0, end=2.0, duration=10.0)
    return lambda: MarkStore(path).current("rec", "ana")


def _assignments(path: Path) -> Callable[[], Any]:
    Assignments(path).record("lia", "ana", "rec", 1.0, 2.0)
    return Assignments(path).history


def _blind_passes(path: Path) -> Callable[[], Any]:
    BlindPasses(path).excuse("rec", "ana", Login("lia", "lead"))
    return BlindPasses(path).closed


# table, how to fill it and read it back, the column damaged, its damaged value, what the line says of it
CASES = [
    ("decisions", _decisions, "start", "abc", "start holds 'abc', not a number"),
    ("applications", _applications, "decision_ids", "1,x", "decision_ids holds '1,x', not ids separated by commas"),
    ("meta", _meta, "value", b"\x00", "value holds b'\\x00', not text"),
    ("transcript_segments", _segments, "unresolved_start", "x", "unresolved_start holds 'x', not a number"),
    ("transcript_settlements", _settlements, "lead", b"\xfe", "lead holds b'\\xfe', not text"),
    ("drafts", _drafts, "updated_at", "soon", "updated_at holds 'soon', not a number"),
    ("app_sessions", _sessions, "expires_at", "never", "expires_at holds 'never', not a number"),
    ("login_tries", _login_tries, "ok", 2, "ok holds 2, not 0 or 1"),
    ("blind_drafts", _blind_drafts, "updated_at", "soon", "updated_at holds 'soon', not a number"),
    ("saved_forms", _saved_forms, "decision_id", "one", "decision_id holds 'one', not an integer"),
    ("marks", _marks, "end", "later", "end holds 'later', not a number"),
    ("team_assignments", _assignments, "start", "x", "start holds 'x', not a number"),
    ("blind_passes", _blind_passes, "by", b"\xfe", "by holds b'\\xfe', not text"),
]


def _damage(path: Path, table: str, column: str, value: Any) -> int:
    """Write a copy of the table's first row (over it, where the table has a key) with ``column`` set to ``value``."""
    with sqlite3.connect(path) as connection:
        names = [row[1] for row in connection.execute(f"PRAGMA table_info({table})") if row[1] != "id"]
        picked = ", ".join("?" if name == column else f'"{name}"' for name in names)
        quoted = ", ".join(f'"{name}"' for name in names)
        cursor = connection.execute(
            f"INSERT OR REPLACE INTO {table} ({quoted}) SELECT {picked} FROM {table} ORDER BY rowid LIMIT 1", (value,)
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid


@pytest.mark.parametrize(("table", "fill", "column", "value", "said"), CASES, ids=[case[0] for case in CASES])
def test_a_damaged_row_is_one_line_naming_the_file_the_table_and_the_row(
    tmp_path: Path, table: str, fill: Callable[[Path], Callable[[], Any]], column: str, value: Any, said: str
) -> None:
    path = tmp_path / "adjudication.sqlite"
    read_back = fill(path)
    read_back()  # the toolkit's own rows read
    row = _damage(path, table, column, value)
    with pytest.raises(InputError) as raised:
        read_back()
    assert str(raised.value) == f"{path}: row {row} of table {table} is damaged ({said}); {LEFT_AS_IT_WAS}"
    with sqlite3.connect(path) as connection:  # left as it was
        assert connection.execute(f"SELECT {column} FROM {table} WHERE rowid = ?", (row,)).fetchone() == (value,)


def test_every_table_of_the_store_file_has_a_case(tmp_path: Path) -> None:
    path = tmp_path / "adjudication.sqlite"
    for _, fill, _, _, _ in CASES:
        fill(path)
    with sqlite3.connect(path) as connection:
        tables = {name for (name,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert tables - {"sqlite_sequence"} == {case[0] for case in CASES}


def test_the_export_command_says_the_damaged_row_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "adjudication.sqlite"
    decide(DecisionStore(path), "ana")
    row = _damage(path, "decisions", "end", "later")
    assert main(["decisions", "export", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.splitlines() == [
        f"ablate: error: {path}: row {row} of table decisions is damaged (end holds 'later', not a number); "
        + LEFT_AS_IT_WAS
    ]
