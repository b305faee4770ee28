"""Silero VAD: pinned parameters, regions around real speech, in the signal's own seconds."""

from __future__ import annotations

import shutil
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np
import pytest
from shared_data import PTBR_DEV, PTBR_LONGFORM

from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, resample
from toolkit.audio.vad import LIBRARY_DEFAULTS, SileroVadConfig, merge_regions, silero_speech_regions
from toolkit.core.config import build_config
from toolkit.core.errors import InputError

CLIP = PTBR_DEV / "lapsbm" / "LapsBM_0385.wav"
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
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
    regions = silero_speech_regions(signal, LIBRARY_DEFAULTS)
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
    at_16k = silero_speech_regions(signal, LIBRARY_DEFAULTS)
    at_44k = silero_speech_regions(resample(signal, 44100), LIBRARY_DEFAULTS)
    assert len(at_16k) == len(at_44k)
    for (a1, b1), (a2, b2) in zip(at_16k, at_44k):
        assert abs(a1 - a2) <= 0.05 and abs(b1 - b2) <= 0.05


@pytest.mark.needs_model
def test_silence_has_no_speech() -> None:
    silence = Signal.original(np.zeros(16000 * 3, dtype=np.float32), 16000)
    assert silero_speech_regions(silence, LIBRARY_DEFAULTS) == []
    assert silero_speech_regions(Signal.original(np.zeros(0, dtype=np.float32), 16000), LIBRARY_DEFAULTS) == []


def test_every_parameter_must_be_written_out_and_in_range() -> None:
    table = asdict(LIBRARY_DEFAULTS)
    assert build_config(SileroVadConfig, table, path="exp.toml", where="vad") == LIBRARY_DEFAULTS
    partial = {k: v for k, v in table.items() if k != "speech_pad_ms"}
    with pytest.raises(InputError, match="speech_pad_ms"):
        build_config(SileroVadConfig, partial, path="exp.toml", where="vad")
    with pytest.raises(InputError, match="threshold"):
        build_config(SileroVadConfig, {**table, "threshold": 1.5}, path="exp.toml", where="vad")
    with pytest.raises(InputError, match="window_size_samples"):
        build_config(SileroVadConfig, {**table, "window_size_samples": 256}, path="exp.toml", where="vad")


def _demo_silero(max_speech_duration_s: float | None = None) -> SileroVadConfig:
    """The demo experiment's +VAD Silero settings, optionally with another region limit."""
    from toolkit.pipeline.experiment import load_experiment

    config = load_experiment(DEMO).components["vad"].config.silero()
    return config if max_speech_duration_s is None else replace(config, max_speech_duration_s=max_speech_duration_s)


def test_the_demo_cuts_silero_regions_at_10_s() -> None:
    """Deliberate (docs/speed.md): regions of at most 10 s pack into units near 30 s on dense speech."""
    assert _demo_silero().max_speech_duration_s == 10.0


@pytest.mark.slow
@pytest.mark.needs_model
def test_on_the_demo_corpus_regions_of_at_most_10_s_are_the_regions_of_at_most_30_s(tmp_path: Path) -> None:
    """Why the demo's +VAD, windows, onset-repair and batched results did not change with the 10 s limit:
    its utterances are short, so Silero never had a region to cut on any of its four recordings."""
    from toolkit.demo import build_corpus

    if not (shutil.which("RHVoice-test") or shutil.which("espeak-ng")):
        pytest.skip("needs a pt-BR synthesizer (RHVoice or espeak-ng) on PATH for the demo recordings")
    built = build_corpus(tmp_path / "corpus")  # the demo's own corpus: four recordings of about 2 minutes
    assert len(built.recordings) == 4
    for recording in built.recordings:
        signal = load_audio(recording.audio)
        at_10 = silero_speech_regions(signal, _demo_silero())
        assert at_10 and at_10 == silero_speech_regions(signal, _demo_silero(30.0)), recording.recording_id
        assert max(end - start for start, end in at_10) < 10.0


@pytest.mark.slow
@pytest.mark.needs_model
def test_on_dense_read_speech_regions_of_at_most_10_s_pack_units_no_worse_than_30_s() -> None:
    """On 8.3 minutes of the shared audiobook (few pauses) Silero's 30 s limit gives regions of up to 20 s
    that the merge into units of at most 30 s cannot always join; at 10 s it has more places to cut, so
    there are no more units and they hold no less (measured: 20 units of 24.7 s on average against 19 of 25.9 s)."""
    chapter = PTBR_LONGFORM / "audio" / "Titulo 8 Art 196 ao 200.ogg"
    if not chapter.exists():
        pytest.skip(f"development data not present ({chapter}); it lives outside the repository")
    signal = resample(load_audio(chapter), 16000)
    regions = {limit: silero_speech_regions(signal, _demo_silero(limit)) for limit in (10.0, 30.0)}
    assert max(end - start for start, end in regions[10.0]) <= 10.0
    assert max(end - start for start, end in regions[30.0]) > 15.0  # what the 10 s limit is for
    units = {limit: merge_regions(found, 30.0, 30.0) for limit, found in regions.items()}
    assert all(end - start <= 30.0 for found in units.values() for start, end in found)
    speech = {limit: sum(end - start for start, end in found) for limit, found in units.items()}
    assert len(units[10.0]) <= len(units[30.0]) and speech[10.0] / len(units[10.0]) >= speech[30.0] / len(units[30.0])


def test_no_silero_parameter_has_a_default_that_could_contradict_an_experiment() -> None:
    """The demo pads regions by 200 ms where Silero pads 30: a default on the record would say one of them
    silently; every caller names its parameters, or takes Silero's own (LIBRARY_DEFAULTS) by that name."""
    with pytest.raises(TypeError, match="missing 8 required"):
        SileroVadConfig()  # type: ignore[call-arg]
    assert LIBRARY_DEFAULTS.speech_pad_ms == 30 and LIBRARY_DEFAULTS.max_speech_duration_s == 30.0
