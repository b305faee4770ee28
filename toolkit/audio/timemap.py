"""Explicit, composable, invertible maps from a derived signal's time to its origin's time.

Every transform (cut, concatenation, padding, resampling, enhancement delay, window origin)
returns a :class:`TimeMap` from its output's seconds to its input's seconds. Composing the
maps of a chain gives output-to-original time, so every word can be reported in the
original recording's timeline. A time that falls outside every piece maps to ``None``:
it is never interpolated silently.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

_EPS = 1e-9
Lean = Literal["earlier", "later"] | None  # where an interval across the join of two runs goes (TimeMap.span)


@dataclass(frozen=True)
class Piece:
    """Derived times ``[start, end)`` map linearly to ``origin + (t - start) * rate``."""

    start: float
    end: float
    origin: float
    rate: float = 1.0

    @property
    def origin_end(self) -> float:
        return self.origin + (self.end - self.start) * self.rate

    def at(self, t: float) -> float:
        return self.origin + (t - self.start) * self.rate


class TimeMap:
    """A monotonic piecewise-linear map from derived time to origin time."""

    def __init__(self, pieces: Iterable[Piece]) -> None:
        ordered = tuple(p for p in sorted(pieces, key=lambda p: p.start) if p.end - p.start > _EPS)
        for piece in ordered:
            if piece.rate <= 0:
                raise ValueError(f"time map piece {piece} must have a positive rate")
        for before, after in zip(ordered, ordered[1:]):
            if after.start < before.end - _EPS:
                raise ValueError(f"time map pieces overlap: {before} and {after}")
            if after.origin < before.origin_end - _EPS:
                raise ValueError(f"time map is not monotonic: {before} then {after}")
        self.pieces: tuple[Piece, ...] = ordered
        self._starts = [p.start for p in ordered]

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def identity(cls, duration: float) -> TimeMap:
        return cls([Piece(0.0, duration, 0.0)])

    @classmethod
    def shift(cls, offset: float, duration: float) -> TimeMap:
        """A derived signal of ``duration`` whose time 0 is origin time ``offset``."""
        return cls([Piece(0.0, duration, offset)])

    @classmethod
    def cut(cls, regions: Sequence[tuple[float, float]]) -> TimeMap:
        """Origin regions concatenated back to back, in order."""
        pieces, cursor = [], 0.0
        for start, end in regions:
            if end < start:
                raise ValueError(f"cut region ({start}, {end}) ends before it starts")
            pieces.append(Piece(cursor, cursor + (end - start), start))
            cursor += end - start
        return cls(pieces)

    @classmethod
    def pad(cls, lead: float, duration: float) -> TimeMap:
        """``lead`` seconds of padding before an origin of ``duration``; padding maps to nothing."""
        return cls([Piece(lead, lead + duration, 0.0)])

    @classmethod
    def delay(cls, delay: float, duration: float) -> TimeMap:
        """The derived signal is the origin delayed by ``delay`` seconds (e.g. an enhancer's latency)."""
        return cls([Piece(max(0.0, delay), duration, max(0.0, -delay))])

    # --- use ------------------------------------------------------------------------------
    @property
    def duration(self) -> float:
        return self.pieces[-1].end if self.pieces else 0.0

    @property
    def origin_span(self) -> tuple[float, float] | None:
        """The stretch of origin time this map covers (first piece's start to last piece's end)."""
        return (self.pieces[0].origin, self.pieces[-1].origin_end) if self.pieces else None

    def __call__(self, t: float | None, tolerance: float = 0.0) -> float | None:
        """Origin time of derived time ``t``; ``None`` if ``t`` is in no piece (beyond ``tolerance``)."""
        if t is None or not self.pieces:
            return None
        index = bisect.bisect_right(self._starts, t + _EPS) - 1
        if index >= 0 and t <= self.pieces[index].end + _EPS:
            return self.pieces[index].at(t)
        return self._clamp(t, tolerance)

    def span(self, start: float, end: float, lean: Lean = None) -> tuple[float, float] | None:
        """Origin times of the derived interval ``[start, end]``, both within one run of pieces (pieces that follow
        one another in both times), clamped into it; ``None`` for an empty map. The run is the one nearest the
        interval's midpoint, except that an interval across the join of two runs goes to the run after the join
        when ``lean`` is ``"later"`` and to the one before when it is ``"earlier"``.

        For audio put together from pieces (a joined VAD stream): a recognizer times a word across the join
        of two pieces, or a little early into the piece before, by its own timing error; mapped one time at a
        time such a word would stretch over the audio dropped between them, or start seconds early.
        faster-whisper maps its VAD chunks' words by their midpoint likewise; ``lean`` is for what the caller
        knows better (a recognizer's segment-initial word that starts early across the join belongs after it).
        """
        if not self.pieces:
            return None
        middle = (start + end) / 2
        index = max(bisect.bisect_right(self._run_starts, middle) - 1, 0)
        run = min(self._runs[index : index + 2], key=lambda r: max(r[0].start - middle, middle - r[-1].end, 0.0))
        first = max(bisect.bisect_right(self._run_starts, start) - 1, 0)  # a start on a join is after it,
        last = max(bisect.bisect_left(self._run_starts, end) - 1, 0)  # an end on a join before it
        if lean is not None and first < last:
            run = self._runs[last] if lean == "later" else self._runs[first]

        def inside(t: float) -> float:
            t = min(max(t, run[0].start), run[-1].end)
            return next(p for p in run if t <= p.end + _EPS).at(t)

        return inside(start), inside(end)

    @cached_property
    def _runs(self) -> list[tuple[Piece, ...]]:
        """The pieces in maximal runs that follow one another in derived and in origin time."""
        runs: list[tuple[Piece, ...]] = []
        for piece in self.pieces:
            last = runs[-1][-1] if runs else None
            if last is not None and piece.start - last.end <= _EPS and piece.origin - last.origin_end <= _EPS:
                runs[-1] = (*runs[-1], piece)
            else:
                runs.append((piece,))
        return runs

    @cached_property
    def _run_starts(self) -> list[float]:
        return [run[0].start for run in self._runs]

    def _clamp(self, t: float, tolerance: float) -> float | None:
        """Snap a time just outside a piece to that piece's edge, if within ``tolerance``."""
        best: tuple[float, float] | None = None
        for piece in self.pieces:
            for edge in (piece.start, piece.end):
                gap = abs(t - edge)
                if gap <= tolerance + _EPS and (best is None or gap < best[0]):
                    best = (gap, piece.at(edge))
        return None if best is None else best[1]

    def then(self, outer: TimeMap) -> TimeMap:
        """Compose: first this map (C -> B), then ``outer`` (B -> A), giving C -> A."""
        pieces = []
        for mine in self.pieces:
            lo, hi = mine.origin, mine.origin_end
            for theirs in outer.pieces:
                x0, x1 = max(lo, theirs.start), min(hi, theirs.end)
                if x1 - x0 <= _EPS:
                    continue
                pieces.append(
                    Piece(
                        start=mine.start + (x0 - mine.origin) / mine.rate,
                        end=mine.start + (x1 - mine.origin) / mine.rate,
                        origin=theirs.at(x0),
                        rate=mine.rate * theirs.rate,
                    )
                )
        return TimeMap(pieces)

    def inverse(self) -> TimeMap:
        """The map from origin time back to derived time."""
        return TimeMap(Piece(p.origin, p.origin_end, p.start, 1.0 / p.rate) for p in self.pieces)

    # --- records --------------------------------------------------------------------------
    def to_json(self) -> list[dict[str, float]]:
        return [{"start": p.start, "end": p.end, "origin": p.origin, "rate": p.rate} for p in self.pieces]

    @classmethod
    def from_json(cls, data: list[dict[str, Any]]) -> TimeMap:
        return cls(Piece(**piece) for piece in data)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TimeMap) and self.pieces == other.pieces

    def __repr__(self) -> str:
        return f"TimeMap({list(self.pieces)!r})"
