"""A timed reference from an untimed one: word times by forced alignment, marked as derived, with the
aligner's measured accuracy.

Each turn keeps its text; its placed words get their derived times (the ``words`` tier), an untimed turn
spans its first to its last placed word, and an untimed turn with no placed word joins the turn before it
(the first turn, the one after it), so the word sequence the scorer reads is unchanged. The reference's
``derived_times`` names the model, its weights' sha256 and the p95 first-word onset error measured for
those weights by ``benchmarks/bench_forced_alignment.py`` (none for other weights: not measured).
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from toolkit.asr.forced_alignment import AlignedWord, ForcedAligner
from toolkit.asr.models import BUNDLED_SHA256, ModelInfo
from toolkit.core.errors import InputError
from toolkit.core.transcripts import DerivedTimes, Reference, Utterance, Word

# p95 absolute error of each utterance's first-word start against its exact onset, on the shared clips joined
# by pauses (bench_forced_alignment.py; Intel Xeon, 2 cores, CTranslate2 AVX2 int8, 2026-12-07): 0.97 s with
# seed 13 (where MIN_PROBABILITY was chosen) and 0.82 s with seed 31; the larger is the one claimed.
MEASURED_ONSET_P95_S = {BUNDLED_SHA256: 0.97}


def provenance(model: ModelInfo) -> DerivedTimes:
    """What a reference timed by ``model`` says of its times: model, weights and measured accuracy."""
    return DerivedTimes(model.name, model.weights_sha256, MEASURED_ONSET_P95_S.get(model.weights_sha256))


def derive_reference_times(
    reference: Reference, audio: str | Path, model: str = "whisper-base", cpu_threads: int = 2
) -> Reference:
    """``reference`` (an untimed one, as a plain-text file reads) with word times derived from the recording
    ``audio`` by forced alignment with ``model``, marked as derived (``reference.derived_times``) with the model's
    weights hash and its measured accuracy; write it with ``toolkit.formats.textgrid.write_textgrid``."""
    from toolkit.asr.faster_whisper_backend import to_16k
    from toolkit.asr.models import resolve_model
    from toolkit.audio.io import load_audio

    signal = to_16k(load_audio(audio))
    aligner = ForcedAligner(resolve_model(model), cpu_threads=cpu_threads)
    return derive_times(reference, signal.samples, aligner, str(audio))


def derive_times(reference: Reference, samples: np.ndarray, aligner: ForcedAligner, where: str = "") -> Reference:
    """``reference`` with word times derived from ``samples`` (16 kHz mono, the whole recording); a reference
    that already has timed words is refused, naming ``where``."""
    if any(word.timed for word in reference.words):
        raise InputError(where or reference.recording_id, "the reference already has timed words; nothing to derive")
    turns = [turn.text.split() for turn in reference.utterances]
    aligned = aligner.align(samples, [word for turn in turns for word in turn]).words
    utterances: list[Utterance] = []
    pending = ""
    first = 0
    for turn, words in zip(reference.utterances, turns):
        placed = [w for w in aligned[first : first + len(words)] if w.placed]
        first += len(words)
        timed = math.isfinite(turn.start) and math.isfinite(turn.end)
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
        raise InputError(where or reference.recording_id, "no word of the reference could be placed in the audio")
    return replace(
        reference,
        utterances=utterances,
        words=[_word(w) for w in aligned if w.placed],
        derived_times=provenance(aligner.model),
    )


def _word(word: AlignedWord) -> Word:
    """A placed word as a reference word, times rounded to the millisecond (its probability as confidence)."""
    return Word(word.text, round(word.start, 3), round(word.end, 3), round(word.probability, 3))
