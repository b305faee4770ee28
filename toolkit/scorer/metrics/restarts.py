"""Negation restarts in spontaneous speech: "não há possibili- não pode" (ptbr-norm-3, ``negation_restarts``).

A speaker who abandons a phrase and starts again repeats its negation with words between: the first
"não" belongs to the abandoned phrase. When the recognizer drops it and gets the second one right, the
turn keeps its polarity, so the loss is a dropped repetition (a false start), not a flip. Only a
restart counts: at most ``RESTART_WORDS`` words between the two, in one turn, the same negation, and
evidence that the phrase was abandoned (a truncated word between them, written with a final hyphen as
the transcription convention asks, or the words between said again after the second negation:
"não vai não vai dar"). Two negations of two clauses ("não quero, não posso") are not a restart.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from toolkit.scorer.align import EQUAL
from toolkit.scorer.metrics.aligned import AlignedTokens

RESTART_WORDS = 5


def _truncated(word: str) -> bool:
    core = word.rstrip(".,;:!?…\"'”’»)")
    return len(core) > 1 and core[-1] == "-" and core[-2].isalpha()


def restarted(at: AlignedTokens, runs: Sequence[Sequence[int]], lost: set[int], turns: np.ndarray) -> set[int]:
    """Reference negation tokens of ``runs`` (runs of the same negation, in order) that were lost as a
    whole in a restart whose next negation was matched."""
    texts, source, words = at.ref.texts, at.ref.source, at.ref.words.texts
    out: set[int] = set()
    for run, following in zip(runs, runs[1:]):
        end, start = run[-1], following[0]
        if not all(member in lost for member in run) or texts[start] != texts[run[0]]:
            continue
        if turns[start] != turns[end] or start - end - 1 > RESTART_WORDS or start - end - 1 < 1:
            continue
        if not any(at.ref_op[member] == EQUAL for member in following):
            continue
        between = list(range(end + 1, start))
        after = list(range(following[-1] + 1, following[-1] + 1 + len(between)))
        repeated = after[-1] < len(texts) and [texts[k] for k in between] == [texts[k] for k in after]
        if repeated or any(_truncated(words[int(source[k])]) for k in between):
            out.update(run)
    return out
