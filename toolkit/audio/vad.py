"""Silero voice activity detection with every parameter pinned, in the signal's own seconds.

The model is the ONNX file shipped inside the ``silero-vad`` wheel (no network), run by
onnxruntime on the CPU or, with ``device = "cuda"`` (or "auto" on a machine where onnxruntime
has CUDA), by its CUDA provider. Regions come back in the seconds of the signal passed in; the
caller maps them through its time map.
``merge_regions`` is WhisperX's "cut & merge": adjacent regions joined into decode units.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from toolkit.audio.signal import Signal, resample
from toolkit.core.devices import Device, check_setting, resolve

SAMPLE_RATE = 16000
WINDOW_SAMPLES = 512  # the 16 kHz Silero model reads fixed 32 ms frames


@dataclass(frozen=True)
class SileroVadConfig:
    """All Silero ``get_speech_timestamps`` parameters, so no library default decides a result, and
    where the pass runs (``device``, ``device_index``: toolkit.core.devices)."""

    threshold: float
    neg_threshold: float
    min_speech_duration_ms: int
    min_silence_duration_ms: int
    speech_pad_ms: int
    max_speech_duration_s: float
    min_silence_at_max_speech_ms: int
    use_max_poss_sil_at_max_speech: bool
    sampling_rate: int = SAMPLE_RATE
    window_size_samples: int = WINDOW_SAMPLES
    device: Device = "cpu"
    device_index: int = 0

    def __post_init__(self) -> None:
        check_setting(self.device, self.device_index)
        if not 0.0 < self.threshold < 1.0:
            raise ValueError(f"threshold {self.threshold} must lie in (0, 1)")
        if not 0.0 < self.neg_threshold <= self.threshold:
            raise ValueError(f"neg_threshold {self.neg_threshold} must lie in (0, threshold]")
        for name in (
            "min_speech_duration_ms",
            "min_silence_duration_ms",
            "speech_pad_ms",
            "min_silence_at_max_speech_ms",
        ):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must not be negative")
        if self.max_speech_duration_s <= 0:
            raise ValueError(f"max_speech_duration_s {self.max_speech_duration_s} must be positive")
        if self.sampling_rate != SAMPLE_RATE or self.window_size_samples != WINDOW_SAMPLES:
            raise ValueError(
                f"the bundled Silero model runs at sampling_rate {SAMPLE_RATE} with "
                f"window_size_samples {WINDOW_SAMPLES}"
            )


# What a caller who names no parameter gets: Silero's own ``get_speech_timestamps`` defaults, but regions cut
# at 30 s (Whisper's window) where Silero never cuts. An experiment writes every parameter out (or names a
# profile), so this decides nothing there: only the review stretches of an experiment without a VAD arm use it.
LIBRARY_DEFAULTS = SileroVadConfig(
    threshold=0.5,
    neg_threshold=0.35,
    min_speech_duration_ms=250,
    min_silence_duration_ms=100,
    speech_pad_ms=30,
    max_speech_duration_s=30.0,
    min_silence_at_max_speech_ms=98,
    use_max_poss_sil_at_max_speech=True,
)


def silero_device(config: SileroVadConfig) -> str:
    """Where ``config``'s Silero pass runs here: ``cpu`` or ``cuda:N`` (NoCuda: a "cuda" onnxruntime cannot use)."""
    return resolve(config.device, config.device_index, "onnxruntime")


def silero_identity(config: SileroVadConfig) -> dict[str, Any]:
    """What the speech regions depend on: the Silero parameters and the device the pass runs on (not
    the setting: "auto" on a CPU machine is the CPU), for cache keys."""
    identity = asdict(config)
    del identity["device_index"]
    identity["device"] = silero_device(config)
    return identity


@lru_cache(maxsize=2)
def load_silero(device: str = "cpu") -> Any:
    """Load the wheel's ONNX model once per process and device (importing silero_vad resets torch's thread count)."""
    import warnings

    import torch

    threads = torch.get_num_threads()
    from silero_vad import load_silero_vad

    with warnings.catch_warnings():  # the wheel locates its model with a deprecated importlib call
        warnings.simplefilter("ignore", DeprecationWarning)
        model = load_silero_vad(onnx=True)
    torch.set_num_threads(threads)
    if device != "cpu":  # the same ONNX file on onnxruntime's CUDA provider (the wheel's wrapper forces the CPU)
        import onnxruntime

        options = onnxruntime.SessionOptions()
        options.inter_op_num_threads = options.intra_op_num_threads = 1
        provider = ("CUDAExecutionProvider", {"device_id": int(device.split(":")[1])})
        from importlib.resources import files

        path = str(files("silero_vad.data").joinpath("silero_vad.onnx"))
        model.session = onnxruntime.InferenceSession(path, sess_options=options, providers=[provider])
    return model


def silero_speech_regions(signal: Signal, config: SileroVadConfig) -> list[tuple[float, float]]:
    """Speech regions ``(start, end)`` in ``signal``'s seconds, found at 16 kHz with ``config``."""
    import torch
    from silero_vad import get_speech_timestamps

    audio = resample(signal, SAMPLE_RATE).samples
    if len(audio) == 0:
        return []
    stamps = get_speech_timestamps(
        torch.from_numpy(audio),
        load_silero(silero_device(config)),
        threshold=config.threshold,
        neg_threshold=config.neg_threshold,
        sampling_rate=config.sampling_rate,
        min_speech_duration_ms=config.min_speech_duration_ms,
        min_silence_duration_ms=config.min_silence_duration_ms,
        speech_pad_ms=config.speech_pad_ms,
        max_speech_duration_s=config.max_speech_duration_s,
        min_silence_at_max_speech=config.min_silence_at_max_speech_ms,
        use_max_poss_sil_at_max_speech=config.use_max_poss_sil_at_max_speech,
        return_seconds=False,
    )
    return [(s["start"] / SAMPLE_RATE, s["end"] / SAMPLE_RATE) for s in stamps]


def merge_regions(regions: list[tuple[float, float]], max_s: float, max_gap_s: float) -> list[tuple[float, float]]:
    """Adjacent speech regions joined into units of at most ``max_s`` seconds (WhisperX's merge).

    Regions are taken in order; the next one joins the current unit while the unit would
    still span at most ``max_s`` (its first start to the new region's end) and the pause
    before it is at most ``max_gap_s``; otherwise it starts a new unit. A unit spans its
    first region's start to its last region's end, pauses included. A region is never split
    or dropped: one longer than ``max_s`` is a unit on its own, and ``max_s = 0`` gives one
    unit per region. With ``max_gap_s >= max_s`` the pause rule never binds and the units
    are exactly those of ``whisperx.vads.Vad.merge_chunks`` with ``chunk_size = max_s``.
    """
    units: list[tuple[float, float]] = []
    for start, end in regions:
        if units and end - units[-1][0] <= max_s and start - units[-1][1] <= max_gap_s:
            units[-1] = (units[-1][0], end)
        else:
            units.append((start, end))
    return units
