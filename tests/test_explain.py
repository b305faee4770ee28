"""ΔWER split by cause: the parts add up exactly for any two hypotheses, and known causes are found."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from known_causes import EXPECTED, known_causes_run

from toolkit.cli import main
from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.evaluate import score_run
from toolkit.explain import explain
from toolkit.explain.changes import errors, word_changes
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
