"""One loaded recognizer per experiment name, shared by every arm of a run."""

from __future__ import annotations

from typing import Any

from toolkit.experiment import Experiment


class RecognizerPool:
    """Builds recognizers on first use; identities (model hash, decoding) are known up front."""

    def __init__(self, experiment: Experiment) -> None:
        from toolkit.asr import make_recognizer

        self._specs = experiment.recognizers
        self.seed = experiment.seed
        self._recognizers: dict[str, Any] = {
            name: make_recognizer(spec.to_json()) for name, spec in self._specs.items()
        }

    def load(self) -> None:
        """Load every recognizer's model now: a model or setting that cannot load stops the run before it starts."""
        for recognizer in self._recognizers.values():
            recognizer.load()

    def get(self, name: str) -> Any:
        return self._recognizers[name]

    def transcribe(self, name: str, signal: Any) -> list[Any]:
        """Decode with recognizer ``name``, reseeding first so temperature fallback sampling is repeatable."""
        import ctranslate2

        ctranslate2.set_random_seed(self.seed)
        return self._recognizers[name].transcribe(signal)

    def identity(self, name: str) -> dict[str, Any]:
        return {"name": name, "label": self._specs[name].label, "seed": self.seed,
                **self._recognizers[name].identity()}

    def identities(self) -> dict[str, dict[str, Any]]:
        return {name: self.identity(name) for name in self._recognizers}
