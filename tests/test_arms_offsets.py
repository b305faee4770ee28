"""Every arm reports words in original recording time, and unchanged work is never redone.

A 44.1 kHz recording is built from synthesized pt-BR sentences placed at known times, then
run through the real engine with the bundled Whisper base model: baseline, +VAD (regions
joined into one stream as the demo does, merged into units of up to 30 s, and one unit per
region), +windows (with seams), +GTCRN enhancement, all three stages together and batched
decoding (the whisperx backend). The first word of every sentence must land near its true
onset in original time; padding the recording with leading silence must shift every output
time by exactly that padding.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import soundfile
import soxr
from rapidfuzz.distance import Levenshtein

from toolkit.core.transcripts import Interval, Reference, Utterance, Word
from toolkit.corpus.freeze import freeze
from toolkit.demo.sounds import pink_noise, trim_silence
from toolkit.demo.synth import SPEAKERS, detect_voice, synthesize
from toolkit.formats import write_reference_textgrid
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]

RATE = 44_100
SENTENCES = (
    "Ninguém sabia onde estava o documento.",
    "A reunião começou às dez horas da manhã.",
    "Maria Aparecida não concordou com a proposta.",
    "O relatório chegou atrasado outra vez.",
)
ONSETS = (2.0, 13.5, 27.0, 40.5)
DURATION = 52.0
PAD_S = 3.2  # a whole number of Silero frames (32 ms), so VAD regions shift exactly
# How far a first-word onset may sit from the truth: Whisper base's own word-timing
# precision. Its DTW timing pulls the first word of a segment back toward the segment start,
# so after a long silence the onset comes up to about a second early (measured here: 0.56 to
# 1.08 s early for the whole-file arms) and never late. Per-region VAD crops start 0.2 s
# (speech_pad_ms) before the speech, so arms decoding one region at a time (alone, or joined
# with each word mapped through its own region) are held to a tight window; merged units hold
# several sentences with pauses between them, so later sentences in a unit are timed like the
# whole-file arms. Mapping mistakes (a missing window origin, unit
# offset or padding) are whole seconds to tens of seconds.
EARLY_TOLERANCE_S = {
    "baseline": 1.3,
    "windows": 1.3,
    "windows@9s": 1.3,
    "pauses": 1.3,
    "pauses_raw": 1.3,
    "baseline_repaired": 1.3,
    "enhance": 1.3,
    "second": 1.3,
    "combined": 1.3,
    "vad": 0.35,
    "vad_merged": 1.3,
    "vad_regions": 0.35,
    "vad_windows": 1.3,
    "vad_windows@9s": 1.3,
    "vad_pauses": 1.3,
    "everything": 0.35,
    "everything@9s": 0.35,
    "batched": 1.3,
}
LATE_TOLERANCE_S = 0.3
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


def _recording(cache: Path) -> tuple[np.ndarray, list[Utterance]]:
    voice = detect_voice()
    rng = np.random.default_rng(7)
    samples = 0.002 * pink_noise(int(DURATION * RATE), RATE, rng).astype(np.float32)
    utterances = []
    for text, onset in zip(SENTENCES, ONSETS):
        clip = synthesize(text, voice, SPEAKERS[0], cache)
        speech = trim_silence(soxr.resample(clip.samples, clip.sample_rate, RATE), RATE)
        start = round(onset * RATE)
        samples[start : start + len(speech)] += 0.5 * speech / np.abs(speech).max()
        utterances.append(Utterance(start / RATE, (start + len(speech)) / RATE, text, "speaker-a"))
    return samples, utterances


def _reference(rid: str, utterances: list[Utterance], shift: float) -> Reference:
    moved = [Utterance(u.start + shift, u.end + shift, u.text, u.speaker) for u in utterances]
    words = [Word(u.text.split()[0], u.start, u.start + 0.2) for u in moved]
    speech = [Interval(u.start, u.end, "speech") for u in moved]
    return Reference(rid, moved, words=words, speech=speech)


@pytest.fixture(scope="module")
def experiment(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("offsets")
    samples, utterances = _recording(root / "synth-cache")
    padded = np.concatenate([np.zeros(round(PAD_S * RATE), dtype=np.float32), samples])
    (root / "corpus" / "audio").mkdir(parents=True)
    (root / "corpus" / "refs").mkdir()
    for rid, audio, shift in (("plain", samples, 0.0), ("padded", padded, PAD_S)):
        soundfile.write(root / "corpus" / "audio" / f"{rid}.wav", audio, RATE, subtype="PCM_16")
        write_reference_textgrid(
            _reference(rid, utterances, shift), root / "corpus" / "refs" / f"{rid}.TextGrid", len(audio) / RATE
        )
    with open(root / "corpus" / "splits.csv", "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "split", "strata", "speaker"])
        writer.writerow(["plain", "tuning", "clean", "speaker-a"])
        writer.writerow(["padded", "challenge", "padded", "speaker-a"])
    freeze(
        root / "corpus" / "audio",
        root / "corpus" / "refs",
        root / "corpus" / "manifest.json",
        splits_csv=root / "corpus" / "splits.csv",
    )
    text = DEMO.read_text(encoding="utf-8")
    text = text.replace("length_s = 30.0", "length_s = 20.0").replace("overlap_s = 5.0", "overlap_s = 4.0")
    text = text.replace("search_s = 4.0", "search_s = 3.0")
    # "windows" on the fixed grid (shifted to 9 s too), "windows_pauses" with its edges in VAD pauses;
    # the arm "pauses" ends with the demo's onset repair stage, "pauses_raw" does not.
    windows = text[text.index("[components.windows]") : text.index("# Onset repair (toolkit/pipeline/onset_repair.py)")]
    grid = (
        windows[: windows.index("[components.windows.pauses]")]
        .replace('placement = "vad_pauses"', 'placement = "grid"')
        .replace("shifted_origins_s = []", "shifted_origins_s = [9.0]")
    )
    text = text.replace(windows, grid + "\n" + windows.replace("[components.windows", "[components.windows_pauses"))
    assert "[components.onset_repair]" in text
    # The demo's vad puts the regions back to back, the 8 s pauses between sentences dropped, and
    # decodes them as one stream; vad_regions decodes each region on its own; vad_merged merges them into
    # units of up to 30 s (the pauses inside kept), each decoded on its own.
    vad = text[text.index("[components.vad]") : text.index("[components.windows]")]
    assert "merge_max_s = 0.0" in vad and "merge_max_gap_s = 0.0" in vad and "join_units = true" in vad
    regions = (
        vad.replace("[components.vad]", "[components.vad_regions]")
        .replace("join_units = true", "join_units = false")
        .replace("redecode_skipped_s = 3.0", "redecode_skipped_s = 0.0")
    )
    merged = (
        regions.replace("[components.vad_regions]", "[components.vad_merged]")
        .replace("merge_max_s = 0.0", "merge_max_s = 30.0")
        .replace("merge_max_gap_s = 0.0", "merge_max_gap_s = 30.0")
    )
    text = (
        text[: text.rindex("\n[arms]") + 1]
        + regions
        + merged
        + (
            '[arms]\nbaseline = []\nvad = ["vad"]\nvad_regions = ["vad_regions"]\nvad_merged = ["vad_merged"]\n'
            'windows = ["windows"]\n'
            'pauses = ["windows_pauses", "onset_repair"]\npauses_raw = ["windows_pauses"]\n'
            'baseline_repaired = ["onset_repair"]\n'
            'enhance = ["gtcrn"]\neverything = ["gtcrn", "vad_regions", "windows"]\nsecond = ["second_replace"]\n'
            'vad_windows = ["vad", "windows"]\nvad_pauses = ["vad", "windows_pauses"]\n'
            'combined = ["second_combine"]\nbatched = ["batched"]\n'
        )
    )
    (root / "experiment.toml").write_text(text, encoding="utf-8")
    loaded = load_experiment(root)
    summary = run_experiment(loaded, "tuning", progress=False)
    return loaded, summary, utterances


def _first_word_onsets(words: list[Word], utterances: list[Utterance]) -> list[float | None]:
    """Onset of the hypothesis word that matches each sentence's first word, nearest its true onset."""
    normalize = Normalizer(NormalizationPolicy.normalized())
    found = []
    for utterance in utterances:
        target = normalize.words(utterance.text)[0]
        candidates = [
            w.start
            for w in words
            if w.start is not None and normalize.words(w.text)[:1] == [target] and abs(w.start - utterance.start) < 3.0
        ]
        found.append(min(candidates, key=lambda s: abs(s - utterance.start)) if candidates else None)
    return found


