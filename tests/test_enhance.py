"""Enhancers on real pt-BR speech in white noise: SNR gain, kept length, measured delay, original times."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from shared_data import PTBR_DEV

from toolkit.audio.signal import Signal, pad, resample
from toolkit.core.errors import InputError
from toolkit.core.files import canonical_json, sha256_file
from toolkit.enhance import ENHANCERS, GtcrnEnhancer, NoiseReduceEnhancer, build_enhancer, measure_delay
from toolkit.enhance.gtcrn import model_path

LAPSBM = PTBR_DEV / "lapsbm"
SR = 16000
PAUSE = 1.0  # seconds of silence around the clip: long-form audio has pauses
MARKER_TIME = 0.5  # inside the leading pause, where both enhancers keep a loud burst


def _speech(index: int) -> np.ndarray:
    files = sorted(LAPSBM.glob("*.wav"))
    if len(files) <= index:
        pytest.skip(f"real pt-BR clips not found in {LAPSBM} (shared development data absent)")
    samples, rate = sf.read(files[index], dtype="float32")
    assert rate == SR
    # LapsBM clips carry a DC offset of -0.06..-0.17 that dominates their power; the speech is the rest.
    return samples - samples.mean()


@pytest.fixture(scope="module")
def clean() -> np.ndarray:
    silence = np.zeros(int(PAUSE * SR), dtype=np.float32)
    return np.concatenate([silence, _speech(0), silence])


@pytest.fixture(scope="module")
def noisy(clean: np.ndarray) -> np.ndarray:
    """The clean clip plus white noise at 5 dB SNR (fixed seed)."""
    noise = np.random.default_rng(0).standard_normal(len(clean)).astype(np.float32)
    noise *= np.sqrt(np.mean(clean**2) / np.mean(noise**2) / 10 ** (5 / 10))
    return clean + noise


@pytest.fixture(scope="module", params=sorted(ENHANCERS))
def enhancer(request: pytest.FixtureRequest):
    return build_enhancer(request.param)


def _si_snr(clean: np.ndarray, estimate: np.ndarray) -> float:
    """Scale-invariant SNR (dB) of ``estimate`` against ``clean``: a gain change is not an error."""
    target = clean * (np.dot(estimate, clean) / np.dot(clean, clean))
    return float(10 * np.log10(np.sum(target**2) / np.sum((estimate - target) ** 2)))


def _on_original_grid(signal: Signal, count: int, rate: int) -> np.ndarray:
    """The signal's samples placed at original times 0..count/rate through its inverse time map."""
    out = np.zeros(count, dtype=np.float32)
    times = np.arange(count) / rate
    for piece in signal.timemap.inverse().pieces:
        inside = (times >= piece.start) & (times < piece.end)
        index = np.round(piece.at(times[inside]) * signal.sample_rate).astype(int)
        valid = (index >= 0) & (index < len(signal.samples))
        out[np.flatnonzero(inside)[valid]] = signal.samples[index[valid]]
    return out


