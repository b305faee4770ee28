"""The team a lead runs: logins disabled (never deleted) with a logged history, assignments kept
append-only, and each person's progress and agreement read from the store."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolkit.adjudication.blind import TranscriptStore
from toolkit.adjudication.store import DecisionStore
from toolkit.adjudication.team import Assignments, assigned_first, progress
from toolkit.adjudication.users import (
    ADDED,
    DISABLED,
    ENABLED,
    LEAD,
    add_user,
    authenticate,
    changes,
    read_users,
    set_disabled,
)
from toolkit.core.errors import InputError

PASSWORD = "segredo123"


def test_a_disabled_login_cannot_log_in_stays_in_the_file_and_every_change_is_logged(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    add_user(path, "Lia", PASSWORD, role=LEAD, by="cli")
    add_user(path, "Ana", PASSWORD, by="Lia")
    set_disabled(path, "Ana", True, by="Lia")
    users = read_users(path)
    assert users["Ana"].disabled and authenticate(users, "Ana", PASSWORD) is None
    set_disabled(path, "Ana", False, by="Lia")
    assert authenticate(read_users(path), "Ana", PASSWORD) is not None
    assert [(c.what, c.name, c.by) for c in changes(path)] == [
        (ADDED, "Lia", "cli"),
        (ADDED, "Ana", "Lia"),
        (DISABLED, "Ana", "Lia"),
        (ENABLED, "Ana", "Lia"),
    ]


def test_the_last_enabled_lead_cannot_be_disabled(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    add_user(path, "Lia", PASSWORD, role=LEAD)
    with pytest.raises(InputError, match="last enabled lead"):
        set_disabled(path, "Lia", True, by="Lia")
    with pytest.raises(InputError, match="no login named"):
        set_disabled(path, "Zé", True, by="Lia")


def test_a_users_file_written_before_the_log_still_loads(tmp_path: Path) -> None:
    path = tmp_path / "users.json"
    add_user(path, "Ana", PASSWORD)
    data = json.loads(path.read_text(encoding="utf-8"))
    old = {"format": 2, "users": data["users"]}
    path.write_text(json.dumps(old), encoding="utf-8")
    assert changes(path) == [] and not read_users(path)["Ana"].disabled
    add_user(path, "Beto", PASSWORD, by="Lia")
    assert [c.name for c in changes(path)] == ["Beto"] and set(read_users(path)) == {"Ana", "Beto"}


def test_assignments_are_append_only_and_the_latest_row_holds(tmp_path: Path) -> None:
    store = Assignments(tmp_path / "adjudication.sqlite")
    store.record("Lia", "Ana", "rec1")
    store.record("Lia", "Ana", "rec2", 3.0, 5.0)
    store.record("Lia", "Ana", "rec1", assigned=False)
    assert [(a.recording_id, a.start) for a in store.current("Ana")] == [("rec2", 3.0)]
    assert len(store.history()) == 3
    with sqlite3.connect(tmp_path / "adjudication.sqlite") as connection, pytest.raises(sqlite3.DatabaseError):
        connection.execute("DELETE FROM team_assignments")
    with pytest.raises(InputError, match="start < end"):
        store.record("Lia", "Ana", "rec1", 5.0, 3.0)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.sampled_from(["r1", "r2"]), st.booleans()), max_size=8),
    items=st.lists(st.tuples(st.sampled_from(["r1", "r2", "r3"]), st.floats(0, 10)), max_size=10),
)
def test_assigned_items_come_first_and_none_is_lost(tmp_path_factory, rows, items) -> None:  # noqa: ANN001
    store = Assignments(tmp_path_factory.mktemp("a") / "adjudication.sqlite")
    for recording, assigned in rows:
        store.record("Lia", "Ana", recording, assigned=assigned)
    held = {a.recording_id for a in store.current("Ana")}
    assert held == {r for r in {r for r, _ in rows} if [a for rr, a in rows if rr == r][-1]}
    spans = [(r, s, s + 1.0) for r, s in items]
    order = assigned_first(spans, store.current("Ana"))
    assert sorted(order) == list(range(len(spans)))
    flags = [spans[k][0] in held for k in order]
    assert flags == sorted(flags, reverse=True)


def test_progress_counts_decisions_agreement_and_blind_coverage(tmp_path: Path) -> None:
    path = tmp_path / "adjudication.sqlite"
    decisions = DecisionStore(path)
    common = {"reference_sha256": "a" * 64, "manifest_sha256": "b" * 64, "old_text": "x", "duration": 20.0}
    for who, start, action, text in (("Ana", 1, "keep", ""), ("Beto", 1, "keep", ""), ("Ana", 3, "keep", "")):
        decisions.record(
            recording_id="r", start=start, end=start + 1, action=action, annotator=who, new_text=text, **common
        )
    decisions.record(recording_id="r", start=3, end=4, action="correct", new_text="y", annotator="Beto", **common)
    transcripts = TranscriptStore(path, tmp_path)
    transcripts.save(
        recording_id="r", annotator="Ana", start=0.0, end=5.0, text="olá", speaker="", speech="", duration=20.0
    )
    found = {p.name: p for p in progress(["Ana", "Beto", "Tina"], decisions.span_states(), transcripts, {"r": 20.0})}
    assert (found["Ana"].decided, found["Ana"].shared, found["Ana"].agreed) == (2, 2, 1)
    assert found["Ana"].agreement == 0.5 and found["Ana"].blind_share == {"r": 0.25}
    assert found["Beto"].blind_share == {} and found["Tina"].decided == 0 and found["Tina"].agreement is None
