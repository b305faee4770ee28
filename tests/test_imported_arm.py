"""Imported hypotheses as an arm: ``ablate arms import`` on real files, the refusals of bad input (one line naming
the file and line), and the arm frozen like any other: a challenger whose imported files are checked before the
holdout opens and can never be replaced after. Constructed runs (real files, no decoding); the whole protocol with
hypotheses another arm really decoded is in test_imported_protocol.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from protocol_corpus import (
    constructed_holdout_of,
    correct,
    imported_gates,
    make_run,
    needs_bundled_model,
    one_line,
    own_corpus_experiment,
    turns,
)

from toolkit.cli import main
from toolkit.core.errors import InputError
from toolkit.core.transcripts import Hypothesis, Word
from toolkit.formats import write_ctm, write_hypothesis_json
from toolkit.pipeline.experiment import load_experiment
from toolkit.pipeline.imported import imported_words
from toolkit.protocol.audit import AuditLog
from toolkit.protocol.gates_file import TEMPLATE
from toolkit.runs.record import IMPORTED

SPLITS = {"t1": "tuning", "t2": "tuning", "h1": "holdout"}
DURATION = 13.0  # each constructed recording: three 3 s turns after 1 s pauses, and 1 s after


@pytest.fixture()
def experiment(tmp_path: Path):
    return own_corpus_experiment(tmp_path / "exp", SPLITS)


def _source(folder: Path, words: dict[str, list[Word]] | None = None) -> Path:
    """A folder of hypotheses made elsewhere: t1 as CTM, t2 as the toolkit's JSON, h1 as CTM."""
    folder.mkdir(parents=True, exist_ok=True)
    for rid in SPLITS:
        hypothesis = Hypothesis(rid, (words or {}).get(rid, correct(turns())), arm="elsewhere")
        if rid == "t2":
            write_hypothesis_json(hypothesis, folder / f"{rid}.json")
        else:
            write_ctm(hypothesis, folder / f"{rid}.ctm")
    return folder


def test_an_import_copies_and_hashes_every_file_and_declares_the_arm(experiment, tmp_path: Path, capsys) -> None:
    source = _source(tmp_path / "elsewhere")
    assert main(["arms", "import", str(experiment.folder), "--arm", "legacy", str(source)]) == 0
    assert "imported 3 hypothesis files" in capsys.readouterr().out
    loaded = load_experiment(experiment.folder)
    arm = loaded.arms["legacy"]
    assert arm.imported is not None and arm.components == ()
    assert 'legacy = { imported = "imported/legacy" }' in loaded.path.read_text(encoding="utf-8")
    record = json.loads((experiment.folder / "imported" / "legacy" / "import.json").read_text(encoding="utf-8"))
    assert {f["recording"]: f["file"] for f in record["files"]} == {"t1": "t1.ctm", "t2": "t2.json", "h1": "h1.ctm"}
    assert record["source"] == str(source.resolve()) and record["imported_by"] and record["imported_at"]
    assert arm.to_json()["imported"] == record  # the record is the arm's identity: in every key and freeze
    before = arm.imported.words("t1", DURATION)
    assert [w.text for w in before] == [w.text for w in correct(turns())]
    # Later edits of the source folder change nothing: the arm reads its own copy.
    (source / "t1.ctm").write_text((source / "t1.ctm").read_text(encoding="utf-8").replace(" eu", " nós"))
    assert load_experiment(experiment.folder).arms["legacy"].imported.words("t1", DURATION) == before
    # Importing again (not frozen) replaces the copy whole, and declares the arm once.
    assert main(["arms", "import", str(experiment.folder), str(source), "--arm", "legacy"]) == 0
    assert load_experiment(experiment.folder).path.read_text(encoding="utf-8").count("legacy = ") == 1
    assert load_experiment(experiment.folder).arms["legacy"].imported.words("t1", DURATION) != before


def _ctm_line(rid: str, start: float, duration: float, word: str) -> str:
    return f"{rid} 1 {start} {duration} {word}\n"


