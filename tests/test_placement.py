"""Windows placed in VAD pauses: edges in pauses (else on the grid, said so), full coverage, overlap kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from demo_variant import DEMO, demo_variant
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.audio.vad import LIBRARY_DEFAULTS
from toolkit.core.errors import InputError, ToolkitError
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.stages import WINDOWS
from toolkit.pipeline.windows import (
    EDGE,
    GRID,
    NO_PAUSE,
    PAUSE,
    SHORT_PAUSE,
    PauseConfig,
    pauses,
    plan_pause_windows,
)

CONFIG = PauseConfig(search_s=4.0, min_pause_s=0.3, edge_silence_s=0.5, vad=LIBRARY_DEFAULTS)


def _speech(duration: float, sentence: float = 5.0, pause: float = 2.1) -> list[tuple[float, float]]:
    """Sentences of ``sentence`` seconds separated by ``pause`` seconds, from 0.7 s on."""
    regions, t = [], 0.7
    while t < duration:
        regions.append((round(t, 6), round(min(t + sentence, duration), 6)))
        t += sentence + pause
    return regions


def _inside_speech(t: float, speech: list[tuple[float, float]]) -> bool:
    return any(a < t < b for a, b in speech)


def _check_layout(windows, duration: float, length: float, overlap: float, search: float) -> None:
    """Whole recording covered, each window at most ``length``, neighbours sharing at least overlap - search."""
    assert windows[0].start == 0.0 and windows[-1].end == duration
    assert windows[0].start_at == EDGE and windows[-1].end_at == EDGE
    for w in windows:
        assert 0 < w.end - w.start <= length + 1e-9
    for prev, nxt in zip(windows, windows[1:]):
        assert prev.start < nxt.start and nxt.start <= prev.end - (overlap - search) + 1e-9
        assert prev.end < nxt.end
    for first, third in zip(windows, windows[2:]):
        assert third.start >= first.end  # at most two windows cover any instant


def test_every_inner_edge_falls_in_a_pause_near_the_speech_it_opens_or_closes() -> None:
    duration = 200.0
    speech = _speech(duration)
    windows = plan_pause_windows(duration, 30.0, 5.0, 0.0, speech, CONFIG)
    _check_layout(windows, duration, 30.0, 5.0, 4.0)
    gaps = pauses(speech, duration, 0.3)
    for w in windows[1:]:
        assert w.start_at == PAUSE and not _inside_speech(w.start, speech)
        # a start keeps at most edge_silence_s of pause before the speech it opens
        assert any(b - 0.5 - 1e-9 <= w.start <= b for a, b in gaps)
    for w in windows[:-1]:
        assert w.end_at == PAUSE and not _inside_speech(w.end, speech)
        assert any(a <= w.end <= a + 0.5 + 1e-9 for a, b in gaps)
    assert len(windows) > 7  # 200 s in windows of at most 30 s sharing about 5 s


def test_a_boundary_with_no_pause_in_range_stays_on_its_grid_target_and_says_so() -> None:
    # Speech without any pause from 20 s to 70 s: the first window's end (range [26, 30] s) and the
    # second window's start (range [21, 29] s around 25 s) find no pause and stay at their targets.
    speech = [(0.5, 10.0), (12.0, 70.0), (72.0, 90.0)]
    windows = plan_pause_windows(90.0, 30.0, 5.0, 0.0, speech, CONFIG)
    _check_layout(windows, 90.0, 30.0, 5.0, 4.0)
    assert (windows[0].end, windows[0].end_at) == (30.0, GRID)
    assert (windows[1].start, windows[1].start_at) == (25.0, GRID)
    # Its end aims at 55 s: still speech, so the grid again, and so on until the pause at 70-72 s,
    # where the fourth window opens (nearest its target of 75 s: the end of that pause).
    assert [(w.start, w.start_at) for w in windows[1:]] == [(25.0, GRID), (50.0, GRID), (72.0, PAUSE)]
    assert [(w.end, w.end_at) for w in windows] == [(30.0, GRID), (55.0, GRID), (80.0, GRID), (90.0, EDGE)]
    # Each grid edge says why: speech throughout its range.
    assert [w.end_reason for w in windows] == [NO_PAUSE, NO_PAUSE, NO_PAUSE, ""]
    assert windows[1].to_json() == {
        "start_at": GRID,
        "end_at": GRID,
        "start_reason": NO_PAUSE,
        "end_reason": NO_PAUSE,
    }
    assert windows[3].to_json() == {"start_at": PAUSE, "end_at": EDGE}


def test_a_grid_edge_with_only_a_short_gap_in_reach_says_the_pauses_were_too_short() -> None:
    # A 0.2 s gap at 27.9-28.1 s lies in the first end's range [26, 30] s but is shorter than min_pause_s
    # (0.3 s); the next start's range [21, 29] s holds it too. The third window's end (aim 55 s) has none.
    speech = [(0.5, 27.9), (28.1, 70.0), (72.0, 90.0)]
    windows = plan_pause_windows(90.0, 30.0, 5.0, 0.0, speech, CONFIG)
    assert (windows[0].end, windows[0].end_at, windows[0].end_reason) == (30.0, GRID, SHORT_PAUSE)
    assert (windows[1].start, windows[1].start_at, windows[1].start_reason) == (25.0, GRID, SHORT_PAUSE)
    assert (windows[1].end, windows[1].end_reason) == (55.0, NO_PAUSE)
    # The same gap is a pause once min_pause_s allows it: the end moves into it (28.1 s, nearest its aim);
    # the next start, now aimed at 23.1 s (range [19.1, 27.1] s), has no gap at all within reach.
    relaxed = plan_pause_windows(90.0, 30.0, 5.0, 0.0, speech, PauseConfig(4.0, 0.2, 0.5, LIBRARY_DEFAULTS))
    assert (relaxed[0].end, relaxed[0].end_at) == (28.1, PAUSE)
    assert (relaxed[1].start, relaxed[1].start_at, relaxed[1].start_reason) == (23.1, GRID, NO_PAUSE)


def test_short_gaps_are_not_pauses_and_a_silent_recording_keeps_the_grid_lengths() -> None:
    speech = [(0.0, 10.0), (10.2, 20.0), (21.0, 40.0)]
    assert pauses(speech, 45.0, 0.3) == [(20.0, 21.0), (40.0, 45.0)]
    assert pauses([], 45.0, 0.3) == [(0.0, 45.0)]
    # Without speech the whole recording is one pause: every edge stays at its target, in the pause.
    windows = plan_pause_windows(100.0, 30.0, 5.0, 0.0, [], CONFIG)
    _check_layout(windows, 100.0, 30.0, 5.0, 4.0)
    assert [(w.start, w.end, w.end_at) for w in windows][:2] == [(0.0, 30.0, PAUSE), (25.0, 55.0, PAUSE)]
    # A pause too far from the speech edges is still a pause: the end stays at 30 s, inside it.
    windows = plan_pause_windows(60.0, 30.0, 5.0, 0.0, [(0.5, 20.0), (40.0, 59.0)], CONFIG)
    assert (windows[0].end, windows[0].end_at) == (30.0, PAUSE)


def test_a_shifted_origin_aims_the_first_window_at_origin_plus_overlap() -> None:
    speech = _speech(120.0)
    windows = plan_pause_windows(120.0, 30.0, 5.0, 9.0, speech, CONFIG)
    _check_layout(windows, 120.0, 30.0, 5.0, 4.0)
    assert 14.0 - 4.0 <= windows[0].end <= 14.0
    assert plan_pause_windows(20.0, 30.0, 5.0, 0.0, speech, CONFIG)[0].end == 20.0  # one window, whole recording


def test_layout_that_cannot_keep_the_overlap_is_refused() -> None:
    with pytest.raises(ToolkitError, match="search_s .* must be smaller than overlap_s"):
        plan_pause_windows(100.0, 30.0, 5.0, 0.0, [], PauseConfig(5.0, 0.3, 0.5, LIBRARY_DEFAULTS))
    with pytest.raises(ToolkitError, match="at least 2 \\* overlap_s \\+ search_s"):
        plan_pause_windows(100.0, 12.0, 5.0, 0.0, [], CONFIG)
    with pytest.raises(ValueError, match="edge_silence_s must be positive"):
        PauseConfig(4.0, 0.3, 0.0, LIBRARY_DEFAULTS)


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("search_s = 4.0", "search_s = 5.0", r"\[components.windows\] search_s \(5.0\) must be smaller than overlap_s"),
        (
            "min_pause_s = 0.3\n",
            "",
            r"\[components.windows.pauses\] must write out every parameter; missing min_pause_s",
        ),
        ("min_pause_s = 0.3", "min_pause_s = 0.3\nmargin_s = 1.0", r"\[components.windows.pauses\] has unknown"),
        (
            "edge_silence_s = 1.0",
            'edge_silence_s = "short"',
            r"components.windows.pauses.edge_silence_s must be a number",
        ),
        (
            '# The Silero pass that finds the pauses.\nvad_profile = "demo"\n',
            "",
            r"needs a \[components.windows.pauses\] table with its \[components.windows.pauses.vad\] Silero",
        ),
        ('placement = "vad_pauses"', 'placement = "silence"', r"components.windows.placement must be one of"),
        ('placement = "vad_pauses"', 'placement = "grid"', r"\[components.windows.pauses\] applies only to placement"),
        (
            "[components.windows.pauses]",
            "[components.windows.other]",
            r'placement = "vad_pauses" needs a \[components.windows.pauses\] table',
        ),
    ],
)
def test_windows_placement_parameters_are_checked_in_one_line(tmp_path: Path, old: str, new: str, message: str) -> None:
    path = demo_variant(tmp_path, old, new)
    with pytest.raises(InputError, match=message) as error:
        load_experiment(path)
    assert str(error.value).startswith(str(path)) and "\n" not in str(error.value)


def test_the_grid_needs_no_pauses_table_and_vad_pauses_cannot_do_without(tmp_path: Path) -> None:
    text = DEMO.read_text(encoding="utf-8")
    text = (
        text[: text.index("[components.windows.pauses]")]
        + text[text.index("# Onset repair (toolkit/pipeline/onset_repair.py)") :]
    )
    path = tmp_path / "experiment.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=r"needs a \[components.windows.pauses\] table"):
        load_experiment(path)
    path.write_text(text.replace('placement = "vad_pauses"', 'placement = "grid"'), encoding="utf-8")
    config = load_experiment(path).arms["windows"].config(WINDOWS)
    assert (config.placement, config.pauses) == ("grid", None)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.floats(0.1, 12.0), st.floats(0.0, 4.0)), min_size=0, max_size=40),
    st.floats(10.0, 400.0),
    st.floats(0.0, 0.99),
)
def test_any_speech_layout_is_covered_with_edges_in_pauses_or_said_to_be_on_the_grid(
    turns: list[tuple[float, float]], duration: float, origin_share: float
) -> None:
    speech, t = [], 0.0
    for talk, pause in turns:  # alternating speech and silence from the start
        if t >= duration:
            break
        speech.append((round(t, 6), round(min(t + talk, duration), 6)))
        t += talk + pause
    origin = round(origin_share * 25.0, 3)
    windows = plan_pause_windows(duration, 30.0, 5.0, origin, speech, CONFIG)
    _check_layout(windows, duration, 30.0, 5.0, 4.0)
    short = [(a, b) for a, b in pauses(speech, duration, 0.0) if b - a < 0.3]
    for w in windows:
        for edge, where, reason in ((w.start, w.start_at, w.start_reason), (w.end, w.end_at, w.end_reason)):
            assert bool(reason) == (where == GRID)  # a grid edge, and only a grid edge, says why
            assert w.to_json().get("start_reason" if edge == w.start else "end_reason", reason) == reason
            if where == PAUSE:
                assert not _inside_speech(edge, speech)
                assert any(a <= edge <= b for a, b in pauses(speech, duration, 0.3))
            elif where == EDGE:
                assert edge in (0.0, duration)
            elif reason == NO_PAUSE:  # no gap at all in its range, so it lies in speech
                assert not any(a < edge < b for a, b in pauses(speech, duration, 0.0))
            else:  # a gap too short lies in its range (at most the search range on either side)
                assert reason == SHORT_PAUSE
                assert any(a <= edge + 2 * CONFIG.search_s and b >= edge - 2 * CONFIG.search_s for a, b in short)
