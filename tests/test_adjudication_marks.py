"""Waveform marks: stored append-only, moved and withdrawn by new rows, laid over a listener's
transcription, and exported in the TextGrid tiers the scorer reads (non-speech, word times)."""

from __future__ import annotations

import hashlib
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.marks import WORD, Mark, MarkStore, with_marks
from toolkit.core.errors import InputError
from toolkit.core.transcripts import NONSPEECH, SPEECH, Hypothesis, Interval, Reference, Utterance, Word
from toolkit.formats import read_reference
from toolkit.scorer.score import score_recording

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / "app" / "components" / "vendor"


def _store(tmp_path: Path) -> MarkStore:
    return MarkStore(tmp_path / "adjudication.sqlite")


def _add(store: MarkStore, kind: str = NONSPEECH, start: float = 1.0, end: float = 2.0, **extra) -> Mark:  # noqa: ANN003
    return store.add(recording_id="rec", annotator="ana", kind=kind, start=start, end=end, duration=20.0, **extra)


def test_a_moved_or_withdrawn_mark_stays_in_the_file_and_leaves_the_current_ones(tmp_path: Path) -> None:
    store = _store(tmp_path)
    first = _add(store)
    moved = _add(store, start=1.2, end=2.0, replaces=first.id)
    word = _add(store, WORD, 3.0, 3.4, label=" João ")
    assert [(m.id, m.start, m.end) for m in store.current("rec", "ana")] == [(moved.id, 1.2, 2.0), (word.id, 3.0, 3.4)]
    store.withdraw(recording_id="rec", annotator="ana", mark_id=moved.id)
    assert [(m.kind, m.label) for m in store.current("rec", "ana")] == [(WORD, "João")]
    assert store.current("rec", "beto") == []
    with sqlite3.connect(store.path) as connection:
        assert connection.execute("SELECT count(*) FROM marks").fetchone() == (4,)
        for statement in ("UPDATE marks SET start = 0", "DELETE FROM marks"):
            with pytest.raises(sqlite3.IntegrityError, match="a mark is never"):
                connection.execute(statement)


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        ({"kind": "music"}, "not 'music'"),
        ({"start": 2.0, "end": 2.0}, "not an interval"),
        ({"start": -1.0}, "not an interval"),
        ({"end": float("nan")}, "not an interval"),
        ({"end": 21.0}, "outside recording"),
        ({"kind": WORD, "label": ""}, "needs the word itself"),
        ({"kind": WORD, "label": "dois mil"}, "needs the word itself"),
        ({"replaces": 99}, "not a current mark"),
    ],
)
def test_a_bad_mark_is_refused_in_one_line_and_nothing_is_stored(tmp_path: Path, change: dict, problem: str) -> None:
    store = _store(tmp_path)
    values = {"kind": NONSPEECH, "start": 1.0, "end": 2.0, "label": "", "replaces": None, **change}
    with pytest.raises(InputError, match=problem) as refused:
        store.add(recording_id="rec", annotator="ana", duration=20.0, **values)
    assert "\n" not in str(refused.value) and "adjudication.sqlite" in str(refused.value)
    assert store.current("rec", "ana") == []


def test_nobody_moves_or_withdraws_another_listeners_mark(tmp_path: Path) -> None:
    store = _store(tmp_path)
    theirs = store.add(recording_id="rec", annotator="beto", kind=SPEECH, start=1.0, end=2.0, duration=20.0)
    with pytest.raises(InputError, match="not a current mark of ana"):
        _add(store, replaces=theirs.id)
    with pytest.raises(InputError, match="not a current mark of ana"):
        store.withdraw(recording_id="rec", annotator="ana", mark_id=theirs.id)
    assert [m.id for m in store.current("rec", "beto")] == [theirs.id]


_times = st.tuples(st.integers(0, 190), st.integers(1, 40)).map(lambda t: (t[0] / 10, t[0] / 10 + t[1] / 10))
_marks = st.lists(st.tuples(st.sampled_from([SPEECH, NONSPEECH, WORD]), _times), max_size=12)


