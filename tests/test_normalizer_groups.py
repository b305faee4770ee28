"""The normalizer's utterance groups made at once (``Normalizer.group_columns``, which builds a group of plain
words from their cached forms) against each group normalized on its own by the whole pipeline."""

from __future__ import annotations

from itertools import accumulate
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.scorer.normalize import NormalizationPolicy, Normalizer, Token

CONVENTIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "ptbr-longform-conventions.tsv"
# Words every rule reads (labels, Roman numerals, abbreviations, money and numbers over several words, times,
# dates, parentheses, "num", mesoclisis), number words, and plain words, to put at any utterance's edge.
PIECES = (
    "I - I – XXI – II, IV e V a) b) (inciso) (cinco) ( ) (Revogada). Art. 10. art. 5º arts. 150, III, § §§ 1º "
    "inciso alínea bê cê parágrafo capítulo século XX D. Pedro II p. 12 R$ R $ 2.000 2.300 ,00 reais US$ 15% % "
    "14h30 às as 14:30 catorze horas e trinta meia minutos 15/03/2020 1/2 de março 2020 primeiro um uma dois mil "
    "cem segundo quinto num numa sei lugar não conceder -se-á -se há a à é dar-se-lhe infra-estrutura idéia vôo "
    "casa gente bora vamos embora Tiradentes tá né ; : . , ? éh"
).split()
PLAIN = "casa gente tá né o de pra".split()  # so that many groups hold no word any contextual rule reads
VERSIONS = ("ptbr-norm-1", "ptbr-norm-2", "ptbr-norm-3")
NORMALIZERS = [
    *(
        Normalizer(make(version))
        for version in VERSIONS
        for make in (NormalizationPolicy.normalized, NormalizationPolicy.accent_folded, NormalizationPolicy.verbatim)
    ),
    Normalizer(NormalizationPolicy.normalized("ptbr-norm-3"), user_lexicon=CONVENTIONS),
]


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
    )
]
WORD = st.one_of(st.sampled_from(PIECES), st.sampled_from(PLAIN))
UTTERANCE = st.one_of(
    st.lists(WORD, max_size=5),
    st.tuples(st.lists(WORD, max_size=2), st.sampled_from(PHRASES), st.lists(WORD, max_size=2)).map(
        lambda parts: [word for part in parts for word in part]
    ),
)


@settings(max_examples=1500, deadline=None)
@given(
    st.lists(UTTERANCE, max_size=10),
    st.booleans(),
    st.sampled_from(range(len(NORMALIZERS))),
)
def test_groups_made_at_once_are_each_group_on_its_own(
    utterances: list[list[str]], reference: bool, which: int
) -> None:
    normalizer = NORMALIZERS[which]
    words = [word for utterance in utterances for word in utterance]
    ends = list(accumulate(len(utterance) for utterance in utterances))
    groups = list(zip([0, *ends], ends))  # empty utterances included, as a reference may have them
    alone = [normalizer.columns(words[begin:end], reference) for begin, end in groups if end > begin]
    assert normalizer.group_columns(words, groups, reference) == alone


def test_columns_are_the_tokens_fields() -> None:
    normalizer = NORMALIZERS[2 * 3]  # ptbr-norm-3, normalized
    words = "Art. 5º (inciso) num sei R$ 2.000 às 14h30 casa".split()
    tokens = normalizer.tokens(words, reference=True)
    assert [list(column) for column in zip(*tokens)] == list(normalizer.columns(words, reference=True))
    assert all(isinstance(token, Token) for token in tokens)


def test_plain_groups_skip_the_passes_and_number_words_keep_them() -> None:
    normalizer = NORMALIZERS[2 * 3]
    words = ["casa", "gente", "dois", "mil", "casa.", "I", "-", "casa"]
    columns = normalizer.group_columns(words, [(0, 2), (2, 4), (4, 8)])
    assert columns[0].texts == ["casa", "gente"] and not any(columns[0].is_number)
    assert columns[1].is_number == [True, True] and columns[1].number_values == ["2000", "2000"]
    assert columns[2].texts[:2] == ["casa", "primeiro"]
