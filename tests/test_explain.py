"""ΔWER split by cause: the parts add up exactly for any two hypotheses, and known causes are found."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from known_causes import EXPECTED, known_causes_run
from shared_data import PTBR_LONGFORM

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.evaluate import score_run
from toolkit.explain import explain
from toolkit.explain.changes import errors, word_changes
from toolkit.scorer.normalize.context import roman_value
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

VOCABULARY = ["não", "sim", "é", "a", "casa", "Maria", "vinte", "dois", "(inciso)", "você", "sábia", "sabia"]


@st.composite
def pair(draw: st.DrawFn) -> tuple[Reference, Hypothesis, Hypothesis]:
    reference = draw(st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=25))
    spoken = [w.strip("()") for w in reference]

    def hypothesis(name: str) -> Hypothesis:
        words = list(spoken)
        for _ in range(draw(st.integers(0, 6))):
            k = draw(st.integers(0, len(words)))
            action = draw(st.sampled_from(["drop", "add", "change"]))
            if action == "add" or not words:
                words.insert(k, draw(st.sampled_from(VOCABULARY)).strip("()"))
            elif action == "drop":
                words.pop(min(k, len(words) - 1))
            else:
                words[min(k, len(words) - 1)] = draw(st.sampled_from(VOCABULARY)).strip("()")
        return Hypothesis("r", [Word(w, 0.5 * n, 0.5 * n + 0.4) for n, w in enumerate(words)], name)

    return Reference("r", [Utterance(0.0, 30.0, " ".join(reference))]), hypothesis("baseline"), hypothesis("arm")


@settings(max_examples=400, deadline=None)
@given(pair())
def test_the_changes_add_up_to_the_difference_in_errors_for_any_two_hypotheses(case) -> None:
    reference, base_hyp, arm_hyp = case
    options = ScoreOptions(normalizer="ptbr-norm-3")
    base, arm = score_recording(reference, base_hyp, options), score_recording(reference, arm_hyp, options)
    found = word_changes(base.primary_aligned, arm.primary_aligned)
    changes = found.changes
    assert errors(base.primary_aligned) == base.counts.errors and errors(arm.primary_aligned) == arm.counts.errors
    assert sum(c.delta for c in changes) == arm.counts.errors - base.counts.errors
    # A position both systems inserted at is never both a fix and a regression.
    fixed = {c.ref_token for c in changes if c.error == "insertion" and c.kind == "fix"}
    regressed = {c.ref_token for c in changes if c.error == "insertion" and c.kind == "regression"}
    assert not fixed & regressed and found.same_position >= 0
    assert all(c.kind == "regression" if c.erred == "arm" else c.kind == "fix" for c in changes)


def test_each_known_cause_is_found_and_the_parts_sum_to_the_delta(tmp_path: Path, capsys) -> None:
    experiment, folder = known_causes_run(tmp_path)
    explanation = explain(score_run(folder, ScoreOptions(normalizer="ptbr-norm-3")), "vad")
    causes = {
        cause: counts for cause, counts in explanation.by_cause().items() if counts["regressions"] or counts["fixes"]
    }
    assert causes == EXPECTED
    assert explanation.delta_errors == 4 == sum(c["net"] for c in causes.values())
    formatting = next(c for c in explanation.changes if c.cause == "formatting")
    assert (formatting.reference, formatting.baseline, formatting.arm) == ("sabia", "sabia", "sábia")
    fixes = {c.cause: c for c in explanation.changes if c.kind == "fix"}
    assert (fixes["recognition"].reference, fixes["recognition"].baseline, fixes["recognition"].arm) == (
        "onde",
        "ande",
        "onde",
    )
    assert (fixes["vad cut"].error, fixes["vad cut"].baseline, fixes["vad cut"].time) == ("insertion", "sim", 12.3)

    assert main(["explain", str(experiment.folder), "--arm", "vad", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["delta_errors"] == 4 and data["causes"]["vad cut"]["net"] == 0
    assert abs(sum(c["points"] for c in data["causes"].values()) - data["delta_wer_points"]) < 1e-9
    assert len(data["instances"]) == 8


def test_the_public_api_explains_a_run_and_the_review_queue_opens_each_regression_under_its_cause(
    tmp_path: Path,
) -> None:
    from toolkit.adjudication.queue import REGRESSION, build_queue
    from toolkit.api import explain_run
    from toolkit.evaluate import write_scores

    _, folder = known_causes_run(tmp_path)
    explanation = explain_run(folder.root, "vad", normalizer="ptbr-norm-3")
    assert explanation.delta_errors == 4 and explanation.against == "baseline"
    queue = build_queue(folder)
    assert [i for i in queue.items if i.kind == REGRESSION] == []  # not scored yet: nothing to open
    write_scores(score_run(folder, ScoreOptions(normalizer="ptbr-norm-3")))
    regressions = [i for i in build_queue(folder).items if i.kind == REGRESSION]
    expected = sorted(cause for cause, counts in EXPECTED.items() for _ in range(counts["regressions"]))
    assert sorted(i.detail for i in regressions) == expected
    seam = next(i for i in regressions if i.detail == "seam")
    assert seam.arms == ("vad",) and seam.start is not None and seam.hypotheses[0][0] == "baseline"
    assert {i.reference for i in regressions} >= {"sair", "comprou", "documento"}


def test_a_gate_instance_line_names_its_cause(tmp_path: Path) -> None:
    from toolkit.protocol.gates import evaluate_gates
    from toolkit.protocol.gates_file import load_gates

    _, folder = known_causes_run(tmp_path, "holdout", number_at_seam=True)
    gates = load_gates(Path(__file__).resolve().parents[1] / "protocol" / "gates.toml")
    text = evaluate_gates(score_run(folder, ScoreOptions(normalizer="ptbr-norm-3")), "vad", gates).text()
    line = next(line for line in text.splitlines() if "vinte e seis" in line)
    assert line.endswith("cause: seam"), line


def _later_copy(folder: Path, name: str, **record: object) -> Path:
    """A copy of run ``folder`` finished later, with ``record`` fields of its config changed or set."""
    copy = folder.parent / name
    shutil.copytree(folder, copy)
    data = json.loads((copy / "run.json").read_text(encoding="utf-8"))
    data["finished"] = "2099-01-01T00:00:00+00:00"
    data["config"] |= record
    (copy / "run.json").write_text(json.dumps(data), encoding="utf-8")
    return copy


def test_explain_reads_the_real_run_of_the_split_never_a_stability_rerun_or_a_run_without_the_arm(
    tmp_path: Path, capsys
) -> None:
    """A dithered rerun finished later is a measurement of stability, not the split's run; a later run of the
    baseline alone does not hide the run that has the arm; --run names a run outright."""
    experiment, run = known_causes_run(tmp_path)
    folder = run.root
    data = json.loads(run.record.read_text(encoding="utf-8"))
    _later_copy(folder, "tuning-dithered", dither={"level_dbfs": -90.0, "seed": 3})
    subset = _later_copy(folder, "tuning-subset", arms=[a for a in data["config"]["arms"] if a["name"] == "baseline"])
    assert main(["explain", str(experiment.folder), "--arm", "vad"]) == 0
    out = capsys.readouterr().out
    assert "on tuning-constructed" in out
    assert "r1     2.24 vad cut      regression deletion: sair | sair | -" in out  # every changed word, in text too
    assert "r1    12.30 vad cut      fix insertion: - | sim | -" in out
    assert main(["explain", str(experiment.folder), "--arm", "vad", "--run", "tuning-dithered"]) == 0
    assert "on tuning-dithered" in capsys.readouterr().out
    assert main(["explain", str(experiment.folder), "--arm", "vad", "--run", subset.name]) == 2
    assert "no arm 'vad' (arms: baseline)" in capsys.readouterr().err
    # A misspelled split or arm: the closest one that has a finished run is suggested.
    assert main(["explain", str(experiment.folder), "--arm", "vad", "--split", "tunning"]) == 2
    assert "no split 'tunning'; did you mean 'tuning'?  (splits with runs: tuning)" in capsys.readouterr().err
    assert main(["explain", str(experiment.folder), "--arm", "vda"]) == 2
    assert "no arm 'vda'; did you mean 'vad'?  (arms the tuning runs ran: baseline, vad)" in capsys.readouterr().err
    assert main(["explain", str(experiment.folder), "--arm", "vad", "--run", str(tmp_path)]) == 2
    assert "not a run of" in capsys.readouterr().err
    shutil.rmtree(folder)
    assert main(["explain", str(experiment.folder), "--arm", "vad"]) == 2
    err = capsys.readouterr().err
    assert "no finished tuning run with arm(s) vad here (the runs without: tuning-subset)" in err


def test_the_challenger_note_reads_the_same_tuning_run_as_explain(tmp_path: Path) -> None:
    """'Another arm had the lowest tuning WER' comes from the split's real run, not a stability rerun
    finished (and scored) later in which the other arm happened to win."""
    from toolkit.evaluate import write_scores
    from toolkit.protocol.challenger import tuning_note

    experiment, run = known_causes_run(tmp_path)
    write_scores(score_run(run, ScoreOptions(normalizer="ptbr-norm-3")))  # the baseline has the lower WER
    assert tuning_note(experiment, "vad") == (
        "note: 'baseline' had the lowest tuning WER (9.5%), not 'vad' (28.6%), in tuning-constructed"
    )
    dithered = _later_copy(run.root, "tuning-dithered", dither={"level_dbfs": -90.0, "seed": 1})
    aggregate = dithered / "scores" / "aggregate.csv"
    rows = aggregate.read_text(encoding="utf-8").replace("0.2857", "0.0001")  # vad "wins" the rerun
    aggregate.write_text(rows, encoding="utf-8")
    assert "in tuning-constructed" in (tuning_note(experiment, "vad") or "")


def _aligned(reference: str, hypothesis: str):
    words = [Word(w, 0.5 * n, 0.5 * n + 0.4) for n, w in enumerate(hypothesis.split())]
    score = score_recording(
        Reference("r", [Utterance(0.0, 30.0, reference)]),
        Hypothesis("r", words),
        ScoreOptions(normalizer="ptbr-norm-3"),
    )
    return score.primary_aligned


def test_a_word_both_inserted_at_one_position_spelled_two_ways_is_neither_a_fix_nor_a_regression() -> None:
    """The reader says "inciso", which the written text lacks: one arm writes "Insisto", the other "Inciso"."""
    reference = "é assegurado o direito de propriedade"
    base = _aligned(reference, "insisto é assegurado o direito de propriedade")
    arm = _aligned(reference, "inciso é assegurado o direito de propriedade")
    found = word_changes(base, arm)
    assert (found.changes, found.same_position) == ([], 1)
    # Two words inserted against one: one pair at that position, one regression left; the sum still holds.
    arm = _aligned(reference, "em ciso é assegurado o direito de propriedade")
    found = word_changes(base, arm)
    assert found.same_position == 1 and [(c.kind, c.error) for c in found.changes] == [("regression", "insertion")]
    assert sum(c.delta for c in found.changes) == errors(arm) - errors(base) == 1
    # The same word at the same position is no change at all, and none counted apart.
    same = word_changes(base, _aligned(reference, "insisto é assegurado o direito de propriedade"))
    assert (same.changes, same.same_position) == ([], 0)


def test_on_a_shared_chapter_a_reader_added_label_spelled_two_ways_is_never_a_fix_and_a_regression() -> None:
    """Every item of a real chapter opened by a Roman label: the reader says "inciso" before it, the baseline
    writes "Insisto 14,", the arm "Inciso XIV -"; the labels cost nothing (ptbr-norm-4 pairs them), the added
    word is one position wrong in both, and the parts still sum to ΔWER."""
    chapter = PTBR_LONGFORM / "refs" / "Titulo 2 Art 06 ao 11.txt"
    if not chapter.is_file():
        pytest.skip(f"the shared long-form chapters are not at {chapter.parent}")
    lines = chapter.read_text(encoding="utf-8").splitlines()
    base_words: list[str] = []
    arm_words: list[str] = []
    labelled = 0
    for line in lines:
        found = re.match(r"^([IVX]+) - (.+)$", line)
        if found:
            labelled += 1
            value = roman_value(found[1])
            base_words += ["Insisto", f"{value},", *found[2].split()]
            arm_words += ["Inciso", found[1], "-", *found[2].split()]
        else:
            base_words += line.split()
            arm_words += line.split()
    reference = Reference("t2", [Utterance(0.0, 1200.0, " ".join(lines))])
    options = ScoreOptions()
    base = score_recording(reference, Hypothesis("t2", [Word(w) for w in base_words], "baseline"), options)
    arm = score_recording(reference, Hypothesis("t2", [Word(w) for w in arm_words], "arm"), options)
    assert labelled > 20 and base.counts.errors == arm.counts.errors == labelled  # the added word, nothing else
    found = word_changes(base.primary_aligned, arm.primary_aligned)
    assert (found.changes, found.same_position) == ([], labelled)
