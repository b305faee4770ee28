"""The batched recognizer's tail re-decode: the rule on constructed chunks, and real speech it recovers offline."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from shared_data import PTBR_DEV

from toolkit.asr import make_recognizer
from toolkit.asr.whisperx_backend import Chunk, unfinished_tails
from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, resample
from toolkit.core.transcripts import Word
from toolkit.pipeline.experiment import load_experiment
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer

DEMO = Path(__file__).resolve().parents[1] / "experiments" / "demo" / "experiment.toml"
CLIPS = ("LapsBM_0385", "LapsBM_0415")
ONSETS = (4.0, 12.0)
_plain = Normalizer(NormalizationPolicy.normalized()).words

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


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_sentence_after_a_digital_silence_is_recovered_by_the_redecode() -> None:
    """Two shared LapsBM sentences 8 s apart in one chunk, digital silence between: the demo's batched recognizer."""
    if not all((PTBR_DEV / "lapsbm" / f"{c}.wav").exists() for c in CLIPS):
        pytest.skip(f"development data not present ({PTBR_DEV}); it lives outside the repository")
    clips = [resample(load_audio(PTBR_DEV / "lapsbm" / f"{c}.wav"), 16_000).samples for c in CLIPS]
    samples = np.zeros(round(16_000 * (ONSETS[1] + 1.0)) + len(clips[1]), dtype=np.float32)
    for clip, onset in zip(clips, ONSETS):
        samples[round(onset * 16_000) : round(onset * 16_000) + len(clip)] += clip
    signal = Signal.original(samples, 16_000)
    spec = load_experiment(DEMO).recognizers["whisper_base_batched"].to_json()  # its Silero profile resolved
    assert spec["decoding"]["tail_redecode_gap_s"] == 1.0
    second = _plain((PTBR_DEV / "lapsbm" / f"{CLIPS[1]}.txt").read_text(encoding="utf-8"))

    def heard_after(gap_s: float) -> tuple[list[Word], dict]:
        recognizer = make_recognizer({**spec, "decoding": {**spec["decoding"], "tail_redecode_gap_s": gap_s}})
        assert len(recognizer.speech_chunks(signal)) == 1  # both sentences in one chunk
        words = [w for w in recognizer.transcribe(signal).words if w.start >= ONSETS[1] - 1.0]
        return words, recognizer.notes

    # Without the re-decode the decoder ends the chunk at the silence: the second sentence is lost.
    without, notes = heard_after(0.0)
    assert without == [] and "tails_redecoded" not in notes
    words, notes = heard_after(1.0)
    found = _plain(" ".join(w.text for w in words))
    assert notes["tails_redecoded"] == 1
    assert sum(w in found for w in second) >= 0.7 * len(second)
    assert all(ONSETS[1] - 1.0 <= w.start and w.end <= ONSETS[1] + len(clips[1]) / 16_000 + 0.5 for w in words)


@pytest.mark.slow
@pytest.mark.needs_model
def test_an_arm_sums_the_tails_its_units_redecoded(tmp_path: Path) -> None:
    """The batched recognizer inside +VAD: two cut & merge units, each with a sentence after a silence."""
    import csv

    import soundfile

    from toolkit.corpus.freeze import freeze
    from toolkit.pipeline.engine import run_experiment
    from toolkit.pipeline.experiment import load_experiment

    if not all((PTBR_DEV / "lapsbm" / f"{c}.wav").exists() for c in CLIPS):
        pytest.skip(f"development data not present ({PTBR_DEV}); it lives outside the repository")
    clips = [resample(load_audio(PTBR_DEV / "lapsbm" / f"{c}.wav"), 16_000).samples for c in CLIPS]
    onsets = (*ONSETS, *(onset + 36.0 for onset in ONSETS))  # the second pair more than 30 s after the first
    samples = np.zeros(round(16_000 * (onsets[-1] + 1.0)) + len(clips[1]), dtype=np.float32)
    for clip, onset in zip(clips * 2, onsets):
        samples[round(onset * 16_000) : round(onset * 16_000) + len(clip)] += clip
    corpus = tmp_path / "corpus"
    (corpus / "audio").mkdir(parents=True)
    (corpus / "refs").mkdir()
    soundfile.write(corpus / "audio" / "pairs.wav", samples, 16_000, subtype="PCM_16")
    (corpus / "refs" / "pairs.txt").write_text(
        " ".join((PTBR_DEV / "lapsbm" / f"{c}.txt").read_text(encoding="utf-8").strip() for c in CLIPS * 2),
        encoding="utf-8",
    )
    with open(corpus / "splits.csv", "w", newline="") as handle:
        csv.writer(handle).writerows([["id", "split"], ["pairs", "tuning"]])
    freeze(corpus / "audio", corpus / "refs", corpus / "manifest.json", splits_csv=corpus / "splits.csv")
    # The demo's vad joins its regions into one stream; here WhisperX's units of up to 30 s, each apart.
    joined = "merge_max_s = 0.0\nmerge_max_gap_s = 0.0\njoin_units = true\nredecode_skipped_s = 3.0\n"
    apart = "merge_max_s = 30.0\nmerge_max_gap_s = 30.0\njoin_units = false\nredecode_skipped_s = 0.0\n"
    text = DEMO.read_text(encoding="utf-8")
    assert text.count(joined) == 1
    (tmp_path / "experiment.toml").write_text(
        text.replace(joined, apart) + 'vad_batched = ["vad", "batched"]\n', encoding="utf-8"
    )
    summary = run_experiment(load_experiment(tmp_path), "tuning", ["vad_batched"], progress=False)
    output = summary.folder.read_arm_output("vad_batched", "pairs")
    units = [u for u in output.units if u["recognizer"] == "whisper_base_batched"]
    assert len(units) == 2 and [u.get("tails_redecoded") for u in units] == [1, 1]
    notes = summary.folder.read_hypothesis("vad_batched", "pairs").meta["recognizers"]["whisper_base_batched"]
    assert notes["tails_redecoded"] == 2 and notes["decoder"].startswith("faster-whisper BatchedInferencePipeline")


