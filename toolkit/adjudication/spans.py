"""What the span review shows for one span: the reference turns, each arm's words, their alignment, the audio.

The reference side of a span is the whole turns (``utterances`` intervals) that overlap it, so
a correction replaces complete turns, as a Praat user would edit an interval. Each arm's side
is its timed words whose midpoint lies in the turns' extent (or the span, where no turn is);
untimed words cannot be placed and are counted, never guessed. The audio is cut from the
original file (the manifest's channel choice applied), with context on both sides.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.corpus.manifest import RecordingEntry
from toolkit.scorer.alignment_view import AlignedWord
from toolkit.scorer.options import ScoreOptions

CONTEXT_S = 3.0


def overlapping_turns(reference: Reference, start: float, end: float) -> list[Utterance]:
    """Reference turns that share time with ``[start, end]``."""
    return [u for u in reference.utterances if u.start < end and u.end > start]


def reference_text(reference: Reference, start: float, end: float) -> str:
    """The text of the turns overlapping the span, in time order ("" where nobody speaks)."""
    return " ".join(u.text for u in overlapping_turns(reference, start, end))


def extent(reference: Reference, start: float, end: float) -> tuple[float, float]:
    """The span widened to the turns it touches: what a correction replaces."""
    turns = overlapping_turns(reference, start, end)
    return min([start, *(u.start for u in turns)]), max([end, *(u.end for u in turns)])


def correctable_speaker(reference: Reference, start: float, end: float) -> str:
    """The one speaker whose turns a correction of ``[start, end]`` replaces ("" if unnamed or none)."""
    speakers = sorted({u.speaker for u in overlapping_turns(reference, start, end)})
    if len(speakers) > 1:
        raise InputError(
            None,
            f"{start:g}-{end:g} s covers turns of several speakers "
            f"({', '.join(s or 'unnamed' for s in speakers)}); correct each turn in Praat, "
            "or mark the span unresolved",
        )
    return speakers[0] if speakers else ""


@dataclass(frozen=True)
class ArmWords:
    """One arm's words in a window, and how many of its words have no time at all."""

    words: list[Word]
    untimed: int


def words_in(words: Sequence[Word], start: float, end: float) -> ArmWords:
    """Timed words whose midpoint lies in ``[start, end]``."""
    inside = [w for w in words if w.timed and start <= (w.start + w.end) / 2 <= end]  # type: ignore[operator]
    return ArmWords(inside, sum(1 for w in words if not w.timed))


def span_alignment(
    reference: str, hypothesis: Sequence[Word], options: ScoreOptions, names: Sequence[str] = ()
) -> list[AlignedWord]:
    """The scorer's own alignment of a span: same normalizer, same word pairing, same critical-word
    marks as ``ablate score``, so what the reviewer sees coloured is what was counted."""
    from toolkit.scorer.alignment_view import aligned_words, critical_marks
    from toolkit.scorer.score import audit_vocabulary, score_recording

    text = " ".join(reference.split())
    utterances = [Utterance(0.0, math.inf, text)] if text else []
    words = [Word(w.text) for w in hypothesis]  # the span's words are already chosen by time
    score = score_recording(Reference("", utterances, names=list(names)), Hypothesis("", words), options)
    return aligned_words(score.aligned, critical_marks(score.aligned, *audit_vocabulary(list(names), options)))


@dataclass(frozen=True)
class Clip:
    """A WAV cut from the original recording: ``start``/``end`` in original seconds."""

    wav: bytes
    start: float
    end: float


def audio_clip(entry: RecordingEntry, start: float, end: float, context: float = CONTEXT_S) -> Clip:
    """``[start - context, end + context]`` of the original file (clamped to it) as 16-bit WAV."""
    path = entry.audio_path
    rate = entry.sample_rate
    first = max(0, int((start - context) * rate))
    last = min(int(round(entry.duration * rate)), int(np.ceil((end + context) * rate)))
    samples, _ = sf.read(str(path), start=first, stop=max(first, last), dtype="float32", always_2d=True)
    if entry.channel == "mix":
        mono = samples.mean(axis=1)
    else:
        mono = samples[:, entry.channel or 0]
    buffer = io.BytesIO()
    sf.write(buffer, mono, rate, format="WAV", subtype="PCM_16")
    return Clip(buffer.getvalue(), first / rate, first / rate + len(mono) / rate)
