"""Word alignment of a reference and a hypothesis token sequence, with an optional time constraint.

Costs are uniform: substitution = deletion = insertion = 1, a match costs 0, so the alignment
minimises S + D + I (the WER numerator). The unconstrained aligner is rapidfuzz's Levenshtein
(the same engine and tie-breaking jiwer >= 3 uses). Among alignments of equal cost, rapidfuzz
walks back from the ends of both sequences and, at each step, takes a deletion before a
substitution and a substitution before an insertion (``a b c`` vs ``d`` -> ``S D D``; ``d`` vs
``a b c`` -> ``I I S``); only the S/D/I split can depend on this, never the total.

Optionally deletable reference words (``optional``: sclite's "(word)" convention, ``sclite -D``)
may be left out at no cost: such a step is ``SKIP`` and counts as a hit, as sclite scores it; a
present optional word matches or is substituted like any other. ``toolkit.scorer.optional_align``
re-solves the unconstrained alignment exactly around each optional word; the time-constrained
aligner here takes them directly.

The time-constrained aligner (diagnosis only) forbids pairing a hypothesis word with a
reference word unless the hypothesis onset lies within ``collar`` seconds of the reference
word's span; untimed hypothesis words cannot be paired at all. It maximises ``2*hits + subs``
over non-crossing allowed pairs, which is the same as minimising S + D + I under that
constraint, and on ties prefers a pairing, then a deletion, then an insertion (walking back, so
in reading order the insertions of a gap come before its deletions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import chain
from typing import cast

import numpy as np
from rapidfuzz.distance import Levenshtein

EQUAL, SUBSTITUTE, DELETE, INSERT, SKIP = 0, 1, 2, 3, 4
OP_NAMES = ("equal", "substitute", "delete", "insert", "skip")
COSTS = {"substitution": 1, "deletion": 1, "insertion": 1, "match": 0}
_TAGS = {"equal": EQUAL, "replace": SUBSTITUTE, "delete": DELETE, "insert": INSERT}


@dataclass(frozen=True)
class AlignedPair:
    """One alignment step: ``op`` in OP_NAMES; the index on a side is None when that side is absent."""

    op: str
    ref_index: int | None
    hyp_index: int | None


@dataclass(frozen=True)
class Alignment:
    """An alignment as parallel arrays (one entry per step); index -1 means "no word on that side"."""

    ops: np.ndarray
    ref_index: np.ndarray
    hyp_index: np.ndarray
    ref_len: int
    hyp_len: int

    def pairs(self) -> list[AlignedPair]:
        """The steps as records, in order."""
        return [
            AlignedPair(OP_NAMES[o], None if r < 0 else int(r), None if h < 0 else int(h))
            for o, r, h in zip(self.ops.tolist(), self.ref_index.tolist(), self.hyp_index.tolist())
        ]

    def count(self, op: int) -> int:
        return int(np.count_nonzero(self.ops == op))

    def ref_view(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Per reference word: its op, its hypothesis partner (-1 if deleted), its step position."""
        mask = self.ref_index >= 0
        order = self.ref_index[mask]
        op = np.empty(self.ref_len, dtype=np.int8)
        partner = np.empty(self.ref_len, dtype=np.int64)
        step = np.empty(self.ref_len, dtype=np.int64)
        op[order] = self.ops[mask]
        partner[order] = self.hyp_index[mask]
        step[order] = np.flatnonzero(mask)
        return op, partner, step

    def hyp_view(self) -> tuple[np.ndarray, np.ndarray]:
        """Per hypothesis word: its op and its reference partner (-1 if inserted)."""
        mask = self.hyp_index >= 0
        order = self.hyp_index[mask]
        op = np.empty(self.hyp_len, dtype=np.int8)
        partner = np.empty(self.hyp_len, dtype=np.int64)
        op[order] = self.ops[mask]
        partner[order] = self.ref_index[mask]
        return op, partner

    def insertion_slots(self) -> np.ndarray:
        """For each insertion step (in order), how many reference words precede it."""
        consumed = np.cumsum(self.ref_index >= 0)
        return consumed[self.ops == INSERT]


