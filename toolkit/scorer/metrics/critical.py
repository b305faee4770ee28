"""Critical-word occurrences keyed by reference position, so two systems can be compared per instance.

The audits in :mod:`toolkit.scorer.metrics.audits` count errors; a gate needs to know *which* reference
negation, name or number each system got wrong, to call an error "newly introduced" only when
the baseline got that same occurrence right. Reference occurrences are keyed by their token
span; an inserted negation (no reference position) is keyed by its insertion slot (how many
reference tokens precede it) and its text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from toolkit.scorer.metrics.aligned import AlignedTokens
from toolkit.scorer.metrics.audits import (
    AMBIGUOUS,
    REPETITION_DROPPED,
    AuditRules,
    inserted_negations,
    name_outcomes,
    negation_outcomes,
    number_outcomes,
)

AUDITS = ("negation", "names", "numbers")
Key = tuple[str, int, int | str]
RIGHT = (None, REPETITION_DROPPED, AMBIGUOUS)  # audit outcomes that are not errors


@dataclass(frozen=True)
class Occurrence:
    """One critical occurrence: which audit, where (``key``), whether this system got it wrong."""

    audit: str
    key: Key
    wrong: bool
    first: int  # reference token span (for an insertion: the token it sits next to)
    last: int
    hyp_token: int = -1  # the inserted hypothesis token, for an insertion


def critical_occurrences(
    at: AlignedTokens,
    negations: frozenset[str],
    names: Iterable[Sequence[str]],
    turns: np.ndarray,
    rules: AuditRules = AuditRules(),
) -> list[Occurrence]:
    """Every reference negation, name and number occurrence, and every inserted negation.

    Whether an occurrence is wrong is the audits' own outcome (``turns``: each reference token's
    turn; ``rules``: the version's audit rules), so a false start the audits count as "repetition
    dropped", or a negation opposite an undecidable "num", is not an error here either.
    """
    found = [
        Occurrence("negation", ("ref", i, i), outcome not in RIGHT, i, i)
        for i, outcome in negation_outcomes(at, negations, turns, rules)
    ]
    last_ref = max(len(at.ref) - 1, 0)
    for j in inserted_negations(at, negations):
        slot = int(at.hyp_slot[j])
        anchor = min(max(slot, 0), last_ref)
        found.append(Occurrence("negation", ("inserted", slot, at.hyp.texts[j]), True, anchor, anchor, j))
    found += [
        Occurrence("names", ("ref", first, last), outcome not in RIGHT, first, last)
        for (first, last), outcome in name_outcomes(at, names, turns)
    ]
    found += [
        Occurrence("numbers", ("ref", first, last), outcome not in RIGHT, first, last)
        for (first, last), outcome in number_outcomes(at, turns, rules)
    ]
    return found


def newly_wrong(baseline: list[Occurrence], challenger: list[Occurrence]) -> list[Occurrence]:
    """Challenger errors on occurrences the baseline got right (or negations the baseline did not insert)."""
    baseline_wrong = {(o.audit, o.key) for o in baseline if o.wrong}
    return [o for o in challenger if o.wrong and (o.audit, o.key) not in baseline_wrong]
