"""A reference/hypothesis token pair with their alignment, and the look-ups audits need.

Instances quote what was written (source words), not normalized tokens, and carry a time in
the original recording: the reference word's own time, else its utterance's start (None when
neither is known); for a hypothesis word, its own time, else that of the reference word it sits
next to in the alignment.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, TypeVar

import numpy as np

from toolkit.scorer.align import INSERT, Alignment
from toolkit.scorer.metrics.tokens import TokenTable

T = TypeVar("T")


def _time(value: float) -> float | None:
    return None if np.isnan(value) else round(float(value), 3)


def _times(values: np.ndarray) -> list[float | None]:
    """``_time`` of each value of a column, read as Python floats at once."""
    return [None if value != value else round(value, 3) for value in values.tolist()]


@dataclass(frozen=True)
class Instance:
    """One audited event for the review queue: what the reference and the hypothesis say, and when."""

    kind: str
    time: float | None
    end: float | None
    reference: str
    hypothesis: str

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "time": self.time,
            "end": self.end,
            "reference": self.reference,
            "hypothesis": self.hypothesis,
        }


class AlignedTokens:
    """Reference and hypothesis tokens plus an alignment, with per-token views computed once."""

    def __init__(self, ref: TokenTable, hyp: TokenTable, alignment: Alignment) -> None:
        self.ref = ref
        self.hyp = hyp
        self.alignment = alignment
        self.ref_op, self.ref_partner, self.ref_step = alignment.ref_view()
        self.hyp_op, self.hyp_partner = alignment.hyp_view()
        self._memo: dict[Hashable, Any] = {}

    def memo(self, key: Hashable, compute: Callable[[], T]) -> T:
        """``compute()``, once per ``key`` for this alignment: what several audits ask of the same tokens."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    @cached_property
    def _insertion_slots(self) -> np.ndarray:
        return self.alignment.insertion_slots()

    @cached_property
    def hyp_slot(self) -> np.ndarray:
        """For each hypothesis token, how many reference tokens precede it in the alignment."""
        slot = np.full(len(self.hyp), -1, dtype=np.int64)
        slot[self.alignment.hyp_index[self.alignment.ops == INSERT]] = self._insertion_slots
        paired = self.hyp_partner >= 0
        slot[paired] = self.hyp_partner[paired]
        return slot

    def insertions_inside(self, first: int, last: int) -> bool:
        """Whether an inserted hypothesis token sits between reference tokens ``first`` and ``last``."""
        slots = self._insertion_slots
        return bool(np.searchsorted(slots, last, side="right") > np.searchsorted(slots, first, side="right"))

    def hyp_tokens_for(self, first: int, last: int) -> np.ndarray:
        """Hypothesis tokens aligned to reference tokens ``first..last`` (inclusive), insertions between included."""
        lo, hi = self.ref_step[first], self.ref_step[last]
        h = self.alignment.hyp_index[lo : hi + 1]
        return h[h >= 0]

    def ref_instance(self, kind: str, first: int, last: int, extra_hyp: np.ndarray | None = None) -> Instance:
        """An instance about reference tokens ``first..last``; ``extra_hyp`` tokens are quoted too."""
        ref_words = self.ref.source[first : last + 1]
        hyp_tokens = self.hyp_tokens_for(first, last)
        if extra_hyp is not None:
            hyp_tokens = np.union1d(hyp_tokens, extra_hyp)
        hyp_words = self.hyp.source[hyp_tokens]
        return Instance(
            kind,
            _time(self.ref.words.span_start[ref_words[0]]),
            _time(self.ref.words.span_end[ref_words[-1]]),
            self.ref.words.quote(ref_words),
            self.hyp.words.quote(hyp_words),
        )

    def ref_token_instances(self, kinds: Sequence[str], tokens: Sequence[int]) -> list[Instance]:
        """``ref_instance(kind, i, i)`` for each kind and reference token ``i``, looked up a column at a time (a
        long recording has hundreds of short words wrong): a token's step holds at most one hypothesis token."""
        index = np.asarray(tokens, dtype=np.int64)
        words = self.ref.source[index]
        partners = self.alignment.hyp_index[self.ref_step[index]].tolist()
        hyp_source, hyp_texts, ref_texts = self.hyp.source, self.hyp.words.texts, self.ref.words.texts
        return [
            Instance(kind, start, end, ref_texts[word], hyp_texts[hyp_source[j]] if j >= 0 else "")
            for kind, start, end, word, j in zip(
                kinds,
                _times(self.ref.words.span_start[words]),
                _times(self.ref.words.span_end[words]),
                words.tolist(),
                partners,
            )
        ]

    def hyp_instance(self, kind: str, j: int) -> Instance:
        """An instance about hypothesis token ``j``; reference side is its partner, if any."""
        word = int(self.hyp.source[j])
        start, end = self.hyp.words.start[word], self.hyp.words.end[word]
        partner = int(self.hyp_partner[j])
        reference = self.ref.words.quote([self.ref.source[partner]]) if partner >= 0 else ""
        if np.isnan(start) and len(self.ref):
            anchor = int(self.ref.source[min(max(self.hyp_slot[j], 0), len(self.ref) - 1)])
            start, end = self.ref.words.span_start[anchor], self.ref.words.span_end[anchor]
        return Instance(kind, _time(start), _time(end), reference, self.hyp.words.texts[word])