# Declared arms, and the two grid-windowed arms rerun with the window grid shifted to 9 s.
ARMS = [
    "baseline",
    "vad",
    "vad_regions",
    "vad_merged",
    "vad_windows",
    "vad_windows@9s",
    "vad_pauses",
    "windows",
    "windows@9s",
    "pauses",
    "pauses_raw",
    "baseline_repaired",
    "enhance",
    "everything",
    "everything@9s",
    "second",
    "combined",
    "batched",
]


@pytest.mark.parametrize("arm", ARMS)
def test_first_word_of_each_sentence_lands_at_its_original_time(experiment, arm: str) -> None:
    _, summary, utterances = experiment
    words = summary.folder.read_hypothesis(arm, "plain").words
    onsets = _first_word_onsets(words, utterances)
    for utterance, onset in zip(utterances, onsets):
        assert onset is not None, f"{arm}: no first word for {utterance.text!r} in {[w.text for w in words]}"
        error = onset - utterance.start
        assert -EARLY_TOLERANCE_S[arm] <= error <= LATE_TOLERANCE_S, (arm, utterance.text, onset, utterance.start)
    assert all(w.start <= w.end for w in words if w.timed)
    assert all(0.0 <= w.start and w.end <= DURATION + 0.01 for w in words if w.timed)


