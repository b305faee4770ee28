"""The reference's words placed in their utterances: the matching at once (utterances whose spans do not overlap,
each on its own) held to the matching one utterance after another, on any utterances and timed-word tier."""

from __future__ import annotations

import math
from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Reference, Utterance, Word
from toolkit.scorer.score import _reference_words, _Tier

WORDS = ("casa", "Casa,", "gente", "não", "Não.", "é", "e", "R$", "2.000", "(inciso)", "—", "dois")
TIMES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, math.nan])


@st.composite
def references(draw: st.DrawFn) -> Reference:
    """Utterances (some untimed, some overlapping or out of order) and a tier of timed words, some of them the
    utterances' words at their times, some not."""
    utterances = []
    for _ in range(draw(st.integers(0, 5))):
        start = draw(TIMES)
        end = start + draw(st.sampled_from([0.0, 0.5, 1.0, 2.0])) if draw(st.booleans()) else draw(TIMES)
        utterances.append(Utterance(start, end, " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=5)))))
    timed = []
    for utterance in utterances:
        words = utterance.text.split()
        if (
            not words
            or not draw(st.booleans())
            or not (math.isfinite(utterance.start) and math.isfinite(utterance.end))
        ):
            continue
        step = (utterance.end - utterance.start) / len(words)
        for k, word in enumerate(words):
            if draw(st.integers(0, 5)):  # most words timed, as a tier made with the utterances
                timed.append(Word(word, utterance.start + k * step, utterance.start + (k + 1) * step))
    for _ in range(draw(st.integers(0, 3))):  # words of no utterance, or of another
        start = draw(TIMES.filter(math.isfinite))
        timed.append(Word(draw(st.sampled_from(WORDS)), start, start + draw(st.sampled_from([0.0, 0.25, 1.0]))))
    untimed = [Word(w) for w in draw(st.lists(st.sampled_from(WORDS), max_size=2))]
    return Reference("r", utterances, words=draw(st.permutations(timed + untimed)))


def _same(one: tuple, other: tuple) -> bool:
    """Whether two results of ``_reference_words`` are equal to the bit (NaN where NaN)."""
    words, utt, unplaced = one
    words2, utt2, unplaced2 = other
    columns = ("start", "end", "span_start", "span_end")
    return (
        words.texts == words2.texts
        and all(getattr(words, c).tobytes() == getattr(words2, c).tobytes() for c in columns)
        and utt.tobytes() == utt2.tobytes()
        and unplaced == unplaced2
    )


@settings(max_examples=600, deadline=None)
@given(references())
def test_words_placed_at_once_are_those_placed_one_utterance_after_another(reference: Reference) -> None:
    fast = _reference_words(reference)
    with mock.patch.object(_Tier, "disjoint", lambda self, word_keys: None):
        assert _same(fast, _reference_words(reference))


@settings(max_examples=600, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(-3, 4), st.booleans(), st.integers(0, 4)), max_size=6),
    st.lists(st.sampled_from("abc"), min_size=12, max_size=12),
    st.data(),
)
def test_a_disjoint_tier_matches_as_one_utterance_after_another(
    spans: list[tuple[int, int, bool, int]], keys: list[str], data: st.DataObject
) -> None:
    los = np.array([lo for lo, _, _, _ in spans], dtype=np.int64)
    his = np.clip(los + np.array([width for _, width, _, _ in spans], dtype=np.int64), 0, 12)  # a span may end first
    counts = np.array([count for _, _, _, count in spans], dtype=np.int64)
    active = np.array([on for _, _, on, _ in spans], dtype=bool) & (counts > 0)
    word_keys = data.draw(st.lists(st.sampled_from("abc"), min_size=int(counts.sum()), max_size=int(counts.sum())))
    tier = _Tier(keys, los, his, active, counts)
    disjoint = tier.disjoint(word_keys)
    if disjoint is not None:
        assert disjoint.tolist() == tier.matched(word_keys).tolist()
