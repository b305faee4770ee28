"""Loudness normalization before decoding: one gain for the whole recording, so its time map is the identity.

Whisper's log-mel features are not level-invariant (their floor is set 8 decades under the loudest bin, and
their scale is absolute), so a recording made quietly is decoded from other features than the same speech
made loud. The level is the RMS of the 400 ms blocks louder than ``gate_dbfs`` (EBU R128's block length and
absolute gate, without its K-weighting or relative gate), in dB relative to full scale (a full-scale sine
reads -3.01 dBFS); the gain brings it to ``target_dbfs``, lowered where needed so that no sample's peak
exceeds ``max_peak_dbfs`` (no clipping). A recording with no block above the gate keeps a gain of 0 dB.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from toolkit.audio.signal import Signal
from toolkit.audio.timemap import TimeMap
from toolkit.pipeline.stage import Prepared, StageBase, StageConfig

BLOCK_S = 0.4


@dataclass(frozen=True)
class LoudnessConfig:
    """The level to reach (``target_dbfs``), the gate below which a block is silence (``gate_dbfs``) and the
    highest peak the gain may make (``max_peak_dbfs``), all in dBFS."""

    target_dbfs: float
    gate_dbfs: float
    max_peak_dbfs: float

    def __post_init__(self) -> None:
        for name in ("target_dbfs", "gate_dbfs", "max_peak_dbfs"):
            value = getattr(self, name)
            if not math.isfinite(value) or value >= 0:
                raise ValueError(f"{name} must be a finite level below 0 dBFS, not {value!r}")
        if self.gate_dbfs >= self.target_dbfs:
            raise ValueError(f"gate_dbfs ({self.gate_dbfs}) must lie below target_dbfs ({self.target_dbfs})")


@dataclass(frozen=True)
class Level:
    """A signal's gated RMS level and peak in dBFS (None: no block above the gate, or all zeros)."""

    rms_dbfs: float | None
    peak_dbfs: float | None


def dbfs(amplitude: float) -> float | None:
    """An amplitude (RMS or peak, full scale 1.0) in dBFS; None for silence."""
    return 20 * math.log10(amplitude) if amplitude > 0 else None


def measure_level(samples: np.ndarray, sample_rate: int, gate_dbfs: float) -> Level:
    """The RMS over the 400 ms blocks above ``gate_dbfs`` (the last, shorter block counts by its length)."""
    block = max(1, round(BLOCK_S * sample_rate))
    energy = np.square(samples.astype(np.float64))
    sums = np.add.reduceat(energy, np.arange(0, len(energy), block)) if len(energy) else np.zeros(0)
    lengths = np.minimum(block, len(energy) - np.arange(0, len(energy), block))
    means = sums / np.maximum(lengths, 1)
    loud = means > 10 ** (gate_dbfs / 10)
    rms = math.sqrt(float(sums[loud].sum() / lengths[loud].sum())) if loud.any() else 0.0
    return Level(dbfs(rms), dbfs(float(np.max(np.abs(samples)))) if len(samples) else None)


def gain_db(level: Level, config: LoudnessConfig) -> float:
    """The gain that brings ``level`` to the target without a peak above the ceiling (0 for silence)."""
    if level.rms_dbfs is None or level.peak_dbfs is None:
        return 0.0
    return min(config.target_dbfs - level.rms_dbfs, config.max_peak_dbfs - level.peak_dbfs)


class LoudnessStage(StageBase[LoudnessConfig]):
    """The recording brought to one loudness before VAD and decoding (a gain only: time is untouched)."""

    name = "loudness"
    config_class = LoudnessConfig
    cause = "loudness"
    sources = ("pipeline/loudness.py", "pipeline/stage.py", "audio/signal.py", "audio/timemap.py")

    def prepare(self, config: StageConfig, signal: Signal) -> Prepared:
        """The signal times the gain, and the measured level and gain for the run record."""
        own = self.own(config)
        level = measure_level(signal.samples, signal.sample_rate, own.gate_dbfs)
        gain = gain_db(level, own)
        scaled = signal.samples * np.float32(10 ** (gain / 20))
        record: dict[str, object] = {
            "rms_dbfs": None if level.rms_dbfs is None else round(level.rms_dbfs, 3),
            "peak_dbfs": None if level.peak_dbfs is None else round(level.peak_dbfs, 3),
            "gain_db": round(gain, 3),
        }
        return Prepared(signal.derive(scaled, signal.sample_rate, TimeMap.identity(signal.duration)), record)


LOUDNESS = LoudnessStage()
