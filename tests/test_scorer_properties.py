"""Properties of the scorer's counts on generated word sequences (hypothesis): what must hold for any input."""

from __future__ import annotations

import jiwer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.records import Hypothesis, Reference, Utterance, Word
from toolkit.scoring import CorpusScore, score_recording, score_tables

# Words the pt-BR normalizer leaves as they are (no number, abbreviation, equivalence or Roman numeral).
VOCABULARY = ["casa", "rio", "mar", "sol", "lua", "pedra", "vento", "porta", "livro", "mesa"]
words = st.lists(st.sampled_from(VOCABULARY), max_size=12)
texts = words.map(" ".join)
SETTINGS = settings(max_examples=60, deadline=None)


@SETTINGS
@given(texts, texts, st.sampled_from(VOCABULARY))
def test_the_same_word_added_to_both_ends_changes_no_error(ref, hyp, word):
    before = toolkit.score(ref, hyp).counts
    for ref2, hyp2 in ((f"{ref} {word}", f"{hyp} {word}"), (f"{word} {ref}", f"{word} {hyp}")):
        after = toolkit.score(ref2, hyp2).counts
        assert after.errors == before.errors
        assert after.ref_words == before.ref_words + 1
        assert after.wer == pytest.approx(before.errors / (before.ref_words + 1))


@SETTINGS
@given(texts, texts)
def test_substitutions_deletions_and_hits_make_up_the_reference(ref, hyp):
    counts = toolkit.score(ref, hyp).counts
    assert counts.substitutions + counts.deletions + counts.hits == counts.ref_words == len(ref.split())
    assert counts.substitutions + counts.insertions + counts.hits == len(hyp.split())
    if ref:  # the word edit distance is the one jiwer finds (the S/D/I split may differ only on ties)
        out = jiwer.process_words(ref, hyp)
        assert counts.errors == out.substitutions + out.deletions + out.insertions


@SETTINGS
@given(st.lists(st.tuples(texts, texts), min_size=1, max_size=5))
def test_pooled_result_is_the_sum_of_its_parts(pairs):
    scores = [score_recording(Reference(f"r{k}", [Utterance(0.0, float("inf"), r)] if r else []),
                              Hypothesis(f"r{k}", [Word(w) for w in h.split()], arm="arm"))
              for k, (r, h) in enumerate(pairs)]
    corpus = sum(scores)
    assert isinstance(corpus, CorpusScore) and len(corpus.recordings) == len(pairs)
    for field in ("ref_words", "hits", "substitutions", "deletions", "insertions", "ref_chars", "char_errors"):
        assert getattr(corpus.counts, field) == sum(getattr(s.counts, field) for s in scores)
    per_recording, aggregate = score_tables(("arm", s.recording_id, [], s) for s in scores)
    pooled = aggregate[aggregate["stratum"] == "all"].iloc[0]
    for field in ("ref_words", "substitutions", "deletions", "insertions", "errors"):
        assert pooled[field] == per_recording[field].sum() == getattr(corpus.counts, field)
    if corpus.counts.ref_words:
        assert pooled["wer"] == pytest.approx(corpus.wer)
        assert toolkit.wer([r for r, _ in pairs], [h for _, h in pairs]) == pytest.approx(corpus.wer)


def test_scores_of_different_signatures_do_not_add():
    plain = toolkit.score("casa rio", "casa mar")
    verbatim = toolkit.score("casa rio", "casa mar", policy="verbatim")
    assert (plain + plain).counts.errors == 2
    with pytest.raises(ValueError, match="different scorer signatures"):
        plain + verbatim
