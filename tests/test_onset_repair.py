"""Onset repair: a long word that runs through a VAD pause is cut back towards the speech onset, nothing else moves."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Word
from toolkit.pipeline.onset_repair import clamp_onsets

# Speech 0-2 s and 5-8 s: one pause, 2-5 s.
SPEECH = [(0.0, 2.0), (5.0, 8.0)]


def test_a_word_that_swallowed_the_pause_starts_at_the_speech_onset() -> None:
    words = [Word("ingresso,", 1.5, 1.9), Word("mas", 2.3, 6.5), Word("eu", 6.5, 6.8)]
    repaired, moved = clamp_onsets(words, SPEECH, 0.3, 1.0)
    assert moved == 1
    assert repaired == [words[0], Word("mas", 5.0, 6.5), words[2]]


def test_the_cut_keeps_at_least_the_longest_word_so_a_late_vad_onset_does_not_make_it_late() -> None:
    repaired, moved = clamp_onsets([Word("mas", 2.3, 5.6)], SPEECH, 0.3, 1.0)
    assert (moved, repaired[0].start, repaired[0].end) == (1, 4.6, 5.6)


def test_words_in_speech_short_words_and_words_inside_a_pause_are_untouched() -> None:
    words = [
        Word("longo", 5.2, 7.5),  # long, but starts after the pause: in speech
        Word("curto", 4.8, 5.3),  # runs through the pause's end but is no longer than a word may be
        Word("eco", 2.5, 4.5),  # long, wholly inside the pause: says nothing about the speech after it
        Word("sem", None, None),
    ]
    assert clamp_onsets(words, SPEECH, 0.3, 1.0) == (words, 0)


def test_a_gap_shorter_than_min_pause_is_not_a_pause() -> None:
    words = [Word("mas", 1.0, 4.0)]
    assert clamp_onsets(words, [(0.0, 2.0), (2.2, 5.0)], 0.3, 1.0) == (words, 0)
    assert clamp_onsets(words, [(0.0, 2.0), (2.2, 5.0)], 0.1, 1.0) == ([Word("mas", 2.2, 4.0)], 1)


def test_a_start_never_moves_past_the_next_word() -> None:
    words = [Word("mas", 2.3, 6.0), Word("eu", 4.7, 5.2)]
    repaired, moved = clamp_onsets(words, SPEECH, 0.3, 1.0)
    assert (moved, [w.start for w in repaired]) == (1, [4.7, 4.7])


def test_no_speech_regions_change_nothing() -> None:
    words = [Word("mas", 2.3, 6.5)]
    assert clamp_onsets(words, [], 0.3, 1.0) == (words, 0)


@pytest.mark.parametrize(
    ("min_pause", "max_word", "message"),
    [
        (-0.1, 1.0, "min_pause must be"),
        (float("nan"), 1.0, "min_pause must be"),
        (0.3, 0.0, "max_word must be"),
        (0.3, float("inf"), "max_word must be"),
    ],
)
def test_bad_parameters_are_refused(min_pause: float, max_word: float, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        clamp_onsets([], SPEECH, min_pause, max_word)


@st.composite
def _case(draw) -> tuple[list[Word], list[tuple[float, float]]]:
    cuts = sorted(draw(st.lists(st.floats(0, 60, allow_nan=False), min_size=0, max_size=12, unique=True)))
    speech = [(a, b) for a, b in zip(cuts[::2], cuts[1::2]) if b > a]
    times = sorted(draw(st.lists(st.floats(0, 60, allow_nan=False), min_size=0, max_size=20)))
    words = []
    for i, (start, end) in enumerate(zip(times[::2], times[1::2])):
        words.append(Word(f"w{i}", None, None) if draw(st.booleans()) and i % 3 == 0 else Word(f"w{i}", start, end))
    return words, speech


@settings(max_examples=300, deadline=None)
@given(_case(), st.floats(0, 2), st.floats(0.1, 3))
def test_only_starts_move_later_in_order_and_within_their_word(case, min_pause: float, max_word: float) -> None:
    words, speech = case
    repaired, moved = clamp_onsets(words, speech, min_pause, max_word)
    assert [w.text for w in repaired] == [w.text for w in words]
    unchanged = [(w.end, w.confidence, w.segment_id) for w in words]
    assert [(w.end, w.confidence, w.segment_id) for w in repaired] == unchanged
    assert moved == sum(a.start != b.start for a, b in zip(words, repaired))
    for before, after in zip(words, repaired):
        if before.start is None:
            assert after.start is None
            continue
        assert before.start <= after.start <= after.end
        if after.start != before.start:
            assert after.end - after.start >= min(max_word, before.end - before.start) - 1e-6
    starts = [w.start for w in repaired if w.start is not None]
    assert starts == sorted(starts)
