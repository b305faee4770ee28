"""Recognition: bundled model rebuild and verification, both backends on real pt-BR speech, offsets."""

from __future__ import annotations

import re
import shutil
import unicodedata
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from shared_data import PTBR_DEV

from toolkit.asr import make_recognizer, relation, resolve_model
from toolkit.asr.faster_whisper_backend import until_short_tail
from toolkit.asr.models import BUNDLED_SHA256
from toolkit.asr.segments import NO_FALLBACK
from toolkit.audio.io import load_audio
from toolkit.audio.signal import Signal, pad, resample
from toolkit.core.errors import InputError
from toolkit.core.files import sha256_file
from toolkit.core.transcripts import Word

CLIP = PTBR_DEV / "lapsbm" / "LapsBM_0385.wav"
FAST = {"beam_size": 1, "best_of": 1}


def _clip() -> Signal:
    """A real LapsBM sentence with its DC offset (about -0.13) removed, so padding adds no click."""
    if not CLIP.exists():
        pytest.skip(f"development data not present ({CLIP}); it lives outside the repository")
    signal = load_audio(CLIP)
    return Signal.original(signal.samples - signal.samples.mean(), signal.sample_rate)


def _plain(text: str) -> list[str]:
    folded = unicodedata.normalize("NFC", text.lower())
    return re.findall(r"\w+", folded)


def _recall(words: list[Word], reference: str) -> float:
    """Share of reference words found in the hypothesis (a rough WER-like check)."""
    hypothesis = _plain(" ".join(w.text for w in words))
    expected = _plain(reference)
    return sum(1 for w in expected if w in hypothesis) / len(expected)


def _check_times(words: list[Word], lo: float, hi: float) -> None:
    assert words and all(w.timed for w in words)
    assert all(lo <= w.start <= w.end <= hi for w in words)
    starts = [w.start for w in words]
    assert starts == sorted(starts)
    assert all(re.fullmatch(r"seg\d{4}", w.segment_id) for w in words)
    assert all(0.0 <= w.confidence <= 1.0 for w in words)


# --- models ------------------------------------------------------------------------------


@pytest.mark.needs_model
def test_bundled_model_is_rebuilt_and_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ABLATE_CACHE", str(tmp_path))
    info = resolve_model("whisper-base")
    assert info.source == "bundled" and info.weights_sha256 == BUNDLED_SHA256
    folder = Path(info.path)
    assert folder.parent == tmp_path / "models"
    assert {p.name for p in folder.iterdir()} == {"model.bin", "config.json", "tokenizer.json", "vocabulary.txt"}
    assert sha256_file(folder / "model.bin") == BUNDLED_SHA256
    assert resolve_model("whisper-base") == info  # second call reuses the rebuilt file


@pytest.mark.needs_model
def test_tampered_model_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = Path(resolve_model("whisper-base").path)
    target = tmp_path / "models" / "whisper-base"
    shutil.copytree(source, target)
    with open(target / "model.bin", "r+b") as handle:
        handle.seek(1_000_000)
        byte = handle.read(1)
        handle.seek(1_000_000)
        handle.write(bytes([byte[0] ^ 0xFF]))
    monkeypatch.setenv("ABLATE_CACHE", str(tmp_path))
    with pytest.raises(InputError) as caught:
        resolve_model("whisper-base")
    message = str(caught.value)
    assert str(target / "model.bin") in message
    assert BUNDLED_SHA256 in message and sha256_file(target / "model.bin") in message


def test_local_directory_is_hashed(tmp_path: Path) -> None:
    (tmp_path / "model.bin").write_bytes(b"weights")
    for name in ("config.json", "tokenizer.json"):  # what faster-whisper needs beside the weights, offline
        (tmp_path / name).write_text("{}", encoding="utf-8")
    info = resolve_model(str(tmp_path))
    assert info.source == "local" and info.weights_sha256 == sha256_file(tmp_path / "model.bin")


