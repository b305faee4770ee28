"""The decision store: provenance, roles, superseding, conflicts, corrupt files, concurrent writers."""

from __future__ import annotations

import csv
import io
import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from adjudication_fixture import decide

from toolkit.adjudication.store import DecisionStore, ordinal
from toolkit.cli import main
from toolkit.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]


def test_decision_round_trips_with_provenance(tmp_path):
    store = DecisionStore(tmp_path / "adjudication.sqlite")
    stored = decide(store, "  Ana  ", "correct", "eu  não sei não", duration=10.0)
    [read] = DecisionStore(tmp_path / "adjudication.sqlite").decisions()
    assert read == stored
    assert (read.annotator, read.role, read.new_text, read.old_text) == ("Ana", "first", "eu não sei não", "eu não sei")
    assert read.reference_sha256 == "r" * 64 and read.created_at.endswith("+00:00")
    with sqlite3.connect(tmp_path / "adjudication.sqlite") as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_later_decision_supersedes_and_second_listener_is_separate(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    first = decide(store, "ana", "keep")
    again = decide(store, "ana", "correct", "eu sei")
    second = decide(store, "beto", "correct", "eu sei")
    assert (first.role, again.role, second.role) == ("first", "first", "second")
    assert again.supersedes == first.id and second.supersedes is None
    assert len(store.decisions()) == 3  # nothing overwritten
    [state] = store.span_states()
    assert state.first == again and state.second == second and not state.conflict
    assert state.effective == again
    rows = {row.decision.id: row for row in store.export()}
    assert rows[first.id].status == "superseded" and rows[first.id].superseded_by == again.id
    assert rows[second.id].status == "current"


def test_the_file_itself_refuses_to_change_or_delete_a_decision(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana")
    with sqlite3.connect(tmp_path / "s.sqlite") as connection:
        for statement in ("UPDATE decisions SET new_text = 'x'", "DELETE FROM decisions"):
            with pytest.raises(sqlite3.IntegrityError, match="never"):
                connection.execute(statement)
    assert len(store.decisions()) == 1


def test_disagreeing_listeners_conflict_until_settled(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana", "keep")
    decide(store, "beto", "unresolved")
    [state] = store.span_states()
    assert state.conflict and state.effective is None
    settled = decide(store, "carla", "unresolved", settle=True)
    [state] = store.span_states()
    assert not state.conflict and state.effective == settled and settled.role == "settlement"


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(annotator="   "), "needs an annotator"),
        (dict(start=9.0, end=12.0, duration=10.0), "outside recording 'rec'"),
        (dict(start=3.0, end=2.0), "is not a span"),
        (dict(action="correct", text="  "), "needs the corrected text"),
        (dict(action="delete"), "unknown decision"),
    ],
)
def test_bad_decisions_are_refused_and_nothing_is_stored(tmp_path, change, message):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana")
    args = dict(annotator="beto", action="keep", text="", start=1.0, end=2.0) | change
    with pytest.raises(InputError, match=message):
        decide(store, **args)
    assert len(store.decisions()) == 1


def test_corrupt_store_is_a_clear_error_and_left_untouched(tmp_path):
    path = tmp_path / "adjudication.sqlite"
    garbage = b"this is not sqlite at all\n" * 200
    path.write_bytes(garbage)
    with pytest.raises(InputError, match="not a readable decision store"):
        DecisionStore(path)
    assert path.read_bytes() == garbage


