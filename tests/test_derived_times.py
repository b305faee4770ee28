"""Reference word times derived by forced alignment: their provenance survives a TextGrid, timing figures say they
are derived, and the time gates refuse them where their threshold is finer than the aligner's measured accuracy.
The end-to-end test times a plain-text reference of a minute of the shared clips with ``ablate reference align``."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_clips import RECORDING, build_recording
from shared_data import PTBR_DEV

from toolkit.asr.derived_times import _in_order, stretches
from toolkit.asr.forced_alignment import AlignedWord
from toolkit.asr.models import BUNDLED_SHA256
from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.transcripts import DerivedTimes, Hypothesis, Reference, Utterance, Word
from toolkit.formats import read_reference
from toolkit.formats.textgrid import DERIVED_TIER, write_textgrid
from toolkit.protocol.gate_measures import drift, onset_p95
from toolkit.scorer.metrics.timing import TimingScore
from toolkit.scorer.results import RecordingScore
from toolkit.scorer.score import score_recording

UNKNOWN_MODEL = "no-such-model"  # a refusal that names the input, not this, came before any model was looked for
TEXT = "o réu assinou o contrato ontem à tarde com a testemunha presente na sala"


def _timed_reference(derived: DerivedTimes | None) -> Reference:
    """Fourteen words, one every four seconds, in one turn of a minute."""
    words = [Word(w, 4.0 * k, 4.0 * k + 0.3) for k, w in enumerate(TEXT.split())]
    return Reference("r", [Utterance(0.0, 60.0, TEXT)], words, derived_times=derived)


def _scored(derived: DerivedTimes | None, late_s: float) -> RecordingScore:
    """The reference's words recognized ``late_s`` late, on a drift of 0.05 s per word, scored against the
    reference whose provenance is ``derived`` (the scorer carries it into the timing record)."""
    reference = _timed_reference(derived)
    hypothesis = Hypothesis(
        "r", [Word(w.text, w.span[0] + late_s + 0.05 * k, w.span[1] + late_s) for k, w in enumerate(reference.words)]
    )
    return score_recording(reference, hypothesis)


@given(
    model=st.from_regex(r"[\w.\-/ ]{1,30}", fullmatch=True).filter(str.strip),
    p95=st.one_of(st.none(), st.floats(0.01, 30).map(lambda v: round(v, 3))),
)
def test_derived_provenance_survives_a_textgrid(tmp_path_factory: pytest.TempPathFactory, model: str, p95) -> None:
    """Model name, weights hash and measured p95 (or none measured) read back as written."""
    derived = DerivedTimes(" ".join(model.split()), BUNDLED_SHA256, p95)
    path = write_textgrid(_timed_reference(derived), tmp_path_factory.mktemp("tg") / "r.TextGrid", 60.0)
    back = read_reference(path)
    assert back.derived_times == derived
    assert [(w.text, w.start, w.end) for w in back.words] == [
        (w.text, w.start, w.end) for w in _timed_reference(None).words
    ]


def test_a_malformed_provenance_tier_is_refused(tmp_path: Path) -> None:
    """A derived_times tier whose label is not the toolkit's is bad input, naming the file."""
    path = write_textgrid(
        _timed_reference(DerivedTimes("whisper-base", BUNDLED_SHA256, 0.97)), tmp_path / "r.TextGrid", 60
    )
    path.write_text(path.read_text(encoding="utf-8").replace("onset_p95_s=0.97", "onset_p95_s=soon"), encoding="utf-8")
    with pytest.raises(InputError, match=rf"r\.TextGrid: tier '{DERIVED_TIER}' must hold one label"):
        read_reference(path)


