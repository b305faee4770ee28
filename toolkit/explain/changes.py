"""What changed between two systems' errors on the same reference tokens: ΔWER as a sum of per-word changes.

Both systems are aligned to the same reference tokens (the primary policy's). A reference token is
*wrong* for a system when that system substituted or deleted it (an optional word left out is no
error). Each token right for one system and wrong for the other is one change: a **regression**
(+1) when the arm got it wrong, a **fix** (-1) when the baseline did. Insertions are paired across
the two systems by the reference position they sit at and their token: a pair is no change; an
unpaired insertion of the arm is a regression, one of the baseline a fix, except where both systems
inserted at the same reference position, different words (a word the reader adds that the text lacks,
spelled two ways: "Insisto" and "Inciso"): such a pair is the same position with another error, neither a
fix nor a regression, and is counted apart. So the changes of a recording sum exactly to (S + D + I) of the
arm minus that of the baseline.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from toolkit.runs.score_files import FIX, REGRESSION
from toolkit.scorer.align import DELETE, INSERT, SUBSTITUTE
from toolkit.scorer.metrics.aligned import AlignedTokens

ARM, BASELINE = "arm", "baseline"


@dataclass(frozen=True)
class Change:
    """One word whose outcome differs: which side erred, how, and where (reference token or inserted token)."""

    kind: str  # REGRESSION (+1) or FIX (-1)
    erred: str  # ARM or BASELINE: the side whose error this is
    error: str  # "substitution", "deletion" or "insertion"
    ref_token: int  # the reference token (for an insertion: how many reference tokens precede it)
    hyp_token: int = -1  # the erring side's inserted token, for an insertion

    @property
    def delta(self) -> int:
        return 1 if self.kind == REGRESSION else -1


_ERRORS = {SUBSTITUTE: "substitution", DELETE: "deletion"}


@dataclass(frozen=True)
class WordChanges:
    """The changes from one system to another, and the positions where both inserted a different word."""

    changes: list[Change]
    same_position: int


def word_changes(base: AlignedTokens, arm: AlignedTokens) -> WordChanges:
    """The changes from ``base`` to ``arm`` (both aligned to the same reference tokens), in reference order."""
    if base.ref.texts != arm.ref.texts:
        raise ValueError("the two systems were not aligned to the same reference tokens")
    changes: list[tuple[int, Change]] = []
    base_wrong = np.isin(base.ref_op, list(_ERRORS))
    arm_wrong = np.isin(arm.ref_op, list(_ERRORS))
    for i in np.flatnonzero(base_wrong != arm_wrong).tolist():
        erred, at = (ARM, arm) if arm_wrong[i] else (BASELINE, base)
        kind = REGRESSION if erred == ARM else FIX
        changes.append((i, Change(kind, erred, _ERRORS[int(at.ref_op[i])], i)))
    arm_extra, base_extra, same = _same_position(_unpaired(arm, base), _unpaired(base, arm))
    changes += [(slot, Change(REGRESSION, ARM, "insertion", slot, j)) for slot, j in arm_extra]
    changes += [(slot, Change(FIX, BASELINE, "insertion", slot, j)) for slot, j in base_extra]
    ordered = [change for _, change in sorted(changes, key=lambda item: (item[0], item[1].error != "insertion"))]
    return WordChanges(ordered, same)


def _same_position(
    arm_extra: list[tuple[int, int]], base_extra: list[tuple[int, int]]
) -> tuple[list[tuple[int, int]], list[tuple[int, int]], int]:
    """The insertions left after pairing each of the arm's with one of the baseline's at the same reference
    position (in order), and how many pairs that made."""
    base_at = Counter(slot for slot, _ in base_extra)
    arm_at = Counter(slot for slot, _ in arm_extra)
    paired = {slot: min(n, base_at[slot]) for slot, n in arm_at.items() if base_at[slot]}

    def rest(extra: list[tuple[int, int]]) -> list[tuple[int, int]]:
        left = dict(paired)
        kept = []
        for slot, j in extra:
            if left.get(slot):
                left[slot] -= 1
            else:
                kept.append((slot, j))
        return kept

    return rest(arm_extra), rest(base_extra), sum(paired.values())


def _insertions(at: AlignedTokens) -> list[tuple[int, int]]:
    """(slot, hypothesis token) of each insertion, in order."""
    tokens = at.alignment.hyp_index[at.alignment.ops == INSERT].tolist()
    return list(zip(at.alignment.insertion_slots().tolist(), tokens))


def _unpaired(side: AlignedTokens, other: AlignedTokens) -> list[tuple[int, int]]:
    """Insertions of ``side`` that ``other`` does not make at the same slot with the same token."""
    available = Counter((slot, other.hyp.texts[j]) for slot, j in _insertions(other))
    extra = []
    for slot, j in _insertions(side):
        key = (slot, side.hyp.texts[j])
        if available[key]:
            available[key] -= 1
        else:
            extra.append((slot, j))
    return extra


def errors(at: AlignedTokens) -> int:
    """S + D + I of one alignment (what the changes between two sum to)."""
    return int(np.isin(at.ref_op, list(_ERRORS)).sum()) + int((at.alignment.ops == INSERT).sum())
