"""Invented text in human-confirmed non-speech; WER has no denominator there.

A hypothesis word is inside a non-speech interval when the midpoint of its span (its onset if
it has no end) lies in the closed interval. Untimed words cannot be placed and are not counted
here (timing reports how many there are); when no counted word has a time at all, the figures
are "not available". Words that normalize to nothing are not counted.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.scorer.metrics.figures import Figure, Figures
from toolkit.scorer.metrics.tokens import SourceWords


@dataclass(frozen=True)
class NonspeechScore(Figures):
    """Invented words per minute of confirmed non-speech, and intervals with any text.

    Counts are None when the hypothesis has words but none of them timed (they cannot be placed).
    Pooled (``+``), a record that is not available adds nothing: its non-speech cannot be compared.
    """

    FIGURES = (
        Figure("available", pooled=False),
        Figure("seconds", digits=3),
        Figure("minutes", None, digits=4),
        Figure("invented_words", attr="invented"),
        Figure("per_minute"),
        Figure("intervals"),
        Figure("intervals_with_text", attr="with_text"),
        Figure("fraction_with_text", None),
    )

    seconds: float = 0.0
    intervals: int = 0
    available: bool = field(default=True, metadata={"add": operator.and_})
    invented_words: int = 0
    intervals_with_text: int = 0
    instances: tuple[dict[str, Any], ...] = ()

    @property
    def minutes(self) -> float:
        return self.seconds / 60.0

    @property
    def invented(self) -> int | None:
        return self.invented_words if self.available else None

    @property
    def with_text(self) -> int | None:
        return self.intervals_with_text if self.available else None

    @property
    def per_minute(self) -> float | None:
        return self.invented_words / self.minutes if self.seconds > 0 and self.available else None

    @property
    def fraction_with_text(self) -> float | None:
        return self.intervals_with_text / self.intervals if self.intervals and self.available else None

    def json_extras(self) -> dict[str, Any]:
        return {"instances": list(self.instances)}

    def __add__(self, other: NonspeechScore) -> NonspeechScore:
        if type(other) is not NonspeechScore:
            return NotImplemented
        if not (self.available and other.available):
            placed = [s for s in (self, other) if s.available]
            return placed[0] if placed else NOTHING_PLACED
        return super().__add__(other)


NOTHING_PLACED = NonspeechScore(available=False)  # the sum of no available record


def nonspeech_score(intervals: np.ndarray, hyp: SourceWords, counted: np.ndarray) -> NonspeechScore:
    """Count hypothesis words (``counted`` mask: words with a normalized token) inside ``intervals``.

    ``intervals`` is a ``(k, 2)`` array of non-overlapping non-speech spans.
    """
    order = np.argsort(intervals[:, 0], kind="stable") if len(intervals) else np.zeros(0, int)
    spans = intervals[order]
    available = not (counted.any() and not (counted & hyp.timed).any())
    seconds = float((spans[:, 1] - spans[:, 0]).sum()) if len(spans) else 0.0
    if not len(spans) or not len(hyp):
        return NonspeechScore(seconds, len(spans), available)
    mid = np.where(np.isnan(hyp.end), hyp.start, (hyp.start + hyp.end) / 2)
    k = np.searchsorted(spans[:, 0], mid, side="right") - 1
    kk = np.clip(k, 0, None)
    with np.errstate(invalid="ignore"):
        inside = (k >= 0) & (mid <= spans[kk, 1]) & counted
    by_interval: dict[int, list[int]] = {}  # one pass: a mask per interval would be quadratic on long recordings
    for word in np.flatnonzero(inside).tolist():
        by_interval.setdefault(int(kk[word]), []).append(word)
    instances = [
        {
            "start": round(float(spans[interval, 0]), 3),
            "end": round(float(spans[interval, 1]), 3),
            "text": " ".join(hyp.texts[w] for w in words),
            "words": len(words),
        }
        for interval, words in sorted(by_interval.items())
    ]
    return NonspeechScore(
        seconds,
        len(spans),
        available,
        invented_words=int(inside.sum()),
        intervals_with_text=len(instances),
        instances=tuple(instances),
    )
