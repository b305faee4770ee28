"""The demo corpus: layout, exact references against the audio, stated SNRs, determinism, content."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile

from toolkit.core.transcripts import NONSPEECH, SPEECH
from toolkit.demo import build_corpus
from toolkit.demo.corpus import CorpusInfo, RecordingInfo
from toolkit.demo.sentences import SENTENCES
from toolkit.formats import read_names, read_reference

pytestmark = pytest.mark.skipif(
    not (shutil.which("RHVoice-test") or shutil.which("espeak-ng")),
    reason="needs a pt-BR synthesizer (RHVoice or espeak-ng) on PATH",
)

NEGATIONS = {"não", "nunca", "nem", "ninguém", "nada", "jamais", "nenhum", "nenhuma", "nega"}
NUMBER_WORDS = {
    "um",
    "dois",
    "duas",
    "três",
    "quatro",
    "cinco",
    "seis",
    "sete",
    "oito",
    "nove",
    "dez",
    "doze",
    "quinze",
    "vinte",
    "trinta",
    "quarenta",
    "cinquenta",
    "sessenta",
    "setenta",
    "noventa",
    "cento",
    "duzentos",
    "mil",
    "primeiro",
    "primeira",
    "segundo",
    "terceiro",
    "quarta",
    "sexto",
    "décimo",
    "bilhões",
    "meia",
}
SECONDS = 30.0
ONE_SAMPLE = 1.5 / 32767  # PCM16 zero after rounding


def _tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> CorpusInfo:
    root = tmp_path_factory.mktemp("demo")
    return build_corpus(root / "corpus", seed=3, recordings=2, recording_seconds=SECONDS, cache_dir=root / "tts-cache")


def _audio(recording: RecordingInfo) -> np.ndarray:
    samples, rate = soundfile.read(recording.audio, dtype="float64")
    assert rate == 16000
    return samples


def _span(samples: np.ndarray, start: float, end: float) -> np.ndarray:
    return samples[round(start * 16000) : round(end * 16000)]


def _power(samples: np.ndarray) -> float:
    return float(np.mean(samples**2))


def test_layout_splits_and_metadata(corpus: CorpusInfo) -> None:
    root = corpus.out_dir
    with open(root / "splits.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["id"] for r in rows] == ["demo01", "demo02"]
    assert {r["split"] for r in rows} == {"tuning", "holdout"}
    assert rows[0]["speaker"] != rows[1]["speaker"]
    assert [r["strata"] for r in rows] == ["clean", "noisy-10dB"]
    for recording in corpus.recordings:
        info = soundfile.info(recording.audio)
        assert (info.samplerate, info.channels, info.subtype) == (16000, 1, "PCM_16")
        assert recording.textgrid == root / "refs" / f"{recording.recording_id}.TextGrid"
        assert recording.names.is_file() and recording.textgrid.is_file()
        assert SECONDS - 1 < recording.duration < SECONDS + 15
    meta = json.loads((root / "corpus.json").read_text(encoding="utf-8"))
    assert meta["voice"]["engine"] == corpus.voice.engine and meta["seed"] == 3
    assert meta["snrs_db"] == [10.0]
    assert [len(r["utterances"]) for r in meta["recordings"]] == [
        len(r.reference.utterances) for r in corpus.recordings
    ]
    assert corpus.voice.label in (root / "README.md").read_text(encoding="utf-8")


def test_textgrid_and_names_read_back(corpus: CorpusInfo) -> None:
    for recording in corpus.recordings:
        ref = recording.reference
        back = read_reference(
            recording.textgrid, recording.recording_id, recording.duration, names_path=recording.names
        )
        assert [u.text for u in back.utterances] == [u.text for u in ref.utterances]
        assert [u.speaker for u in back.utterances] == [recording.speaker] * len(ref.utterances)
        for got, want in zip(back.utterances + back.speech + back.words, ref.utterances + ref.speech + ref.words):
            assert got.start == pytest.approx(want.start, abs=1e-6)
            assert got.end == pytest.approx(want.end, abs=1e-6)
        assert [i.label for i in back.speech] == [i.label for i in ref.speech]
        assert [w.text for w in back.words] == [w.text for w in ref.words]
        assert back.names == ref.names == read_names(recording.names)
        assert len(ref.nonspeech()) == len(recording.stretches) >= 1
        assert all(n in ref.text for n in ref.names)


def test_utterance_edges_are_exact_in_clean_audio(corpus: CorpusInfo) -> None:
    recording = corpus.recordings[0]
    assert recording.snr_db is None
    samples = _audio(recording)
    for utterance in recording.reference.utterances:
        # Pauses around utterances are digital silence; speech energy starts and ends at the edges.
        assert np.abs(_span(samples, utterance.start - 0.1, utterance.start)).max() < ONE_SAMPLE
        assert np.abs(_span(samples, utterance.end, utterance.end + 0.1)).max() < ONE_SAMPLE
        assert np.abs(_span(samples, utterance.start, utterance.start + 0.01)).max() > ONE_SAMPLE
        assert np.abs(_span(samples, utterance.end - 0.01, utterance.end)).max() > ONE_SAMPLE
        assert _power(_span(samples, utterance.start, utterance.end)) > 10 ** (-30 / 10)
    for word in recording.reference.words:
        assert any(u.start <= word.start < word.end <= u.end for u in recording.reference.utterances)
        assert _power(_span(samples, word.start, word.end)) > 10 ** (-35 / 10)


def test_nonspeech_stretches_match_their_kind(corpus: CorpusInfo) -> None:
    for recording in corpus.recordings:
        samples = _audio(recording)
        speech = recording.reference.annotated_speech()
        for stretch in recording.stretches:
            assert 2.0 <= stretch.end - stretch.start <= 8.0
            assert not any(s.start < stretch.end and stretch.start < s.end for s in speech)
            level = _power(_span(samples, stretch.start, stretch.end))
            if recording.snr_db is None and stretch.kind == "silence":
                assert np.abs(_span(samples, stretch.start, stretch.end)).max() < ONE_SAMPLE
            elif stretch.kind != "silence":
                assert level > 10 ** (-45 / 10)
        assert {i.label for i in recording.reference.speech} <= {SPEECH, NONSPEECH}


def test_stated_snr_is_measured_within_one_db(corpus: CorpusInfo) -> None:
    recording = corpus.recordings[1]
    assert recording.snr_db == 10.0
    samples = _audio(recording)
    silence = [s for s in recording.stretches if s.kind == "silence"]
    assert silence, "the first non-speech stretch of every recording is silence"
    noise = _power(np.concatenate([_span(samples, s.start, s.end) for s in silence]))
    mixed = _power(np.concatenate([_span(samples, u.start, u.end) for u in recording.reference.utterances]))
    measured = 10 * np.log10((mixed - noise) / noise)
    assert measured == pytest.approx(recording.snr_db, abs=1.0)


def test_same_seed_gives_byte_identical_files_without_cache(corpus: CorpusInfo, tmp_path: Path) -> None:
    again = build_corpus(
        tmp_path / "corpus", seed=3, recordings=2, recording_seconds=SECONDS, cache_dir=tmp_path / "fresh-cache"
    )
    assert _files(again.out_dir) == _files(corpus.out_dir)


def test_rebuild_with_fewer_recordings_removes_stale_files(corpus: CorpusInfo, tmp_path: Path) -> None:
    out = tmp_path / "corpus"
    shutil.copytree(corpus.out_dir, out)
    smaller = build_corpus(
        out, seed=3, recordings=1, recording_seconds=SECONDS, cache_dir=corpus.out_dir.parent / "tts-cache"
    )
    assert [r.recording_id for r in smaller.recordings] == ["demo01"]
    assert sorted(p.name for p in (out / "audio").iterdir()) == ["demo01.wav"]
    assert sorted(p.name for p in (out / "refs").iterdir()) == ["demo01.TextGrid", "demo01.names.txt"]
    assert (out / "audio" / "demo01.wav").read_bytes() == corpus.recordings[0].audio.read_bytes()


def test_corpus_text_has_negations_names_and_numbers(corpus: CorpusInfo) -> None:
    tokens = [t for r in corpus.recordings for u in r.reference.utterances for t in _tokens(u.text)]
    assert NEGATIONS & set(tokens)
    assert NUMBER_WORDS & set(tokens)
    assert any(r.reference.names for r in corpus.recordings)


def test_sentence_pool_is_rich_in_critical_words() -> None:
    assert 80 <= len(SENTENCES) <= 120
    texts = [s.text for s in SENTENCES]
    assert len(set(texts)) == len(texts)
    assert not any(re.search(r"\d|R\$|%", t) for t in texts), "numbers are written as spoken"
    assert sum(bool(NEGATIONS & set(_tokens(t))) for t in texts) >= 40
    assert sum(bool(NUMBER_WORDS & set(_tokens(t))) for t in texts) >= 30
    assert sum(bool(s.names) for s in SENTENCES) >= 30
    assert all(name in s.text for s in SENTENCES for name in s.names)
    assert any(re.search(r"\b(\w+), \1\b", t.lower()) for t in texts), "some repetitions"
    assert sum(len(_tokens(t)) == 1 for t in texts) >= 4, "some one-word utterances"


def test_espeak_fallback_builds_and_records_its_voice(tmp_path: Path) -> None:
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is not installed")
    first = build_corpus(
        tmp_path / "a", recordings=1, recording_seconds=15.0, cache_dir=tmp_path / "cache-a", engine="espeak-ng"
    )
    second = build_corpus(
        tmp_path / "b", recordings=1, recording_seconds=15.0, cache_dir=tmp_path / "cache-b", engine="espeak-ng"
    )
    assert first.voice.engine == "espeak-ng"
    assert json.loads(first.metadata.read_text(encoding="utf-8"))["voice"]["name"] == "pt-br"
    a, b = _files(first.out_dir), _files(second.out_dir)
    assert a == b, _where_builds_differ(a, b, tmp_path / "cache-a", tmp_path / "cache-b")


def _fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    if not shutil.which("espeak-ng"):
        pytest.skip("espeak-ng is not installed")
    for name in ("XDG_RUNTIME_DIR", "PULSE_RUNTIME_PATH", "ESPEAK_DATA_PATH"):
        monkeypatch.delenv(name, raising=False)
    home = tmp_path / "fresh-home"
    monkeypatch.setenv("HOME", str(home))
    return home


def _two_espeak_builds(tmp_path: Path, between=lambda: None) -> None:
    first = build_corpus(
        tmp_path / "a", recordings=1, recording_seconds=5.0, cache_dir=tmp_path / "cache-a", engine="espeak-ng"
    )
    between()
    second = build_corpus(
        tmp_path / "b", recordings=1, recording_seconds=5.0, cache_dir=tmp_path / "cache-b", engine="espeak-ng"
    )
    a, b = _files(first.out_dir), _files(second.out_dir)
    assert a == b, _where_builds_differ(a, b, tmp_path / "cache-a", tmp_path / "cache-b")


def test_espeak_build_on_a_fresh_machine_equals_the_next(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cause of the once-failing determinism test: espeak-ng loads PulseAudio even to write a file,
    and in a home without a PulseAudio runtime directory (a fresh machine) libpulse draws from the C
    ``rand()`` that espeak-ng's breath noise uses, so the first build's audio differed from the second's."""
    _fresh_home(tmp_path, monkeypatch)
    _two_espeak_builds(tmp_path)


