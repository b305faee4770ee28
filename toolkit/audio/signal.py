"""A mono waveform that carries its time map back to the original recording.

Each transform returns a new :class:`Signal` whose ``timemap`` is the composition of the
transform's own map with the input's, so offsets survive any chain of cuts, resamples,
padding and enhancement delays.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from toolkit.audio.timemap import TimeMap


@dataclass(frozen=True)
class Signal:
    """Float32 mono samples at ``sample_rate``; ``timemap`` maps this signal's seconds to original seconds."""

    samples: np.ndarray
    sample_rate: int
    timemap: TimeMap

    @classmethod
    def original(cls, samples: np.ndarray, sample_rate: int) -> Signal:
        samples = np.ascontiguousarray(samples, dtype=np.float32)
        return cls(samples, sample_rate, TimeMap.identity(len(samples) / sample_rate))

    @property
    def duration(self) -> float:
        return len(self.samples) / self.sample_rate

    def derive(self, samples: np.ndarray, sample_rate: int, step: TimeMap) -> Signal:
        """A new signal produced from this one; ``step`` maps the new signal's time to this one's."""
        return Signal(np.ascontiguousarray(samples, dtype=np.float32), sample_rate, step.then(self.timemap))


def resample(signal: Signal, sample_rate: int) -> Signal:
    """Change the sample rate (soxr, linear phase, no delay); seconds are unchanged."""
    if sample_rate == signal.sample_rate:
        return signal
    import soxr

    samples = soxr.resample(signal.samples, signal.sample_rate, sample_rate, quality="HQ")
    duration = len(samples) / sample_rate
    return signal.derive(samples, sample_rate, TimeMap.identity(duration))


def cut(signal: Signal, regions: Sequence[tuple[float, float]]) -> Signal:
    """Concatenate the given regions (in this signal's seconds) back to back."""
    parts, spans = [], []
    for start, end in regions:
        first = max(0, round(start * signal.sample_rate))
        last = min(len(signal.samples), round(end * signal.sample_rate))
        if last <= first:
            continue
        parts.append(signal.samples[first:last])
        spans.append((first / signal.sample_rate, last / signal.sample_rate))
    samples = np.concatenate(parts) if parts else np.zeros(0, dtype=np.float32)
    return signal.derive(samples, signal.sample_rate, TimeMap.cut(spans))


def crop(signal: Signal, start: float, end: float) -> Signal:
    """One region of this signal, e.g. a window or a VAD segment."""
    return cut(signal, [(start, end)])


def pad(signal: Signal, lead: float, trail: float = 0.0) -> Signal:
    """Add silence before and after; the padding maps to no original time."""
    lead_n = round(lead * signal.sample_rate)
    trail_n = round(trail * signal.sample_rate)
    samples = np.concatenate([np.zeros(lead_n, dtype=np.float32), signal.samples, np.zeros(trail_n, dtype=np.float32)])
    return signal.derive(samples, signal.sample_rate, TimeMap.pad(lead_n / signal.sample_rate, signal.duration))


def delayed(signal: Signal, samples: np.ndarray, delay: float) -> Signal:
    """Wrap a processor's output that lags this signal by ``delay`` seconds (measured, not assumed)."""
    return signal.derive(samples, signal.sample_rate, TimeMap.delay(delay, len(samples) / signal.sample_rate))