def test_export_json_and_csv(tmp_path, capsys):
    store = DecisionStore(tmp_path / "adjudication.sqlite")
    decide(store, "ana", "correct", "eu não sei não")
    decide(store, "ana", "nonspeech")
    assert main(["decisions", "export", str(tmp_path), "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["action"], r["status"]) for r in rows] == [("correct", "superseded"), ("nonspeech", "current")]
    assert main(["decisions", "export", str(tmp_path), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["annotator"] for r in table] == ["ana", "ana"] and table[0]["new_text"] == "eu não sei não"


def test_export_without_store_is_one_line_error(tmp_path, capsys):
    assert main(["decisions", "export", str(tmp_path)]) == 2
    assert "no decision store here yet" in capsys.readouterr().err


_WRITER = """
import sys
from toolkit.adjudication.store import DecisionStore, ordinal
store = DecisionStore(sys.argv[1])
name = sys.argv[2]
for i in range(int(sys.argv[3])):
    store.record(recording_id="rec", start=float(i), end=i + 0.5, action="correct", old_text="a",
                 new_text=f"{name} {i}", annotator=name, reference_sha256="r", manifest_sha256="m")
"""


def test_two_processes_writing_at_once_lose_nothing(tmp_path):
    path = tmp_path / "adjudication.sqlite"
    DecisionStore(path)
    count = 60
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", _WRITER, str(path), name, str(count)], env=env, stderr=subprocess.PIPE, text=True
        )
        for name in ("ana", "beto")
    ]
    for writer in writers:
        assert writer.wait(timeout=120) == 0, writer.stderr.read()
    decisions = DecisionStore(path).decisions()
    assert len(decisions) == 2 * count
    assert {(d.annotator, d.new_text) for d in decisions} == {
        (n, f"{n} {i}") for n in ("ana", "beto") for i in range(count)
    }
    # whoever came second on each span is that span's second listener
    assert sorted(d.role for d in decisions).count("second") == count


def test_a_third_listener_never_replaces_the_second_and_every_listener_counts(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana", "keep")
    beto = decide(store, "beto", "keep")
    carla = decide(store, "carla", "unresolved")
    assert (beto.role, carla.role, carla.supersedes) == ("second", "second", None)
    [state] = store.span_states()
    assert [d.annotator for d in state.listeners] == ["ana", "beto", "carla"]
    assert state.conflict  # carla disagrees with the first listener
    again = decide(store, "carla", "keep")
    assert again.supersedes == carla.id
    [state] = store.span_states()
    assert not state.conflict and state.effective.annotator == "ana"


def test_the_nth_listener_is_exported_as_the_nth(tmp_path, capsys):
    store = DecisionStore(tmp_path / "adjudication.sqlite")
    for who in ("ana", "beto", "carla", "davi", "ana"):  # ana's second decision is still the first listener's
        decide(store, who, "keep")
    decide(store, "lia", "keep", start=5.0, end=6.0)  # another stretch: lia is its first listener
    assert [row.to_json()["role"] for row in store.export()] == ["first", "second", "third", "fourth", "first", "first"]
    assert [d.role for d in store.decisions()][:4] == ["first", "second", "second", "second"]  # as the file keeps it
    assert main(["decisions", "export", str(tmp_path), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["role"] for r in rows] == ["first", "second", "third", "fourth", "first", "first"]
    assert [ordinal(k) for k in (1, 10, 11, 12, 13, 21, 22, 23, 101, 111)] == [
        "first",
        "tenth",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "23rd",
        "101st",
        "111th",
    ]


def test_a_correction_that_changes_nothing_is_a_keep_and_agrees_with_one(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana", "keep")
    same = decide(store, "beto", "correct", "  eu   não sei ")
    assert (same.action, same.new_text) == ("keep", "eu não sei")
    [state] = store.span_states()
    assert not state.conflict


def test_export_never_shows_a_decision_current_and_superseded(tmp_path):
    store = DecisionStore(tmp_path / "s.sqlite")
    decide(store, "ana", "keep")
    decide(store, "beto", "unresolved")
    settled = decide(store, "lia", "unresolved", settle=True)
    decide(store, "ana", "correct", "eu sei")  # ana changes her mind after the settlement
    rows = store.export()
    assert not [r for r in rows if r.status == "current" and r.superseded_by is not None]
    assert [(r.decision.annotator, r.status, r.superseded_by) for r in rows] == [
        ("ana", "superseded", 4),
        ("beto", "current", None),
        ("lia", "current", None),
        ("ana", "current", None),
    ]
    assert rows[1].settled_by is None  # ana's new decision reopened the span: nothing settled now
    [state] = store.span_states()
    assert state.conflict and state.settlement == settled


def test_csv_export_neutralises_formula_cells(tmp_path, capsys):
    store = DecisionStore(tmp_path / "adjudication.sqlite")
    for k, text in enumerate(('=HYPERLINK("http://x")', "+1 mais", "-menos", "@SUM(A1)", "normal")):
        decide(store, "ana", "correct", text, start=float(k), end=k + 0.5, note=text)
    assert main(["decisions", "export", str(tmp_path), "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [r["new_text"] for r in table] == ['\'=HYPERLINK("http://x")', "'+1 mais", "'-menos", "'@SUM(A1)", "normal"]
    assert [r["note"] for r in table][:2] == ['\'=HYPERLINK("http://x")', "'+1 mais"]
    assert main(["decisions", "export", str(tmp_path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["new_text"] == '=HYPERLINK("http://x")'  # JSON keeps the text
