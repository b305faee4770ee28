"""Plain-text transcripts: a ``.txt`` reference is one untimed utterance, a hypothesis untimed words.

An untimed reference is one utterance from ``0`` to infinity: its end is not a time anyone
marked, so it supports word-level metrics and never a time-based one (its edges are not
boundary-word times).
"""

from __future__ import annotations

import math
from pathlib import Path

from toolkit.core.text import read_text
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word


def read_plaintext_reference(path: str | Path, recording_id: str | None = None) -> Reference:
    """A reference with the whole text as one untimed utterance; a file of only whitespace is a recording
    without speech, a file of 0 bytes is refused (an empty file is bad input)."""
    text = " ".join(read_text(path, allow_empty=False).split())
    utterances = [Utterance(0.0, math.inf, text)] if text else []
    return Reference(recording_id or Path(path).stem, utterances)


def read_plaintext_hypothesis(path: str | Path, recording_id: str | None = None) -> Hypothesis:
    """A hypothesis of untimed words (whitespace-separated)."""
    words = [Word(token) for token in read_text(path).split()]
    return Hypothesis(recording_id or Path(path).stem, words)
