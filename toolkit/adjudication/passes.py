"""The ``blind_passes`` table: one row per closed blind pass (who, which recording, finished or excused, by whom,
when), append-only. Its own module so the transcript store (which refuses segments of a closed pass) and the
blindness rule (``toolkit.adjudication.blindness``) both read it without importing each other."""

from __future__ import annotations

from dataclasses import dataclass

from toolkit.adjudication.rows import Table, append_only

FINISHED, EXCUSED = "finished", "excused"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS blind_passes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recording_id TEXT NOT NULL,
    person TEXT NOT NULL CHECK (length(trim(person)) > 0),
    kind TEXT NOT NULL CHECK (kind IN ('{FINISHED}', '{EXCUSED}')),
    by TEXT NOT NULL CHECK (length(trim(by)) > 0),
    created_at TEXT NOT NULL,
    UNIQUE (recording_id, person)
);
{append_only("blind_passes", "a closed blind pass", "it stays closed")}"""


@dataclass(frozen=True)
class PassClosed:
    """A closed blind pass: ``person`` finished (``by`` themselves) or was excused (``by`` a lead) from a recording."""

    id: int
    recording_id: str
    person: str
    kind: str
    by: str
    created_at: str


PASSES = Table("blind_passes", PassClosed)