@settings(max_examples=150, deadline=None)
@given(_marks)
def test_marks_laid_over_a_transcription_leave_tiers_a_textgrid_can_hold(marks: list) -> None:
    """Whatever marks arrive, the speech tier and the words stay in order without overlaps, and the newest
    mark of each kind holds its own stretch whole."""
    turns = [Utterance(0.0, 10.0, "eu não sei")]
    reference = Reference("rec", turns, [Word("eu", 0.0, 0.5)], [Interval(0, 10, SPEECH)])
    stored = [
        Mark(k + 1, "rec", "ana", kind, start, end, "palavra" if kind == WORD else "", None, "")
        for k, (kind, (start, end)) in enumerate(marks)
    ]
    laid = with_marks(reference, stored)
    for tier in (laid.speech, laid.words):
        spans = [(i.start, i.end) for i in tier]
        assert spans == sorted(spans)
        assert all(a[1] <= b[0] + 1e-9 for a, b in zip(spans, spans[1:], strict=False))
    intervals = [m for m in stored if m.kind != WORD]
    if intervals:
        newest = intervals[-1]
        assert Interval(newest.start, newest.end, newest.kind) in laid.speech
    words = [m for m in stored if m.kind == WORD]
    if words:
        assert Word("palavra", words[-1].start, words[-1].end) in laid.words


def test_an_exported_mark_reaches_the_scorer(tmp_path: Path) -> None:
    """Marks go into the listener's transcription TextGrid; scored against it, a word in the marked
    non-speech is an invented word, and a marked word time gives an onset error."""
    exp = tmp_path / "exp"
    transcripts = TranscriptStore(exp / "adjudication.sqlite", exp)
    transcripts.save(recording_id="rec", annotator="ana", start=1.0, end=4.0, duration=20.0, text="eu não sei")
    marks = MarkStore(exp / "adjudication.sqlite")
    marks.add(recording_id="rec", annotator="ana", kind=NONSPEECH, start=6.0, end=9.0, duration=20.0)
    marks.add(recording_id="rec", annotator="ana", kind=WORD, start=1.8, end=2.1, label="não", duration=20.0)
    path = transcripts.write_textgrid("rec", "ana", 20.0)
    exported = read_reference(path)
    assert [(i.start, i.end) for i in exported.nonspeech()] == [(6.0, 9.0)]
    assert [(w.text, w.start, w.end) for w in exported.words] == [("não", 1.8, 2.1)]
    said = [Word("eu", 1.0, 1.4), Word("não", 1.9, 2.2), Word("sei", 2.3, 2.8), Word("obrigado", 7.0, 7.5)]
    score = score_recording(exported, Hypothesis("rec", said))
    assert (score.nonspeech.invented_words, score.nonspeech.intervals_with_text) == (1, 1)
    assert score.timing.ref_onsets.tolist() == pytest.approx([1.0, 1.8])  # the turn's first word, and the marked one
    assert score.timing.onset_errors.tolist() == pytest.approx([0.0, 0.1])


def test_the_vendored_wavesurfer_files_are_the_packages_own(tmp_path: Path) -> None:
    """Each vendored file past its licence comment has the sha256 the comment and the folder's README name."""
    readme = (VENDOR / "README.md").read_text(encoding="utf-8")
    for name in ("wavesurfer.min.js", "regions.min.js", "spectrogram.min.js"):
        text = (VENDOR / name).read_text(encoding="utf-8")
        head, _, body = text.partition(" */\n")
        (noted,) = re.findall(r"sha256 ([0-9a-f]{64})", head)
        assert "BSD 3-Clause License" in head and "wavesurfer.js 7.12.12" in head
        assert hashlib.sha256(body.removesuffix("\n").encode("utf-8")).hexdigest() == noted
        assert f"`{name}` | `dist/" in readme and noted in readme
