"""Blind transcription: each annotator's own segments of a recording, saved one transaction each.

A segment is what a listener says about one stretch ``[start, end]``: the turn's text (empty:
nobody speaks there, or not transcribed) and speaker (optional; several speakers give one
``utterances/SPEAKER`` tier each), whether the stretch is confirmed ``speech`` or
``nonspeech`` (or not annotated), an optional unresolved sub-span with its note, and optional
times for the turn's first and last word (the boundaries the scorer reads). Segments live in
the experiment's decision store (table ``transcript_segments``); a later segment of the same
annotator overlapping an earlier one supersedes it, and nothing is deleted. After each save the
annotator's TextGrid ``transcriptions/<annotator>/<recording>.TextGrid`` is rewritten from the
current segments with the tiers the toolkit reads (``utterances``, ``words``, ``speech``,
``unresolved``; the annotator's waveform marks of the recording go into ``speech`` and
``words``), so it opens in Praat and freezes like any reference. Triggers in the store
refuse to change or delete a saved segment.

Where two listeners' transcriptions of one stretch differ, a lead settles it
(``transcript_settlements``, append-only too); ``toolkit.adjudication.agreement`` compares the
listeners and writes the agreed transcription.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.adjudication.marks import MarkStore, with_marks
from toolkit.adjudication.passes import PASSES
from toolkit.adjudication.passes import SCHEMA as PASSES_SCHEMA
from toolkit.adjudication.rows import Table, append_only, connect, read, transaction, write
from toolkit.adjudication.store import DURATION_TOLERANCE, TIME_DECIMALS
from toolkit.adjudication.stretches import Stretch
from toolkit.core.errors import InputError
from toolkit.core.transcripts import NONSPEECH, SPEECH, Interval, Reference, Utterance, Word
from toolkit.formats import write_reference_textgrid
from toolkit.scorer.metrics.intervals import merge, overlap

FOLDER = "transcriptions"
SPEECH_LABELS = (SPEECH, NONSPEECH, "")
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS transcript_segments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recording_id TEXT NOT NULL,
    annotator TEXT NOT NULL CHECK (length(trim(annotator)) > 0),
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    text TEXT NOT NULL,
    speaker TEXT NOT NULL,
    speech TEXT NOT NULL,
    unresolved_start REAL,
    unresolved_end REAL,
    unresolved_note TEXT NOT NULL,
    first_word_end REAL,
    last_word_start REAL,
    created_at TEXT NOT NULL
);
{append_only("transcript_segments", "a transcription segment", "save a new one over the same stretch")}
CREATE TABLE IF NOT EXISTS transcript_settlements (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recording_id TEXT NOT NULL,
    start REAL NOT NULL,
    "end" REAL NOT NULL,
    text TEXT NOT NULL,
    speaker TEXT NOT NULL,
    speech TEXT NOT NULL,
    lead TEXT NOT NULL CHECK (length(trim(lead)) > 0),
    source TEXT NOT NULL,
    created_at TEXT NOT NULL
);
{append_only("transcript_settlements", "a settlement", "record a new one")}"""


@dataclass(frozen=True)
class Segment:
    """One saved stretch of a blind transcription (seconds in the original recording)."""

    id: int
    recording_id: str
    annotator: str
    start: float
    end: float
    text: str
    speaker: str
    speech: str
    unresolved_start: float | None
    unresolved_end: float | None
    unresolved_note: str
    first_word_end: float | None
    last_word_start: float | None
    created_at: str


@dataclass(frozen=True)
class Settlement:
    """A lead's transcription of a stretch on which listeners disagree."""

    id: int
    recording_id: str
    start: float
    end: float
    text: str
    speaker: str
    speech: str
    lead: str
    source: str
    created_at: str


SEGMENTS = Table("transcript_segments", Segment)
SETTLEMENTS = Table("transcript_settlements", Settlement)