_CHUNKS_WITHOUT_PYANNOTE = """
import sys, json
import numpy as np
from toolkit.asr import make_recognizer
from toolkit.audio.signal import Signal
from toolkit.pipeline.experiment import load_experiment
spec = load_experiment(sys.argv[1]).recognizers["whisper_base_batched"].to_json()
recognizer = make_recognizer(spec)
recognizer.load()
samples = np.load(sys.argv[2])
chunks = recognizer._chunks(Signal.original(samples, 16_000))
print(json.dumps({"pyannote": [m for m in sys.modules if m.startswith(("pyannote", "whisperx.vads"))],
                  "chunks": [[c.start, c.end, [list(r) for r in c.regions]] for c in chunks]}))
"""


@pytest.mark.needs_model
def test_silero_chunks_are_whisperx_merges_without_loading_pyannote(tmp_path: Path) -> None:
    """The batched recognizer with Silero: WhisperX's chunks of the same regions, and no pyannote in memory
    (its import alone held about 370 MB of the batched worker's peak)."""
    import json
    import subprocess
    import sys

    from whisperx.diarize import Segment
    from whisperx.vads import Vad

    from toolkit.audio.vad import silero_speech_regions

    if not all((PTBR_DEV / "lapsbm" / f"{c}.wav").exists() for c in CLIPS):
        pytest.skip(f"development data not present ({PTBR_DEV}); it lives outside the repository")
    clips = [resample(load_audio(PTBR_DEV / "lapsbm" / f"{c}.wav"), 16_000).samples for c in CLIPS * 3]
    onsets = [0.5 + 11.0 * i for i in range(len(clips))]  # six sentences, 11 s apart: several 30 s chunks
    samples = np.zeros(round(16_000 * (onsets[-1] + 1.0)) + max(map(len, clips)), dtype=np.float32)
    for clip, onset in zip(clips, onsets):
        samples[round(onset * 16_000) : round(onset * 16_000) + len(clip)] += clip
    np.save(tmp_path / "audio.npy", samples)
    found = json.loads(
        subprocess.run(
            [sys.executable, "-c", _CHUNKS_WITHOUT_PYANNOTE, str(DEMO), str(tmp_path / "audio.npy")],
            check=True,
            capture_output=True,
            text=True,
            cwd=Path(__file__).resolve().parents[1],
        ).stdout
    )
    assert found["pyannote"] == []
    config = make_recognizer(load_experiment(DEMO).recognizers["whisper_base_batched"].to_json()).config
    regions = silero_speech_regions(Signal.original(samples, 16_000), config.silero)
    expected = Vad.merge_chunks(
        [Segment(a, b, "UNKNOWN") for a, b in regions], config.chunk_size_s, onset=0.5, offset=None
    )
    assert len(expected) > 1
    assert found["chunks"] == [[c["start"], c["end"], [list(r) for r in c["segments"]]] for c in expected]
