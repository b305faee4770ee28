"""The batched recognizer's tail re-decode rule on constructed chunks, regions and words."""

from __future__ import annotations

from toolkit.asr.whisperx_backend import Chunk, unfinished_tails
from toolkit.records import Word

# Two chunks of 30 s; the first holds three speech regions with pauses of 1.5 s and 4 s.
FIRST = Chunk(0.5, 28.0, ((0.5, 8.0), (9.5, 18.0), (22.0, 28.0)))
SECOND = Chunk(29.0, 50.0, ((29.0, 40.0), (41.0, 50.0)))


def _words(*spans: tuple[float, float]) -> list[Word]:
    return [Word(f"w{i}", start, end, 0.9, "seg0000") for i, (start, end) in enumerate(spans)]


def test_a_chunk_whose_words_stop_at_its_first_pause_has_the_rest_redecoded() -> None:
    words = _words((0.6, 1.0), (7.2, 7.9), (29.1, 29.5), (49.0, 49.8))
    # The first chunk's words stop at 7.9 s: its regions from 9.5 s on are decoded again, to its end.
    assert unfinished_tails([FIRST, SECOND], words, 1.0) == [(9.5, 28.0)]


def test_the_tail_starts_at_the_first_region_beyond_the_gap() -> None:
    words = _words((0.6, 1.0), (16.0, 17.9), (29.1, 29.5), (49.0, 49.8))
    assert unfinished_tails([FIRST, SECOND], words, 1.0) == [(22.0, 28.0)]
    # With a gap longer than the 4.1 s between the last word and the next region, nothing is redone.
    assert unfinished_tails([FIRST, SECOND], words, 4.5) == []


def test_finished_and_empty_chunks_are_not_redecoded() -> None:
    # Words to the last region of each chunk: nothing to redo.
    assert unfinished_tails([FIRST, SECOND], _words((0.6, 1.0), (27.0, 27.9), (45.0, 49.9)), 1.0) == []
    # The first chunk has no words at all: decoding the same audio again would give the same text.
    assert unfinished_tails([FIRST, SECOND], _words((45.0, 49.9)), 1.0) == []


def test_a_word_of_the_next_chunk_never_finishes_the_previous_one() -> None:
    # Words are assigned to a chunk by their start; the second chunk's first word starts after the first ends.
    words = _words((0.6, 1.0), (7.2, 7.9), (28.5, 29.4))
    assert unfinished_tails([FIRST, Chunk(28.5, 50.0, ((28.5, 50.0),))], words, 1.0) == [(9.5, 28.0)]
