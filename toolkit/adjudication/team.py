"""The lead's view of the team: who works on which recording (assignments), and how far each one got.

An assignment gives an annotator a recording, or one stretch of it, to work on first: the review
queue lists what is assigned to them before everything else (the rest stays reachable below, so
a listener with nothing assigned, or done with it, still has work). Assignments live in the
experiment's store file, append-only: assigning or withdrawing one adds a row with the lead and the
time, and the latest row for an (annotator, recording, stretch) says whether it holds.

Progress per person comes from the store as it is: the stretches they decided as a listener, the
share of each recording's audio their blind transcription covers, and how often their decisions
agree with another listener's on the stretches both decided.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.rows import Table, append_only, connect, read, transaction, write
from toolkit.adjudication.store import SpanState
from toolkit.core.errors import InputError
from toolkit.scorer.metrics.intervals import merge

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS team_assignments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    created_at TEXT NOT NULL,
    lead TEXT NOT NULL,
    annotator TEXT NOT NULL CHECK (length(trim(annotator)) > 0),
    recording_id TEXT NOT NULL,
    start REAL,
    "end" REAL,
    assigned INTEGER NOT NULL CHECK (assigned IN (0, 1))
);
{append_only("team_assignments", "an assignment", "assign or withdraw it anew")}
"""


@dataclass(frozen=True)
class Assignment:
    """A row of ``team_assignments``: a lead gave (or, ``assigned`` false, took back) a recording or a stretch."""

    id: int
    created_at: str
    lead: str
    annotator: str
    recording_id: str
    start: float | None  # None: the whole recording
    end: float | None
    assigned: bool

    @property
    def key(self) -> tuple[str, str, float | None, float | None]:
        return (self.annotator, self.recording_id, self.start, self.end)

    def covers(self, recording_id: str, start: float | None, end: float | None) -> bool:
        """Whether a queue item on ``recording_id`` at ``[start, end]`` falls in this assignment."""
        if recording_id != self.recording_id:
            return False
        if self.start is None or self.end is None:
            return True
        return start is not None and end is not None and start < self.end and end > self.start


ASSIGNMENTS = Table("team_assignments", Assignment)


class Assignments:
    """The assignments of one experiment, in its store file."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Path(store_path)
        with connect(self.path) as connection:
            connection.executescript(_SCHEMA)

    def record(
        self,
        lead: str,
        annotator: str,
        recording_id: str,
        start: float | None = None,
        end: float | None = None,
        assigned: bool = True,
    ) -> Assignment:
        """Assign (or withdraw) a recording, or its stretch ``[start, end]``, to ``annotator``."""
        if (start is None) != (end is None) or (start is not None and end is not None and not 0 <= start < end):
            raise InputError(self.path, f"an assigned stretch needs 0 <= start < end (got {start}, {end})")
        with connect(self.path) as connection, transaction(connection):
            return write(
                connection,
                ASSIGNMENTS,
                created_at=datetime.now(UTC).isoformat(timespec="seconds"),
                lead=lead,
                annotator=annotator,
                recording_id=recording_id,
                start=start,
                end=end,
                assigned=assigned,
            )

    def history(self) -> list[Assignment]:
        """Every row, oldest first (nothing is ever removed)."""
        with connect(self.path) as connection:
            return read(connection, self.path, ASSIGNMENTS)

    def current(self, annotator: str | None = None) -> list[Assignment]:
        """The assignments that hold now (the latest row of each), of ``annotator`` or of everyone."""
        latest = {row.key: row for row in self.history()}
        return [a for a in latest.values() if a.assigned and (annotator is None or a.annotator == annotator)]


def assigned_first(items: Iterable[tuple[str, float | None, float | None]], mine: list[Assignment]) -> list[int]:
    """Positions of ``items`` (recording, start, end) with those an assignment in ``mine`` covers first,
    each group in its own order."""
    spans = list(items)
    covered = [any(a.covers(*span) for a in mine) for span in spans]
    return [k for k in range(len(spans)) if covered[k]] + [k for k in range(len(spans)) if not covered[k]]


@dataclass(frozen=True)
class Progress:
    """How far one person got: stretches decided as a listener, the share of each recording's audio
    transcribed blind, and agreement with other listeners on stretches both decided."""

    name: str
    decided: int
    blind_share: dict[str, float]  # recording -> covered seconds / duration, for recordings begun
    shared: int  # stretches this person and another listener both decided (counted per other listener)
    agreed: int

    @property
    def agreement(self) -> float | None:
        return self.agreed / self.shared if self.shared else None


def blind_share(transcripts: TranscriptStore, recording_id: str, annotator: str, duration: float) -> float:
    """The share of the recording's ``duration`` that ``annotator``'s current blind segments cover."""
    covered = merge([(s.start, s.end) for s in transcripts.segments(recording_id, annotator)])
    seconds = float(np.sum(covered[:, 1] - covered[:, 0])) if len(covered) else 0.0
    return min(1.0, seconds / duration) if duration > 0 else 0.0


def progress(
    names: Iterable[str], states: Iterable[SpanState], transcripts: TranscriptStore, durations: dict[str, float]
) -> list[Progress]:
    """Each of ``names``' progress from the decision states and the transcript store."""
    states = list(states)
    found = []
    for name in names:
        decided = shared = agreed = 0
        for state in states:
            listeners = state.listeners
            own = next((d for d in listeners if d.annotator == name), None)
            if own is None:
                continue
            decided += 1
            for other in listeners:
                if other.annotator != name:
                    shared += 1
                    agreed += own.agrees_with(other)
        shares = {}
        for recording_id, duration in durations.items():
            share = blind_share(transcripts, recording_id, name, duration)
            if share > 0:
                shares[recording_id] = share
        found.append(Progress(name, decided, shares, shared, agreed))
    return found
