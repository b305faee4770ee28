"""Logins for the app: names with a role and a salted scrypt password hash, in one JSON file.

The file holds no password, only ``scrypt$n$r$p$salt$hash`` per name (hex salt and hash) and
the name's role, so it can be shared with whoever runs the app. With a users file the app
takes each decision's annotator name and role from the login, so provenance cannot be typed by
someone else. Roles:

- ``lead``: everything an annotator does, plus settling conflicts (never one they are part
  of) and applying decisions into a new reference version;
- ``annotator``: blind transcription, the review queue, span review, results;
- ``transcriber``: blind transcription only (no page that shows model output).

A check of an unknown name costs the same scrypt work as a known one, so timing does not tell
which names exist. Concurrent ``add-user`` calls on one file take a lock around the
read-modify-write, so none is lost.

Logins are never deleted: a lead *disables* one (``set_disabled``), after which it neither logs in
nor keeps a session, and may enable it again. Every change (added, password or role replaced,
disabled, enabled) is appended to the file's ``log`` with who made it and when (``changes``); a
file written before the log (formats 1 and 2) still loads, with an empty log.

A name is stored in Unicode NFC with runs of whitespace as one space, and must read as what it
is (``name_problem``): at most ``MAX_NAME_LENGTH`` characters; no invisible or blank character
(controls and format characters, categories Cc and Cf; every Unicode Default_Ignorable_Code_Point,
such as the combining grapheme joiner, variation selectors and the Hangul fillers; the braille
blank; whitespace other than a plain space); no more than ``MAX_MARKS_IN_A_ROW`` combining marks in
a row; letters of one script (Latin, Cyrillic, Greek...; digits, spaces and punctuation belong to
none); no leading ``=``, ``+``, ``-`` or ``@``, even after NFKC (a formula in a spreadsheet opening an
exported CSV); and not confusable with another login: two names are confusable when they are equal
after NFKC, case folding and removing invisible characters (``José`` typed decomposed, ``ANA``,
``ａｎａ`` in full width and ``ana`` are one name). A users file written before these rules still
loads (nobody is locked out); ``name_problems`` lists its names that break them, for the app to
warn about.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import secrets
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.text import read_text
from toolkit.formats.ids import code_points

FORMAT_VERSION = 3  # version 1 had no roles (its logins read as annotators); version 2 no log nor disabling
LEAD, ANNOTATOR, TRANSCRIBER = "lead", "annotator", "transcriber"
ROLES = (LEAD, ANNOTATOR, TRANSCRIBER)
_N, _R, _P = 2**14, 8, 1
MIN_PASSWORD_LENGTH = 8
# A cell starting with one of these is a formula to a spreadsheet opening a CSV export.
FORMULA_STARTS = ("=", "+", "-", "@")
MAX_NAME_LENGTH = 64  # characters of the stored name: a login is a name, not a paragraph
MAX_MARKS_IN_A_ROW = 2  # combining marks on one letter: more stack into an unreadable smear
_INVISIBLE = ("Cc", "Cf")  # control and format characters: zero-width, bidirectional overrides...
# Default_Ignorable_Code_Point, from Unicode 14.0 DerivedCoreProperties.txt, the version of Python
# 3.11's unicodedata (https://www.unicode.org/Public/14.0.0/ucd/DerivedCoreProperties.txt; the stdlib
# has no such property): characters a renderer shows as nothing, whatever their category.
DEFAULT_IGNORABLE = (
    (0x00AD, 0x00AD),  # soft hyphen
    (0x034F, 0x034F),  # combining grapheme joiner
    (0x061C, 0x061C),  # Arabic letter mark
    (0x115F, 0x1160),  # Hangul choseong and jungseong fillers
    (0x17B4, 0x17B5),  # Khmer inherent vowels
    (0x180B, 0x180F),  # Mongolian free variation selectors and vowel separator
    (0x200B, 0x200F),  # zero-width space, joiners, directional marks
    (0x202A, 0x202E),  # bidirectional embeddings and overrides
    (0x2060, 0x206F),  # word joiner, invisible operators, bidirectional isolates, deprecated formats
    (0x3164, 0x3164),  # Hangul filler
    (0xFE00, 0xFE0F),  # variation selectors
    (0xFEFF, 0xFEFF),  # zero-width no-break space (byte-order mark)
    (0xFFA0, 0xFFA0),  # halfwidth Hangul filler
    (0xFFF0, 0xFFF8),  # unassigned, reserved as ignorable
    (0x1BCA0, 0x1BCA3),  # shorthand format controls
    (0x1D173, 0x1D17A),  # musical symbol formats
    (0xE0000, 0xE0FFF),  # tags and variation selectors supplement
)
_BLANK = {0x2800}  # braille pattern blank: a visible cell that prints as a space
# Scripts that one name writes together (Japanese mixes kanji, hiragana and katakana).
_ONE_SCRIPT = {"HIRAGANA": "CJK", "KATAKANA": "CJK", "KATAKANA-HIRAGANA": "CJK"}
# Checked when a name has no login, so an unknown name costs the same scrypt time as a known one.
_UNKNOWN = f"scrypt${_N}${_R}${_P}${'00' * 16}${'00' * 32}"


@dataclass(frozen=True)
class Login:
    """Who is working: a name and what that name may do."""

    name: str
    role: str

    @property
    def is_lead(self) -> bool:
        return self.role == LEAD


@dataclass(frozen=True)
class Account:
    """One line of the users file: the role and the password hash."""

    role: str
    password: str
    disabled: bool = False


@dataclass(frozen=True)
class Change:
    """One entry of the users file's log: what happened to which login, by whom, when (UTC, ISO 8601)."""

    at: str
    by: str
    what: str  # one of CHANGES
    name: str
    role: str


