"""The blindness rule: who may see model output for which recording, and the closed passes it reads."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.blindness import (
    EXCUSED,
    FINISHED,
    IN_PROGRESS,
    NOT_STARTED,
    BlindPasses,
    may_see_model_output,
)
from toolkit.adjudication.stretches import PAUSE, SPEECH, Stretch
from toolkit.adjudication.users import ANNOTATOR, LEAD, TRANSCRIBER, Login
from toolkit.core.errors import InputError

STRETCHES = [Stretch(0.0, 4.0, SPEECH), Stretch(4.0, 7.0, PAUSE), Stretch(7.0, 10.0, SPEECH)]
LIA = Login("lia", LEAD)
ANA = Login("ana", ANNOTATOR)


def _stores(tmp_path: Path) -> tuple[BlindPasses, TranscriptStore]:
    store = tmp_path / "adjudication.sqlite"
    return BlindPasses(store), TranscriptStore(store, tmp_path)


def _transcribe(transcripts: TranscriptStore, who: str, recording: str, stretches: list[Stretch]) -> None:
    for s in stretches:
        text = "uma fala" if s.kind == SPEECH else ""
        transcripts.save(recording_id=recording, annotator=who, start=s.start, end=s.end, duration=10.0, text=text)


def test_an_annotator_sees_a_recording_only_after_finishing_its_blind_pass(tmp_path):
    passes, transcripts = _stores(tmp_path)
    assert passes.visible(ANA, ["demo01", "demo03"]) == set()
    _transcribe(transcripts, "ana", "demo01", STRETCHES[:2])
    with pytest.raises(InputError, match="7-10 s is not transcribed"):
        passes.finish("demo01", ANA, transcripts, STRETCHES)
    assert passes.visible(ANA, ["demo01"]) == set()
    _transcribe(transcripts, "ana", "demo01", STRETCHES[2:])
    done = passes.finish("demo01", ANA, transcripts, STRETCHES)
    assert (done.person, done.kind, done.by) == ("ana", FINISHED, "ana")
    assert passes.visible(ANA, ["demo01", "demo03"]) == {"demo01"}
    assert passes.visible(Login("beto", ANNOTATOR), ["demo01", "demo03"]) == set()  # ana's pass is hers


def test_a_lead_excuses_and_only_a_lead_and_a_closed_pass_stays_closed(tmp_path):
    passes, transcripts = _stores(tmp_path)
    with pytest.raises(InputError, match="only a lead"):
        passes.excuse("demo03", "ana", Login("beto", ANNOTATOR))
    _transcribe(transcripts, "ana", "demo03", STRETCHES)
    excused = passes.excuse("demo03", "ana", LIA)
    assert (excused.kind, excused.by) == (EXCUSED, "lia") and excused.created_at.endswith("+00:00")
    assert passes.visible(ANA, ["demo03"]) == {"demo03"}
    with pytest.raises(InputError, match="already closed"):
        passes.excuse("demo03", "ana", LIA)
    before = transcripts.segments("demo03", "ana")
    with pytest.raises(InputError, match="blind pass of 'demo03' is closed .excused by lia.*not saved"):
        _transcribe(transcripts, "ana", "demo03", STRETCHES[:1])  # the store itself refuses, not only the page
    assert transcripts.segments("demo03", "ana") == before
    _transcribe(transcripts, "beto", "demo03", STRETCHES)  # another person's pass is still open
    with pytest.raises(InputError, match="already closed"):
        passes.finish("demo03", ANA, transcripts, STRETCHES)
    with sqlite3.connect(passes.path) as connection:
        for statement in ("UPDATE blind_passes SET kind = 'finished'", "DELETE FROM blind_passes"):
            with pytest.raises(sqlite3.DatabaseError, match="stays closed"):
                connection.execute(statement)
    assert [c.kind for c in passes.closed()] == [EXCUSED]


def test_a_transcriber_never_and_a_lead_always_sees_model_output(tmp_path):
    passes, transcripts = _stores(tmp_path)
    tina = Login("tina", TRANSCRIBER)
    _transcribe(transcripts, "tina", "demo01", STRETCHES)
    passes.finish("demo01", tina, transcripts, STRETCHES)
    assert passes.visible(tina, ["demo01"]) == set()
    assert passes.visible(LIA, ["demo01", "demo03"]) == {"demo01", "demo03"}


def test_the_lead_sees_each_persons_stage(tmp_path):
    passes, transcripts = _stores(tmp_path)
    _transcribe(transcripts, "ana", "demo01", STRETCHES)
    passes.finish("demo01", ANA, transcripts, STRETCHES)
    _transcribe(transcripts, "beto", "demo01", STRETCHES[:1])
    passes.excuse("demo03", "beto", LIA)
    stages = {(s.person, s.recording_id): s for s in passes.stages(transcripts, ["ana", "beto"], ["demo01", "demo03"])}
    assert {k: s.stage for k, s in stages.items()} == {
        ("ana", "demo01"): FINISHED,
        ("beto", "demo01"): IN_PROGRESS,
        ("ana", "demo03"): NOT_STARTED,
        ("beto", "demo03"): EXCUSED,
    }
    assert stages[("ana", "demo01")].segments == 3 and stages[("beto", "demo03")].by == "lia"


PEOPLE = ["ana", "beto", "tina", "lia"]
ROLES = {"ana": ANNOTATOR, "beto": ANNOTATOR, "tina": TRANSCRIBER, "lia": LEAD}
RECORDINGS = ["demo01", "demo02", "demo03"]
CLOSE = st.tuples(st.sampled_from(["finish", "excuse"]), st.sampled_from(PEOPLE), st.sampled_from(RECORDINGS))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(CLOSE, max_size=12))
def test_model_output_shows_exactly_where_the_persons_own_pass_is_closed(tmp_path_factory, history):
    """Over random histories of finishing and excusing: visibility is the rule, never shrinks, and is per person."""
    passes, transcripts = _stores(tmp_path_factory.mktemp("passes"))
    closed: set[tuple[str, str]] = set()
    seen: dict[str, set[str]] = {p: set() for p in PEOPLE}
    for action, person, recording in history:
        who = Login(person, ROLES[person])
        try:
            if action == "finish":
                _transcribe(transcripts, person, recording, STRETCHES)
                passes.finish(recording, who, transcripts, STRETCHES)
            else:
                passes.excuse(recording, person, LIA)
            closed.add((person, recording))
        except InputError:
            assert (person, recording) in closed  # the only refusal here: a pass closed before
        for name in PEOPLE:
            login = Login(name, ROLES[name])
            now = passes.visible(login, RECORDINGS)
            expected = {r for r in RECORDINGS if (name, r) in closed}
            assert now == (set(RECORDINGS) if name == "lia" else set() if name == "tina" else expected)
            assert all(may_see_model_output(login, r, passes.closed()) == (r in now) for r in RECORDINGS)
            assert seen[name] <= now
            seen[name] = now