# Each bad source folder (a change to the good one), what the one-line refusal says, and the file it names.
BAD_SOURCES = {
    "unknown recording": (
        lambda s: shutil.copy(s / "h1.ctm", s / "h9.ctm"),
        "no recording 'h9' in the manifest",
        "h9.ctm",
    ),
    "missing recording": (lambda s: (s / "h1.ctm").unlink(), "no hypothesis file for manifest recording(s) h1", ""),
    "two files for one recording": (
        lambda s: shutil.copy(s / "t1.ctm", s / "t1.txt"),
        "a second file for recording 't1'",
        "t1.txt",
    ),
    "unknown format": (lambda s: shutil.copy(s / "h1.ctm", s / "h1.srt"), "unknown hypothesis format '.srt'", "h1.srt"),
    "a file without an extension": (
        lambda s: (s / "README").write_text("made by system X"),
        "unknown hypothesis format (no extension)",
        "README",
    ),
    "a subfolder": (lambda s: (s / "notes").mkdir(), "no subfolders", "notes"),
    "a word past the end": (
        lambda s: (s / "h1.ctm").write_text(_ctm_line("h1", 1.0, 0.5, "eu") + _ctm_line("h1", 12.9, 0.5, "casa")),
        "line 2: word 'casa' ends at 13.4 s, past the end of recording 'h1' (13 s)",
        "h1.ctm",
    ),
    "a negative start": (
        lambda s: (s / "h1.ctm").write_text(_ctm_line("h1", -0.2, 0.5, "eu")),
        "line 1: negative start",
        "h1.ctm",
    ),
    "an end before its start": (
        lambda s: (s / "t2.json").write_text(
            json.dumps({"recording_id": "t2", "words": [{"text": "eu", "start": 2.0, "end": 1.5}]})
        ),
        "word 1: word 'eu' has impossible times 2-1.5 s (it ends before it starts)",
        "t2.json",
    ),
    "words that cover each other": (
        lambda s: (s / "h1.ctm").write_text(_ctm_line("h1", 1.0, 1.0, "eu") + _ctm_line("h1", 1.1, 0.8, "não")),
        "line 2: word 2 'não' at 1.1 s",
        "h1.ctm",
    ),
    "another recording's words": (
        lambda s: (s / "h1.ctm").write_text(_ctm_line("h1", 1.0, 0.5, "eu") + _ctm_line("t1", 2.0, 0.5, "não")),
        "holds words of recording(s) t1",
        "h1.ctm",
    ),
}


@pytest.mark.parametrize("case", list(BAD_SOURCES))
def test_bad_input_is_one_line_naming_the_file_and_nothing_is_written(
    experiment, tmp_path: Path, capsys, case: str
) -> None:
    source = _source(tmp_path / "elsewhere")
    change, problem, named = BAD_SOURCES[case]
    change(source)
    before = experiment.path.read_text(encoding="utf-8")
    assert main(["arms", "import", str(experiment.folder), "--arm", "legacy", str(source)]) == 2
    error = one_line(capsys)
    assert problem in error and str(source / named) in error, error
    assert experiment.path.read_text(encoding="utf-8") == before
    assert not (experiment.folder / "imported" / "legacy").exists()


def test_the_baseline_and_pipeline_arms_cannot_be_imported_over(experiment, tmp_path: Path, capsys) -> None:
    source = _source(tmp_path / "elsewhere")
    for arm, problem in (("baseline", "the toolkit's own pipeline"), ("vad", "is a pipeline arm of this experiment")):
        assert main(["arms", "import", str(experiment.folder), "--arm", arm, str(source)]) == 2
        assert problem in one_line(capsys)
    assert main(["arms", "import", str(experiment.folder), "--arm", "../x", str(source)]) == 2
    assert "must be a plain name" in one_line(capsys)


def test_a_hand_written_declaration_must_name_its_own_import_folder(experiment, tmp_path: Path) -> None:
    assert main(["arms", "import", str(experiment.folder), "--arm", "legacy", str(_source(tmp_path / "e"))]) == 0
    text = experiment.path.read_text(encoding="utf-8")
    experiment.path.write_text(text + 'other = { imported = "imported/legacy" }\n', encoding="utf-8")
    with pytest.raises(Exception, match="other = { imported = 'imported/other' }"):
        load_experiment(experiment.folder)


@needs_bundled_model
def test_an_edited_copy_is_refused_by_a_run_naming_the_file(experiment, tmp_path: Path, capsys) -> None:
    assert main(["arms", "import", str(experiment.folder), "--arm", "legacy", str(_source(tmp_path / "e"))]) == 0
    copy = experiment.folder / "imported" / "legacy" / "t2.json"
    copy.write_text(copy.read_text(encoding="utf-8").replace('"eu"', '"nós"'), encoding="utf-8")
    capsys.readouterr()
    assert main(["run", str(experiment.folder), "--split", "tuning", "--arms", "legacy", "--quiet"]) == 2
    error = one_line(capsys)
    assert str(copy) in error and "changed after its import" in error


