"""What Whisper reports about each decoded segment, and how much audio each temperature decoded.

Temperature fallback changes what a hypothesis is: a segment decoded above the first
temperature is a seeded random sample. faster-whisper reports, per segment, the temperature
it ended at, the average log-probability, the compression ratio and the no-speech probability;
when every temperature fails its thresholds it keeps the attempt with the highest average
log-probability but reports the *last* temperature, so such a segment is classified apart.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from toolkit.core.transcripts import Word

FIRST = "first temperature"
FALLBACK = "fallback"
ALL_FAILED = "all temperatures failed"
NO_FALLBACK = "no fallback (batched)"
# A recording's decoded audio is "fallback dominated" when more than this share was not
# accepted at the first temperature.
DOMINATED_SHARE = 0.5


@dataclass(frozen=True)
class DecodedSegment:
    """One Whisper segment in its input's seconds, with the decoder's own quality figures."""

    segment_id: str
    start: float
    end: float
    temperature: float | None
    avg_logprob: float
    compression_ratio: float
    no_speech_prob: float
    outcome: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Transcript:
    """A recognizer's result for one signal: words, the segments that produced them, and the spans of the
    signal it decoded when not all of it (a batched recognizer decodes only its VAD chunks; None: all)."""

    words: list[Word]
    segments: list[DecodedSegment]
    decoded: list[tuple[float, float]] | None = None


def classify(
    segment: Any,
    temperatures: Sequence[float],
    compression_ratio_threshold: float,
    log_prob_threshold: float,
    no_speech_threshold: float,
) -> str:
    """Where a sequential decode's segment ended in the fallback ladder (faster-whisper's own rule)."""
    if segment.temperature is None or segment.temperature <= temperatures[0] or len(temperatures) == 1:
        return FIRST
    silence = segment.no_speech_prob > no_speech_threshold and segment.avg_logprob < log_prob_threshold
    failed = segment.compression_ratio > compression_ratio_threshold or (
        segment.avg_logprob < log_prob_threshold and not silence
    )
    return ALL_FAILED if failed and segment.temperature >= temperatures[-1] else FALLBACK


def describe(segments: Iterable[Any], outcome_of: Any) -> list[DecodedSegment]:
    """``seg0000``-numbered records of faster-whisper segments (the ids their words carry)."""
    return [
        DecodedSegment(
            f"seg{index:04d}",
            float(s.start),
            float(s.end),
            None if s.temperature is None else float(s.temperature),
            float(s.avg_logprob),
            float(s.compression_ratio),
            float(s.no_speech_prob),
            outcome_of(s),
        )
        for index, s in enumerate(segments)
    ]


def temperature_summary(segments: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Seconds and share of decoded audio per temperature and per outcome, and the fallback share.

    ``segments`` are segment records (``seconds`` decoded, ``temperature``, ``outcome``); the
    fallback share is the audio not accepted at the first temperature.
    """
    by_temperature: dict[str, float] = defaultdict(float)
    by_outcome: dict[str, float] = defaultdict(float)
    for s in segments:
        seconds = float(s["seconds"])
        temperature = "n/a" if s["temperature"] is None else f"{float(s['temperature']):.1f}"
        by_temperature[temperature] += seconds
        by_outcome[s["outcome"]] += seconds
    total = sum(by_temperature.values())
    fallback = by_outcome.get(FALLBACK, 0.0) + by_outcome.get(ALL_FAILED, 0.0)
    share = fallback / total if total > 0 else None
    return {
        "decoded_s": round(total, 3),
        "seconds_by_temperature": {k: round(v, 3) for k, v in sorted(by_temperature.items())},
        "share_by_temperature": {k: round(v / total, 4) for k, v in sorted(by_temperature.items())} if total else {},
        "seconds_by_outcome": {k: round(v, 3) for k, v in sorted(by_outcome.items())},
        "fallback_s": round(fallback, 3),
        "fallback_share": None if share is None else round(share, 4),
        "fallback_dominated": bool(share is not None and share > DOMINATED_SHARE),
    }
