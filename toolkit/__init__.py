"""pt-BR long-form ASR ablation toolkit.

The scorer as a library: ``toolkit.wer(reference, hypothesis)``, ``toolkit.score(...)`` and
``toolkit.Scorer(options)`` (see :mod:`toolkit.api`). They load on first use, so ``import
toolkit`` (which every command does) stays instant.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

_PUBLIC = {
    "score": "toolkit.api",
    "wer": "toolkit.api",
    "Scorer": "toolkit.api",
    "CorpusScore": "toolkit.scorer.results",
    "ScoreOptions": "toolkit.scorer.options",
    "RecordingScore": "toolkit.scorer.results",
    "derive_reference_times": "toolkit.asr.derived_times",
}
__all__ = ["__version__", *_PUBLIC]


def __getattr__(name: str) -> Any:
    if name in _PUBLIC:
        import importlib

        return getattr(importlib.import_module(_PUBLIC[name]), name)
    raise AttributeError(f"module 'toolkit' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_PUBLIC})