def word_ids(ref: Sequence[str], hyp: Sequence[str]) -> tuple[list[int], list[int]]:
    """Words as small integers (equal words, equal ids): rapidfuzz compares those fastest."""
    vocab = {word: k for k, word in enumerate(dict.fromkeys(chain(ref, hyp)))}  # ids in order of first use
    return list(map(vocab.__getitem__, ref)), list(map(vocab.__getitem__, hyp))


def align(ref: Sequence[str], hyp: Sequence[str]) -> Alignment:
    """Minimum-edit alignment of two word sequences (S = D = I = 1) via rapidfuzz."""
    ref_ids, hyp_ids = word_ids(ref, hyp)
    # rapidfuzz's stubs say Opcode objects; as_list() returns (tag, src_start, src_end, dest_start, dest_end) tuples.
    blocks = cast(list[tuple[str, int, int, int, int]], Levenshtein.opcodes(ref_ids, hyp_ids).as_list())
    if not blocks:
        return _build([], [], [], len(ref), len(hyp))
    tags = np.array([_TAGS[b[0]] for b in blocks], dtype=np.int8)
    spans = np.array([b[1:] for b in blocks], dtype=np.int64)
    lengths = np.maximum(spans[:, 1] - spans[:, 0], spans[:, 3] - spans[:, 2])
    ops = np.repeat(tags, lengths)
    offsets = np.arange(len(ops)) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    ref_index = np.where(ops == INSERT, -1, np.repeat(spans[:, 0], lengths) + offsets)
    hyp_index = np.where(ops == DELETE, -1, np.repeat(spans[:, 2], lengths) + offsets)
    return Alignment(ops, ref_index, hyp_index, len(ref), len(hyp))


def _build(
    ops: list[np.ndarray], ris: list[np.ndarray], his: list[np.ndarray], ref_len: int, hyp_len: int
) -> Alignment:
    """Concatenate per-block step arrays into one alignment."""
    if not ops:
        empty = np.zeros(0, dtype=np.int64)
        return Alignment(np.zeros(0, dtype=np.int8), empty, empty, ref_len, hyp_len)
    return Alignment(
        np.concatenate(ops).astype(np.int8),
        np.concatenate(ris).astype(np.int64),
        np.concatenate(his).astype(np.int64),
        ref_len,
        hyp_len,
    )


def align_timed(
    ref: Sequence[str],
    hyp: Sequence[str],
    ref_start: np.ndarray,
    ref_end: np.ndarray,
    hyp_onset: np.ndarray,
    collar: float,
    optional: np.ndarray | None = None,
) -> Alignment:
    """Alignment where hyp word j may pair with ref word i only if its onset is in [start_i - collar, end_i + collar].

    ``ref_start``/``ref_end`` give each reference word's span (its own time, or its utterance's);
    NaN in ``hyp_onset`` marks an untimed hypothesis word, which can only be an insertion. An
    ``optional`` reference word left unpaired is a ``SKIP``: it costs nothing, so it weighs 1 when
    matched (a mandatory word 2) and is never worth pairing with another word.
    """
    n, m = len(ref), len(hyp)
    ref_ids, hyp_ids = word_ids(ref, hyp)
    r_ids = np.asarray(ref_ids, dtype=np.int64)
    h_ids = np.asarray(hyp_ids, dtype=np.int64)
    lo = np.asarray(ref_start, dtype=float) - collar
    hi = np.asarray(ref_end, dtype=float) + collar
    onset = np.asarray(hyp_onset, dtype=float)
    jmin, jmax = _allowed_ranges(lo, hi, onset)
    skippable = np.zeros(n, dtype=bool) if optional is None else np.asarray(optional, dtype=bool)
    ops: list[np.ndarray] = []
    ris: list[np.ndarray] = []
    his: list[np.ndarray] = []
    for r0, r1, h0, h1 in _blocks(jmin, jmax, n, m):
        _align_block(r_ids, h_ids, lo, hi, onset, skippable, r0, r1, h0, h1, ops, ris, his)
    alignment = _build(ops, ris, his, n, m)
    if skippable.any():
        ref_index = np.maximum(alignment.ref_index, 0)
        alignment.ops[(alignment.ops == DELETE) & skippable[ref_index]] = SKIP
    return alignment


