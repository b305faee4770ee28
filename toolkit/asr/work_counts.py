"""How much decoding a transcription did, counted at the CTranslate2 model: windows, attempts, tokens.

Wall and CPU times move with the machine's load (and CTranslate2's threads spin while they wait for a
busy core); these counts do not, for one instruction set. So two arms' decoding cost can be compared
on a shared machine: a 30 s window encoded is the encoder's cost, a generate call and its tokens are
the decoder's (temperature fallbacks included).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any


@dataclass
class DecodeWork:
    """Encoder passes (one per window), decoding attempts (one per window and temperature tried, a batched
    generate call making one per window of its batch) and the tokens of every best sequence they returned."""

    windows_encoded: int = 0
    decode_attempts: int = 0
    tokens_decoded: int = 0


class CountingModel:
    """A CTranslate2 Whisper model that counts its ``encode`` and ``generate`` calls into ``work``;
    everything else is the model's own."""

    def __init__(self, model: Any, work: DecodeWork) -> None:
        self._model = model
        self._work = work

    def encode(self, features: Any, *args: Any, **kwargs: Any) -> Any:
        self._work.windows_encoded += int(features.shape[0])
        return self._model.encode(features, *args, **kwargs)

    def generate(self, *args: Any, **kwargs: Any) -> Any:
        results = self._model.generate(*args, **kwargs)
        self._work.decode_attempts += len(results)
        self._work.tokens_decoded += sum(len(r.sequences_ids[0]) for r in results if r.sequences_ids)
        return results

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


@contextmanager
def counted(whisper: Any) -> Iterator[DecodeWork]:
    """Within the block, ``whisper``'s (a faster-whisper ``WhisperModel``, alone or in a batched pipeline)
    CTranslate2 model counts its work."""
    work = DecodeWork()
    model = whisper.model
    whisper.model = CountingModel(model, work)
    try:
        yield work
    finally:
        whisper.model = model
