"""Build a recognizer from an experiment's recognizer table and describe how two recognizers relate.

A recognizer has ``.transcribe(signal) -> Transcript`` (words with times in the signal's own
seconds, and each decoded segment's temperature and quality figures), ``.load()`` (load the
weights now, so their cost is measured apart from any recording), ``.identity()`` (backend,
model name, weight hash, full decoding configuration: the run record and cache key) and
``.notes`` (how word times were obtained and whether temperature fallback exists, for
hypothesis meta; an integer note counts something in the last decode, e.g. chunk tails decoded
again, and an arm sums it over its decoded units).

The backends are registered in ``BACKENDS``, the one list the experiment loader and the pipeline ask:
``faster-whisper`` and ``whisperx`` decode a CTranslate2 Whisper folder in this process's worker, and
``command`` runs any external program once per decoded unit (toolkit.asr.command_backend).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from toolkit.asr.command_backend import CommandConfig, CommandRecognizer
from toolkit.asr.faster_whisper_backend import DecodingConfig, FasterWhisperRecognizer
from toolkit.asr.models import resolve_model
from toolkit.asr.segments import Transcript
from toolkit.asr.whisperx_backend import WhisperXConfig, WhisperXRecognizer
from toolkit.audio.signal import Signal
from toolkit.core.config import build_config
from toolkit.core.errors import InputError


class Recognizer(Protocol):
    """What every backend offers the arms engine."""

    notes: dict[str, Any]

    def load(self) -> None: ...

    def transcribe(self, signal: Signal) -> Transcript: ...

    def identity(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Backend:
    """A recognizer backend: the dataclass of its settings, how to build one from a spec and its settings, and
    where the experiment's ``[recognizers.NAME]`` table holds them: under ``[decoding]`` beside a required
    ``model``, or (``flat_table``) in the table itself, ``model`` optional."""

    config: type[Any]
    build: Callable[[Mapping[str, Any], Any], Recognizer]
    flat_table: bool = False


def _whisper(recognizer: Callable[[Any, Any], Recognizer]) -> Callable[[Mapping[str, Any], Any], Recognizer]:
    """A CTranslate2 Whisper backend's builder: the model resolved and its weights verified now."""
    return lambda spec, config: recognizer(resolve_model(str(spec.get("model", ""))), config)


def _command(spec: Mapping[str, Any], config: CommandConfig) -> Recognizer:
    """The command recognizer, its paths read from the experiment's folder (``spec["folder"]``)."""
    return CommandRecognizer(Path(str(spec.get("folder", "."))), str(spec.get("model", "")), config)


BACKENDS: dict[str, Backend] = {
    "faster-whisper": Backend(DecodingConfig, _whisper(FasterWhisperRecognizer)),
    "whisperx": Backend(WhisperXConfig, _whisper(WhisperXRecognizer)),
    "command": Backend(CommandConfig, _command, flat_table=True),
}


def backend(name: str) -> Backend:
    """The registered backend called ``name``; an unknown one is an InputError listing the known ones."""
    if name not in BACKENDS:
        raise InputError(name, f"unknown recognizer backend; known: {', '.join(BACKENDS)}")
    return BACKENDS[name]


def decoding_config_class(name: str) -> type[Any]:
    """The dataclass holding backend ``name``'s settings (its decoding table)."""
    return backend(name).config


def make_recognizer(spec: Mapping[str, Any]) -> Recognizer:
    """A recognizer from ``{"backend", "model", "decoding"[, "name", "folder"]}`` (``folder``: the experiment's, where
    a command's relative paths are read); the model (or the command's files) is resolved and verified now."""
    chosen = backend(str(spec.get("backend", "")))
    name = spec.get("name", spec.get("backend", ""))
    decoding = spec.get("decoding", {})
    if not isinstance(decoding, chosen.config):
        decoding = build_config(chosen.config, decoding, path=f"recognizer {name}", where="decoding", require_all=False)
    return chosen.build(spec, decoding)


def relation(first: Mapping[str, Any], second: Mapping[str, Any]) -> dict[str, Any]:
    """How a second recognizer differs from the first (by identity): the same program (an external command's files)
    or not, the same weights or not, and which settings."""
    same_program = first.get("program_sha256") == second.get("program_sha256")
    same_weights = first.get("weights_sha256") == second.get("weights_sha256")
    backend_changed = first.get("backend") != second.get("backend")
    a, b = first.get("decoding", {}), second.get("decoding", {})
    changed = sorted(k for k in set(a) | set(b) if a.get(k) != b.get(k))
    if not same_program:
        kind = "different program (an external command)"
    elif not same_weights:
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
