"""Login names read as what they are: NFC, no invisible characters, no spreadsheet formula, no twin
of another login; a users file written before these rules still loads and is warned about."""

from __future__ import annotations

import io
import json
import os
import signal
import socket
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from adjudication_fixture import build_experiment
from hypothesis import given
from hypothesis import strategies as st

from toolkit.adjudication import users as users_module
from toolkit.adjudication.users import (
    LEAD,
    Login,
    add_user,
    authenticate,
    look_alike,
    name_problem,
    name_problems,
    read_users,
)
from toolkit.cli import main

NFC_JOSE = unicodedata.normalize("NFC", "José")
NFD_JOSE = unicodedata.normalize("NFD", "José")


def _add(users, name: str, monkeypatch) -> int:  # noqa: ANN001
    monkeypatch.setattr("sys.stdin", io.StringIO("segredo123\n"))
    return main(["app", "--users", str(users), "--password-stdin", "--", "add-user", name])  # a NAME may start with -


@pytest.mark.parametrize(
    ("existing", "name", "problem"),
    [
        (NFC_JOSE, NFD_JOSE, f"'{NFC_JOSE}' already has a login"),  # stored in NFC: the same name
        (NFD_JOSE, NFC_JOSE, f"looks the same as the login '{NFD_JOSE}'"),  # an older file's decomposed name
        ("ana", "ANA", "looks the same as the login 'ana'"),
        ("ana", "ａｎａ", "looks the same as the login 'ana'"),  # full-width letters: NFKC
        ("ana", "ana\u200b", r"'ana\u200b' holds invisible or blank characters (U+200B ZERO WIDTH SPACE)"),
        (None, "a\u034fna", r"'a\u034fna' holds invisible or blank characters (U+034F COMBINING GRAPHEME JOINER)"),
        (None, "ana\u3164", "U+3164 HANGUL FILLER"),
        (None, "\uffa0ana", "U+FFA0 HALFWIDTH HANGUL FILLER"),
        (None, "ana\ufe0f", "U+FE0F VARIATION SELECTOR-16"),
        (None, "ana\U000e0061", "U+E0061 TAG LATIN SMALL LETTER A"),
        (None, "ana\u00ad", "U+00AD SOFT HYPHEN"),
        (None, "ana\u2800lima", "U+2800 BRAILLE PATTERN BLANK"),
        (None, "ana\u00a0lima", "U+00A0 NO-BREAK SPACE"),  # whitespace other than a plain space
        (None, "ana\u3000lima", "U+3000 IDEOGRAPHIC SPACE"),
        (None, "\u0410na", "mixes letters of several scripts (CYRILLIC, LATIN)"),  # Cyrillic А, Latin na
        (None, "\u03bfscar", "mixes letters of several scripts (GREEK, LATIN)"),  # Greek ο
        (None, "x" * 65, f"login name '{'x' * 20}...' has 65 characters; at most 64"),
        (None, "x" * 5000, "has 5000 characters; at most 64"),
        (None, "x" + "\u0301" * 9, "stacks more than 2 combining marks on one letter"),
        (None, "q\u0301\u0302\u0303", "stacks more than 2 combining marks"),  # q has no precomposed accents
        (None, "\uff1dSUM(1)", "starts with '=', which a spreadsheet runs as a formula"),  # full-width =
        (None, "\ufe62ana", "starts with '+'"),  # small plus sign
        (None, "ana\u200bbeto", "U+200B ZERO WIDTH SPACE"),
        (None, "\u202eatep", "U+202E RIGHT-TO-LEFT OVERRIDE"),
        (None, "ana\tlima", "U+0009 control character"),
        (None, "=HYPERLINK(1)", "starts with '=', which a spreadsheet runs as a formula"),
        (None, "+55 11", "starts with '+'"),
        (None, "-ana", "starts with '-'"),
        (None, "@ana", "starts with '@'"),
    ],
)
def test_add_user_refuses_a_name_that_does_not_read_as_itself(tmp_path, monkeypatch, capsys, existing, name, problem):
    users = tmp_path / "users.json"
    if existing is not None:  # written as it is, as an older add-user (or a hand) left it
        users.write_text(json.dumps({"format": 2, "users": {existing: {"role": "annotator", "password": "x"}}}))
    before = users.read_bytes() if users.exists() else None
    assert _add(users, name, monkeypatch) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1  # one line naming the problem
    assert (users.read_bytes() if users.exists() else None) == before  # nothing written


@pytest.mark.parametrize(
    "name",
    ["x" * 64, "a\u0301\u0302", "Ana-Lia d'Ávila", "Иван Петров", "Νίκος", "山田 はなこ", "ana_lima.2", "Nguyễn Văn"],
)
def test_names_within_the_rules_are_accepted(tmp_path, monkeypatch, name):
    users = tmp_path / "users.json"
    assert _add(users, name, monkeypatch) == 0
    assert list(read_users(users)) == [unicodedata.normalize("NFC", name)]


