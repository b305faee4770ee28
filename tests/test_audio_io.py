"""Audio probing and loading: WAV/FLAC/OGG/MP3 written by soundfile and ffmpeg, real pt-BR clips, bad files."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf
from shared_data import PTBR_DEV

from toolkit.audio.io import load_audio, probe_audio
from toolkit.core.errors import InputError

RATE = 16000
CV_CLIPS = PTBR_DEV / "commonvoice-pt" / "clips"


def tone(seconds: float = 1.5, rate: int = RATE, channels: int = 1) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    left = 0.3 * np.sin(2 * np.pi * 440 * t)
    return left if channels == 1 else np.stack([left, 0.5 * left], axis=1)


@pytest.mark.parametrize("suffix, lossless", [(".wav", True), (".flac", True), (".ogg", False), (".mp3", False)])
def test_soundfile_formats_load_as_float32_mono(tmp_path: Path, suffix: str, lossless: bool) -> None:
    path = tmp_path / f"rec{suffix}"
    sf.write(path, tone(), RATE)
    info = probe_audio(path, decode=True)
    assert (info.sample_rate, info.channels) == (RATE, 1)
    assert info.duration == pytest.approx(1.5, abs=0.08)
    signal = load_audio(path)
    assert signal.samples.dtype == np.float32 and signal.samples.ndim == 1
    assert signal.sample_rate == RATE and len(signal.samples) == info.frames
    assert signal.timemap(0.7) == pytest.approx(0.7)
    assert signal.timemap.duration == pytest.approx(signal.duration)
    if lossless:
        assert np.allclose(signal.samples, tone(), atol=1e-4)
    else:
        assert 0.15 < float(np.sqrt(np.mean(signal.samples**2))) < 0.27


@pytest.mark.skipif(shutil.which("ffmpeg") is None, reason="ffmpeg is not installed")
@pytest.mark.parametrize(
    "suffix, codec", [(".mp3", "libmp3lame"), (".ogg", "libvorbis"), (".flac", "flac"), (".wav", "pcm_s24le")]
)
def test_files_encoded_by_ffmpeg(tmp_path: Path, suffix: str, codec: str) -> None:
    source = tmp_path / "source.wav"
    sf.write(source, tone(2.0, 44100), 44100)
    path = tmp_path / f"rec{suffix}"
    subprocess.run(
        ["ffmpeg", "-v", "error", "-y", "-i", str(source), "-c:a", codec, "-ar", "22050", str(path)], check=True
    )
    info = probe_audio(path, decode=True)
    assert info.sample_rate == 22050 and info.channels == 1
    assert info.duration == pytest.approx(2.0, abs=0.08)
    assert load_audio(path).duration == pytest.approx(info.duration)


def test_stereo_needs_a_channel_or_a_downmix(tmp_path: Path) -> None:
    path = tmp_path / "stereo.wav"
    sf.write(path, tone(channels=2), RATE, subtype="FLOAT")
    with pytest.raises(InputError, match=r"stereo.wav: has 2 channels; choose a channel \(0-1\) or 'mix'"):
        load_audio(path)
    assert np.allclose(load_audio(path, channel=1).samples, 0.5 * tone())
    assert np.allclose(load_audio(path, channel="mix").samples, 0.75 * tone())
    with pytest.raises(InputError, match="has no channel 2"):
        load_audio(path, channel=2)


@pytest.mark.parametrize("suffix", [".wav", ".flac", ".ogg", ".mp3"])
def test_truncated_files_are_refused(tmp_path: Path, suffix: str) -> None:
    whole = tmp_path / f"whole{suffix}"
    noise = np.random.default_rng(0).uniform(-0.5, 0.5, 3 * RATE)
    sf.write(whole, noise, RATE)
    data = whole.read_bytes()
    cut = tmp_path / f"cut{suffix}"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(InputError, match=r"cut\.\w+: truncated"):
        probe_audio(cut, decode=True)
    with pytest.raises(InputError, match="truncated"):
        load_audio(cut)
    header_only = tmp_path / f"header{suffix}"
    header_only.write_bytes(data[:60])
    with pytest.raises(InputError, match=r"header\.\w+: (truncated|zero-length|not a readable)"):
        load_audio(header_only)


def test_empty_non_audio_zero_length_and_missing_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.wav"
    empty.write_bytes(b"")
    text = tmp_path / "notes.wav"
    text.write_text("isto não é áudio\n", encoding="utf-8")
    zero = tmp_path / "zero.wav"
    sf.write(zero, np.zeros(0, dtype=np.float32), RATE)
    cases = {
        empty: "empty file (0 bytes)",
        text: "not a readable audio file",
        zero: "zero-length audio",
        tmp_path / "absent.flac": "file not found",
    }
    for path, problem in cases.items():
        with pytest.raises(InputError) as caught:
            load_audio(path)
        assert str(caught.value).startswith(f"{path}: {problem}")


def test_real_common_voice_clip() -> None:
    if not CV_CLIPS.is_dir():
        pytest.skip(f"real pt-BR clips not available at {CV_CLIPS} (fresh clone without shared data)")
    clip = sorted(CV_CLIPS.glob("*.mp3"))[0]
    info = probe_audio(clip, decode=True)
    assert info.sample_rate == 48000 and info.channels == 1 and info.format == "MP3"
    signal = load_audio(clip)
    assert len(signal.samples) == info.frames and 0.5 < signal.duration < 15
    assert 0.001 < float(np.abs(signal.samples).max()) <= 1.0
