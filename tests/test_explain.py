"""ΔWER split by cause: the parts add up exactly for any two hypotheses, and known causes are found."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_corpus import correct, make_corpus, make_experiment, make_run, turns

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.corpus.freeze import freeze
from toolkit.evaluate import score_run
from toolkit.explain import explain
from toolkit.explain.changes import errors, word_changes
from toolkit.formats import write_reference_textgrid
from toolkit.pipeline.experiment import load_experiment
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
    changes = word_changes(base.primary_aligned, arm.primary_aligned)
    assert errors(base.primary_aligned) == base.counts.errors and errors(arm.primary_aligned) == arm.counts.errors
    assert sum(c.delta for c in changes) == arm.counts.errors - base.counts.errors
    assert all(c.kind == "regression" if c.erred == "arm" else c.kind == "fix" for c in changes)


def _with(words: list[Word], **edits: str | None) -> list[Word]:
    """Words with some replaced (a new text) or deleted (None)."""
    out = []
    for word in words:
        new = edits.get(word.text, word.text)
        if new is not None:
            out.append(replace(word, text=new))
    return out


def test_each_known_cause_is_found_and_the_parts_sum_to_the_delta(tmp_path: Path, capsys) -> None:
    manifest = make_corpus(tmp_path / "corpus", {"r1": "tuning"})
    utterances = turns()
    textgrid = tmp_path / "corpus" / "refs" / "r1.TextGrid"
    speech = [Interval(u.start, u.end, "speech") for u in utterances]
    write_reference_textgrid(
        Reference("r1", utterances, speech=[*speech, Interval(4.0, 5.0, "nonspeech")]), textgrid, 13.0
    )
    manifest.unlink()
    freeze(
        tmp_path / "corpus" / "audio",
        tmp_path / "corpus" / "refs",
        manifest,
        splits_csv=tmp_path / "corpus" / "splits.csv",
    )
    experiment = load_experiment(make_experiment(tmp_path / "exp", manifest, 'baseline = []\nvad = ["vad"]\n'))
    words = correct(utterances)
    arm = _with(words, sair=None, comprou=None, livros="livro", sabia="sábia", documento="momento")
    arm.insert(6, Word("hum", 4.3, 4.5))  # invented in the confirmed non-speech between the first two turns
    baseline = _with(words, onde="ande")  # which the arm gets right: a fix
    folder = make_run(
        experiment.folder / "runs" / "tuning-constructed",
        manifest,
        "tuning",
        {"baseline": {"r1": baseline}, "vad": {"r1": arm}},
        experiment=experiment,
    )
    output = json.loads(folder.arm_output("vad", "r1").read_text(encoding="utf-8"))
    output |= {
        "vad_segments": [[0.9, 2.25], [2.7, 12.1]],  # cuts "sair" (2.29-2.67)
        "seams": [{"index": 0, "start": 5.8, "end": 5.9}],  # within a second of "comprou" (5.75-6.08)
        "segments": [{"start": 7.0, "end": 7.8, "temperature": 0.4, "outcome": "fallback"}],  # over "livros"
    }
    folder.arm_output("vad", "r1").write_text(json.dumps(output), encoding="utf-8")

    explanation = explain(score_run(folder, ScoreOptions(normalizer="ptbr-norm-3")), "vad")
    causes = {
        cause: counts for cause, counts in explanation.by_cause().items() if counts["regressions"] or counts["fixes"]
    }
    assert causes == {
        "vad cut": {"regressions": 1, "fixes": 0, "net": 1},
        "seam": {"regressions": 1, "fixes": 0, "net": 1},
        "non-speech": {"regressions": 1, "fixes": 0, "net": 1},
        "fallback": {"regressions": 1, "fixes": 0, "net": 1},
        "formatting": {"regressions": 1, "fixes": 0, "net": 1},
        "recognition": {"regressions": 1, "fixes": 1, "net": 0},
    }
    assert explanation.delta_errors == 5 == sum(c["net"] for c in causes.values())
    formatting = next(c for c in explanation.changes if c.cause == "formatting")
    assert (formatting.reference, formatting.baseline, formatting.arm) == ("sabia", "sabia", "sábia")
    fix = next(c for c in explanation.changes if c.kind == "fix")
    assert (fix.reference, fix.baseline, fix.arm) == ("onde", "ande", "onde")

    assert main(["explain", str(experiment.folder), "--arm", "vad", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["delta_errors"] == 5 and data["causes"]["vad cut"]["net"] == 1
    assert abs(sum(c["points"] for c in data["causes"].values()) - data["delta_wer_points"]) < 1e-9
    assert len(data["instances"]) == 7
