"""Unsaved work on the decision form, per listener and stretch, kept in the experiment's store file.

The browser sends the form (decision chosen so far, text, note) a moment after each change, so
a reload, a lost connection or a server restart gives the form back as it was. A draft is
scratch, not evidence: it is replaced by each change and removed when the decision is saved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.adjudication.rows import Table, connect, read, write
from toolkit.adjudication.store import ACTIONS, TIME_DECIMALS
from toolkit.core.errors import InputError

MAX_TEXT = 20_000  # characters of text or note kept in a draft

_SCHEMA = """
CREATE TABLE IF NOT EXISTS drafts (
    annotator TEXT NOT NULL,
    recording_id TEXT NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    action TEXT NOT NULL,
    text TEXT NOT NULL,
    note TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (annotator, recording_id, start, "end")
);
"""


@dataclass(frozen=True)
class Draft:
    """What a listener had typed on one stretch's form (``action`` "" while none is chosen)."""

    action: str
    text: str
    note: str


class Drafts:
    """The drafts table of the experiment's store file: one draft per listener and stretch."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Path(store_path)
        with connect(self.path) as connection:
            connection.executescript(_SCHEMA)

    def save(self, annotator: str, recording_id: str, start: float, end: float, draft: Draft) -> None:
        if draft.action not in ("", *ACTIONS):
            raise InputError(self.path, f"unknown decision '{draft.action}' in a draft")
        if len(draft.text) > MAX_TEXT or len(draft.note) > MAX_TEXT:
            raise InputError(self.path, f"a draft's text is limited to {MAX_TEXT} characters")
        with connect(self.path) as connection:
            write(
                connection,
                DRAFTS,
                replace=True,
                annotator=annotator,
                recording_id=recording_id,
                start=round(start, TIME_DECIMALS),
                end=round(end, TIME_DECIMALS),
                action=draft.action,
                text=draft.text,
                note=draft.note,
                updated_at=time.time(),
            )

    def load(self, annotator: str, recording_id: str, start: float, end: float) -> Draft | None:
        with connect(self.path) as connection:
            rows = read(connection, self.path, DRAFTS, _KEY, _key(annotator, recording_id, start, end))
        return rows[0].draft if rows else None

    def discard(self, annotator: str, recording_id: str, start: float, end: float) -> None:
        with connect(self.path) as connection:
            connection.execute(f"DELETE FROM drafts WHERE {_KEY}", _key(annotator, recording_id, start, end))


@dataclass(frozen=True)
class StoredDraft(Draft):
    """A row of ``drafts``: the draft, whose draft of which stretch it is, and when it last changed (Unix time)."""

    annotator: str
    recording_id: str
    start: float
    end: float
    updated_at: float

    @property
    def draft(self) -> Draft:
        return Draft(self.action, self.text, self.note)


DRAFTS = Table("drafts", StoredDraft)
_KEY = 'annotator = ? AND recording_id = ? AND start = ? AND "end" = ?'


def _key(annotator: str, recording_id: str, start: float, end: float) -> tuple[str, str, float, float]:
    return annotator, recording_id, round(start, TIME_DECIMALS), round(end, TIME_DECIMALS)
