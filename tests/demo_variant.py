"""The demo experiment file (or the older one with four copied Silero tables) with one piece of text
replaced: a variant to load in a test."""

from __future__ import annotations

from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
# The demo as it was written before Silero profiles: each Silero table copied out where it is used.
INLINE_SILERO = Path(__file__).resolve().parent / "golden" / "experiment-inline-silero.toml"


def demo_variant(folder: Path, old: str, new: str, source: Path = DEMO) -> Path:
    """Write ``source`` with the first ``old`` replaced by ``new`` to ``folder``/experiment.toml."""
    text = source.read_text(encoding="utf-8")
    assert old in text, old
    path = folder / "experiment.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path
