"""Omissions, duplications and split words near window seams, scored against the reference.

A seam is the shared interval ``[a, b]`` of two overlapping windows (given as plain pairs,
so the scorer never imports the arms). With ``margin`` seconds either side:

- an **omission** is a deleted reference word located inside a seam region. A deleted word
  has no hypothesis time, so it is located by its own reference onset when it has one, else
  between the nearest matched neighbours' hypothesis times, cut to its own utterance's interval
  (the reference says the word lies there; when the neighbours' span misses that interval, the
  interval alone); the span must meet the region. The rule is stated so no time is guessed
  silently: without it a word lost at a sentence's end, before a long pause, reached across the
  pause into a seam region the sentence never touches;
- a **split word** is an inserted hypothesis word inside a seam region that is a piece of a word
  cut across the two windows: accents folded, a proper prefix of the word after it or a proper suffix of
  the word before it ("a" then "alínea": the left window heard the word's first syllable), or a piece
  that with its neighbour spells the reference word that neighbour stands for ("a" then "linea" for
  "alínea"), the neighbour being no copy of it. Said once and written as one and a half words, it is
  counted apart, never as a duplication;
- a **duplication** is any other inserted hypothesis word inside a seam region whose text repeats
  one of the hypothesis words up to ``DUPLICATE_REACH`` positions before or after it: a word said
  once and written twice ("a a" where the reference has one "a").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from toolkit.scorer.align import DELETE, INSERT
from toolkit.scorer.metrics.aligned import AlignedTokens, Instance
from toolkit.scorer.metrics.figures import SETTING, Figure, Figures
from toolkit.scorer.normalize.chars import fold_accents

DUPLICATE_REACH = 3
# How an omission is located (part of the scorer signature: a change here changes the numbers).
LOCATION_RULE = "own onset, else matched neighbours' span cut to its utterance"


@dataclass(frozen=True)
class SeamScore(Figures):
    """Seams scored, with the omissions, duplications and split words found near them (pooled: all add)."""

    FIGURES = (
        Figure("seams"),
        Figure("margin_s", None),
        Figure("omissions", "seam_omissions"),
        Figure("duplications", "seam_duplications"),
        Figure("split_words", "seam_split_words"),
    )

    seams: int
    margin_s: float = field(metadata=SETTING)
    omissions: int = 0
    duplications: int = 0
    split_words: int = 0
    instances: tuple[Instance, ...] = ()
    located: tuple[tuple[float, float], ...] = ()  # per instance: the span it was located in (seconds)

    def json_extras(self) -> dict[str, Any]:
        return {
            "instances": [
                i.to_json() | {"located": [_finite(lo), _finite(hi)]}
                for i, (lo, hi) in zip(self.instances, self.located)
            ]
        }

    def at(self, lo: float, hi: float) -> list[Instance]:
        """The instances located in ``[lo, hi]`` (a seam interval widened by ``margin_s``)."""
        return [i for i, (a, b) in zip(self.instances, self.located) if a <= hi and b >= lo]


def _finite(value: float) -> float | None:
    return round(value, 3) if np.isfinite(value) else None


def _hyp_times(at: AlignedTokens) -> tuple[np.ndarray, np.ndarray]:
    words = at.hyp.words
    return words.start[at.hyp.source], words.end[at.hyp.source]


def _meets(regions: np.ndarray, lo: float, hi: float) -> bool:
    return bool(np.any((regions[:, 0] <= hi) & (regions[:, 1] >= lo)))


def _omission_span(
    at: AlignedTokens, i: int, ref: tuple[np.ndarray, np.ndarray, np.ndarray], hyp: tuple[np.ndarray, np.ndarray]
) -> tuple[float, float] | None:
    """Where deleted reference token ``i`` lies: its own onset, else its neighbours' span cut to its utterance.

    ``ref`` holds the reference tokens' onsets and spans, ``hyp`` the hypothesis tokens' starts and ends.
    """
    own = float(ref[0][i])
    if not np.isnan(own):
        return own, own
    utterance = float(ref[1][i]), float(ref[2][i])
    h_start, h_end = hyp
    partner = at.ref_partner
    before = partner[:i][partner[:i] >= 0]
    after = partner[i + 1 :][partner[i + 1 :] >= 0]
    lo = float(h_end[before[-1]]) if len(before) else -np.inf
    hi = float(h_start[after[0]]) if len(after) else np.inf
    if np.isnan(utterance[0]) or np.isnan(utterance[1]):
        return None if np.isnan(lo) or np.isnan(hi) else (lo, hi)  # untimed neighbours cannot place it
    if np.isnan(lo) or np.isnan(hi):
        return utterance
    lo, hi = max(lo, utterance[0]), min(hi, utterance[1])
    return (lo, hi) if lo <= hi else utterance


def locate_reference_token(at: AlignedTokens, i: int) -> tuple[float, float] | None:
    """Where reference token ``i`` lies in the recording, by the rule omissions are located with: its own
    time, else (matched) its hypothesis partner's, else its matched neighbours' span cut to its utterance."""
    source = int(at.ref.source[i])
    if not np.isnan(at.ref.words.start[source]):
        return float(at.ref.words.start[source]), float(at.ref.words.end[source])
    h_start, h_end = _hyp_times(at)
    partner = int(at.ref_partner[i])
    if partner >= 0 and not np.isnan(h_start[partner]):
        return float(h_start[partner]), float(h_end[partner])
    return _omission_span(at, i, (at.ref.start, at.ref.span_start, at.ref.span_end), (h_start, h_end))


def seam_score(at: AlignedTokens, seams: list[tuple[float, float]], margin: float = 1.0) -> SeamScore:
    """Count omissions, duplications and split words within ``margin`` seconds of each seam interval."""
    if not seams:
        return SeamScore(seams=0, margin_s=margin)
    regions = np.array([(a - margin, b + margin) for a, b in seams], dtype=float)
    h_start, h_end = _hyp_times(at)
    ref = at.ref.start, at.ref.span_start, at.ref.span_end
    omissions: list[tuple[Instance, tuple[float, float]]] = []
    duplications: list[tuple[Instance, tuple[float, float]]] = []
    for i in np.flatnonzero(at.ref_op == DELETE).tolist():
        span = _omission_span(at, i, ref, (h_start, h_end))
        if span is not None and _meets(regions, *span):
            omissions.append((at.ref_instance("seam omission", i, i), span))
    splits: list[tuple[Instance, tuple[float, float]]] = []
    texts = at.hyp.texts
    for j in np.flatnonzero(at.hyp_op == INSERT).tolist():
        onset = float(h_start[j])
        if np.isnan(onset) or not _meets(regions, onset, onset):
            continue
        nearby = texts[max(0, j - DUPLICATE_REACH) : j] + texts[j + 1 : j + 1 + DUPLICATE_REACH]
        if split_piece(at, j):
            splits.append((at.hyp_instance("seam split word", j), (onset, onset)))
        elif texts[j] in nearby:
            duplications.append((at.hyp_instance("seam duplication", j), (onset, onset)))
    found = omissions + duplications + splits
    return SeamScore(
        seams=len(seams),
        margin_s=margin,
        omissions=len(omissions),
        duplications=len(duplications),
        split_words=len(splits),
        instances=tuple(i for i, _ in found),
        located=tuple(span for _, span in found),
    )


def split_piece(at: AlignedTokens, j: int) -> bool:
    """Whether inserted hypothesis token ``j`` is a piece of a word split across two windows (accents folded):
    a proper prefix of the next token or suffix of the previous one, or a piece that with that neighbour spells
    the reference word the neighbour is aligned to; never beside a copy of itself ("a a": a duplication)."""
    texts = at.hyp.texts
    piece = fold_accents(texts[j])
    neighbours = {k: fold_accents(texts[k]) for k in (j + 1, j - 1) if 0 <= k < len(texts)}
    if not piece or piece in neighbours.values():
        return False
    for k, whole in neighbours.items():
        partner = int(at.hyp_partner[k])
        spelled = fold_accents(at.ref.texts[partner]) if partner >= 0 else ""
        if k > j and (whole.startswith(piece) or (spelled.startswith(piece) and spelled.endswith(whole))):
            return True
        if k < j and (whole.endswith(piece) or (spelled.endswith(piece) and spelled.startswith(whole))):
            return True
    return False
