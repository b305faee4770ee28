"""Where a model runs: ``device = "auto" | "cpu" | "cuda"`` and ``device_index``, resolved per library.

A recognizer (CTranslate2), a Silero or GTCRN pass (onnxruntime) and noisereduce (torch) each
see CUDA through their own library, so "is there a GPU" is asked of the library that will run
the model. ``"auto"`` takes the GPU when that library can use one and the CPU otherwise;
``"cuda"`` on a machine where it cannot is refused in one line. The resolved device (and the
GPU's name) goes into the run record and every cache key, so a GPU's results are never handed to
a CPU run or the other way round. The libraries are imported only when asked (a light install
never imports them).
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from typing import Literal

# Forces CTranslate2's CPU kernels to one instruction set (GENERIC, AVX, AVX2, AVX512): another machine's words.
FORCE_VARIABLE = "CT2_FORCE_CPU_ISA"
Device = Literal["auto", "cpu", "cuda"]
DEVICES: tuple[str, ...] = ("auto", "cpu", "cuda")
LIBRARIES = ("ctranslate2", "onnxruntime", "torch")


class NoCuda(ValueError):
    """``device = "cuda"`` where the library that would run the model sees no such CUDA device."""


def check_setting(device: str, device_index: int) -> None:
    """ValueError for a device setting that cannot mean anything anywhere (for config dataclasses)."""
    if device not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, not {device!r}")
    if isinstance(device_index, bool) or not isinstance(device_index, int) or device_index < 0:
        raise ValueError(f"device_index must be a CUDA device number >= 0, not {device_index!r}")


@cache
def cuda_devices(library: str) -> int:
    """How many CUDA devices ``library`` can run on here (0: none, no CUDA build of it, or a light install
    without it)."""
    try:
        return _cuda_devices(library)
    except ModuleNotFoundError:
        return 0


def _cuda_devices(library: str) -> int:
    if library == "ctranslate2":
        import ctranslate2

        return int(ctranslate2.get_cuda_device_count())
    if library == "torch":
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    if library == "onnxruntime":
        import onnxruntime

        if "CUDAExecutionProvider" not in onnxruntime.get_available_providers():
            return 0
        return len(_nvidia_smi("--list-gpus"))
    raise ValueError(f"unknown library {library!r}; known: {', '.join(LIBRARIES)}")


def resolve(device: str, device_index: int, library: str) -> str:
    """``"cpu"`` or ``"cuda:N"`` for a setting, as ``library`` sees this machine; NoCuda for an impossible "cuda"."""
    check_setting(device, device_index)
    if device == "cpu":
        return "cpu"
    count = cuda_devices(library)
    if device_index < count:
        return f"cuda:{device_index}"
    if device == "auto":
        return "cpu"
    seen = "no CUDA device" if count == 0 else f"CUDA devices 0-{count - 1} only"
    hint = (
        " (the CPU build of onnxruntime has no CUDAExecutionProvider: install onnxruntime-gpu)"
        if count == 0 and (library == "onnxruntime")
        else ""
    )
    raise NoCuda(
        f'device = "cuda" with device_index = {device_index}, but {library} sees {seen} here{hint}; '
        'set device = "cpu" (or "auto": the GPU where there is one)'
    )


def device_record(resolved: str) -> dict[str, str | int | None]:
    """What the run record says about a resolved device: the device, and for a GPU its index and name."""
    if not resolved.startswith("cuda"):
        return {"device": "cpu"}
    index = int(resolved.split(":", 1)[1])
    return {"device": "cuda", "device_index": index, "gpu": gpu_name(index)}


@cache
def gpu_name(index: int) -> str | None:
    """The GPU's name (``NVIDIA A100-SXM4-40GB``) from torch or nvidia-smi; None when neither can tell."""
    try:
        import torch

        if torch.cuda.is_available() and index < torch.cuda.device_count():
            return str(torch.cuda.get_device_name(index))
    except ImportError:
        pass
    names = _nvidia_smi("--query-gpu=name", "--format=csv,noheader")
    return names[index] if index < len(names) else None


def _nvidia_smi(*args: str) -> list[str]:
    if shutil.which("nvidia-smi") is None:
        return []
    try:
        done = subprocess.run(["nvidia-smi", *args], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []
