"""Speech a joined VAD stream's decode passed over: stretches of VAD speech between two decoded words.

Whisper's long-form loop seeks by the timestamps it predicts, and now and then it seeks past speech: on a
chapter of the shared audiobook, decoded as one joined VAD stream under CTranslate2's AVX-512 kernels, it
went from "dispõem" at 172.3 s to "os" at 184.3 s over 12 s of an enumerated list (35 reference words) that
the baseline, the same model on the whole file, decoded. The VAD says speech is there; where the gap between
two consecutive words (or before the first, after the last) holds at least ``min_s`` seconds of it, that
speech is decoded again on its own (the ``vad`` stage's ``redecode_skipped_s``) and its words go into the
gap. Only speech no word covers is redone, so the redone words cannot collide with the stream's. A word
covers at most ``LONGEST_WORD_S`` from its start: there Whisper had timed "dispõem" from 172.3 s to 184.2 s,
over the whole skipped stretch; such a word keeps its first seconds when the stretch is filled.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from toolkit.core.transcripts import Word

LONGEST_WORD_S = 2.0  # what one word can cover: longer is a decoder's timing over speech it passed over
Clip = tuple[int, float, float]  # a piece's index and the part of it (original seconds) inside a gap


def skipped_stretches(pieces: Sequence[tuple[float, float]], words: Sequence[Word], min_s: float) -> list[list[Clip]]:
    """For each gap between consecutive timed words (and before the first and after the last) that holds at
    least ``min_s`` seconds of the ``pieces`` (original seconds, in order), those pieces clipped to the gap;
    none when ``min_s`` is 0."""
    if min_s <= 0:
        return []
    timed = [
        (w.start, min(w.end, w.start + LONGEST_WORD_S)) for w in words if w.start is not None and w.end is not None
    ]
    edges = [-math.inf, *(t for span in timed for t in span), math.inf]
    stretches = []
    for gap_start, gap_end in zip(edges[::2], edges[1::2], strict=True):
        if gap_end <= gap_start:  # words that overlap leave no gap
            continue
        clips = [
            (i, max(a, gap_start), min(b, gap_end)) for i, (a, b) in enumerate(pieces) if a < gap_end and b > gap_start
        ]
        if sum(b - a for _, a, b in clips) >= min_s:
            stretches.append(clips)
    return stretches


def inserted(words: list[Word], new: list[Word], start: float, end: float) -> list[Word]:
    """``words`` with the ``new`` words that lie within ``[start, end]`` put in time order where that stretch
    is (no word of ``words`` starts inside it: it was skipped); a word before it that ran on into it ends at
    its start."""
    kept = [w for w in new if w.start is not None and w.end is not None and start <= w.start and w.end <= end]
    if not kept:
        return words
    at = next((k for k, w in enumerate(words) if w.start is not None and w.start >= end), len(words))
    before = [
        replace(w, end=max(w.start, start)) if w.start is not None and w.end is not None and w.end > start else w
        for w in words[:at]
    ]
    return [*before, *kept, *words[at:]]
