"""One rule for every name that becomes part of a path: arms, components, recognizers, experiments, recordings.

A name must be one plain path component, so no output of a run can leave its experiment folder:
not empty, not ``.`` or ``..``, no ``/`` or ``\\``, no control or invisible characters, not starting
with ``.`` (hidden) or ``-`` (read as an option), at most 100 characters.
"""

from __future__ import annotations

import unicodedata

MAX_LENGTH = 100


def path_name_problem(name: object, what: str) -> str | None:
    """Why ``name`` cannot name a file or folder of a run (``what``: "arm", "recording id", ...), or None."""
    if not isinstance(name, str) or not name:
        return f"{what} name must be a non-empty string, not {name!r}"
    shown = repr(name[:40] + ("…" if len(name) > 40 else ""))
    if name in (".", "..") or "/" in name or "\\" in name:
        return f"{what} name {shown} must be a plain name, not a path (no '/', '\\\\', '.' or '..')"
    if any(unicodedata.category(ch).startswith("C") for ch in name):
        return f"{what} name {shown} contains a control or invisible character"
    if name.startswith((".", "-")):
        return f"{what} name {shown} must not start with '.' or '-'"
    if len(name) > MAX_LENGTH:
        return f"{what} name {shown} is longer than {MAX_LENGTH} characters"
    return None
