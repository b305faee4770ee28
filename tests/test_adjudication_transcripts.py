"""Blind transcription: stretches cut at pauses, segments saved one by one (never changed), superseded by
overlap, written as a readable TextGrid with the permissions the umask gives."""

from __future__ import annotations

import os
import sqlite3

import pytest

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.stretches import PAUSE, SPEECH, Stretch, fixed, from_regions
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
    stretches = [Stretch(0.0, 2.0, PAUSE), Stretch(2.0, 8.0, SPEECH), Stretch(8.0, 14.0, SPEECH)]
    assert store.next_untranscribed("rec", "Ana Lima", stretches) == stretches[2]
    assert store.next_untranscribed("rec", "Beto", stretches) == stretches[0]
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


def test_a_saved_segment_can_never_be_changed_or_deleted(tmp_path):
    store = TranscriptStore(tmp_path / "s.sqlite", tmp_path)
    store.save(recording_id="rec", annotator="ana", start=0.0, end=4.0, duration=10.0, text="bom dia")
    with sqlite3.connect(tmp_path / "s.sqlite") as connection:
        for statement in ("UPDATE transcript_segments SET text = 'x'", "DELETE FROM transcript_segments"):
            with pytest.raises(sqlite3.IntegrityError, match="never"):
                connection.execute(statement)
    assert [s.text for s in store.segments("rec", "ana")] == ["bom dia"]


def test_textgrids_follow_the_umask(tmp_path):
    store = TranscriptStore(tmp_path / "s.sqlite", tmp_path)
    previous = os.umask(0o027)
    try:
        store.save(recording_id="rec", annotator="ana", start=0.0, end=4.0, duration=10.0, text="bom dia")
    finally:
        os.umask(previous)
    assert store.textgrid_path("rec", "ana").stat().st_mode & 0o777 == 0o640


def test_stretches_are_cut_in_pauses_and_tile_the_recording():
    regions = [(1.0, 4.0), (4.3, 6.0), (6.2, 9.5), (12.0, 15.0), (15.2, 31.0)]
    stretches = from_regions(regions, 40.0)
    assert [(s.start, s.end, s.kind) for s in stretches] == [
        (0.0, 9.7, SPEECH),  # three regions joined across pauses of 0.3 and 0.2 s (at most 15 s)
        (9.7, 11.8, PAUSE),  # a 2.5 s pause of its own, 0.2 s left to the speech beside it
        (11.8, 15.1, SPEECH),  # a region is never split: 15.2-31.0 is longer than 15 s on its own
        (15.1, 31.2, SPEECH),
        (31.2, 40.0, PAUSE),
    ]
    for region_start, region_end in regions:  # no cut falls inside speech
        assert not any(region_start < s.start < region_end for s in stretches)
    assert fixed(25.0) == [Stretch(0.0, 10.0, SPEECH), Stretch(10.0, 20.0, SPEECH), Stretch(20.0, 25.0, SPEECH)]
