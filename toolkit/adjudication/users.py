"""Annotator logins for the app: names with salted scrypt password hashes, in one JSON file.

The file holds no password, only ``scrypt$n$r$p$salt$hash`` per name (hex salt and hash), so it
can be shared with whoever runs the app. With a users file the app takes each decision's
annotator name from the login, so provenance cannot be typed by someone else.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

from toolkit.core.data_files import parse_json
from toolkit.core.errors import InputError
from toolkit.core.files import atomic_write_json
from toolkit.core.text import read_text

FORMAT_VERSION = 1
_N, _R, _P = 2**14, 8, 1
MIN_PASSWORD_LENGTH = 8


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


def read_users(path: str | Path) -> dict[str, str]:
    """Name -> password hash; a malformed file is an :class:`InputError` naming it."""
    path = Path(path)
    try:
        try:
            data = parse_json(read_text(path), path)
        except InputError as error:
            raise InputError(path, f"not a users file: {error.problem}") from None
        users = data["users"]
        if data.get("format") != FORMAT_VERSION or not isinstance(users, dict):
            raise TypeError("unexpected format")
    except (KeyError, TypeError, AttributeError) as error:
        raise InputError(path, f"not a users file written by 'ablate app add-user' ({error})") from None
    return {str(name): str(hashed) for name, hashed in users.items()}


def add_user(path: str | Path, name: str, password: str, replace: bool = False) -> None:
    """Add (or, with ``replace``, change) one annotator's login; the file is written atomically."""
    path = Path(path)
    name = " ".join(name.split())
    if not name:
        raise InputError(path, "an annotator name cannot be empty")
    if len(password) < MIN_PASSWORD_LENGTH:
        raise InputError(path, f"the password must have at least {MIN_PASSWORD_LENGTH} characters")
    users = read_users(path) if path.exists() else {}
    if name in users and not replace:
        raise InputError(path, f"annotator '{name}' already has a login (use --replace to change the password)")
    users[name] = hash_password(password)
    atomic_write_json(path, {"format": FORMAT_VERSION, "users": users})


def authenticate(users: dict[str, str], name: str, password: str) -> str | None:
    """The canonical name when ``name``/``password`` match a login, else None."""
    name = " ".join((name or "").split())
    stored = users.get(name)
    return name if stored is not None and check_password(password, stored) else None