def test_arm_records_keep_vad_segments_seams_and_enhancement_delay(experiment) -> None:
    _, summary, _ = experiment
    vad = summary.folder.read_arm_output("vad_merged", "plain")
    assert vad.vad_segments and all(a < b for a, b in vad.vad_segments)
    # Merged: fewer units than regions, each within 30 s, made of whole regions; unmerged: one unit per region.
    units = [(u["original_start"], u["original_end"]) for u in vad.units]
    regions = [tuple(r) for r in vad.vad_segments]
    assert 1 < len(units) < len(regions)
    assert all(b - a <= 30.0 + 1e-6 for a, b in units)
    assert all(sum(a - 1e-6 <= r0 and r1 <= b + 1e-6 for a, b in units) == 1 for r0, r1 in regions)
    per_region = summary.folder.read_arm_output("vad_regions", "plain")
    edges = [t for u in per_region.units for t in (u["original_start"], u["original_end"])]
    assert edges == pytest.approx([t for r in regions for t in r], abs=1e-3)
    assert per_region.vad_segments == vad.vad_segments
    # Joined: one unit from the first region's start to the last one's end, decoded once; what it decoded
    # is exactly the regions (the pauses between them never reached the recognizer).
    joined = summary.folder.read_arm_output("vad", "plain")
    assert [u["unit"] for u in joined.units] == ["vadjoined"]
    assert (joined.units[0]["original_start"], joined.units[0]["original_end"]) == pytest.approx(
        (regions[0][0], regions[-1][1]), abs=1e-3
    )
    assert joined.vad_segments == vad.vad_segments
    # Windows inside the joined stream are laid over the stream (16 s of speech: one 20 s window).
    for arm in ("vad_windows", "vad_windows@9s", "vad_pauses"):
        output = summary.folder.read_arm_output(arm, "plain")
        assert [u["unit"] for u in output.units] == [f"vadjoined.win{i:03d}" for i in range(len(output.units))]
        assert len(output.seams) == len(output.units) - 1
    batched = summary.folder.read_arm_output("batched", "plain")
    assert {u["recognizer"] for u in batched.units} == {"whisper_base_batched"}
    assert batched.recognizer_notes["whisper_base_batched"]["aligner"] == "not configured"
    windows = summary.folder.read_arm_output("windows", "plain")
    assert len(windows.seams) == 2  # 52 s in 20 s windows with 4 s overlap: three windows
    assert all(s["start"] < s["end"] for s in windows.seams)
    shifted = summary.folder.read_arm_output("windows@9s", "plain")
    assert [(s["start"], s["end"]) for s in shifted.seams] == [(9.0, 13.0), (25.0, 29.0), (41.0, 45.0)]
    enhance = summary.folder.read_arm_output("enhance", "plain")
    assert "delay_s" in enhance.enhancement and abs(enhance.enhancement["delay_s"]) < 0.05
    # Three arms enhance the one tuning recording with GTCRN; the enhanced audio is made once.
    loaded = experiment[0]
    assert len(list((loaded.folder / "cache").glob("*/*.npy"))) == 1
    assert summary.folder.read_arm_output("everything", "plain").enhancement == enhance.enhancement
    record = json.loads(summary.folder.record.read_text())
    assert record["status"] == "complete"
    assert {row["arm"] for row in record["measurements"]} == set(ARMS)
    assert all(row["wall_s"] > 0 and row["real_time_factor"] > 0 for row in record["measurements"])


