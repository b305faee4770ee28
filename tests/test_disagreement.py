"""Disagreement spans between two word sequences, and the disagreement list written from them."""

from __future__ import annotations

import csv
import json

import pytest

from toolkit.core.errors import InputError, ToolkitError
from toolkit.core.transcripts import Word
from toolkit.pipeline.disagreement import CSV_COLUMNS, disagreement_spans, write_disagreements


def seq(*items: tuple[str, float | None]) -> list[Word]:
    return [Word(text, start, None if start is None else round(start + 0.3, 6)) for text, start in items]


def test_identical_sequences_have_no_disagreement():
    words = seq(("Eu", 1.0), ("não", 1.4), ("vou", 1.8))
    assert disagreement_spans(words, list(words)) == []


def test_case_and_punctuation_are_folded_and_punctuation_tokens_ignored():
    a = seq(("Não,", 1.0), ("sei.", 1.4))
    b = seq(("não", 1.05), ("sei", 1.45), ("...", 1.8))
    assert disagreement_spans(a, b) == []


def test_a_deleted_negation_is_an_only_a_span_with_its_time():
    a = seq(("eu", 1.0), ("não", 1.4), ("vou", 1.8))
    b = seq(("eu", 1.0), ("vou", 1.8))
    [span] = disagreement_spans(a, b)
    assert span.kind == "only_a" and span.text_a == "não" and span.text_b == ""
    assert (span.start, span.end, span.time_source) == (1.4, 1.7, "words")


def test_substitution_and_insertion_kinds():
    a = seq(("vamos", 1.0), ("conversar", 1.4), ("hoje", 5.0))
    b = seq(("vamos", 1.0), ("conversa", 1.4), ("hoje", 5.0), ("sim", 9.0))
    spans = disagreement_spans(a, b)
    assert [(s.kind, s.text_a, s.text_b) for s in spans] == [
        ("substitution", "conversar", "conversa"),
        ("only_b", "", "sim"),
    ]
    assert (spans[1].start, spans[1].end) == (9.0, 9.3)


def test_nearby_spans_merge_with_the_agreeing_words_between():
    a = seq(("um", 1.0), ("dois", 1.4), ("três", 1.8), ("quatro", 2.2))
    b = seq(("um", 1.0), ("dos", 1.4), ("três", 1.8), ("quarto", 2.2))
    [merged] = disagreement_spans(a, b, merge_gap=1.0)
    assert merged.text_a == "dois três quatro" and merged.text_b == "dos três quarto"
    assert (merged.start, merged.end, merged.kind) == (1.4, 2.5, "substitution")
    separate = disagreement_spans(a, b, merge_gap=0.05)
    assert [s.text_a for s in separate] == ["dois", "quatro"]


def test_merging_spans_of_different_kinds_gives_mixed():
    a = seq(("um", 1.0), ("dois", 1.4), ("três", 1.8))
    b = seq(("dois", 1.4), ("três", 1.8), ("quatro", 2.2))
    assert [s.kind for s in disagreement_spans(a, b, merge_gap=0.0)] == ["only_a", "only_b"]
    [merged] = disagreement_spans(a, b, merge_gap=5.0)
    assert merged.kind == "mixed" and merged.text_a == "um dois três"


def test_untimed_words_take_times_from_both_timed_neighbours():
    a = seq(("eu", 1.0), ("acho", None), ("que", 2.0))
    b = seq(("eu", 1.0), ("que", 2.0))
    [span] = disagreement_spans(a, b)
    assert (span.start, span.end, span.time_source) == (1.3, 2.0, "neighbours")


def test_untimed_words_without_two_timed_neighbours_have_no_time():
    a = seq(("eu", 1.0), ("acho", None))
    b = seq(("eu", 1.0))
    [span] = disagreement_spans(a, b)
    assert (span.start, span.end, span.time_source) == (None, None, None)
    a = seq(("eu", None), ("acho", None), ("que", 2.0))
    b = seq(("eu", None), ("que", 2.0))
    [span] = disagreement_spans(a, b)
    assert span.start is None and span.time_source is None


def test_untimed_spans_are_never_merged_by_time():
    a = seq(("a", 1.0), ("b", None), ("c", 2.0), ("d", None))
    b = seq(("a", 1.0), ("c", 2.0))
    assert len(disagreement_spans(a, b, merge_gap=100.0)) == 2


def test_one_empty_sequence_is_one_span():
    a = seq(("bom", 1.0), ("dia", 1.4))
    [span] = disagreement_spans(a, [])
    assert span.kind == "only_a" and (span.start, span.end) == (1.0, 1.7)
    assert disagreement_spans([], []) == []


def test_bad_merge_gap():
    with pytest.raises(ToolkitError):
        disagreement_spans([], [], merge_gap=-1.0)


def test_review_list_json(tmp_path):
    a = seq(("eu", 1.0), ("não", 1.4), ("vou", 1.8), ("ok", None))
    b = seq(("eu", 1.0), ("vou", 1.8))
    spans = disagreement_spans(a, b)
    path = write_disagreements(
        spans, tmp_path / "review" / "rec1.json", recording_id="rec1", label_a="baseline", label_b="vad"
    )
    data = json.loads(path.read_text(encoding="utf-8"))
    assert (data["recording_id"], data["label_a"], data["label_b"]) == ("rec1", "baseline", "vad")
    assert [(s["text_a"], s["start"], s["time_source"]) for s in data["spans"]] == [
        ("não", 1.4, "words"),
        ("ok", None, None),
    ]
    assert data["spans"][0]["words_a"][0]["text"] == "não"
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]


def test_review_list_csv(tmp_path):
    a = seq(("eu", 1.0), ("não", 1.4), ("vou", 1.8), ("ok", None))
    b = seq(("eu", 1.0), ("nem", 1.4), ("vou", 1.8))
    path = write_disagreements(
        disagreement_spans(a, b), tmp_path / "rec1.csv", recording_id="rec1", label_a="whisper", label_b="second"
    )
    with path.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert tuple(rows[0]) == CSV_COLUMNS
    assert [(r["kind"], r["text_a"], r["text_b"], r["start"], r["end"]) for r in rows] == [
        ("substitution", "não", "nem", "1.4", "1.7"),
        ("only_a", "ok", "", "", ""),
    ]


def test_review_list_refuses_other_formats_and_writes_nothing(tmp_path):
    with pytest.raises(InputError, match="rec1.txt"):
        write_disagreements([], tmp_path / "rec1.txt", recording_id="rec1", label_a="a", label_b="b")
    assert list(tmp_path.iterdir()) == []
