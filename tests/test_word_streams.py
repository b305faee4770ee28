"""Every stage that emits words keeps a valid word stream, for any valid input (toolkit.core.wordstream).

The invariant is written once (``toolkit.core.wordstream.stream_problems``): non-decreasing starts, ends
not before starts, every time inside the recording, no two words over the same stretch (more than
half the shorter one), text that is valid Unicode with no U+FFFD. Each stage gets random valid
input here: recognizer output, cut points, window layouts, two recognizers' streams of one speech.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from toolkit.asr.characters import RawWord, join_split_characters
from toolkit.asr.faster_whisper_backend import segment_words
from toolkit.audio.signal import Signal, crop
from toolkit.audio.vad import merge_regions
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import StreamError, check_stream, drop_contradicting_times, stream_problems
from toolkit.pipeline.combine import combine_streams
from toolkit.pipeline.onset_repair import clamp_onsets
from toolkit.pipeline.runner import to_original
from toolkit.pipeline.seam_records import SeamConfig, WindowResult
from toolkit.pipeline.seams import reconcile
from toolkit.pipeline.windows import plan_windows

PROPERTY = settings(
    max_examples=int(__import__("os").environ.get("STREAM_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
VOCABULARY = [
    "não",
    "sim",
    "Fernando",
    "Lima",
    "a",
    "de",
    "ação",
    "coração",
    "é",
    "você",
    "São",
    "Paulo",
    "R$",
    "2.300,00",
    "parágrafo",
    "quinto",
    "inciso",
    "vírgula",
    "João",
    "órgão",
]


def problems(words: list[Word], duration: float | None = None) -> list[str]:
    return [str(p) for p in stream_problems(words, duration)]


# --- the invariant itself ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "words, expected",
    [
        ([Word("a", 1.0, 1.5), Word("b", 0.9, 1.2)], "is out of order"),
        ([Word("a", 1.0, 2.0), Word("b", 1.2, 1.6)], "covers the same stretch as word 1"),
        ([Word("a", 1.0, 0.5)], "impossible times"),
        ([Word("a", 1.0, None)], "a start or an end but not both"),
        ([Word("a", 1.0, float("nan"))], "not finite"),
        ([Word("a", 9.0, 10.5)], "after the recording"),
        ([Word("fa\ufffdo", 1.0, 1.2)], "U+FFFD"),
        ([Word("dois pontos", 1.0, 1.2)], "whitespace inside"),
        ([Word("", 1.0, 1.2)], "non-empty"),
        ([Word("\udc80", 1.0, 1.2)], "lone surrogate"),
    ],
)
def test_each_rule_of_a_valid_stream_names_the_word_and_the_problem(words: list[Word], expected: str) -> None:
    found = problems(words, duration=10.0)
    assert len(found) == 1 and expected in found[0]
    with pytest.raises(StreamError, match=re.escape(expected)):
        check_stream(words, 10.0, "test words")


def test_touching_short_and_untimed_words_are_valid() -> None:
    words = [
        Word("a", 0.0, 0.5),
        Word("b", 0.5, 0.5),
        Word("c", 0.5, 0.9),
        Word("d"),
        Word("e", 0.8, 1.4),
        Word("f", 1.4, 1.4),
        Word("g", 1.4, 1.4),
    ]
    assert problems(words, 1.4) == []  # overlap 0.1 of the shorter 0.4 (c, e); zero-length words at one instant


def test_dropping_contradicting_times_keeps_every_word_and_its_text() -> None:
    words = [Word("a", 1.0, 2.0), Word("b", 1.2, 1.6), Word("c", 0.5, 0.7), Word("d", 2.0, 2.5)]
    kept, dropped = drop_contradicting_times(words)
    assert [w.text for w in kept] == ["a", "b", "c", "d"] and dropped == 2
    assert [w.timed for w in kept] == [True, False, False, True]
    assert problems(kept) == []


# --- strategies -------------------------------------------------------------------------------


@st.composite
def speech(draw: st.DrawFn, duration: float = 60.0, max_words: int = 40) -> list[Word]:
    """A valid stream: words in order with pauses, some touching, some untimed, confidences in [0, 1]."""
    words, cursor = [], draw(st.floats(0.0, 2.0))
    for _ in range(draw(st.integers(0, max_words))):
        length = draw(st.floats(0.0, 1.2))
        if cursor + length > duration:
            break
        confidence = draw(st.none() | st.floats(0.0, 1.0))
        text = draw(st.sampled_from(VOCABULARY))
        if draw(st.integers(0, 9)) == 0:
            words.append(Word(text, None, None, confidence))
            continue
        words.append(Word(text, round(cursor, 3), round(cursor + length, 3), confidence))
        cursor += length + draw(st.sampled_from([0.0, 0.0, 0.05, 0.3, 1.5]))
    return words


@st.composite
def heard(draw: st.DrawFn, truth: list[Word], duration: float) -> list[Word]:
    """One recognizer's stream of ``truth``: drops, splits, merges, an invented word, small time jitter,
    then made valid as recognizer output is (contradicting times dropped)."""
    words: list[Word] = []
    for word in truth:
        action = draw(st.sampled_from(["keep"] * 6 + ["drop", "split", "merge", "invent", "respell"]))
        jitter = draw(st.floats(-0.3, 0.3))
        confidence = draw(st.none() | st.floats(0.0, 1.0))
        moved = (
            word
            if not word.timed
            else replace(
                word,
                start=min(max(word.start + jitter, 0.0), duration),  # type: ignore[operator]
                end=min(max(word.end + jitter, word.start + jitter, 0.0), duration),
            )
        )  # type: ignore[operator]
        moved = replace(moved, confidence=confidence)
        if action == "drop":
            continue
        if action == "split" and moved.timed:
            middle = (moved.start + moved.end) / 2  # type: ignore[operator]
            words += [
                replace(moved, text=moved.text[:1] or "x", end=middle),
                replace(moved, text=moved.text[1:] or "y", start=middle),
            ]
        elif action == "merge" and words and words[-1].timed and moved.timed:
            last = words.pop()
            words.append(replace(last, text=last.text.lower() + moved.text.lower(), end=max(last.end, moved.end)))
        elif action == "invent" and moved.timed:
            words += [
                moved,
                replace(
                    moved, text=draw(st.sampled_from(VOCABULARY)), start=moved.end, end=min(moved.end + 0.2, duration)
                ),
            ]  # type: ignore[operator]
        elif action == "respell":
            words.append(replace(moved, text=draw(st.sampled_from(VOCABULARY))))
        else:
            words.append(moved)
    return drop_contradicting_times(words)[0]


# --- recognizer adapters and batched chunk joins ----------------------------------------------


@dataclass
class FakeWord:
    word: str
    start: float
    end: float
    probability: float


@dataclass
class FakeSegment:
    words: list[FakeWord]
    tokens: list[int]


@st.composite
def library_segments(draw: st.DrawFn) -> tuple[list[FakeSegment], float]:
    """Segments as faster-whisper returns them, batched chunks and tail re-decodes included: any times at all."""
    duration = draw(st.floats(0.5, 60.0))
    time = st.floats(-2.0, duration + 2.0)
    segments = []
    for _ in range(draw(st.integers(0, 6))):
        words = [
            FakeWord(" " + draw(st.sampled_from(VOCABULARY)), draw(time), draw(time), draw(st.floats(0.0, 1.0)))
            for _ in range(draw(st.integers(0, 8)))
        ]
        segments.append(FakeSegment(words, []))
    return segments, duration


@PROPERTY
@given(library_segments())
def test_recognizer_adapter_and_batched_join_emit_a_valid_stream_for_any_library_output(case) -> None:
    segments, duration = case
    words, counts = segment_words(segments, duration)
    assert problems(words, duration) == []
    assert len(words) == sum(len(s.words) for s in segments)  # no word lost: contradicting times are dropped
    assert counts["contradicting_times_dropped"] == sum(not w.timed for w in words)


@st.composite
def split_characters(draw: st.DrawFn) -> tuple[list[RawWord], str, list[str]]:
    """A text cut into words at arbitrary byte positions (a character split across words), each word
    decoded alone with replacement characters, as faster-whisper's splitter can leave them."""
    spoken = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=8))
    text = "".join(" " + w for w in spoken)
    data = text.encode("utf-8")
    cuts = sorted(set(draw(st.lists(st.integers(1, len(data) - 1), max_size=10)))) if len(data) > 1 else []
    pieces = [data[a:b] for a, b in zip([0, *cuts], [*cuts, len(data)])]
    words = [
        RawWord(piece.decode("utf-8", errors="replace"), float(i), float(i) + 0.5, 0.5, 0)
        for i, piece in enumerate(pieces)
    ]
    return words, text, spoken


