"""Plain records shared by every stage: words, intervals, references and hypotheses.

All times are seconds in the original recording's timeline. ``None`` means "no time could
be derived" and is counted as such by the scorer, never guessed.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from itertools import repeat
from typing import Any


@dataclass(frozen=True)
class Word:
    """One recognised or reference word; ``segment_id`` names the window/segment that produced it."""

    text: str
    start: float | None = None
    end: float | None = None
    confidence: float | None = None
    segment_id: str | None = None

    @property
    def timed(self) -> bool:
        return self.start is not None and self.end is not None

    @property
    def span(self) -> tuple[float, float]:
        """``(start, end)`` of a timed word, for code that has checked ``timed``; an untimed word is a bug there."""
        if self.start is None or self.end is None:
            raise ValueError(f"word {self.text!r} has no times")
        return self.start, self.end

    @classmethod
    def from_columns(
        cls,
        texts: Iterable[str],
        starts: Iterable[float | None],
        ends: Iterable[float | None],
        confidences: Iterable[float | None] | None = None,
        segment_ids: Iterable[str | None] | None = None,
    ) -> list[Word]:
        """``list(map(Word, texts, starts, ends, ...))`` 2.3x faster, the same words (==, hash, repr, fields): each
        word's fields are filled in at once, not one ``object.__setattr__`` each (a frozen class's ``__init__``), for
        the readers' thousands of words."""
        new = object.__new__
        words = []
        for text, start, end, confidence, segment_id in zip(
            texts,
            starts,
            ends,
            repeat(None) if confidences is None else confidences,
            repeat(None) if segment_ids is None else segment_ids,
        ):
            word = new(cls)
            attributes = word.__dict__
            attributes["text"] = text
            attributes["start"] = start
            attributes["end"] = end
            attributes["confidence"] = confidence
            attributes["segment_id"] = segment_id
            words.append(word)
        return words


@dataclass(frozen=True)
class Interval:
    """A labelled span of the original recording, ``start <= end``."""

    start: float
    end: float
    label: str = ""

    @property
    def duration(self) -> float:
        return self.end - self.start


@dataclass(frozen=True)
class Utterance:
    """A reference turn with its verbatim text, timed at the utterance level."""

    start: float
    end: float
    text: str
    speaker: str = ""


SPEECH = "speech"
NONSPEECH = "nonspeech"


DERIVED_METHOD = "forced alignment"


@dataclass(frozen=True)
class DerivedTimes:
    """Where a reference's word times came from when no listener marked them: a forced alignment by ``model``
    (weights ``weights_sha256``), whose first-word onsets were measured ``onset_p95_s`` seconds off at the 95th
    percentile (None: not measured for these weights, so no time-based gate may use them)."""

    model: str
    weights_sha256: str
    onset_p95_s: float | None

    @property
    def error_bound_s(self) -> float:
        """The measured p95 onset error, infinite when not measured: no time threshold is coarser."""
        return math.inf if self.onset_p95_s is None else self.onset_p95_s

    def describe(self) -> str:
        """``derived (forced alignment, p95 0.97 s)``: how a table marks figures measured against these times."""
        accuracy = "accuracy not measured" if self.onset_p95_s is None else f"p95 {self.onset_p95_s:g} s"
        return f"derived ({DERIVED_METHOD}, {accuracy})"


@dataclass
class Reference:
    """Everything a listener says about one recording; ``derived_times`` is set when its word times were derived
    by forced alignment rather than marked."""

    recording_id: str
    utterances: list[Utterance]
    words: list[Word] = field(default_factory=list)
    speech: list[Interval] = field(default_factory=list)
    unresolved: list[Interval] = field(default_factory=list)
    names: list[str] = field(default_factory=list)
    derived_times: DerivedTimes | None = None

    @property
    def text(self) -> str:
        return " ".join(u.text for u in self.utterances)

    def nonspeech(self) -> list[Interval]:
        """Human-confirmed non-speech intervals."""
        return [i for i in self.speech if i.label == NONSPEECH]

    def annotated_speech(self) -> list[Interval]:
        return [i for i in self.speech if i.label == SPEECH]


@dataclass
class Hypothesis:
    """One arm's output for one recording; an empty word list is a valid (empty) hypothesis."""

    recording_id: str
    words: list[Word]
    arm: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return " ".join(w.text for w in self.words)

    def to_json(self) -> dict[str, Any]:
        """The JSON words form; read it back with :func:`toolkit.formats.read_hypothesis`, which checks every field."""
        return {
            "recording_id": self.recording_id,
            "arm": self.arm,
            "meta": self.meta,
            "words": [asdict(w) for w in self.words],
        }
