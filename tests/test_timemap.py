"""Time maps: property tests for composition, inverses and each transform, and a known event traced
through resampling, cutting, padding and an enhancer delay back to its original time."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from toolkit.audio.signal import Signal, crop, cut, delayed, pad, resample
from toolkit.audio.timemap import Piece, TimeMap

seconds = st.floats(0.0, 500.0, allow_nan=False, allow_infinity=False)
positive = st.floats(0.01, 500.0, allow_nan=False, allow_infinity=False)
rates = st.sampled_from([0.5, 1.0, 1.0, 1.0, 2.0, 0.9, 1.1])


@st.composite
def regions(draw: st.DrawFn, min_size: int = 1) -> list[tuple[float, float]]:
    """Sorted, disjoint origin regions as a cut would take them."""
    bounds = sorted(set(draw(st.lists(seconds, min_size=2 * min_size, max_size=12))))
    assume(len(bounds) >= 2)
    pairs = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds) - 1, 2)]
    pairs = [(a, b) for a, b in pairs if b - a > 1e-3]
    assume(len(pairs) >= min_size)
    return pairs


@st.composite
def maps(draw: st.DrawFn) -> TimeMap:
    """Monotonic piecewise-linear maps with gaps on both sides and any rates."""
    count = draw(st.integers(1, 5))
    pieces, start, origin = [], draw(st.floats(0, 5)), draw(st.floats(0, 5))
    for _ in range(count):
        length, rate = draw(st.floats(0.01, 50)), draw(rates)
        pieces.append(Piece(start, start + length, origin, rate))
        start += length + draw(st.sampled_from([0.0, 0.0, draw(st.floats(0.01, 5))]))
        origin += length * rate + draw(st.sampled_from([0.0, 0.0, draw(st.floats(0.01, 5))]))
    return TimeMap(pieces)


def interior(timemap: TimeMap, fraction: float) -> float:
    """A derived time inside some piece (away from its edges)."""
    index = min(int(fraction * len(timemap.pieces)), len(timemap.pieces) - 1)
    piece = timemap.pieces[index]
    local = (fraction * len(timemap.pieces)) % 1
    return piece.start + (0.05 + 0.9 * local) * (piece.end - piece.start)


fractions = st.floats(0, 0.999)


@settings(max_examples=200, deadline=None)
@given(maps(), fractions)
def test_inverse_round_trip(timemap: TimeMap, fraction: float) -> None:
    t = interior(timemap, fraction)
    origin = timemap(t)
    assert origin is not None
    assert timemap.inverse()(origin) == pytest.approx(t, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(maps())
def test_inverse_of_inverse_and_json_round_trip(timemap: TimeMap) -> None:
    twice = timemap.inverse().inverse()
    assert len(twice.pieces) == len(timemap.pieces)
    for mine, theirs in zip(timemap.pieces, twice.pieces):
        assert (theirs.start, theirs.end, theirs.origin, theirs.rate) == pytest.approx(
            (mine.start, mine.end, mine.origin, mine.rate), abs=1e-9
        )
    assert TimeMap.from_json(timemap.to_json()) == timemap


@settings(max_examples=200, deadline=None)
@given(maps(), maps(), fractions)
def test_composition_equals_applying_in_turn(inner: TimeMap, outer: TimeMap, fraction: float) -> None:
    composed = inner.then(outer)
    t = interior(inner, fraction)
    middle = inner(t)
    assert middle is not None
    expected = outer(middle)
    got = composed(t)
    if expected is None:
        assert got is None
    elif got is None:  # only possible on the very edge of one of outer's pieces
        assert any(abs(middle - edge) < 1e-6 for p in outer.pieces for edge in (p.start, p.end))
    else:
        assert got == pytest.approx(expected, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(maps(), maps(), maps(), fractions)
def test_composition_is_associative(a: TimeMap, b: TimeMap, c: TimeMap, fraction: float) -> None:
    left, right = a.then(b).then(c), a.then(b.then(c))
    t = interior(a, fraction)
    first, second = left(t), right(t)
    assert (first is None) == (second is None)
    if first is not None:
        assert first == pytest.approx(second, abs=1e-6)


@settings(max_examples=100, deadline=None)
@given(maps(), fractions)
def test_composed_with_own_inverse_is_identity_on_its_pieces(timemap: TimeMap, fraction: float) -> None:
    t = interior(timemap, fraction)
    assert timemap.then(timemap.inverse())(t) == pytest.approx(t, abs=1e-6)


@settings(max_examples=200, deadline=None)
@given(regions(), fractions)
def test_cut_maps_each_kept_region_back(kept: list[tuple[float, float]], fraction: float) -> None:
    timemap = TimeMap.cut(kept)
    assert timemap.duration == pytest.approx(sum(b - a for a, b in kept))
    cursor = 0.0
    for start, end in kept:
        t = cursor + fraction * (end - start)
        assert timemap(t) == pytest.approx(start + fraction * (end - start), abs=1e-6)
        cursor += end - start
    gap_times = [(b + c) / 2 for (_, b), (c, _) in zip(kept, kept[1:]) if c - b > 1e-3]
    for origin in gap_times:  # removed audio has no derived time
        assert timemap.inverse()(origin) is None


@settings(max_examples=200, deadline=None)
@given(st.floats(0.001, 10), positive, st.floats(0, 1))
def test_pad_maps_padding_to_nothing(lead: float, duration: float, fraction: float) -> None:
    timemap = TimeMap.pad(lead, duration)
    assert timemap(lead * fraction * 0.99) is None
    assert timemap(lead + fraction * duration) == pytest.approx(fraction * duration)
    assert timemap(lead + duration + 0.5) is None
    assert timemap(lead * 0.5, tolerance=lead) == 0.0  # snapped to the edge only when asked


@settings(max_examples=200, deadline=None)
@given(st.floats(-2, 2), st.floats(3, 100), st.floats(0, 1))
def test_delay_and_shift(delay: float, duration: float, fraction: float) -> None:
    timemap = TimeMap.delay(delay, duration)
    t = max(delay, 0) + fraction * (duration - max(delay, 0))
    assert timemap(t) == pytest.approx(t - delay, abs=1e-9)
    if delay > 1e-3:
        assert timemap(delay / 2) is None
    shift = TimeMap.shift(delay + 5, duration)
    assert shift(fraction * duration) == pytest.approx(delay + 5 + fraction * duration)
    assert shift.inverse()(delay + 5 + fraction * duration) == pytest.approx(fraction * duration)


def test_invalid_maps_are_refused() -> None:
    with pytest.raises(ValueError, match="overlap"):
        TimeMap([Piece(0, 2, 0), Piece(1, 3, 5)])
    with pytest.raises(ValueError, match="not monotonic"):
        TimeMap.cut([(5, 6), (1, 2)])
    with pytest.raises(ValueError, match="ends before it starts"):
        TimeMap.cut([(2, 1)])
    assert TimeMap([])(1.0) is None


@settings(max_examples=30, deadline=None)
# Pieces are [start, end), and a time within the map's 1e-9 s tolerance of a cut belongs to the next piece.
@given(regions(), st.floats(0, 1), st.floats(0, 1 - 1e-6))
def test_signal_transforms_compose_their_maps(kept: list[tuple[float, float]], lead: float, fraction: float) -> None:
    rate = 1000
    original = Signal.original(np.zeros(int(501 * rate), dtype=np.float32), rate)
    snapped = [(round(a * rate) / rate, round(b * rate) / rate) for a, b in kept]
    snapped = [(a, b) for a, b in snapped if b > a]
    assume(snapped)
    derived = pad(cut(original, snapped), lead)
    lead_s = round(lead * rate) / rate
    cursor = lead_s
    for start, end in snapped:
        t = cursor + fraction * (end - start)
        assert derived.timemap(t) == pytest.approx(start + fraction * (end - start), abs=1e-6)
        cursor += end - start
    assert derived.duration == pytest.approx(cursor)


def test_a_click_is_found_at_its_original_time_after_resample_cut_pad_and_delay() -> None:
    source_rate, click_at = 44100, 7.3215
    samples = np.random.default_rng(7).normal(0, 0.01, 12 * source_rate).astype(np.float32)
    samples[round(click_at * source_rate)] = 1.0
    original = Signal.original(samples, source_rate)

    at_16k = resample(original, 16000)
    trimmed = cut(at_16k, [(0.5, 2.0), (4.0, 5.5), (6.8, 9.1), (10.0, 11.0)])
    window = crop(trimmed, 2.2, 5.0)
    padded = pad(window, 0.37, 0.25)
    lag = 0.0125
    lagged_samples = np.concatenate([np.zeros(round(lag * 16000), dtype=np.float32), padded.samples])
    enhanced = delayed(padded, lagged_samples[: len(padded.samples)], lag)

    for signal in (at_16k, trimmed, window, padded, enhanced):
        found = int(np.argmax(np.abs(signal.samples))) / signal.sample_rate
        assert signal.timemap(found) == pytest.approx(click_at, abs=1.5 / 16000)
        assert signal.timemap.inverse()(click_at) == pytest.approx(found, abs=1.5 / 16000)
    assert padded.timemap(0.1) is None  # padding has no original time
    assert enhanced.timemap(lag / 2) is None


def test_origin_span_is_the_stretch_of_origin_a_chain_covers() -> None:
    chain = TimeMap.delay(0.4, 10.0).then(TimeMap.shift(30.0, 10.0)).then(TimeMap.pad(2.0, 60.0))
    assert chain.origin_span == pytest.approx((28.0, 37.6))
    assert TimeMap([]).origin_span is None


@settings(max_examples=300, deadline=None)
@given(maps(), fractions, st.floats(-2.0, 2.0), st.floats(0.0, 8.0))
def test_a_span_maps_whole_into_one_run_of_pieces(
    timemap: TimeMap, fraction: float, shift: float, length: float
) -> None:
    """Any derived interval (a word, timed a little off) maps into the one run of pieces nearest its midpoint:
    in order, never over the origin time between two runs, exactly as each time's own map where it lies inside."""
    start = interior(timemap, fraction) + shift
    mapped = timemap.span(start, start + length)
    assert mapped is not None
    low, high = mapped
    assert low <= high + 1e-9
    runs = timemap._runs
    assert any(run[0].origin - 1e-9 <= low and high <= run[-1].origin_end + 1e-9 for run in runs)
    for t, origin in ((start, low), (start + length, high)):
        holder = [run for run in runs if run[0].start + 1e-6 < t < run[-1].end - 1e-6]
        middle = start + length / 2
        if holder and holder[0][0].start <= middle <= holder[0][-1].end:
            assert origin == pytest.approx(timemap(t), abs=1e-6)


