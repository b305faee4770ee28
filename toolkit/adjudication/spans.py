"""What the span review shows for one stretch: the reference turns, each arm's words, their alignment, the audio.

The reference side of a stretch is the whole turns (``utterances`` intervals) that overlap it,
so a correction replaces complete turns, as a Praat user would edit an interval. Each arm's
side is read from the scorer's own alignment of the whole recording (``score_recording`` with
the experiment's options): the steps of the stretch's reference words, with what the arm put
against each and the insertions between them, plus the insertions the scorer placed in the
gap before and after the stretch's turns. No word is placed by its time, so what the reviewer
sees coloured is exactly what was counted; words the scorer excluded (inside unresolved audio)
are counted, not shown. An untimed turn (a plain-text reference's line) has no time to overlap a
stretch with: the arm's steps show the untimed turns whose words the arm's timed words, aligned to
them, place in the stretch (a deleted word lies between the timed words around it). The reference
text a decision is made on is still found by time, so there it is every untimed turn (the whole
text): a plain-text reference is corrected in its file, or timed in a TextGrid first. The audio
is cut from the original file (the manifest's channel choice applied), with context on both sides.
"""

from __future__ import annotations

import io
import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import soundfile as sf

from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Reference, Utterance
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
class StretchAlignment:
    """One arm's words for a reference stretch, as the scorer aligned them.

    ``steps`` are the stretch's reference tokens with the arm's token against each (and the
    insertions between them); ``before`` and ``after`` are the insertions the scorer placed
    between the previous turn and the stretch, and between the stretch and the next turn (shown
    on both neighbouring stretches: the scorer ties them to neither). Where no reference turn
    overlaps the stretch, ``steps`` is empty and ``before`` holds the insertions of the gap it
    lies in.
    """

    steps: list[AlignedWord]
    before: list[AlignedWord]
    after: list[AlignedWord]
    excluded_turns: int = 0  # turns of the stretch the scorer left out (at least half in unresolved audio)


@dataclass(frozen=True)
class ArmAlignment:
    """One arm's whole recording aligned by the scorer; ``turn`` gives each step's reference turn
    (index into ``reference.utterances``; -1 for an insertion)."""

    steps: list[AlignedWord]
    turn: list[int]
    excluded_words: int  # hypothesis words inside unresolved audio: not scored, not shown
    untimed_words: int

    def stretch(self, reference: Reference, start: float, end: float) -> StretchAlignment:
        """The steps for the turns overlapping ``[start, end]`` (see :class:`StretchAlignment`); an untimed turn
        (a plain-text reference's) overlaps it where this arm's words aligned to it do (:meth:`_placed`)."""
        timed = [math.isfinite(u.start) and math.isfinite(u.end) for u in reference.utterances]
        turns = {k for k, u in enumerate(reference.utterances) if timed[k] and u.start < end and u.end > start}
        turns |= self._placed([not t for t in timed], start, end)
        inside = [k for k, t in enumerate(self.turn) if t in turns]
        excluded = len(turns - {self.turn[k] for k in inside})
        if inside:
            lo, hi = inside[0], inside[-1]
            steps = [s for s, t in zip(self.steps[lo : hi + 1], self.turn[lo : hi + 1]) if t in turns or t < 0]
            return StretchAlignment(steps, self._insertions(lo - 1, -1), self._insertions(hi + 1, 1), excluded)
        earlier = [
            k
            for k, (t, (_, step_end)) in enumerate(zip(self.turn, self._spans))
            if t >= 0 and (reference.utterances[t].end <= start if timed[t] else step_end <= start)
        ]
        slot = (earlier[-1] + 1) if earlier else 0
        return StretchAlignment([], self._insertions(slot, 1), [], excluded)

    def _placed(self, untimed: list[bool], start: float, end: float) -> set[int]:
        """The untimed turns with a step in ``[start, end]`` by :meth:`_spans` (the arm's word times, never a
        time of the reference's)."""
        return {
            t
            for t, (lo, hi) in zip(self.turn, self._spans)
            if t >= 0 and untimed[t] and (lo < end and hi > start or lo == hi and start <= lo <= end)
        }

    @cached_property
    def _spans(self) -> list[tuple[float, float]]:
        """Each step's place in the recording: its hypothesis word's times, else (no word, or an untimed one) the
        gap between the timed words before and after it (the recording's edges beyond them)."""
        times = [
            (s.hyp_start, s.hyp_end) if s.hyp_start is not None and s.hyp_end is not None else None for s in self.steps
        ]
        before, previous = [], -math.inf
        for span in times:
            before.append(previous)
            previous = span[1] if span is not None else previous
        after, following = [], math.inf
        for span in reversed(times):
            after.append(following)
            following = span[0] if span is not None else following
        return [span or (lo, hi) for span, lo, hi in zip(times, before, reversed(after))]

    def _insertions(self, index: int, direction: int) -> list[AlignedWord]:
        """The run of insertions starting at step ``index`` and going in ``direction``, in order."""
        run = []
        while 0 <= index < len(self.steps) and self.turn[index] < 0:
            run.append(self.steps[index])
            index += direction
        return run[::direction]


def arm_alignment(reference: Reference, hypothesis: Hypothesis, options: ScoreOptions) -> ArmAlignment:
    """Score ``hypothesis`` against the whole ``reference`` as ``ablate score`` does and keep the
    alignment the audits read (its critical words marked)."""
    from toolkit.scorer.align import INSERT
    from toolkit.scorer.alignment_view import aligned_words, critical_marks
    from toolkit.scorer.score import audit_vocabulary, score_recording

    score = score_recording(reference, hypothesis, options)
    at = score.audit_tokens
    steps = aligned_words(at, critical_marks(at, *audit_vocabulary(reference.names, options)))
    utterance = score.word_utterances
    turn = [
        -1 if op == INSERT else int(utterance[at.ref.source[i]])
        for op, i in zip(at.alignment.ops.tolist(), at.alignment.ref_index.tolist())
    ]
    return ArmAlignment(steps, turn, score.excluded.hyp_words, sum(1 for w in hypothesis.words if not w.timed))


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
