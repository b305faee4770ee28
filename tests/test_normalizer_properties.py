"""Invariants of the ptbr-norm-3 normalizer and scorer for any word sequence built from the pieces its new
rules read (labels, parentheses, units, times, dates, spellings, "num"), with and without a lexicon of
reading conventions."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
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
    hypothesis = Hypothesis("r", [Word(w) for w in source])
    result = score_recording(reference, hypothesis, ScoreOptions(lexicon=CONVENTIONS if conventions else None))
    assert result.counts.errors == 0, source
    assert result.negation.flipped == result.negation.inserted == result.numbers.errors == 0


@pytest.mark.parametrize("version", ["ptbr-norm-1", "ptbr-norm-2"])
def test_older_versions_mark_nothing_optional(version: str) -> None:
    normalizer = Normalizer(NormalizationPolicy.normalized(version))
    assert not any(t.optional or t.undecided for t in normalizer.tokens(PIECES, reference=True))
