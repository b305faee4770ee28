"""Properties of the scorer's counts on generated word sequences (hypothesis): what must hold for any input."""

from __future__ import annotations

import dataclasses

import jiwer
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import toolkit
from toolkit.core.transcripts import Hypothesis, Interval, Reference, Utterance, Word
from toolkit.scorer.metrics.nonspeech import NOTHING_PLACED
from toolkit.scorer.results import PARTS, CorpusScore
from toolkit.scorer.score import score_recording
from toolkit.scorer.tables import score_tables, write_tables

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
    scores = [
        score_recording(
            Reference(f"r{k}", [Utterance(0.0, float("inf"), r)] if r else []),
            Hypothesis(f"r{k}", [Word(w) for w in h.split()], arm="arm"),
        )
        for k, (r, h) in enumerate(pairs)
    ]
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


# --- results that add up: one definition of the fields, pooled = sum of parts ---------------

CRITICAL = ["não", "nunca", "Ana", "dois", "casa", "rio", "mar", "sol"]


@st.composite
def recordings(draw, index: int = 0):
    """A timed reference (one turn per word group) with non-speech, and a hypothesis timed or not, with
    or without VAD segments and seams: every part of a score."""
    ref_words = draw(st.lists(st.sampled_from(CRITICAL), min_size=0, max_size=10))
    hyp_words = draw(st.lists(st.sampled_from(CRITICAL), max_size=10))
    timed_hyp = draw(st.booleans())
    turns = [ref_words[k : k + 3] for k in range(0, len(ref_words), 3)]
    utterances = [Utterance(4.0 * k, 4.0 * k + 3.0, " ".join(t)) for k, t in enumerate(turns)]
    words = [Word(w, 4.0 * k + j, 4.0 * k + j + 0.8) for k, t in enumerate(turns) for j, w in enumerate(t)]
    nonspeech = [Interval(4.0 * len(turns), 4.0 * len(turns) + draw(st.sampled_from([1.0, 2.5])), "nonspeech")]
    reference = Reference(f"r{index}", utterances, words, nonspeech, names=["Ana"])
    hyp = Hypothesis(
        f"r{index}",
        [Word(w, 1.1 * k, 1.1 * k + 0.5) if timed_hyp else Word(w) for k, w in enumerate(hyp_words)],
        arm="arm",
    )
    vad = [(0.0, draw(st.sampled_from([2.0, 6.0, 20.0])))] if draw(st.booleans()) else None
    seams = [(2.0, 3.0)] if draw(st.booleans()) else None
    return score_recording(reference, hyp, vad_segments=vad, seams=seams)


corpora = st.integers(1, 4).flatmap(lambda n: st.tuples(*(recordings(k) for k in range(n))))


def _counts(record) -> dict[str, float]:
    """A record's summed fields: numbers that are not settings (a setting is kept, not added)."""
    return {
        f.name: getattr(record, f.name)
        for f in dataclasses.fields(record)
        if "add" not in f.metadata
        and isinstance(getattr(record, f.name), (int, float))
        and not isinstance(getattr(record, f.name), bool)
    }


@SETTINGS
@given(corpora)
def test_pooled_figures_are_the_sums_of_the_recordings_figures(scores):
    corpus = CorpusScore.of(scores)
    for part in PARTS:
        records = [getattr(s, part.attr) for s in scores if getattr(s, part.attr) is not None]
        pooled = getattr(corpus, part.attr)
        if not records:  # an optional part no recording has
            assert pooled is None
            continue
        if part.attr == "nonspeech":  # words that cannot be placed in time add nothing here
            records = [r for r in records if r.available] or [NOTHING_PLACED]
        for name, value in _counts(pooled).items():
            parts = records
            if part.attr == "timing" and name == "ref_timed_words":  # onset figures pool the timed recordings
                parts = [r for r in records if r.available]
            assert value == pytest.approx(sum(getattr(r, name) for r in parts)), (part.attr, name)
    timed = [s.timing for s in scores if s.timing.available]
    assert len(corpus.timing.onset_errors) == sum(len(t.onset_errors) for t in timed)
    assert corpus.timing.drift_s_per_min is None or len(scores) == 1  # a slope is per recording only
    if corpus.vad is not None:
        assert (
            corpus.vad.recall == pytest.approx(corpus.vad.retained_s / corpus.vad.speech_s)
            if corpus.vad.speech_s
            else corpus.vad.recall is None
        )


def _json_at(data: dict, path: tuple[str, ...]) -> dict:
    for key in path:
        data = data[key]
    return data


@SETTINGS
@given(corpora)
def test_json_flat_row_and_csv_come_from_one_definition(tmp_path_factory, scores):
    import pandas as pd

    for score in (scores[0], CorpusScore.of(scores)):
        pooled = isinstance(score, CorpusScore)
        row, data = score.flat(), score.to_json()
        expected = ["recordings"] if pooled else []
        for part in PARTS:
            record = getattr(score, part.attr)
            if record is None or not part.columns:
                continue
            obj = _json_at(data, part.path)
            for figure in record.FIGURES:  # every column is a JSON figure with the same value
                if figure.column_name is None or not (figure.pooled if pooled else figure.recording):
                    continue
                column = part.prefix + figure.column_name
                expected.append(column)
                value = obj[figure.key]
                assert row[column] == value or (row[column] != row[column] and value != value)  # NaN alike
        assert list(row) == [*expected, "signature"]
    out = tmp_path_factory.mktemp("tables")
    per_recording, aggregate = score_tables(("arm", s.recording_id, ["x"], s) for s in scores)
    write_tables(per_recording, aggregate, out)
    for table, rows in (
        (out / "per_recording.csv", [s.flat() for s in scores]),
        (out / "aggregate.csv", [CorpusScore.of(scores).flat()] * 2),
    ):  # strata "all" and "x"
        back = pd.read_csv(table)
        for k, row in enumerate(rows):
            for column, value in row.items():
                read = back.loc[k, column]
                assert (value is None and pd.isna(read)) or read == pytest.approx(value) or str(read) == str(value), (
                    table.name,
                    column,
                )


@settings(max_examples=300, deadline=None)
@given(
    ref=st.lists(st.sampled_from(["a", "casa", "não", "é", "mais", "de"]), max_size=14),
    hyp=st.lists(st.sampled_from(["a", "casa", "nao", "e", "mas", "da", "x"]), max_size=14),
    optional=st.lists(st.booleans(), max_size=14),
    collar=st.sampled_from([None, 0.5]),
)
def test_the_character_errors_are_the_exact_distance(ref: list, hyp: list, optional: list, collar) -> None:
    """The character distance is searched within the word alignment's own character cost, and stays the exact
    edit distance of the texts (the reference without the optional words left out), for either aligner."""
    import numpy as np
    from rapidfuzz.distance import Levenshtein

    from toolkit.scorer.align import SKIP, align_timed
    from toolkit.scorer.metrics.wer import error_counts
    from toolkit.scorer.optional_align import align_reference

    marks = np.array((optional + [False] * len(ref))[: len(ref)], dtype=bool)
    if collar is None:
        alignment = align_reference(ref, hyp, marks)
    else:
        times = np.arange(len(ref), dtype=float)
        alignment = align_timed(ref, hyp, times, times + 0.5, np.arange(len(hyp), dtype=float), collar, marks)
    left_out = set(alignment.ref_index[alignment.ops == SKIP].tolist())
    said = " ".join(word for k, word in enumerate(ref) if k not in left_out)
    assert error_counts(ref, hyp, alignment).char_errors == Levenshtein.distance(said, " ".join(hyp))
