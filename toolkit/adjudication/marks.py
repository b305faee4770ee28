"""Marks a listener sets on the waveform: confirmed speech or non-speech intervals and word times.

A mark is one listener's statement about the audio of one recording: ``[start, end]`` is
confirmed ``speech`` or ``nonspeech``, or a ``word`` (its text in ``label``) is said there.
Marks live in the experiment's store file (table ``marks``), append-only like decisions and
transcription segments: moving a mark stores a new one that ``replaces`` it, removing it stores a
``withdrawn`` row that names it; triggers refuse any change or deletion. A listener's current
marks go into their transcription TextGrid (``toolkit.adjudication.blind``), tiers ``speech``
and ``words``, which is what the scorer reads.
"""

from __future__ import annotations

import math
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolkit.adjudication.rows import Table, append_only, connect, read, transaction, write
from toolkit.adjudication.store import DURATION_TOLERANCE, TIME_DECIMALS
from toolkit.core.errors import InputError
from toolkit.core.transcripts import NONSPEECH, SPEECH, Interval, Reference, Word
from toolkit.scorer.metrics.intervals import merge, subtract

WORD, WITHDRAWN = "word", "withdrawn"
KINDS = (SPEECH, NONSPEECH, WORD)
MAX_LABEL = 200
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS marks (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recording_id TEXT NOT NULL,
    annotator TEXT NOT NULL CHECK (length(trim(annotator)) > 0),
    kind TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in (*KINDS, WITHDRAWN))})),
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    label TEXT NOT NULL,
    replaces INTEGER REFERENCES marks(id),
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS marks_recording ON marks (recording_id, annotator);
{append_only("marks", "a mark", "store a new one that replaces it")}"""


@dataclass(frozen=True)
class Mark:
    """One stored mark (seconds in the original recording); a ``withdrawn`` row only names the one it removes."""

    id: int
    recording_id: str
    annotator: str
    kind: str
    start: float
    end: float
    label: str
    replaces: int | None
    created_at: str

    def to_json(self) -> dict[str, object]:
        """What the waveform view needs of a mark."""
        return {"id": self.id, "kind": self.kind, "start": self.start, "end": self.end, "label": self.label}


MARKS = Table("marks", Mark)


class MarkStore:
    """The listeners' waveform marks in the experiment's store file."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Path(store_path)
        with connect(self.path) as connection:
            connection.executescript(_SCHEMA)

    def add(
        self,
        *,
        recording_id: str,
        annotator: str,
        kind: str,
        start: float,
        end: float,
        duration: float,
        label: str = "",
        replaces: int | None = None,
    ) -> Mark:
        """Store one mark in its own transaction (``replaces``: the annotator's own current mark it moves)."""
        annotator = " ".join((annotator or "").split())
        label = " ".join(label.split())
        if not annotator:
            raise InputError(self.path, "a mark needs an annotator name; it was not stored")
        if kind not in KINDS:
            raise InputError(self.path, f"a mark is {', '.join(KINDS)}, not '{kind}'")
        if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or round(end, 3) <= round(start, 3):
            raise InputError(self.path, f"{start}-{end} s of '{recording_id}' is not an interval (0 <= start < end)")
        if end > duration + DURATION_TOLERANCE:
            raise InputError(self.path, f"{start:g}-{end:g} s lies outside recording '{recording_id}' ({duration:g} s)")
        if kind == WORD and (not label or len(label.split()) != 1 or len(label) > MAX_LABEL):
            raise InputError(self.path, f"a word's time needs the word itself (one word), not '{label[:40]}'")
        if kind != WORD:
            label = ""
        start, end = round(start, TIME_DECIMALS), round(end, TIME_DECIMALS)
        return self._write(recording_id, annotator, kind, start, end, label, replaces)

    def withdraw(self, *, recording_id: str, annotator: str, mark_id: int) -> Mark:
        """Remove one of the annotator's current marks (a row naming it; the mark itself stays in the file)."""
        annotator = " ".join((annotator or "").split())
        return self._write(recording_id, annotator, WITHDRAWN, 0.0, 0.0, "", mark_id)

    def _write(
        self, recording_id: str, annotator: str, kind: str, start: float, end: float, label: str, replaces: int | None
    ) -> Mark:
        with connect(self.path) as connection, transaction(connection):
            mine = {m.id for m in _current(connection, self.path, recording_id, annotator)}
            if replaces is not None and replaces not in mine:
                raise InputError(self.path, f"mark #{replaces} is not a current mark of {annotator} on {recording_id}")
            return write(
                connection,
                MARKS,
                recording_id=recording_id,
                annotator=annotator,
                kind=kind,
                start=start,
                end=end,
                label=label,
                replaces=replaces,
                created_at=datetime.now(UTC).isoformat(timespec="milliseconds"),
            )

    def current(self, recording_id: str, annotator: str) -> list[Mark]:
        """The annotator's marks of the recording that nothing replaced or withdrew, oldest first."""
        with connect(self.path) as connection:
            return _current(connection, self.path, recording_id, annotator)


def _current(connection: sqlite3.Connection, path: Path, recording_id: str, annotator: str) -> list[Mark]:
    rows = read(connection, path, MARKS, "recording_id = ? AND annotator = ?", (recording_id, annotator), "id")
    gone = {m.replaces for m in rows if m.replaces is not None}
    return [m for m in rows if m.kind != WITHDRAWN and m.id not in gone]


def with_marks(reference: Reference, marks: list[Mark]) -> Reference:
    """``reference`` with the marks laid over it, newest last: an interval mark takes its stretch of the
    speech tier (cutting what was there), a word mark replaces the words it overlaps."""
    speech = list(reference.speech)
    words = list(reference.words)
    for mark in sorted(marks, key=lambda m: m.id):
        if mark.kind == WORD:
            words = [w for w in words if not _overlaps(w.start, w.end, mark.start, mark.end)]
            words.append(Word(mark.label, mark.start, mark.end))
        else:
            speech = without(speech, mark.start, mark.end) + [Interval(mark.start, mark.end, mark.kind)]
    return Reference(
        reference.recording_id,
        reference.utterances,
        sorted(words, key=lambda w: (w.start or 0.0, w.end or 0.0)),
        sorted(speech, key=lambda i: i.start),
        reference.unresolved,
        reference.names,
        reference.derived_times,
    )


def _overlaps(start: float | None, end: float | None, lo: float, hi: float) -> bool:
    return start is not None and end is not None and start < hi and end > lo


def without(intervals: list[Interval], start: float, end: float, only: str | None = None) -> list[Interval]:
    """``intervals`` with ``[start, end]`` cut out of each (of those labelled ``only``, if given), in time order."""
    kept = []
    for interval in intervals:
        if (only is not None and interval.label != only) or interval.end <= start or interval.start >= end:
            kept.append(interval)
            continue
        for lo, hi in subtract(merge([(interval.start, interval.end)]), merge([(start, end)])).tolist():
            kept.append(Interval(lo, hi, interval.label))
    return sorted(kept, key=lambda i: i.start)
