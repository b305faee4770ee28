"""Speech a joined VAD stream's decode passed over is decoded again: the rule for any words and pieces, and a
stretch of real speech whose words were lost put back by the runner."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from shared_clips import RECORDING, build_recording
from shared_data import PTBR_DEV

from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, resample
from toolkit.core.transcripts import Word
from toolkit.core.wordstream import check_stream
from toolkit.formats import read_reference
from toolkit.pipeline.cache import ResultCache
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.recognizers import RecognizerPool
from toolkit.pipeline.runner import ArmOutput, ArmRunner
from toolkit.pipeline.skipped_speech import LONGEST_WORD_S, inserted, skipped_stretches
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


@st.composite
def pieces_and_words(draw: st.DrawFn) -> tuple[list[tuple[float, float]], list[Word]]:
    """Ordered VAD pieces over a minute and a valid word stream laid over some of them."""
    bounds = sorted(draw(st.lists(st.floats(0, 60, allow_nan=False), min_size=2, max_size=24, unique=True)))
    pieces = [(a, b) for a, b in zip(bounds[::2], bounds[1::2]) if b > a]
    starts = sorted(draw(st.lists(st.floats(0, 59, allow_nan=False), max_size=30, unique=True)))
    words = []
    for k, start in enumerate(starts):
        limit = starts[k + 1] if k + 1 < len(starts) else 60.0
        words.append(Word(f"w{k}", start, draw(st.floats(start, max(start, limit)))))
    return pieces, words


def _covered(words: list[Word]) -> list[tuple[float, float]]:
    return [(w.start, min(w.end, w.start + LONGEST_WORD_S)) for w in words]


@settings(max_examples=300, deadline=None)
@given(pieces_and_words(), st.sampled_from([0.5, 2.0, 3.0]))
def test_every_stretch_is_uncovered_speech_and_every_long_gap_is_found(drawn, min_s: float) -> None:
    pieces, words = drawn
    stretches = skipped_stretches(pieces, words, min_s)
    spans = _covered(words)
    for clips in stretches:
        assert sum(b - a for _, a, b in clips) >= min_s
        for index, a, b in clips:
            low, high = pieces[index]
            assert low <= a < b <= high
            assert all(not (s < b and e > a) for s, e in spans)  # no word covers any of it
    # Completeness: speech in every gap between consecutive words totalling min_s is some stretch's.
    edges = [float("-inf"), *(t for span in spans for t in span), float("inf")]
    found = {(c[0][1], c[-1][2]) for c in stretches}
    for gap_start, gap_end in zip(edges[::2], edges[1::2]):
        speech = [(max(a, gap_start), min(b, gap_end)) for a, b in pieces if a < gap_end and b > gap_start]
        if gap_end > gap_start and sum(b - a for a, b in speech) >= min_s:
            assert (speech[0][0], speech[-1][1]) in found
    assert skipped_stretches(pieces, words, 0.0) == []


def test_new_words_go_into_their_stretch_and_a_word_run_over_it_is_cut_back() -> None:
    words = [Word("a", 0.0, 0.5), Word("dispõem", 1.0, 12.0), Word("b", 12.5, 13.0)]
    new = [Word("early", 2.0, 2.5), Word("x", 3.1, 3.5), Word("y", 4.0, 4.4), Word("outside", 12.6, 12.9)]
    filled = inserted(words, new, 1.0 + LONGEST_WORD_S, 12.5)
    assert [w.text for w in filled] == ["a", "dispõem", "x", "y", "b"]
    assert filled[1].end == 1.0 + LONGEST_WORD_S
    check_stream(filled, 20.0, "filled")
    assert inserted(words, [], 3.0, 12.5) == words


@pytest.mark.needs_model
def test_a_stretch_of_real_speech_whose_words_were_lost_is_decoded_again(tmp_path: Path) -> None:
    """The demo's +VAD stream on a minute and a half of the shared clips, decoded; the words of one sentence
    removed as if Whisper had sought past it; the runner decodes that sentence again and puts it back."""
    if not (PTBR_DEV / "commonvoice-pt").is_dir():
        pytest.skip(f"development data not present ({PTBR_DEV}); it lives outside the repository")
    build_recording(tmp_path, 1.5)
    experiment = load_experiment(DEMO)
    arm = experiment.arms["vad"]
    reference = read_reference(tmp_path / "refs" / f"{RECORDING}.TextGrid")
    signal = resample(load_audio(tmp_path / "audio" / f"{RECORDING}.wav"), 16_000)
    original = Signal.original(signal.samples, 16_000)
    with RecognizerPool(experiment) as pool:
        runner = ArmRunner(experiment, ResultCache(tmp_path / "cache"), pool, [arm])
        output = ArmOutput(words=[])
        lineage = {"audio_sha256": "test", "enhance": None, "sample_rate": 16_000}
        [[unit]] = runner._segment(arm, original, lineage, output)
        decoded = runner._decode("whisper_base", unit, lineage, output)
        long = max(reference.utterances, key=lambda u: u.end - u.start)
        assert long.end - long.start >= 3.0
        gap = (long.start - 0.3, long.end + 0.3)
        lost = [w for w in decoded if w.start is not None and gap[0] <= w.start < gap[1]]
        assert len(lost) >= 4
        kept = [w for w in decoded if w not in lost]
        filled = runner._redecode_skipped("whisper_base", unit, kept, 2.0, lineage, output)
        runner.stages.close()
    check_stream(filled, original.duration, "filled")
    assert [w for w in filled if w in kept] == kept  # nothing decoded is touched or moved
    again = [w for w in filled if w not in kept]
    # Whatever words this machine's kernels hear there (Whisper base mishears this sentence), the sentence is
    # decoded again over its whole length: as many words as half the reference's, on both sides of its middle.
    said = Normalizer(NormalizationPolicy.normalized()).words(long.text)
    middle = (long.start + long.end) / 2
    assert len(again) >= 0.5 * len(said)
    assert again[0].start < middle < again[-1].end
    assert all(gap[0] - 1.0 <= w.start and w.end <= gap[1] + 1.0 for w in again)
    assert any(u["unit"].startswith(f"{unit.unit_id}.skipped") for u in output.units)
    assert output.recognizer_notes["whisper_base"]["skipped_speech_redecoded"] >= 1
