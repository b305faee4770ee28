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

from toolkit.adjudication import users as users_module
from toolkit.adjudication.users import LEAD, Login, add_user, authenticate, look_alike, name_problems, read_users
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
        ("ana", "ana\u200b", r"'ana\u200b' holds invisible control or format characters (U+200B ZERO WIDTH SPACE)"),
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


def test_the_look_alike_rule():
    assert look_alike("ANA") == look_alike("ana") == look_alike("ａｎａ") == look_alike("a\u200bna")
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
