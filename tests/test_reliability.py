"""Issue 9, "no silent wrong number, ever": each bad input or fault that once gave a confident wrong
number, a traceback or an unreadable file, now refused with one line naming the file (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolkit.cli import main
from toolkit.formats import read_hypothesis, write_ctm, write_hypothesis_json, write_reference_textgrid
from toolkit.records import Hypothesis, Reference, Utterance, Word

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
    assert code == 2 and "holds no recording 'rec3'" in err


def test_two_channels_of_one_recording_are_never_merged(pair: Path, capsys) -> None:
    lines = [f"rec1 {channel} {0.3 * k:.3f} 0.250 {w}" for channel in ("1", "2")
             for k, w in enumerate(SENTENCE.split())]
    (pair / "both.ctm").write_text("\n".join(lines) + "\n", encoding="utf-8")
    code, _, err = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "both.ctm")
    assert code == 2 and "channels 1, 2" in err and "--channel" in err
    code, out, _ = score(capsys, "--ref", pair / "rec1.TextGrid", "--hyp", pair / "both.ctm", "--channel", "2")
    assert code == 0 and "WER 0.00%" in out and "I=0" in out


def test_a_reference_and_hypothesis_on_different_channels_are_refused(pair: Path, capsys) -> None:
    (pair / "rec1.stm").write_text(f"rec1 A spk 0.0 4.0 {SENTENCE}\n", encoding="utf-8")
    code, _, err = score(capsys, "--ref", pair / "rec1.stm", "--hyp", pair / "good.ctm")
    assert code == 2 and "channel A" in err and "channel 1" in err


def test_a_run_folder_hypothesis_for_another_recording_is_refused(pair: Path) -> None:
    from toolkit.errors import InputError
    from toolkit.runs import RunFolder

    folder = RunFolder(pair / "run")
    write_hypothesis_json(Hypothesis("rec2", []), folder.hypothesis_json("baseline", "rec1"))
    with pytest.raises(InputError, match="is for recording 'rec2', expected 'rec1'"):
        folder.read_hypothesis("baseline", "rec1")
