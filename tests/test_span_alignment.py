"""The span review colours words by the scorer's own alignment, so what a reviewer sees is what was counted."""

from toolkit.adjudication.spans import span_alignment
from toolkit.core.transcripts import Word
from toolkit.scorer.options import ScoreOptions


def _ops(reference: str, hypothesis: str, names: tuple[str, ...] = ()) -> list[tuple[str | None, str | None, str]]:
    steps = span_alignment(reference, [Word(w) for w in hypothesis.split()], ScoreOptions(), names)
    return [(s.reference, s.hypothesis, s.op) for s in steps]


def test_read_aloud_numbers_and_abbreviations_are_not_shown_as_errors():
    steps = _ops("O art. 5º tem 21 incisos.", "o artigo quinto tem vinte e um incisos")
    assert {op for _, _, op in steps} == {"equal"}


def test_a_flipped_negation_is_a_substitution_marked_critical():
    steps = span_alignment("Ele não veio.", [Word("ele"), Word("então"), Word("veio")], ScoreOptions())
    flipped = [s for s in steps if s.op != "equal"]
    assert [(s.reference, s.hypothesis, s.op) for s in flipped] == [("não", "então", "substitute")]
    assert flipped[0].critical == ("negation",)


def test_names_from_the_reference_are_marked_and_an_empty_side_is_all_insertions():
    steps = span_alignment(
        "Chegou em Florianópolis.", [Word("chegou"), Word("em"), Word("floripa")], ScoreOptions(), ["Florianópolis"]
    )
    assert [s.critical for s in steps if s.op == "substitute"] == [("name",)]
    assert [s.op for s in span_alignment("", [Word("eh"), Word("bom")], ScoreOptions())] == ["insert", "insert"]
