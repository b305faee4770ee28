"""Invented text in human-confirmed non-speech (SPEC section 5); WER has no denominator there.

A hypothesis word is inside a non-speech interval when the midpoint of its span (its onset if
it has no end) lies in the closed interval. Untimed words cannot be placed and are not counted
here (timing reports how many there are); when no counted word has a time at all, the figures
are "not available". Words that normalize to nothing are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.metrics.tokens import SourceWords


@dataclass
class NonspeechScore:
    """Invented words per minute of confirmed non-speech, and intervals with any text."""

    seconds: float
    intervals: int
    available: bool = True
    invented_words: int = 0
    intervals_with_text: int = 0
    instances: list[dict[str, Any]] = field(default_factory=list)

    @property
    def minutes(self) -> float:
        return self.seconds / 60.0

    @property
    def per_minute(self) -> float | None:
        return self.invented_words / self.minutes if self.seconds > 0 and self.available else None

    @property
    def fraction_with_text(self) -> float | None:
        return self.intervals_with_text / self.intervals if self.intervals and self.available else None

    def to_json(self) -> dict[str, Any]:
        """Counts are null when the hypothesis has words but none of them timed (cannot be placed)."""
        shown = self.available
        return {"available": shown, "minutes": round(self.minutes, 4),
                "invented_words": self.invented_words if shown else None,
                "per_minute": self.per_minute, "intervals": self.intervals,
                "intervals_with_text": self.intervals_with_text if shown else None,
                "fraction_with_text": self.fraction_with_text, "instances": self.instances}


def nonspeech_score(intervals: np.ndarray, hyp: SourceWords, counted: np.ndarray) -> NonspeechScore:
    """Count hypothesis words (``counted`` mask: words with a normalized token) inside ``intervals``.

    ``intervals`` is a ``(k, 2)`` array of non-overlapping non-speech spans.
    """
    order = np.argsort(intervals[:, 0], kind="stable") if len(intervals) else np.zeros(0, int)
    spans = intervals[order]
    score = NonspeechScore(seconds=float((spans[:, 1] - spans[:, 0]).sum()) if len(spans) else 0.0,
                           intervals=len(spans), available=not (counted.any() and not (counted & hyp.timed).any()))
    if not len(spans) or not len(hyp):
        return score
    mid = np.where(np.isnan(hyp.end), hyp.start, (hyp.start + hyp.end) / 2)
    k = np.searchsorted(spans[:, 0], mid, side="right") - 1
    kk = np.clip(k, 0, None)
    with np.errstate(invalid="ignore"):
        inside = (k >= 0) & (mid <= spans[kk, 1]) & counted
    score.invented_words = int(inside.sum())
    for interval in np.unique(kk[inside]).tolist():
        words = np.flatnonzero(inside & (kk == interval))
        score.intervals_with_text += 1
        score.instances.append({"start": round(float(spans[interval, 0]), 3),
                                "end": round(float(spans[interval, 1]), 3),
                                "text": " ".join(hyp.texts[w] for w in words.tolist()),
                                "words": len(words)})
    return score
