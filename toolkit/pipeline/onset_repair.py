"""Onset repair: a long word that runs from a VAD pause into speech is cut back towards the speech onset.

faster-whisper already shortens a word that swallowed the pause before it, but only after
sentence-ending punctuation (its start goes to ``end - 2 x median word duration``); where
Whisper writes a comma instead, as it often does inside a window, the first word after a pause
keeps the pause and starts up to seconds early. ``clamp_onsets`` applies the same cut where a
VAD pass, not the punctuation, says the word swallowed a pause:

* a *pause* is a gap of at least ``min_pause`` seconds between two speech regions (or before
  the first), as in toolkit/pipeline/windows.py;
* a timed word longer than ``max_word`` seconds that starts before a pause's end and ends
  after it (it runs through the pause into the speech after it) gets the start
  ``max(start, min(pause end, end - max_word))``: to the speech onset, but the word keeps at
  least ``max_word`` seconds, because Silero often hears a quiet onset late (its speech onset
  alone would make the word start too late);
* nothing else changes: ends, text, order and untimed words stay as they are; a start only
  moves later, never past the word's end or the next timed word's start, and stays in the
  time of the words and regions given (original recording time in the pipeline).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from toolkit.core.transcripts import Word
from toolkit.pipeline.windows import pauses


def clamp_onsets(
    words: Sequence[Word], speech: Sequence[tuple[float, float]], min_pause: float, max_word: float
) -> tuple[list[Word], int]:
    """``words`` with each long word that runs through a pause cut back (rules above), and how many moved."""
    if not math.isfinite(min_pause) or min_pause < 0:
        raise ValueError(f"min_pause must be a finite number >= 0, not {min_pause!r}")
    if not math.isfinite(max_word) or max_word <= 0:
        raise ValueError(f"max_word must be a finite positive number, not {max_word!r}")
    out = list(words)
    if not speech:
        return out, 0
    ends = [b for _, b in pauses(speech, max(b for _, b in speech), min_pause)]
    following = math.inf  # the next timed word's start, walking backwards
    moved = 0
    for i in range(len(out) - 1, -1, -1):
        word = out[i]
        if word.start is None or word.end is None:
            continue
        if word.end - word.start > max_word:
            through = [b for b in ends if word.start < b < word.end]
            if through:
                start = min(through[-1], word.end - max_word, following)
                if start > word.start:
                    out[i] = word = replace(word, start=start)
                    moved += 1
        following = word.span[0]
    return out, moved
