"""One loaded recognizer per experiment name, shared by every arm of a run."""

from __future__ import annotations

from typing import Any

from toolkit.experiment import Experiment


class RecognizerPool:
    """Builds recognizers on first use; identities (model hash, decoding) are known up front."""

    def __init__(self, experiment: Experiment) -> None:
        from toolkit.asr import make_recognizer

        self._specs = experiment.recognizers
        self._recognizers: dict[str, Any] = {
            name: make_recognizer(spec.to_json()) for name, spec in self._specs.items()
        }

    def get(self, name: str) -> Any:
        return self._recognizers[name]

    def identity(self, name: str) -> dict[str, Any]:
        return {"name": name, "label": self._specs[name].label, **self._recognizers[name].identity()}

    def identities(self) -> dict[str, dict[str, Any]]:
        return {name: self.identity(name) for name in self._recognizers}
