"""Seam reconciliation on constructed word sequences, and window layout with shifted origins."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import overlap_too_much
from toolkit.pipeline.seam_records import SeamConfig, WindowResult
from toolkit.pipeline.seams import reconcile
from toolkit.pipeline.windows import plan_windows

# Two windows [0, 30] and [25, 55] share [25, 30].
A, B = 25.0, 30.0


def w(text: str, start: float | None, duration: float = 0.3) -> Word:
    return Word(text, start, None if start is None else round(start + duration, 6))


def seam(left: list[Word], right: list[Word], config: SeamConfig = SeamConfig()):
    merged, reports = reconcile([WindowResult("w0", 0.0, B, left), WindowResult("w1", A, 55.0, right)], config)
    assert len(reports) == 1
    return merged, reports[0]


def texts(words: list[Word]) -> list[str]:
    return [x.text for x in words]


def test_same_words_seen_by_both_windows_appear_once():
    left = [w("olá", 10.0), w("bom", 26.0), w("dia", 26.4), w("pessoal", 27.0), w("tudo", 28.0)]
    right = [w("bom", 26.05), w("dia", 26.42), w("pessoal", 27.02), w("tudo", 28.03), w("bem", 40.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["olá", "bom", "dia", "pessoal", "tudo", "bem"]
    assert len(report.dropped) == 4 and {d.reason for d in report.dropped} == {"duplicate"}
    assert not report.flags
    # The cut is the agreeing pair nearest the middle of [25, 30]: "pessoal".
    assert report.cut_time in (27.0, 27.02)
    assert A <= report.cut_time <= B


def test_punctuation_and_case_do_not_prevent_a_match():
    merged, _ = seam([w("Olá,", 26.0)], [w("olá", 26.1)])
    assert len(merged) == 1


def test_word_cut_at_the_left_windows_end_is_taken_from_the_right_window():
    # "conversar" spans 29.7-30.4: the left window (ends at 30) hears a truncated "conver".
    left = [w("vamos", 29.0), Word("conver", 29.7, 30.0)]
    right = [w("vamos", 29.02), Word("conversar", 29.7, 30.4), w("amanhã", 30.6)]
    merged, report = seam(left, right)
    assert texts(merged) == ["vamos", "conversar", "amanhã"]
    assert [(d.side, d.word.text, d.reason) for d in report.dropped if d.reason != "duplicate"] == [
        ("left", "conver", "edge_fragment")
    ]
    assert not report.flags


def test_word_cut_at_the_right_windows_start_is_taken_from_the_left_window():
    # "amanhã" spans 24.8-25.3: the right window (starts at 25) hears only "manhã".
    left = [Word("amanhã", 24.8, 25.3), w("cedo", 25.6)]
    right = [Word("manhã", 25.0, 25.3), w("cedo", 25.62), w("saímos", 26.2)]
    merged, report = seam(left, right)
    assert texts(merged) == ["amanhã", "cedo", "saímos"]
    assert ("right", "manhã", "edge_fragment") in [(d.side, d.word.text, d.reason) for d in report.dropped]


def test_edge_fragment_without_any_matching_word_is_dropped():
    merged, report = seam([w("olá", 5.0), Word("conver", 29.7, 30.0)], [Word("conversar", 29.7, 30.4)])
    assert texts(merged) == ["olá", "conversar"]
    assert [(d.side, d.reason) for d in report.dropped] == [("left", "edge_fragment")]
    assert report.empty_side is None


def test_genuine_repetition_across_the_seam_survives():
    left = [w("não", 24.0), w("não", 26.0), w("não", 26.4), w("não", 26.8), w("sei", 27.2)]
    right = [w("não", 26.02), w("não", 26.41), w("não", 26.83), w("sei", 27.2), w("não", 33.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["não"] * 4 + ["sei", "não"]
    assert [x.start for x in merged if x.text == "não"][:4] == [24.0, 26.0, 26.4, 26.8]
    assert len(report.dropped) == 4


def test_repetition_seen_by_both_windows_at_the_same_times_is_kept_three_times():
    left = [w("não", 27.0), w("não", 27.4), w("não", 27.8)]
    right = [w("não", 27.0), w("não", 27.4), w("não", 27.8)]
    merged, _ = seam(left, right)
    assert [(x.text, x.start) for x in merged] == [("não", 27.0), ("não", 27.4), ("não", 27.8)]


def test_repetitions_are_paired_by_time_not_by_text():
    # The right window misses the first "não"; a text-only alignment would pair the wrong copies.
    left = [w("não", 27.0), w("não", 27.4), w("não", 27.8)]
    right = [w("não", 27.4), w("não", 27.8)]
    config = SeamConfig(onset_tolerance=0.1, max_onset_shift=0.3)
    merged, report = seam(left, right, config)
    assert [x.start for x in merged] == [27.0, 27.4, 27.8]
    assert not report.flags


def test_word_heard_by_one_window_only_is_dropped_at_the_cut_and_flagged():
    left = [w("não", 27.4), w("não", 27.8)]
    right = [w("não", 27.0), w("não", 27.4), w("não", 27.8)]
    merged, report = seam(left, right, SeamConfig(onset_tolerance=0.1, max_onset_shift=0.3))
    assert [x.start for x in merged] == [27.4, 27.8]  # never two copies of one occurrence
    assert [(d.side, d.word.start, d.reason) for d in report.dropped if d.reason != "duplicate"] == [
        ("right", 27.0, "before_cut")
    ]
    assert [f.kind for f in report.flags] == ["disagreement"]


def test_left_side_empty_keeps_right_words_and_flags():
    merged, report = seam([w("olá", 10.0)], [w("bom", 26.0), w("dia", 26.4), w("fim", 40.0)])
    assert texts(merged) == ["olá", "bom", "dia", "fim"]
    assert report.empty_side == "left"
    assert [f.kind for f in report.flags] == ["empty_side"]
    assert texts(report.kept_right) == ["bom", "dia"]


def test_right_side_empty_keeps_left_words_and_flags():
    merged, report = seam([w("bom", 26.0), w("dia", 29.5)], [w("fim", 40.0)])
    assert texts(merged) == ["bom", "dia", "fim"]
    assert report.empty_side == "right" and report.cut_time == B


def test_both_sides_empty_is_a_quiet_seam():
    merged, report = seam([w("olá", 10.0)], [w("fim", 40.0)])
    assert texts(merged) == ["olá", "fim"]
    assert not report.flags and not report.dropped and report.empty_side is None


def test_timing_disagreement_keeps_one_copy_and_is_flagged():
    left = [w("bom", 26.0), w("dia", 26.3)]
    right = [w("bom", 26.6), w("dia", 26.9)]
    merged, report = seam(left, right)
    assert texts(merged) == ["bom", "dia"]
    kinds = [f.kind for f in report.flags]
    assert kinds.count("timing") == 2 and "no_agreement" in kinds
    # Deterministic: the cut pair's copy farther from its window's edge (here the left one) is kept.
    assert [x.start for x in merged] == [26.0, 26.3]
    assert seam(left, right)[0] == merged


def test_no_matching_words_cuts_in_the_common_pause():
    left = [w("uma", 25.5), w("coisa", 26.0), w("xxx", 29.0)]
    right = [w("yyy", 25.6), w("outra", 28.5), w("fala", 29.2)]
    merged, report = seam(left, right)
    assert texts(merged) == ["uma", "coisa", "outra", "fala"]
    assert 26.3 <= report.cut_time <= 28.5
    assert "no_agreement" in [f.kind for f in report.flags]


def test_untimed_words_in_the_seam_are_kept_in_order_and_flagged():
    left = [w("olá", 10.0), w("bom", 26.0), Word("hum"), w("dia", 26.4)]
    right = [w("bom", 26.02), w("dia", 26.41), Word("é"), w("isso", 27.5)]
    merged, report = seam(left, right)
    assert texts(merged) == ["olá", "bom", "hum", "dia", "é", "isso"]
    untimed = [f for f in report.flags if f.kind == "untimed"]
    assert [(texts(list(f.left)), texts(list(f.right))) for f in untimed] == [(["hum"], []), ([], ["é"])]


def test_untimed_word_far_from_the_seam_is_not_flagged():
    merged, report = seam([Word("ah"), w("olá", 10.0), w("bom", 26.0)], [w("bom", 26.0)])
    assert texts(merged) == ["ah", "olá", "bom"]
    assert not report.flags


def test_reports_serialize_to_json():
    _, report = seam([w("bom", 26.0), w("xx", 29.6)], [w("bom", 26.0), Word("hum")])
    data = report.to_json()
    assert data["left_window"] == "w0" and data["start"] == A and data["end"] == B
    assert {"kept_left", "kept_right", "dropped", "flags", "cut_time", "review"} <= set(data)


def _outside_words(draw, lo: float, hi: float, prefix: str) -> list[Word]:
    points = sorted(draw(st.lists(st.floats(lo, hi, allow_nan=False), max_size=12, unique=True)))
    vocab = ["não", "sim", "é", "isso", "bom"]
    return [
        Word(draw(st.sampled_from(vocab)), s, e, segment_id=f"{prefix}{i}")
        for i, (s, e) in enumerate(zip(points[::2], points[1::2]))
    ]


@st.composite
def seam_case(draw):
    vocab = st.sampled_from(["não", "sim", "é", "isso", "bom"])
    left_out = _outside_words(draw, 0.0, A - 0.001, "L")
    right_out = _outside_words(draw, B + 0.001, 55.0, "R")
    # A straddler on each side: interior to its own window, crossing the shared interval's edge.
    if draw(st.booleans()):
        left_out.append(Word(draw(vocab), A - 0.0005, draw(st.floats(A, B)), segment_id="Lx"))
    if draw(st.booleans()):
        right_out.insert(0, Word(draw(vocab), draw(st.floats(A, B)), B + 0.0005, segment_id="Rx"))
    inside = st.lists(st.tuples(vocab, st.floats(A, B - 0.05), st.booleans()), max_size=8)
    left_in = sorted(draw(inside), key=lambda t: t[1])
    right_in = sorted(draw(inside), key=lambda t: t[1])
    left_in_words = [Word(t, s, s + 0.05) if timed else Word(t) for t, s, timed in left_in]
    right_in_words = [Word(t, s, s + 0.05) if timed else Word(t) for t, s, timed in right_in]
    return left_out, left_in_words, right_in_words, right_out


@settings(max_examples=200, deadline=None)
@given(seam_case())
def test_words_outside_the_shared_interval_are_never_touched(case):
    """Words wholly outside [a, b] are never touched; a straddler only when the other window kept a word
    over the same stretch (two words there would break the stream, toolkit.core.wordstream)."""
    left_out, left_in, right_in, right_out = case
    left, right = left_out + left_in, right_in + right_out
    merged, reports = reconcile([WindowResult("w0", 0.0, B, left), WindowResult("w1", A, 55.0, right)])
    outside = left_out + right_out
    dropped = [d.word for d in reports[0].dropped]
    kept_outside = [x for x in merged if any(x is o for o in outside)]
    assert kept_outside == [o for o in outside if not any(o is d for d in dropped)]  # unchanged, in order
    for word in dropped:
        if not (A <= word.start and word.end <= B):
            # Only a straddler reaching into the shared interval ever goes, and only for a kept word of the
            # other window over the same stretch: both kept would make an invalid stream.
            assert word.segment_id in ("Lx", "Rx") and any(overlap_too_much(word, m) for m in merged if m.timed)
    untimed = [x for x in left_in + right_in if not x.timed]
    assert all(any(x is m for m in merged) for x in untimed)


def _simulate(truth: list[Word], spans: list[tuple[float, float]], rng: random.Random) -> list[WindowResult]:
    """What each window would hear: its whole words (jittered) and truncated fragments at its edges."""
    windows = []
    for k, (start, end) in enumerate(spans):
        heard = []
        for word in truth:
            if word.end <= start or word.start >= end:
                continue
            if word.start >= start and word.end <= end:
                jitter = rng.uniform(-0.05, 0.05)
                heard.append(Word(word.text, word.start + jitter, word.end + jitter))
            elif word.end - max(start, word.start) > 0.05 and min(end, word.end) - word.start > 0.05:
                heard.append(Word(word.text[:2] + "~", max(start, word.start), min(end, word.end)))
        windows.append(WindowResult(f"w{k}", start, end, heard))
    return windows


@pytest.mark.parametrize("origin", [0.0, 3.3, 12.5, 24.9])
def test_windowed_recording_reconstructs_the_spoken_words(origin):
    rng = random.Random(int(origin * 10))
    vocab = ["não", "sim", "então", "a", "gente", "vai", "falar", "sobre", "isso"]
    truth, t = [], 0.2
    while t < 95.0:
        duration = rng.uniform(0.15, 0.6)
        truth.append(Word(rng.choice(vocab), round(t, 3), round(t + duration, 3)))
        t += duration + rng.choice([0.05, 0.1, 0.4, 1.2])
    spans = plan_windows(96.0, 30.0, 5.0, origin)
    merged, reports = reconcile(_simulate(truth, spans, rng))
    assert texts(merged) == texts(truth)
    assert len(reports) == len(spans) - 1
    assert {d.reason for r in reports for d in r.dropped} <= {"duplicate", "edge_fragment", "overlapped"}
    assert not [f for r in reports for f in r.flags]


def test_plan_windows_ends_exactly_at_a_duration_with_many_decimals():
    # A decoded recording's duration is samples / rate: 52.0000000000001 once looped forever.
    duration = 832001 / 16000 + 1e-13
    spans = plan_windows(duration, 20.0, 4.0)
    assert spans[-1][1] == duration and len(spans) == 4


def test_plan_windows_leaves_no_empty_last_window_when_a_grid_end_rounds_onto_the_duration():
    # Found by hypothesis (test_word_streams): the first window's end 4.9999999999 rounds to 5.0, the duration;
    # judged before rounding, a second window (5.0, 5.0) followed, which reconcile refuses.
    assert plan_windows(5.0, 6.0, 0.0, 4.9999999999) == [(0.0, 5.0)]


def test_plan_windows_default_origin():
    assert plan_windows(100.0, 30.0, 5.0) == [(0.0, 30.0), (25.0, 55.0), (50.0, 80.0), (75.0, 100.0)]
    assert plan_windows(20.0, 30.0, 5.0) == [(0.0, 20.0)]


@pytest.mark.parametrize("origin", [0.0, 0.5, 10.0, 24.99])
def test_plan_windows_with_shifted_origins_cover_everything_with_fixed_overlap(origin):
    spans = plan_windows(100.0, 30.0, 5.0, origin)
    assert spans[0][0] == 0.0 and spans[-1][1] == 100.0
    for (_, e0), (s1, e1) in zip(spans, spans[1:]):
        assert e0 - s1 == pytest.approx(5.0)
        assert e1 - s1 <= 30.0 + 1e-9
    for (_, e0), (s2, _) in zip(spans, spans[2:]):
        assert s2 >= e0
    if origin > 0:
        assert spans[0] == (0.0, pytest.approx(origin + 5.0)) and spans[1][0] == pytest.approx(origin)


def test_plan_windows_origin_shifts_every_seam():
    base = [s for s, _ in plan_windows(100.0, 30.0, 5.0)[1:]]
    shifted = [s for s, _ in plan_windows(100.0, 30.0, 5.0, 10.0)[2:]]
    assert [round(s - b, 6) for s, b in zip(shifted, base)] == [10.0] * len(shifted)


@pytest.mark.parametrize(
    "length, overlap, origin",
    [
        (5.0, 5.0, 0.0),  # window no longer than its overlap
        (4.0, 5.0, 0.0),
        (30.0, 20.0, 0.0),  # more than two windows would cover an instant
        (30.0, 5.0, 25.0),  # origin outside [0, length - overlap)
        (30.0, 5.0, -1.0),
        (0.0, 0.0, 0.0),
    ],
)
def test_plan_windows_refuses_bad_layouts(length, overlap, origin):
    with pytest.raises(ToolkitError):
        plan_windows(100.0, length, overlap, origin)


def test_reconcile_refuses_windows_with_a_gap_or_triple_overlap():
    with pytest.raises(ToolkitError, match="not ordered"):
        reconcile([WindowResult("a", 0, 30, []), WindowResult("b", 31, 60, [])])
    with pytest.raises(ToolkitError, match="at most two"):
        reconcile([WindowResult("a", 0, 30, []), WindowResult("b", 10, 40, []), WindowResult("c", 20, 50, [])])


def test_seam_config_rejects_bad_values():
    with pytest.raises(ValueError):
        SeamConfig(onset_tolerance=0.5, max_onset_shift=0.2)
    with pytest.raises(ValueError):
        SeamConfig(fragment_overlap=0.0)


def test_seam_config_errors_name_the_experiment_file(tmp_path):
    from toolkit.core.config import build_config

    path = tmp_path / "experiment.toml"
    table = {
        "onset_tolerance": -1.0,
        "max_onset_shift": 1.0,
        "context": 0.5,
        "fragment_overlap": 0.5,
        "edge_zone": 2.5,
        "interior_times": True,
    }
    with pytest.raises(InputError, match="experiment.toml.*onset_tolerance"):
        build_config(SeamConfig, table, path=path, where="arms.win.windows.seam")


def test_single_and_no_windows():
    words = [w("olá", 1.0)]
    assert reconcile([WindowResult("a", 0, 30, words)]) == (words, [])
    assert reconcile([]) == ([], [])


def test_word_squeezed_at_the_left_windows_end_takes_the_right_windows_times():
    # "começa" starts at 27.0 (the right window [25, 55] hears it 2 s in), but the left window
    # [0, 30] squeezes it to 28.9, 1.1 s before its end. The only agreeing pair is "agora", so
    # the cut keeps "começa" from the left window: text from there, times from the right copy.
    left = [w("ontem", 20.0), Word("começa", 28.9, 29.2), Word("agora", 29.3, 29.6)]
    right = [Word("começa", 27.0, 27.6), Word("agora", 29.32, 29.6), w("hoje", 33.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["ontem", "começa", "agora", "hoje"]
    comeca = next(x for x in merged if x.text == "começa")
    assert (comeca.start, comeca.end) == (27.0, 27.6)
    assert ("left", "começa", 27.0) in {(r.side, r.word.text, r.start) for r in report.retimed}
    assert report.to_json()["retimed"][0]["new_start"] == 27.0
    # Far from every edge nothing moves: "ontem" and "hoje" keep their own times.
    assert [(x.start, x.end) for x in merged if x.text in ("ontem", "hoje")] == [(20.0, 20.3), (33.0, 33.3)]


def test_first_word_pulled_early_in_the_right_window_takes_the_left_windows_times():
    # The right window [25, 55] starts in a pause; Whisper pulls its first word "chegou" to
    # 25.0 although it starts at 27.2 (as the left window, hearing it 2.8 s before its end, says).
    left = [w("ontem", 20.0), Word("chegou", 27.2, 27.6), Word("cedo", 27.7, 28.0)]
    right = [Word("chegou", 25.0, 25.5), Word("cedo", 27.72, 28.0), w("hoje", 33.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["ontem", "chegou", "cedo", "hoje"]
    chegou = next(x for x in merged if x.text == "chegou")
    assert (chegou.start, chegou.end) == (27.2, 27.6)
    assert not any(f.kind == "edge_word" for f in report.flags)


def test_interior_times_off_keeps_the_kept_copys_times():
    left = [w("ontem", 20.0), Word("chegou", 27.2, 27.6), Word("cedo", 27.7, 28.0)]
    right = [Word("chegou", 25.0, 25.5), Word("cedo", 27.72, 28.0), w("hoje", 33.0)]
    merged, report = seam(left, right, SeamConfig(interior_times=False))
    assert texts(merged) == ["ontem", "chegou", "cedo", "hoje"]
    assert not report.retimed
    assert all(any(x is o for o in left + right) for x in merged)


def test_a_word_only_one_window_heard_near_its_edge_keeps_its_times_and_is_flagged():
    # Both windows heard "bom" (the cut); only the right window [25, 55] heard "sim", 1.5 s after
    # its start: it is kept after the cut with its own times, flagged edge_word.
    left = [w("ontem", 20.0), w("bom", 25.5)]
    right = [w("bom", 25.52), Word("sim", 26.5, 26.8), w("hoje", 33.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["ontem", "bom", "sim", "hoje"]
    assert next((x.start, x.end) for x in merged if x.text == "sim") == (26.5, 26.8)
    edge = [f for f in report.flags if f.kind == "edge_word"]
    assert len(edge) == 1 and [x.text for x in edge[0].right] == ["sim"] and not edge[0].left
    # Beyond the edge zone the same lone word is not an edge word.
    _, far = seam(left, right, SeamConfig(edge_zone=1.0))
    assert not any(f.kind == "edge_word" for f in far.flags)


def test_timing_and_edge_word_flags_are_notes_that_do_not_ask_for_review():
    # "começa" pairs across the seam with onsets 1.9 s apart (a timing flag), nothing else is wrong.
    left = [w("ontem", 20.0), Word("começa", 28.9, 29.2), Word("agora", 29.3, 29.6)]
    right = [Word("começa", 27.0, 27.6), Word("agora", 29.32, 29.6), w("hoje", 33.0)]
    _, report = seam(left, right)
    assert [f.kind for f in report.flags] == ["timing"]
    assert report.flags[0].priority == "note" and report.to_json()["flags"][0]["priority"] == "note"
    assert not report.ambiguous and report.to_json()["review"] is False
    # A dropped one-sided word still asks for review.
    _, lost = seam(
        [w("não", 27.4), w("não", 27.8)],
        [w("não", 27.0), w("não", 27.4), w("não", 27.8)],
        SeamConfig(onset_tolerance=0.1, max_onset_shift=0.3),
    )
    assert lost.ambiguous and lost.flags[0].priority == "review"


def test_a_retime_that_would_jump_a_one_sided_word_is_not_applied():
    # Seen on real speech: the right window hears "mafe e responsável" where the left hears
    # "mafe responsável". The right copy of "responsável" is kept (after the cut) and its left copy
    # lies farther from its window's edge, but taking its onset (26.87 s) would put it before the
    # kept one-sided "e" (26.88 s): the words would leave the seam out of time order.
    left = [
        w("ontem", 20.0),
        Word("Policiais", 25.1, 25.8),
        Word("consideram", 25.8, 26.4),
        Word("a", 26.4, 26.6),
        Word("mafe", 26.6, 26.87),
        Word("responsável", 26.87, 27.6),
        Word("pelo", 27.6, 27.9),
        Word("massacre.", 27.9, 28.7),
    ]
    right = [
        Word("Policiais", 25.0, 25.82),
        Word("consideram", 25.82, 26.42),
        Word("a", 26.42, 26.56),
        Word("mafe", 26.56, 26.88),
        Word("e", 26.88, 27.0),
        Word("responsável", 27.0, 27.6),
        Word("pelo", 27.6, 27.88),
        Word("massacre.", 27.88, 28.6),
        w("hoje", 33.0),
    ]
    merged, report = seam(left, right)
    starts = [x.start for x in merged]
    assert starts == sorted(starts)
    assert "e" in texts(merged)
    responsavel = next(x for x in merged if x.text == "responsável")
    assert responsavel.start >= next(x for x in merged if x.text == "e").start
    assert all(r.word.text != "responsável" or r.start >= 26.88 for r in report.retimed)


def test_a_word_dropped_under_another_reading_is_noted_but_a_cut_copy_at_the_edge_is_not():
    # Both windows heard the same phrase; at 27.5 s the left heard "azul", the right "azuis".
    left = [w("a", 26.0), w("casa", 26.5), w("azul", 27.5), w("hoje", 28.2)]
    right = [w("a", 26.0), w("casa", 26.5), w("azuis", 27.5), w("hoje", 28.2), w("cedo", 31.0)]
    merged, report = seam(left, right)
    assert texts(merged) == ["a", "casa", "azuis", "hoje", "cedo"]  # the cut at "casa": the right window's after it
    assert [(d.side, d.word.text, d.reason) for d in report.dropped if d.reason != "duplicate"] == [
        ("left", "azul", "overlapped")
    ]
    assert [f.kind for f in report.flags] == ["different_reading"]
    assert report.flags[0].left[0].text == "azul" and report.flags[0].priority == "note"
    assert not report.ambiguous
    # The same reading is no different reading: the copy goes as a duplicate, nothing is noted.
    _, same = seam(left, [*left, w("cedo", 31.0)])
    assert not same.flags
    # A left copy running into its window's end (30 s) is a cut copy of the right's word, not another reading.
    _, cut = seam([*left[:3], Word("hoj", 29.8, 30.0)], [*left[:3], Word("hoje", 29.75, 29.99)])
    assert [(d.word.text, d.reason) for d in cut.dropped if d.reason != "duplicate"] == [("hoj", "overlapped")]
    assert not cut.flags


@st.composite
def heard_twice(draw):
    """Speech around a seam heard by both windows: each whole word a window holds, jittered well inside the onset
    tolerance; a word crossing a window's seam-side edge heard by that window as a two-letter fragment, as the
    whole word timed from the edge, or not at all (the other window, which holds it whole, keeps it). Each word
    is another, so what both windows heard pairs one way only (repeats are seam_case's)."""
    a = draw(st.floats(20.0, 25.0))
    b = a + draw(st.floats(1.0, 6.0))
    truth, t = [], a - draw(st.floats(0.0, 3.0))
    while t < b + 3.0:
        duration = draw(st.floats(0.1, 0.6))
        truth.append(Word(f"palavra{len(truth)}", round(t, 3), round(t + duration, 3)))
        t += duration + draw(st.floats(0.12, 1.0))  # more than twice the jitter: each window's words stay in order
    windows = []
    for k, (start, end) in enumerate(((0.0, b), (a, b + 30.0))):
        words = []
        for n, word in enumerate(truth):
            if word.end <= start or word.start >= end:
                continue
            if word.start >= start and word.end <= end:
                jitter = draw(st.floats(-0.05, 0.05))
                words.append(Word(word.text, word.start + jitter, word.end + jitter, segment_id=f"{k}.{n}"))
                continue
            cut = (max(start, word.start), min(end, word.end))
            if cut[1] - cut[0] < 0.05:
                continue
            heard = draw(st.sampled_from(["fragment", "whole", "nothing"]))
            if heard != "nothing":
                text = word.text if heard == "whole" else word.text[:2] + "~"
                words.append(Word(text, *cut, segment_id=f"{k}.{n}"))
        windows.append(WindowResult(f"w{k}", start, end, words))
    return truth, windows


def _check_seam_record(report, windows, merged) -> None:
    """Every seam record's cut lies in its shared interval; a kept copy starting outside it is named; each
    word of either window is kept (maybe retimed) or dropped with a reason, never both."""
    assert report.start <= report.cut_time <= report.end
    if report.straddling is not None:
        onset = report.straddling.word.start
        assert not report.start <= onset <= report.end
        assert report.cut_time == (report.start if onset < report.start else report.end)
        assert report.straddling.word.segment_id in {m.segment_id for m in merged}
    merged_ids = [m.segment_id for m in merged]
    dropped_ids = [d.word.segment_id for d in report.dropped]
    every = [x.segment_id for window in windows for x in window.words]
    assert sorted(merged_ids + dropped_ids) == sorted(every)


@settings(max_examples=300, deadline=None)
@given(heard_twice())
def test_a_seam_heard_by_both_windows_keeps_each_spoken_word_once_with_its_cut_inside_the_interval(case):
    """The rule on speech both windows heard: the left window's words up to the cut, the right's after it, each
    spoken word once (a copy cut at an edge, or timed from it, goes); the cut in [a, b] even where the copy kept
    there is a word crossing an edge, which the record then names."""
    truth, windows = case
    merged, reports = reconcile(windows)
    assert texts(merged) == texts(truth)
    _check_seam_record(reports[0], windows, merged)
    # The record's kept words are the merged words of each window that lie in [a, b] once clamped to it.
    a, b = reports[0].start, reports[0].end
    kept = {m.segment_id for m in merged}
    for window, report_kept in zip(windows, (reports[0].kept_left, reports[0].kept_right)):
        clamped = [
            (x, min(max(x.start, window.start), window.end), min(max(x.end, window.start), window.end))
            for x in window.words
        ]
        inside = [x.segment_id for x, start, end in clamped if x.segment_id in kept and a <= start and end <= b]
        assert [x.segment_id for x in report_kept] == inside


@settings(max_examples=300, deadline=None)
@given(seam_case())
def test_any_seam_records_its_cut_inside_the_shared_interval(case):
    """Whatever the two windows wrote (other words, repeats, untimed words, straddlers at either edge)."""
    left_out, left_in, right_in, right_out = case
    numbered = [
        [Word(x.text, x.start, x.end, segment_id=f"{k}.{n}") for n, x in enumerate(words)]
        for k, words in enumerate((left_out + left_in, right_in + right_out))
    ]
    windows = [WindowResult("w0", 0.0, B, numbered[0]), WindowResult("w1", A, 55.0, numbered[1])]
    merged, reports = reconcile(windows)
    _check_seam_record(reports[0], windows, merged)


def test_a_kept_word_crossing_the_interval_start_puts_the_cut_at_the_start_and_is_named():
    """Seam 45 of a windows run on the audiobook: the kept left copy of a word began 0.56 s before the shared
    interval, and the cut was recorded there, outside the interval."""
    left = [w("o", 24.2, 0.2), Word("inciso", 24.44, 25.1)]
    right = [Word("inciso", 25.0, 25.12), w("segundo", 30.1)]
    merged, report = seam(left, right)
    assert texts(merged) == ["o", "inciso", "segundo"]
    assert [(d.side, d.word.text, d.reason) for d in report.dropped] == [("right", "inciso", "duplicate")]
    assert report.cut_time == A
    assert report.straddling is not None and report.straddling.side == "left"
    assert report.straddling.word.start == 24.44
    assert report.to_json()["straddling"] == {"side": "left", **report.straddling.word.__dict__}