@PROPERTY
@given(split_characters())
def test_a_character_split_across_words_is_joined_not_replaced(case) -> None:
    words, text, spoken = case
    repaired = join_split_characters(words, text)
    assert "".join(w.text for w in repaired.words) == text  # every character whole, none replaced
    assert all("\ufffd" not in w.text for w in repaired.words)
    assert repaired.removed == 0 and repaired.dropped == 0
    assert len(repaired.words) == len(words) - repaired.joined


def test_bytes_invalid_in_the_whole_text_are_removed_and_counted() -> None:
    words = [
        RawWord(" fa\ufffd", 0.0, 0.3, 0.4, 0),
        RawWord("\ufffd", 0.3, 0.4, 0.2, 0),
        RawWord(" sim", 0.5, 0.8, 0.9, 0),
    ]
    repaired = join_split_characters(words, " fa\ufffd\ufffd sim")
    assert [w.text for w in repaired.words] == [" fa", " sim"]
    assert (repaired.removed, repaired.dropped) == (2, 1)


@pytest.mark.needs_model
def test_the_real_tokenizer_joins_a_cedilla_split_across_two_words() -> None:
    """faster-whisper's own Tokenizer decodes the whole token sequence; byte tokens split "ç" in two."""
    from faster_whisper.tokenizer import Tokenizer
    from tokenizers import Tokenizer as HFTokenizer

    from toolkit.asr.models import resolve_model

    hf = HFTokenizer.from_file(f"{resolve_model('whisper-base').path}/tokenizer.json")
    tokenizer = Tokenizer(hf, True, task="transcribe", language="pt")
    byte_token = {b: hf.token_to_id(ch) for b, ch in _bytes_to_unicode().items()}
    tokens = [byte_token[b] for b in " faço".encode()]
    halves = [tokens[:4], tokens[4:]]  # " fa" + first byte of "ç" | second byte + "o"
    segments = [FakeSegment([FakeWord(tokenizer.decode(h), 1.0 + i, 1.5 + i, 0.6)], h) for i, h in enumerate(halves)]
    assert "\ufffd" in segments[0].words[0].word and "\ufffd" in segments[1].words[0].word
    words, counts = segment_words(segments, 10.0, tokenizer.decode)
    assert [(w.text, w.start, w.end) for w in words] == [("faço", 1.0, 2.5)]
    assert counts["split_characters_joined"] == 1


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte-to-character table, which Whisper's byte-level BPE uses for its 256 byte tokens."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1)) + list(range(ord("®"), 256))
    table, extra = {}, 0
    for b in range(256):
        if b in printable:
            table[b] = chr(b)
        else:
            table[b] = chr(256 + extra)
            extra += 1
    return table