def test_missing_models_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InputError, match="no model.bin"):
        resolve_model(str(tmp_path))
    with pytest.raises(InputError, match="model directory not found"):
        resolve_model(str(tmp_path / "absent"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="model someone/whisper-pt not found locally and the hub is offline"):
        resolve_model("someone/whisper-pt")


def test_bad_recognizer_specs_are_refused() -> None:
    with pytest.raises(InputError, match="unknown recognizer backend"):
        make_recognizer({"backend": "kaldi", "model": "whisper-base"})
    with pytest.raises(InputError, match="beam_size"):
        make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": {"beam_size": 0}})
    with pytest.raises(InputError, match="single temperature"):
        make_recognizer({"backend": "whisperx", "model": "whisper-base", "decoding": {"temperature": [0.0, 0.2]}})
    with pytest.raises(InputError, match="language"):
        make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": {"language": "en"}})
    with pytest.raises(InputError, match="min_tail_s must not be negative"):
        make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": {"min_tail_s": -0.5}})
    with pytest.raises(InputError, match="min_tail_s 0"):
        make_recognizer({"backend": "whisperx", "model": "whisper-base", "decoding": {"min_tail_s": 1.0}})


class _Said:
    """What ``until_short_tail`` reads of a faster-whisper segment: its end and its words' ends."""

    def __init__(self, end: float, word_ends: list[float]) -> None:
        self.end = end
        self.words = [type("W", (), {"end": e})() for e in word_ends]


_SEGMENTS = st.lists(st.tuples(st.floats(0.0, 40.0), st.lists(st.floats(0.0, 40.0), max_size=3)), max_size=8).map(
    lambda found: [_Said(end, ends) for end, ends in found]
)


@given(_SEGMENTS, st.floats(0.5, 40.0), st.sampled_from([0.0, 0.5, 1.0, 5.0]))
def test_decoding_stops_at_the_first_segment_ending_near_the_end(segments, duration, min_tail_s) -> None:
    """A prefix of the segments, ending at the first whose words (or itself, without words) end within
    ``min_tail_s`` of the end; nothing after it is asked of the decoder (that is the decode skipped)."""
    asked = []

    def decoder():
        for segment in segments:
            asked.append(segment)
            yield segment

    kept = list(until_short_tail(decoder(), duration, min_tail_s))
    assert kept == asked == segments[: len(kept)]

    def near_end(segment: _Said) -> bool:
        return duration - (segment.words[-1].end if segment.words else segment.end) < min_tail_s

    stops = [i for i, segment in enumerate(segments) if min_tail_s > 0 and near_end(segment)]
    assert len(kept) == (stops[0] + 1 if stops else len(segments))


@pytest.mark.needs_model
def test_second_model_with_same_weights_is_labelled() -> None:
    first = make_recognizer({"backend": "faster-whisper", "model": "whisper-base"}).identity()
    second = make_recognizer(
        {
            "backend": "faster-whisper",
            "model": "whisper-base",
            "decoding": {"beam_size": 1, "best_of": 1, "temperature": [0.0]},
        }
    ).identity()
    assert first["weights_sha256"] == second["weights_sha256"] == BUNDLED_SHA256
    described = relation(first, second)
    assert described["relation"] == "same weights, different decoding configuration"
    assert described["decoding_changed"] == ["beam_size", "best_of", "temperature"]
    assert "path" not in first  # identities are machine-independent cache keys


# --- recognition on real speech --------------------------------------------------------------


@pytest.fixture(scope="module")
def sequential():
    return make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": FAST})


@pytest.mark.slow
@pytest.mark.needs_model
def test_sequential_transcribes_real_speech(sequential) -> None:
    clip = _clip()
    words = sequential.transcribe(clip).words
    _check_times(words, 0.0, clip.duration)
    assert _recall(words, CLIP.with_suffix(".txt").read_text(encoding="utf-8")) >= 0.7


@pytest.mark.slow
@pytest.mark.needs_model
def test_leading_silence_shifts_words_in_original_time(sequential) -> None:
    """2 s of padding (then resampling to 44.1 kHz) moves every word by 2 s in the derived signal;
    mapped back through the time map the words land where the unpadded run put them."""
    clip = _clip()
    plain = sequential.transcribe(clip).words
    padded = resample(pad(clip, 2.0), 44100)
    shifted = sequential.transcribe(padded).words
    assert [w.text for w in shifted] == [w.text for w in plain]
    for before, after in zip(plain, shifted):
        assert abs(after.end - 2.0 - before.end) <= 0.2
        assert abs(padded.timemap(after.end) - before.end) <= 0.2
    # Whisper starts a segment's first word at the segment's own start, which in the padded
    # signal lies inside the silence: onsets are compared from the second word of a segment on.
    for index in range(1, len(plain)):
        if plain[index].segment_id == plain[index - 1].segment_id:
            assert abs(padded.timemap(shifted[index].start) - plain[index].start) <= 0.2


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_short_tail_is_not_decoded_again() -> None:
    """Two sentences with a pause: with ``min_tail_s`` past the whole signal, decoding ends after the first
    segment, whose words are exactly the full decode's first segment (the rest was never asked for)."""
    first, second = _clip(), load_audio(PTBR_DEV / "lapsbm" / "LapsBM_0240.wav")
    pause = np.zeros(first.sample_rate, dtype=np.float32)
    joined = Signal.original(np.concatenate([first.samples, pause, second.samples - second.samples.mean()]), 16000)
    assert first.sample_rate == second.sample_rate == 16000

    def decoded(min_tail_s: float) -> list[Word]:
        decoding = {**FAST, "min_tail_s": min_tail_s}
        return (
            make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": decoding})
            .transcribe(joined)
            .words
        )

    every, stopped = decoded(0.0), decoded(joined.duration + 1.0)
    assert len({w.segment_id for w in every}) >= 2
    assert stopped == [w for w in every if w.segment_id == every[0].segment_id]


@pytest.mark.slow
@pytest.mark.needs_model
def test_decoding_work_is_counted_at_the_model_and_repeats(sequential) -> None:
    """Windows encoded, generate calls and tokens are counted per transcription, the same twice over (times
    are not), and the model is its own again after each transcription."""
    clip = _clip()
    sequential.load()
    model = sequential._whisper.model
    words = sequential.transcribe(clip).words
    counts = {k: sequential.notes[k] for k in ("windows_encoded", "decode_attempts", "tokens_decoded")}
    assert sequential._whisper.model is model
    assert 1 <= counts["windows_encoded"] <= counts["decode_attempts"]
    assert counts["tokens_decoded"] >= len(words) > 0
    sequential.transcribe(clip)
    assert {k: sequential.notes[k] for k in counts} == counts
    # Twice the clip, end to end, takes more windows or tokens: the counts are per transcription, not cumulative.
    twice = Signal.original(np.concatenate([clip.samples, clip.samples]), clip.sample_rate)
    sequential.transcribe(twice)
    assert sequential.notes["tokens_decoded"] > counts["tokens_decoded"]
    assert sequential.notes["tokens_decoded"] < 3 * counts["tokens_decoded"]


def _framed() -> tuple[Signal, float, float]:
    clip = _clip()
    lead = 1.5
    samples = np.concatenate([np.zeros(int(lead * clip.sample_rate)), clip.samples, np.zeros(clip.sample_rate)]).astype(
        np.float32
    )
    return Signal.original(samples, clip.sample_rate), lead, lead + clip.duration


@pytest.mark.slow
@pytest.mark.needs_model
def test_whisperx_pyannote_keeps_recognizer_times_without_aligner(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    signal, speech_start, speech_end = _framed()
    recognizer = make_recognizer(
        {
            "backend": "whisperx",
            "model": "whisper-base",
            "decoding": {**FAST, "vad_method": "pyannote", "aligner": "default"},
        }
    )
    chunks = recognizer.speech_chunks(signal)
    assert chunks and chunks[0][0] >= speech_start - 0.5 and chunks[-1][1] <= speech_end + 0.5
    words = recognizer.transcribe(signal).words
    _check_times(words, speech_start - 0.5, speech_end + 0.3)
    assert _recall(words, CLIP.with_suffix(".txt").read_text(encoding="utf-8")) >= 0.7
    assert recognizer.notes["aligner"].startswith("unavailable")
    assert recognizer.notes["word_times"] == "recognizer"


@pytest.mark.slow
@pytest.mark.needs_model
def test_whisperx_silero_chunks_and_words() -> None:
    signal, speech_start, speech_end = _framed()
    recognizer = make_recognizer(
        {"backend": "whisperx", "model": "whisper-base", "decoding": {**FAST, "vad_method": "silero"}}
    )
    transcript = recognizer.transcribe(signal)
    words = transcript.words
    _check_times(words, speech_start - 0.5, speech_end + 0.3)
    assert recognizer.notes["aligner"] == "not configured"
    # Batched decoding has no temperature fallback, and every segment says so.
    assert recognizer.notes["temperature_fallback"].startswith("none: batched decoding")
    assert transcript.segments and all(
        s.outcome == NO_FALLBACK and s.temperature == 0.0 and s.avg_logprob < 0 for s in transcript.segments
    )
    # Its decoding work is counted at the model too: one attempt per window encoded (no fallback), every word's tokens.
    work = {k: recognizer.notes[k] for k in ("windows_encoded", "decode_attempts", "tokens_decoded")}
    assert 1 <= work["windows_encoded"] == work["decode_attempts"] and work["tokens_decoded"] >= len(words)
    assert recognizer._pipeline.model.model.__class__.__name__ != "CountingModel"
    assert recognizer.transcribe(Signal.original(np.zeros(16000, dtype=np.float32), 16000)).words == []
