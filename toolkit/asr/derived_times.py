"""A timed reference from an untimed one: word times by forced alignment, marked as derived, with the
aligner's measured accuracy.

A timed turn's words are aligned within its own interval (an STM's turn times, say of concatenated clips), a
run of untimed turns' words between the timed turns around it (for a plain-text reference, the whole recording).
Each turn keeps its text; its placed words get their derived times (the ``words`` tier), an untimed turn
spans its first to its last placed word, and an untimed turn with no placed word joins the turn before it
(the first turn, the one after it), so the word sequence the scorer reads is unchanged. A recording where less
than ``MIN_PLACED_SHARE`` of the words can be placed is refused as probably not the reference's. The reference's
``derived_times`` names the model, its weights' sha256 and the p95 first-word onset error measured for
those weights by ``benchmarks/bench_forced_alignment.py`` (none for other weights: not measured).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from toolkit.asr.faster_whisper_backend import SAMPLE_RATE
from toolkit.asr.forced_alignment import AlignedWord, ForcedAligner
from toolkit.asr.models import BUNDLED_SHA256, ModelInfo
from toolkit.audio.io import Channel
from toolkit.core.errors import InputError
from toolkit.core.transcripts import DerivedTimes, Reference, Utterance, Word

# p95 absolute error of each utterance's first-word start against its exact onset, on the shared clips joined
# by pauses (bench_forced_alignment.py; Intel Xeon, 2 cores, CTranslate2 AVX2 int8, 2026-12-07): 0.97 s with
# seed 13 (where MIN_PROBABILITY was chosen) and 0.82 s with seed 31; the larger is the one claimed.
MEASURED_ONSET_P95_S = {BUNDLED_SHA256: 0.97}
# Least share of the reference's words that must be placed: matching audio placed 92.6 to 95.5% (the benchmark's
# clips and chapters, docs/forced-alignment.md), another minute of the clips 12% of a minute's words (9 of 73, the
# wrong-recording test, 2026-12-07); under this share the recording is taken for the wrong one.
MIN_PLACED_SHARE = 0.7


def provenance(model: ModelInfo) -> DerivedTimes:
    """What a reference timed by ``model`` says of its times: model, weights and measured accuracy."""
    return DerivedTimes(model.name, model.weights_sha256, MEASURED_ONSET_P95_S.get(model.weights_sha256))


def derive_reference_times(
    reference: Reference,
    audio: str | Path,
    model: str = "whisper-base",
    cpu_threads: int = 2,
    *,
    channel: Channel = None,
    source: str | Path | None = None,
    min_placed: float = MIN_PLACED_SHARE,
) -> Reference:
    """``reference`` (untimed words; its turns timed or not), read from the file ``source``, with word times
    derived from the recording ``audio`` (its ``channel``) by forced alignment with ``model``, marked as derived
    (``reference.derived_times``) with the model's weights hash and its measured accuracy; refused when less than
    ``min_placed`` of its words could be placed. Write it with ``toolkit.formats.textgrid.write_textgrid``."""
    from toolkit.asr.faster_whisper_backend import to_16k
    from toolkit.asr.models import resolve_model
    from toolkit.audio.io import load_audio

    check_alignable(reference, source)
    signal = to_16k(load_audio(audio, channel))
    aligner = ForcedAligner(resolve_model(model), cpu_threads=cpu_threads)
    return derive_times(reference, signal.samples, aligner, source, str(audio), min_placed)


def check_alignable(reference: Reference, source: str | Path | None = None) -> None:
    """Refuse, naming the reference file ``source``, a reference with nothing to derive: timed words already,
    or no words at all (checked before any model is loaded)."""
    where = source or reference.recording_id
    if any(word.timed for word in reference.words):
        raise InputError(where, "the reference already has timed words; nothing to derive")
    if not any(turn.text.split() for turn in reference.utterances):
        raise InputError(where, "the reference holds no words; nothing to align")


def derive_times(
    reference: Reference,
    samples: np.ndarray,
    aligner: ForcedAligner,
    source: str | Path | None = None,
    audio: str = "",
    min_placed: float = MIN_PLACED_SHARE,
) -> Reference:
    """``reference`` with word times derived from ``samples`` (16 kHz mono, the whole recording ``audio``): a
    timed turn's words within its own interval, a run of untimed turns' words between the timed turns around it.
    Refused (naming the reference file ``source`` or ``audio``) as :func:`derive_reference_times` says."""
    check_alignable(reference, source)
    turns = [turn.text.split() for turn in reference.utterances]
    aligned: list[AlignedWord] = []
    for start, end, indices in stretches(reference.utterances, len(samples) / SAMPLE_RATE):
        words = [word for index in indices for word in turns[index]]
        first, last = round(start * SAMPLE_RATE), round(end * SAMPLE_RATE)
        found = aligner.align(samples[first:last], words).words if words and last > first else []
        aligned.extend(_shifted(word, start, end) for word in found)
        aligned.extend(AlignedWord(word, math.nan, math.nan, math.nan) for word in words[len(found) :])
    aligned = _in_order(aligned)
    placed_count = sum(word.placed for word in aligned)
    if placed_count < min_placed * len(aligned):
        raise InputError(
            audio or reference.recording_id,
            f"only {placed_count} of {len(aligned)} reference words ({placed_count / len(aligned):.0%}) could be "
            f"placed, under the {min_placed:.0%} a matching recording reaches: is this the reference's recording? "
            "(--allow-partial writes a partial alignment anyway)",
        )
    utterances: list[Utterance] = []
    pending = ""
    first = 0
    for turn, words in zip(reference.utterances, turns):
        placed = [w for w in aligned[first : first + len(words)] if w.placed]
        first += len(words)
        timed = _timed(turn)
        if not timed and not placed:
            if utterances:
                utterances[-1] = replace(utterances[-1], text=f"{utterances[-1].text} {turn.text}")
            else:
                pending = f"{pending} {turn.text}".strip()
            continue
        span = (turn.start, turn.end) if timed else (placed[0].start, placed[-1].end)
        utterances.append(Utterance(*span, f"{pending} {turn.text}".strip(), turn.speaker))
        pending = ""
    if pending:
        raise InputError(audio or reference.recording_id, "no word of the reference could be placed in the audio")
    return replace(
        reference,
        utterances=utterances,
        words=[_word(w) for w in aligned if w.placed],
        derived_times=provenance(aligner.model),
    )


def stretches(turns: Sequence[Utterance], duration: float) -> list[tuple[float, float, list[int]]]:
    """Where each turn's words are aligned, in turn order: (start, end, turn indices). A timed turn is a stretch
    of its own, its interval; a run of untimed turns spans from the timed turn before it (or 0) to the timed turn
    after it (or the end): a reference with no timed turn is one stretch, the whole recording."""
    result: list[tuple[float, float, list[int]]] = []
    run: list[int] = []
    after = 0.0
    for index, turn in enumerate(turns):
        if not _timed(turn):
            run.append(index)
            continue
        if run:
            result.append((after, max(after, min(turn.start, duration)), run))
            run = []
        result.append((max(0.0, turn.start), min(turn.end, duration), [index]))
        after = min(turn.end, duration)
    if run:
        result.append((after, duration, run))
    return result


def _timed(turn: Utterance) -> bool:
    """Whether a turn has its own start and end (an STM's or a TextGrid's; a plain-text turn has none)."""
    return math.isfinite(turn.start) and math.isfinite(turn.end)


def _shifted(word: AlignedWord, start: float, end: float) -> AlignedWord:
    """A word aligned in the stretch ``start``..``end`` of the recording, in recording time rounded to the
    millisecond and kept inside the stretch (rounding must not move a word out of its turn)."""
    return replace(word, start=max(start, round(word.start + start, 3)), end=min(end, round(word.end + start, 3)))


def _in_order(words: list[AlignedWord]) -> list[AlignedWord]:
    """The words with any placed word that starts before the previous placed word's end left untimed (words of
    overlapping timed turns): a words tier holds one word at a time."""
    result: list[AlignedWord] = []
    latest = -math.inf
    for word in words:
        if word.placed and word.start < latest:
            word = AlignedWord(word.text, math.nan, math.nan, math.nan)
        latest = max(latest, word.end) if word.placed else latest
        result.append(word)
    return result


def _word(word: AlignedWord) -> Word:
    """A placed word as a reference word (its probability, to the thousandth, as confidence)."""
    return Word(word.text, word.start, word.end, round(word.probability, 3))
