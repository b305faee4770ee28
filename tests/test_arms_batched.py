"""The demo's batched arm (whisperx backend) and merged +VAD arm on real pt-BR clips: offline, in original time.

One 22.05 kHz recording holds two shared LapsBM sentences at known onsets in a quiet pink-noise
floor (a real room is never digitally silent; Whisper reads exact zeros as the padding after
the end of audio, and batched decoding, which has no timestamps, then stops at the pause).
The demo experiment's ``batched`` and ``vad`` arms run through the real engine with every
HTTP(S) request pointed at a closed port, so a model download anywhere would fail the run.
Each sentence's words must come back inside that sentence's span of the original recording.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pytest
import soundfile
import soxr
from shared_data import PTBR_DEV

from toolkit.audio.io import load_audio
from toolkit.core.transcripts import Interval, Reference, Utterance, Word
from toolkit.corpus.freeze import freeze
from toolkit.demo.sounds import pink_noise
from toolkit.formats import write_reference_textgrid
from toolkit.pipeline.engine import run_experiment
from toolkit.pipeline.experiment import load_experiment
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer

pytestmark = [pytest.mark.slow, pytest.mark.needs_model]

RATE = 22_050
CLIPS = ("LapsBM_0385", "LapsBM_0415")
ONSETS = (4.0, 12.0)
DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"


_plain = Normalizer(NormalizationPolicy.normalized()).words  # "266" and "duzentos e sessenta e seis" alike


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    if not all((PTBR_DEV / "lapsbm" / f"{c}.wav").exists() for c in CLIPS):
        pytest.skip(f"development data not present ({PTBR_DEV}); it lives outside the repository")
    root = tmp_path_factory.mktemp("batched")
    clips = [load_audio(PTBR_DEV / "lapsbm" / f"{c}.wav") for c in CLIPS]
    speech = [soxr.resample(c.samples - c.samples.mean(), c.sample_rate, RATE) for c in clips]
    duration = ONSETS[-1] + len(speech[-1]) / RATE + 2.0
    samples = 0.002 * pink_noise(round(duration * RATE), RATE, np.random.default_rng(3)).astype(np.float32)
    utterances = []
    for clip, onset, name in zip(speech, ONSETS, CLIPS):
        start = round(onset * RATE)
        samples[start : start + len(clip)] += clip
        text = (PTBR_DEV / "lapsbm" / f"{name}.txt").read_text(encoding="utf-8").strip()
        utterances.append(Utterance(onset, onset + len(clip) / RATE, text, "reader"))
    corpus = root / "corpus"
    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    soundfile.write(corpus / "audio" / "two.wav", samples, RATE, subtype="PCM_16")
    reference = Reference("two", utterances, speech=[Interval(u.start, u.end, "speech") for u in utterances])
    write_reference_textgrid(reference, corpus / "refs" / "two.TextGrid", duration)
    with open(corpus / "splits.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["id", "split"], ["two", "tuning"]])
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    (root / "experiment.toml").write_text(DEMO.read_text(encoding="utf-8"), encoding="utf-8")
    mp = pytest.MonkeyPatch()
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        mp.setenv(name, "http://127.0.0.1:9")  # the discard port: any download attempt fails
    for name in ("NO_PROXY", "no_proxy"):
        mp.delenv(name, raising=False)
    mp.setenv("HF_HUB_OFFLINE", "1")
    try:
        summary = run_experiment(load_experiment(root), "tuning", ["batched", "vad"], progress=False)
    finally:
        mp.undo()
    return summary, utterances


@pytest.mark.parametrize("arm", ["batched", "vad"])
def test_each_sentence_comes_back_inside_its_span_of_the_original(run, arm: str) -> None:
    summary, utterances = run
    words: list[Word] = summary.folder.read_hypothesis(arm, "two").words
    assert words and all(w.timed for w in words)
    for utterance in utterances:
        inside = [w for w in words if utterance.start - 1.0 <= w.start and w.end <= utterance.end + 0.5]
        expected = _plain(utterance.text)
        found = _plain(" ".join(w.text for w in inside))
        assert sum(w in found for w in expected) >= 0.7 * len(expected), (arm, utterance.text, found)
    # Nothing heard in the pauses before, between or after the sentences.
    assert all(any(u.start - 1.0 <= w.start and w.end <= u.end + 0.5 for u in utterances) for w in words)


def test_the_batched_arm_decodes_with_its_own_recognizer_offline(run) -> None:
    summary, _ = run
    output = summary.folder.read_arm_output("batched", "two")
    assert {u["recognizer"] for u in output.units} == {"whisper_base_batched"}
    notes = output.recognizer_notes["whisper_base_batched"]
    assert notes["aligner"] == "not configured" and notes["word_times"] == "recognizer"
    relation = summary.folder.read_record().config.recognizer_relations["whisper_base_batched"]
    assert relation["same_weights"] and relation["backend_changed"]


def test_the_audio_the_batched_recognizer_never_decoded_counts_as_cut_by_vad(run) -> None:
    """Batched decoding decodes only its Silero chunks: that is a VAD stage for the speech-recall gate."""
    from toolkit.evaluate import evaluate_run

    summary, utterances = run
    output = summary.folder.read_arm_output("batched", "two")
    kept = output.vad_segments
    assert kept and all(a < b for a, b in kept)
    assert sum(b - a for a, b in kept) < output.duration - 1.0  # the silences before and between were dropped
    assert all(any(a <= (u.start + u.end) / 2 <= b for a, b in kept) for u in utterances)
    scores = evaluate_run(summary.folder).scores
    assert scores["batched"]["two"].vad is not None and scores["batched"]["two"].vad.speech_s > 0