def _with_marker(noisy: np.ndarray) -> tuple[np.ndarray, float]:
    """``noisy`` with a loud 40 ms voiced burst in the leading pause, and the time of its peak sample.

    A bare impulse click is no use here: GTCRN removes clicks by design, as noise.
    """
    voice = _speech(1)
    length = int(0.04 * SR)
    centre = int(np.argmax(np.abs(voice)))
    burst = voice[centre - length // 2 : centre - length // 2 + length] * np.hanning(length)
    burst *= 0.6 / np.abs(burst).max()
    first = int(MARKER_TIME * SR) - length // 2
    marked = noisy.copy()
    marked[first : first + length] += burst
    return marked, (first + int(np.argmax(np.abs(burst)))) / SR


def _found_at(signal: Signal) -> float:
    """Original time of the output's loudest sample."""
    peak = int(np.argmax(np.abs(signal.samples)))
    time = signal.timemap(peak / signal.sample_rate)
    assert time is not None
    return time


@pytest.mark.needs_model
def test_enhancer_raises_snr_and_keeps_length(enhancer, clean, noisy):
    result = enhancer.run(Signal.original(noisy, SR))
    assert result.signal.sample_rate == SR
    assert len(result.signal.samples) == len(noisy)
    assert abs(result.delay) <= 1 / SR
    aligned = _on_original_grid(result.signal, len(clean), SR)
    assert _si_snr(clean, aligned) > _si_snr(clean, noisy) + 0.5
    assert json.loads(json.dumps(result.meta()))["delay_s"] == result.delay


@pytest.mark.parametrize("lag_ms", [37, -37])
def test_measure_delay_finds_a_known_shift(noisy, lag_ms):
    shift = round(lag_ms / 1000 * SR)
    shifted = np.roll(noisy, shift)
    if shift > 0:
        shifted[:shift] = 0
    else:
        shifted[shift:] = 0
    assert measure_delay(noisy, shifted, SR) == pytest.approx(lag_ms / 1000, abs=1 / SR)


def test_measure_delay_sees_through_added_noise(clean, noisy):
    shifted = np.concatenate([np.zeros(592, dtype=np.float32), noisy[:-592]])
    assert measure_delay(clean, shifted, SR) == pytest.approx(0.037, abs=1 / SR)


@pytest.mark.needs_model
def test_marker_found_at_its_original_time(enhancer, noisy):
    marked, truth = _with_marker(noisy)
    # Padding and 44.1 kHz resampling make the input's own time map non-trivial.
    source = resample(pad(Signal.original(marked, SR), 0.3), 44100)
    output = enhancer.process(source)
    assert output.duration == pytest.approx(source.duration, abs=1 / SR)
    assert _found_at(output) == pytest.approx(truth, abs=0.005)


class LateNoiseReduce(NoiseReduceEnhancer):
    """noisereduce followed by a real 37 ms output latency, as a buffering enhancer would add."""

    def enhance(self, samples: np.ndarray, sample_rate: int) -> np.ndarray:
        lag = round(0.037 * sample_rate)
        out = super().enhance(samples, sample_rate)
        return np.concatenate([np.zeros(lag, dtype=out.dtype), out[:-lag]])


@pytest.mark.needs_model
def test_latency_is_measured_and_removed_in_the_time_map(noisy):
    marked, truth = _with_marker(noisy)
    result = LateNoiseReduce().run(Signal.original(marked, SR))
    assert result.delay == pytest.approx(0.037, abs=1 / SR)
    assert _found_at(result.signal) == pytest.approx(truth, abs=0.005)
    assert result.signal.timemap(0.01) is None  # output before the latency shows no original audio


@pytest.mark.needs_model
def test_identity_names_model_hash_and_every_parameter():
    gtcrn = build_enhancer("gtcrn", {"wet": 0.8})
    identity = gtcrn.identity()
    assert identity["model_sha256"] == sha256_file(model_path())
    assert identity["parameters"] == {"max_lag_s": 0.5, "wet": 0.8, "device": "cpu", "device_index": 0}
    assert identity["runs_on"] == {"device": "cpu"}
    spectral = build_enhancer("noisereduce", {"stationary": True, "prop_decrease": 1})
    parameters = spectral.identity()["parameters"]
    assert parameters["stationary"] is True and parameters["prop_decrease"] == 1.0
    written_out = {"n_fft", "win_length", "hop_length", "time_constant_s", "chunk_size", "padding"}
    assert written_out <= set(parameters)
    canonical_json([identity, spectral.identity()])


@pytest.mark.parametrize(
    "name, params, fragment",
    [
        ("noisereduce", {"prop_decrease": 1.5}, "prop_decrease must be >= 0.0 and <= 1.0"),
        ("noisereduce", {"stationary": "yes"}, "stationary must be true or false"),
        ("noisereduce", {"n_fft": 512.0}, "n_fft must be an integer"),
        ("noisereduce", {"hop_length": True}, "hop_length must be an integer"),
        ("noisereduce", {"win_length": 2048}, "win_length (2048) must not exceed n_fft (1024)"),
        ("noisereduce", {"time_constant_s": 0}, "time_constant_s must be > 0.0"),
        ("gtcrn", {"wet": -0.1}, "wet must be >= 0.0"),
        ("gtcrn", {"max_lag_s": "0.5"}, "max_lag_s must be a number"),
        ("gtcrn", {"max_lag_s": float("nan")}, "max_lag_s must be a finite number"),
        ("gtcrn", {"strength": 1}, "unknown gtcrn parameter(s) strength"),
        ("deepfilternet", {}, "unknown enhancer 'deepfilternet'"),
    ],
)
def test_bad_parameters_fail_before_processing(name, params, fragment):
    with pytest.raises(InputError) as caught:
        build_enhancer(name, params, source="experiments/x/experiment.toml")
    assert str(caught.value).startswith("experiments/x/experiment.toml: ")
    assert fragment in str(caught.value)


@pytest.mark.needs_model
def test_rate_dependent_parameters_and_bad_samples_fail_before_processing():
    quiet = Signal.original(np.zeros(SR, dtype=np.float32), SR)
    with pytest.raises(InputError, match="freq_mask_smooth_hz must be at least 31.25 Hz"):
        build_enhancer("noisereduce", {"freq_mask_smooth_hz": 10}).run(quiet)
    broken = Signal.original(np.array([0.0, np.nan, 0.0], dtype=np.float32), SR)
    with pytest.raises(InputError, match="NaN"):
        GtcrnEnhancer().run(broken)
    with pytest.raises(InputError, match="max_lag_s"):
        measure_delay(np.zeros(10), np.zeros(10), SR, max_lag_s=-1)


@pytest.mark.needs_model
def test_silence_and_empty_input_have_no_delay():
    gtcrn = GtcrnEnhancer()
    assert gtcrn.run(Signal.original(np.zeros(SR, dtype=np.float32), SR)).delay == 0.0
    empty = gtcrn.run(Signal.original(np.zeros(0, dtype=np.float32), SR))
    assert len(empty.signal.samples) == 0 and empty.delay == 0.0