def test_a_users_espeak_voice_data_does_not_change_the_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """espeak-ng prefers ``~/espeak-ng-data`` to its own data; the cache key would not notice."""
    home = _fresh_home(tmp_path, monkeypatch)
    data = re.search(
        r"Data at: (\S+)", subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True, check=True).stdout
    )
    assert data, "espeak-ng --version names its data folder"

    def install_own_voice_data() -> None:  # a lower-pitched f2 variant
        shutil.copytree(data.group(1), home / "espeak-ng-data")
        variant = home / "espeak-ng-data" / "voices" / "!v" / "f2"
        variant.write_text(
            re.sub(r"(?m)^pitch .*$", "pitch 90 130", variant.read_text(encoding="utf-8")), encoding="utf-8"
        )

    _two_espeak_builds(tmp_path, install_own_voice_data)


def _where_builds_differ(a: dict[str, bytes], b: dict[str, bytes], cache_a: Path, cache_b: Path) -> str:
    """Which files of two builds differ and where (WAVs: first differing sample and largest difference),
    and whether the synthesizer's own cached outputs already differ."""
    lines = [f"files only in one build: {sorted(set(a) ^ set(b))}"] if set(a) ^ set(b) else []
    for name in sorted(set(a) & set(b)):
        if a[name] != b[name]:
            lines.append(f"{name}: {_difference(a[name], b[name], name.endswith('.wav'))}")
    tts_a, tts_b = _files(cache_a), _files(cache_b)
    differing = [name for name in sorted(set(tts_a) & set(tts_b)) if tts_a[name] != tts_b[name]]
    lines.append(
        f"synthesizer cache: {len(differing)} of {len(set(tts_a) & set(tts_b))} phrase WAVs differ"
        + (
            f" (espeak-ng's own output), e.g. {differing[0]}: "
            f"{_difference(tts_a[differing[0]], tts_b[differing[0]], True)}"
            if differing
            else " (identical: the difference arises after synthesis)"
        )
    )
    return "the two espeak-ng builds differ:\n" + "\n".join(lines)


def _difference(a: bytes, b: bytes, wav: bool) -> str:
    if wav:
        x, rate = soundfile.read(io.BytesIO(a), dtype="int16", always_2d=True)
        y, _ = soundfile.read(io.BytesIO(b), dtype="int16", always_2d=True)
        if x.shape != y.shape:
            return f"{len(x)} vs {len(y)} samples at {rate} Hz"
        differ = np.flatnonzero((x != y).any(axis=1))
        largest = int(np.abs(x.astype(np.int32) - y.astype(np.int32)).max())
        return (
            f"{len(differ)} of {len(x)} samples differ, first at sample {differ[0]} ({differ[0] / rate:.3f} s), "
            f"last at {differ[-1] / rate:.3f} s, largest difference {largest} PCM16 steps"
        )
    first = next((k for k, (p, q) in enumerate(zip(a, b)) if p != q), min(len(a), len(b)))
    around = slice(max(0, first - 30), first + 30)
    return f"first differs at byte {first}: {a[around]!r} vs {b[around]!r}"
