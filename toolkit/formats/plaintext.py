"""Plain-text transcripts: a ``.txt`` reference is untimed turns, a hypothesis untimed words.

A reference's turns are its non-empty lines in order, or, in a file of one line, its sentences
(:mod:`toolkit.formats.sentences`). Each is an untimed utterance from ``0`` to infinity: its edges
are not times anyone marked, so the turns support word-level figures (per-turn intervals, lost
turns) and never a time-based one.
"""

from __future__ import annotations

import math
from pathlib import Path

from toolkit.core.text import read_text
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.formats.sentences import text_turns


def untimed_turns(text: str) -> list[Utterance]:
    """The turns of a plain text (:func:`text_turns`) as untimed utterances, in order."""
    return [Utterance(0.0, math.inf, turn) for turn in text_turns(text)]


def read_plaintext_reference(path: str | Path, recording_id: str | None = None) -> Reference:
    """A reference of untimed turns; a file of only whitespace is a recording without speech, a file of 0 bytes
    is refused (an empty file is bad input)."""
    return Reference(recording_id or Path(path).stem, untimed_turns(read_text(path, allow_empty=False)))


def read_plaintext_hypothesis(path: str | Path, recording_id: str | None = None) -> Hypothesis:
    """A hypothesis of untimed words (whitespace-separated)."""
    words = [Word(token) for token in read_text(path).split()]
    return Hypothesis(recording_id or Path(path).stem, words)
