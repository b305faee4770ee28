"""The enhancer interface: waveform in, enhanced waveform out, with the measured delay in its time map.

Subclasses only turn samples into samples (same length, same rate). This base class checks
the input, runs them, measures the output's lag against the input by cross-correlation and
wraps the output with :func:`toolkit.audio.signal.delayed`, so every later time still maps
back to the original recording.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from toolkit.audio.signal import Signal, delayed
from toolkit.core.errors import InputError, ToolkitError
from toolkit.enhance.delay import measure_delay
from toolkit.enhance.params import EnhancerParams


@dataclass(frozen=True)
class EnhancementResult:
    """An enhanced signal with its measured delay (seconds) and the wall time it took."""

    signal: Signal
    delay: float
    wall_seconds: float

    @property
    def speed(self) -> float:
        """Seconds of audio processed per wall-clock second (x real time)."""
        return self.signal.duration / self.wall_seconds if self.wall_seconds > 0 else float("inf")

    def meta(self) -> dict[str, Any]:
        return {"delay_s": self.delay, "wall_s": self.wall_seconds, "speed_x_realtime": self.speed}


class Enhancer(ABC):
    """A speech enhancer with fixed, validated parameters."""

    name: ClassVar[str]

    def __init__(self, params: EnhancerParams) -> None:
        self.params = params

    def process(self, signal: Signal) -> Signal:
        """The enhanced signal; its time map removes the measured delay."""
        return self.run(signal).signal

    def run(self, signal: Signal) -> EnhancementResult:
        """Enhance ``signal`` and report the measured delay and the time taken."""
        if signal.samples.ndim != 1:
            raise InputError(None, f"{self.name} needs a mono signal, got shape {signal.samples.shape}")
        if not np.all(np.isfinite(signal.samples)):
            raise InputError(None, f"{self.name} input contains NaN or infinite samples")
        started = time.perf_counter()
        prepared = self.prepare(signal)
        if len(prepared.samples) == 0:
            return EnhancementResult(delayed(prepared, prepared.samples, 0.0), 0.0, 0.0)
        output = np.asarray(self.enhance(prepared.samples, prepared.sample_rate), dtype=np.float32)
        if output.shape != prepared.samples.shape:
            raise ToolkitError(f"{self.name} returned {output.shape} samples for an input of {prepared.samples.shape}")
        # Rounded to the microsecond (far below a sample) so a delay-free enhancer records exactly 0.
        lag = measure_delay(prepared.samples, output, prepared.sample_rate, self.params.max_lag_s)
        delay = round(lag, 6) + 0.0
        return EnhancementResult(delayed(prepared, output, delay), delay, time.perf_counter() - started)

    def prepare(self, signal: Signal) -> Signal:
        """The input as this enhancer needs it (e.g. resampled); by default unchanged."""
        return signal

    @abstractmethod
    def enhance(self, samples: np.ndarray, sample_rate: int) -> np.ndarray:
        """Enhanced samples, as many as given, at the same rate."""

    @abstractmethod
    def identity(self) -> dict[str, Any]:
        """What determines the output: name, library/model versions, model sha256, parameters."""
