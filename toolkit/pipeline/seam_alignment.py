"""The small pieces of one seam's decision: the time-and-text alignment of the two windows' words near the
seam, runs of consecutive pairs, the longest common pause, and how much of a word another covers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from toolkit.core.transcripts import Word
from toolkit.pipeline.seam_records import _AGREE, _TIMING, LEFT, SeamConfig, WindowResult


@dataclass(frozen=True)
class _Entry:
    """A timed word near the seam: its position in its window, clamped span, and whether it is fixed."""

    pos: int
    word: Word
    start: float
    end: float
    fixed: bool
    key: str

    @property
    def mid(self) -> float:
        return (self.start + self.end) / 2

    def inset(self, side: str, window: WindowResult) -> float:
        """How far inside its window from the seam-side edge: end-to-end on the left, start-to-start on the right."""
        return window.end - self.end if side == LEFT else self.start - window.start


def _align(
    lz: list[_Entry], rz: list[_Entry], config: SeamConfig, reach: Callable[[_Entry, _Entry], float]
) -> list[tuple[int, int, str]]:
    """Monotonic pairing maximising (agreeing pairs, timing pairs, -total onset shift)."""
    n, m = len(lz), len(rz)
    kinds: list[list[tuple[str, float] | None]] = [[None] * m for _ in range(n)]
    for i, left in enumerate(lz):
        for j, right in enumerate(rz):
            shift = abs(left.word.span[0] - right.word.span[0])
            if left.key == right.key and shift <= reach(left, right):
                kinds[i][j] = (_AGREE if shift <= config.onset_tolerance else _TIMING, shift)
    zero = (0, 0, 0.0)
    score = [[zero] * (m + 1) for _ in range(n + 1)]

    def diagonal(i: int, j: int) -> tuple[int, int, float] | None:
        pair = kinds[i - 1][j - 1]
        if pair is None:
            return None
        s = score[i - 1][j - 1]
        return s[0] + (pair[0] == _AGREE), s[1] + (pair[0] == _TIMING), s[2] - pair[1]

    for i in range(1, n + 1):
        for j in range(1, m + 1):
            options = [score[i - 1][j], score[i][j - 1]]
            diag = diagonal(i, j)
            if diag is not None:
                options.append(diag)
            score[i][j] = max(options)
    pairs = []
    i, j = n, m
    while i > 0 and j > 0:
        diag = diagonal(i, j)
        if diag is not None and score[i][j] == diag:
            pairs.append((i - 1, j - 1, kinds[i - 1][j - 1][0]))  # type: ignore[index]
            i, j = i - 1, j - 1
        elif score[i][j] == score[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return pairs[::-1]


def _runs(pairs: list[tuple[int, int, str]]) -> list[list[tuple[int, int, str]]]:
    """Split pairs into runs of consecutive pairs (next word on both sides)."""
    runs: list[list[tuple[int, int, str]]] = []
    for pair in pairs:
        if runs and runs[-1][-1][0] + 1 == pair[0] and runs[-1][-1][1] + 1 == pair[1]:
            runs[-1].append(pair)
        else:
            runs.append([pair])
    return runs


def _pause(entries: list[_Entry], a: float, b: float) -> float:
    """Middle of the longest stretch of [a, b] no word of either side covers (ties: nearest the middle)."""
    middle = (a + b) / 2
    gaps = []
    cursor = a
    for start, end in sorted((max(a, e.start), min(b, e.end)) for e in entries if e.end > a and e.start < b):
        if start > cursor:
            gaps.append((cursor, start))
        cursor = max(cursor, end)
    if cursor < b:
        gaps.append((cursor, b))
    if not gaps:
        return middle
    lo, hi = max(gaps, key=lambda g: (g[1] - g[0], -abs((g[0] + g[1]) / 2 - middle)))
    return (lo + hi) / 2


def _covered(word: Word, anchor: Word) -> float:
    """Fraction of ``word``'s duration that ``anchor`` overlaps (1.0 for a zero-length word inside it)."""
    (start, end), (anchor_start, anchor_end) = word.span, anchor.span
    overlap = min(end, anchor_end) - max(start, anchor_start)
    duration = end - start
    if duration <= 0:
        return 1.0 if anchor_start <= start <= anchor_end else 0.0
    return max(0.0, overlap) / duration