class TranscriptStore:
    """Blind transcription segments in the experiment's store file, and the TextGrids made from them."""

    def __init__(self, store_path: str | Path, experiment_dir: str | Path) -> None:
        self.path = Path(store_path)
        self.folder = Path(experiment_dir) / FOLDER
        with connect(self.path) as connection:
            connection.executescript(_SCHEMA)
            connection.executescript(PASSES_SCHEMA)  # save reads it: a closed pass takes no segment

    def save(
        self,
        *,
        recording_id: str,
        annotator: str,
        start: float,
        end: float,
        duration: float,
        text: str = "",
        speaker: str = "",
        speech: str = "",
        unresolved: tuple[float, float, str] | None = None,
        first_word_end: float | None = None,
        last_word_start: float | None = None,
    ) -> Segment:
        """Store one segment (refusing bad times, empty names and a closed blind pass) and rewrite the annotator's
        TextGrid."""
        annotator = " ".join((annotator or "").split())
        text = " ".join(text.split())
        if not annotator:
            raise InputError(self.path, "a transcription needs an annotator name; it was not saved")
        _check(self.path, recording_id, start, end, duration)
        if speech not in SPEECH_LABELS:
            raise InputError(self.path, f"speech must be '{SPEECH}', '{NONSPEECH}' or empty, not '{speech}'")
        if text and speech == NONSPEECH:
            raise InputError(self.path, "a stretch with text cannot be confirmed non-speech")
        u_start = u_end = None
        note = ""
        if unresolved is not None:
            u_start, u_end, note = unresolved
            if not (start <= u_start < u_end <= end):
                raise InputError(
                    self.path,
                    f"the unresolved stretch {u_start:g}-{u_end:g} s must lie inside the segment {start:g}-{end:g} s",
                )
            note = note.strip() or "inaudível"
        words = text.split()
        for label, value in (("first word's end", first_word_end), ("last word's start", last_word_start)):
            if value is not None and not (words and start < value < end):
                raise InputError(self.path, f"the {label} ({value:g} s) needs text and must lie inside the segment")
        with connect(self.path) as connection, transaction(connection):
            for done in read(
                connection, self.path, PASSES, "recording_id = ? AND person = ?", (recording_id, annotator)
            ):
                raise InputError(
                    self.path,
                    f"{annotator}'s blind pass of '{recording_id}' is closed ({done.kind} by {done.by}): "
                    "what is transcribed after seeing model output is not blind; it was not saved",
                )
            segment = write(
                connection,
                SEGMENTS,
                annotator=annotator,
                unresolved_start=u_start,
                unresolved_end=u_end,
                unresolved_note=note,
                first_word_end=first_word_end,
                last_word_start=last_word_start,
                **_said(recording_id, start, end, text, speaker, speech),
            )
        self.write_textgrid(recording_id, annotator, duration)
        return segment

    def segments(self, recording_id: str, annotator: str) -> list[Segment]:
        """The annotator's current segments of a recording (superseded ones left out), in time order."""
        with connect(self.path) as connection:
            rows = read(
                connection,
                self.path,
                SEGMENTS,
                "recording_id = ? AND annotator = ?",
                (recording_id, annotator),
                "id DESC",
            )
        current: list[Segment] = []
        for segment in rows:  # newest first: a segment survives if no newer one overlaps it
            if all(segment.end <= kept.start or segment.start >= kept.end for kept in current):
                current.append(segment)
        return sorted(current, key=lambda s: s.start)

    def next_untranscribed(self, recording_id: str, annotator: str, stretches: list[Stretch]) -> Stretch | None:
        """The first stretch less than half covered by the annotator's segments (None: all done)."""
        covered = merge([(seg.start, seg.end) for seg in self.segments(recording_id, annotator)])
        for stretch in stretches:
            inside = overlap(covered, np.array([stretch.start]), np.array([stretch.end]))[0]
            if inside < 0.5 * (stretch.end - stretch.start):
                return stretch
        return None

    def annotators(self, recording_id: str) -> list[str]:
        """Everyone who saved a segment of the recording, in the order they first did."""
        with connect(self.path) as connection:
            segments = read(connection, self.path, SEGMENTS, "recording_id = ?", (recording_id,), "id")
        return list(dict.fromkeys(segment.annotator for segment in segments))

    def segment_counts(self, recording_id: str) -> dict[str, int]:
        """How many current segments each listener has saved on the recording."""
        return {name: len(self.segments(recording_id, name)) for name in self.annotators(recording_id)}

    def settle(
        self,
        *,
        recording_id: str,
        start: float,
        end: float,
        duration: float,
        text: str,
        lead: str,
        speech: str = "",
        speaker: str = "",
        source: str = "",
    ) -> Settlement:
        """Record a lead's transcription of a stretch on which listeners disagree."""
        lead = " ".join((lead or "").split())
        text = " ".join(text.split())
        if not lead:
            raise InputError(self.path, "a settlement needs the lead's name; it was not saved")
        _check(self.path, recording_id, start, end, duration)
        if speech not in SPEECH_LABELS or (text and speech == NONSPEECH):
            raise InputError(self.path, f"speech must be '{SPEECH}', '{NONSPEECH}' (without text) or empty")
        with connect(self.path) as connection:
            return write(
                connection,
                SETTLEMENTS,
                lead=lead,
                source=source,
                **_said(recording_id, start, end, text, speaker, speech),
            )

    def settlements(self, recording_id: str) -> list[Settlement]:
        """Every settlement of the recording, oldest first."""
        with connect(self.path) as connection:
            return read(connection, self.path, SETTLEMENTS, "recording_id = ?", (recording_id,), "id")

    def textgrid_path(self, recording_id: str, annotator: str) -> Path:
        return self.folder / _slug(annotator) / f"{recording_id}.TextGrid"

    def write_textgrid(self, recording_id: str, annotator: str, duration: float) -> Path:
        return write_reference_textgrid(
            self.reference(recording_id, annotator), self.textgrid_path(recording_id, annotator), duration
        )

    def reference(self, recording_id: str, annotator: str) -> Reference:
        """The annotator's current segments as a reference (turns, boundary words, speech, unresolved),
        with their waveform marks laid over it (``toolkit.adjudication.marks``)."""
        utterances, words, speech, unresolved = [], [], [], []
        for s in self.segments(recording_id, annotator):
            tokens = s.text.split()
            if tokens:
                utterances.append(Utterance(s.start, s.end, s.text, s.speaker))
                if s.first_word_end is not None:
                    words.append(Word(tokens[0], s.start, s.first_word_end))
                if s.last_word_start is not None and (len(tokens) > 1 or s.first_word_end is None):
                    words.append(Word(tokens[-1], max(s.last_word_start, s.first_word_end or s.start), s.end))
            label = SPEECH if tokens and not s.speech else s.speech
            if label:
                speech.append(Interval(s.start, s.end, label))
            if s.unresolved_start is not None:
                unresolved.append(Interval(s.unresolved_start, s.unresolved_end, s.unresolved_note))  # type: ignore[arg-type]
        segments = Reference(recording_id, utterances, words, speech, unresolved)
        return with_marks(segments, MarkStore(self.path).current(recording_id, annotator))


def _said(recording_id: str, start: float, end: float, text: str, speaker: str, speech: str) -> dict[str, Any]:
    """The columns a segment and a settlement share: the stretch, what is said there and by whom, and when."""
    return {
        "recording_id": recording_id,
        "start": round(start, TIME_DECIMALS),
        "end": round(end, TIME_DECIMALS),
        "text": text,
        "speaker": " ".join(speaker.split()),
        "speech": speech,
        "created_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
    }


def _check(path: Path, recording_id: str, start: float, end: float, duration: float) -> None:
    if not (math.isfinite(start) and math.isfinite(end)) or start < 0 or end <= start:
        raise InputError(path, f"{start}-{end} s of '{recording_id}' is not a stretch (0 <= start < end)")
    if end > duration + DURATION_TOLERANCE:
        raise InputError(path, f"{start:g}-{end:g} s lies outside recording '{recording_id}' ({duration:g} s long)")


def _slug(name: str) -> str:
    """A folder name for an annotator (letters, digits, dot, dash, underscore)."""
    return re.sub(r"[^\w.-]+", "_", name.strip()).strip("._") or "annotator"
