"""Signal building blocks for the demo corpus: silence trimming, noise, tone sequences, SNR mixing.

Everything is driven by an explicit ``numpy.random.Generator`` so a seed reproduces every sample.
"""

from __future__ import annotations

import numpy as np

NONSPEECH_KINDS = ("silence", "pink-noise", "white-noise", "tones")
_ENVELOPE_SECONDS = 0.005
_FADE_SECONDS = 0.03
_PINK_LOW_HZ = 50.0  # pink noise below this is inaudible drift that only makes levels unstable


def rms(samples: np.ndarray) -> float:
    return float(np.sqrt(np.mean(np.square(samples, dtype=np.float64)))) if len(samples) else 0.0


def trim_silence(samples: np.ndarray, sample_rate: int, threshold_db: float = -40.0) -> np.ndarray:
    """Cut leading/trailing samples whose 5 ms RMS envelope is below ``threshold_db`` re its peak.

    The trimmed signal starts and ends where speech energy does, so placing it at a known sample
    gives exact utterance boundaries.
    """
    width = max(1, round(_ENVELOPE_SECONDS * sample_rate))
    power = np.convolve(np.square(samples, dtype=np.float64), np.ones(width) / width, mode="same")
    active = np.flatnonzero(power > power.max() * 10 ** (threshold_db / 10))
    if len(active) == 0:
        return samples[:0]
    return samples[active[0] : active[-1] + 1]


def _faded(samples: np.ndarray, sample_rate: int) -> np.ndarray:
    n = min(len(samples) // 2, round(_FADE_SECONDS * sample_rate))
    ramp = np.linspace(0.0, 1.0, n, endpoint=False)
    out = samples.copy()
    out[:n] *= ramp
    out[len(out) - n :] *= ramp[::-1]
    return out


def white_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS white Gaussian noise."""
    noise = rng.standard_normal(n)
    return noise / max(rms(noise), 1e-12)


def pink_noise(n: int, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS pink (1/f power) noise, band-limited above 50 Hz, shaped in the frequency domain."""
    spectrum = np.fft.rfft(rng.standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1.0 / sample_rate)
    shape = np.zeros_like(freqs)
    audible = freqs >= _PINK_LOW_HZ
    shape[audible] = 1.0 / np.sqrt(freqs[audible])
    noise = np.fft.irfft(spectrum * shape, n)
    return noise / max(rms(noise), 1e-12)


def tone_sequence(n: int, sample_rate: int, rng: np.random.Generator) -> np.ndarray:
    """Unit-RMS music-like melody: pentatonic notes with harmonics and plucked envelopes."""
    scale = 220.0 * 2 ** (np.array([0, 3, 5, 7, 10, 12, 15, 17, 19, 22]) / 12)
    out = np.zeros(n)
    position = 0
    while position < n:
        length = min(n - position, round(rng.uniform(0.18, 0.5) * sample_rate))
        t = np.arange(length) / sample_rate
        notes = rng.choice(scale, size=int(rng.integers(1, 3)), replace=False)
        envelope = np.minimum(t / 0.01, 1.0) * np.exp(-t * rng.uniform(3.0, 8.0))
        for freq in notes:
            for harmonic, weight in ((1, 1.0), (2, 0.5), (3, 0.25)):
                out[position : position + length] += weight * envelope * np.sin(2 * np.pi * freq * harmonic * t)
        position += length
    return out / max(rms(out), 1e-12)


def nonspeech(kind: str, n: int, sample_rate: int, level: float, rng: np.random.Generator) -> np.ndarray:
    """``n`` samples of a non-speech stretch of ``kind`` at RMS ``level`` (silence is all zeros)."""
    if kind == "silence":
        return np.zeros(n)
    if kind == "pink-noise":
        sound = pink_noise(n, sample_rate, rng)
    elif kind == "white-noise":
        sound = white_noise(n, rng)
    elif kind == "tones":
        sound = tone_sequence(n, sample_rate, rng)
    else:
        raise ValueError(f"unknown non-speech kind {kind!r}; expected one of {NONSPEECH_KINDS}")
    return _faded(sound * level, sample_rate)


def scale_to_snr(noise: np.ndarray, speech_power: float, snr_db: float, where: np.ndarray) -> np.ndarray:
    """Scale ``noise`` so speech power over its power on the ``where`` samples is ``snr_db`` dB."""
    return noise * np.sqrt(speech_power / 10 ** (snr_db / 10) / np.mean(np.square(noise[where])))
