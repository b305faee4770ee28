"""What seam reconciliation takes and reports: its configuration, a decoded window, and per seam the words
kept, dropped (with their reason), retimed and flagged (toolkit/pipeline/seams.py decides them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, NamedTuple

from toolkit.core.config import require_non_negative
from toolkit.core.transcripts import Word

LEFT = "left"
RIGHT = "right"
# Flag kinds a listener is asked to review; the others are notes, kept in every seam report but
# not counted as flagged: on the long shared-clip recording (benchmarks/bench_seams.py, docs/benchmarks.md)
# fewer than half of the seams they marked had a real omission, duplication or word off in time.
REVIEW_FLAGS = frozenset({"disagreement", "no_agreement", "empty_side", "untimed"})
NOTE_FLAGS = frozenset({"timing", "edge_word", "different_reading"})
_AGREE = "agree"
_TIMING = "timing"


@dataclass(frozen=True)
class SeamConfig:
    """Every seam-reconciliation parameter (seconds unless stated); ValueError on a bad value."""

    onset_tolerance: float = 0.25
    max_onset_shift: float = 1.0
    context: float = 0.5
    fragment_overlap: float = 0.5
    edge_zone: float = 2.5
    interior_times: bool = True

    def __post_init__(self) -> None:
        require_non_negative(self, "onset_tolerance", "max_onset_shift", "context", "fragment_overlap", "edge_zone")
        if self.max_onset_shift < self.onset_tolerance:
            raise ValueError(
                f"max_onset_shift ({self.max_onset_shift}) must be >= onset_tolerance ({self.onset_tolerance})"
            )
        if not 0 < self.fragment_overlap <= 1:
            raise ValueError(f"fragment_overlap is a fraction in (0, 1], not {self.fragment_overlap!r}")


@dataclass(frozen=True)
class WindowResult:
    """One decoded window: its span and its words, all in original recording time."""

    window_id: str
    start: float
    end: float
    words: Sequence[Word]


@dataclass(frozen=True)
class DroppedWord:
    """A word a seam removed, and why.

    ``reason``: duplicate (paired with the copy kept from the other window); edge_fragment
    (most of its time is covered by a word the other window heard whole across the edge);
    overlapped (covered by another kept word of the other window: a different reading);
    before_cut / after_cut (nothing from the other window at that time: flagged, a possible
    omission).
    """

    side: str
    word: Word
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, "reason": self.reason, **asdict(self.word)}


@dataclass(frozen=True)
class SeamFlag:
    """Something a listener may check: ``REVIEW_FLAGS`` ask for review, ``NOTE_FLAGS`` are notes."""

    kind: str
    detail: str
    left: tuple[Word, ...] = ()
    right: tuple[Word, ...] = ()

    @property
    def priority(self) -> str:
        return "note" if self.kind in NOTE_FLAGS else "review"

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "detail": self.detail,
            "priority": self.priority,
            "left": [asdict(w) for w in self.left],
            "right": [asdict(w) for w in self.right],
        }


@dataclass(frozen=True)
class RetimedWord:
    """A kept word whose times were taken from the other window's copy (farther from its edge)."""

    side: str
    word: Word
    start: float
    end: float

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, **asdict(self.word), "new_start": self.start, "new_end": self.end}


@dataclass(frozen=True)
class StraddlingWord:
    """The copy kept at the cut when its onset lies outside the shared interval (a word that crosses the
    interval's edge, or a copy timed beyond it): it is kept whole from ``side``, and the cut is recorded at
    the edge it crosses, since nothing outside the interval is reconciled."""

    side: str
    word: Word

    def to_json(self) -> dict[str, Any]:
        return {"side": self.side, **asdict(self.word)}


@dataclass
class SeamReport:
    """What one seam decided: the words of [start, end] kept from each side, dropped, and flagged.

    ``cut_time`` always lies in [start, end]: the onset of the copy kept at the cut, or the edge it crosses
    (``straddling`` then names that copy, unless a later rule dropped it: ``dropped`` says so), or a pause or
    edge when no pair was cut at.
    """

    index: int
    left_window: str
    right_window: str
    start: float
    end: float
    cut_time: float
    kept_left: list[Word] = field(default_factory=list)
    kept_right: list[Word] = field(default_factory=list)
    dropped: list[DroppedWord] = field(default_factory=list)
    flags: list[SeamFlag] = field(default_factory=list)
    empty_side: str | None = None
    retimed: list[RetimedWord] = field(default_factory=list)
    straddling: StraddlingWord | None = None

    @property
    def ambiguous(self) -> bool:
        """Whether a listener should review this seam: a flag of review priority (notes do not count)."""
        return any(f.priority == "review" for f in self.flags)

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "left_window": self.left_window,
            "right_window": self.right_window,
            "start": self.start,
            "end": self.end,
            "cut_time": self.cut_time,
            "straddling": None if self.straddling is None else self.straddling.to_json(),
            "empty_side": self.empty_side,
            "kept_left": [asdict(w) for w in self.kept_left],
            "kept_right": [asdict(w) for w in self.kept_right],
            "dropped": [d.to_json() for d in self.dropped],
            "flags": [f.to_json() for f in self.flags],
            "review": self.ambiguous,
            "retimed": [r.to_json() for r in self.retimed],
        }


class Reconciled(NamedTuple):
    """The merged words of all windows, in order, and one report per seam."""

    words: list[Word]
    seams: list[SeamReport]
