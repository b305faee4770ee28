"""One definition of "the same word" as written, and the modules that compare written words by it."""

from __future__ import annotations

import pytest

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.pipeline.combine import combine_streams
from toolkit.pipeline.disagreement import disagreement_spans
from toolkit.scorer.normalize.same_word import word_key
from toolkit.scorer.score import score_recording


@pytest.mark.parametrize(
    "a, b, same",
    [
        ("Não,", "não", True),
        ("«Brasil»", "brasil", True),
        ("NFC: café", "NFC: cafe\u0301", True),
        ("é", "e", False),
        ("R$", "R", False),
        ("3,5%", "35%", True),
        ("+", "", False),
        ("§", "", True),
    ],
)
def test_the_key_folds_case_and_punctuation_only(a, b, same):
    assert (word_key(a) == word_key(b)) is same


def _words(text: str) -> list[Word]:
    return [Word(w, 0.5 * k, 0.5 * k + 0.4, confidence=0.9) for k, w in enumerate(text.split())]


@pytest.mark.parametrize(
    "first, second, agree",
    [
        ("Eu não vou, né?", "eu Não vou né", True),
        ("ele é bom", "ele e bom", False),
        ("custa R$ 5", "custa R 5", False),
    ],
)
def test_combine_and_disagreement_agree_on_the_same_words(first, second, agree):
    _, spans = combine_streams(_words(first), _words(second), ("a", "b"))
    assert (not spans) is agree
    assert (not disagreement_spans(_words(first), _words(second))) is agree


def test_audits_find_a_negation_typed_without_accent_or_with_punctuation():
    reference = Reference("r", [Utterance(0.0, 2.0, "Eu «não» vou")])
    score = score_recording(reference, Hypothesis("r", [Word("eu"), Word("vou")]))
    assert (score.negation.ref_count, score.negation.flipped) == (1, 1)
