"""Reference word times by forced alignment of the reference's own words to the audio with a Whisper model.

Plain-text references have no word times, so no onset or drift figure exists for them. This module
derives times: the reference's words, in order, are tokenized with the model's tokenizer and aligned to
the audio by CTranslate2's ``Whisper.align`` (cross-attention of the alignment heads, median filter
width 7, dynamic time warping), exactly as faster-whisper places its own word timestamps
(``WhisperModel.find_alignment``, whose words are then merged with their punctuation by faster-whisper's
``merge_punctuations``); nothing is decoded, so every word is the reference's.

Long audio is aligned in 30 s windows. A window starts at ``cursor`` (0 at first) and is fed the remaining
reference words that could plausibly be spoken in it (at most ``MAX_WORDS_PER_S`` words a second and
``MAX_TOKENS`` tokens). Surplus words that the audio does not hold pile up with no duration (at the window's
end, or where words missing from the audio were), so a window settles its words up to the last word with a
duration that ends before its last ``TAIL_GUARD_S`` seconds (the last window, which reaches the end of the
audio, settles all); the next window starts at that word's end. A window that settles no word moves on by
its length less the guard, its words still waiting. A settled word keeps its place only when it has a
duration and its tokens' mean probability is at least ``MIN_PROBABILITY``; otherwise, and for words never
settled, it stays untimed (NaN start and end): nothing is invented. Whisper's alignment gives a pause to the
word after it, so a word longer than twice the window's median word length starts that long before its end
(faster-whisper's own limit on the first word after a pause). The result is deterministic for a machine
(CTranslate2's int8 kernels differ by instruction set, as recognized words do).

Accuracy is measured, not assumed: ``benchmarks/bench_forced_alignment.py`` compares derived onsets with
the exact utterance onsets of concatenated real clips (docs/forced-alignment.md has the figures).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolkit.asr.faster_whisper_backend import DecodingConfig, load_whisper
from toolkit.asr.models import ModelInfo
from toolkit.core.transcripts import Reference

WINDOW_S = 30.0
# Portuguese read speech runs 2.5 to 3.5 words a second; feeding more than the window can hold only
# makes a pile at its end, which is dropped, while feeding fewer would leave the window half used.
MAX_WORDS_PER_S = 5.0
MAX_TOKENS = 300  # the decoder's 448 positions less the start sequence, with room to spare
TAIL_GUARD_S = 2.0
# A word whose tokens the model gives less than this mean probability is left untimed: on the first three minutes
# of the benchmark recording it cut the p95 onset error of the words left from 2.1 s to 0.8 s for 7% of words.
MIN_PROBABILITY = 0.02
MEDIAN_WORD_CAP_S = 0.7  # faster-whisper's cap on the median word length
_FRAMES_PER_S = 100  # log-mel frames a second (hop 160 at 16 kHz)
_MIN_FRAMES = 10  # a window shorter than 0.1 s holds no word
_PUNCTUATION = DecodingConfig()


@dataclass(frozen=True)
class AlignedWord:
    """One reference word and where the aligner put it; ``start``/``end`` are NaN when it was not placed."""

    text: str
    start: float
    end: float
    probability: float

    @property
    def placed(self) -> bool:
        return not math.isnan(self.start)


@dataclass(frozen=True)
class Alignment:
    """The reference's words in order with their derived times, and how many windows it took."""

    words: list[AlignedWord]
    windows: int

    @property
    def placed_fraction(self) -> float:
        """Share of the words that got times (1.0 for no words)."""
        return sum(w.placed for w in self.words) / len(self.words) if self.words else 1.0


def reference_words(reference: Reference) -> list[str]:
    """The reference's words in order: its word list when it has one, else its turns' text split on white space."""
    if reference.words:
        return [w.text for w in reference.words]
    return [token for utterance in reference.utterances for token in utterance.text.split()]