def test_timing_figures_say_derived_and_a_pool_is_as_coarse_as_its_coarsest() -> None:
    """A recording scored on derived times says so in its JSON; a pool keeps the least accurate; marked says none."""
    fine, coarse = DerivedTimes("a", BUNDLED_SHA256, 0.5), DerivedTimes("b", BUNDLED_SHA256, 0.97)
    scored = _scored(coarse, 0.2).timing
    assert scored.to_json()["derived_word_times"] == "derived (forced alignment, p95 0.97 s)"
    assert _scored(None, 0.2).timing.to_json()["derived_word_times"] is None
    pooled = sum((_scored(d, 0.2).timing for d in (fine, None, coarse)), TimingScore(recordings=0))
    assert pooled.derived == coarse
    unmeasured = DerivedTimes("c", "0" * 64, None)
    assert (_scored(coarse, 0.2).timing + _scored(unmeasured, 0.2).timing).derived == unmeasured
    assert unmeasured.describe() == "derived (forced alignment, accuracy not measured)"


def test_time_gates_refuse_derived_times_coarser_than_their_threshold() -> None:
    """The onset gate measures at a threshold at or above the measured p95 and refuses, in one line, below it;
    the drift gate refuses when its threshold over the recording's span allows less than that p95."""
    derived = DerivedTimes("whisper-base", BUNDLED_SHA256, 0.97)
    scores = {"r": _scored(derived, 0.2)}
    refused = onset_p95(scores, 0.5)
    assert refused.value is None and "\n" not in refused.note
    assert refused.note.startswith("refused: the reference word times are derived (forced alignment, p95 0.97 s)")
    assert onset_p95(scores, 1.0).value == pytest.approx(onset_p95({"r": _scored(None, 0.2)}, 0.5).value)
    assert onset_p95({"r": _scored(replace(derived, onset_p95_s=None), 0.2)}, 30.0).value is None
    # the reference's turn spans a minute: 0.5 s/min allows 0.5 s of drift over it, finer than 0.97 s; 2 s/min, 2 s
    assert drift(scores, 0.5).value is None and "0.50 s (0.5 s/min over r)" in drift(scores, 0.5).note
    measured = drift(scores, 2.0).value
    assert measured is not None and math.isclose(measured, drift({"r": _scored(None, 0.2)}, 0.5).value or 0)


