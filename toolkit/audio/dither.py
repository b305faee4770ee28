"""Seeded, inaudible dither: the same recording with an imperceptible change, to see what a result rests on.

A recognizer's words can move with a change nobody hears (a resampler one sample value apart moved
an arm's WER by points on real speech). Adding triangular (TPDF) noise far below the signal, with a
recorded level and seed, re-asks the same question of the same audio: a conclusion that flips under
it was never supported by the audio.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from toolkit.audio.signal import Signal
from toolkit.audio.timemap import TimeMap

DEFAULT_LEVEL_DBFS = -90.0
LOUDEST_LEVEL_DBFS = -60.0  # louder than this is no longer an inaudible change


@dataclass(frozen=True)
class Dither:
    """TPDF noise whose peak is ``level_dbfs`` below full scale, drawn from ``seed`` and the recording."""

    seed: int
    level_dbfs: float = DEFAULT_LEVEL_DBFS

    def __post_init__(self) -> None:
        if not 0 <= self.seed < 2**32:
            raise ValueError(f"a dither seed must be an integer in [0, 2^32), not {self.seed}")
        if not np.isfinite(self.level_dbfs) or self.level_dbfs > LOUDEST_LEVEL_DBFS:
            raise ValueError(f"a dither level must be at most {LOUDEST_LEVEL_DBFS:g} dBFS, not {self.level_dbfs:g}")

    @property
    def peak(self) -> float:
        return float(10 ** (self.level_dbfs / 20))

    def apply(self, signal: Signal, recording: str) -> Signal:
        """``signal`` plus this dither; the noise depends on the seed and ``recording`` (its audio's sha256)
        alone, so each recording gets its own draw and a rerun the same one. Times are unchanged."""
        salt = int.from_bytes(hashlib.sha256(recording.encode("utf-8")).digest()[:8], "big")
        rng = np.random.default_rng([self.seed, salt])
        count = len(signal.samples)
        noise = (rng.random(count) - rng.random(count)) * self.peak  # triangular on (-peak, peak)
        return signal.derive(signal.samples + noise, signal.sample_rate, TimeMap.identity(signal.duration))

    def to_json(self) -> dict[str, Any]:
        return {"kind": "tpdf", "level_dbfs": self.level_dbfs, "seed": self.seed}
