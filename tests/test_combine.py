"""The +second-model combine rule on hand-built word streams."""

from toolkit.core.transcripts import Word
from toolkit.pipeline.combine import combine_streams


def w(text: str, start: float, confidence: float | None) -> Word:
    return Word(text, start, start + 0.3, confidence)


def test_agreement_is_kept_and_each_disagreement_goes_to_the_more_confident_side() -> None:
    first = [w("eu", 0.0, 0.9), w("não", 0.4, 0.3), w("sei", 0.8, 0.9), w("do", 1.2, 0.8), w("João", 1.6, 0.9)]
    second = [w("Eu", 0.0, 0.8), w("nunca", 0.4, 0.7), w("sei", 0.8, 0.9), w("da", 1.2, 0.4), w("João.", 1.6, 0.9)]
    merged, spans = combine_streams(first, second, labels=("a", "b"))
    assert [x.text for x in merged] == ["eu", "nunca", "sei", "do", "João"]
    assert [(s["a"], s["b"], s["kept"]) for s in spans] == [("não", "nunca", "b"), ("do", "da", "a")]
    assert spans[0]["start"] == 0.4 and spans[0]["end"] == 0.7


def test_ties_and_missing_confidences_keep_the_first_recognizer() -> None:
    first = [w("pra", 0.0, None), w("casa", 0.5, 0.5)]
    second = [w("para", 0.0, None), w("casa", 0.5, 0.5), w("agora", 1.0, None)]
    merged, spans = combine_streams(first, second, labels=("a", "b"))
    assert [x.text for x in merged] == ["pra", "casa"]
    assert [s["kept"] for s in spans] == ["a", "a"]
    assert spans[1]["a"] == "" and spans[1]["b"] == "agora"


def test_one_empty_stream_takes_the_other_only_when_it_is_more_confident() -> None:
    words = [w("sim", 0.0, 0.6)]
    assert combine_streams([], words, labels=("a", "b"))[0] == words
    assert combine_streams(words, [], labels=("a", "b"))[0] == words