class ForcedAligner:
    """Whisper forced alignment of reference words to 16 kHz mono audio, on a verified model directory."""

    def __init__(self, model: ModelInfo, compute_type: str = "int8", cpu_threads: int = 2) -> None:
        self.model = model
        self.config = DecodingConfig(compute_type=compute_type, cpu_threads=cpu_threads)
        self._whisper: Any = None

    def load(self) -> Any:
        """The faster-whisper model, loaded once."""
        if self._whisper is None:
            self._whisper = load_whisper(self.model, self.config)
        return self._whisper

    def align(self, samples: np.ndarray, words: Sequence[str]) -> Alignment:
        """Each of ``words`` (in spoken order) with its (start, end) in ``samples``' seconds, NaN where not placed."""
        from faster_whisper.tokenizer import Tokenizer

        whisper = self.load()
        tokenizer = Tokenizer(whisper.hf_tokenizer, whisper.model.is_multilingual, task="transcribe", language="pt")
        tokens = [tokenizer.encode(" " + word.strip()) for word in words]
        features = whisper.feature_extractor(np.asarray(samples, dtype=np.float32))
        total = features.shape[-1] - 1
        placed: list[tuple[float, float, float] | None] = [None] * len(words)
        cursor, following, windows = 0, 0, 0
        while following < len(words) and cursor < total:
            size = min(int(WINDOW_S * _FRAMES_PER_S), total - cursor)
            if size < _MIN_FRAMES:
                break
            last = cursor + size >= total
            chosen = _plausible(tokens, following, size / _FRAMES_PER_S)
            timings = _window(whisper, tokenizer, features, cursor, size, tokens[following : following + chosen])
            kept = _kept(timings, size / _FRAMES_PER_S, last)
            windows += 1
            offset = cursor / _FRAMES_PER_S
            for index, (start, end, probability) in enumerate(timings[:kept]):
                if _confident(start, end, probability):
                    placed[following + index] = (offset + start, offset + end, probability)
            if last:
                break
            if kept:
                following += kept
                cursor = max(cursor + 1, round((offset + timings[kept - 1][1]) * _FRAMES_PER_S))
            else:
                cursor += size - int(TAIL_GUARD_S * _FRAMES_PER_S)
        nan = math.nan
        return Alignment(
            [
                AlignedWord(word, *(found if found is not None and not _punctuation(word) else (nan, nan, nan)))
                for word, found in zip(words, placed)
            ],
            windows,
        )


def _punctuation(word: str) -> bool:
    """Whether a reference word is punctuation that faster-whisper merges into its neighbour (a list label's
    "-"): it shares that word's time, is never said, and stays untimed."""
    marks = _PUNCTUATION.prepend_punctuations + _PUNCTUATION.append_punctuations
    return all(char in marks for char in word.strip())


def _plausible(tokens: Sequence[list[int]], first: int, seconds: float) -> int:
    """How many words from ``first`` on could be spoken in ``seconds`` (at least one)."""
    limit = max(1, math.ceil(seconds * MAX_WORDS_PER_S))
    count, used = 0, 0
    for word in tokens[first : first + limit]:
        if count and used + len(word) > MAX_TOKENS:
            break
        count, used = count + 1, used + len(word)
    return count


def _window(
    whisper: Any, tokenizer: Any, features: np.ndarray, cursor: int, size: int, words: Sequence[list[int]]
) -> list[tuple[float, float, float]]:
    """(start, end, probability) in window seconds of each word, by faster-whisper's own alignment and merging."""
    from faster_whisper.audio import pad_or_trim
    from faster_whisper.transcribe import merge_punctuations

    encoded = whisper.encode(pad_or_trim(features[:, cursor : cursor + size]))
    flat = [token for word in words for token in word]
    (entries,) = whisper.find_alignment(tokenizer, [flat], encoded, size)
    merge_punctuations(entries, _PUNCTUATION.prepend_punctuations, _PUNCTUATION.append_punctuations)
    owner = np.repeat(np.arange(len(words)), [len(word) for word in words])
    spans: list[list[float]] = [[math.inf, -math.inf, 0.0, 0.0] for _ in words]
    position = 0
    for entry in entries:
        count = len(entry["tokens"])
        if entry["word"] and count:
            for index in sorted(set(owner[position : position + count].tolist())):
                span = spans[index]
                span[0] = min(span[0], float(entry["start"]))
                span[1] = max(span[1], float(entry["end"]))
                span[2] += float(entry["probability"]) * count
                span[3] += count
        position += count
    return _pauses_trimmed([(s, e, p / n) if n else (math.nan, math.nan, 0.0) for s, e, p, n in spans])


def _pauses_trimmed(timings: list[tuple[float, float, float]]) -> list[tuple[float, float, float]]:
    """Starts moved out of the pause before a word: the alignment gives a pause to the word after it, so a word
    longer than twice the window's median word length (at most 0.7 s) starts that length before its end, as
    faster-whisper limits the first word after a pause."""
    durations = [e - s for s, e, _ in timings if e > s]
    if not durations:
        return timings
    longest = 2 * min(MEDIAN_WORD_CAP_S, float(np.median(durations)))
    return [(max(s, e - longest), e, p) for s, e, p in timings]


def _kept(timings: Sequence[tuple[float, float, float]], seconds: float, last: bool) -> int:
    """How many leading words of a window are settled: up to the last word with a duration that ends before the
    window's guarded tail (in the last window, every word). Zero-length words among them are the pile of words
    the audio does not hold; they are settled untimed."""
    if last:
        return len(timings)
    settled = 0
    for index, (start, end, _) in enumerate(timings):
        if end > seconds - TAIL_GUARD_S:
            break
        if end > start:
            settled = index + 1
    return settled


def _confident(start: float, end: float, probability: float) -> bool:
    """Whether a word's place is trusted: it has a duration and the model gave its tokens some probability."""
    return end > start and probability >= MIN_PROBABILITY