def test_windows_placed_in_pauses_cut_no_sentence_and_keep_their_overlap(experiment) -> None:
    _, summary, utterances = experiment
    output = summary.folder.read_arm_output("pauses", "plain")
    units = output.units
    spans = [(u["original_start"], u["original_end"]) for u in units]
    assert spans[0][0] == 0.0 and spans[-1][1] == pytest.approx(DURATION, abs=0.01)
    assert all(prev[0] < nxt[0] < prev[1] < nxt[1] for prev, nxt in zip(spans, spans[1:]))
    assert len(output.seams) == len(units) - 1 >= 2
    # Sentences are 9 to 11 s apart in 52 s of faint noise: every inner edge finds a pause,
    # and none falls inside a sentence.
    for unit in units:
        assert set(unit["placement"].values()) <= {"pause", "recording edge"}, unit
    for edge in [s for s, _ in spans[1:]] + [e for _, e in spans[:-1]]:
        assert not any(u.start < edge < u.end for u in utterances), (edge, spans)
    # The seams are the shared intervals, nothing wider.
    assert [(s["start"], s["end"]) for s in output.seams] == [(nxt[0], prev[1]) for prev, nxt in zip(spans, spans[1:])]


@pytest.mark.parametrize(("arm", "without"), [("pauses", "pauses_raw"), ("baseline_repaired", "baseline")])
def test_onset_repair_stage_moves_only_starts_later_in_order_and_counts_them(
    experiment, arm: str, without: str
) -> None:
    _, summary, utterances = experiment
    repaired = summary.folder.read_hypothesis(arm, "plain").words
    raw = summary.folder.read_hypothesis(without, "plain").words
    assert [(w.text, w.end, w.confidence) for w in repaired] == [(w.text, w.end, w.confidence) for w in raw]
    moved = [(a, b) for a, b in zip(raw, repaired) if a.start != b.start]
    assert summary.folder.read_arm_output(arm, "plain").retimed_onsets == len(moved)
    assert summary.folder.read_arm_output(without, "plain").retimed_onsets == 0
    assert all(a.start < b.start <= b.end for a, b in moved)
    starts = [w.start for w in repaired if w.start is not None]
    assert starts == sorted(starts)
    # A moved start lies in a pause between sentences (the speech onset the VAD heard, at most
    # speech_pad_ms before a sentence), never inside another sentence.
    for _, word in moved:
        assert not any(u.start + 0.3 < word.start < u.end for u in utterances), word


