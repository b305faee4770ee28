"""Build a recognizer from an experiment's recognizer table and describe how two recognizers relate.

A recognizer has ``.transcribe(signal) -> Transcript`` (words with times in the signal's own
seconds, and each decoded segment's temperature and quality figures), ``.load()`` (load the
weights now, so their cost is measured apart from any recording), ``.identity()`` (backend,
model name, weight hash, full decoding configuration: the run record and cache key) and
``.notes`` (how word times were obtained and whether temperature fallback exists, for
hypothesis meta; an integer note counts something in the last decode, e.g. chunk tails decoded
again, and an arm sums it over its decoded units).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from toolkit.asr.faster_whisper_backend import DecodingConfig, FasterWhisperRecognizer
from toolkit.asr.models import resolve_model
from toolkit.asr.segments import Transcript
from toolkit.asr.whisperx_backend import WhisperXConfig, WhisperXRecognizer
from toolkit.audio.signal import Signal
from toolkit.core.config import build_config
from toolkit.core.errors import InputError

_BACKENDS: dict[str, tuple[type[DecodingConfig], type]] = {
    "faster-whisper": (DecodingConfig, FasterWhisperRecognizer),
    "whisperx": (WhisperXConfig, WhisperXRecognizer),
}


class Recognizer(Protocol):
    """What every backend offers the arms engine."""

    notes: dict[str, Any]

    def load(self) -> None: ...

    def transcribe(self, signal: Signal) -> Transcript: ...

    def identity(self) -> dict[str, Any]: ...


def decoding_config_class(backend: str) -> type[DecodingConfig]:
    """The dataclass holding ``backend``'s decoding table."""
    if backend not in _BACKENDS:
        raise InputError(backend, f"unknown recognizer backend; known: {', '.join(_BACKENDS)}")
    return _BACKENDS[backend][0]


def make_recognizer(spec: Mapping[str, Any]) -> Recognizer:
    """A recognizer from ``{"backend", "model", "decoding"[, "name"]}``; the model is resolved and verified now."""
    backend = spec.get("backend", "")
    config_class = decoding_config_class(backend)
    name = spec.get("name", backend)
    decoding = spec.get("decoding", {})
    if not isinstance(decoding, config_class):
        decoding = build_config(config_class, decoding, path=f"recognizer {name}", where="decoding", require_all=False)
    model = resolve_model(str(spec.get("model", "")))
    recognizer: Recognizer = _BACKENDS[backend][1](model, decoding)
    return recognizer


def relation(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """How a second recognizer differs from the first (by identity): same weights or not, and which settings."""
    same_weights = first.get("weights_sha256") == second.get("weights_sha256")
    backend_changed = first.get("backend") != second.get("backend")
    a, b = first.get("decoding", {}), second.get("decoding", {})
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not same_weights:
        kind = "different model weights"
    elif changed or backend_changed:
        kind = "same weights, different decoding configuration"
    else:
        kind = "identical recognizer"
    return {
        "relation": kind,
        "same_weights": same_weights,
        "backend_changed": backend_changed,
        "decoding_changed": changed,
    }
