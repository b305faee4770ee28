"""Blind transcription segments: saved one by one, superseded by overlap, written as a readable TextGrid."""

from __future__ import annotations

import pytest

from toolkit.adjudication.blind import TranscriptStore
from toolkit.core.errors import InputError
from toolkit.formats import read_reference


def test_segments_make_a_textgrid_the_toolkit_reads(tmp_path):
    store = TranscriptStore(tmp_path / "adjudication.sqlite", tmp_path)
    store.save(recording_id="rec", annotator="Ana Lima", start=0.0, end=2.0, duration=20.0, speech="nonspeech")
    store.save(
        recording_id="rec",
        annotator="Ana Lima",
        start=2.0,
        end=5.0,
        duration=20.0,
        text="eu não sei",
        speaker="ANA",
        first_word_end=2.3,
        last_word_start=4.5,
        unresolved=(3.0, 3.5, ""),
    )
    store.save(
        recording_id="rec", annotator="Ana Lima", start=5.0, end=8.0, duration=20.0, text="é o João", speaker="BETO"
    )
    assert store.next_untranscribed("rec", "Ana Lima", 20.0, 10.0) == (8.0, 18.0)
    path = tmp_path / "transcriptions" / "Ana_Lima" / "rec.TextGrid"
    assert store.textgrid_path("rec", "Ana Lima") == path
    grid = read_reference(path, duration=20.0)
    assert [(u.start, u.end, u.text, u.speaker) for u in grid.utterances] == [
        (2.0, 5.0, "eu não sei", "ANA"),
        (5.0, 8.0, "é o João", "BETO"),
    ]
    assert [(w.text, w.start, w.end) for w in grid.words] == [("eu", 2.0, 2.3), ("sei", 4.5, 5.0)]
    assert [(i.start, i.end, i.label) for i in grid.speech] == [
        (0.0, 2.0, "nonspeech"),
        (2.0, 5.0, "speech"),
        (5.0, 8.0, "speech"),
    ]
    assert [(i.start, i.end, i.label) for i in grid.unresolved] == [(3.0, 3.5, "inaudível")]


def test_overlapping_segment_supersedes_and_others_are_private(tmp_path):
    store = TranscriptStore(tmp_path / "s.sqlite", tmp_path)
    store.save(recording_id="rec", annotator="ana", start=0.0, end=4.0, duration=10.0, text="primeira versão")
    store.save(recording_id="rec", annotator="ana", start=1.0, end=3.0, duration=10.0, text="segunda")
    store.save(recording_id="rec", annotator="beto", start=0.0, end=4.0, duration=10.0, text="do beto")
    assert [s.text for s in store.segments("rec", "ana")] == ["segunda"]
    assert [s.text for s in store.segments("rec", "beto")] == ["do beto"]
    assert [u.text for u in read_reference(store.textgrid_path("rec", "ana")).utterances] == ["segunda"]


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(annotator=" "), "needs an annotator name"),
        (dict(start=8.0, end=12.0), "lies outside recording 'rec'"),
        (dict(text="olá", speech="nonspeech"), "cannot be confirmed non-speech"),
        (dict(unresolved=(0.5, 6.0, "x")), "must lie inside the segment"),
        (dict(first_word_end=1.5), "needs text"),
    ],
)
def test_bad_segments_are_refused_and_nothing_saved(tmp_path, change, message):
    store = TranscriptStore(tmp_path / "s.sqlite", tmp_path)
    args = dict(recording_id="rec", annotator="ana", start=1.0, end=5.0, duration=10.0) | change
    with pytest.raises(InputError, match=message):
        store.save(**args)
    assert store.segments("rec", "ana") == []
