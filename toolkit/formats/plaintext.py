"""Plain-text transcripts: a ``.txt`` reference is one untimed utterance, a hypothesis untimed words.

An untimed reference covers the whole recording (``0`` to its duration, or to infinity when
the duration is unknown); it supports word-level metrics but no time-based ones.
"""

from __future__ import annotations

import math
from pathlib import Path

from toolkit.formats.text import read_text
from toolkit.records import Hypothesis, Reference, Utterance, Word


def read_plaintext_reference(path: str | Path, recording_id: str | None = None,
                             duration: float | None = None) -> Reference:
    """A reference with the whole text as one utterance; an empty file is a recording without speech."""
    text = " ".join(read_text(path).split())
    end = math.inf if duration is None else duration
    utterances = [Utterance(0.0, end, text)] if text else []
    return Reference(recording_id or Path(path).stem, utterances)


def read_plaintext_hypothesis(path: str | Path, recording_id: str | None = None) -> Hypothesis:
    """A hypothesis of untimed words (whitespace-separated)."""
    words = [Word(token) for token in read_text(path).split()]
    return Hypothesis(recording_id or Path(path).stem, words)