def test_a_word_across_the_join_of_a_cut_stays_on_one_side() -> None:
    """Regions 10-14 s and 30-34 s back to back: a word timed 3.7-4.5 s (across the join at 4 s) has most
    of itself after the join, so it maps into the second region, starting at its start, not at 13.7 s."""
    timemap = TimeMap.cut([(10.0, 14.0), (30.0, 34.0)])
    assert timemap.span(3.7, 4.5) == pytest.approx((30.0, 30.5))
    assert timemap.span(3.5, 4.1) == pytest.approx((13.5, 14.0))
    assert timemap.span(1.0, 2.0) == pytest.approx((11.0, 12.0))
    assert (timemap(3.7), timemap(4.5)) == pytest.approx((13.7, 30.5))  # time by time: over 16 s of dropped audio
    assert TimeMap([]).span(0.0, 1.0) is None


def test_a_segments_first_word_across_a_join_goes_after_it_and_its_last_word_before() -> None:
    """Whisper starts a segment's first word early and ends its last word late: across the join of a cut that
    slip is the dropped pause, so the lean, not the midpoint, says which side the word is on."""
    timemap = TimeMap.cut([(10.0, 14.0), (30.0, 34.0)])
    assert timemap.span(3.5, 4.1, "later") == pytest.approx((30.0, 30.1))  # the midpoint lies before the join
    assert timemap.span(3.7, 4.5, "earlier") == pytest.approx((13.7, 14.0))  # the midpoint lies after it
    assert timemap.span(3.0, 4.0, "later") == pytest.approx((13.0, 14.0))  # ends on the join: not across it
    assert timemap.span(4.0, 4.4, "earlier") == pytest.approx((30.0, 30.4))  # starts on it: not across it


