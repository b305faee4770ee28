"""Issue 9, "no silent wrong number, ever": each bad input or fault that once gave a confident wrong
number, a traceback or an unreadable file, now refused with one line naming the file (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from demo_variant import DEMO
from tiny_corpus import tiny_experiment

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.formats import read_hypothesis, write_ctm, write_hypothesis_json, write_reference_textgrid

SENTENCE = "eu não vou lá amanhã de manhã com a Conceição"


def score(capsys, *args: str | Path) -> tuple[int, str, str]:
    code = main(["score", *map(str, args)])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def pair(tmp_path: Path) -> Path:
    """rec1.TextGrid and hypotheses for rec1 and for a different recording rec2."""
    write_reference_textgrid(Reference("rec1", [Utterance(0.0, 4.0, SENTENCE)]), tmp_path / "rec1.TextGrid", 5.0)
    words = [Word(w, 0.3 * k, 0.3 * k + 0.25) for k, w in enumerate(SENTENCE.split())]
    write_ctm(Hypothesis("rec1", words), tmp_path / "good.ctm")
    write_ctm(Hypothesis("rec2", words[:3]), tmp_path / "other.ctm")
    write_hypothesis_json(Hypothesis("rec2", words[:3]), tmp_path / "rec1.json")
    return tmp_path


# Item 1: reference and hypothesis must be the same recording (and channel).


def test_a_ctm_of_another_recording_is_refused_naming_both_ids(pair: Path, capsys) -> None:
    code, out, err = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "other.ctm")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and "'rec1'" in err and "'rec2'" in err and "--id" in err


def test_a_json_hypothesis_of_another_recording_is_refused(pair: Path, capsys) -> None:
    code, _, err = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "rec1.json")
    assert code == 2 and "'rec1'" in err and "'rec2'" in err


def test_an_stm_named_rec1_holding_rec2_is_refused(pair: Path, capsys) -> None:
    (pair / "rec1.stm").write_text(f"rec2 1 A 0.0 4.0 {SENTENCE}\n", encoding="utf-8")
    code, _, err = score(capsys, "--ref", pair / "rec1.stm", "--hyp", pair / "good.ctm")
    assert code == 2 and "'rec1'" in err and "'rec2'" in err


def test_matching_ids_score_and_an_explicit_id_pairs_files_that_do_not_say(pair: Path, capsys) -> None:
    code, out, _ = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "good.ctm")
    assert code == 0 and out.startswith("recording rec1") and "WER 0.00%" in out
    code, out, _ = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "other.ctm", "--id", "rec2")
    assert code == 0 and out.startswith("recording rec2")
    code, _, err = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "good.ctm", "--id", "rec3")
    assert code == 2 and "no recording 'rec3'; did you mean 'rec1'?  (recordings: rec1)" in err


def test_two_channels_of_one_recording_are_never_merged(pair: Path, capsys) -> None:
    lines = [
        f"rec1 {channel} {0.3 * k:.3f} 0.250 {w}" for channel in ("1", "2") for k, w in enumerate(SENTENCE.split())
    ]
    (pair / "both.ctm").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "both.ctm")
    assert code == 2 and "channels 1, 2" in err and "--channel" in err
    code, out, _ = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "both.ctm", "--channel", "2")
    assert code == 0 and "WER 0.00%" in out and "I=0" in out


def test_an_stm_recording_on_two_channels_is_never_merged(tmp_path: Path) -> None:
    from toolkit.core.errors import InputError
    from toolkit.formats import read_reference

    path = tmp_path / "rec.stm"
    path.write_text("rec 1 A 0.0 1.0 um dois\nrec 2 B 0.0 1.0 três\n", encoding="utf-8")
    with pytest.raises(InputError, match="rec.stm: recording 'rec' has segments on channels 1, 2"):
        read_reference(path)
    assert read_reference(path, channel="2").text == "três"


def test_a_reference_and_hypothesis_on_different_channels_are_refused(pair: Path, capsys) -> None:
    (pair / "rec1.stm").write_text(f"rec1 A spk 0.0 4.0 {SENTENCE}\n", encoding="utf-8")
    code, _, err = score(capsys, "--ref", pair / "rec1.stm", "--hyp", pair / "good.ctm")
    assert code == 2 and "channel A" in err and "channel 1" in err


def test_a_run_folder_hypothesis_for_another_recording_is_refused(pair: Path) -> None:
    from toolkit.core.errors import InputError
    from toolkit.runs.folder import RunFolder

    folder = RunFolder(pair / "run")
    write_hypothesis_json(Hypothesis("rec2", []), folder.hypothesis_json("baseline", "rec1"))
    with pytest.raises(InputError, match="is for recording 'rec2', expected 'rec1'"):
        folder.read_hypothesis("baseline", "rec1")


# Item 2: a TextGrid cut anywhere is refused; a reference with no words needs a declaration at freeze.


def _grid_with_utterances_last(path: Path) -> str:
    from praatio import textgrid as praat

    grid = praat.Textgrid(0, 4.0)
    grid.addTier(praat.IntervalTier("notes", [(0, 1, "x")], 0, 4.0))
    grid.addTier(praat.IntervalTier("utterances", [(0.2, 1.8, "não é isso"), (2.0, 3.0, "sim")], 0, 4.0))
    grid.save(str(path), format="long_textgrid", includeBlankSpaces=True)
    return path.read_text(encoding="utf-8")


def test_a_textgrid_cut_inside_a_tier_header_is_refused(tmp_path: Path) -> None:
    from toolkit.core.errors import InputError
    from toolkit.formats import read_reference

    text = _grid_with_utterances_last(tmp_path / "full.TextGrid")
    cut_at = text.index("xmax", text.index('name = "utterances"')) + len("xmax = 4")
    path = tmp_path / "cut.TextGrid"
    path.write_text(text[:cut_at], encoding="utf-8")
    with pytest.raises(InputError, match="truncated TextGrid: tier 'utterances' has no interval count"):
        read_reference(path)


def _corpus(root: Path, text: str, suffix: str = ".TextGrid") -> tuple[Path, Path]:
    import numpy as np
    import soundfile

    audio, refs = root / "audio", root / "refs"
    audio.mkdir()
    refs.mkdir()
    soundfile.write(audio / "rec.wav", np.zeros(16000), 16000, subtype="PCM_16")
    if suffix == ".TextGrid":
        utterances = [Utterance(0.1, 0.9, text)] if text else []
        write_reference_textgrid(Reference("rec", utterances), refs / "rec.TextGrid", 1.0)
    else:
        (refs / f"rec{suffix}").write_text(text, encoding="utf-8")
    return audio, refs


def _freeze(audio: Path, refs: Path, out: Path, *extra: str) -> int:
    """``ablate manifest freeze`` of the corpus into ``out`` as the tuning split, with ``extra`` arguments."""
    return main(["manifest", "freeze", str(audio), "--refs", str(refs), "--out", str(out), "--split", "tuning", *extra])


def test_a_reference_without_words_needs_a_no_speech_declaration(tmp_path: Path, capsys) -> None:
    audio, refs = _corpus(tmp_path, "")
    out = tmp_path / "manifest.json"
    assert _freeze(audio, refs, out) == 2
    err = capsys.readouterr().err
    assert "rec.TextGrid: the reference has no words" in err and "--no-speech rec" in err
    assert not out.exists()
    assert _freeze(audio, refs, out, "--no-speech", "rec") == 0
    assert json.loads(out.read_text())["recordings"][0]["strata"] == ["no-speech"]


def test_a_recording_declared_silent_whose_reference_has_words_is_refused(tmp_path: Path, capsys) -> None:
    audio, refs = _corpus(tmp_path, "não")
    out = tmp_path / "manifest.json"
    assert _freeze(audio, refs, out, "--no-speech", "rec") == 2
    assert "declared to hold no speech" in capsys.readouterr().err and not out.exists()


# Item 3: a WAV whose data chunk promises more bytes than the file holds.


def test_a_wav_cut_with_a_fixed_riff_size_but_a_stale_data_size_is_refused(tmp_path: Path) -> None:
    import numpy as np
    import soundfile

    from toolkit.audio.io import load_audio, probe_audio
    from toolkit.core.errors import InputError

    path = tmp_path / "cut.wav"
    soundfile.write(path, np.random.default_rng(0).uniform(-0.2, 0.2, 32000), 16000, subtype="PCM_16")
    data = path.read_bytes()[:32000]
    path.write_bytes(data[:4] + (len(data) - 8).to_bytes(4, "little") + data[8:])
    message = r"truncated audio: the WAV data chunk declares 64000 bytes, the file holds 31956 after its header"
    for read in (probe_audio, load_audio):
        with pytest.raises(InputError, match=message):
            read(path)


# Item 5: ids CTM/STM cannot carry are refused at freeze; what the toolkit writes, it reads back.


def test_a_recording_id_with_whitespace_is_refused_at_freeze_with_a_suggestion(tmp_path: Path, capsys) -> None:
    audio, refs = _corpus(tmp_path, "não")
    (audio / "rec.wav").rename(audio / "rec 1.wav")
    (refs / "rec.TextGrid").rename(refs / "rec 1.TextGrid")
    out = tmp_path / "manifest.json"
    assert _freeze(audio, refs, out) == 2
    err = capsys.readouterr().err
    assert "rec 1.wav" in err and "whitespace" in err and "'rec_1'" in err and not out.exists()


@pytest.mark.parametrize("recording_id", ["rec 1", ";;rec", "tab\there", ""])
def test_writers_refuse_ids_their_readers_could_not_read_back(tmp_path: Path, recording_id: str) -> None:
    from toolkit.core.errors import InputError
    from toolkit.formats import write_stm

    with pytest.raises(InputError, match="cannot write CTM"):
        write_ctm(Hypothesis(recording_id, [Word("a", 0.0, 0.1)]), tmp_path / "x.ctm")
    with pytest.raises(InputError, match="cannot write STM"):
        write_stm([Reference(recording_id, [Utterance(0.0, 1.0, "a")])], tmp_path / "x.stm")


def test_ctm_stm_and_json_written_by_the_toolkit_read_back_the_same(tmp_path: Path) -> None:
    from toolkit.formats import read_reference, write_stm

    words = [Word("ação", 0.0, 0.25, 0.5), Word("São Paulo", 0.3, 0.7), Word("x"), Word("ñ", 1.0, 1.0)]
    hypothesis = Hypothesis("gravação-01_ç", words, arm="a")
    back = read_hypothesis(write_ctm(hypothesis, tmp_path / "h.ctm"))
    assert back.recording_id == hypothesis.recording_id
    assert [w.text for w in back.words] == ["ação", "São_Paulo", "x", "ñ"]
    assert read_hypothesis(write_hypothesis_json(hypothesis, tmp_path / "h.json")) == hypothesis
    reference = Reference("gravação-01_ç", [Utterance(0.0, 1.0, "não é", "Ana Maria"), Utterance(1.0, 2.0, "sim")])
    again = read_reference(write_stm([reference], tmp_path / "r.stm"))
    assert again.recording_id == reference.recording_id and again.text == reference.text


# Item 8: the JSON words reader applies the CTM reader's rules.


@pytest.mark.parametrize(
    "word, problem",
    [
        ({"text": "a", "start": "0.5", "end": 1.0}, "start '0.5' is not a number"),
        ({"text": 7, "start": 0.5, "end": 1.0}, "word text must be a non-empty string"),
        ({"text": "a", "start": float("nan"), "end": 1.0}, "malformed JSON at line 1: NaN is not a finite number"),
        ({"text": "a", "start": 0.5}, "has a start or an end but not both"),
        ({"text": "a", "start": -1, "end": 1.0}, "impossible times"),
        ({"text": "a", "start": 0.5, "end": 1.0, "confidence": True}, "confidence True is not a number"),
        ({"text": "a", "begin": 0.5}, "expected an object with 'text'"),
        ("a", "expected an object with 'text'"),
    ],
)
def test_bad_json_words_are_refused_like_bad_ctm_lines(tmp_path: Path, word: object, problem: str) -> None:
    from toolkit.core.errors import InputError

    path = tmp_path / "rec.json"
    path.write_text(json.dumps({"recording_id": "rec", "words": [word]}), encoding="utf-8")
    with pytest.raises(
        InputError,
        match=f"rec.json: {problem}"
        if "malformed" in problem
        else f"rec.json: word 1: .*{problem}"
        if "expected" not in problem
        else f"rec.json: word 1: {problem}",
    ):
        read_hypothesis(path)


def test_a_nan_time_is_refused_by_both_readers(tmp_path: Path) -> None:
    from toolkit.core.errors import InputError

    (tmp_path / "rec.ctm").write_text("rec 1 nan 0.2 a\n", encoding="utf-8")
    (tmp_path / "rec.json").write_text(
        '{"recording_id": "rec", "words": [{"text": "a", "start": NaN, "end": 1}]}', encoding="utf-8"
    )
    for name in ("rec.ctm", "rec.json"):
        with pytest.raises(InputError, match="not a finite number"):
            read_hypothesis(tmp_path / name)


# Item 9: every numeric option is finite and in range.


@pytest.mark.parametrize(
    "option, value",
    [("--collar", "nan"), ("--collar", "inf"), ("--collar", "-1"), ("--short-max", "-2"), ("--short-max", "x")],
)
def test_numeric_options_are_checked_for_range_and_finiteness(pair: Path, capsys, option: str, value: str) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["score", "--ref", str(pair / "rec1.TextGrid"), "--hyp", str(pair / "good.ctm"), option, value])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {option}" in err and repr(value) in err and "Traceback" not in err


# Item 10: an output that cannot be written is one line, not a traceback.


def test_an_unwritable_out_is_one_line(tmp_path: Path, capsys) -> None:
    import os

    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    audio, refs = _corpus(tmp_path, "não")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        code = _freeze(audio, refs, locked / "m.json")
    finally:
        locked.chmod(0o700)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "m.json: cannot write the file (Permission denied)" in err


def test_an_output_under_a_file_is_one_line(tmp_path: Path, capsys) -> None:
    audio, refs = _corpus(tmp_path, "não")
    (tmp_path / "plain").write_text("not a folder")
    code = _freeze(audio, refs, tmp_path / "plain" / "m.json")
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "m.json: cannot write the file" in err


# Item 11: empty references and names that differ only in Unicode normalization.


def test_a_zero_byte_text_reference_is_refused(tmp_path: Path, capsys) -> None:
    audio, refs = _corpus(tmp_path, "", suffix=".txt")
    out = tmp_path / "manifest.json"
    assert _freeze(audio, refs, out, "--no-speech", "rec") == 2
    assert "rec.txt: empty file (0 bytes)" in capsys.readouterr().err and not out.exists()


def test_names_differing_in_unicode_normalization_are_told_apart(tmp_path: Path, capsys) -> None:
    import unicodedata

    audio, refs = _corpus(tmp_path, "não")
    nfc, nfd = unicodedata.normalize("NFC", "ação"), unicodedata.normalize("NFD", "ação")
    (audio / "rec.wav").rename(audio / f"{nfc}.wav")
    (refs / "rec.TextGrid").rename(refs / f"{nfd}.TextGrid")
    assert _freeze(audio, refs, tmp_path / "m.json") == 2
    err = capsys.readouterr().err
    assert "differ in Unicode normalization" in err and "U+00E7 U+00E3" in err and "U+0063 U+0327" in err


# Items 4, 6, 7, 12: the experiment and the run.


@pytest.mark.parametrize(
    "old, new, problem",
    [
        ('manifest = "corpus/manifest.json"', "manifest = 5", "manifest must be a non-empty string, not 5"),
        ('name = "demo"', "name = 3", "name must be a non-empty string, not 3"),
        ('recognizer = "whisper_base"', "recognizer = []", "recognizer must be a non-empty string"),
        (
            'label = "Whisper base (CTranslate2 int8), beam 5, sequential long-form"',
            'label = ["x"]',
            r"recognizers.whisper_base.label must be a non-empty string, not \['x'\]",
        ),
        ('model = "whisper-base"', "model = 1.5", "recognizers.whisper_base.model must be a non-empty string"),
        ('compute_type = "int8"', 'compute_type = "int3"', "compute_type must be one of default, auto, int8"),
    ],
)
def test_every_experiment_key_is_type_checked(tmp_path: Path, old: str, new: str, problem: str) -> None:
    from toolkit.core.errors import InputError
    from toolkit.pipeline.experiment import load_experiment

    path = tmp_path / "experiment.toml"
    path.write_text(DEMO.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")
    with pytest.raises(InputError, match=problem):
        load_experiment(path)


@pytest.mark.parametrize(
    "arms, problem",
    [("baseline,baseline", "baseline named more than once"), ("", "empty arm name"), ("baseline,", "empty arm name")],
)
def test_repeated_or_empty_arm_lists_are_refused(tmp_path: Path, capsys, arms: str, problem: str) -> None:
    path = tiny_experiment(tmp_path)
    assert main(["run", str(path), "--split", "tuning", "--arms", arms]) == 2
    err = capsys.readouterr().err
    assert problem in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("setting", ["junk weights", "unsupported compute type"])
@pytest.mark.needs_model
def test_a_model_that_cannot_load_stops_before_any_run_folder(tmp_path: Path, capsys, setting: str) -> None:
    import shutil

    from toolkit.asr.models import resolve_model

    if setting == "junk weights":
        model = tmp_path / "junk-model"
        model.mkdir()
        bundled = Path(resolve_model("whisper-base").path)
        for name in ("config.json", "tokenizer.json", "vocabulary.txt"):
            shutil.copy(bundled / name, model / name)
        (model / "model.bin").write_bytes(b"not weights" * 100)
        path = tiny_experiment(tmp_path, 'model = "whisper-base"', f'model = "{model}"')
        expected = "junk-model: model 'junk-model' cannot be loaded"
    else:
        import ctranslate2

        from toolkit.asr.faster_whisper_backend import COMPUTE_TYPES

        supported = ctranslate2.get_supported_compute_types("cpu")
        unsupported = [t for t in ("bfloat16", "float16", "int8_bfloat16", "int8_float16") if t not in supported]
        if not unsupported:
            pytest.skip("this CPU supports every compute type")
        assert unsupported[0] in COMPUTE_TYPES
        path = tiny_experiment(tmp_path, 'compute_type = "int8"', f'compute_type = "{unsupported[0]}"')
        expected = f"cannot be loaded with compute_type '{unsupported[0]}'"
    assert main(["run", str(path), "--split", "tuning", "--arms", "baseline"]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1
    assert not (tmp_path / "runs").exists()
