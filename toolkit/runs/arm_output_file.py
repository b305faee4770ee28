"""An arm's full output on one recording as its run folder stores it (``outputs/<arm>/<recording>.json``).

Written last of an arm's files (the mark that its result is complete) and read back to reuse the result, score
it (VAD regions, seams), cost a run (units of work), check that one code version made a verdict's results, and
queue disputes for review: always through ``RunFolder.write_arm_output`` / ``read_arm_output``, strictly
(toolkit.core.json_records). The stages' own reports (seams, disagreements between recognizers, decode units
and segments, recognizer notes, enhancement) stay the JSON objects the stages wrote; everything a reader
relies on at the top is a typed field.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolkit.core.json_records import Absent, optional_key
from toolkit.core.transcripts import Word


@dataclass(frozen=True)
class Times:
    """Wall and CPU seconds of what one run spent on the result (zero when it was reused)."""

    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class Cost:
    """What the result cost when it was made: wall and CPU seconds, peak resident memory."""

    wall_s: float
    cpu_s: float
    peak_rss_mb: float


@dataclass(frozen=True)
class Reuse:
    """Units of one kind (decode, vad, enhance) made for the result, and reused from the cache."""

    computed: int
    reused: int


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work by its cache key: arms that share a decode, VAD pass or enhancement name the same key."""

    kind: str
    wall_s: float
    cpu_s: float


@dataclass(frozen=True)
class ArmOutputFile:
    """Everything an arm produced for one recording, in original time, with the key and code that made it."""

    unit_key: str  # the configuration and audio the result was made for: a result is reused only under its key
    code: str  # the pipeline code's digest
    arm: str
    recording: str
    duration: float
    this_run: Times
    words: tuple[Word, ...]
    vad_segments: tuple[tuple[float | None, float | None], ...] | None  # None: no VAD; a None time maps nowhere
    seams: tuple[dict[str, Any], ...]
    disagreements: tuple[dict[str, Any], ...]
    units: tuple[dict[str, Any], ...]
    enhancement: dict[str, Any] | None
    segments: tuple[dict[str, Any], ...]
    compute: Cost
    worker_cpu_s: float
    reuse: dict[str, Reuse]
    recognizer_notes: dict[str, dict[str, Any]]
    unmapped_times: int
    decoded: dict[str, tuple[tuple[float, float], ...]]  # per recognizer, the original-time spans it decoded
    partly_decoded: bool
    retimed_onsets: int
    notes: tuple[str, ...]
    work: dict[str, WorkUnit]
    real_time_factor: float | None
    # What each signal stage did to the recording, by stage name (a loudness gain); absent without one.
    prepared: dict[str, dict[str, Any]] | Absent = optional_key()

    def mapped_speech(self) -> list[tuple[float, float]] | None:
        """The VAD's speech regions whose both times map into the recording; None for an arm without VAD."""
        if self.vad_segments is None:
            return None
        return [(start, end) for start, end in self.vad_segments if start is not None and end is not None]
