"""Omissions and duplications near window seams, scored against the reference.

A seam is the shared interval ``[a, b]`` of two overlapping windows (given as plain pairs,
so the scorer never imports the arms). With ``margin`` seconds either side:

- an **omission** is a deleted reference word located inside a seam region. A deleted word
  has no hypothesis time, so it is located by its own reference time when it has one, else
  between the nearest matched neighbours' hypothesis times (the span they bracket must meet
  the region); the rule is stated so no time is guessed silently;
- a **duplication** is an inserted hypothesis word inside a seam region whose text repeats
  one of the hypothesis words up to ``DUPLICATE_REACH`` positions before or after it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.align import DELETE, INSERT
from toolkit.metrics.aligned import AlignedTokens, Instance
from toolkit.metrics.figures import SETTING, Figure, Figures

DUPLICATE_REACH = 3


@dataclass(frozen=True)
class SeamScore(Figures):
    """Seams scored, with the omissions and duplications found near them (pooled: all add)."""

    FIGURES = (Figure("seams"), Figure("margin_s", None), Figure("omissions", "seam_omissions"),
               Figure("duplications", "seam_duplications"))

    seams: int
    margin_s: float = field(metadata=SETTING)
    omissions: int = 0
    duplications: int = 0
    instances: tuple[Instance, ...] = ()

    def json_extras(self) -> dict[str, Any]:
        return {"instances": [i.to_json() for i in self.instances]}


def _hyp_times(at: AlignedTokens) -> tuple[np.ndarray, np.ndarray]:
    words = at.hyp.words
    return words.start[at.hyp.source], words.end[at.hyp.source]


def _meets(regions: np.ndarray, lo: float, hi: float) -> bool:
    return bool(np.any((regions[:, 0] <= hi) & (regions[:, 1] >= lo)))


def seam_score(at: AlignedTokens, seams: list[tuple[float, float]], margin: float = 1.0) -> SeamScore:
    """Count omissions and duplications within ``margin`` seconds of each seam interval."""
    if not seams:
        return SeamScore(seams=0, margin_s=margin)
    regions = np.array([(a - margin, b + margin) for a, b in seams], dtype=float)
    h_start, h_end = _hyp_times(at)
    partner = at.ref_partner
    ref_start = at.ref.words.start[at.ref.source]
    omissions: list[Instance] = []
    duplications: list[Instance] = []
    for i in np.flatnonzero(at.ref_op == DELETE).tolist():
        if not np.isnan(ref_start[i]):
            lo = hi = float(ref_start[i])
        else:
            before = partner[:i][partner[:i] >= 0]
            after = partner[i + 1:][partner[i + 1:] >= 0]
            lo = float(h_end[before[-1]]) if len(before) else -np.inf
            hi = float(h_start[after[0]]) if len(after) else np.inf
            if np.isnan(lo) or np.isnan(hi):
                continue  # untimed neighbours cannot place the omission
        if _meets(regions, lo, hi):
            omissions.append(at.ref_instance("seam omission", i, i))
    texts = at.hyp.texts
    for j in np.flatnonzero(at.hyp_op == INSERT).tolist():
        if np.isnan(h_start[j]) or not _meets(regions, float(h_start[j]), float(h_start[j])):
            continue
        nearby = texts[max(0, j - DUPLICATE_REACH):j] + texts[j + 1:j + 1 + DUPLICATE_REACH]
        if texts[j] in nearby:
            duplications.append(at.hyp_instance("seam duplication", j))
    return SeamScore(seams=len(seams), margin_s=margin, omissions=len(omissions), duplications=len(duplications),
                     instances=(*omissions, *duplications))
