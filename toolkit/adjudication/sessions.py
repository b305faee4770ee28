"""App sessions and password-try backoff, kept in the experiment's store file.

A session is a random token the browser holds in an HttpOnly cookie; the store keeps only its
sha256, the login's name and role, and when it expires, so a page reload or a server restart
does not log anyone out, and a stolen store file holds no usable token.

Password tries are limited per typed name and per client address: after a few failures each
further try must wait twice as long as the one before (1 s, 2 s, 4 s, ... up to 5 min). A try
made while waiting is refused without checking the password and is not counted. A success
clears the name's and the address's count. The counts live in the store, so restarting the app
does not reset them. A connection from this machine has no address of its own (a team reaching
the app through SSH tunnels all comes from 127.0.0.1): a local reverse proxy's X-Forwarded-For
names the client, and without one only the name's count applies (see :func:`client_address`).
"""

from __future__ import annotations

import hashlib
import secrets
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

from toolkit.adjudication.rows import Table, connect, read, write
from toolkit.adjudication.users import Login, check_role

SESSION_TTL_S = 24 * 3600.0
FREE_TRIES_PER_NAME = 3
FREE_TRIES_PER_ADDRESS = 10  # several people behind one address may each mistype
FIRST_WAIT_S = 1.0
MAX_WAIT_S = 300.0
FORGET_AFTER_S = 3600.0  # failures older than this no longer count

_SCHEMA = """
CREATE TABLE IF NOT EXISTS app_sessions (
    token_sha256 TEXT PRIMARY KEY,
    annotator TEXT NOT NULL,
    role TEXT NOT NULL,
    created_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS login_tries (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('name', 'address')),
    who TEXT NOT NULL,
    ok INTEGER NOT NULL,
    at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS login_tries_who ON login_tries (kind, who, at);
"""


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def wait_after(failures: int, free: int) -> float:
    """Seconds a try must wait after ``failures`` failures in a row, ``free`` of them without a wait."""
    if failures < free:
        return 0.0
    return min(MAX_WAIT_S, FIRST_WAIT_S * 2.0 ** (failures - free))


def client_address(peer: str | None, forwarded_for: str | None) -> str | None:
    """The address whose tries count together: the connection's ``peer``; for a connection from this machine
    (``peer`` None, as Streamlit gives it) the last hop of a local proxy's ``forwarded_for`` header, or None
    (tunnelled team members would share one count: one person's typos would lock out the others)."""
    if peer:
        return peer
    hops = [hop.strip() for hop in (forwarded_for or "").split(",") if hop.strip()]
    return f"forwarded {hops[-1]}" if hops else None


@dataclass(frozen=True)
class Session:
    """A row of ``app_sessions``: a token's sha256 (never the token), whose login it is, and its lifetime."""

    token_sha256: str
    annotator: str
    role: str
    created_at: float
    expires_at: float

    @property
    def login(self) -> Login:
        return Login(self.annotator, self.role)


@dataclass(frozen=True)
class LoginTry:
    """A row of ``login_tries``: a checked password try, counted per typed name and per client address."""

    id: int
    kind: str  # "name" or "address"
    who: str
    ok: bool
    at: float


SESSIONS = Table("app_sessions", Session)
LOGIN_TRIES = Table("login_tries", LoginTry)


@dataclass(frozen=True)
class Refusal:
    """A try refused before the password is checked: how long to wait."""

    wait_s: float


class Sessions:
    """Sessions and login tries of one app, in the experiment's store file."""

    def __init__(self, store_path: str | Path) -> None:
        self.path = Path(store_path)
        with connect(self.path) as connection:
            connection.executescript(_SCHEMA)

    # --- sessions ---------------------------------------------------------------------------

    def open(self, login: Login, now: float | None = None) -> str:
        """A new session for ``login``; returns the token (shown to the browser once, never stored)."""
        check_role(login.role)
        now = time.time() if now is None else now
        token = secrets.token_urlsafe(32)
        with connect(self.path) as connection:
            write(
                connection,
                SESSIONS,
                token_sha256=_digest(token),
                annotator=login.name,
                role=login.role,
                created_at=now,
                expires_at=now + SESSION_TTL_S,
            )
            connection.execute("DELETE FROM app_sessions WHERE expires_at < ?", (now,))
        return token

    def login(self, token: str | None, now: float | None = None) -> Login | None:
        """Who holds ``token``, if it names a session that has not expired."""
        if not isinstance(token, str) or not token:
            return None
        now = time.time() if now is None else now
        with connect(self.path) as connection:
            rows = read(connection, self.path, SESSIONS, "token_sha256 = ? AND expires_at >= ?", (_digest(token), now))
        return rows[0].login if rows else None

    def close(self, token: str | None) -> None:
        """End the session (logout); an unknown token is ignored."""
        if isinstance(token, str) and token:
            with connect(self.path) as connection:
                connection.execute("DELETE FROM app_sessions WHERE token_sha256 = ?", (_digest(token),))

    # --- password tries ---------------------------------------------------------------------

    def refusal(self, name: str, address: str | None, now: float | None = None) -> Refusal | None:
        """Whether a try for ``name`` from ``address`` (None: no address of its own) must wait (None: go
        ahead and check the password)."""
        now = time.time() if now is None else now
        waits = []
        with connect(self.path) as connection:
            for kind, who, free in _counted(name, address):
                failures, last = self._failures(connection, kind, who, now)
                if failures:
                    waits.append(last + wait_after(failures, free) - now)
        longest = max(waits, default=0.0)
        return Refusal(round(longest, 1)) if longest > 0 else None

    def record_try(self, name: str, address: str | None, ok: bool, now: float | None = None) -> None:
        """Remember a checked try (a success clears the name's and the address's failures)."""
        now = time.time() if now is None else now
        with connect(self.path) as connection:
            for kind, who, _ in _counted(name, address):
                write(connection, LOGIN_TRIES, kind=kind, who=who, ok=ok, at=now)
            connection.execute("DELETE FROM login_tries WHERE at < ?", (now - FORGET_AFTER_S,))

    def _failures(self, connection: sqlite3.Connection, kind: str, who: str, now: float) -> tuple[int, float]:
        """Failures since the last success (and within the forget window), and the time of the last one."""
        where = "kind = ? AND who = ? AND at >= ?"
        tries = read(connection, self.path, LOGIN_TRIES, where, (kind, who, now - FORGET_AFTER_S), order="id DESC")
        failures, last = 0, 0.0
        for attempt in tries:
            if attempt.ok:
                break
            failures += 1
            last = max(last, attempt.at)
        return failures, last


def _counted(name: str, address: str | None) -> list[tuple[str, str, int]]:
    """The counts a try goes into, as (kind, who, free tries): the name's, and the address's when it has one."""
    counts = [("name", name, FREE_TRIES_PER_NAME)]
    return counts + [("address", address, FREE_TRIES_PER_ADDRESS)] if address is not None else counts