ADDED, REPLACED, DISABLED, ENABLED = "added", "replaced", "disabled", "enabled"
CHANGES = (ADDED, REPLACED, DISABLED, ENABLED)


def check_role(role: str, where: str | Path | None = None) -> str:
    if role not in ROLES:
        raise InputError(where, f"unknown role '{role}' (known: {', '.join(ROLES)})")
    return role


def login_name(typed: str) -> str:
    """A typed name as logins store and compare it: NFC, runs of whitespace as one space."""
    return " ".join(unicodedata.normalize("NFC", typed or "").split())


def invisible(c: str) -> bool:
    """Whether character ``c`` shows as nothing or as a blank: a control or format character, a
    Default_Ignorable_Code_Point, the braille blank, or whitespace other than a plain space."""
    code = ord(c)
    return (
        unicodedata.category(c) in _INVISIBLE
        or any(low <= code <= high for low, high in DEFAULT_IGNORABLE)
        or code in _BLANK
        or (c.isspace() and c != " ")
    )


def look_alike(name: str) -> str:
    """What confusable names share: NFKC, case folding and NFKC again (Unicode's NFKC_Casefold
    recipe), without invisible characters (removed before, since a joiner blocks composition, and
    after, since NFKC makes the Hangul filler U+3164 another filler), whitespace runs as one space."""
    visible = "".join(c for c in name if c.isspace() or not invisible(c))
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())
    return " ".join("".join(c for c in folded if c.isspace() or not invisible(c)).split())


def shown(name: str) -> str:
    """``name`` with its invisible characters written as ``\\uXXXX``, so a message shows them."""
    return "".join(f"\\u{ord(c):04x}" if invisible(c) else c for c in name)


def scripts(name: str) -> list[str]:
    """The scripts of the letters of ``name`` after NFKC (``LATIN``, ``CYRILLIC``...: the first word of each
    letter's Unicode name), sorted; digits, spaces, marks and punctuation have none."""
    found = set()
    for c in unicodedata.normalize("NFKC", name):
        if unicodedata.category(c).startswith("L"):
            script = unicodedata.name(c, "UNNAMED").split()[0]
            if script != "MODIFIER":  # modifier letters (an apostrophe-like ʼ) belong to no script
                found.add(_ONE_SCRIPT.get(script, script))
    return sorted(found)