# --- +VAD cut & merge: units mapped back to original time and joined ------------------------


@st.composite
def cut_and_merge(draw: st.DrawFn) -> tuple[float, list[tuple[float, float]], list[list[Word]], float]:
    duration = draw(st.floats(1.0, 120.0))
    edges = sorted(set(draw(st.lists(st.floats(0.0, duration), min_size=2, max_size=20))))
    regions = [(a, b) for a, b in zip(edges[::2], edges[1::2]) if b - a > 0.05]
    units = merge_regions(regions, draw(st.sampled_from([0.0, 10.0, 30.0])), draw(st.sampled_from([0.5, 2.0, 30.0])))
    local = [draw(speech(duration=(b - a) + 0.4, max_words=15)) for a, b in units]  # some words overrun the unit
    return duration, units, local, draw(st.sampled_from([0.0, 0.3]))


@PROPERTY
@given(cut_and_merge())
def test_vad_units_mapped_to_original_time_and_joined_are_a_valid_stream(case) -> None:
    duration, units, local, tolerance = case
    rate = 100  # a coarse signal: the time maps are what is tested
    recording = Signal.original(np.zeros(int(duration * rate), dtype=np.float32), rate)
    joined: list[Word] = []
    for index, ((start, end), words) in enumerate(zip(units, local)):
        unit = crop(recording, start, end)
        assume(unit.timemap.pieces)
        mapped, _ = to_original(f"vad{index:03d}", unit.timemap, words, tolerance)
        assert problems(mapped, recording.duration) == []
        joined += mapped
    assert problems(joined, recording.duration) == []


# --- seam reconciliation ----------------------------------------------------------------------