@pytest.mark.slow
@pytest.mark.needs_model
def test_reference_align_times_a_plain_text_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``ablate reference align`` on a minute of real speech and its plain-text transcript writes a TextGrid whose
    words carry derived times inside their turns, marked with the bundled model and its measured p95; a
    hypothesis 0.3 s late scores about 0.3 s onset error against it; a timed reference is refused."""
    if not (PTBR_DEV / "commonvoice-pt").is_dir():
        pytest.skip(f"shared clips absent: {PTBR_DEV}")
    build_recording(tmp_path, 1.0, seed=13)
    known = read_reference(tmp_path / "refs" / f"{RECORDING}.TextGrid")
    text = tmp_path / f"{RECORDING}.txt"
    text.write_text("\n".join(u.text for u in known.utterances) + "\n", encoding="utf-8")
    audio, out = tmp_path / "audio" / f"{RECORDING}.wav", tmp_path / "derived.TextGrid"
    assert main(["reference", "align", str(audio), str(text), "--out", str(out)]) == 0
    assert "derived (forced alignment, p95 0.97 s)" in capsys.readouterr().out
    derived = read_reference(out)
    assert derived.derived_times == DerivedTimes("whisper-base", BUNDLED_SHA256, 0.97)
    assert " ".join(u.text for u in derived.utterances).split() == " ".join(u.text for u in known.utterances).split()
    assert len(derived.words) >= 0.8 * len(derived.text.split())
    assert all(any(u.start <= w.span[0] <= w.span[1] <= u.end for u in derived.utterances) for w in derived.words)
    late = Hypothesis(RECORDING, [Word(w.text, w.span[0] + 0.3, w.span[1] + 0.3) for w in derived.words])
    timing = score_recording(derived, late).timing
    assert timing.onset_abs_median_s == pytest.approx(0.3, abs=0.01)
    assert main(["reference", "align", str(audio), str(out), "--out", str(tmp_path / "again.TextGrid")]) == 2
    assert f"{out}: the reference already has timed words" in capsys.readouterr().err


def test_report_tables_mark_the_recordings_scored_on_derived_times(tmp_path: Path) -> None:
    """The per-recording and worst-onsets tables gain a column naming derived times where a recording's timing
    stands on them ("marked" elsewhere), and have no such column when every time is marked."""
    from known_causes import known_causes_run

    from toolkit.evaluate import score_run
    from toolkit.report.tables import per_recording_table, worst_onsets_table

    _, folder = known_causes_run(tmp_path)
    evaluation = score_run(folder)
    assert "reference word times" not in per_recording_table(evaluation)
    assert "reference word times" not in worst_onsets_table(evaluation)
    derived = DerivedTimes("whisper-base", BUNDLED_SHA256, 0.97)
    evaluation.scores = {
        arm: {rid: replace(s, timing=replace(s.timing, derived=derived)) for rid, s in by_rec.items()}
        for arm, by_rec in evaluation.scores.items()
    }
    marked = next(iter(evaluation.scores))
    evaluation.scores[marked] = {
        rid: replace(s, timing=replace(s.timing, derived=None)) for rid, s in evaluation.scores[marked].items()
    }
    for table in (per_recording_table(evaluation), worst_onsets_table(evaluation)):
        assert len(table), "the run has timed words to show"
        expected = ["marked" if arm == marked else derived.describe() for arm in table["arm"]]
        assert table["reference word times"].tolist() == expected


@pytest.mark.needs_model
def test_a_freeze_refuses_derived_holdout_times_coarser_than_a_time_gate(tmp_path: Path, capsys) -> None:
    """Holdout TextGrids whose word times are derived (p95 0.97 s) under the template's drift gate (0.05 s/min, a
    fraction of a second over these short recordings) stop the freeze with one line; the onset gate's 1 s does
    not, and declaring the drift gate not applicable lets the freeze through."""
    from protocol_corpus import correct, make_corpus, make_experiment, one_line

    from toolkit.audio.io import probe_audio
    from toolkit.corpus.freeze import freeze
    from toolkit.protocol.gates_file import TEMPLATE

    manifest = make_corpus(tmp_path / "corpus", {"t1": "tuning", "h1": "holdout", "h2": "holdout"})
    corpus = tmp_path / "corpus"
    derived = DerivedTimes("whisper-base", BUNDLED_SHA256, 0.97)
    for textgrid in (corpus / "refs").glob("h*.TextGrid"):
        reference = read_reference(textgrid)
        timed = replace(reference, words=correct(reference.utterances), derived_times=derived)
        write_textgrid(timed, textgrid, probe_audio(corpus / "audio" / f"{textgrid.stem}.wav").duration)
    manifest.unlink()
    freeze(corpus / "audio", corpus / "refs", manifest, splits_csv=corpus / "splits.csv")
    experiment = make_experiment(tmp_path / "exp", manifest)
    assert main(["challenger", "freeze", str(experiment), "--arm", "vad", "--gates", str(TEMPLATE)]) == 2
    error = one_line(capsys)
    assert "gate drift_s_per_min on the holdout's h1: refused: the reference word times are derived (forced " in error
    assert "p95 0.97 s), coarser than the 0.01 s (0.05 s/min over h1) this gate judges" in error
    text = TEMPLATE.read_text(encoding="utf-8")
    start = text.index("[drift_s_per_min]")
    end = text.index("\n[", start + 1)
    declared = tmp_path / "gates.toml"
    declared.write_text(text[:start] + '[drift_s_per_min]\napplicable = false\nreason = "derived"\n' + text[end:])
    code = main(["challenger", "freeze", str(experiment), "--arm", "vad", "--gates", str(declared)])
    assert code == 0, capsys.readouterr().err


def _noise(path: Path, channels: int = 1) -> Path:
    """Two seconds of quiet noise, written as a real WAV file with ``channels`` channels."""
    import soundfile

    soundfile.write(path, 0.01 * np.random.default_rng(7).standard_normal((32000, channels)), 16000)
    return path


@pytest.mark.parametrize(
    ("case", "problem"),
    [
        ("blank", "{ref}: the reference holds no words; nothing to align"),
        ("timed words", "{ref}: the reference already has timed words; nothing to derive"),
        ("stereo", "{audio}: has 2 channels; choose one with --channel (0-1 or mix)"),
        ("not a TextGrid", "{out}: --out must name a .TextGrid file"),
    ],
)
def test_reference_align_refuses_bad_input_in_one_line_before_any_model(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str, problem: str
) -> None:
    """A blank reference, one already timed (named, not the audio), stereo audio without --channel and an --out that
    is not a TextGrid are each refused in one line naming the file, before the model is looked for; nothing is
    written."""
    from protocol_corpus import one_line

    audio = _noise(tmp_path / "r.wav", 2 if case == "stereo" else 1)
    ref = tmp_path / "r.txt"
    ref.write_text(" \n\t\n" if case == "blank" else TEXT + "\n", encoding="utf-8")
    if case == "timed words":
        timed = Reference("r", [Utterance(0.0, 2.0, "o réu")], [Word("o", 0.1, 0.3), Word("réu", 0.4, 0.8)])
        ref = write_textgrid(timed, tmp_path / "r.TextGrid", 2.0)
    out = tmp_path / ("r.txt.out" if case == "not a TextGrid" else "out.TextGrid")
    command = ["reference", "align", str(audio), str(ref), "--out", str(out), "--model", UNKNOWN_MODEL]
    assert main(command) == 2
    assert one_line(capsys).startswith(f"ablate: error: {problem.format(ref=ref, audio=audio, out=out)}")
    assert not out.exists()


def test_reference_align_takes_a_channel_of_stereo_audio(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """With --channel, stereo audio passes the channel check (the next refusal is the unknown model's)."""
    from protocol_corpus import one_line

    audio, ref = _noise(tmp_path / "r.wav", 2), tmp_path / "r.txt"
    ref.write_text(TEXT + "\n", encoding="utf-8")
    command = ["reference", "align", str(audio), str(ref), "--out", str(tmp_path / "o.TextGrid")]
    assert main([*command, "--channel", "1", "--model", UNKNOWN_MODEL]) == 2
    assert UNKNOWN_MODEL in one_line(capsys)
    assert main([*command, "--channel", "left"]) == 2
    assert "--channel: channel must be a channel number" in one_line(capsys)


def _laid_out(drawn: list[tuple[bool, float, float]]) -> list[Utterance]:
    """Turns one after another, each after a gap and of a length as drawn, timed or (NaN times) not."""
    turns, cursor = [], 0.0
    for k, (timed, gap, length) in enumerate(drawn):
        start, cursor = cursor + gap, cursor + gap + length
        turns.append(Utterance(start, cursor, f"t{k}") if timed else Utterance(math.nan, math.nan, f"t{k}"))
    return turns


_turns = st.lists(st.tuples(st.booleans(), st.floats(0, 5), st.floats(0.1, 5)), min_size=1, max_size=8).map(_laid_out)


@given(turns=_turns, tail=st.floats(0, 10))
def test_each_turn_is_aligned_once_in_order_within_its_own_stretch(turns: list[Utterance], tail: float) -> None:
    """Every turn is in exactly one stretch, in order; a timed turn's stretch is its own interval; a run of untimed
    turns lies between the timed turns around it, inside the recording."""
    duration = max([u.end for u in turns if math.isfinite(u.end)], default=0.0) + tail
    found = stretches(turns, duration)
    assert [index for _, _, indices in found for index in indices] == list(range(len(turns)))
    for start, end, indices in found:
        assert 0 <= start <= end <= duration
        if math.isfinite(turns[indices[0]].start):
            assert indices == [indices[0]] and (start, end) == (turns[indices[0]].start, turns[indices[0]].end)
            continue
        before = [u.end for u in turns[: indices[0]] if math.isfinite(u.end)]
        after = [u.start for u in turns[indices[-1] + 1 :] if math.isfinite(u.start)]
        assert start == max(before, default=0.0) and end == min(after, default=duration)


@given(
    drawn=st.lists(st.tuples(st.booleans(), st.floats(0, 20), st.floats(0.02, 3)), max_size=12),
)
def test_words_of_overlapping_turns_stay_untimed_rather_than_overlap(drawn: list[tuple[bool, float, float]]) -> None:
    """Aligned words in turn order (overlapping timed turns give words that go back in time): the words keep their
    order and text, placed ones keep their times, and a placed word that starts before an earlier kept word ends is
    left untimed, so the words tier never overlaps."""
    words = [
        AlignedWord(f"w{k}", start, start + length, 0.5) if placed else AlignedWord(f"w{k}", math.nan, math.nan, 0.0)
        for k, (placed, start, length) in enumerate(drawn)
    ]
    kept = _in_order(words)
    assert [w.text for w in kept] == [w.text for w in words]
    latest = -math.inf
    for before, after in zip(words, kept):
        if after.placed:
            assert after == before and after.start >= latest
            latest = after.end
        else:
            assert not before.placed or before.start < latest


@pytest.fixture(scope="module")
def two_minutes(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two different minutes of the shared clips joined by pauses (seeds 13 and 31), each with its timed turns."""
    if not (PTBR_DEV / "commonvoice-pt").is_dir():
        pytest.skip(f"shared clips absent: {PTBR_DEV}")
    folders = tmp_path_factory.mktemp("seed13"), tmp_path_factory.mktemp("seed31")
    for folder, seed in zip(folders, (13, 31)):
        build_recording(folder, 1.0, seed=seed)
    return folders


@pytest.mark.slow
@pytest.mark.needs_model
def test_timed_turns_hold_their_own_words(two_minutes, tmp_path: Path) -> None:
    """A reference whose turns are timed (an STM of concatenated clips, as the recording's TextGrid of turns): each
    derived word lies inside a turn that holds it, and the turns keep their times."""
    folder = two_minutes[0]
    audio, ref, out = (
        folder / "audio" / f"{RECORDING}.wav",
        folder / "refs" / f"{RECORDING}.TextGrid",
        tmp_path / "d.TextGrid",
    )
    assert main(["reference", "align", str(audio), str(ref), "--out", str(out)]) == 0
    known, derived = read_reference(ref), read_reference(out)
    assert [(u.start, u.end, u.text) for u in derived.utterances] == [
        (u.start, u.end, u.text) for u in known.utterances
    ]
    assert len(derived.words) >= 0.8 * len(known.text.split())
    outside = [
        (w.text, w.start)
        for w in derived.words
        if not any(u.start <= w.span[0] <= w.span[1] <= u.end and w.text in u.text.split() for u in known.utterances)
    ]
    assert not outside, outside


@pytest.mark.slow
@pytest.mark.needs_model
def test_the_wrong_recording_is_refused_unless_a_partial_alignment_is_asked_for(
    two_minutes, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One minute's plain-text transcript against another minute's audio places few of its words: refused in one line
    naming the audio, nothing written; --allow-partial writes what was placed and says the p95 may not hold."""
    from protocol_corpus import one_line

    known = read_reference(two_minutes[0] / "refs" / f"{RECORDING}.TextGrid")
    text = tmp_path / f"{RECORDING}.txt"
    text.write_text("\n".join(u.text for u in known.utterances) + "\n", encoding="utf-8")
    audio, out = two_minutes[1] / "audio" / f"{RECORDING}.wav", tmp_path / "wrong.TextGrid"
    command = ["reference", "align", str(audio), str(text), "--out", str(out)]
    assert main(command) == 2
    error = one_line(capsys)
    assert error.startswith(f"ablate: error: {audio}: only "), error
    assert "under the 70% a matching recording reaches" in error, error
    assert not out.exists()
    assert main([*command, "--allow-partial"]) == 0
    assert "placed: that accuracy, measured on matching audio, may not hold" in capsys.readouterr().out
    assert len(read_reference(out).words) < 0.7 * len(known.text.split())
