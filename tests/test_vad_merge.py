"""Cut & merge of Silero regions into decode units: WhisperX's merge, plus a pause limit, strictly configured."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.audio.vad import LIBRARY_DEFAULTS, merge_regions
from toolkit.core.errors import InputError
from toolkit.pipeline.runner import in_stream
from toolkit.pipeline.stages import VAD, VadStageConfig

REGIONS = [(1.0, 4.0), (4.5, 9.0), (9.2, 20.0), (26.0, 28.0), (29.0, 40.0), (41.0, 80.0), (81.0, 82.0)]


def test_regions_join_until_the_unit_would_pass_max_s() -> None:
    assert merge_regions(REGIONS, 30.0, 30.0) == [(1.0, 28.0), (29.0, 40.0), (41.0, 80.0), (81.0, 82.0)]


def test_a_long_pause_starts_a_new_unit() -> None:
    # 26-28 fits in 1-28, but the 6 s pause before it is over the limit: it starts a unit with 29-40.
    assert merge_regions(REGIONS, 30.0, 2.0) == [(1.0, 20.0), (26.0, 40.0), (41.0, 80.0), (81.0, 82.0)]


def test_zero_keeps_one_unit_per_region_and_nothing_is_an_error() -> None:
    assert merge_regions(REGIONS, 0.0, 30.0) == REGIONS
    assert merge_regions([], 30.0, 30.0) == []


def test_a_region_longer_than_max_s_is_a_unit_of_its_own_never_split() -> None:
    assert merge_regions([(0.0, 1.0), (1.5, 50.0), (50.5, 51.0)], 30.0, 30.0) == [(0.0, 1.0), (1.5, 50.0), (50.5, 51.0)]


@st.composite
def region_lists(draw) -> list[tuple[float, float]]:
    """Ordered, non-overlapping regions as Silero returns them (gaps may be zero)."""
    pieces = draw(st.lists(st.tuples(st.integers(0, 400), st.integers(1, 400)), max_size=40))
    regions, t = [], 0.0
    for gap, length in pieces:
        start = t + gap / 40
        t = start + length / 40
        regions.append((start, t))
    return regions


limits = st.sampled_from([0.0, 0.5, 2.0, 5.0, 10.0, 30.0])


@settings(max_examples=300, deadline=None)
@given(region_lists(), limits, limits)
def test_every_region_lands_whole_in_one_unit_within_the_limits(regions, max_s: float, max_gap_s: float) -> None:
    units = merge_regions(regions, max_s, max_gap_s)
    members = [[r for r in regions if u[0] <= r[0] and r[1] <= u[1]] for u in units]
    # Each region in exactly one unit, in order, and each unit spans its first region's start to its last's end.
    assert [r for group in members for r in group] == regions
    assert all(group and (group[0][0], group[-1][1]) == unit for unit, group in zip(units, members))
    for unit, group in zip(units, members):
        if len(group) > 1:
            assert unit[1] - unit[0] <= max_s
        assert all(b[0] - a[1] <= max_gap_s for a, b in zip(group, group[1:]))
    # Greedy: the first region of each unit could not have joined the unit before it.
    for before, group in zip(units, members[1:]):
        first = group[0]
        assert first[1] - before[0] > max_s or first[0] - before[1] > max_gap_s


@settings(max_examples=300, deadline=None)
@given(region_lists(), st.sampled_from([0.5, 2.0, 5.0, 10.0, 30.0]))
@pytest.mark.needs_model
def test_without_a_pause_limit_the_units_are_whisperx_chunks(regions, max_s: float) -> None:
    from whisperx.diarize import Segment
    from whisperx.vads import Vad

    if not regions:
        return
    chunks = Vad.merge_chunks([Segment(a, b, "UNKNOWN") for a, b in regions], max_s, onset=0.5, offset=None)
    assert merge_regions(regions, max_s, max_s) == [(c["start"], c["end"]) for c in chunks]


def _table(**changes) -> dict:
    return {
        **asdict(replace(LIBRARY_DEFAULTS, max_speech_duration_s=30.0)),
        "merge_max_s": 30.0,
        "merge_max_gap_s": 30.0,
        "join_units": False,
        "redecode_skipped_s": 0.0,
        **changes,
    }


def test_vad_stage_writes_out_the_merge_and_keeps_silero_apart() -> None:
    config = VAD.parse(_table(), path=Path("exp.toml"), where="components.vad")
    assert isinstance(config, VadStageConfig) and config.merge_max_s == 30.0
    assert config.silero() == replace(LIBRARY_DEFAULTS, max_speech_duration_s=30.0)
    # A merge change is a different stage identity, but the Silero regions it merges are the same.
    other = VAD.parse(_table(merge_max_gap_s=2.0), path=Path("exp.toml"), where="components.vad")
    assert asdict(other) != asdict(config) and other.silero() == config.silero()


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"merge_max_s": None}, "missing merge_max_s"),
        ({"merge_max_gap_s": None}, "missing merge_max_gap_s"),
        ({"merge_max_s": -1.0}, "must not be negative"),
        ({"merge_max_gap_s": -0.5}, "must not be negative"),
        ({"merge_max_s": "30"}, "merge_max_s must be a number"),
        ({"merge_max_s": 20.0}, "max_speech_duration_s 30.0 must not exceed merge_max_s 20.0"),
        ({"merge_max": 20.0}, "unknown parameter"),
    ],
)
def test_bad_merge_settings_are_refused(changes: dict, message: str) -> None:
    table = {k: v for k, v in _table(**changes).items() if v is not None}
    with pytest.raises(InputError, match=message):
        VAD.parse(table, path=Path("exp.toml"), where="components.vad")


def test_no_merge_allows_any_region_length() -> None:
    config = VAD.parse(
        _table(merge_max_s=0.0, max_speech_duration_s=60.0), path=Path("exp.toml"), where="components.vad"
    )
    assert merge_regions([(0.0, 59.0), (59.5, 60.0)], config.merge_max_s, config.merge_max_gap_s) == [
        (0.0, 59.0),
        (59.5, 60.0),
    ]


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 10)), max_size=8), st.integers(1, 4))
def test_a_pause_pass_cut_into_a_joined_stream_keeps_exactly_the_overlaps(spans, count) -> None:
    """Regions of the prepared signal, in the seconds of the stream of pieces put back to back: each stays within
    the piece it overlaps, keeps exactly its overlap's length, and nothing lands outside the stream."""
    regions = sorted((a, a + length) for a, length in spans)
    pieces = [(20.0 * i + 3.0, 20.0 * i + 15.0) for i in range(count)]
    found = in_stream(regions, pieces)
    overlaps = [min(b, e) - max(a, s) for s, e in pieces for a, b in regions if b > s and a < e]
    assert [round(b - a, 9) for a, b in found] == [round(x, 9) for x in overlaps]
    assert all(0.0 <= a <= b <= 12.0 * count + 1e-9 for a, b in found)