@needs_bundled_model
def test_an_imported_arm_scores_as_the_run_it_was_exported_from(experiment, tmp_path: Path, capsys) -> None:
    """Hypotheses exported from another run (its CTM and JSON files as written) score exactly as that run's arm."""
    from toolkit.evaluate import evaluate_run

    words = {rid: correct(turns())[2:] for rid in SPLITS}  # two words lost at each start
    words["t1"][3] = Word("Marta", words["t1"][3].start, words["t1"][3].end)
    tuning = {rid: words[rid] for rid in ("t1", "t2")}
    made = make_run(tmp_path / "elsewhere" / "runs" / "tuning-x", experiment.manifest_path, "tuning", {"x": tuning})
    source = tmp_path / "exported"
    source.mkdir()
    shutil.copy(made.hypothesis_json("x", "t2"), source)  # the run's own JSON, as written
    for rid in ("t1", "h1"):  # and CTM, as the run writes it
        write_ctm(Hypothesis(rid, words[rid], arm="x"), source / f"{rid}.ctm")
    assert main(["arms", "import", str(experiment.folder), "--arm", "legacy", str(source)]) == 0
    assert main(["run", str(experiment.folder), "--split", "tuning", "--arms", "legacy", "--quiet"]) == 0
    capsys.readouterr()
    theirs = evaluate_run(made).aggregate.set_index(["arm", "stratum"]).loc[("x", "all")]
    ours = load_experiment(experiment.folder)
    from toolkit.runs.folder import latest_run

    run = latest_run(ours.folder, "tuning", ["legacy"])
    evaluation = evaluate_run(run)
    mine = evaluation.aggregate.set_index(["arm", "stratum"]).loc[("legacy", "all")]
    for column in ("wer", "substitutions", "deletions", "insertions", "names_errors", "negation_flipped"):
        assert mine[column] == theirs[column], column
    assert mine["onset_abs_p95_s"] == pytest.approx(theirs["onset_abs_p95_s"], abs=1e-3)  # CTM's milliseconds
    rows = [row for row in run.read_record().measurements if row.arm == "legacy"]
    assert {row.result for row in rows} == {IMPORTED} and {row.wall_s for row in rows} == {None}
    report = (run.root / "report.md").read_text(encoding="utf-8")
    assert "not measured (imported)" in report
    assert main(["plan", str(experiment.folder), "--hours", "10"]) == 2  # nothing decoded here: nothing to plan
    assert "every arm of this run is imported" in one_line(capsys)


@needs_bundled_model
def test_an_imported_challenger_goes_through_freeze_holdout_and_gate_and_its_files_stay_frozen(
    experiment, tmp_path: Path, capsys
) -> None:
    source = _source(tmp_path / "elsewhere")
    folder = str(experiment.folder)
    assert main(["arms", "import", folder, "--arm", "legacy", str(source)]) == 0
    # The template's seam, VAD-recall and dither gates cannot be measured on hypotheses made elsewhere.
    assert main(["challenger", "freeze", folder, "--arm", "legacy", "--gates", str(TEMPLATE)]) == 2
    assert "gate seam_omissions can never be measured on an imported challenger" in one_line(capsys)
    gates = imported_gates(tmp_path / "gates.toml")
    # Before the holdout opens: the imported holdout file must hash to its record.
    copy = experiment.folder / "imported" / "legacy" / "h1.ctm"
    original = copy.read_bytes()
    copy.write_bytes(original.replace(b" eu", b" nos", 1))
    assert main(["challenger", "freeze", folder, "--arm", "legacy", "--gates", str(gates)]) == 2
    assert str(copy) in one_line(capsys)
    copy.write_bytes(original)
    assert main(["challenger", "freeze", folder, "--arm", "legacy", "--gates", str(gates)]) == 0
    frozen = [e for e in AuditLog(experiment.folder).entries() if e.event == "challenger frozen"][-1]
    assert {h.path for h in frozen.named_hashes()} >= {"imported/legacy/h1.ctm", "imported/legacy/t1.ctm"}
    copy.write_bytes(original.replace(b" eu", b" nos", 1))
    capsys.readouterr()
    assert main(["run", folder, "--split", "holdout", "--quiet"]) == 2
    assert str(copy) in one_line(capsys)
    assert "holdout opened" not in [e.event for e in AuditLog(experiment.folder).entries()]
    copy.write_bytes(original)
    # Importing again over a frozen arm is refused, and logged: its files are what the freeze rests on.
    assert main(["arms", "import", folder, "--arm", "legacy", str(source)]) == 2
    assert "was frozen as a challenger" in one_line(capsys)
    assert AuditLog(experiment.folder).entries()[-1].event == "refusal"
    # The holdout (constructed baseline, the imported words as the run reads them) and the gate.
    constructed_holdout_of(load_experiment(experiment.folder), "legacy", ["h1"])
    code = main(["gate", folder, "--format", "json"])
    verdict = json.loads(capsys.readouterr().out)
    assert code in (0, 1) and verdict["verdict"] in ("PROMOTE", "RETAIN BASELINE")
    not_applicable = {g["name"] for g in verdict["gates"] if not g["applicable"]}
    assert not_applicable >= {"seam_omissions", "seam_duplications", "vad_speech_recall"}
    assert main(["audit", "verify", folder]) == 0
    capsys.readouterr()
    # After the holdout opened: an edited, replaced or re-recorded imported file stops the gate and the audit.
    copy.write_bytes(original.replace(b" eu", b" nos", 1))
    for command in (["gate", folder], ["audit", "verify", folder]):
        assert main(command) == 2
        assert "imported/legacy/h1.ctm" in one_line(capsys), command
    # ... even when the record is rewritten to match (the freeze's configuration holds the old hashes).
    record_path = experiment.folder / "imported" / "legacy" / "import.json"
    record = json.loads(record_path.read_text(encoding="utf-8"))
    from toolkit.core.files import sha256_file

    for item in record["files"]:
        if item["file"] == "h1.ctm":
            item["sha256"] = sha256_file(copy)
    record_path.write_text(json.dumps(record), encoding="utf-8")
    assert main(["gate", folder]) == 2
    error = one_line(capsys)
    assert "changed after challenger 'legacy' was frozen" in error


