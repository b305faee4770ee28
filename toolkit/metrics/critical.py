"""Critical-word occurrences keyed by reference position, so two systems can be compared per instance.

The audits in :mod:`toolkit.metrics.audits` count errors; a gate needs to know *which* reference
negation, name or number each system got wrong, to call an error "newly introduced" only when
the baseline got that same occurrence right. Reference occurrences are keyed by their token
span; an inserted negation (no reference position) is keyed by its insertion slot (how many
reference tokens precede it) and its text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np

from toolkit.align import EQUAL, INSERT, SUBSTITUTE
from toolkit.metrics.aligned import AlignedTokens
from toolkit.metrics.audits import _number_correct, find_occurrences, negation_mask

AUDITS = ("negation", "names", "numbers")
Key = tuple[str, int, int | str]


@dataclass(frozen=True)
class Occurrence:
    """One critical occurrence: which audit, where (``key``), whether this system got it wrong."""

    audit: str
    key: Key
    wrong: bool
    first: int  # reference token span (for an insertion: the token it sits next to)
    last: int
    hyp_token: int = -1  # the inserted hypothesis token, for an insertion


def critical_occurrences(at: AlignedTokens, negations: frozenset[str],
                         names: Iterable[Sequence[str]]) -> list[Occurrence]:
    """Every reference negation, name and number occurrence, and every inserted negation."""
    found: list[Occurrence] = []
    ref_neg = negation_mask(at.ref, negations)
    for i in np.flatnonzero(ref_neg).tolist():
        found.append(Occurrence("negation", ("ref", i, i), bool(at.ref_op[i] != EQUAL), i, i))
    hyp_neg = negation_mask(at.hyp, negations)
    partner_neg = np.zeros(len(at.hyp), dtype=bool)
    paired = at.hyp_partner >= 0
    partner_neg[paired] = ref_neg[at.hyp_partner[paired]]
    inserted = hyp_neg & ((at.hyp_op == INSERT) | ((at.hyp_op == SUBSTITUTE) & ~partner_neg))
    last_ref = max(len(at.ref) - 1, 0)
    for j in np.flatnonzero(inserted).tolist():
        slot = int(at.hyp_slot[j])
        anchor = min(max(slot, 0), last_ref)
        found.append(Occurrence("negation", ("inserted", slot, at.hyp.texts[j]), True, anchor, anchor, j))
    for first, last in find_occurrences(at.ref.texts, names):
        wrong = bool((at.ref_op[first:last + 1] != EQUAL).any() or at.insertions_inside(first, last))
        found.append(Occurrence("names", ("ref", first, last), wrong, first, last))
    groups = at.ref.number_group
    if len(groups) and groups.max() >= 0:
        hyp_groups = at.hyp.number_group
        hyp_sizes = np.bincount(hyp_groups[hyp_groups >= 0]) if (hyp_groups >= 0).any() else np.zeros(0, int)
        members = np.flatnonzero(groups >= 0)
        for span in np.split(members, np.flatnonzero(np.diff(groups[members]) != 0) + 1):
            first, last = int(span[0]), int(span[-1])
            found.append(Occurrence("numbers", ("ref", first, last),
                                    not _number_correct(at, first, last, hyp_sizes), first, last))
    return found


def newly_wrong(baseline: list[Occurrence], challenger: list[Occurrence]) -> list[Occurrence]:
    """Challenger errors on occurrences the baseline got right (or negations the baseline did not insert)."""
    baseline_wrong = {(o.audit, o.key) for o in baseline if o.wrong}
    return [o for o in challenger if o.wrong and (o.audit, o.key) not in baseline_wrong]
