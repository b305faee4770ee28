"""Accuracy and speed of reference word times derived by forced alignment (toolkit.asr.forced_alignment).

Builds one recording from the shared clips as the onset tests do (tests/shared_clips.py: every clip trimmed to
its speech, librosa 35 dB below peak, joined by pauses of 0.8 to 5 s, so each utterance's onset and end are
known exactly), aligns all the clips' transcripts to it as one plain-text reference with the bundled Whisper
base, and prints per utterance the error of its first word's derived start against the known onset and of
its last word's derived end against the known end: median and p95 absolute error, how many utterances the
aligner gave a time, and the fraction of all words placed. Then aligns one ptbr-longform chapter (written
law text, no timed truth) and prints the fraction placed and the seconds of alignment per minute of audio.
Run: ``.venv/bin/python benchmarks/bench_forced_alignment.py [--minutes 12] [--seed 13] [--chapter NAME]``.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from machine import describe  # noqa: E402
from shared_clips import RECORDING, build_recording  # noqa: E402
from shared_data import PTBR_DEV, PTBR_LONGFORM  # noqa: E402

from toolkit.asr.forced_alignment import Alignment, ForcedAligner, reference_words  # noqa: E402
from toolkit.asr.models import resolve_model  # noqa: E402
from toolkit.audio.io import load_audio  # noqa: E402
from toolkit.audio.signal import resample  # noqa: E402
from toolkit.formats import read_reference  # noqa: E402

RATE = 16000


def timed(aligner: ForcedAligner, samples: np.ndarray, words: list[str]) -> tuple[Alignment, float]:
    """The alignment and its wall time in seconds (the model already loaded)."""
    began = time.perf_counter()
    alignment = aligner.align(samples, words)
    return alignment, time.perf_counter() - began


def errors_summary(errors: list[float]) -> str:
    """``median X s, p95 Y s over N of M`` for the absolute values of the finite errors."""
    known = np.abs(np.array([e for e in errors if not math.isnan(e)]))
    if not len(known):
        return f"none of {len(errors)} placed"
    return (
        f"median {np.median(known):.2f} s, p95 {np.quantile(known, 0.95):.2f} s, max {known.max():.2f} s "
        f"({len(known)} of {len(errors)} utterances placed)"
    )


def clips(aligner: ForcedAligner, minutes: float, seed: int) -> dict[str, Any]:
    """Onset and end errors per utterance of the concatenated clips."""
    with tempfile.TemporaryDirectory() as folder:
        build_recording(Path(folder), minutes, seed)
        reference = read_reference(Path(folder) / "refs" / f"{RECORDING}.TextGrid")
        samples = load_audio(Path(folder) / "audio" / f"{RECORDING}.wav").samples
    bounds: list[tuple[int, int]] = []
    words: list[str] = []
    for utterance in reference.utterances:
        first = len(words)
        words.extend(utterance.text.split())
        bounds.append((first, len(words) - 1))
    alignment, seconds = timed(aligner, samples, words)
    onsets = [alignment.words[a].start - u.start for (a, _), u in zip(bounds, reference.utterances)]
    ends = [alignment.words[b].end - u.end for (_, b), u in zip(bounds, reference.utterances)]
    signed = [e for e in onsets if not math.isnan(e)]
    return {
        "audio_min": len(samples) / RATE / 60,
        "utterances": len(reference.utterances),
        "words": len(words),
        "onset": errors_summary(onsets),
        "onset_signed_median": float(np.median(signed)) if signed else math.nan,
        "end": errors_summary(ends),
        "placed": alignment.placed_fraction,
        "windows": alignment.windows,
        "s_per_min": seconds / (len(samples) / RATE / 60),
    }


def chapter(aligner: ForcedAligner, name: str) -> dict[str, Any]:
    """Fraction placed and speed on one audiobook chapter against its written text."""
    signal = resample(load_audio(PTBR_LONGFORM / "audio" / f"{name}.ogg"), RATE)
    words = reference_words(read_reference(PTBR_LONGFORM / "refs" / f"{name}.txt"))
    alignment, seconds = timed(aligner, signal.samples, words)
    placed = [w for w in alignment.words if w.placed]
    return {
        "audio_min": signal.duration / 60,
        "words": len(words),
        "placed": alignment.placed_fraction,
        "last_placed_s": placed[-1].end if placed else math.nan,
        "windows": alignment.windows,
        "s_per_min": seconds / (signal.duration / 60),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=12.0, help="at most this long (all clips: 11.2 min)")
    parser.add_argument("--seed", type=int, default=13, help="clip order and pauses")
    parser.add_argument("--chapter", default="Titulo 1 Art 01 ao 04", help="ptbr-longform chapter ('' skips)")
    args = parser.parse_args()
    if not (PTBR_DEV / "commonvoice-pt").is_dir():
        sys.exit(f"shared clips absent: {PTBR_DEV}")
    model = resolve_model("whisper-base")
    aligner = ForcedAligner(model)
    aligner.load()
    print(describe())
    print(f"model {model.name} sha256 {model.weights_sha256[:12]}, int8, 2 threads")
    found = clips(aligner, args.minutes, args.seed)
    print(
        f"clips (seed {args.seed}): {found['audio_min']:.1f} min, {found['utterances']} utterances, "
        f"{found['words']} words, {found['windows']} windows"
    )
    print(f"  first-word start vs known onset: {found['onset']}; signed median {found['onset_signed_median']:+.2f} s")
    print(f"  last-word end vs known end:      {found['end']}")
    print(f"  words placed {found['placed']:.1%}; {found['s_per_min']:.2f} s of alignment per minute of audio")
    if args.chapter and (PTBR_LONGFORM / "audio" / f"{args.chapter}.ogg").is_file():
        book = chapter(aligner, args.chapter)
        print(
            f"ptbr-longform '{args.chapter}': {book['audio_min']:.1f} min, {book['words']} words, "
            f"{book['windows']} windows, words placed {book['placed']:.1%}, last placed word ends at "
            f"{book['last_placed_s']:.1f} s; {book['s_per_min']:.2f} s of alignment per minute of audio"
        )


if __name__ == "__main__":
    main()
