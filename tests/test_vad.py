"""Silero VAD: pinned parameters, regions around real speech, in the signal's own seconds."""

from __future__ import annotations

from dataclasses import asdict

import numpy as np
import pytest
from shared_data import PTBR_DEV

from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, resample
from toolkit.audio.vad import SileroVadConfig, silero_speech_regions
from toolkit.core.config import build_config
from toolkit.core.errors import InputError

CLIP = PTBR_DEV / "lapsbm" / "LapsBM_0385.wav"
LEAD, TRAIL = 3.0, 2.0


@pytest.fixture(scope="module")
def framed() -> tuple[Signal, float]:
    """Silence, a real pt-BR sentence (DC offset removed), silence; returns the signal and the clip length."""
    if not CLIP.exists():
        pytest.skip(f"development data not present ({CLIP}); it lives outside the repository")
    clip = load_audio(CLIP)
    speech = clip.samples - clip.samples.mean()
    rate = clip.sample_rate
    samples = np.concatenate([np.zeros(int(LEAD * rate)), speech, np.zeros(int(TRAIL * rate))])
    return Signal.original(samples.astype(np.float32), rate), clip.duration


@pytest.mark.needs_model
def test_regions_surround_the_speech(framed: tuple[Signal, float]) -> None:
    signal, clip_duration = framed
    regions = silero_speech_regions(signal, SileroVadConfig())
    assert regions, "no speech found in a real sentence"
    assert regions[0][0] >= LEAD - 0.3
    assert regions[-1][1] <= LEAD + clip_duration + 0.3
    covered = sum(end - start for start, end in regions)
    assert covered >= 0.5 * clip_duration
    assert all(a < b for a, b in regions)
    assert all(b1 <= a2 for (_, b1), (a2, _) in zip(regions, regions[1:]))


@pytest.mark.needs_model
def test_regions_are_in_the_signals_own_seconds_at_any_rate(framed: tuple[Signal, float]) -> None:
    signal, _ = framed
    at_16k = silero_speech_regions(signal, SileroVadConfig())
    at_44k = silero_speech_regions(resample(signal, 44100), SileroVadConfig())
    assert len(at_16k) == len(at_44k)
    for (a1, b1), (a2, b2) in zip(at_16k, at_44k):
        assert abs(a1 - a2) <= 0.05 and abs(b1 - b2) <= 0.05


@pytest.mark.needs_model
def test_silence_has_no_speech() -> None:
    silence = Signal.original(np.zeros(16000 * 3, dtype=np.float32), 16000)
    assert silero_speech_regions(silence, SileroVadConfig()) == []
    assert silero_speech_regions(Signal.original(np.zeros(0, dtype=np.float32), 16000), SileroVadConfig()) == []


def test_every_parameter_must_be_written_out_and_in_range() -> None:
    table = asdict(SileroVadConfig())
    assert build_config(SileroVadConfig, table, path="exp.toml", where="vad") == SileroVadConfig()
    partial = {k: v for k, v in table.items() if k != "speech_pad_ms"}
    with pytest.raises(InputError, match="speech_pad_ms"):
        build_config(SileroVadConfig, partial, path="exp.toml", where="vad")
    with pytest.raises(InputError, match="threshold"):
        build_config(SileroVadConfig, {**table, "threshold": 1.5}, path="exp.toml", where="vad")
    with pytest.raises(InputError, match="window_size_samples"):
        build_config(SileroVadConfig, {**table, "window_size_samples": 256}, path="exp.toml", where="vad")
