"""Who may do what in the app: logins with roles, concurrent add-user, the constant-cost password check,
password-try backoff, sessions that survive a reload, drafts, and who may serve beyond localhost."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from adjudication_fixture import built, exp  # noqa: F401 - fixtures

from toolkit.adjudication import users as users_module
from toolkit.adjudication.drafts import Draft, Drafts
from toolkit.adjudication.form import ASK_CHOOSE, ASK_KEEP_OR_CORRECT, ASK_TEXT, Submission, resolve
from toolkit.adjudication.sessions import FREE_TRIES_PER_NAME, SESSION_TTL_S, Sessions, client_address, wait_after
from toolkit.adjudication.users import ANNOTATOR, LEAD, TRANSCRIBER, Login, add_user, authenticate, read_users
from toolkit.cli import main
from toolkit.core.errors import InputError

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = "eu não sei se o João vem"


def test_logins_carry_a_role_and_the_file_holds_no_password(tmp_path):
    path = tmp_path / "users.json"
    add_user(path, "Lia", "segredo123", role=LEAD)
    add_user(path, "Tina", "segredo456", role=TRANSCRIBER)
    assert {n: a.role for n, a in read_users(path).items()} == {"Lia": LEAD, "Tina": TRANSCRIBER}
    assert "segredo" not in path.read_text() and path.stat().st_mode & 0o777 == 0o600
    users = read_users(path)
    assert authenticate(users, " Lia ", "segredo123") == Login("Lia", LEAD)
    assert authenticate(users, "Lia", "segredo456") is None
    with pytest.raises(InputError, match="unknown role 'boss'"):
        add_user(path, "Bia", "segredo789", role="boss")


def test_a_users_file_from_before_roles_reads_as_annotators(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": 1, "users": {"ana": users_module.hash_password("segredo123")}}))
    assert authenticate(read_users(path), "ana", "segredo123") == Login("ana", ANNOTATOR)


def test_an_unknown_name_costs_the_same_scrypt_work_as_a_known_one(tmp_path, monkeypatch):
    path = tmp_path / "users.json"
    add_user(path, "ana", "segredo123")
    users = read_users(path)
    calls = []
    real = hashlib.scrypt

    def counting(password, **kwargs):  # noqa: ANN001, ANN003 - a spy: the real scrypt still runs
        calls.append(kwargs["n"])
        return real(password, **kwargs)

    monkeypatch.setattr(users_module.hashlib, "scrypt", counting)
    assert authenticate(users, "ana", "wrong password") is None
    assert authenticate(users, "nobody", "wrong password") is None
    assert calls == [2**14, 2**14]


_ADDER = """
import sys
from toolkit.adjudication.users import add_user
add_user(sys.argv[1], sys.argv[2], "segredo123")
"""


def test_eight_concurrent_add_user_calls_keep_eight_logins(tmp_path):
    path = tmp_path / "users.json"
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    adders = [
        subprocess.Popen([sys.executable, "-c", _ADDER, str(path), f"ouvinte{k}"], env=env, stderr=subprocess.PIPE)
        for k in range(8)
    ]
    for adder in adders:
        assert adder.wait(timeout=120) == 0, adder.stderr.read()
    assert sorted(read_users(path)) == [f"ouvinte{k}" for k in range(8)]


def test_password_tries_back_off_per_name_and_per_address(tmp_path):
    sessions = Sessions(tmp_path / "s.sqlite")
    now = 1000.0
    for k in range(FREE_TRIES_PER_NAME):
        assert sessions.refusal("ana", "10.0.0.1", now + k) is None
        sessions.record_try("ana", "10.0.0.1", False, now + k)
    last = now + FREE_TRIES_PER_NAME - 1
    refused = sessions.refusal("ana", "10.0.0.2", last + 0.5)  # another address: the name still waits
    assert refused is not None and refused.wait_s == pytest.approx(wait_after(FREE_TRIES_PER_NAME, 3) - 0.5)
    assert sessions.refusal("beto", "10.0.0.2", last + 0.5) is None  # another name from elsewhere is free
    # ten wrong tries in a row take over two minutes (were 11 s)
    clock = last
    for _ in range(7):
        clock += sessions.refusal("ana", "10.0.0.1", clock).wait_s + 0.01  # type: ignore[union-attr]
        sessions.record_try("ana", "10.0.0.1", False, clock)
    assert clock - now > 120
    # one address trying many names is held back too
    for k in range(10):
        sessions.record_try(f"nome{k}", "10.9.9.9", False, 5000.0 + k)
    assert sessions.refusal("someone", "10.9.9.9", 5009.5) is not None
    # a success clears the name's count
    sessions.record_try("ana", "10.0.0.1", True, clock + 400)
    assert sessions.refusal("ana", "10.0.0.1", clock + 400.1) is None


def test_team_members_on_this_machine_do_not_share_one_address_count(tmp_path):
    """Tunnelled team members all connect from 127.0.0.1 (Streamlit gives no address): one person's typos
    must not hold back the others; behind a local reverse proxy the forwarded client counts."""
    assert client_address("10.0.0.7", "1.2.3.4") == "10.0.0.7"  # a remote peer's own address; the header is ignored
    assert client_address(None, None) is None and client_address(None, " ") is None
    assert client_address(None, "203.0.113.9, 10.0.0.2") == "forwarded 10.0.0.2"  # the hop the proxy saw
    sessions = Sessions(tmp_path / "s.sqlite")
    for k in range(20):  # many names mistyped from this machine
        sessions.record_try(f"nome{k}", None, False, 1000.0 + k)
    assert sessions.refusal("beto", None, 1020.0) is None
    assert sessions.refusal("nome3", None, 1020.0) is None  # three free tries per name: one was used
    for k in range(FREE_TRIES_PER_NAME):
        sessions.record_try("ana", None, False, 1030.0 + k)
    assert sessions.refusal("ana", None, 1032.5) is not None  # the name's own count still applies
    assert sessions.refusal("beto", None, 1032.5) is None
    for k in range(10):  # behind a local proxy, one client trying many names is held back
        sessions.record_try(f"outro{k}", "forwarded 10.9.9.9", False, 2000.0 + k)
    assert sessions.refusal("carla", "forwarded 10.9.9.9", 2009.5) is not None
    assert sessions.refusal("carla", "forwarded 10.9.9.8", 2009.5) is None


def test_a_session_survives_until_it_expires_or_is_closed(tmp_path):
    sessions = Sessions(tmp_path / "s.sqlite")
    token = sessions.open(Login("ana", ANNOTATOR), now=0.0)
    assert Sessions(tmp_path / "s.sqlite").login(token, now=10.0) == Login("ana", ANNOTATOR)  # a restart keeps it
    assert sessions.login(token, now=SESSION_TTL_S + 1) is None
    assert sessions.login("made-up", now=10.0) is None
    sessions.close(token)
    assert sessions.login(token, now=10.0) is None
    assert token not in (tmp_path / "s.sqlite").read_bytes().decode("latin-1")  # only its hash is stored


def test_drafts_are_kept_per_listener_and_stretch(tmp_path):
    drafts = Drafts(tmp_path / "s.sqlite")
    drafts.save("ana", "rec", 1.0, 4.0, Draft("correct", "eu sei", ""))
    drafts.save("ana", "rec", 1.0, 4.0, Draft("correct", "eu sei sim", "nota"))
    drafts.save("beto", "rec", 1.0, 4.0, Draft("", "outra coisa", ""))
    assert drafts.load("ana", "rec", 1.0004, 4.0) == Draft("correct", "eu sei sim", "nota")
    assert drafts.load("beto", "rec", 1.0, 4.0) == Draft("", "outra coisa", "")
    drafts.discard("ana", "rec", 1.0, 4.0)
    assert drafts.load("ana", "rec", 1.0, 4.0) is None
    with pytest.raises(InputError, match="unknown decision"):
        drafts.save("ana", "rec", 1.0, 4.0, Draft("delete", "", ""))


@pytest.mark.parametrize(
    "submission, expected",
    [
        (Submission("", REFERENCE), ("", "", ASK_CHOOSE)),  # nothing chosen, nothing edited: ask
        (Submission("", "eu sei se o João vem"), ("correct", "eu sei se o João vem", "")),  # an edit is a correction
        (Submission("keep", REFERENCE), ("keep", REFERENCE, "")),
        (Submission("keep", "eu sei"), ("", "", ASK_KEEP_OR_CORRECT)),  # an edit under Keep asks
        (Submission("keep", "eu sei", confirm="keep"), ("keep", REFERENCE, "")),
        (Submission("keep", "eu sei", confirm="correct"), ("correct", "eu sei", "")),
        (Submission("correct", f"  {REFERENCE} "), ("keep", REFERENCE, "")),  # an unchanged correction is a keep
        (Submission("correct", "  "), ("", "", ASK_TEXT)),
        (Submission("nonspeech", "whatever"), ("nonspeech", "", "")),
    ],
)
def test_the_decision_form_never_stores_what_the_listener_did_not_choose(submission, expected):
    resolution = resolve(submission, REFERENCE)
    assert (resolution.action, resolution.text, resolution.ask) == expected


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.20", "::"])
def test_serving_beyond_this_machine_needs_logins(exp, capsys, host):
    assert main(["app", str(exp), "--host", host]) == 2
    err = capsys.readouterr().err
    assert f"--host {host} serves the app beyond this machine" in err and "--insecure" in err


def test_add_user_takes_a_role(tmp_path, monkeypatch, capsys):
    import io

    users = tmp_path / "users.json"
    monkeypatch.setattr("sys.stdin", io.StringIO("segredo123\n"))
    assert main(["app", "add-user", "Lia", "--role", "lead", "--users", str(users), "--password-stdin"]) == 0
    assert "login for 'Lia' (lead) saved" in capsys.readouterr().out
    assert read_users(users)["Lia"].role == LEAD


def test_insecure_serves_beyond_this_machine_with_a_warning(exp, tmp_path):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    app = subprocess.Popen(
        [sys.executable, "-m", "toolkit", "app", str(exp), "--host", "0.0.0.0", "--insecure", "--port", str(port)],
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        warning = app.stderr.readline()  # printed before Streamlit starts
    finally:
        os.killpg(app.pid, signal.SIGTERM)
        app.wait(timeout=30)
    assert warning.startswith("ablate app: INSECURE: serving demo on 0.0.0.0 without logins")