@settings(max_examples=300, deadline=None)
@given(maps(), fractions, st.floats(-2.0, 2.0), st.floats(0.0, 8.0), st.sampled_from(["earlier", "later"]))
def test_a_leaning_span_maps_whole_into_the_run_it_leans_to(
    timemap: TimeMap, fraction: float, shift: float, length: float, lean: str
) -> None:
    """Any interval across a join maps whole, in order, into the run on its ``lean`` side (the run its end lies
    in, or its start); one inside a run maps as it does without a lean."""
    start = interior(timemap, fraction) + shift
    end = start + length
    mapped, plain = timemap.span(start, end, lean), timemap.span(start, end)  # type: ignore[arg-type]
    assert mapped is not None and plain is not None
    runs = timemap._runs
    first = max(i for i, run in enumerate(runs) if run[0].start <= start or i == 0)
    last = max(i for i, run in enumerate(runs) if run[0].start < end or i == 0)
    if first >= last:
        assert mapped == plain
        return
    run = runs[last] if lean == "later" else runs[first]
    assert run[0].origin - 1e-9 <= mapped[0] <= mapped[1] <= run[-1].origin_end + 1e-9


def test_segment_edges_lean_each_segments_first_word_later_and_last_word_earlier() -> None:
    from toolkit.core.transcripts import Word
    from toolkit.pipeline.runner import segment_edges

    words = [Word(t, 0.0, 1.0, segment_id=s) for t, s in [("a", "s1"), ("b", "s1"), ("c", "s1"), ("d", "s2")]]
    assert segment_edges(words) == ["later", None, "earlier", None]
    assert segment_edges([]) == []
