"""The negation audit on spontaneous speech (ptbr-norm-3): a restart with words between is a false start when
the second negation matches, and the colloquial "num" is decided by context, the undecidable ones counted
apart as ambiguous, never as an inserted or flipped negation. Turns in the style of NURC-SP interviews."""

from __future__ import annotations

import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.metrics.critical import critical_occurrences
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import audit_rules, audit_vocabulary, score_recording


def score(reference: str, hypothesis: str, version: str = "ptbr-norm-3"):
    turns = [Utterance(5.0 * k, 5.0 * k + 4.0, text.strip()) for k, text in enumerate(reference.split("|"))]
    words = [Word(w) for w in hypothesis.replace("|", " ").split()]
    return score_recording(Reference("nurc", turns), Hypothesis("nurc", words), ScoreOptions(normalizer=version))


def negation(result) -> tuple[int, int, int, int]:
    n = result.negation
    return n.flipped, n.inserted, n.repetition_dropped, n.ambiguous


def test_a_restart_with_words_between_is_a_false_start_when_the_second_negation_matches() -> None:
    said = "não não há possibili- não não pode ser assim"
    heard = "há possibilidade não pode ser assim"
    assert negation(score(said, heard)) == (0, 0, 3, 0)
    assert negation(score(said, heard, "ptbr-norm-2")) == (1, 0, 2, 0)  # the old count: one flip
    assert score(said, heard).negation.ref_count == 4  # every occurrence stays in the denominator


def test_a_repeated_phrase_is_a_restart_too() -> None:
    assert negation(score("ele não vai não vai dar não", "ele vai não vai dar não")) == (0, 0, 1, 0)


@pytest.mark.parametrize(
    "said, heard",
    [
        ("eu não quero ir não posso", "eu quero ir não posso"),  # two clauses, nothing abandoned
        ("não há possibili- não pode", "há possibilidade pode"),  # the second one is lost too
        ("não | há possibili- não pode", "há possibilidade não pode"),  # another turn
        ("não foi isso que eu disse e ele também não", "foi isso que eu disse e ele também não"),  # too far
    ],
)
def test_what_is_no_restart_stays_a_flip(said: str, heard: str) -> None:
    assert score(said, heard).negation.flipped >= 1


def test_num_before_a_verb_is_the_spoken_negation() -> None:
    result = score("eu num sei não | ele num quer nem saber", "eu não sei não | ele não quer nem saber")
    assert result.counts.errors == 0 and negation(result) == (0, 0, 0, 0)
    assert result.negation.ref_count == 4  # both "num" are audited as negations, with "não" and "nem"
    flipped = score("eu num sei", "eu sei")
    assert flipped.negation.flipped == 1
    assert negation(score("eu num sei não", "eu não sei não", "ptbr-norm-2")) == (0, 1, 0, 0)  # the old insertion


def test_num_before_a_noun_is_the_contraction() -> None:
    right = score("a gente foi num lugar muito bonito numa boa", "a gente foi num lugar muito bonito numa boa")
    assert right.counts.errors == 0 and right.negation.ref_count == 0
    wrong = score("a gente foi num lugar", "a gente foi não lugar")
    assert negation(wrong) == (0, 1, 0, 0)  # a negation where the context says "em um": inserted


@pytest.mark.parametrize(
    "said, heard",
    [
        ("ele disse que num", "ele disse que não"),  # the end of a turn decides nothing
        ("num cachorro desses", "não cachorro desses"),  # a word the cues do not know
        ("ele disse que não", "ele disse que num"),  # and the other way round
    ],
)
def test_an_undecidable_num_opposite_a_negation_is_ambiguous(said: str, heard: str) -> None:
    result = score(said, heard)
    assert negation(result) == (0, 0, 0, 1)
    assert [i.kind for i in result.negation.instances] == ["ambiguous"]
    assert result.counts.substitutions == 1  # WER still counts the different word


def test_ambiguous_and_restarted_negations_are_no_new_errors_for_the_gates() -> None:
    options = ScoreOptions()
    result = score(
        "ele disse que num | não não há possibili- não pode", "ele disse que não | há possibilidade não pode"
    )
    negations, names = audit_vocabulary([], options)
    turns = result.utterance_of_word[result.aligned.ref.source]
    occurrences = critical_occurrences(result.aligned, negations, names, turns, audit_rules(options))
    assert not [o for o in occurrences if o.audit == "negation" and o.wrong]
