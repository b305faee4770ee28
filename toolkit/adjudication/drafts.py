"""Unsaved work on the decision form, per listener and stretch, kept in the experiment's store file.

The browser sends the form (decision chosen so far, text, note) a moment after each change, so
a reload, a lost connection or a server restart gives the form back as it was. A draft is
scratch, not evidence: it is replaced by each change and removed when the decision is saved.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.adjudication.store import ACTIONS, TIME_DECIMALS, connect
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
            connection.execute(
                "INSERT OR REPLACE INTO drafts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    annotator,
                    recording_id,
                    round(start, TIME_DECIMALS),
                    round(end, TIME_DECIMALS),
                    draft.action,
                    draft.text,
                    draft.note,
                    time.time(),
                ),
            )

    def load(self, annotator: str, recording_id: str, start: float, end: float) -> Draft | None:
        with connect(self.path) as connection:
            row = connection.execute(
                f"SELECT action, text, note FROM drafts WHERE {_KEY}", _key(annotator, recording_id, start, end)
            ).fetchone()
        return Draft(*row) if row else None

    def discard(self, annotator: str, recording_id: str, start: float, end: float) -> None:
        with connect(self.path) as connection:
            connection.execute(f"DELETE FROM drafts WHERE {_KEY}", _key(annotator, recording_id, start, end))


_KEY = 'annotator = ? AND recording_id = ? AND start = ? AND "end" = ?'


def _key(annotator: str, recording_id: str, start: float, end: float) -> tuple[str, str, float, float]:
    return annotator, recording_id, round(start, TIME_DECIMALS), round(end, TIME_DECIMALS)
