"""A false start is not a flip: repeated negations, names and numbers in one turn.

The headline case scores the bundled model's real decode of a Common Voice clip ("Lorena e
Cecília não sabem se comportar.") against a reference that transcribes false starts
("Lorena Lorena ... não não ..."): the repeat the recognizer did not write is "repetition
dropped", reported apart, never a negation flip or a name error. The rule's edges (another
turn, the whole run lost, numbers, "né") are checked on hand-built pairs.
"""

from __future__ import annotations

import pytest
from shared_data import PTBR_DEV

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.metrics.audits import REPETITION_DROPPED
from toolkit.scorer.score import score_recording

CLIP = PTBR_DEV / "commonvoice-pt" / "clips" / "common_voice_pt_19464875.mp3"
NAMES = ["Lorena", "Cecília"]


def ref_of(*turns: str) -> Reference:
    return Reference("rec", [Utterance(2.0 * k, 2.0 * k + 2.0, text) for k, text in enumerate(turns)], names=NAMES)


def hyp_of(text: str) -> Hypothesis:
    return Hypothesis("rec", [Word(w) for w in text.split()])


@pytest.fixture(scope="module")
def decoded() -> Hypothesis:
    if not CLIP.is_file():
        pytest.skip(f"shared clip absent: {CLIP}")
    from toolkit.asr import make_recognizer
    from toolkit.audio.io import load_audio

    recognizer = make_recognizer({"backend": "faster-whisper", "model": "whisper-base", "decoding": {}})
    words = recognizer.transcribe(load_audio(CLIP)).words
    assert [w.text for w in words][:4] == ["Lorena", "e", "Cecilia", "não"]  # what the bundled model says
    return Hypothesis("rec", words)


@pytest.mark.slow
@pytest.mark.needs_model
def test_false_starts_on_real_decoded_output_are_repetitions_dropped(decoded: Hypothesis) -> None:
    reference = Reference(
        "rec", [Utterance(0.0, 5.1, "Lorena Lorena e Cecília não não sabem se comportar.")], names=NAMES
    )
    score = score_recording(reference, decoded)
    negation = score.negation
    assert (negation.ref_count, negation.flipped, negation.repetition_dropped) == (2, 0, 1)
    assert [i.kind for i in negation.instances] == [REPETITION_DROPPED]
    names = score.names
    assert (names.ref_count, names.errors, names.repetition_dropped) == (3, 1, 1)
    assert {(i.kind, i.reference) for i in names.instances} == {(REPETITION_DROPPED, "Lorena"), ("error", "Cecília")}
    assert score.counts.deletions == 2  # the word error rate still counts both dropped words


@pytest.mark.slow
@pytest.mark.needs_model
def test_a_repeat_in_another_turn_is_not_a_false_start(decoded: Hypothesis) -> None:
    reference = Reference(
        "rec",
        [Utterance(0.0, 4.0, "Lorena e Cecília não"), Utterance(4.0, 5.1, "não sabem se comportar.")],
        names=NAMES,
    )
    negation = score_recording(reference, decoded).negation
    assert (negation.ref_count, negation.flipped, negation.repetition_dropped) == (2, 1, 0)


def test_a_whole_run_lost_counts_once() -> None:
    negation = score_recording(ref_of("eu não não sei"), hyp_of("eu sei")).negation
    assert (negation.flipped, negation.repetition_dropped) == (1, 1)
    negation = score_recording(ref_of("não não não"), hyp_of("sim")).negation
    assert (negation.flipped, negation.repetition_dropped) == (1, 2)


def test_a_repeat_replaced_by_a_non_negation_keeps_the_polarity() -> None:
    negation = score_recording(ref_of("não não é isso"), hyp_of("não são é isso")).negation
    assert (negation.flipped, negation.repetition_dropped) == (0, 1)
    # the demo's case: the cheapest alignment pairs a dropped "não" with an inserted "reais"
    negation = score_recording(
        ref_of("trezentos reais não não não foi"), hyp_of("trezentos reais reais não não foi")
    ).negation
    assert (negation.flipped, negation.repetition_dropped) == (0, 1)
    # every member replaced: the polarity is lost once
    negation = score_recording(ref_of("não não é isso"), hyp_of("são são é isso")).negation
    assert (negation.flipped, negation.repetition_dropped) == (1, 1)


def test_a_repeat_replaced_by_another_negation_is_a_flip() -> None:
    negation = score_recording(ref_of("não não é isso"), hyp_of("não nunca é isso")).negation
    assert (negation.flipped, negation.repetition_dropped) == (1, 0)


def test_different_negations_back_to_back_are_not_a_repetition() -> None:
    negation = score_recording(ref_of("não nunca vou"), hyp_of("nunca vou")).negation
    assert (negation.flipped, negation.repetition_dropped) == (1, 0)


def test_repeated_numbers_in_a_false_start() -> None:
    numbers = score_recording(ref_of("tenho dois dois filhos"), hyp_of("tenho dois filhos")).numbers
    assert (numbers.ref_count, numbers.errors, numbers.repetition_dropped) == (2, 0, 1)
    numbers = score_recording(ref_of("tenho dois dois filhos"), hyp_of("tenho três filhos")).numbers
    assert (numbers.errors, numbers.repetition_dropped) == (1, 1)


def test_ne_is_a_tag_question_not_a_negation_as_the_policy_says() -> None:
    """protocol/normalization-policy.md: "né" becomes "não é" but is not audited as a negation."""
    for ref, hyp in (("ele vem né", "ele vem"), ("ele vem", "ele vem né"), ("não é", "né")):
        negation = score_recording(ref_of(ref), hyp_of(hyp)).negation
        assert (negation.flipped, negation.inserted, negation.repetition_dropped) == (0, 0, 0), (ref, hyp)
    assert score_recording(ref_of("não é"), hyp_of("é")).negation.flipped == 1


def test_the_gates_compare_occurrences_with_the_audits_rule() -> None:
    """A false start the challenger drops is no newly introduced negation error; a real flip is."""
    from toolkit.scorer.metrics.critical import critical_occurrences, newly_wrong
    from toolkit.scorer.options import ScoreOptions
    from toolkit.scorer.score import audit_vocabulary

    reference = ref_of("eu não não vou", "ele não veio")
    negations, names = audit_vocabulary(reference.names, ScoreOptions())

    def occurrences(text: str):
        score = score_recording(reference, hyp_of(text))
        turns = score.utterance_of_word[score.aligned.ref.source]
        return critical_occurrences(score.aligned, negations, names, turns)

    baseline = occurrences("eu não não vou ele não veio")
    assert newly_wrong(baseline, occurrences("eu não vou ele não veio")) == []
    [flip] = newly_wrong(baseline, occurrences("eu não não vou ele veio"))
    assert flip.audit == "negation" and flip.key[0] == "ref"