def name_problem(name: str, others: Iterable[str] = ()) -> str | None:
    """Why ``name`` (as stored) cannot be a login beside ``others``, in one clause; None if it can."""
    if len(name) > MAX_NAME_LENGTH:
        return f"login name '{shown(name[:20])}...' has {len(name)} characters; at most {MAX_NAME_LENGTH}"
    hidden = sorted({c for c in name if invisible(c)})
    if hidden:
        found = ", ".join(f"U+{ord(c):04X} {unicodedata.name(c, 'control character')}" for c in hidden)
        return f"login name '{shown(name)}' holds invisible or blank characters ({found})"
    run = 0
    for c in name:
        run = run + 1 if unicodedata.category(c).startswith("M") else 0
        if run > MAX_MARKS_IN_A_ROW:
            return (
                f"login name '{name}' stacks more than {MAX_MARKS_IN_A_ROW} combining marks on one letter "
                f"({code_points(name)})"
            )
    if unicodedata.normalize("NFKC", name).startswith(FORMULA_STARTS):
        first = unicodedata.normalize("NFKC", name)[0]
        return f"login name '{name}' starts with '{first}', which a spreadsheet runs as a formula in a CSV export"
    if len(mixed := scripts(name)) > 1:
        return f"login name '{name}' mixes letters of several scripts ({', '.join(mixed)}), which can look alike"
    if unicodedata.normalize("NFC", name) != name:
        return f"login name '{name}' is not in Unicode NFC form (it looks like its NFC form but differs)"
    twin = next((o for o in others if o != name and look_alike(o) == look_alike(name)), None)
    if twin is not None:
        return (
            f"login name '{shown(name)}' looks the same as the login '{shown(twin)}' "
            f"(equal after NFKC, case folding and removing invisible characters{_spelled(name, twin)})"
        )
    return None


def _spelled(name: str, twin: str) -> str:
    """For two names that print alike, what each is made of, so a message tells them apart."""
    if unicodedata.normalize("NFC", shown(name)) != unicodedata.normalize("NFC", shown(twin)):
        return ""
    return f"; '{shown(name)}' is {code_points(name)}, '{shown(twin)}' is {code_points(twin)}"


def name_problems(users: dict[str, Account]) -> list[str]:
    """One line per name of a users file (written before the naming rules) that breaks them."""
    names = sorted(users)
    found = (name_problem(name, names[:k]) for k, name in enumerate(names))
    return [problem for problem in found if problem is not None]


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = secrets.token_bytes(16) if salt is None else salt
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=_N, r=_R, p=_P, dklen=32)
    return f"scrypt${_N}${_R}${_P}${salt.hex()}${digest.hex()}"


def check_password(password: str, stored: str) -> bool:
    """Whether ``password`` matches a ``hash_password`` string (constant-time comparison)."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
        if scheme != "scrypt":
            return False
        actual = hashlib.scrypt(
            password.encode("utf-8"),
            salt=bytes.fromhex(salt),
            n=int(n),
            r=int(r),
            p=int(p),
            dklen=len(bytes.fromhex(digest)),
        )
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(actual.hex(), digest)


def read_users(path: str | Path) -> dict[str, Account]:
    """Name -> account; a malformed file is an :class:`InputError` naming it."""
    return _read(Path(path))[0]


def changes(path: str | Path) -> list[Change]:
    """The users file's log, oldest first (empty for a file written before the log)."""
    return _read(Path(path))[1]


def _read(path: Path) -> tuple[dict[str, Account], list[Change]]:
    try:
        try:
            data = parse_json(read_text(path), path)
        except InputError as error:
            raise InputError(path, f"not a users file: {error.problem}") from None
        users = data["users"]
        version = data.get("format")
        if version not in (1, 2, FORMAT_VERSION) or not isinstance(users, dict):
            raise TypeError(f"unexpected format {version!r}")
        accounts = {}
        for name, entry in users.items():
            if version == 1:
                accounts[str(name)] = Account(ANNOTATOR, str(entry))
            else:
                role, password = check_role(str(entry["role"]), path), str(entry["password"])
                accounts[str(name)] = Account(role, password, entry.get("disabled") is True)
        log = [
            Change(**{k: str(entry[k]) for k in ("at", "by", "what", "name", "role")}) for entry in data.get("log", [])
        ]
    except (KeyError, TypeError, AttributeError, ValueError) as error:
        raise InputError(path, f"not a users file written by 'ablate app add-user' ({error})") from None
    return accounts, log


