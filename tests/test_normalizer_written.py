"""A policy that writes each word as its pieces (verbatim) gives, straight from those pieces, the texts and optional
marks its whole pipeline gives: on words with parentheses, punctuation, digits, currencies, hyphens, list labels,
invisible and decomposed characters, in any groups, reference or hypothesis."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.core.transcripts import Hypothesis, Reference, Utterance, Word
from toolkit.scorer.metrics.tokens import SourceWords, tokenize
from toolkit.scorer.normalize import NormalizationPolicy, Normalizer
from toolkit.scorer.options import ScoreOptions
from toolkit.scorer.score import score_recording

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
WORDS = (
    "I - XXI – a) b) (inciso) (cinco) ( ) (Revogada). 5 (Redação dada pela Emenda) Art. 10. art. 5º § §§ 1º §1º nº "
    "inciso alínea II, IV e V 14h30 14:30 15/03/2020 1/2 2020 um dois mil R$ R $ 2.300 ,00 1.500,00 US$ 15% % 5kg "
    "m² °C num sei infra-estrutura -se-á ? ... , é É ÉH né pra ( ) (a (b c) d)"
).split() + ["cafe\u0301", "\u200bcasa", "ﬁm", "x\u00a0y", "a\u2003b", "", " ", "\ufeff"]
GROUPS = st.lists(st.lists(st.sampled_from(WORDS), max_size=6), max_size=6)
WRITERS = [
    Normalizer(NormalizationPolicy.verbatim(version)) for version in ("ptbr-norm-1", "ptbr-norm-2", "ptbr-norm-3")
] + [
    Normalizer(replace(NormalizationPolicy.verbatim(), unicode_form="NFKC")),
    Normalizer(NormalizationPolicy.verbatim(), user_lexicon=BENCHMARKS / "ptbr-longform-conventions.tsv"),
]


@settings(max_examples=800, deadline=None)
@given(GROUPS, st.booleans(), st.sampled_from(range(len(WRITERS))))
def test_written_words_are_the_pipelines_texts_and_optional_marks(
    groups: list[list[str]], reference: bool, which: int
) -> None:
    normalizer, words, spans = WRITERS[which], [], []
    for group in groups:  # empty groups too, as a reference may have empty utterances
        spans.append((len(words), len(words) + len(group)))
        words.extend(group)
    nan = np.full(len(words), np.nan)
    table = tokenize(normalizer, SourceWords(words, nan, nan, nan, nan), spans, reference=reference)
    written = normalizer.written(words, spans, reference)
    if not normalizer.writes_pieces:  # a lexicon's reading conventions add words: the pipeline only
        assert written is None
        return
    assert written == (table.texts, table.optional.tolist())


def test_only_a_policy_that_rewrites_no_word_is_written_straight() -> None:
    assert all(writer.writes_pieces for writer in WRITERS[:4])
    assert not WRITERS[4].writes_pieces  # its optional words are added by rule
    for policy in (NormalizationPolicy.normalized(), NormalizationPolicy.accent_folded()):
        assert not Normalizer(policy).writes_pieces
        assert Normalizer(policy).written(["casa"], [(0, 1)]) is None


@settings(max_examples=150, deadline=None)
@given(GROUPS, st.lists(st.sampled_from(WORDS), max_size=12))
def test_verbatim_counts_from_written_words_are_those_of_the_verbatim_tables(
    groups: list[list[str]], hypothesis: list[str]
) -> None:
    reference = Reference("r", [Utterance(float(k), k + 1.0, " ".join(group)) for k, group in enumerate(groups)])
    said = Hypothesis("r", [Word(word) for word in " ".join(hypothesis).split()])
    secondary = score_recording(reference, said, ScoreOptions(policy="normalized")).verbatim  # from written words
    primary = score_recording(reference, said, ScoreOptions(policy="verbatim")).counts  # from token tables
    assert secondary == primary