@needs_bundled_model
def test_a_run_that_read_other_words_than_the_frozen_files_cannot_stand_behind_a_verdict(
    experiment, tmp_path: Path, capsys
) -> None:
    """A file swapped while the holdout run read it and put back after hashes as frozen again; the run's words,
    recorded as evidence, are compared with the frozen file's words by the gate."""
    folder = str(experiment.folder)
    assert main(["arms", "import", folder, "--arm", "legacy", str(_source(tmp_path / "elsewhere"))]) == 0
    gates = str(imported_gates(tmp_path / "gates.toml"))
    assert main(["challenger", "freeze", folder, "--arm", "legacy", "--gates", gates]) == 0
    swapped = correct(turns())
    swapped[0] = Word("nós", swapped[0].start, swapped[0].end)
    run = constructed_holdout_of(load_experiment(experiment.folder), "legacy", ["h1"], theirs={"h1": swapped})
    capsys.readouterr()
    assert main(["gate", folder]) == 2
    error = one_line(capsys)
    assert str(run.folder.hypothesis_json("legacy", "h1")) in error and "not those of its frozen file" in error


@st.composite
def timed_words(draw: st.DrawFn) -> tuple[list[Word], float]:
    """Words in time order inside a recording (each after the one before), and the recording's duration."""
    words, clock = [], 0.0
    for text in draw(st.lists(st.sampled_from(["não", "Maria", "vinte", "é", "casa"]), max_size=30)):
        start = round(clock + draw(st.floats(0.0, 2.0)), 3)
        end = round(start + draw(st.floats(0.01, 1.5)), 3)
        words.append(Word(text, start, end))
        clock = end
    return words, round(clock + draw(st.floats(0.0, 3.0)), 3)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(timed_words(), st.sampled_from([".ctm", ".json"]), st.floats(0.02, 5.0))
def test_imported_words_are_the_words_written_and_a_word_past_the_end_is_named(
    tmp_path: Path, case: tuple[list[Word], float], suffix: str, late: float
) -> None:
    words, duration = case
    path = tmp_path / f"r1{suffix}"
    (write_ctm if suffix == ".ctm" else write_hypothesis_json)(Hypothesis("r1", words), path)
    read = imported_words(path, "r1", duration)
    assert [w.text for w in read] == [w.text for w in words]
    assert all(0 <= w.start <= w.end <= duration for w in read if w.start is not None and w.end is not None)
    times = [t for w in read for t in (w.start, w.end)]
    assert times == pytest.approx([t for w in words for t in (w.start, w.end)], abs=1.5e-3)
    if words:  # the last word moved past the end: refused, naming its CTM line (after the header) or JSON word
        last = words[-1]
        moved = [*words[:-1], Word(last.text, last.start, duration + late)]
        (write_ctm if suffix == ".ctm" else write_hypothesis_json)(Hypothesis("r1", moved), path)
        place = f"line {len(words) + 1}" if suffix == ".ctm" else f"word {len(words)}"
        with pytest.raises(InputError, match=f"{place}: word '{last.text}' ends at .* past the end of recording"):
            imported_words(path, "r1", duration)
