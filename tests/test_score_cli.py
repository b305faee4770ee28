"""``ablate score`` end to end on real files: JSON keys, plain text without times, bad input."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from score_run import file_options, run_json

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import write_ctm, write_reference_textgrid

REQUIRED = {
    "signature",
    "wer",
    "cer",
    "ref_words",
    "hits",
    "substitutions",
    "deletions",
    "insertions",
    "audits",
    "nonspeech",
    "timing",
    "verbatim",
}


@pytest.fixture
def files(tmp_path):
    ref = Reference(
        "r1",
        [Utterance(0.0, 3.0, "Eu não vou em 2020 com a Conceição."), Utterance(6.0, 8.0, "Ninguém sabe.")],
        words=[Word("Eu", 0.1, 0.3), Word("não", 0.4, 0.6), Word("Ninguém", 6.0, 6.5)],
        speech=[Interval(0, 3, "speech"), Interval(3, 6, "nonspeech"), Interval(6, 8, "speech")],
        unresolved=[Interval(8.5, 9.0, "?")],
    )
    write_reference_textgrid(ref, tmp_path / "r1.TextGrid", 10.0)
    hyp = Hypothesis(
        "r1",
        [
            Word(w, 0.1 + 0.25 * k, 0.3 + 0.25 * k)
            for k, w in enumerate("eu então vou em dois mil e vinte com a Conceicao".split())
        ]
        + [Word("obrigado", 4.0, 4.5), Word("ninguém", 6.1, 6.5), Word("sabe", 6.6, 7.0)],
    )
    write_ctm(hyp, tmp_path / "r1.ctm")
    (tmp_path / "r1.txt").write_text(
        "eu então vou em dois mil e vinte com a Conceição ninguém sabe\n", encoding="utf-8"
    )
    (tmp_path / "names.txt").write_text("Conceição\n", encoding="utf-8")
    (tmp_path / "vad.txt").write_text("0.2 2.9\n6.0 8.0\n", encoding="utf-8")
    return tmp_path


def test_json_output_has_every_key_with_hand_counts(files, capsys):
    data = run_json(capsys, *file_options(files, ref="r1.TextGrid", hyp="r1.ctm", names="names.txt", vad="vad.txt"))
    assert REQUIRED <= set(data) and "vad" in data
    assert data["signature"].startswith("ablate-score:") and "collar:0.5" in data["signature"]
    # ref: eu não vou em dois mil e vinte com a conceição ninguém sabe (13 tokens);
    # não -> então and conceição -> conceicao substituted, obrigado inserted (in non-speech).
    assert (data["ref_words"], data["substitutions"], data["deletions"], data["insertions"]) == (13, 2, 0, 1)
    assert data["wer"] == pytest.approx(3 / 13)
    assert data["accent_folded"]["errors"] == 2
    audits = data["audits"]
    assert set(audits) == {"negation", "names", "numbers", "short_words"}
    assert {"ref_count", "flipped", "inserted", "instances"} <= set(audits["negation"])
    assert (audits["negation"]["ref_count"], audits["negation"]["flipped"]) == (2, 1)
    assert (audits["names"]["ref_count"], audits["names"]["errors"]) == (1, 1)
    assert (audits["numbers"]["ref_count"], audits["numbers"]["errors"]) == (1, 0)
    assert {"ref_count", "substituted", "deleted"} <= set(audits["short_words"])
    ns = data["nonspeech"]
    assert {"minutes", "invented_words", "per_minute", "intervals", "intervals_with_text"} <= set(ns)
    assert (ns["invented_words"], ns["intervals"], ns["intervals_with_text"]) == (1, 1, 1)
    assert ns["per_minute"] == pytest.approx(1 / (3 / 60))
    timing = data["timing"]
    assert {
        "ref_timed_words",
        "matched_timed_words",
        "coverage",
        "onset_abs_median_s",
        "onset_abs_p95_s",
        "drift_s_per_min",
    } <= set(timing)
    assert (timing["ref_timed_words"], timing["matched_timed_words"]) == (3, 2)
    assert data["vad"]["speech_recall"] == pytest.approx((2.7 + 2.0) / 5.0)
    assert data["excluded"]["unresolved_s"] == 0.5


def test_plain_text_hypothesis_says_time_metrics_are_not_available(files, capsys):
    data = run_json(capsys, "--ref", str(files / "r1.TextGrid"), "--hyp", str(files / "r1.txt"))
    assert data["timing"]["available"] is False
    assert data["timing"]["coverage"] is None and data["timing"]["onset_abs_median_s"] is None
    assert data["nonspeech"]["per_minute"] is None
    assert main(["score", "--ref", str(files / "r1.TextGrid"), "--hyp", str(files / "r1.txt")]) == 0
    text = capsys.readouterr().out
    assert "timing: not available" in text and "signature: ablate-score:" in text


def test_plain_text_reference(files, capsys):
    (files / "ref.txt").write_text("eu não vou\n", encoding="utf-8")
    (files / "hyp.txt").write_text("eu vou\n", encoding="utf-8")
    data = run_json(
        capsys, "--ref", str(files / "ref.txt"), "--hyp", str(files / "hyp.txt"), "--id", "r9", "--policy", "verbatim"
    )
    assert data["recording_id"] == "r9"
    assert data["policy"] == "verbatim" and data["deletions"] == 1 and data["audits"]["negation"]["flipped"] == 1
    assert data["timing"]["available"] is False


@pytest.mark.parametrize(
    "content,problem",
    [("1.0\n", "expected 'start end'"), ("a b\n", "must be numbers"), ("3 2\n", "impossible segment")],
)
def test_bad_vad_file_is_one_line_error(files, capsys, content, problem):
    (files / "bad.txt").write_text(content, encoding="utf-8")
    code = main(
        ["score", "--ref", str(files / "r1.TextGrid"), "--hyp", str(files / "r1.ctm"), "--vad", str(files / "bad.txt")]
    )
    err = capsys.readouterr().err
    assert code == 2 and problem in err and "bad.txt: line 1" in err and len(err.strip().splitlines()) == 1


def test_missing_hypothesis_file_is_an_error(files, capsys):
    code = main(["score", "--ref", str(files / "r1.TextGrid"), "--hyp", str(files / "nope.ctm")])
    assert code == 2 and "nope.ctm" in capsys.readouterr().err


def test_scorer_imports_no_recognizer():
    import subprocess
    import sys

    code = (
        "import sys, toolkit.scorer.score, toolkit.scorer.tables, toolkit.scorer.stats, toolkit.cli.score; "
        "bad = [m for m in sys.modules if m.split('.')[0] in "
        "('torch', 'faster_whisper', 'whisperx', 'ctranslate2', 'silero_vad', 'onnxruntime')]; "
        "print(bad); sys.exit(1 if bad else 0)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_cli_defaults_agree_with_the_scorer() -> None:
    from toolkit.cli import score as cli_score
    from toolkit.scorer.normalize.registry import POLICIES
    from toolkit.scorer.options import ScoreOptions

    assert cli_score.POLICY_NAMES == tuple(POLICIES)
    assert (cli_score.DEFAULT_COLLAR_S, cli_score.DEFAULT_SHORT_MAX) == (
        ScoreOptions.collar,
        ScoreOptions.short_word_max_letters,
    )


@pytest.mark.parametrize("steps", [0, 1, 3])
def test_the_json_output_is_the_score_with_its_alignment_one_step_per_line(steps: int) -> None:
    from toolkit.cli.score import STEPS_BETWEEN, json_with_alignment
    from toolkit.scorer.alignment_view import AlignedWord

    data = {"recording_id": "r", "wer": 0.25, "audits": {"negation": {"flipped": 1}}}
    alignment = [AlignedWord("não", "nao", "substitute", 1.0, 1.2, None, None, ("negation",))] * steps
    text = "".join(
        json_with_alignment(data, STEPS_BETWEEN.join(json.dumps(a.to_json(), ensure_ascii=False) for a in alignment))
    )
    assert json.loads(text) == {**data, "alignment": [a.to_json() for a in alignment]}
    assert len([line for line in text.splitlines() if '"op"' in line]) == steps


@settings(max_examples=60, deadline=None)
@given(words=st.lists(st.one_of(st.none(), st.text(max_size=12), st.just('}, {"reference": ')), max_size=6))
def test_any_word_keeps_the_alignment_one_step_per_line(words: list[str | None]) -> None:
    """A word holding a line break or what a step's JSON starts with (escaped inside its JSON string) never
    splits a step."""
    from toolkit.cli.score import STEPS_BETWEEN, json_with_alignment
    from toolkit.scorer.alignment_view import AlignedWord

    alignment = [AlignedWord(w, w, "equal", None, 0.5, None, None) for w in words]
    text = "".join(
        json_with_alignment(
            {"wer": 0.0}, STEPS_BETWEEN.join(json.dumps(a.to_json(), ensure_ascii=False) for a in alignment)
        )
    )
    assert json.loads(text)["alignment"] == [a.to_json() for a in alignment]
    assert len([line for line in text.splitlines() if '"op": "equal"' in line]) == len(words)


def test_every_scoring_option_is_a_flag_or_named_as_a_run_option() -> None:
    from dataclasses import fields

    from toolkit.cli import build_parser
    from toolkit.cli import score as cli_score
    from toolkit.scorer.options import ScoreOptions

    schema = {f.name for f in fields(ScoreOptions)}
    assert schema == {*cli_score.OPTION_FLAGS, *cli_score.RUN_ONLY_OPTIONS, "names"}
    actions = {a.dest: a for a in build_parser()._subparsers._group_actions[0].choices["score"]._actions}
    assert set(cli_score.OPTION_FLAGS.values()) <= set(actions)
    # Every flag's default is the scorer's: `ablate score` with no flag scores as score() with no option.
    defaults = {option: actions[flag].default for option, flag in cli_score.OPTION_FLAGS.items()}
    assert defaults == {option: getattr(ScoreOptions(), option) for option in cli_score.OPTION_FLAGS}


def test_a_missing_reference_is_file_not_found_not_an_id_mismatch(tmp_path, capsys) -> None:
    """Scoring pairs files by their ids; a reference path that does not exist must say so, not suggest --id."""
    (tmp_path / "rec_0415.txt").write_text("ele não vai\n", encoding="utf-8")
    assert main(["score", "--ref", str(tmp_path / "rec_0999.txt"), "--hyp", str(tmp_path / "rec_0415.txt")]) == 2
    assert capsys.readouterr().err.strip().endswith("rec_0999.txt: file not found")


def test_scoring_leaves_the_garbage_collector_as_it_found_it(tmp_path) -> None:
    """``ablate score`` does not collect while it runs (toolkit.cli.collection); a process that calls it, a test or
    the app, gets its collector back as it was (on or off) and nothing frozen."""
    import gc

    from toolkit.cli import main
    from toolkit.cli.collection import fewer_collections

    (tmp_path / "r.txt").write_text("não vou\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text("não vou\n", encoding="utf-8")
    before = gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()
    with fewer_collections():
        assert not gc.isenabled() and gc.get_freeze_count() > 0
    assert main(["score", "--ref", str(tmp_path / "r.txt"), "--hyp", str(tmp_path / "h.txt"), "--id", "r"]) == 0
    assert (gc.isenabled(), gc.get_threshold(), gc.get_freeze_count()) == before
    gc.disable()
    try:  # a caller that turned the collector off keeps it off
        with fewer_collections():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("hypothesis", ["h.txt", "missing.txt"])
def test_the_program_that_ends_without_teardown_prints_and_exits_as_the_call_returns(
    tmp_path, capsys, hypothesis: str
) -> None:
    """``ablate score`` as the program ends right after flushing its output (toolkit.cli.collection): its output,
    errors and exit code are those of the same command called in a process that goes on."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "r.txt").write_text("não vou\n", encoding="utf-8")
    (tmp_path / "h.txt").write_text("não vou lá\n", encoding="utf-8")
    args = ["score", "--ref", str(tmp_path / "r.txt"), "--hyp", str(tmp_path / hypothesis), "--id", "r"]
    code = main(args)
    called = capsys.readouterr()
    root = str(Path(__file__).resolve().parents[1])
    program = subprocess.run(
        [sys.executable, "-m", "toolkit", *args], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert (program.returncode, program.stdout, program.stderr) == (code, called.out, called.err)