def _write(path: Path, users: dict[str, Account], log: list[Change]) -> None:
    """The whole file, atomically, readable by its owner only (it holds password hashes)."""
    atomic_write_json(
        path,
        {
            "format": FORMAT_VERSION,
            "users": {
                n: {"role": a.role, "password": a.password, **({"disabled": True} if a.disabled else {})}
                for n, a in sorted(users.items())
            },
            "log": [asdict(change) for change in log],
        },
        mode=0o600,
    )


def _change(by: str, what: str, login: Login) -> Change:
    return Change(datetime.now(UTC).isoformat(timespec="seconds"), by, what, login.name, login.role)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside ``path`` (the file itself is replaced by each write)."""
    lock = path.parent / f".{path.name}.lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = open(lock, "a+b")  # noqa: SIM115 - closed below, after unlocking
    except OSError as error:
        raise InputError(path, f"cannot lock the users file ({error.strerror or error})") from None
    try:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def add_user(
    path: str | Path, name: str, password: str, role: str = ANNOTATOR, replace: bool = False, by: str = ""
) -> Login:
    """Add (or, with ``replace``, change the password and role of) one login, logged as made ``by``
    (a lead's login, or the account that ran ``ablate app add-user``); written atomically under a lock."""
    path = Path(path)
    check_role(role, path)
    typed = unicodedata.normalize("NFC", name).strip()
    name = login_name(name)
    if not name:
        raise InputError(path, "a login name cannot be empty")
    refused = name_problem(typed)  # on the name as typed: control characters would vanish in whitespace
    if refused is not None:
        raise InputError(path, f"{refused}; choose another name")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(path, f"the password must have at least {MIN_PASSWORD_LENGTH} characters")
    hashed = hash_password(password)  # outside the lock: scrypt is the slow part
    with _locked(path):
        users, log = _read(path) if path.exists() else ({}, [])
        refused = name_problem(name, users)
        if refused is not None and not (replace and name in users):  # a new password for an old name
            raise InputError(path, f"{refused}; choose another name")
        if name in users and not replace:
            raise InputError(path, f"'{name}' already has a login (use --replace to change the password or role)")
        login = Login(name, role)
        log.append(_change(by, REPLACED if name in users else ADDED, login))
        users[name] = Account(role, hashed, users[name].disabled if name in users else False)
        _write(path, users, log)
    return login


def set_disabled(path: str | Path, name: str, disabled: bool, by: str) -> Login:
    """Disable (or enable again) the login ``name``, logged as done ``by``; a login is never deleted.
    The last enabled lead cannot be disabled: nobody could settle conflicts or enable it again."""
    path = Path(path)
    with _locked(path):
        users, log = _read(path)
        if name not in users:
            raise InputError(path, f"no login named '{shown(name)}'")
        account = users[name]
        leads = [n for n, a in users.items() if a.role == LEAD and not a.disabled]
        if disabled and leads == [name]:
            raise InputError(path, f"'{name}' is the last enabled lead; enable or add another lead first")
        if account.disabled != disabled:
            users[name] = Account(account.role, account.password, disabled)
            log.append(_change(by, DISABLED if disabled else ENABLED, Login(name, account.role)))
            _write(path, users, log)
    return Login(name, account.role)


def authenticate(users: dict[str, Account], name: str, password: str) -> Login | None:
    """The login when ``name``/``password`` match and the login is not disabled, else None; an unknown
    name costs the same scrypt work.

    The typed name is compared in NFC, so a name stored decomposed by an older file still logs in
    (under its stored spelling, which its decisions carry)."""
    name = login_name(name)
    stored = name if name in users else next((n for n in users if login_name(n) == name), name)
    account = users.get(stored)
    matches = check_password(password, account.password if account is not None else _UNKNOWN)
    return Login(stored, account.role) if account is not None and matches and not account.disabled else None
