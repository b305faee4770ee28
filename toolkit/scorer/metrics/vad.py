"""VAD speech recall and clipped reference words.

Recall = annotated speech duration kept by the VAD / annotated speech duration, counted only
inside annotated speech (unresolved spans removed). A timed reference word is clipped when no
single VAD segment covers its whole span (cut into), and dropped when no VAD segment touches it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.scorer.metrics.aligned import Instance
from toolkit.scorer.metrics.figures import Figure, Figures
from toolkit.scorer.metrics.intervals import covered, intersect, overlap, total
from toolkit.scorer.metrics.tokens import SourceWords


def _either(a: str, b: str) -> str:
    return a if a == b else "mixed"


@dataclass(frozen=True)
class VadScore(Figures):
    """Speech recall of VAD segments plus clipped words and negations with their denominators.

    Pooled (``+``), durations and counts add and recall is recomputed from the summed durations.
    """

    FIGURES = (
        Figure("recordings", recording=False),
        Figure("speech_s", digits=3),
        Figure("retained_s", digits=3),
        Figure("speech_recall", "recall", attr="recall"),
        Figure("speech_source", None),
        Figure("ref_timed_words"),
        Figure("clipped_words"),
        Figure("dropped_words", None),
        Figure("ref_timed_negations"),
        Figure("clipped_negations"),
    )

    speech_s: float
    retained_s: float
    speech_source: str = field(metadata={"add": _either})
    ref_timed_words: int = 0
    clipped_words: int = 0
    dropped_words: int = 0
    ref_timed_negations: int = 0
    clipped_negations: int = 0
    instances: tuple[Instance, ...] = ()
    recordings: int = 1

    @property
    def recall(self) -> float | None:
        return self.retained_s / self.speech_s if self.speech_s > 0 else None

    def json_extras(self) -> dict[str, Any]:
        return {"instances": [i.to_json() for i in self.instances]}


# A word the VAD cut, by (touched by a VAD segment, a negation).
_CUT_KINDS = {
    (touched, negated): ("clipped" if touched else "dropped") + (" negation" if negated else "")
    for touched in (False, True)
    for negated in (False, True)
}


def vad_score(
    speech: np.ndarray, speech_source: str, vad: np.ndarray, words: SourceWords, negation: np.ndarray
) -> VadScore:
    """Score merged VAD segments against merged annotated ``speech`` and timed reference ``words``.

    ``negation`` marks the source words that are negations.
    """
    timed = np.flatnonzero(words.timed & ~np.isnan(words.end))  # clipping needs both edges
    start, end = words.start[timed], words.end[timed]
    whole = covered(vad, start, end)
    touched = overlap(vad, start, end) > 0
    cut = np.flatnonzero(~whole)  # the clipped and dropped words, read a column at a time
    instances = [
        Instance(_CUT_KINDS[kept, negated], round(s, 3), round(e, 3), words.texts[w], "")
        for w, kept, negated, s, e in zip(
            timed[cut].tolist(),
            touched[cut].tolist(),
            negation[timed[cut]].tolist(),
            start[cut].tolist(),
            end[cut].tolist(),
        )
    ]
    return VadScore(
        speech_s=total(speech),
        retained_s=total(intersect(speech, vad)),
        speech_source=speech_source,
        ref_timed_words=len(timed),
        clipped_words=int((~whole).sum()),
        dropped_words=int((~touched).sum()),
        ref_timed_negations=int(negation[timed].sum()),
        clipped_negations=int((negation[timed] & ~whole).sum()),
        instances=tuple(instances),
    )
