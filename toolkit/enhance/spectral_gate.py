"""Spectral-gating noise reduction with the ``noisereduce`` library, every parameter written out.

The defaults equal noisereduce 3.0's own (with its implicit ``win_length = n_fft`` and
``hop_length = win_length // 4`` made explicit), so an experiment file that names them
all is reproducible across library versions that change defaults.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, ClassVar

import numpy as np

from toolkit.core.devices import device_record
from toolkit.core.errors import InputError
from toolkit.enhance.base import Enhancer
from toolkit.enhance.params import EnhancerParams, bounded


@dataclass(frozen=True)
class NoiseReduceParams(EnhancerParams):
    """Arguments of ``noisereduce.reduce_noise`` (see its documentation for each meaning)."""

    enhancer: ClassVar[str] = "noisereduce"
    stationary: bool = False
    prop_decrease: float = bounded(1.0, minimum=0.0, maximum=1.0)
    time_constant_s: float = bounded(2.0, above=0.0)
    freq_mask_smooth_hz: float = bounded(500.0, above=0.0)
    time_mask_smooth_ms: float = bounded(50.0, above=0.0)
    thresh_n_mult_nonstationary: float = bounded(2.0, above=0.0)
    sigmoid_slope_nonstationary: float = bounded(10.0, above=0.0)
    n_std_thresh_stationary: float = bounded(1.5, minimum=0.0)
    clip_noise_stationary: bool = True
    n_fft: int = bounded(1024, minimum=16, maximum=65536)
    win_length: int = bounded(1024, minimum=16, maximum=65536)
    hop_length: int = bounded(256, minimum=1)
    chunk_size: int = bounded(600000, minimum=1)
    padding: int = bounded(30000, minimum=0)

    def check(self) -> None:
        if self.win_length > self.n_fft:
            raise self.fail(f"win_length ({self.win_length}) must not exceed n_fft ({self.n_fft})")
        if self.hop_length > self.win_length:
            raise self.fail(f"hop_length ({self.hop_length}) must not exceed win_length ({self.win_length})")
        if self.chunk_size < self.n_fft:
            raise self.fail(f"chunk_size ({self.chunk_size}) must be at least n_fft ({self.n_fft})")

    def check_rate(self, sample_rate: int) -> None:
        """The mask-smoothing spans must cover at least one frequency bin and one frame."""
        bin_hz = sample_rate / (self.n_fft / 2)
        if self.freq_mask_smooth_hz < bin_hz:
            raise self.fail(
                f"freq_mask_smooth_hz must be at least {bin_hz:g} Hz at {sample_rate} Hz "
                f"with n_fft {self.n_fft}, got {self.freq_mask_smooth_hz:g}"
            )
        hop_ms = self.hop_length / sample_rate * 1000
        if self.time_mask_smooth_ms < hop_ms:
            raise self.fail(
                f"time_mask_smooth_ms must be at least {hop_ms:g} ms at {sample_rate} Hz "
                f"with hop_length {self.hop_length}, got {self.time_mask_smooth_ms:g}"
            )


class NoiseReduceEnhancer(Enhancer):
    """Stationary or non-stationary spectral gating (noisereduce, NumPy backend, one job)."""

    name = "noisereduce"
    params: NoiseReduceParams  # checked in __init__

    def __init__(self, params: NoiseReduceParams | None = None) -> None:
        params = params or NoiseReduceParams()
        if not isinstance(params, NoiseReduceParams):
            raise InputError(None, f"noisereduce needs NoiseReduceParams, got {type(params).__name__}")
        super().__init__(params)
        import noisereduce  # slow (it imports torch); done here so run() times only the processing

        self._reduce_noise = noisereduce.reduce_noise
        # On a GPU, noisereduce's own torch implementation; on the CPU its NumPy one (as before devices).
        self._device = params.resolved_device("torch")

    def enhance(self, samples: np.ndarray, sample_rate: int) -> np.ndarray:
        params = self.params
        params.check_rate(sample_rate)
        on_gpu = {"use_torch": True, "device": self._device} if self._device != "cpu" else {"use_torch": False}
        return self._reduce_noise(y=samples, sr=sample_rate, n_jobs=1, use_tqdm=False, **on_gpu, **params.options())

    def identity(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "library": "noisereduce",
            "library_version": version("noisereduce"),
            "model_sha256": None,
            "parameters": self.params.to_json(),
            "runs_on": device_record(self._device),
        }