def test_the_repair_shares_the_windows_pause_pass_with_the_same_silero_parameters(experiment) -> None:
    _, summary, _ = experiment
    vad = summary.folder.read_arm_output("pauses", "plain").reuse["vad"]
    # Two passes asked for (window placement, onset repair), one computed at most: same cache entry.
    assert vad.computed + vad.reused == 2 and vad.computed <= 1


def test_second_model_is_labelled_and_its_disagreements_feed_the_review_list(experiment) -> None:
    _, summary, _ = experiment
    record = summary.folder.read_record().to_json()
    relation = record["config"]["recognizer_relations"]["whisper_base_greedy"]
    assert relation["relation"] == "same weights, different decoding configuration"
    assert "beam_size" in relation["decoding_changed"]
    combined = summary.folder.read_arm_output("combined", "plain")
    assert {u["recognizer"] for u in combined.units} == {"whisper_base", "whisper_base_greedy"}
    # Both recognizers' decodes were already made by the baseline and second arms: nothing is decoded twice.
    assert all(u["cached"] for u in combined.units)
    for span in combined.disagreements:
        assert span["kept"] in ("whisper_base", "whisper_base_greedy")
        assert span["start"] is None or 0 <= span["start"] <= span["end"] <= DURATION + 0.01
    review = summary.folder.read_disagreement_list("second", "plain")
    assert (review.label_a, review.label_b) == ("baseline", "second")
    assert summary.folder.disagreements("second", "plain", "csv").is_file()
    for listed in review.spans:
        assert listed.start is None or 0 <= listed.start <= (listed.end or 0) <= DURATION + 0.01
    assert not summary.folder.disagreements("baseline", "plain").exists()
    hypothesis = summary.folder.read_hypothesis("second", "plain")
    assert hypothesis.meta["recognizers"]["whisper_base_greedy"]["word_times"] == "recognizer"


def test_evaluation_scores_every_arm_and_writes_the_report(experiment) -> None:
    from toolkit.evaluate import evaluate_run

    _, summary, _ = experiment
    evaluation = evaluate_run(summary.folder)
    assert set(evaluation.per_recording["arm"]) == set(ARMS)
    overall = evaluation.aggregate[evaluation.aggregate["stratum"] == "all"].set_index("arm")
    assert (overall["ref_words"] == 27).all()  # four sentences, 27 reference words, for every arm
    assert overall.loc["baseline", "wer"] < 0.5
    assert overall.loc["vad", "vad_recall"] > 0.9
    assert set(evaluation.comparisons) == set(ARMS) - {"baseline"}
    assert "only 1 recording" in evaluation.comparisons["vad"].warning
    for name in ("per_recording.csv", "aggregate.csv", "paired.json", "runtime.csv", "seams.csv", "signature.txt"):
        assert (summary.folder.scores / name).is_file()
    assert len(evaluation.seams[evaluation.seams["arm"] == "windows"]) == 2
    assert (overall.loc["windows", "seams"], overall.loc["windows@9s", "seams"]) == (2, 3)
    assert pd.isna(overall.loc["vad", "seams"])  # only windowed arms get seam figures
    spread = evaluation.origin_spread.set_index("arm")
    assert set(spread.index) == {"windows", "everything", "vad_windows"} and (spread["origins"] == 2).all()
    wers = overall.loc[["windows", "windows@9s"], "wer"]
    assert spread.loc["windows", "spread_points"] == pytest.approx(100 * (wers.max() - wers.min()))
    markdown = evaluation.report_markdown.read_text()
    assert "## Arms" in markdown and evaluation.signature in markdown
    assert markdown.count("| everything |") >= 2
    page = evaluation.report_html.read_text()
    assert page.count("data:image/png;base64,") == 3  # ΔWER by cause, ΔWER per recording (forest), drift
    assert "<strong>Caveat:</strong>" in page and "**" not in page and "`" not in page
    assert "vad" in evaluation.table_text and "signature:" in evaluation.table_text