@st.composite
def windowed(draw: st.DrawFn) -> tuple[list[WindowResult], SeamConfig, float]:
    """A random window layout over a random recording; each window hears the spoken words inside it,
    with its own drops, splits, invented words and jitter, clamped to itself (a window hears nothing outside)."""
    duration = draw(st.floats(5.0, 100.0))
    length = draw(st.floats(4.0, 30.0))
    overlap = draw(st.floats(0.0, length / 2))
    assume(length - overlap > 0.5)
    origin = draw(st.floats(0.0, length - overlap - 1e-3))
    truth = draw(speech(duration=duration, max_words=60))
    windows = []
    for index, (start, end) in enumerate(plan_windows(duration, length, overlap, origin)):
        inside = [w for w in truth if not w.timed or (w.end > start and w.start < end)]  # type: ignore[operator]
        words = draw(heard(inside, duration))
        clamped = [
            w
            if not w.timed
            else replace(
                w,
                start=min(max(w.start, start), end),  # type: ignore[type-var]
                end=min(max(w.end, start), end),
            )
            for w in words
        ]  # type: ignore[type-var]
        windows.append(WindowResult(f"win{index:03d}", start, end, drop_contradicting_times(clamped)[0]))
    config = SeamConfig(
        onset_tolerance=draw(st.sampled_from([0.1, 0.25])),
        max_onset_shift=1.0,
        context=0.5,
        fragment_overlap=0.5,
        edge_zone=draw(st.sampled_from([0.0, 2.0])),
        interior_times=draw(st.booleans()),
    )
    return windows, config, duration


@PROPERTY
@given(windowed())
def test_seam_reconciliation_keeps_a_valid_stream_for_any_window_layout(case) -> None:
    windows, config, duration = case
    for window in windows:
        assert problems(list(window.words), duration) == []
    merged, _ = reconcile(windows, config)
    assert problems(merged, duration) == []


# --- onset repair -------------------------------------------------------------------------------


@st.composite
def repair_case(draw: st.DrawFn) -> tuple[list[Word], list[tuple[float, float]], float, float]:
    words = draw(speech(duration=60.0, max_words=40))
    edges = sorted(set(draw(st.lists(st.floats(0.0, 60.0), max_size=16))))
    regions = [(a, b) for a, b in zip(edges[::2], edges[1::2]) if b > a]
    return words, regions, draw(st.floats(0.0, 1.0)), draw(st.floats(0.1, 2.0))


@PROPERTY
@given(repair_case())
def test_onset_repair_keeps_a_valid_stream(case) -> None:
    words, regions, min_pause, max_word = case
    repaired, _ = clamp_onsets(words, regions, min_pause, max_word)
    assert problems(repaired, 60.0) == []
    assert [w.text for w in repaired] == [w.text for w in words]


# --- +second model: combine (replace takes the second stream as it is) ----------------------------


@st.composite
def two_recognizers(draw: st.DrawFn) -> tuple[list[Word], list[Word]]:
    truth = draw(speech(duration=60.0, max_words=40))
    return draw(heard(truth, 60.0)), draw(heard(truth, 60.0))


@PROPERTY
@given(two_recognizers(), st.sampled_from([0.0, 0.5, 2.0]))
def test_combining_two_streams_of_the_same_speech_gives_a_valid_stream(case, collar: float) -> None:
    first, second = case
    merged, spans = combine_streams(first, second, ("a", "b"), pair_collar_s=collar)
    assert problems(merged, 60.0) == []
    ids = {id(w): "a" for w in first} | {id(w): "b" for w in second}
    assert all(id(w) in ids for w in merged)  # every word is one recognizer's, never made up
    for side, stream in (("a", first), ("b", second)):  # and each recognizer's words keep their order
        order = {id(w): n for n, w in enumerate(stream)}
        taken = [order[id(w)] for w in merged if ids[id(w)] == side]
        assert taken == sorted(taken)
    assert all(span["kept"] in ("a", "b") for span in spans)


def test_the_name_each_recognizer_split_differently_is_taken_once_in_order() -> None:
    """Seen on demo01 on an AVX-512 machine: "A Fernando Lima" against "afernando a Lima"."""
    first = [Word("A", 29.48, 29.84, 0.04), Word("Fernando", 29.84, 30.30, 0.56), Word("Lima", 30.40, 30.80, 0.91)]
    second = [Word("afernando", 29.62, 30.02, 0.38), Word("a", 30.02, 30.30, 0.35), Word("Lima", 30.40, 30.80, 0.93)]
    merged, spans = combine_streams(first, second, ("whisper_base", "whisper_base_greedy"), pair_collar_s=0.5)
    texts = [w.text for w in merged]
    assert problems(merged) == []
    assert ("Fernando" in texts) != ("afernando" in texts)
    assert texts[-1] == "Lima" and texts.count("Lima") == 1
    assert len(spans) == 1 and spans[0]["whisper_base"] == "A Fernando" and spans[0]["start"] == 29.48
