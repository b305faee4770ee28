"""How the hypothesis met the reference's optional words ("(inciso)", sclite's convention), reported apart.

An optional word left out costs nothing and counts as a hit (``sclite -D``), so WER alone cannot
say how many were said; these figures can: present and matched, substituted, or left out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from toolkit.scorer.align import EQUAL, SKIP, SUBSTITUTE, Alignment
from toolkit.scorer.metrics.figures import Figure, Figures


@dataclass(frozen=True)
class OptionalWords(Figures):
    """Reference words marked optional, and whether the hypothesis matched, substituted or left them out."""

    FIGURES = tuple(Figure(key) for key in ("ref_count", "matched", "substituted", "left_out"))

    ref_count: int = 0
    matched: int = 0
    substituted: int = 0
    left_out: int = 0


def optional_words(alignment: Alignment, optional: np.ndarray) -> OptionalWords:
    """The optional reference words' outcomes in ``alignment``."""
    if not optional.any():
        return OptionalWords()
    op, _, _ = alignment.ref_view()
    marked = op[optional]
    return OptionalWords(
        ref_count=int(optional.sum()),
        matched=int((marked == EQUAL).sum()),
        substituted=int((marked == SUBSTITUTE).sum()),
        left_out=int((marked == SKIP).sum()),
    )