def test_ctm_is_written_in_original_time(experiment) -> None:
    _, summary, _ = experiment
    hypothesis = summary.folder.read_hypothesis("vad", "plain")
    lines = [
        line.split()
        for line in summary.folder.hypothesis_ctm("vad", "plain").read_text().splitlines()
        if line and not line.startswith(";;")
    ]
    timed = [w for w in hypothesis.words if w.timed]
    assert len(lines) == len(timed)
    for fields, word in zip(lines, timed):
        assert fields[0] == "plain" and abs(float(fields[2]) - word.start) < 1e-3


@pytest.mark.parametrize("arm", ["vad", "vad_regions", "batched", "baseline"])
def test_leading_silence_shifts_every_output_time_by_the_padding(experiment, arm: str) -> None:
    loaded, summary, _ = experiment
    padded_run = run_experiment(loaded, "challenge", [arm], progress=False)
    plain = summary.folder.read_hypothesis(arm, "plain").words
    padded = padded_run.folder.read_hypothesis(arm, "padded").words
    blocks = Levenshtein.opcodes([w.text for w in plain], [w.text for w in padded])
    pairs = [
        (plain[i], padded[j])
        for block in blocks
        if block.tag == "equal"
        for i, j in zip(range(block.src_start, block.src_end), range(block.dest_start, block.dest_end))
        if plain[i].timed and padded[j].timed
    ]
    # Whisper may hallucinate differently in trailing noise, so count against the shorter output.
    assert len(pairs) >= 0.8 * min(len(plain), len(padded))
    shifts = np.array([b.start - a.start for a, b in pairs] + [b.end - a.end for a, b in pairs])
    if arm == "vad_regions":  # the same speech crops decode the same: the shift is exact to one Whisper time step
        assert np.all(np.abs(shifts - PAD_S) <= 0.02 + 1e-9), shifts
    elif arm != "baseline":
        # The same units, but resampling the padded file leaves its samples ~1e-7 off the plain
        # one's, and over a 28 s unit Whisper's word alignment may then move a boundary by two steps.
        assert np.all(np.abs(shifts - PAD_S) <= 0.04 + 1e-9), shifts
        assert np.mean(np.abs(shifts - PAD_S) <= 0.02 + 1e-9) >= 0.9, shifts
    else:  # the 30 s decoding windows see different audio, so Whisper may retime a little
        assert abs(np.median(shifts) - PAD_S) < 0.05
        assert np.mean(np.abs(shifts - PAD_S) < 0.3) >= 0.8, shifts


def test_unchanged_rerun_recomputes_nothing_and_interrupted_run_resumes(experiment) -> None:
    loaded, summary, _ = experiment
    before = {p: p.read_bytes() for p in summary.folder.root.glob("hypotheses/*/*")}
    rerun = run_experiment(loaded, "tuning", progress=False)
    assert rerun.folder == summary.folder
    assert (rerun.computed, rerun.reused) == (0, len(ARMS))
    assert {p: p.read_bytes() for p in summary.folder.root.glob("hypotheses/*/*")} == before

    # An interruption leaves an arm without its final output file (written last) and maybe a temp file.
    summary.folder.arm_output("windows", "plain").unlink()
    (summary.folder.arm_output("windows", "plain").parent / ".plain.json.abc.part").write_text("{")
    resumed = run_experiment(loaded, "tuning", progress=False)
    assert (resumed.computed, resumed.reused) == (1, len(ARMS) - 1)
    units = summary.folder.read_arm_output("windows", "plain").units
    assert units and all(unit["cached"] for unit in units)  # the decodes themselves came from the cache
    assert {p: p.read_bytes() for p in summary.folder.root.glob("hypotheses/*/*")} == before

    # A changed experiment file is a different run, never a silently reused one.
    shutil.copy(loaded.path, loaded.path.with_suffix(".bak"))
    changed = loaded.path.read_text().replace("speech_pad_ms = 200", "speech_pad_ms = 150")
    loaded.path.write_text(changed)
    try:
        changed_run = run_experiment(load_experiment(loaded.path), "tuning", ["vad"], progress=False)
        assert changed_run.folder != summary.folder and changed_run.computed == 1
    finally:
        shutil.move(loaded.path.with_suffix(".bak"), loaded.path)
