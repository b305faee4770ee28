"""The smallest input a run gets past loading with: one second of tone, frozen, and the demo experiment beside it."""

from __future__ import annotations

from pathlib import Path

from demo_variant import demo_variant


def tiny_experiment(root: Path, old: str = "", new: str = "") -> Path:
    """A one-recording corpus (speech-free tone, a one-utterance TextGrid) frozen as the tuning split under ``root``,
    and the demo experiment with the first ``old`` replaced by ``new``; returns the experiment file."""
    import numpy as np
    import soundfile

    from toolkit.core.transcripts import Reference, Utterance
    from toolkit.corpus.freeze import freeze
    from toolkit.formats import write_reference_textgrid

    (root / "corpus" / "audio").mkdir(parents=True)
    (root / "corpus" / "refs").mkdir()
    tone = 0.1 * np.sin(2 * np.pi * 220 * np.arange(16000) / 16000)
    soundfile.write(root / "corpus" / "audio" / "rec.wav", tone, 16000, subtype="PCM_16")
    write_reference_textgrid(
        Reference("rec", [Utterance(0.1, 0.9, "não")]), root / "corpus" / "refs" / "rec.TextGrid", 1.0
    )
    freeze(root / "corpus" / "audio", root / "corpus" / "refs", root / "corpus" / "manifest.json", split="tuning")
    return demo_variant(root, old, new)