def test_names_are_stored_in_nfc_and_log_in_from_either_form(tmp_path, monkeypatch):
    users = tmp_path / "users.json"
    assert _add(users, f"  {NFD_JOSE}   Lima ", monkeypatch) == 0
    assert list(read_users(users)) == [f"{NFC_JOSE} Lima"]
    for typed in (f"{NFD_JOSE} Lima", f"{NFC_JOSE} Lima"):
        assert authenticate(read_users(users), typed, "segredo123") == Login(f"{NFC_JOSE} Lima", "annotator")
    assert _add(users, "Ana-Lia d'Ávila", monkeypatch) == 0  # a dash or an apostrophe inside is a name
    add_user(users, f"{NFC_JOSE} Lima", "segredo456", role=LEAD, replace=True)
    assert read_users(users)[f"{NFC_JOSE} Lima"].role == LEAD


def test_a_users_file_with_bad_names_still_loads_and_lists_each_problem(tmp_path):
    bad = {NFD_JOSE: LEAD, "ana\u200b": "annotator", "=1+1": "annotator", "Beto": "annotator", "beto": "annotator"}
    path = tmp_path / "old.json"
    accounts = {n: {"role": r, "password": users_module.hash_password("segredo123")} for n, r in bad.items()}
    path.write_text(json.dumps({"format": 2, "users": accounts}))
    users = read_users(path)
    assert set(users) == set(bad)  # nobody is locked out
    assert authenticate(users, NFC_JOSE, "segredo123") == Login(NFD_JOSE, LEAD)  # under the stored spelling
    assert authenticate(users, "ana\u200b", "segredo123") == Login("ana\u200b", "annotator")
    problems = name_problems(users)
    assert len(problems) == 4 and all("\u200b" not in p for p in problems)  # invisible characters shown
    assert any("=1+1" in p and "formula" in p for p in problems)
    assert any("'beto' looks the same as the login 'Beto'" in p for p in problems)
    assert any("not in Unicode NFC form" in p for p in problems)
    assert any(r"'ana\u200b' holds invisible" in p for p in problems)


def test_two_names_that_print_alike_are_told_apart_by_their_code_points(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(
        json.dumps({"format": 2, "users": {n: {"role": "lead", "password": "x"} for n in (NFD_JOSE, NFC_JOSE)}})
    )
    twins = [p for p in name_problems(read_users(path)) if "looks the same" in p]
    assert len(twins) == 1
    assert "U+004A U+006F U+0073 U+00E9" in twins[0] and "U+004A U+006F U+0073 U+0065 U+0301" in twins[0]
    assert not any(
        "U+" in p
        for p in name_problems({"ana": users_module.Account("lead", "x"), "ANA": users_module.Account("lead", "x")})
    )


def test_the_look_alike_rule():
    assert look_alike("ANA") == look_alike("ana") == look_alike("ａｎａ") == look_alike("a\u200bna")
    assert look_alike("ana") == look_alike("a\u034fna") == look_alike("ana\ufe0f") == look_alike("ana\u3164")
    assert look_alike("José") == look_alike("Jose\u034f\u0301")  # a joiner removed before composing
    assert look_alike(NFD_JOSE) == look_alike(NFC_JOSE) == look_alike("JOSÉ")
    assert look_alike("Straße") == look_alike("STRASSE")  # case folding, not lower()
    assert look_alike("Jose") != look_alike("José") and look_alike("Ana") != look_alike("Ana Lima")


def test_the_app_starts_with_an_old_users_file_and_warns_about_its_names(tmp_path):
    exp = build_experiment(tmp_path, score=False)
    users = tmp_path / "users.json"
    users.write_text(json.dumps({"format": 2, "users": {"=1+1": {"role": "lead", "password": "x"}}}))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "app", str(exp), "--users", str(users), "--port", str(port)],
        env={"PYTHONPATH": str(Path(__file__).resolve().parents[1]), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        warning = app.stderr.readline()  # printed before Streamlit starts; the app still starts
        started = app.stdout.readline()
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        app.wait(timeout=30)
    assert warning.startswith(f"ablate app: warning: {users}: login name '=1+1' starts with '='")
    assert started.startswith("ablate app: demo at http://127.0.0.1:")


@given(
    st.text(alphabet="abcdefghij ", min_size=1, max_size=12).filter(str.strip),
    st.one_of(*(st.integers(low, high) for low, high in users_module.DEFAULT_IGNORABLE), st.just(0x2800)),
    st.integers(0, 12),
)
def test_an_invisible_character_anywhere_is_refused_and_ignored_by_the_look_alike_rule(name, code, at):
    hidden = name[:at] + chr(code) + name[at:]
    assert name_problem(hidden) is not None and f"U+{code:04X}" in name_problem(hidden)
    assert look_alike(hidden) == look_alike(name)
