"""What a run ran on: library versions and hardware, recorded in every run record."""

from __future__ import annotations

import os
import platform
import sys
from importlib import metadata

from toolkit.runs.record import Hardware

LIBRARIES = (
    "ptbr-asr-ablate",
    "numpy",
    "scipy",
    "pandas",
    "statsmodels",
    "soundfile",
    "soxr",
    "praatio",
    "jiwer",
    "rapidfuzz",
    "num2words",
    "faster-whisper",
    "ctranslate2",
    "whisperx",
    "torch",
    "torchaudio",
    "silero-vad",
    "onnxruntime",
    "noisereduce",
    "pyannote.audio",
    "transformers",
)


def library_versions(names: tuple[str, ...] = LIBRARIES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def hardware() -> Hardware:
    """This machine: platform, Python, architecture, CPU model name, core count and memory."""
    cpu = platform.processor() or ""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as handle:
            cpu = next((line.split(":", 1)[1].strip() for line in handle if line.startswith("model name")), cpu)
    except OSError:
        pass
    memory_gb = None
    if hasattr(os, "sysconf") and "SC_PHYS_PAGES" in os.sysconf_names:
        memory_gb = round(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**30, 1)
    return Hardware(
        platform=platform.platform(),
        python=sys.version.split()[0],
        machine=platform.machine(),
        cpu=cpu,
        cpu_count=os.cpu_count(),
        memory_gb=memory_gb,
    )
