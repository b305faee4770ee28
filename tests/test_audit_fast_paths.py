"""The audits' quicker look-ups held to the plain ones they replace, on generated words (hypothesis)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.metrics.audits import find_occurrences, name_occurrences, negation_mask, negation_masks
from toolkit.scorer.metrics.timing import largest_first, timing_score
from toolkit.scorer.score import score_recording

# Negations (and a colloquial "num"), numbers, a name, short and long words, optional words and odd texts.
VOCABULARY = ["não", "nao", "num", "nunca", "dois", "2020", "três", "Ana", "a", "é", "casa", "(inciso)", 'x"y', "X"]
_time = st.one_of(st.none(), st.floats(0, 100, allow_nan=False))
_words = st.lists(st.tuples(st.sampled_from(VOCABULARY), _time), max_size=10)


def _aligned(ref: list, hyp: list, untimed_utterance: bool):
    """The audit policy's aligned tokens of a one-utterance reference and a hypothesis (times as drawn)."""
    end = float("nan") if untimed_utterance else 200.0
    utterance = Utterance(0.0 if not untimed_utterance else float("nan"), end, " ".join(t for t, _ in ref))
    words = [Word(t, s, s + 0.1) for t, s in ref if s is not None]
    reference = Reference("r", [utterance], words=words)
    hypothesis = Hypothesis("r", [Word(t, s, None if s is None else s + 0.1) for t, s in hyp])
    return score_recording(reference, hypothesis).aligned


@settings(max_examples=80, deadline=None)
@given(ref=_words, hyp=_words, untimed=st.booleans())
def test_instances_of_single_tokens_are_the_plain_instances(ref: list, hyp: list, untimed: bool) -> None:
    """``ref_token_instances`` (a column at a time) gives every reference token's ``ref_instance``."""
    at = _aligned(ref, hyp, untimed)
    tokens = list(range(len(at.ref)))
    kinds = [f"kind{i % 3}" for i in tokens]
    assert at.ref_token_instances(kinds, tokens) == [at.ref_instance(k, i, i) for k, i in zip(kinds, tokens)]
    assert at.ref_token_instances(kinds[::-2], tokens[::-2]) == [
        at.ref_instance(k, i, i) for k, i in zip(kinds[::-2], tokens[::-2])
    ]


@settings(max_examples=80, deadline=None)
@given(ref=_words, hyp=_words, negations=st.frozensets(st.sampled_from(VOCABULARY)), names=st.lists(_words))
def test_shared_masks_and_occurrences_are_the_plain_ones(ref: list, hyp: list, negations, names: list) -> None:
    """The negation masks and the name occurrences computed once per alignment are what each call computed."""
    at = _aligned(ref, hyp, False)
    phrases = [[t.lower() for t, _ in name] for name in names]
    for _ in range(2):  # computed, then remembered
        ref_mask, hyp_mask = negation_masks(at, negations)
        assert ref_mask.tolist() == negation_mask(at.ref, negations).tolist()
        assert hyp_mask.tolist() == negation_mask(at.hyp, negations).tolist()
        assert name_occurrences(at, phrases) == find_occurrences(at.ref.texts, phrases)


@settings(max_examples=80, deadline=None)
@given(ref=_words, hyp=_words, untimed=st.booleans())
def test_timing_counts_the_words_that_produced_tokens(ref: list, hyp: list, untimed: bool) -> None:
    """The timed and untimed word counts (a mask of the words that produced tokens) are those over the distinct
    source words, as ``np.unique`` lists them."""
    at = _aligned(ref, hyp, untimed)
    timing = timing_score(at, None)
    assert timing.ref_timed_words == int(at.ref.words.timed[np.unique(at.ref.source)].sum())
    assert timing.hyp_words == len(np.unique(at.hyp.source))
    assert timing.untimed_hyp_words == int((~at.hyp.words.timed[np.unique(at.hyp.source)]).sum())


def _occurrences_by_scan(texts: list[str], phrases: list[list[str]]) -> list[tuple[int, int]]:
    """Name occurrences by the definition: longest phrases first, every position tried, no overlaps."""
    taken = [False] * len(texts)
    spans = []
    for phrase in sorted({tuple(p) for p in phrases if p}, key=len, reverse=True):
        for k in range(len(texts) - len(phrase) + 1):
            if tuple(texts[k : k + len(phrase)]) == phrase and not any(taken[k : k + len(phrase)]):
                taken[k : k + len(phrase)] = [True] * len(phrase)
                spans.append((k, k + len(phrase) - 1))
    return sorted(spans)


@settings(max_examples=300, deadline=None)
@given(
    texts=st.lists(st.sampled_from("abc"), max_size=12),
    phrases=st.lists(st.lists(st.sampled_from("abcd"), max_size=3), max_size=4),
)
def test_occurrences_are_found_as_the_definition_says(texts: list[str], phrases: list[list[str]]) -> None:
    """Only the tokens a phrase starts with are listed, and none when there is no phrase: the same spans."""
    assert find_occurrences(texts, phrases) == _occurrences_by_scan(texts, phrases)


@settings(max_examples=300, deadline=None)
@given(
    values=st.lists(st.floats(allow_infinity=True) | st.sampled_from([0.0, -0.0, 1.5]), max_size=30),
    count=st.integers(-2, 12),
)
def test_the_largest_values_are_those_a_stable_sort_puts_first(values: list[float], count: int) -> None:
    """The worst onsets past a partition are the full stable sort's first ``count`` (ties, NaN, zeros of both signs)."""
    column = np.array(values, dtype=float)
    assert largest_first(column, count).tolist() == np.argsort(-column, kind="stable")[:count].tolist()
