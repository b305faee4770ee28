"""Content-addressed cache of finished work (one JSON file per key).

Keys hash everything the result depends on (audio sha256, stage configuration, model
identity), so an unchanged rerun reads results instead of decoding, and an interrupted run
resumes: each result is written atomically the moment it is finished.
"""

from __future__ import annotations

import io
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from toolkit.audio.dither import Dither
from toolkit.audio.vad import SileroVadConfig, silero_identity
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_bytes, atomic_write_json, config_hash
from toolkit.core.json_records import record_from_json, record_to_json
from toolkit.pipeline.code_version import code_digest


class ResultCache:
    """A folder of ``<key>.json`` results (and ``<key>.npy`` arrays); ``key_for`` derives the key."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @staticmethod
    def key_for(description: dict[str, Any]) -> str:
        return config_hash(description)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict[str, Any] | None:
        path = self._path(key)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None  # unreadable entries are recomputed and overwritten
        return entry if isinstance(entry, dict) else None  # so is one that is not an object

    def put(self, key: str, value: dict[str, Any]) -> None:
        atomic_write_json(self._path(key), value)

    def get_array(self, key: str) -> np.ndarray | None:
        path = self._path(key).with_suffix(".npy")
        try:
            return np.load(path, allow_pickle=False) if path.is_file() else None
        except (OSError, ValueError):
            return None  # unreadable entries are recomputed and overwritten

    def put_array(self, key: str, array: np.ndarray) -> None:
        """Store an array; write its JSON entry after it, so the entry marks both complete."""
        buffer = io.BytesIO()
        np.save(buffer, array, allow_pickle=False)
        atomic_write_bytes(self._path(key).with_suffix(".npy"), buffer.getvalue())


def vad_key(lineage: dict[str, Any], silero: SileroVadConfig) -> str:
    """The key of Silero's speech regions of a prepared signal (``lineage``) under a Silero configuration
    on its device: shared by the arms and by the app's blind stretches, so each reuses the other's."""
    return ResultCache.key_for(
        {"kind": "vad", "lineage": lineage, "config": silero_identity(silero), "code": code_digest("vad")}
    )


def unenhanced_lineage(audio_sha256: str, sample_rate: int) -> dict[str, Any]:
    """What a prepared signal descends from when no enhancement ran: the original audio, resampled."""
    return {"audio_sha256": audio_sha256, "enhance": None, "sample_rate": sample_rate}


def dither_identity(dither: Dither) -> dict[str, Any]:
    """What a dithered signal's keys hold of its dither: level, seed and the code that draws it."""
    return {**dither.to_json(), "code": code_digest("dither")}


@dataclass(frozen=True)
class VadEntry:
    """A cached Silero pass: its speech regions (seconds of the signal it ran on) and what it cost."""

    regions: tuple[tuple[float, float], ...]
    measurement: dict[str, float]

    def __post_init__(self) -> None:
        for region in self.regions:
            if len(region) != 2 or not all(math.isfinite(t) for t in region) or region[1] < region[0]:
                raise ValueError(f"a speech region must be two finite times in order, not {list(region)}")


def read_vad_entry(cache: ResultCache, key: str) -> VadEntry | None:
    """The Silero pass cached under ``key``; None when absent, unreadable or not a VAD entry (so it is
    computed again and overwritten, as any unreadable entry is)."""
    data = cache.get(key)
    if data is None:
        return None
    try:
        return record_from_json(VadEntry, data, cache.folder, key)
    except (InputError, ValueError):
        return None


def write_vad_entry(cache: ResultCache, key: str, regions: Sequence[tuple[float, float]], spent: Any) -> VadEntry:
    """Cache a Silero pass (``spent``: its Measurement) under ``key``; the one writer of VAD entries."""
    entry = VadEntry(tuple((s, e) for s, e in regions), spent.to_json())
    cache.put(key, record_to_json(entry))
    return entry
