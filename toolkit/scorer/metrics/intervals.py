"""Interval arithmetic on ``(start, end)`` spans in seconds, vectorized with numpy."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np


def merge(spans: Iterable[tuple[float, float]]) -> np.ndarray:
    """Union of spans as a sorted ``(k, 2)`` array of disjoint intervals (empty spans dropped)."""
    arr = np.asarray([s for s in spans if s[1] > s[0]], dtype=float).reshape(-1, 2)
    if not len(arr):
        return arr
    arr = arr[np.argsort(arr[:, 0], kind="stable")]
    ends = np.maximum.accumulate(arr[:, 1])
    new = np.ones(len(arr), dtype=bool)
    new[1:] = arr[1:, 0] > ends[:-1]
    starts = arr[new, 0]
    group_end = np.maximum.reduceat(arr[:, 1], np.flatnonzero(new))
    return np.column_stack([starts, group_end])


def total(merged: np.ndarray) -> float:
    return float((merged[:, 1] - merged[:, 0]).sum()) if len(merged) else 0.0


def intersect(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Intersection of two merged interval sets (sorted and disjoint, as :func:`merge` makes them). Each interval
    of ``a`` meets only the run of ``b``'s that may overlap it, found by binary search: a long recording's
    thousands of speech and VAD intervals need no table of every pair (quadratic in time and memory)."""
    if not len(a) or not len(b):
        return np.zeros((0, 2))
    first = np.searchsorted(b[:, 1], a[:, 0], side="right")  # b's first interval ending after a's starts
    stop = np.searchsorted(b[:, 0], a[:, 1], side="left")  # past b's last interval starting before a's ends
    counts = np.maximum(stop - first, 0)
    rows = np.repeat(np.arange(len(a)), counts)
    cols = np.repeat(first - np.cumsum(counts) + counts, counts) + np.arange(len(rows))
    lo = np.maximum(a[rows, 0], b[cols, 0])
    hi = np.minimum(a[rows, 1], b[cols, 1])
    keep = hi > lo
    return merge(zip(lo[keep].tolist(), hi[keep].tolist()))


def subtract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a`` minus ``b`` for merged interval sets."""
    if not len(a) or not len(b):
        return a
    points = [(float(s), float(e)) for s, e in a]
    for bs, be in b.tolist():
        points = [piece for s, e in points for piece in ((s, min(e, bs)), (max(s, be), e)) if piece[1] > piece[0]]
    return merge(points)


def contains(merged: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Whether each time lies inside (closed) one of the merged intervals; NaN is never inside."""
    if not len(merged):
        return np.zeros(len(times), dtype=bool)
    k = np.searchsorted(merged[:, 0], times, side="right") - 1
    inside = k >= 0
    kk = np.clip(k, 0, None)
    with np.errstate(invalid="ignore"):
        return inside & (times <= merged[kk, 1]) & ~np.isnan(times)


def covered(merged: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Whether each span ``[start, end]`` lies entirely inside one merged interval."""
    if not len(merged):
        return np.zeros(len(start), dtype=bool)
    k = np.searchsorted(merged[:, 0], start, side="right") - 1
    kk = np.clip(k, 0, None)
    return (k >= 0) & (end <= merged[kk, 1])


def overlap(merged: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Duration of each span ``[start, end]`` covered by the merged intervals."""
    if not len(merged):
        return np.zeros(len(start))
    lengths = merged[:, 1] - merged[:, 0]
    before = np.concatenate([[0.0], np.cumsum(lengths)])

    def measure(t: np.ndarray) -> np.ndarray:
        """Covered duration in (-inf, t]."""
        k = np.searchsorted(merged[:, 0], t, side="right")
        last = np.clip(k - 1, 0, None)
        partial = np.clip(np.minimum(t, merged[last, 1]) - merged[last, 0], 0, None)
        return before[np.clip(k - 1, 0, None)] + np.where(k > 0, partial, 0.0)

    return np.clip(measure(np.asarray(end, dtype=float)) - measure(np.asarray(start, dtype=float)), 0, None)
