"""Lost speech turns: reference turns the baseline recognized and an arm deleted.

A turn is a reference utterance. It was *recognized* by a system when at least half of its
normalized reference words are hits in that system's alignment; it is *lost* by an arm when
the baseline recognized it and the arm has no hit in it at all. Both alignments share the same
reference tokens (same normalizer, same exclusions), so turns are matched by position, never
by counting. The denominator is the number of turns the baseline recognized.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from toolkit.scorer.align import EQUAL
from toolkit.scorer.metrics.aligned import AlignedTokens, Instance
from toolkit.scorer.metrics.figures import Figure, Figures

RECOGNIZED_FRACTION = 0.5


@dataclass(frozen=True)
class LostTurns(Figures):
    """Turns the baseline recognized (``recognized``, the denominator) and those this arm lost."""

    FIGURES = (
        Figure("count", "lost_turns", attr="lost"),
        Figure("denominator", "lost_turns_denominator", attr="recognized"),
        Figure("rule", None),
    )

    recognized: int = 0
    lost: int = 0
    instances: tuple[Instance, ...] = ()

    @property
    def rule(self) -> str:
        return f"baseline hit >= {RECOGNIZED_FRACTION:g} of the turn's words, arm hit none"

    def json_extras(self) -> dict[str, Any]:
        return {"instances": [i.to_json() for i in self.instances]}


def turn_hits(at: AlignedTokens, utterance_of_word: np.ndarray) -> dict[int, tuple[int, int]]:
    """Per reference utterance index: (hit tokens, all tokens) in this alignment."""
    turn = utterance_of_word[at.ref.source] if len(at.ref) else np.zeros(0, dtype=np.int64)
    hits = at.ref_op == EQUAL
    result: dict[int, tuple[int, int]] = {}
    for u in np.unique(turn).tolist():
        members = turn == u
        result[int(u)] = (int(hits[members].sum()), int(members.sum()))
    return result


def lost_turns(baseline: AlignedTokens, arm: AlignedTokens, utterance_of_word: np.ndarray) -> LostTurns:
    """Turns of the reference the baseline recognized and ``arm`` deleted entirely."""
    if baseline.ref.texts != arm.ref.texts:
        raise ValueError("baseline and arm were scored against different reference tokens")
    base, mine = turn_hits(baseline, utterance_of_word), turn_hits(arm, utterance_of_word)
    turn = utterance_of_word[arm.ref.source] if len(arm.ref) else np.zeros(0, dtype=np.int64)
    recognized = [u for u, (hit, total) in sorted(base.items()) if total and hit >= RECOGNIZED_FRACTION * total]
    lost = [np.flatnonzero(turn == u) for u in recognized if mine[u][0] == 0]
    return LostTurns(
        recognized=len(recognized),
        lost=len(lost),
        instances=tuple(arm.ref_instance("lost turn", int(t[0]), int(t[-1])) for t in lost),
    )
