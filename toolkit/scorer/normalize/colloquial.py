"""The colloquial negation "num" against the contraction "num"/"numa", decided by the next word
(ptbr-norm-3, ``colloquial_negation``; the cues are ``colloquial.tsv``).

"num sei" is a spoken "não sei": the word reads "não", so it matches a "não" on the other side and
the negation audit counts it. "num lugar", "numa boa" are the contraction: they stay. Where the next
word decides nothing (or there is none), the word stays too and is marked undecidable, so the
audits count a negation opposite it apart, as ambiguous.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

FORMS = ("num", "numa")
NEGATION = "negation"
CONTRACTION = "em-um"
_EDGE = ".,;:!?…\"'“”‘’«»()[]"


def _plain(word: str) -> str:
    return unicodedata.normalize("NFC", word).strip(_EDGE).lower()


def colloquial_candidates(words: Sequence[str]) -> list[int]:
    """The indices of the words that may be a "num"/"numa" (:func:`colloquial_readings` reads no other)."""
    return [k for k, word in enumerate(words) if word[:3].lower() == "num"]


def colloquial_readings(
    words: Sequence[str], cues: dict[str, str], candidates: Sequence[int]
) -> tuple[dict[int, tuple[str, ...]], frozenset[int]]:
    """Source-word index -> ("não",) for every "num" read as a negation, and the indices of the
    undecidable "num"/"numa"; ``candidates``: indices in order that hold every :func:`colloquial_candidates`
    (the others are passed over)."""
    readings: dict[int, tuple[str, ...]] = {}
    undecided: set[int] = set()
    for index in [k for k in candidates if colloquial_candidates((words[k],))]:
        word = words[index]
        form = _plain(word)
        if form not in FORMS:
            continue
        ends = word.rstrip()[-1:] in _EDGE[:6]  # a stop or comma after it: no next word to decide by
        cue = None if ends or index + 1 >= len(words) else cues.get(_plain(words[index + 1]))
        if cue == NEGATION and form == "num":
            readings[index] = ("não",)
        elif cue != CONTRACTION:
            undecided.add(index)
    return readings, frozenset(undecided)
