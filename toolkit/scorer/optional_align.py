"""Alignment with optionally deletable reference words (sclite's "(word)", scored as ``sclite -D`` does).

An optional reference word may be left out at no cost (a ``SKIP`` step, counted as a hit); present,
it matches or is substituted like any word. Costs are otherwise those of ``toolkit.scorer.align``
(S = D = I = 1), so the total minimised is S + D + I over the mandatory words.

Long recordings: the unconstrained alignment (rapidfuzz) is kept everywhere except in a window of
``MARGIN`` reference words on each side of every optional word, which is re-aligned exactly
(dynamic programming between the two fixed corners of the window): the result is optimal among
the alignments that agree with rapidfuzz's outside those windows, and never worse than it. A pair
small enough (``FULL_CELLS``) is aligned exactly as a whole.

Ties: a word present in the hypothesis is paired with an optional word when that costs no more
than leaving it out ("a (b) c" vs "a x c" is one substitution, as sclite reports it); elsewhere the
order of rapidfuzz's backtrace is kept (deletion, then substitution, then insertion).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolkit.scorer.align import DELETE, EQUAL, INSERT, SKIP, SUBSTITUTE, Alignment, align, word_ids

MARGIN = 24
FULL_CELLS = 400_000


def align_reference(ref: Sequence[str], hyp: Sequence[str], optional: np.ndarray) -> Alignment:
    """The alignment the scorer uses: rapidfuzz's, re-solved around the ``optional`` reference words."""
    base = align(ref, hyp)
    if not optional.any():
        return base
    ref_ids, hyp_ids = word_ids(ref, hyp)
    return with_optional_words(base, np.asarray(ref_ids), np.asarray(hyp_ids), optional)


def with_optional_words(base: Alignment, ref: np.ndarray, hyp: np.ndarray, optional: np.ndarray) -> Alignment:
    """``base`` (an unconstrained alignment of the integer-coded ``ref`` and ``hyp``) re-solved around
    the ``optional`` reference words."""
    n, m = len(ref), len(hyp)
    if (n + 1) * (m + 1) <= FULL_CELLS:
        ops, ris, his = exact(ref, hyp, optional)
        return Alignment(ops, ris, his, n, m)
    _, _, step = base.ref_view()
    windows = _windows(np.flatnonzero(optional), n)
    pieces: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    done = 0  # base steps already copied
    for first, last in windows:
        s0, s1 = int(step[first]), int(step[last])
        s0 = max(s0, done)
        pieces.append((base.ops[done:s0], base.ref_index[done:s0], base.hyp_index[done:s0]))
        r_lo, r_hi, h_lo, h_hi = _span(base, s0, s1)
        ops, ris, his = exact(ref[r_lo:r_hi], hyp[h_lo:h_hi], optional[r_lo:r_hi])
        pieces.append((ops, np.where(ris >= 0, ris + r_lo, -1), np.where(his >= 0, his + h_lo, -1)))
        done = s1 + 1
    pieces.append((base.ops[done:], base.ref_index[done:], base.hyp_index[done:]))
    return Alignment(
        np.concatenate([p[0] for p in pieces]).astype(np.int8),
        np.concatenate([p[1] for p in pieces]).astype(np.int64),
        np.concatenate([p[2] for p in pieces]).astype(np.int64),
        n,
        m,
    )


def _windows(positions: np.ndarray, n: int) -> list[tuple[int, int]]:
    """Reference spans ``[first, last]`` of ``MARGIN`` words around each optional word, overlaps merged."""
    windows: list[tuple[int, int]] = []
    for position in positions.tolist():
        first, last = max(0, position - MARGIN), min(n - 1, position + MARGIN)
        if windows and first <= windows[-1][1] + 1:
            windows[-1] = (windows[-1][0], max(windows[-1][1], last))
        else:
            windows.append((first, last))
    return windows


def _span(base: Alignment, s0: int, s1: int) -> tuple[int, int, int, int]:
    """The reference and hypothesis ranges ``[lo, hi)`` the base steps ``s0..s1`` consume."""
    refs = base.ref_index[s0 : s1 + 1]
    hyps = base.hyp_index[s0 : s1 + 1]
    refs, hyps = refs[refs >= 0], hyps[hyps >= 0]
    r_lo = int(refs[0]) if len(refs) else 0
    h_before = base.hyp_index[:s0]
    h_lo = int(hyps[0]) if len(hyps) else int(h_before[h_before >= 0].max(initial=-1)) + 1
    return r_lo, r_lo + len(refs), h_lo, h_lo + len(hyps)


def exact(ref: np.ndarray, hyp: np.ndarray, optional: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The exact minimum of S + D + I (optional words free to leave out): ops, ref and hyp index per step."""
    n, m = len(ref), len(hyp)
    deletion = np.where(optional, 0, 1).astype(np.int32)
    cost = np.empty((n + 1, m + 1), dtype=np.int32)
    cost[0] = np.arange(m + 1)
    offsets = np.arange(m + 1, dtype=np.int32)
    for i in range(1, n + 1):
        row = cost[i - 1] + deletion[i - 1]
        np.minimum(row[1:], cost[i - 1, :-1] + (hyp != ref[i - 1]), out=row[1:])
        cost[i] = np.minimum.accumulate(row - offsets) + offsets  # then insertions, left to right
    steps: list[tuple[int, int, int]] = []
    i, j = n, m
    while i > 0 or j > 0:
        same = i > 0 and j > 0 and ref[i - 1] == hyp[j - 1]
        diagonal = i > 0 and j > 0 and cost[i, j] == cost[i - 1, j - 1] + (0 if same else 1)
        up = i > 0 and cost[i, j] == cost[i - 1, j] + deletion[i - 1]
        if diagonal and (same or optional[i - 1] or not up):
            steps.append((EQUAL if same else SUBSTITUTE, i - 1, j - 1))
            i, j = i - 1, j - 1
        elif up:
            steps.append((SKIP if optional[i - 1] else DELETE, i - 1, -1))
            i -= 1
        else:
            steps.append((INSERT, -1, j - 1))
            j -= 1
    arr = np.asarray(steps[::-1], dtype=np.int64).reshape(-1, 3)
    return arr[:, 0].astype(np.int8), arr[:, 1], arr[:, 2]