def _allowed_ranges(lo: np.ndarray, hi: np.ndarray, onset: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest hypothesis position each reference word may pair with (m / -1 if none)."""
    m = len(onset)
    timed = np.flatnonzero(~np.isnan(onset))
    order = timed[np.argsort(onset[timed], kind="stable")]
    times = onset[order]
    a = np.searchsorted(times, lo, side="left")
    b = np.searchsorted(times, hi, side="right")
    jmin = np.full(len(lo), m, dtype=np.int64)
    jmax = np.full(len(lo), -1, dtype=np.int64)
    has = np.flatnonzero(b > a)
    if len(has):
        jmin[has] = _range_reduce(order, a[has], b[has], np.minimum)
        jmax[has] = _range_reduce(order, a[has], b[has], np.maximum)
    return jmin, jmax


def _range_reduce(values: np.ndarray, a: np.ndarray, b: np.ndarray, op: np.ufunc) -> np.ndarray:
    """``op`` over each non-empty window ``values[a:b]``, vectorized with a sparse table."""
    levels = [values]
    width = 1
    while 2 * width <= int((b - a).max()):
        prev = levels[-1]
        levels.append(op(prev[:-width], prev[width:]))
        width *= 2
    k = np.floor(np.log2(b - a)).astype(np.int64)
    out = np.empty(len(a), dtype=values.dtype)
    for level in np.unique(k).tolist():
        sel = k == level
        table = levels[level]
        out[sel] = op(table[a[sel]], table[b[sel] - (1 << level)])
    return out


def _blocks(jmin: np.ndarray, jmax: np.ndarray, n: int, m: int) -> list[tuple[int, int, int, int]]:
    """Cut the grid where no allowed pair straddles the cut, so blocks align independently."""
    prefix_max = np.maximum.accumulate(jmax) if n else jmax
    suffix_min = np.minimum.accumulate(jmin[::-1])[::-1] if n else jmin
    blocks = []
    r0, h0 = 0, 0
    for i in np.flatnonzero(prefix_max[:-1] < suffix_min[1:]).tolist():
        cut = int(max(prefix_max[i] + 1, h0))
        blocks.append((r0, i + 1, h0, cut))
        r0, h0 = i + 1, cut
    blocks.append((r0, n, h0, m))
    return blocks


def _align_block(
    r_ids: np.ndarray,
    h_ids: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    onset: np.ndarray,
    skippable: np.ndarray,
    r0: int,
    r1: int,
    h0: int,
    h1: int,
    ops: list[np.ndarray],
    ris: list[np.ndarray],
    his: list[np.ndarray],
) -> None:
    """Dense chain DP on one block: F[i][j] = best 2*hits + subs using ref[:i], hyp[:j] (an optional
    reference word: 1 per hit, 0 per substitution)."""
    nb, mb = r1 - r0, h1 - h0
    times = onset[h0:h1]
    with np.errstate(invalid="ignore"):
        allowed = (times[None, :] >= lo[r0:r1, None]) & (times[None, :] <= hi[r0:r1, None])
    weight = allowed * (1 + (h_ids[None, h0:h1] == r_ids[r0:r1, None]))
    weight = np.where(skippable[r0:r1, None], weight - allowed, weight)
    table = np.zeros((nb + 1, mb + 1), dtype=np.int64)
    for k in range(nb):
        row = table[k].copy()
        np.maximum(row[1:], table[k, :-1] + weight[k], out=row[1:])
        np.maximum.accumulate(row, out=table[k + 1])
    f = table.tolist()
    w = weight.tolist()
    steps: list[tuple[int, int, int]] = []
    i, j = nb, mb
    while i > 0 or j > 0:
        if i > 0 and j > 0 and w[i - 1][j - 1] and f[i][j] == f[i - 1][j - 1] + w[i - 1][j - 1]:
            steps.append((EQUAL if w[i - 1][j - 1] == 2 else SUBSTITUTE, r0 + i - 1, h0 + j - 1))
            i, j = i - 1, j - 1
        elif i > 0 and f[i][j] == f[i - 1][j]:
            steps.append((DELETE, r0 + i - 1, -1))
            i -= 1
        else:
            steps.append((INSERT, -1, h0 + j - 1))
            j -= 1
    if steps:
        arr = np.asarray(steps[::-1], dtype=np.int64)
        ops.append(arr[:, 0].astype(np.int8))
        ris.append(arr[:, 1])
        his.append(arr[:, 2])
