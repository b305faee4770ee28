"""Where windows go: a fixed grid (``plan_windows``), or each edge moved into a pause (``plan_pause_windows``).

Grid: windows at ``origin + k * (length - overlap)``, cutting wherever that falls; with
``origin > 0`` a first, shorter window covers the beginning.

Window placement in pauses: overlapping windows whose edges fall where the VAD heard no speech.

Whisper times a window's words worst where the window cuts into speech: a window that starts
mid-sentence decodes without sentence punctuation, so faster-whisper's clamp of long words at
sentence boundaries never fires and the first word after each pause swallows the pause (onsets
seconds early), and a window that ends mid-sentence squeezes its last words. So with
``placement = "vad_pauses"`` every window edge is moved into a pause found by Silero:

* A *pause* is a gap of at least ``min_pause_s`` between two speech regions of the VAD (or
  before the first / after the last). A window *start* goes preferably in the last
  ``edge_silence_s`` of a pause (little silence before the speech it opens, where Whisper
  would pull the first word early), a window *end* in its first ``edge_silence_s`` (little
  silence after the speech it closes); only where no such point is in range, anywhere in a pause.
* Windows are laid out one after another. The first starts at 0. A window starting at ``s``
  ends at the allowed point nearest ``s + length_s`` within ``[s + length_s - search_s,
  s + length_s]`` (so no window is longer than ``length_s``; with ``origin_s > 0`` the first
  window aims at ``origin_s + overlap_s``, as on the grid). The next window starts at the
  allowed point nearest ``end - overlap_s`` within ``end - overlap_s +- search_s``, never before
  the previous window's end (at most two windows cover any instant) and always after ``s``.
  The window that reaches the recording's end ends there.
* Fallback: where no pause lies in a boundary's range, the boundary stays at its target
  (``s + length_s`` or ``end - overlap_s``), inside speech, and the window says so
  (``start_at`` / ``end_at`` = ``"grid"``; ``"pause"`` and ``"recording edge"`` otherwise), with
  the reason (``start_reason`` / ``end_reason``): ``"only pauses shorter than min_pause_s"``
  when the VAD left a gap in the range that is too short, ``"no pause within reach"`` when it
  left none at all (speech throughout the ``search_s`` range).

Neighbours therefore still share an interval (at least ``overlap_s - search_s`` long), and the
seams are reconciled only inside it, exactly as on the grid.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from toolkit.audio.vad import SileroVadConfig
from toolkit.core.config import require_non_negative
from toolkit.core.errors import ToolkitError

PAUSE = "pause"
GRID = "grid"
EDGE = "recording edge"
NO_PAUSE = "no pause within reach"  # a grid edge: the VAD heard speech throughout its range
SHORT_PAUSE = "only pauses shorter than min_pause_s"  # a grid edge: gaps in range, none long enough
_MIN_STEP_S = 0.01  # a window starts at least this far after its left neighbour


@dataclass(frozen=True)
class PauseConfig:
    """How window edges move into VAD pauses (seconds); ``vad`` is the Silero pass that finds them."""

    search_s: float
    min_pause_s: float
    edge_silence_s: float
    vad: SileroVadConfig

    def __post_init__(self) -> None:
        require_non_negative(self, "search_s", "min_pause_s", "edge_silence_s")
        if self.edge_silence_s <= 0:
            raise ValueError(f"edge_silence_s must be positive, not {self.edge_silence_s!r}")


@dataclass(frozen=True)
class PlacedWindow:
    """One window's span and where each edge fell: ``pause``, ``grid`` (no pause in range, the reason
    beside it) or ``recording edge``."""

    start: float
    end: float
    start_at: str
    end_at: str
    start_reason: str = ""
    end_reason: str = ""

    def to_json(self) -> dict[str, str]:
        """Where each edge fell, and why an edge fell back to the grid (a reason only for a grid edge)."""
        reasons = (("start_reason", self.start_reason), ("end_reason", self.end_reason))
        return {"start_at": self.start_at, "end_at": self.end_at, **{key: why for key, why in reasons if why}}


@dataclass(frozen=True)
class _Zones:
    """Where an edge of one kind may go: the preferred part of each pause, any pause, and the gaps too
    short to be pauses (only to say why an edge fell back to the grid)."""

    preferred: list[tuple[float, float]]
    anywhere: list[tuple[float, float]]
    short: list[tuple[float, float]]


def check_pause_layout(length: float, overlap: float, search: float) -> None:
    """Refuse a search range the sequential layout cannot honour (ValueError naming the rule)."""
    if search >= overlap:
        raise ValueError(
            f"search_s ({search}) must be smaller than overlap_s ({overlap}), so neighbouring windows still overlap"
        )
    if length < 2 * overlap + search:
        raise ValueError(
            f"length_s ({length}) must be at least 2 * overlap_s + search_s "
            f"({2 * overlap + search}), so at most two windows cover any instant"
        )


def pauses(speech: Sequence[tuple[float, float]], duration: float, min_pause: float) -> list[tuple[float, float]]:
    """Gaps of at least ``min_pause`` seconds between speech regions within [0, duration]."""
    gaps, cursor = [], 0.0
    for start, end in sorted(speech):
        if start - cursor >= min_pause and start > cursor:
            gaps.append((cursor, min(start, duration)))
        cursor = max(cursor, end)
    if duration - cursor >= min_pause and duration > cursor:
        gaps.append((cursor, duration))
    return gaps


def plan_pause_windows(
    duration: float,
    length: float,
    overlap: float,
    origin: float,
    speech: Sequence[tuple[float, float]],
    config: PauseConfig,
) -> list[PlacedWindow]:
    """Windows covering [0, duration] with edges in pauses of ``speech`` (rules in the module docstring)."""
    if not (math.isfinite(duration) and duration > 0):
        raise ToolkitError(f"recording duration must be positive to lay out windows, not {duration!r}")
    try:
        check_pause_layout(length, overlap, config.search_s)
    except ValueError as error:
        raise ToolkitError(str(error)) from None
    if not 0 <= origin < length - overlap:
        raise ToolkitError(f"window origin {origin} s must lie in [0, {length - overlap})")
    gaps = pauses(speech, duration, config.min_pause_s)
    short = [(a, b) for a, b in pauses(speech, duration, 0.0) if b - a < config.min_pause_s]
    starts = _Zones([(max(a, b - config.edge_silence_s), b) for a, b in gaps], gaps, short)
    ends = _Zones([(a, min(b, a + config.edge_silence_s)) for a, b in gaps], gaps, short)
    windows: list[PlacedWindow] = []
    start, start_at, start_reason, previous_end = 0.0, EDGE, "", 0.0
    while True:
        aim = start + length if windows or origin == 0 else origin + overlap
        if aim >= duration:
            windows.append(PlacedWindow(start, float(duration), start_at, EDGE, start_reason))
            return windows
        end, end_at, end_reason = _nearest(ends, aim, max(start + _MIN_STEP_S, aim - config.search_s), aim)
        windows.append(PlacedWindow(start, end, start_at, end_at, start_reason, end_reason))
        aim = end - overlap
        low = max(aim - config.search_s, previous_end, start + _MIN_STEP_S)
        previous_end = end
        start, start_at, start_reason = _nearest(starts, aim, low, max(low, aim + config.search_s))


def _nearest(zones: _Zones, aim: float, low: float, high: float) -> tuple[float, str, str]:
    """The point within [low, high] nearest ``aim`` in a preferred zone, else in any pause (rounded to
    microseconds, ``PAUSE``); else ``aim`` clipped there, ``GRID``, with the reason no pause served."""
    for candidates in (zones.preferred, zones.anywhere):
        best: float | None = None
        for a, b in candidates:
            a, b = max(a, low), min(b, high)
            if a > b:
                continue
            point = min(max(aim, a), b)
            if best is None or abs(point - aim) < abs(best - aim):
                best = point
        if best is not None:
            return round(best, 6), PAUSE, ""
    reason = SHORT_PAUSE if any(a <= high and b >= low for a, b in zones.short) else NO_PAUSE
    return round(min(max(aim, low), high), 6), GRID, reason


def plan_windows(duration: float, length: float, overlap: float, origin: float = 0.0) -> list[tuple[float, float]]:
    """Window spans covering [0, duration] with a fixed length and overlap.

    The grid starts at ``origin + k * (length - overlap)``; with ``origin > 0`` a first,
    shorter window [0, origin + overlap] covers the beginning, so every pair of neighbours
    shares exactly ``overlap`` seconds (the last window is clipped to ``duration``). At most
    two windows cover any instant, so overlap may not exceed half the length.
    """
    if not (math.isfinite(duration) and duration > 0):
        raise ToolkitError(f"recording duration must be positive to lay out windows, not {duration!r}")
    if not (math.isfinite(length) and length > 0) or not (math.isfinite(overlap) and overlap >= 0):
        raise ToolkitError(f"window length ({length!r}) must be positive and overlap ({overlap!r}) not negative")
    if length <= overlap:
        raise ToolkitError(f"window length {length} s must be longer than its overlap {overlap} s")
    if 2 * overlap > length:
        raise ToolkitError(
            f"window overlap {overlap} s exceeds half the window length {length} s; "
            f"seams are reconciled between two windows only"
        )
    step = length - overlap
    if not 0 <= origin < step:
        raise ToolkitError(f"window origin {origin} s must lie in [0, {step}) (window length minus overlap)")
    spans = []
    # A first window shorter than a microsecond would be empty: such an origin is the grid at 0.
    origin = origin if origin + overlap > 1e-6 else 0.0
    k = -1 if origin > 0 else 0
    while True:
        start = round(float(max(0.0, origin + k * step)), 9)
        grid_end = round(float(origin + k * step + length), 9)
        # Judged on the rounded end: an end just short of the duration that rounds onto it would leave the next
        # window starting at the duration, empty.
        reaches_end = grid_end >= duration
        end = float(duration) if reaches_end else grid_end
        spans.append((start, end))
        if reaches_end:
            return spans
        k += 1
