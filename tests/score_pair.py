"""A reference and a hypothesis as plain-text files, and the ``ablate score`` arguments that score them."""

from __future__ import annotations

from pathlib import Path


def plain_text_pair(folder: Path, name: str, reference: str, hypothesis: str) -> list[str]:
    """``folder/ref/NAME.txt`` and ``folder/NAME.txt`` (one name, so they pair), and ``score`` arguments
    for them with JSON output."""
    (folder / "ref").mkdir(exist_ok=True)
    (folder / "ref" / f"{name}.txt").write_text(reference + "\n", encoding="utf-8")
    (folder / f"{name}.txt").write_text(hypothesis + "\n", encoding="utf-8")
    return [
        "score",
        "--ref",
        str(folder / "ref" / f"{name}.txt"),
        "--hyp",
        str(folder / f"{name}.txt"),
        "--format",
        "json",
    ]
