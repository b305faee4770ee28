"""Combining two recognizers' words for the +second-model ``combine`` mode.

The rule, documented so results can be defended:

1. The two word streams are aligned with the scorer's time-constrained aligner
   (``toolkit.scorer.align.align_timed``): a second-recognizer word may pair with a first-recognizer
   word only when its onset lies within ``pair_collar_s`` of that word's span; words are
   compared by ``toolkit.scorer.normalize.same_word.word_key`` (case and punctuation folded);
   untimed words never pair.
2. Paired equal words are *agreements* and come from the first recognizer. Everything
   between two agreements is one *disagreement run*, decided as a whole: the side with the
   higher mean word confidence is kept (a side without confidences, or without words,
   scores 0; ties keep the first).
3. Splicing. A kept run must fit between the words around it. When the merged stream would
   put two words out of order or over each other (more than half the shorter one,
   ``toolkit.core.wordstream``), every run and agreement from the earlier to the later of the two
   words becomes one run, decided again by rule 2. This repeats until the stream is valid,
   which it always becomes: at worst the whole recording is one run, taken from one valid stream.

So the output is time-ordered with no stretch covered twice by construction, and each
disagreement run (its final extent) is returned with times to feed the review queue.

Compared with ROVER (Fiscus 1997): ROVER aligns N >= 3 systems into a word transition network and
votes word by word, with a null-word confidence for deletions; with two systems every
disagreement is a tie. Here two systems are aligned under a time constraint, as in sclite's
time-mediated alignment, and whole disagreement runs are chosen by mean confidence, so a
name split differently by each recognizer ("A Fernando" / "afernando a") is taken from one side.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from toolkit.core.transcripts import Word
from toolkit.core.wordstream import StreamError, check_stream, stream_problems
from toolkit.scorer.align import EQUAL, align_timed
from toolkit.scorer.normalize.same_word import word_key

FIRST, SECOND = 0, 1


@dataclass(frozen=True)
class _Slot:
    """A stretch of both streams: first[a_lo:a_hi] against second[b_lo:b_hi]; an agreement or a run."""

    a_lo: int
    a_hi: int
    b_lo: int
    b_hi: int
    agreement: bool
    side: int = FIRST

    def join(self, other: _Slot) -> _Slot:
        return _Slot(self.a_lo, other.a_hi, self.b_lo, other.b_hi, agreement=False)


def _confidence(words: Sequence[Word]) -> float:
    values = [w.confidence for w in words if w.confidence is not None]
    return sum(values) / len(values) if values else 0.0


def _times(words: Sequence[Word]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.array([np.nan if w.start is None else w.start for w in words], dtype=float)
    ends = np.array([np.nan if w.end is None else w.end for w in words], dtype=float)
    return starts, ends


def _slots(first: Sequence[Word], second: Sequence[Word], collar: float) -> list[_Slot]:
    """Agreements (paired equal words) and the maximal runs between them, in order."""
    a_start, a_end = _times(first)
    b_start, _ = _times(second)
    alignment = align_timed(
        [word_key(w.text) for w in first], [word_key(w.text) for w in second], a_start, a_end, b_start, collar
    )
    slots: list[_Slot] = []
    a, b = 0, 0
    for op, ai, bi in zip(alignment.ops.tolist(), alignment.ref_index.tolist(), alignment.hyp_index.tolist()):
        a_next, b_next = (ai + 1 if ai >= 0 else a), (bi + 1 if bi >= 0 else b)
        if op == EQUAL:
            slots.append(_Slot(a, a_next, b, b_next, agreement=True))
        elif slots and not slots[-1].agreement:
            slots[-1] = slots[-1].join(_Slot(a, a_next, b, b_next, agreement=False))
        else:
            slots.append(_Slot(a, a_next, b, b_next, agreement=False))
        a, b = a_next, b_next
    return slots


def _decide(slot: _Slot, first: Sequence[Word], second: Sequence[Word]) -> _Slot:
    if slot.agreement:
        return replace(slot, side=FIRST)
    keep_second = _confidence(second[slot.b_lo : slot.b_hi]) > _confidence(first[slot.a_lo : slot.a_hi])
    return replace(slot, side=SECOND if keep_second else FIRST)


def _emit(slots: list[_Slot], first: Sequence[Word], second: Sequence[Word]) -> tuple[list[Word], list[int]]:
    """The merged words and, for each, the index of the slot it came from."""
    words: list[Word] = []
    owners: list[int] = []
    for index, slot in enumerate(slots):
        chosen = first[slot.a_lo : slot.a_hi] if slot.side == FIRST else second[slot.b_lo : slot.b_hi]
        words.extend(chosen)
        owners.extend([index] * len(chosen))
    return words, owners


def _merge(slots: list[_Slot], lo: int, hi: int, first: Sequence[Word], second: Sequence[Word]) -> list[_Slot]:
    """Slots ``lo..hi`` as one run, joined with the runs right beside it (runs stay maximal), decided again."""
    while lo > 0 and not slots[lo - 1].agreement:
        lo -= 1
    while hi + 1 < len(slots) and not slots[hi + 1].agreement:
        hi += 1
    joined = slots[lo]
    for slot in slots[lo + 1 : hi + 1]:
        joined = joined.join(slot)
    return [*slots[:lo], _decide(replace(joined, agreement=False), first, second), *slots[hi + 1 :]]


def combine_streams(
    first: Sequence[Word], second: Sequence[Word], labels: tuple[str, str], pair_collar_s: float = 0.5
) -> tuple[list[Word], list[dict[str, Any]]]:
    """Merged words and the disagreement runs between ``first`` and ``second`` (the rule above).

    Both inputs must be valid word streams (``toolkit.core.wordstream``); the output is one as well.
    """
    for label, words in zip(labels, (first, second)):
        check_stream(words, None, f"combine input {label}")
    slots = [_decide(slot, first, second) for slot in _slots(first, second, pair_collar_s)]
    while True:
        merged, owners = _emit(slots, first, second)
        problems = stream_problems(merged, limit=1)
        if not problems:
            break
        problem = problems[0]
        if problem.other is None or owners[problem.other] == owners[problem.index]:
            raise StreamError("combined words", problem)  # one input's words alone: the inputs were checked
        slots = _merge(slots, owners[problem.other], owners[problem.index], first, second)
    return merged, [_span(slot, first, second, labels) for slot in slots if _disagrees(slot, first, second)]


def _disagrees(slot: _Slot, first: Sequence[Word], second: Sequence[Word]) -> bool:
    """A run whose two sides differ as written (a run of the same words at other times is no disagreement)."""
    keys = [
        [k for k in map(word_key, (w.text for w in side)) if k]
        for side in (first[slot.a_lo : slot.a_hi], second[slot.b_lo : slot.b_hi])
    ]
    return not slot.agreement and keys[0] != keys[1]


def _span(slot: _Slot, first: Sequence[Word], second: Sequence[Word], labels: tuple[str, str]) -> dict[str, Any]:
    a, b = first[slot.a_lo : slot.a_hi], second[slot.b_lo : slot.b_hi]
    timed = [w for w in (*a, *b) if w.timed]
    return {
        "start": min((w.start for w in timed), default=None),  # type: ignore[type-var]
        "end": max((w.end for w in timed), default=None),  # type: ignore[type-var]
        labels[0]: " ".join(w.text for w in a),
        labels[1]: " ".join(w.text for w in b),
        f"{labels[0]}_confidence": round(_confidence(a), 4),
        f"{labels[1]}_confidence": round(_confidence(b), 4),
        "kept": labels[slot.side],
    }
