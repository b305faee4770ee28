"""Invariants of the ptbr-norm-3 normalizer and scorer for any word sequence built from the pieces its new
rules read (labels, parentheses, units, times, dates, spellings, "num"), with and without a lexicon of
reading conventions."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer, Token
from toolkit.scorer.normalize.labels import item_labels, may_label
from toolkit.scorer.normalize.normalizer import _EVERY
from toolkit.scorer.normalize.optional import parenthesized
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

CONVENTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "ptbr-longform-conventions.tsv"
PIECES = (
    "I - XXI – a) b) (inciso) (cinco) ( ) (Revogada). 5 (Redação dada pela Emenda) Art. 10. art. 5º § §§ 1º "
    "inciso alínea bê cê parágrafo capítulo X II, IV e V arts. 150, III, seção 14h30 às as 14:30 catorze "
    "quatorze horas e trinta meia minutos 15/03/2020 1/2 de março 2020 primeiro um R$ R 2.300 ,00 reais US$ "
    "15% % km 5kg m² t 1 g 38 °C num numa sei lugar não nunca nem ninguém infra-estrutura idéia freqüente "
    "vôo microondas conceder -se-á -se há a à é ,2 dois pontos : ; . éh tá né pra"
).split()
words = st.lists(st.sampled_from(PIECES), min_size=0, max_size=24)


def _normalizers() -> list[Normalizer]:
    return [
        Normalizer(NormalizationPolicy.normalized("ptbr-norm-3")),
        Normalizer(NormalizationPolicy.accent_folded("ptbr-norm-3")),
        Normalizer(NormalizationPolicy.verbatim("ptbr-norm-3")),
        Normalizer(NormalizationPolicy.normalized("ptbr-norm-3"), user_lexicon=CONVENTIONS),
    ]


NORMALIZERS = _normalizers()


@settings(max_examples=300, deadline=None)
@given(words, st.booleans(), st.sampled_from(range(len(NORMALIZERS))))
def test_tokens_keep_their_invariants(source: list[str], reference: bool, which: int) -> None:
    tokens = NORMALIZERS[which].tokens(source, reference=reference)
    for token in tokens:
        assert token.text and not any(char.isspace() for char in token.text), (source, token)
        assert 0 <= token.source_index < len(source)
        assert reference or not token.optional  # a hypothesis has no optional words
    assert [t.source_index for t in tokens] == sorted(t.source_index for t in tokens)
    groups = [t.number_group for t in tokens if t.number_group is not None]
    assert groups == sorted(groups) and sorted(set(groups)) == list(range(len(set(groups))))
    for group in set(groups):
        members = [k for k, t in enumerate(tokens) if t.number_group == group]
        assert members == list(range(members[0], members[-1] + 1))  # a number is contiguous
        assert len({tokens[k].number_value for k in members}) == 1


@settings(max_examples=150, deadline=None)
@given(words, st.booleans())
def test_a_text_read_back_as_written_scores_no_error(source: list[str], conventions: bool) -> None:
    if not source:
        return
    reference = Reference("r", [Utterance(0.0, 9.0, " ".join(source))])
    # Read back: the words as written, without the reference's markup (the parentheses of optional words are not
    # said, and a recognizer does not write them: in a hypothesis they would only be punctuation).
    hypothesis = Hypothesis("r", [Word(w) for w in parenthesized(source)[0] if w])
    result = score_recording(reference, hypothesis, ScoreOptions(lexicon=CONVENTIONS if conventions else None))
    assert result.counts.errors == 0, source
    assert result.negation.flipped == result.negation.inserted == result.numbers.errors == 0


@pytest.mark.parametrize("version", ["ptbr-norm-1", "ptbr-norm-2"])
def test_older_versions_mark_nothing_optional(version: str) -> None:
    normalizer = Normalizer(NormalizationPolicy.normalized(version))
    assert not any(t.optional or t.undecided for t in normalizer.tokens(PIECES, reference=True))


# Utterances normalized at once (Normalizer.group_columns, which skips the passes a group's words cannot set going)
# against each normalized alone: every rule's words, and readings of several words, at any utterance's edge.
EDGE_WORDS = (
    *PIECES,
    *"I XXI D. Pedro II século XX p. 12 uma dois mil cem segundo quinto dar-se-lhe".split(),
    *"Maria Clara, Luíza Conceição. MIX C) Lx XV– VI. IIII".split(),  # open like a label, may be none
)
PLAIN = "casa gente o de pra".split()  # so that many groups hold no word any contextual rule reads
# Readings made of several words, each word of which a group may hold alone.
PHRASES = [
    phrase.split()
    for phrase in (
        "conceder -se há",
        "realizar-se a",
        "dar -lhe a",
        "alínea bê",
        "letra cê",
        "inciso IV",
        "artigo quinto",
        "Art. 10.",
        "§ 2º",
        "D. Pedro",
        "D. Maria",
        "p. 12",
        "inc. IV",
        "século XXI",
        "R $ 2 .000",
        "R$ 2.000",
        "às duas e meia",
        "catorze horas e trinta",
        "dois de março de dois mil",
        "primeiro de maio",
        "num sei",
        "numa boa",
        "( cinco )",
        "(até cinco)",
        "incisos I a III",
        "arts. 150, II, e 153,",
        "II -",
        "a)",
        "IV–",
        "Parágrafo IV",
        "I –",
        "Maria –",
        "; Clara -",
        "art. 5º, Maria, e",
        "(num sei)",
        "(I -",
        "(alínea bê)",
    )
]
WORD = st.one_of(st.sampled_from(EDGE_WORDS), st.sampled_from(PLAIN))
UTTERANCE = st.one_of(
    st.lists(WORD, max_size=5),
    st.tuples(st.lists(WORD, max_size=2), st.sampled_from(PHRASES), st.lists(WORD, max_size=2)).map(
        lambda parts: [word for part in parts for word in part]
    ),
)
GROUP_NORMALIZERS = [
    *NORMALIZERS,
    *(
        Normalizer(make(version))
        for version in ("ptbr-norm-1", "ptbr-norm-2")
        for make in (NormalizationPolicy.normalized, NormalizationPolicy.verbatim)
    ),
]


@settings(max_examples=1500, deadline=None)
@given(st.lists(UTTERANCE, max_size=10), st.booleans(), st.sampled_from(range(len(GROUP_NORMALIZERS))))
def test_groups_made_at_once_are_each_group_on_its_own(
    utterances: list[list[str]], reference: bool, which: int
) -> None:
    normalizer = GROUP_NORMALIZERS[which]
    words = [word for utterance in utterances for word in utterance]
    ends = list(accumulate(len(utterance) for utterance in utterances))
    groups = list(zip([0, *ends], ends))  # empty utterances included, as a reference may have them
    alone = [normalizer.columns(words[begin:end], reference) for begin, end in groups if end > begin]
    assert normalizer.group_columns(words, groups, reference) == alone


def test_columns_are_the_tokens_fields() -> None:
    words = "Art. 5º (inciso) num sei R$ 2.000 às 14h30 casa".split()
    tokens = NORMALIZERS[0].tokens(words, reference=True)
    assert [list(column) for column in zip(*tokens)] == list(NORMALIZERS[0].columns(words, reference=True))
    assert all(isinstance(token, Token) for token in tokens)


def test_plain_groups_skip_the_passes_and_number_words_keep_them() -> None:
    words = ["casa", "gente", "dois", "mil", "casa.", "I", "-", "casa"]
    columns = NORMALIZERS[0].group_columns(words, [(0, 2), (2, 4), (4, 8)])
    assert columns[0].texts == ["casa", "gente"] and not any(columns[0].is_number)
    assert columns[1].is_number == [True, True] and columns[1].number_values == ["2000", "2000"]
    assert columns[2].texts[:2] == ["casa", "primeiro"]


@settings(max_examples=500, deadline=None)
@given(st.lists(WORD, max_size=12), st.lists(st.integers(0, 11), max_size=6))
def test_labels_are_found_in_the_words_that_may_be_one(words: list[str], extra: list[int]) -> None:
    labels = item_labels(words)
    assert all(may_label(words[index]) for index in labels)
    candidates = sorted(
        {*(k for k, word in enumerate(words) if may_label(word)), *(k for k in extra if k < len(words))}
    )
    assert item_labels(words, candidates) == labels


@settings(max_examples=800, deadline=None)
@given(UTTERANCE, st.booleans(), st.sampled_from(range(len(GROUP_NORMALIZERS))))
def test_passes_reading_only_their_words_are_the_whole_pipeline(words: list[str], reference: bool, which: int) -> None:
    normalizer = GROUP_NORMALIZERS[which]
    every = normalizer._passed(words, reference, [_EVERY] * len(words))  # each pass reads every word
    assert normalizer.columns(words, reference) == every


def test_a_group_reads_its_words_once_their_parentheses_are_off() -> None:
    words = ["casa", "(num", "sei)"]  # "(num" opens no colloquial "num"; "num", once the parenthesis is off, does
    assert NORMALIZERS[0].group_columns(words, [(0, 1), (1, 3)], reference=True)[1].texts == ["não", "sei"]
