"""VAD speech recall and clipped reference words (SPEC section 5).

Recall = annotated speech duration kept by the VAD / annotated speech duration, counted only
inside annotated speech (unresolved spans removed). A timed reference word is clipped when no
single VAD segment covers its whole span (cut into), and dropped when no VAD segment touches it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.metrics.aligned import Instance
from toolkit.metrics.intervals import covered, intersect, overlap, total
from toolkit.metrics.tokens import SourceWords


@dataclass
class VadScore:
    """Speech recall of VAD segments plus clipped words and negations with their denominators."""

    speech_s: float
    retained_s: float
    speech_source: str
    ref_timed_words: int = 0
    clipped_words: int = 0
    dropped_words: int = 0
    ref_timed_negations: int = 0
    clipped_negations: int = 0
    instances: list[Instance] = field(default_factory=list)

    @property
    def recall(self) -> float | None:
        return self.retained_s / self.speech_s if self.speech_s > 0 else None

    def to_json(self) -> dict[str, Any]:
        return {"speech_recall": self.recall, "speech_s": round(self.speech_s, 3),
                "retained_s": round(self.retained_s, 3), "speech_source": self.speech_source,
                "ref_timed_words": self.ref_timed_words, "clipped_words": self.clipped_words,
                "dropped_words": self.dropped_words, "ref_timed_negations": self.ref_timed_negations,
                "clipped_negations": self.clipped_negations,
                "instances": [i.to_json() for i in self.instances]}


def vad_score(speech: np.ndarray, speech_source: str, vad: np.ndarray, words: SourceWords,
              negation: np.ndarray) -> VadScore:
    """Score merged VAD segments against merged annotated ``speech`` and timed reference ``words``.

    ``negation`` marks the source words that are negations.
    """
    score = VadScore(speech_s=total(speech), retained_s=total(intersect(speech, vad)),
                     speech_source=speech_source)
    timed = np.flatnonzero(words.timed & ~np.isnan(words.end))  # clipping needs both edges
    start, end = words.start[timed], words.end[timed]
    whole = covered(vad, start, end)
    touched = overlap(vad, start, end) > 0
    score.ref_timed_words = len(timed)
    score.clipped_words = int((~whole).sum())
    score.dropped_words = int((~touched).sum())
    score.ref_timed_negations = int(negation[timed].sum())
    score.clipped_negations = int((negation[timed] & ~whole).sum())
    for k in np.flatnonzero(~whole).tolist():
        w = int(timed[k])
        kind = ("dropped" if not touched[k] else "clipped") + (" negation" if negation[w] else "")
        score.instances.append(Instance(kind, round(float(start[k]), 3), round(float(end[k]), 3),
                                        words.texts[w], ""))
    return score
