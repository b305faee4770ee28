"""The demo experiment file with one piece of text replaced: a variant to load in a test."""

from __future__ import annotations

from pathlib import Path

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def demo_variant(folder: Path, old: str, new: str) -> Path:
    """Write the demo experiment with the first ``old`` replaced by ``new`` to ``folder``/experiment.toml."""
    text = DEMO.read_text(encoding="utf-8")
    assert old in text, old
    path = folder / "experiment.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path
