"""A recording's identity by its audio content: the decoded samples, not the file that holds them.

The same samples in a WAV and in a FLAC are the same recording; the protocol keys "this holdout
was opened" by this, so re-encoding a holdout does not make it fresh test data. The hash is of
the sample rate and the float32 samples as the manifest's loader decodes them (its channel
choice applied), and is kept per machine by the file's own sha256 (the same file always decodes
the same), so a long holdout is decoded once.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from toolkit.core.files import atomic_write_json, machine_cache
from toolkit.corpus.manifest import Manifest, RecordingEntry


def _cache_file() -> Path:
    return machine_cache("audio-content.json")


def audio_content_sha256(entry: RecordingEntry) -> str:
    """The sha256 of ``entry``'s decoded audio (verified against the manifest first)."""
    key = f"{entry.sha256}:{entry.channel}"
    cache = _cache_file()
    try:
        known = json.loads(cache.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if isinstance(known, dict) and isinstance(known.get(key), str):
        return known[key]
    signal = entry.load_audio()
    digest = hashlib.sha256(f"{signal.sample_rate}:".encode())
    digest.update(np.ascontiguousarray(signal.samples, dtype="<f4").tobytes())
    value = digest.hexdigest()
    atomic_write_json(cache, {**(known if isinstance(known, dict) else {}), key: value})
    return value


def split_content(manifest: Manifest, split: str) -> list[str]:
    """The sorted content hashes of a split's recordings: how the protocol knows a test split wherever it lives."""
    return sorted(audio_content_sha256(entry) for entry in manifest.split(split))
