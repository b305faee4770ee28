"""Unsaved work on the decision form and the blind-transcription form, per listener and stretch, kept
in the experiment's store file.

The browser sends the form (decision chosen so far, text, note; or the blind form's fields) a
moment after each change, so a reload, a lost connection or a server restart gives the form back
as it was, and the blind page reopens on the stretch of the latest draft. A draft is scratch, not
evidence: it is replaced by each change and removed when the decision or segment is saved.
"""

from __future__ import annotations

import json
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
CREATE TABLE IF NOT EXISTS blind_drafts (
    annotator TEXT NOT NULL,
    recording_id TEXT NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    fields TEXT NOT NULL,
    updated_at REAL NOT NULL,
    PRIMARY KEY (annotator, recording_id, start, "end")
);
CREATE TABLE IF NOT EXISTS saved_forms (
    token TEXT PRIMARY KEY,
    decision_id INTEGER NOT NULL
);
"""
# The blind form's fields a draft keeps (text, speaker, the speech choice, the unresolved part, word times).
BLIND_FIELDS = ("text", "speaker", "speech", "u_from", "u_to", "u_note", "first_end", "last_start")


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

    def saved_as(self, token: str) -> int | None:
        """The decision a form sent with ``token`` was saved as (a retry of a save that got through), if any."""
        with connect(self.path) as connection:
            rows = read(connection, self.path, SAVED_FORMS, "token = ?", (token,))
        return rows[0].decision_id if rows else None

    def mark_saved(self, token: str, decision_id: int) -> None:
        """Remember that the form sent with ``token`` is saved as ``decision_id`` (so a retry stores nothing)."""
        with connect(self.path) as connection:
            connection.execute(
                "INSERT OR IGNORE INTO saved_forms (token, decision_id) VALUES (?, ?)", (token, decision_id)
            )


@dataclass(frozen=True)
class SavedForm:
    """A review form's token and the decision it was saved as: a resent form stores nothing twice."""

    token: str
    decision_id: int


SAVED_FORMS = Table("saved_forms", SavedForm)


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


@dataclass(frozen=True)
class BlindDraft:
    """A blind-form draft: whose, which stretch, the fields as typed (``BLIND_FIELDS``), and when (Unix time)."""

    annotator: str
    recording_id: str
    start: float
    end: float
    fields: str  # JSON object of field name to the text typed
    updated_at: float

    @property
    def values(self) -> dict[str, str]:
        try:
            loaded = json.loads(self.fields)
        except ValueError:
            return {}
        return (
            {k: v for k, v in loaded.items() if k in BLIND_FIELDS and isinstance(v, str)}
            if isinstance(loaded, dict)
            else {}
        )


BLIND_DRAFTS = Table("blind_drafts", BlindDraft)


class BlindDrafts:
    """The blind_drafts table: one draft of the blind form per listener and stretch."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Drafts(store_path).path

    def save(self, annotator: str, recording_id: str, start: float, end: float, fields: dict[str, str]) -> None:
        unknown = sorted(set(fields) - set(BLIND_FIELDS))
        if unknown or not all(isinstance(v, str) for v in fields.values()):
            raise InputError(self.path, f"a blind draft holds text for {', '.join(BLIND_FIELDS)}, not {unknown}")
        if any(len(v) > MAX_TEXT for v in fields.values()):
            raise InputError(self.path, f"a draft's text is limited to {MAX_TEXT} characters")
        with connect(self.path) as connection:
            write(
                connection,
                BLIND_DRAFTS,
                replace=True,
                annotator=annotator,
                recording_id=recording_id,
                start=round(start, TIME_DECIMALS),
                end=round(end, TIME_DECIMALS),
                fields=json.dumps(fields, ensure_ascii=False),
                updated_at=time.time(),
            )

    def load(self, annotator: str, recording_id: str, start: float, end: float) -> BlindDraft | None:
        with connect(self.path) as connection:
            rows = read(connection, self.path, BLIND_DRAFTS, _KEY, _key(annotator, recording_id, start, end))
        return rows[0] if rows else None

    def latest(self, annotator: str, recording_id: str | None = None) -> BlindDraft | None:
        """The listener's most recently changed blind draft (of one recording, if named): where the page reopens."""
        where, parameters = (
            ("annotator = ?", (annotator,))
            if recording_id is None
            else (
                "annotator = ? AND recording_id = ?",
                (annotator, recording_id),
            )
        )
        with connect(self.path) as connection:
            rows = read(connection, self.path, BLIND_DRAFTS, where, parameters, "updated_at DESC")
        return rows[0] if rows else None

    def discard(self, annotator: str, recording_id: str, start: float, end: float) -> None:
        with connect(self.path) as connection:
            connection.execute(f"DELETE FROM blind_drafts WHERE {_KEY}", _key(annotator, recording_id, start, end))
