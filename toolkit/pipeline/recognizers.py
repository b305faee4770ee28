"""Each recognizer of a run in its own worker process, loaded once and shared by every arm.

A decode's wall time, CPU time and peak resident memory are measured inside that recognizer's
worker (toolkit.pipeline.workers), which holds its model and nothing else, so an arm's figures do
not depend on which other arms ran before it. Loading the model is measured apart from any
recording. Workers start by ``start`` or on first use; an unchanged rerun starts none.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from toolkit.asr.segments import Transcript
from toolkit.audio.signal import Signal
from toolkit.core.errors import InputError
from toolkit.pipeline.experiment import Experiment
from toolkit.pipeline.measure import Measurement
from toolkit.pipeline.workers import Worker, Workers


@dataclass
class Decoded:
    """One decode done by a recognizer's worker: the transcript, its measured cost, the recognizer's notes."""

    transcript: Transcript
    measurement: Measurement
    notes: dict[str, Any]


def _recognizer_service(spec: dict[str, Any], seed: int) -> Callable[[Signal], tuple[Transcript, dict[str, Any]]]:
    """In the worker: build and load the recognizer; each request decodes one signal."""
    import ctranslate2

    from toolkit.asr import make_recognizer

    recognizer = make_recognizer(spec)
    recognizer.load()

    def decode(signal: Signal) -> tuple[Transcript, dict[str, Any]]:
        ctranslate2.set_random_seed(seed)  # so temperature fallback sampling repeats
        return recognizer.transcribe(signal), dict(recognizer.notes)

    return decode


class RecognizerPool(Workers):
    """Recognizers of one experiment: identities (model hash, decoding) up front, decoding in workers."""

    def __init__(self, experiment: Experiment) -> None:
        from toolkit.asr import make_recognizer

        super().__init__()
        self._specs = experiment.recognizers
        self.experiment_path = experiment.path
        self.seed = experiment.seed
        # Resolved and verified here (weights hashed), loaded only in the workers.
        self._recognizers: dict[str, Any] = {
            name: make_recognizer(spec.to_json()) for name, spec in self._specs.items()
        }

    def transcribe(self, name: str, signal: Signal) -> Decoded:
        """Decode ``signal`` (times in its own seconds) in recognizer ``name``'s worker."""
        (transcript, notes), spent = self._worker(name).call(Signal.original(signal.samples, signal.sample_rate))
        return Decoded(transcript, spent, notes)

    def _worker(self, name: str) -> Worker:
        return self.get(name, _recognizer_service, (self._specs[name].to_json(), self.seed))

    def weights_mb(self, names: list[str]) -> list[float]:
        """Size of each named recognizer's weight file (what a worker holding it needs, roughly twice that)."""
        return [Path(self._recognizers[name].model.path, "model.bin").stat().st_size / 2**20 for name in names]

    def identity(self, name: str) -> dict[str, Any]:
        return {"name": name, "label": self._specs[name].label, "seed": self.seed, **self._recognizers[name].identity()}

    def model_files(self, names: list[str]) -> dict[str, Path]:
        """The weight file each of ``names`` decodes with (what a worker elsewhere must see)."""
        return {name: Path(self._recognizers[name].model.path, "model.bin") for name in names}

    def identities(self) -> dict[str, dict[str, Any]]:
        return {name: self.identity(name) for name in self._recognizers}

    def runtime(self, name: str) -> dict[str, Any]:
        """Where recognizer ``name`` runs here (CPU or which GPU; toolkit.core.devices) and, on a CPU, the code
        CTranslate2 selects (toolkit.asr.cpu): not part of the identity a challenger is frozen with, but of
        every run, cache key and result made here. A "cuda" this machine cannot use is refused here."""
        from toolkit.core.devices import NoCuda

        try:
            return self._recognizers[name].runtime()
        except NoCuda as error:
            raise InputError(self.experiment_path, f"[recognizers.{name}.decoding] {error}") from None

    def runtimes(self) -> dict[str, dict[str, Any]]:
        return {name: self.runtime(name) for name in self._recognizers}
