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
        self.folder = experiment.folder
        self.seed = experiment.seed
        # Resolved and verified here (weights or a command's files hashed), loaded only in the workers.
        self._recognizers: dict[str, Any] = {name: make_recognizer(self._spec(name)) for name in self._specs}

    def _spec(self, name: str) -> dict[str, Any]:
        """Recognizer ``name`` as the registry builds it: its table, and the experiment's folder (a command's
        relative paths are read from there)."""
        return {**self._specs[name].to_json(), "folder": str(self.folder)}

    def transcribe(self, name: str, signal: Signal) -> Decoded:
        """Decode ``signal`` (times in its own seconds) in recognizer ``name``'s worker. An external command's own
        CPU time and peak memory (its notes) are added to what its worker spent: the two ran at once."""
        (transcript, notes), spent = self._worker(name).call(Signal.original(signal.samples, signal.sample_rate))
        spent.cpu_s += notes.pop("external_cpu_s", 0.0)
        spent.peak_rss_mb += notes.pop("external_peak_rss_mb", 0.0)
        return Decoded(transcript, spent, notes)

    def _worker(self, name: str) -> Worker:
        return self.get(name, _recognizer_service, (self._spec(name), self.seed))

    def weights_mb(self, names: list[str]) -> list[float]:
        """Size of each named recognizer's weight file (what a worker holding it needs, roughly twice that); 0 for
        an external command, whose memory is its own process's."""
        from toolkit.asr.models import ModelInfo

        models = [getattr(self._recognizers[name], "model", None) for name in names]
        return [
            Path(model.path, "model.bin").stat().st_size / 2**20 if isinstance(model, ModelInfo) else 0.0
            for model in models
        ]

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
            return dict(self._recognizers[name].runtime())
        except NoCuda as error:
            raise InputError(self.experiment_path, f"[recognizers.{name}.decoding] {error}") from None

    def runtimes(self) -> dict[str, dict[str, Any]]:
        return {name: self.runtime(name) for name in self._recognizers}


def program_file_path(experiment: Experiment, role: str, name: str) -> Path:
    """Where a file of an external command recognizer's identity (its ``role`` and ``name`` as written) is on this
    machine, for a refusal that names it (toolkit.asr.program_files)."""
    from toolkit.asr.program_files import locate

    return locate(experiment.folder, role, name)
